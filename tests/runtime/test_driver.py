"""tilec.runtime.driver: imports and answers without a GPU; on a GPU, loads cubins
assembled with ptxas from hand-written PTX (the compiler is not needed) and launches them
through LoadedKernel."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from tilec import LaunchError, OutOfResources
from tilec import _launcher
from tilec.specialization import ArgSpec
from tilec.language import core as tl
from tilec.backend import toolkit
from tilec.runtime import driver
from tilec.runtime.kernel import LoadedKernel

no_driver = pytest.mark.skipif(_launcher.available(), reason="a CUDA driver answers here")


def pointer_spec(name: str) -> ArgSpec:
    return ArgSpec(name, tl.pointer_type(tl.float32), divisibility=16)


class HostArray:
    """A CPU array that is not NumPy's."""
    __array_interface__ = {"data": (4096, False), "shape": (1,), "typestr": "<f4", "version": 3}
    dtype = "float32"


# ------------------------------------------------------------------------- without a GPU

def test_import_touches_no_cuda():
    code = ("import sys, tilec.runtime.driver, tilec.runtime.kernel; "
            "assert 'cuda.bindings' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


@no_driver
def test_nothing_answers_without_a_driver():
    assert driver.is_available() is False
    assert driver.default_target() == "sm_90"
    assert driver.current_device() == 0
    if "torch" not in sys.modules:
        assert driver.current_stream(0) == 0


@no_driver
def test_device_of_without_arrays_is_the_current_device():
    specs = [ArgSpec("n", tl.int32), ArgSpec("BLOCK", constant=128, is_constant=True),
             ArgSpec("y", constant=None, is_constant=True)]
    assert driver.device_of([10, 128, None], specs, "kernel") == 0


def test_device_of_refuses_host_arrays():
    specs = [pointer_spec("x_ptr"), pointer_spec("y_ptr")]
    with pytest.raises(LaunchError, match=r"argument 'x_ptr' of add\(\) is a host \(CPU\) array"):
        driver.device_of([HostArray(), None], specs, "add")
    with pytest.raises(LaunchError, match=r"argument 'x_ptr' of add\(\) is a str, not a GPU array"):
        driver.device_of(["abc", None], specs, "add")


# ------------------------------------------------------------------------- on a GPU

KERNELS_PTX = """
.version 8.0
.target sm_80
.address_size 64

// out[i] = i for the global index i = (ctaid.y * nctaid.x + ctaid.x) * ntid.x + tid.x
.visible .entry iota(.param .u64 out)
{
    .reg .b32 %r<7>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd0, [out];
    cvta.to.global.u64 %rd0, %rd0;
    mov.u32 %r0, %ctaid.x;
    mov.u32 %r1, %ntid.x;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.y;
    mov.u32 %r4, %nctaid.x;
    mad.lo.u32 %r5, %r3, %r4, %r0;
    mad.lo.u32 %r6, %r5, %r1, %r2;
    mul.wide.u32 %rd1, %r6, 4;
    add.u64 %rd2, %rd0, %rd1;
    st.global.u32 [%rd2], %r6;
    ret;
}

// A local array indexed by thread: 64 bytes of local memory.
.visible .entry uses_local(.param .u64 out)
{
    .local .align 4 .b8 buffer[64];
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    mov.u32 %r0, %tid.x;
    and.b32 %r1, %r0, 15;
    mul.wide.u32 %rd0, %r1, 4;
    mov.u64 %rd1, buffer;
    add.u64 %rd2, %rd1, %rd0;
    st.local.u32 [%rd2], %r0;
    xor.b32 %r2, %r1, 7;
    mul.wide.u32 %rd3, %r2, 4;
    add.u64 %rd4, %rd1, %rd3;
    ld.local.u32 %r3, [%rd4];
    ld.param.u64 %rd5, [out];
    cvta.to.global.u64 %rd5, %rd5;
    st.global.u32 [%rd5], %r3;
    ret;
}

.visible .entry small_block(.param .u64 out) .maxntid 64, 1, 1
{
    ret;
}
"""


@pytest.fixture(scope="module")
def cubin(tmp_path_factory) -> bytes:
    try:
        ptxas = toolkit.ptxas_path()
    except toolkit.ToolNotFoundError as exc:
        pytest.skip(str(exc))
    import torch
    major, minor = torch.cuda.get_device_capability()
    folder = tmp_path_factory.mktemp("ptx")
    (folder / "k.ptx").write_text(KERNELS_PTX)
    subprocess.run([ptxas, f"-arch=sm_{major}{minor}", str(folder / "k.ptx"), "-o", str(folder / "k.cubin")],
                   check=True)
    return (folder / "k.cubin").read_bytes()


def compiled_kernel(cubin: bytes, name: str, num_warps: int = 4, shared: int = 0) -> SimpleNamespace:
    """What the backend's CompiledKernel offers a LoadedKernel: one pointer parameter `out`."""
    metadata = SimpleNamespace(num_warps=num_warps, shared=shared, params=[("out", "*i32")], param_indices=[0])
    return SimpleNamespace(name=name, asm={"cubin": cubin}, metadata=metadata)


@pytest.mark.gpu
def test_device_queries():
    import torch
    assert driver.is_available()
    major, minor = torch.cuda.get_device_capability(0)
    assert driver.target_of(0) == f"sm_{major}{minor}"
    assert driver.default_target() == f"sm_{major}{minor}"
    assert driver.current_device() == torch.cuda.current_device()
    assert driver.current_device() == torch.cuda.current_device()  # the remembered getter
    if torch.cuda.device_count() > 1:  # follows torch's device switches
        with torch.cuda.device(1):
            assert driver.current_device() == 1
        assert driver.current_device() == torch.cuda.current_device()


def test_current_target_is_made_once():
    # Programs ask for it at every launch (Triton's softmax tutorial, through is_hip()).
    assert driver.active.get_current_target() is driver.active.get_current_target()


@pytest.mark.gpu
def test_device_of_arrays():
    import torch

    class CudaArray:  # what CuPy or Numba arrays look like
        def __init__(self, address):
            self.__cuda_array_interface__ = {"data": (address, False), "shape": (4,), "typestr": "<f4",
                                             "version": 3}

    x = torch.zeros(16, device="cuda")
    specs = [pointer_spec("x_ptr"), ArgSpec("n", tl.int32), pointer_spec("y_ptr")]
    assert driver.device_of([x, 16, x], specs, "add") == x.device.index
    assert driver.device_of([CudaArray(x.data_ptr()), 16, CudaArray(0)], specs, "add") == x.device.index
    with pytest.raises(LaunchError, match=r"argument 'y_ptr' of add\(\) is a tensor on cpu"):
        driver.device_of([x, 16, torch.zeros(4)], specs, "add")
    host = np.zeros(4, dtype=np.float32)
    with pytest.raises(LaunchError, match="argument 'x_ptr' of add.* not GPU memory"):
        driver.device_of([CudaArray(host.ctypes.data), 16, x], specs, "add")


@pytest.mark.gpu
def test_device_of_arrays_on_two_gpus():
    import torch
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    specs = [pointer_spec("x_ptr"), pointer_spec("y_ptr")]
    x, y = torch.zeros(4, device="cuda:0"), torch.zeros(4, device="cuda:1")
    assert driver.device_of([y, y], specs, "add") == 1
    with pytest.raises(LaunchError, match="'y_ptr' of add.. is on cuda:1 but 'x_ptr' is on cuda:0"):
        driver.device_of([x, y], specs, "add")


@pytest.mark.gpu
def test_contexts():
    import torch
    torch.cuda.init()
    context = driver.primary_context(0)
    assert context != 0 and driver.primary_context(0) == context
    assert driver.ensure_context(0) == context
    assert driver._current_context() == context
    with driver.using_device(0) as inside:
        assert inside == context


@pytest.mark.gpu
def test_load_cubin_reports_resources(cubin):
    iota = driver.load_cubin(cubin, "iota", 0, 0)
    assert iota.function and iota.module and iota.context == driver.primary_context(0)
    assert iota.n_regs > 0 and iota.n_spills == 0 and iota.max_threads == 1024
    assert driver.load_cubin(cubin, "uses_local", 0, 0).n_spills >= 64
    assert driver.load_cubin(cubin, "small_block", 0, 0).max_threads == 64


@pytest.mark.gpu
def test_load_cubin_errors(cubin):
    with pytest.raises(RuntimeError, match="cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND"):
        driver.load_cubin(cubin, "no_such_kernel", 0, 0)
    with pytest.raises(RuntimeError, match="cannot load kernel broken on cuda:0"):
        driver.load_cubin(b"not a cubin", "broken", 0, 0)
    with pytest.raises(OutOfResources, match="shared memory: 16777216 bytes required by kernel iota") as info:
        driver.load_cubin(cubin, "iota", 16 << 20, 0)
    assert info.value.available == driver._device_attribute(0, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    with pytest.raises(OutOfResources, match="threads per block"):
        LoadedKernel(compiled_kernel(cubin, "small_block", num_warps=4), 0)


@pytest.mark.gpu
def test_launch_over_a_grid(cubin):
    import torch
    kernel = LoadedKernel(compiled_kernel(cubin, "iota", num_warps=2), 0)
    out = torch.full((3 * 2 * 64,), -1, dtype=torch.int32, device="cuda")
    kernel.launch((3, 2, 1), [out])
    kernel.launch((0, 2, 1), [None])  # empty grid: not launched (a null `out` would fault)
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), torch.arange(384, dtype=torch.int32))


@pytest.mark.gpu
def test_launch_with_large_dynamic_shared_memory(cubin):
    import torch
    available = driver._device_attribute(0, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    shared = min(100 * 1024, available)
    kernel = LoadedKernel(compiled_kernel(cubin, "iota", num_warps=1, shared=shared), 0)
    out = torch.zeros(32, dtype=torch.int32, device="cuda")
    kernel.launch((1, 1, 1), [out])
    torch.cuda.synchronize()
    assert out.sum().item() == sum(range(32))
    # Without the opt-in the driver refuses that much.
    plain = driver.load_cubin(cubin, "iota", 0, 0)
    with pytest.raises(RuntimeError, match="CUDA_ERROR_INVALID_VALUE"):
        _launcher.launch(plain.function, 1, 1, 1, 32, shared, 0, "P", [out], None, plain.context)


@pytest.mark.gpu
def test_launch_on_torch_current_stream(cubin):
    import torch
    kernel = LoadedKernel(compiled_kernel(cubin, "iota", num_warps=1), 0)
    out = torch.zeros(32, dtype=torch.int32, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        assert driver.current_stream(0) == stream.cuda_stream
        kernel.launch((1, 1, 1), [out])
    stream.synchronize()
    assert driver.current_stream(0) == torch.cuda.current_stream().cuda_stream
    assert torch.equal(out.cpu(), torch.arange(32, dtype=torch.int32))


@pytest.mark.gpu
def test_launch_from_a_thread_without_a_context(cubin):
    import torch
    kernel = LoadedKernel(compiled_kernel(cubin, "iota", num_warps=1), 0)
    out = torch.zeros(32, dtype=torch.int32, device="cuda")
    seen = {}

    def body():
        seen["before"] = driver._current_context()
        kernel.launch((1, 1, 1), [out], stream=0)
        seen["after"] = driver._current_context()

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    torch.cuda.synchronize()
    assert seen == {"before": 0, "after": 0}  # pushed for the launch, popped after
    assert torch.equal(out.cpu(), torch.arange(32, dtype=torch.int32))


@pytest.mark.gpu
def test_launch_host_overhead(cubin):
    """Prints the host time of a launch (run with -s); asserts only a generous bound."""
    import torch
    kernel = LoadedKernel(compiled_kernel(cubin, "iota", num_warps=1), 0)
    out = torch.zeros(32, dtype=torch.int32, device="cuda")
    values, grid, n = [out], (1, 1, 1), 20000
    for _ in range(1000):
        kernel.launch(grid, values)
    torch.cuda.synchronize()
    timings = {}
    for label, launch in [("LoadedKernel.launch", lambda: kernel.launch(grid, values)),
                          ("Launcher", lambda: kernel.launcher(1, 1, 1, 0, values)),
                          ("_launcher.launch", lambda: _launcher.launch(kernel.function, 1, 1, 1, 32, 0, 0, "P",
                                                                        values, None, kernel.context))]:
        start = time.perf_counter()
        for _ in range(n):
            launch()
        timings[label] = (time.perf_counter() - start) / n * 1e6
        torch.cuda.synchronize()
    print("\nhost time per launch: " + ", ".join(f"{k} {v:.2f} us" for k, v in timings.items()))
    assert timings["LoadedKernel.launch"] < 50
