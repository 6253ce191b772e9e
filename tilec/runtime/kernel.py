"""A compiled kernel loaded on one GPU, ready to launch, and the compiled kernel user code holds.

`LoadedKernel` turns a `CompiledKernel` (cubin plus metadata, from the backend) into
what a launch needs, once: the CUfunction, the launcher's type codes, the block size,
the dynamic shared memory, which of the jit function's arguments are kernel parameters,
all held by a `tilec._launcher.Launcher`. A launch is then one call of that object
(`kernel[grid](...)` makes it straight from the generated launcher of `runtime/jit.py`);
keep it that way, since it runs on every launch.

`LaunchableKernel` is the `CompiledKernel` that `kernel.warmup(...)`, `tilec.compile(...)`
and launches return: the backend's data plus `compiled[grid](*args)`, which loads it on
the current device at first use (Triton's `kernel = fn.warmup(...); kernel[grid](...)`).
"""
from __future__ import annotations

import glob
import os
import sys
from typing import Any, Callable, Sequence

try:
    from .. import _launcher
except ImportError as _error:  # not built where tilec was imported from: kernels compile, launches explain
    _launcher = None
    _launcher_import_error: ImportError | None = _error
else:
    _launcher_import_error = None
from ..backend.kernel_data import CompiledKernel, KernelMetadata
from ..config import config
from ..errors import LaunchError, OutOfResources, hide_internal_frames, too_many_arguments
from . import driver
from .tma import KernelTensorMaps
from ..torch_compile import launch_outside_graphs, launched_in_torch_compile


def require_launcher() -> None:
    """Raises an ImportError saying what to do where the C extension `tilec._launcher`,
    which every launch goes through, cannot be imported. Mostly a source checkout
    imported in place of the installed package: after `pip install .`, a script in the
    repository root imports the tilec beside it, which has no built extension."""
    if _launcher is not None:
        return
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(package)
    source_tree = os.path.isfile(os.path.join(root, "csrc", "launcher.cpp"))
    built = glob.glob(os.path.join(package, "_launcher*"))
    if built:  # there, but it does not load (built for another Python, or a missing library)
        rebuild = f"`pip install -e .` in {root}" if source_tree else "reinstall tilec"
        raise ImportError(f"tilec cannot load its launcher extension {built[0]} ({_launcher_import_error}); "
                          f"rebuild it: {rebuild}")
    if source_tree:
        others = [os.path.join(entry, "tilec") for entry in map(os.path.abspath, sys.path)
                  if os.path.join(entry, "tilec") != package and glob.glob(os.path.join(entry, "tilec", "_launcher*"))]
        installed = f"; the installed tilec at {others[0]} has one" if others else ""
        raise ImportError(
            f"tilec is imported from the source tree at {root}, which has no built launcher extension "
            f"(tilec/_launcher*.so{installed}): kernels compile and run in the interpreter, but cannot launch "
            f"on the GPU. Python imports it because the script's directory (or the current one) comes first "
            f"on sys.path. Run from another directory to use the installed tilec, or build the extension in "
            f"the tree: `pip install -e .` in {root}.")
    raise ImportError(f"tilec's launcher extension (tilec/_launcher*.so) is missing from {package}: kernels "
                      "compile and run in the interpreter, but cannot launch on the GPU; reinstall tilec "
                      "(`pip install .` from its source tree)")


# Signature type (as in CompiledKernel.metadata.params) -> the launcher's type code.
_SCALAR_CODES: dict[str, str] = {
    "i1": "b", "i8": "b", "u1": "b", "u8": "B", "i16": "h", "u16": "H",
    "i32": "i", "u32": "I", "i64": "l", "u64": "L",
    "fp16": "e", "bf16": "E", "fp32": "f", "fp64": "d",
}


def type_code(signature_type: str) -> str:
    """The launcher's code for a parameter of signature type "*fp32", "i32", ..., or
    "tensormap" (a TMA tensor map passed by value: runtime/tma.py)."""
    if signature_type.startswith("*"):
        return "P"
    if signature_type == "tensormap":
        return "M"
    try:
        return _SCALAR_CODES[signature_type]
    except KeyError:
        raise ValueError(f"kernel parameters of type {signature_type!r} cannot be passed from the host") from None


class LoadedKernel:
    """A `CompiledKernel` loaded on GPU `device`; call `launch` to run it."""

    __slots__ = ("compiled", "name", "device", "function", "module", "context", "n_regs", "n_spills", "max_threads",
                 "num_warps", "block", "shared", "param_names", "param_indices", "codes", "launcher", "tensormaps",
                 "tensormap_cache")

    def __init__(self, compiled: Any, device: int):
        require_launcher()
        metadata = compiled.metadata
        self.compiled = compiled
        self.name: str = compiled.name
        self.device = device
        self.num_warps: int = metadata.num_warps
        self.block: int = 32 * (metadata.num_warps + getattr(metadata, "producer_warps", 0))
        self.shared: int = metadata.shared
        self.param_names: tuple[str, ...] = tuple(name for name, _ in metadata.params)
        self.codes: str = "".join(type_code(ty) for _, ty in metadata.params)
        if len(metadata.param_indices) != len(metadata.params):
            raise ValueError(f"kernel {self.name}: {len(metadata.params)} params but "
                             f"{len(metadata.param_indices)} param_indices")
        self.param_indices: tuple[int, ...] = tuple(metadata.param_indices)
        # Recipes of the tensor maps a launch appends to the call's values (descriptors
        # made in the kernel; see runtime/tma.py); empty for most kernels.
        self.tensormaps: tuple[dict, ...] = tuple(getattr(metadata, "tensormaps", ()))
        self.tensormap_cache = KernelTensorMaps(self.tensormaps, device) if self.tensormaps else None

        loaded = driver.load_cubin(compiled.asm["cubin"], self.name, self.shared, device)
        self.function: int = loaded.function
        self.module: int = loaded.module
        self.context: int = loaded.context
        self.n_regs: int = loaded.n_regs
        self.n_spills: int = loaded.n_spills
        self.max_threads: int = loaded.max_threads
        if self.block > self.max_threads:
            # Too many registers per thread for this many threads in a block.
            raise OutOfResources(f"threads per block (num_warps={self.num_warps}, {self.n_regs} registers "
                                 "per thread)", self.block, self.max_threads, self.name, unit="threads")
        # launcher(grid_x, grid_y, grid_z, stream, values): the whole launch, in C.
        launcher_type = getattr(_launcher, "Launcher", None)
        if launcher_type is None:
            raise RuntimeError(f"{_launcher.__file__} was built from an older csrc/launcher.cpp (it has no "
                               "Launcher): rebuild it (pip install -e ., or python setup.py build_ext --inplace)")
        self.launcher = launcher_type(self.function, self.block, self.shared, self.codes, self.param_names,
                                      self.context, self.param_indices)

    def launch(self, grid: tuple[int, int, int], values: Sequence[Any], stream: int | None = None,
               flags: int = 0) -> None:
        """Runs the kernel over `grid` with the jit function's argument `values` (all of
        them: constexprs and specialised arguments are dropped here) on `stream`
        (None: torch's current stream, or the default stream). A grid with a zero
        dimension launches nothing. `flags` (`launch_flags`) asks for a cooperative
        launch, a programmatic dependent launch, or both."""
        if stream is None:
            stream = driver.current_stream(self.device)
        if self.tensormaps:
            try:
                values = self.with_tensormaps(values, grid)
            except Exception as error:
                raise self.launch_error(error, grid) from None
        try:
            if flags:
                self.launcher(grid[0], grid[1], grid[2], stream, values, flags)
            else:
                self.launcher(grid[0], grid[1], grid[2], stream, values)
        except Exception as error:
            raise self.launch_error(error, grid) from None

    def with_tensormaps(self, values: Sequence[Any], grid: tuple[int, int, int]) -> tuple:
        """The call's values followed by the kernel's tensor maps (none are made for an
        empty grid: nothing runs, whatever the arguments describe)."""
        if 0 in grid:
            return (*values, *(None for _ in self.tensormaps))
        return (*values, *self.tensormap_cache(values))

    def launch_error(self, error: Exception, grid: tuple[int, int, int] | None = None) -> Exception:
        """What a failed launch raises: the launcher's error with the kernel named, a
        LaunchError for arguments it refused."""
        if isinstance(error, (TypeError, ValueError, OverflowError)):
            return LaunchError(f"{self.name}(): {error}")
        if isinstance(error, RuntimeError):
            if "COOPERATIVE_LAUNCH_TOO_LARGE" in str(error) and grid is not None:
                return RuntimeError(f"launching {self.name} on cuda:{self.device}: a cooperative launch of "
                                    f"{grid[0] * grid[1] * grid[2]} programs does not fit on the GPU at once ({error})")
            return RuntimeError(f"launching {self.name} on cuda:{self.device}: {error}")
        return error

    def __repr__(self) -> str:
        return (f"<LoadedKernel {self.name} on cuda:{self.device}: {self.num_warps} warps, "
                f"{self.n_regs} registers, {self.n_spills} spill bytes, {self.shared} bytes shared>")


class LaunchableKernel(CompiledKernel):
    """A `CompiledKernel` as user code receives it (`kernel.warmup(...)`, `tilec.compile(...)`,
    the value a launch returns): the backend's data, plus `compiled[grid](*args)`, which
    launches this very kernel as Triton's CompiledKernel does."""

    def __init__(self, metadata: KernelMetadata, asm: dict[str, Any], fn: Any = None):
        super().__init__(metadata, asm)
        # The @jit function it was compiled from (set by warmup): its arity is checked at a
        # launch, its grid callables are resolved, and the interpreter runs its source.
        self.fn = fn
        self._loaded: dict[int, LoadedKernel] = {}  # device -> this kernel loaded there, at first launch

    @classmethod
    def of(cls, compiled: CompiledKernel, fn: Any = None) -> LaunchableKernel:
        return cls(compiled.metadata, compiled.asm, fn)

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        """`compiled[grid](*args)`: `args` are all of the kernel's parameters, constexprs
        included; they must match the specialisation this kernel was compiled for."""
        if launched_in_torch_compile():  # a graph break, not a traced launch (see tilec.torch_compile)
            return launch_outside_graphs(self, grid)

        def launch(*args, stream=None):
            try:
                return self._launch(grid, args, stream)
            except Exception as error:
                hide_internal_frames(error)  # the user's frames end at this call
                raise

        return launch

    def _init_handles(self) -> None:
        """Nothing to do (kept for programs written for Triton): `n_regs`, `n_spills` and
        `shared` come from ptxas at compile time, and loading happens at the first launch."""

    def _launch(self, grid: Any, args: Sequence[Any], stream: int | None) -> None:
        """Loads the kernel on the current device at first use, then launches it. Under the
        interpreter, runs the @jit function it came from."""
        fn = self.fn
        if fn is not None and len(args) != fn._n_params:
            raise LaunchError(too_many_arguments(self.name, fn._n_params, len(args), fn.arg_names))
        if config.interpret:
            if fn is None:
                raise LaunchError(f"{self.name}: the interpreter runs a kernel from its source; launch it as "
                                  "kernel[grid](...) instead of through a CompiledKernel")
            from ..interpreter import interpret_kernel
            positional = fn._n_positional  # the rest are keyword-only parameters
            interpret_kernel(fn, grid, tuple(args[:positional]), dict(zip(fn.arg_names[positional:], args[positional:])))
            return
        require_launcher()  # before asking the driver for a device: the clearer error
        if fn is not None:
            grid3 = fn._resolve_grid(grid, args)
        else:
            dims = (grid,) if isinstance(grid, int) else tuple(int(g) for g in grid)
            grid3 = dims + (1,) * (3 - len(dims))
        device = driver.current_device()
        kernel = self._loaded.get(device)
        if kernel is None:
            kernel = self._loaded[device] = LoadedKernel(self, device)
        kernel.launch(grid3, args, stream)
