"""The compiled launch path without a GPU: a fake driver and kernel record what would be
launched, so binding, keys, caching, grids and options are tested on any machine."""
from __future__ import annotations

import pytest

import tilec
import tilec.language as tl
from tilec import CompilationError, LaunchError
from tilec.runtime import driver, kernel as kernel_module
from tilec.runtime.jit import JITFunction


class FakeTensor:
    """Just enough of a torch CUDA tensor for the launch path."""

    def __init__(self, address: int, dtype: str = "torch.float32", device: int = 0):
        self.address, self.dtype, self.device_index = address, dtype, device
        self.is_cuda = True

    def data_ptr(self) -> int:
        return self.address

    def get_device(self) -> int:
        return self.device_index


class FakeLoadedKernel:
    instances: list["FakeLoadedKernel"] = []

    def __init__(self, compiled, device):
        self.compiled, self.device, self.launches = compiled, device, []
        FakeLoadedKernel.instances.append(self)

    def launch(self, grid, values, stream):
        self.launches.append((grid, tuple(values), stream))


@pytest.fixture
def fake_gpu(monkeypatch, fresh_cache):
    FakeLoadedKernel.instances = []
    monkeypatch.setattr(kernel_module, "LoadedKernel", FakeLoadedKernel)

    def device_of(values, specs, name):
        devices = {v.get_device() for v, s in zip(values, specs) if isinstance(v, FakeTensor)}
        if len(devices) > 1:
            raise LaunchError("arrays on several GPUs")
        return devices.pop() if devices else 0

    monkeypatch.setattr(driver, "device_of", device_of)
    monkeypatch.setattr(driver, "target_of", lambda device: "sm_90")
    return FakeLoadedKernel


def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def tensors():
    return FakeTensor(1 << 20), FakeTensor(2 << 20), FakeTensor(3 << 20)


def test_first_launch_compiles_then_hits(fake_gpu):
    fn = JITFunction(add_kernel)
    x, y, out = tensors()
    compiled = fn[(4,)](x, y, out, 1000, BLOCK=256)
    assert compiled.metadata.num_warps == 4 and compiled.asm["cubin"]
    fn[(4,)](x, y, out, 1000, BLOCK=256)
    fn[(2,)](x, y, out, 1000, 256)          # positional constexpr: same kernel
    (loaded,) = fake_gpu.instances
    assert [launch[0] for launch in loaded.launches] == [(4, 1, 1), (4, 1, 1), (2, 1, 1)]
    assert loaded.launches[0][1] == (x, y, out, 1000, 256)
    assert loaded.launches[0][2] is None    # the stream: decided by LoadedKernel


def test_options_are_forwarded_and_keyed(fake_gpu):
    fn = JITFunction(add_kernel)
    x, y, out = tensors()
    a = fn[(1,)](x, y, out, 1000, num_warps=8)
    b = fn[(1,)](x, y, out, 1000, num_warps=8, num_stages=2)
    c = fn[(1,)](x, y, out, 1000)
    assert (a.metadata.num_warps, b.metadata.num_stages, c.metadata.num_warps) == (8, 2, 4)
    assert len(fake_gpu.instances) == 3


@pytest.mark.parametrize("change,new_kernels", [
    (lambda t: (t[0], t[1], t[2], 1024), 1),               # n divisible by 16: new specialisation
    (lambda t: (t[0], t[1], t[2], 1), 1),                  # n == 1: folded
    (lambda t: (FakeTensor((1 << 20) + 4), t[1], t[2], 1000), 1),  # x no longer 16-byte aligned
    (lambda t: (FakeTensor(5 << 20), t[1], t[2], 1001), 0),        # another aligned buffer, same kind of n
    (lambda t: (FakeTensor(5 << 20, "torch.float16"), t[1], t[2], 1000), 1),  # another dtype
])
def test_specialisation(fake_gpu, change, new_kernels):
    fn = JITFunction(add_kernel)
    x, y, out = tensors()
    fn[(1,)](x, y, out, 1000)
    fn[(1,)](*change((x, y, out)))
    assert len(fake_gpu.instances) == 1 + new_kernels


@pytest.mark.parametrize("first, second", [(2**40 + 3, 2**64 - 3), (2**63 - 1, 2**63), (-(2**40), 2**63 + 5)])
def test_int64_and_uint64_arguments_get_their_own_kernels(fake_gpu, first, second):
    """A value beyond int64 is a uint64 argument: it must not reuse the int64 kernel."""
    fn = JITFunction(add_kernel)
    x, y, out = tensors()
    a = fn[(1,)](x, y, out, first)
    b = fn[(1,)](x, y, out, second)
    assert [p[1] for p in a.metadata.params][3] == "i64" and [p[1] for p in b.metadata.params][3] == "u64"
    assert len(fake_gpu.instances) == 2


def test_callable_grid_sees_all_arguments(fake_gpu):
    fn = JITFunction(add_kernel)
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (tilec.cdiv(meta["n"], meta["BLOCK"]),)

    fn[grid](*tensors(), 1000)
    assert seen["n"] == 1000 and seen["BLOCK"] == 128
    assert fake_gpu.instances[0].launches[0][0] == (8, 1, 1)


@pytest.mark.parametrize("grid,message", [
    ((1, 2, 3, 4), "1 to 3 dimensions"),
    ((-1,), "must not be negative"),
    ("x", "grid must be"),
])
def test_bad_grids(fake_gpu, grid, message):
    with pytest.raises(LaunchError, match=message):
        JITFunction(add_kernel)[grid](*tensors(), 1000)


def test_bad_arguments_name_the_parameter(fake_gpu):
    fn = JITFunction(add_kernel)
    x, y, out = tensors()
    with pytest.raises(LaunchError, match="missing argument 'n'"):
        fn[(1,)](x, y, out)
    with pytest.raises(LaunchError, match="unexpected keyword argument 'BLOCK_SIZE'"):
        fn[(1,)](x, y, out, 10, BLOCK_SIZE=64)
    with pytest.raises(LaunchError, match="'y_ptr'.*list"):
        fn[(1,)](x, [1.0], out, 10)
    with pytest.raises(LaunchError, match="num_warps"):
        fn[(1,)](x, y, out, 10, num_warps="four")


def test_empty_grid_launches_nothing_but_compiles(fake_gpu):
    fn = JITFunction(add_kernel)
    fn[(0,)](*tensors(), 1000)
    assert fake_gpu.instances[0].launches == [((0, 1, 1), fake_gpu.instances[0].launches[0][1], None)]


def test_a_string_argument_is_a_constexpr_and_misuse_is_located(fake_gpu):
    # As in Triton, a string argument is a compile-time constant; using it as a number
    # fails where it is used.
    x, y, out = tensors()
    with pytest.raises(CompilationError, match=r"(?s)mask = offs < n\n.*\^.*the string 'hello' is a compile-time "
                                               "constant"):
        JITFunction(add_kernel)[(1,)](x, y, out, "hello")


def test_an_unhashable_constexpr_is_a_launch_error_naming_it(fake_gpu):
    x, y, out = tensors()
    kernel = JITFunction(add_kernel)
    for _ in range(2):  # the generated fast path, then again once a kernel is cached
        with pytest.raises(LaunchError, match="tl.constexpr argument 'BLOCK' of add_kernel\\(\\) must be a hashable "
                                              "compile-time value .*got list"):
            kernel[(1,)](x, y, out, 5, BLOCK=[128])
        kernel[(1,)](x, y, out, 5, BLOCK=128)
