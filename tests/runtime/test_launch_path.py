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
    tensormaps = ()  # no descriptors made in these kernels

    def __init__(self, compiled, device):
        self.compiled, self.device, self.launches, self.flags = compiled, device, [], []
        FakeLoadedKernel.instances.append(self)

    def launch(self, grid, values, stream=None, flags=0):
        self.launches.append((grid, tuple(values), stream))
        self.flags.append(flags)

    def launcher(self, grid_x, grid_y, grid_z, stream, values, flags=0):  # what the generated launcher calls on a hit
        self.launches.append(((grid_x, grid_y, grid_z), tuple(values), stream))
        self.flags.append(flags)

    def launch_error(self, error, grid=None):
        return error


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


def test_launch_attributes_reach_the_launcher_as_flags(fake_gpu):
    """launch_cooperative_grid and launch_pdl are launch attributes, not compile options:
    one kernel, launched with flags 1, 2 or 3 (0 without them), on the slow path (the
    first launch) and on the generated one (the hits)."""
    fn = JITFunction(add_kernel)
    x, y, out = tensors()
    fn[(1,)](x, y, out, 1000, launch_pdl=True)
    fn[(1,)](x, y, out, 1000, launch_pdl=True)
    fn[(1,)](x, y, out, 1000, launch_cooperative_grid=True)
    fn[(1,)](x, y, out, 1000, launch_pdl=True, launch_cooperative_grid=True)
    fn[(1,)](x, y, out, 1000)
    (loaded,) = fake_gpu.instances
    assert loaded.flags == [2, 2, 1, 3, 0]


@pytest.mark.parametrize("change,new_kernels", [
    (lambda t: (t[0], t[1], t[2], 1024), 1),               # n divisible by 16: new specialisation
    (lambda t: (t[0], t[1], t[2], 1), 1),                  # n == 1: folded
    (lambda t: (FakeTensor((1 << 20) + 4), t[1], t[2], 1000), 1),  # x no longer 16-byte aligned
    (lambda t: (t[0], t[1], t[2], 1001), 1),               # n no longer divisible by 8
    (lambda t: (FakeTensor(5 << 20), t[1], t[2], 1016), 0),        # another aligned buffer, n divisible by 8 again
    (lambda t: (FakeTensor(5 << 20, "torch.float16"), t[1], t[2], 1000), 1),  # another dtype
])
def test_specialisation(fake_gpu, change, new_kernels):
    fn = JITFunction(add_kernel)
    x, y, out = tensors()
    fn[(1,)](x, y, out, 1000)
    fn[(1,)](*change((x, y, out)))
    assert len(fake_gpu.instances) == 1 + new_kernels


def test_integer_keys_of_the_generated_launcher_and_run_agree(fake_gpu, monkeypatch):
    """Each integer, launched twice: only the first value of each class (divisible by
    16, by 8 only, or neither; of one width) reaches run(); every other launch hits the
    generated launcher, so its key for an integer equals the one run() stored."""
    fn = JITFunction(add_kernel)
    x, y, out = tensors()
    runs = []
    original = JITFunction.run

    def counting_run(self, *args, **kwargs):
        runs.append(args[3])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(JITFunction, "run", counting_run)
    values = [0, 2, 3, 7, 8, 16, 24, 40, 48, 1000, 1001, 1008, 1016, -8, -16, -24, 2**31 - 8, 2**31, 2**40 + 8,
              2**63 + 8]
    for n in values:
        fn[(1,)](x, y, out, n)
        fn[(1,)](x, y, out, n)
    # 0, 16, 48, 1008, -16: divisible by 16; 8, 24, 40, 1000, 1016, -8, -24, 2**31 - 8:
    # by 8; 2, 3, 7, 1001: neither; 2**31 (int64, by 16); 2**40 + 8 (int64, by 8); 2**63 + 8
    # (uint64, by 8)
    assert runs == [0, 2, 8, 2**31, 2**40 + 8, 2**63 + 8]
    assert len(FakeLoadedKernel.instances) == 6
    kinds = [k.compiled.metadata.params[3][1] for k in FakeLoadedKernel.instances]
    assert kinds == ["i32", "i32", "i32", "i64", "i64", "u64"], kinds
    marked = [k.compiled.asm["ttir"].count("tile.divisibility = 8") for k in FakeLoadedKernel.instances]
    assert marked == [0, 0, 1, 0, 1, 1], marked


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


# ----------------------------------------------------------------------------- hits, with the real launcher

def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)


@pytest.fixture
def fake_driver(monkeypatch, fresh_cache):
    """The real LoadedKernel and tilec._launcher.Launcher; only loading and device queries faked."""
    from tilec import _launcher
    if _launcher.available():
        pytest.skip("a CUDA driver answers here: launches would reach it")
    monkeypatch.setattr(driver, "load_cubin", lambda cubin, name, shared, device: driver.LoadedFunction(
        function=0x1234, module=0x5678, context=0x9ABC, n_regs=32, n_spills=0, max_threads=1024, static_shared=0))
    monkeypatch.setattr(driver, "device_of", lambda values, specs, name: 0)
    monkeypatch.setattr(driver, "target_of", lambda device: "sm_90")


def test_hits_reach_the_launcher_and_its_errors_name_the_kernel(fake_driver):
    fn = JITFunction(scale_kernel)
    x, out = FakeTensor(1 << 20), FakeTensor(2 << 20)
    for _ in range(2):  # the first launch compiles (run), the second is a hit (the generated launcher)
        with pytest.raises(RuntimeError, match=r"^launching scale_kernel on cuda:0: cannot launch"):
            fn[(1,)](x, out, 1000, 2.0)
    assert len(fn._kernels) == 1
    # Refused by the launcher (the key does not see that 1e300 is too big for fp32).
    with pytest.raises(LaunchError, match=r"^scale_kernel\(\): argument 'factor': 1e\+300 does not fit in fp32$"):
        fn[(1,)](x, out, 1000, 1e300)
    with pytest.raises(LaunchError, match=r"^scale_kernel\(\): argument 'x_ptr' is a host \(CPU\) tensor"):
        host = FakeTensor(3 << 20)
        host.is_cuda = False
        fn[(1,)](host, out, 1000, 2.0)  # same key (a FakeTensor is no torch tensor): caught by the launcher
    assert len(fn._kernels) == 1
    assert fn[(0,)](x, out, 1000, 2.0).name == "scale_kernel"  # an empty grid launches nothing: no error


class TorchTensor(FakeTensor):
    """A torch tensor, as far as the launch path asks (with `fake_torch`)."""

    def __init__(self, address: int):
        super().__init__(address)
        self.dtype = TorchDtype()


class TorchDtype:
    def __str__(self):
        return "torch.float32"


@pytest.fixture
def fake_torch(monkeypatch):
    """A `torch` module in sys.modules whose Tensor is TorchTensor and whose current
    stream is 0x5150."""
    import sys
    import types
    module = types.ModuleType("torch")
    module.Tensor = TorchTensor
    module._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0x5150)
    monkeypatch.setitem(sys.modules, "torch", module)
    monkeypatch.setattr(driver, "_stream_accessor", None)
    return module


def test_torch_tensors_reach_the_launcher_as_addresses(fake_driver, fake_torch, monkeypatch):
    """With torch loaded, a hit reads each tensor's address once, for the key and the launch."""
    import types
    calls = []
    real_launcher = kernel_module._launcher.Launcher

    class RecordingLauncher:
        def __init__(self, *fields):
            self.real = real_launcher(*fields)

        def __call__(self, grid_x, grid_y, grid_z, stream, values):
            self.real.pack(values)
            calls.append(((grid_x, grid_y, grid_z), stream, tuple(values)))

    monkeypatch.setattr(kernel_module, "_launcher", types.SimpleNamespace(Launcher=RecordingLauncher))
    fn = JITFunction(scale_kernel)
    x, out = TorchTensor(1 << 20), TorchTensor(2 << 20)
    fn[(3,)](x, out, 1000, 2.0)   # compiles: run passes the tensors themselves
    fn[(3,)](x, out, 1000, 2.0)   # a hit
    fn[(2, 2)](x, out, 1000, 2.0, stream=7)
    assert calls == [((3, 1, 1), 0x5150, (x, out, 1000, 2.0, 128)),
                     ((3, 1, 1), 0x5150, (1 << 20, 2 << 20, 1000, 2.0, 128)),
                     ((2, 2, 1), 7, (1 << 20, 2 << 20, 1000, 2.0, 128))]


def test_a_hit_runs_two_python_functions_of_tilec(fake_gpu, fake_torch):
    """The host time of a launch is mostly Python calls: a hit makes two, `kernel[grid]`
    and the generated launcher, which calls the C launcher directly."""
    import os
    import sys
    tilec_dir = os.path.dirname(tilec.__file__)
    fn = JITFunction(add_kernel)
    x, y, out = TorchTensor(1 << 20), TorchTensor(2 << 20), TorchTensor(3 << 20)
    fn[(4,)](x, y, out, 1000, BLOCK=256)  # compiles
    called = []

    def profile(frame, event, arg):
        if event == "call":
            filename = frame.f_code.co_filename
            if filename.startswith(tilec_dir) or filename.startswith("<tilec"):
                called.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn[(4,)](x, y, out, 1000, BLOCK=256)
    finally:
        sys.setprofile(None)
    assert called == ["__getitem__", "add_kernel"]
    assert len(fake_gpu.instances[0].launches) == 2


def test_an_autotuned_hit_takes_the_generated_launcher(fake_gpu, fake_torch):
    """Once a key's config is chosen, an @autotune (and @heuristics) launch goes through the
    kernel's generated launcher, as `kernel[grid]` does: JITFunction.run (binding and
    keying in Python) is not called again."""
    import sys
    tuned = tilec.autotune(configs=[tilec.Config({"BLOCK": 128}, num_warps=2)], key=["n"])(JITFunction(add_kernel))
    guessed = tilec.heuristics({"BLOCK": lambda args: 64})(JITFunction(add_kernel))
    x, y, out = TorchTensor(1 << 20), TorchTensor(2 << 20), TorchTensor(3 << 20)
    for wrapper in (tuned, guessed):
        wrapper[(4,)](x, y, out, 1000)  # compiles (one config: nothing to time)
        called = []

        def profile(frame, event, arg):
            if event == "call" and frame.f_code.co_name == "run" and "runtime/jit.py" in frame.f_code.co_filename:
                called.append(frame.f_code.co_name)

        sys.setprofile(profile)
        try:
            wrapper[(4,)](x, y, out, 1000)
        finally:
            sys.setprofile(None)
        assert called == []
    launches = [launch for instance in fake_gpu.instances for launch in instance.launches]
    assert len(launches) == 4


def clashing_kernel(_x, _key, _p0, n, BLOCK: tl.constexpr = 128):
    offs = tl.arange(0, BLOCK)
    tl.store(_x + offs, tl.load(_key + offs) + tl.load(_p0 + offs), mask=offs < n)


def test_parameters_named_like_the_launchers_variables(fake_gpu):
    fn = JITFunction(clashing_kernel)
    a, b, c = tensors()
    for _ in range(2):
        fn[(1,)](a, b, c, 1000)
    with pytest.raises(LaunchError, match="missing argument 'n'"):
        fn[(1,)](a, b, c)
    (loaded,) = fake_gpu.instances
    assert [launch[1] for launch in loaded.launches] == [(a, b, c, 1000, 128)] * 2


def no_parameters_kernel():
    tl.program_id(0)


def test_a_kernel_without_parameters(fake_gpu):
    fn = JITFunction(no_parameters_kernel)
    for _ in range(2):
        fn[(3,)]()
    with pytest.raises(LaunchError, match=r"takes 0 arguments but 1 was given"):
        fn[(3,)](1)
    assert [launch[0] for launch in fake_gpu.instances[0].launches] == [(3, 1, 1)] * 2


class FakeDtype:
    """A torch dtype's name and size."""

    def __init__(self, name: str, itemsize: int):
        self.name, self.itemsize = name, itemsize

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other) -> bool:
        return isinstance(other, FakeDtype) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def copy_kernel(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    out_desc.store([0, 0], in_desc.load([0, 0]))


def test_descriptor_launches_take_the_generated_launcher(fake_gpu):
    """After the first launch with host descriptors, the generated launcher takes them:
    a second launch does not go through `run`, and passes what the first passed; a
    descriptor whose block shape changed is a new specialisation."""
    import sys
    from tilec.tools.tensor_descriptor import TensorDescriptor
    fn = JITFunction(copy_kernel)
    f32 = FakeDtype("torch.float32", 4)
    x, out = FakeTensor(1 << 20, f32), FakeTensor(2 << 20, f32)
    descs = TensorDescriptor(x, [64, 64], [64, 1], [32, 32]), TensorDescriptor(out, [64, 64], [64, 1], [32, 32])
    fn[(1,)](*descs, BM=32, BN=32)
    called = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name in ("run", "_get_kernel", "_descriptor_argument"):
            called.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        fn[(1,)](*descs, BM=32, BN=32)
    finally:
        sys.setprofile(None)
    assert called == ["_descriptor_argument", "_descriptor_argument"]
    (loaded,) = fake_gpu.instances
    first, second = loaded.launches
    assert first[:2] == second[:2] and len(first[1]) > 2  # the descriptors' leaves, in the same order
    for desc in descs:
        desc.block_shape = [16, 32]
    fn[(1,)](*descs, BM=32, BN=32)
    assert len(fake_gpu.instances) == 2
    bad = TensorDescriptor(x, [64, 64], [64, 1], [16, 32])
    bad.strides = [63, 1]  # changed after it was made: the launch checks it again
    with pytest.raises(LaunchError, match="argument 'in_desc' of copy_kernel\\(\\) is a bad tensor descriptor"):
        fn[(1,)](bad, descs[1], BM=32, BN=32)
