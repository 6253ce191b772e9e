"""The CUDA driver, for everything but the launch itself.

What happens once per kernel or per device -- loading a cubin, reading a function's
register and local-memory use, the compute capability, the primary context -- goes
through cuda-python here. The per-launch work (argument packing, cuLaunchKernel, making
the kernel's context current) is in the C++ extension `tilec._launcher`, since every
Python-level driver call costs about a microsecond.

Nothing here touches CUDA at import: `import tilec` must work, and its tests run, on
machines without a GPU or a driver. cuda-python is imported on first use; torch is never
imported, only used when the program already has (`sys.modules`), for its current device
and stream.

Contexts: tilec uses each device's primary context, the one the CUDA runtime -- and so
torch and CuPy -- use too, so modules, pointers and streams are shared with them.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from ..errors import LaunchError, OutOfResources
from ..target import Target

# Dynamic shared memory a kernel may use without opting in (per block).
_DEFAULT_SHARED_LIMIT = 48 * 1024
# The target to compile for when no GPU answers.
_FALLBACK_TARGET = "sm_90"


# ---------------------------------------------------------------------------- bindings

@functools.lru_cache(maxsize=None)
def _bindings() -> Any:
    """cuda-python's driver module, with cuInit(0) done. Raises RuntimeError without a driver."""
    try:
        from cuda.bindings import driver as cuda  # cuda-python >= 12.6
    except ImportError:
        try:
            from cuda import cuda  # older cuda-python 12.x
        except ImportError as error:
            raise RuntimeError("tilec needs cuda-python to run kernels (pip install cuda-python)") from error
    try:
        (status,) = cuda.cuInit(0)
    except Exception as error:  # the bindings raise their own error when libcuda is missing
        raise RuntimeError(f"the CUDA driver is not available: {error}") from None
    if status != cuda.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuInit failed: {_error_name(cuda, status)}")
    return cuda


def _error_name(cuda: Any, status: Any) -> str:
    _, name = cuda.cuGetErrorName(status)
    _, text = cuda.cuGetErrorString(status)
    name = name.decode() if isinstance(name, bytes) else str(status)
    return f"{name} ({text.decode()})" if isinstance(text, bytes) else name


def _call(function_name: str, *args: Any) -> Any:
    """Calls a driver function; returns its result (None, a value or a tuple), raising on error."""
    cuda = _bindings()
    status, *results = getattr(cuda, function_name)(*args)
    if status != cuda.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{function_name} failed: {_error_name(cuda, status)}")
    if not results:
        return None
    return results[0] if len(results) == 1 else tuple(results)


# ---------------------------------------------------------------------------- devices

@functools.lru_cache(maxsize=None)
def is_available() -> bool:
    """Whether a CUDA driver and at least one GPU answer (checked once per process)."""
    try:
        from .. import _launcher
    except ImportError:  # the extension is not built; cuda-python can still tell
        pass
    else:
        if not _launcher.available():
            return False
    try:
        return _call("cuDeviceGetCount") > 0
    except RuntimeError:
        return False


@functools.lru_cache(maxsize=None)
def _device_attribute(device: int, attribute: str) -> int:
    cuda = _bindings()
    return _call("cuDeviceGetAttribute", getattr(cuda.CUdevice_attribute, attribute), _device_handle(device))


@functools.lru_cache(maxsize=None)
def _device_handle(device: int) -> Any:
    return _call("cuDeviceGet", device)


@functools.lru_cache(maxsize=None)
def target_of(device: int) -> str:
    """The compilation target of GPU `device`, from its compute capability: "sm_80", "sm_90", ..."""
    major = _device_attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
    minor = _device_attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
    return f"sm_{major}{minor}"


# torch's raw current-device call, once torch has initialised CUDA (what
# torch.cuda.current_device() calls after its initialisation check); forgotten in a forked child.
_torch_device_getter: Any = None


def _remember_torch_device_getter(torch: Any) -> None:
    global _torch_device_getter
    getter = getattr(torch._C, "_cuda_getDevice", None)
    if getter is not None and torch.cuda.is_initialized():
        _torch_device_getter = getter


def _forget_torch_device_getter() -> None:
    global _torch_device_getter
    _torch_device_getter = None


os.register_at_fork(after_in_child=_forget_torch_device_getter)


def default_target() -> str:
    """The current device's target when a GPU answers, else "sm_90"."""
    if not is_available():
        return _FALLBACK_TARGET
    return target_of(current_device())


def current_device() -> int:
    """torch's current device when torch is in use, else that of the current context, else 0."""
    getter = _torch_device_getter
    if getter is not None:
        return getter()
    if not is_available():
        return 0
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            device = int(torch.cuda.current_device())
        except Exception:  # a torch without CUDA
            pass
        else:
            _remember_torch_device_getter(torch)
            return device
    cuda = _bindings()
    status, context = cuda.cuCtxGetCurrent()
    if status == cuda.CUresult.CUDA_SUCCESS and int(context) != 0:
        return int(_call("cuCtxGetDevice"))
    return 0


def device_of(values: Sequence[Any], specs: Sequence[Any], kernel_name: str) -> int:
    """The GPU a launch with these arguments runs on: that of its array arguments.

    `specs` are the `tilec.specialization.ArgSpec`s of `values`; arrays are the arguments whose
    type is a pointer. They must all live on one GPU; without any, the current device.
    """
    torch = sys.modules.get("torch")
    tensor_type = torch.Tensor if torch is not None else ()
    device = -1
    first_name = ""
    from .tma import TensorMap
    for value, spec in zip(values, specs):
        if spec.is_constant or spec.ty is None or not spec.ty.is_ptr() or isinstance(value, TensorMap):
            continue
        if isinstance(value, tensor_type):
            index = value.get_device()  # -1 for tensors in host memory
            if index < 0 and value.is_pinned():
                continue  # pinned host memory: reachable from any GPU, it does not pick one
            if index < 0:
                raise LaunchError(f"argument '{spec.name}' of {kernel_name}() is a tensor on {value.device}; "
                                  "a GPU launch needs device memory (move it with .cuda(), "
                                  "or run with TILEC_INTERPRET=1)")
        else:
            index = _device_of_array(value, spec.name, kernel_name)
            if index is None:  # an empty array: no memory, no device
                continue
        if not first_name:
            device, first_name = index, spec.name
        elif index != device:
            raise LaunchError(f"argument '{spec.name}' of {kernel_name}() is on cuda:{index} but "
                              f"'{first_name}' is on cuda:{device}; all arrays of a launch must be on one GPU")
    return device if first_name else current_device()


def _device_of_array(value: Any, name: str, kernel_name: str) -> int | None:
    """The device holding an array that is not a torch tensor (None when it has no memory)."""
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        pointer = int(cai["data"][0])
    elif getattr(value, "is_cuda", True) is False or hasattr(value, "__array_interface__"):
        raise LaunchError(f"argument '{name}' of {kernel_name}() is a host (CPU) array "
                          f"({type(value).__name__}); a GPU launch needs device memory")
    elif hasattr(value, "data_ptr"):
        pointer = int(value.data_ptr())
    else:
        raise LaunchError(f"argument '{name}' of {kernel_name}() is a {type(value).__name__}, not a GPU array")
    if pointer == 0:
        return None
    cuda = _bindings()
    status, ordinal = cuda.cuPointerGetAttribute(
        cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pointer)
    if status != cuda.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"argument '{name}' of {kernel_name}() points to {pointer:#x}, which is not GPU "
                          f"memory ({_error_name(cuda, status)})")
    return int(ordinal)


# ---------------------------------------------------------------------------- contexts

@functools.lru_cache(maxsize=None)
def primary_context(device: int) -> int:
    """The handle of `device`'s primary context, retained for the life of the process."""
    return int(_call("cuDevicePrimaryCtxRetain", _device_handle(device)))


def _current_context() -> int:
    return int(_call("cuCtxGetCurrent"))


def ensure_context(device: int) -> int:
    """Makes `device`'s primary context current on this thread, as torch.cuda.set_device does.

    Costs one driver query when it already is. Returns the context's handle. (Launches
    need not call this: the launcher makes the kernel's context current for the launch
    by itself, in C++, without touching the caller's current device.)
    """
    wanted = primary_context(device)
    if _current_context() != wanted:
        _call("cuCtxSetCurrent", _bindings().CUcontext(wanted))
    return wanted


@contextlib.contextmanager
def using_device(device: int) -> Iterator[int]:
    """Runs the body with `device`'s primary context current, then restores the caller's."""
    wanted = primary_context(device)
    if _current_context() == wanted:
        yield wanted
        return
    _call("cuCtxPushCurrent", _bindings().CUcontext(wanted))
    try:
        yield wanted
    finally:
        _call("cuCtxPopCurrent")


# ---------------------------------------------------------------------------- modules

@dataclass(frozen=True)
class LoadedFunction:
    """A kernel loaded on one device: the handles the launcher needs and its resource use."""
    function: int      # CUfunction
    module: int        # CUmodule (kept loaded for the life of the process)
    context: int       # CUcontext the module lives in (the device's primary context)
    n_regs: int        # registers per thread
    n_spills: int      # local memory per thread, in bytes (register spills, local arrays)
    max_threads: int   # the most threads a block of this kernel may have
    static_shared: int  # statically allocated shared memory, in bytes


def load_cubin(cubin: bytes, kernel_name: str, shared_bytes: int, device: int) -> LoadedFunction:
    """Loads `cubin` on `device` and readies its function `kernel_name` to launch with
    `shared_bytes` of dynamic shared memory (raising `OutOfResources` if the GPU has fewer)."""
    cuda = _bindings()
    attribute = cuda.CUfunction_attribute
    with using_device(device) as context:
        try:
            module = _call("cuModuleLoadData", cubin)
        except RuntimeError as error:
            raise RuntimeError(f"cannot load kernel {kernel_name} on cuda:{device} "
                               f"({target_of(device)}): {error}") from None
        try:
            function = _call("cuModuleGetFunction", module, kernel_name.encode())

            def function_attribute(name: str) -> int:
                return int(_call("cuFuncGetAttribute", getattr(attribute, name), function))

            static_shared = function_attribute("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES")
            available = _device_attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
            required = static_shared + shared_bytes
            if required > available:
                raise OutOfResources("shared memory", required, available, kernel_name)
            if required > _DEFAULT_SHARED_LIMIT:
                _call("cuFuncSetAttribute", function,
                      attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes)
            return LoadedFunction(
                function=int(function),
                module=int(module),
                context=context,
                n_regs=function_attribute("CU_FUNC_ATTRIBUTE_NUM_REGS"),
                n_spills=function_attribute("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES"),
                max_threads=function_attribute("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
                static_shared=static_shared,
            )
        except BaseException:
            cuda.cuModuleUnload(module)
            raise


# ---------------------------------------------------------------------------- streams

def current_stream(device: int) -> int:
    """The stream a launch on `device` goes to: torch's current one when torch is in use,
    else 0, the default stream."""
    accessor = _torch_stream_accessor()
    return accessor(device) if accessor is not None else 0


def _torch_stream_accessor() -> Any:
    global _stream_accessor
    if _stream_accessor is None and "torch" in sys.modules:
        # The raw accessor takes a device index and returns the cudaStream_t as an int,
        # ~10x cheaper than torch.cuda.current_stream(device).cuda_stream.
        torch_c = sys.modules["torch"]._C
        _stream_accessor = getattr(torch_c, "_cuda_getCurrentRawStream", None) or (lambda device: 0)
    return _stream_accessor


_stream_accessor: Any = None


# ---------------------------------------------------------------------------- Triton's driver surface

@dataclass(frozen=True)
class GPUTarget:
    """What `driver.active.get_current_target()` returns: backend, compute capability
    as an int (90 for sm_90), warp size."""
    backend: str
    arch: int
    warp_size: int


# Figures of the fallback target (an H100 SXM), reported when no GPU answers so that
# host code sizing a launch from device properties still runs in the interpreter.
_FALLBACK_PROPERTIES = {"max_shared_mem": 232448, "max_num_regs": 65536, "multiprocessor_count": 132,
                        "warpSize": 32, "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}


class _Utils:
    @staticmethod
    def get_device_properties(device: Any) -> dict[str, int]:
        """Per-device limits under the names Triton uses (max_shared_mem is the per-block
        opt-in maximum; max_num_regs the registers per block)."""
        if not is_available():
            return dict(_FALLBACK_PROPERTIES)
        index = getattr(device, "index", device)
        index = current_device() if index is None else int(index)
        names = {"max_shared_mem": "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
                 "max_num_regs": "CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK",
                 "multiprocessor_count": "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
                 "warpSize": "CU_DEVICE_ATTRIBUTE_WARP_SIZE",
                 "sm_clock_rate": "CU_DEVICE_ATTRIBUTE_CLOCK_RATE",
                 "mem_clock_rate": "CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE",
                 "mem_bus_width": "CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH"}
        return {key: int(_device_attribute(index, attribute)) for key, attribute in names.items()}


@functools.lru_cache(maxsize=None)
def _gpu_target(target: str) -> GPUTarget:
    """The (frozen) GPUTarget of a target name, made once: programs ask for it per launch."""
    return GPUTarget("cuda", Target.parse(target).capability, 32)


class _ActiveDriver:
    """`tilec.runtime.driver.active`: the calls Triton programs make on
    `triton.runtime.driver.active` to size their launches."""

    utils = _Utils()

    @staticmethod
    def get_current_device() -> int:
        return current_device()

    @staticmethod
    def get_active_torch_device() -> Any:
        import torch
        return torch.device("cuda", current_device()) if is_available() else torch.device("cpu")

    @staticmethod
    def get_current_target() -> GPUTarget:
        return _gpu_target(default_target())

    @staticmethod
    def get_current_stream(device: int | None = None) -> int:
        return current_stream(current_device() if device is None else device)

    @staticmethod
    def get_device_interface() -> Any:
        import torch
        return torch.cuda

    @staticmethod
    def is_active() -> bool:
        return True


active = _ActiveDriver()
