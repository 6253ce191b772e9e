"""Bad input a Triton user plausibly writes: each gets a clear, located error.

Kernels mark their offending line with `# <-`. A bad kernel is checked compiled for sm_90
(no GPU needed) and launched in the interpreter, with the same sentence: a
`tilec.CompilationError` naming this file and the marked line, quoting the line, a caret
under it (at `caret_at` when given), and nothing of tilec's internals. Bad launches and
bad uses of `tilec.jit` / `tilec.compile` / `warmup` raise `LaunchError`/`UsageError`
naming what is wrong.

The cases marked "was:" crashed or said something vague or wrong before; the others
pin down errors that were already right, for the mistakes users make most.
"""
import inspect

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec import CompilationError, LaunchError
from tilec.config import config
from tilec.errors import UsageError
from tilec_testing import assert_located, device_array, to_numpy

CASES = []


@pytest.fixture(autouse=True)
def _isolated_config(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "interpret", False)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))


def bad(sentence: str, *, signature: dict | None = None, caret_at: str | None = None):
    """Registers a kernel that must fail with `sentence` (a regex) on both paths."""
    def register(fn):
        kernel = tilec.jit(fn)
        CASES.append(pytest.param(kernel, signature or {}, caret_at, sentence, id=fn.__name__))
        return kernel
    return register


def compile_signature(kernel, signature: dict) -> dict:
    return {name: signature.get(name, "*fp32" if name.endswith("_ptr") else "i32")
            for name, param in inspect.signature(kernel.fn).parameters.items()
            if param.annotation is not tl.constexpr and param.kind in (param.POSITIONAL_OR_KEYWORD,
                                                                       param.POSITIONAL_ONLY)}


def host_arguments(kernel, signature: dict) -> list:
    arrays = {"*fp32": np.float32, "*i32": np.int32, "*i16": np.int16}
    return [np.random.rand(64).astype(arrays[ty]) if ty.startswith("*") else 8
            for ty in compile_signature(kernel, signature).values()]


# ============================================================================= fixed here


# was: "ValueError: range() arg 3 must not be zero" (Python's words, prefixed by its class).
@bad(r"^tl\.static_range step must not be zero$", caret_at="tl.static_range")
def static_range_step_zero(x_ptr):
    for i in tl.static_range(0, 8, 0):  # <-
        pass


# was: "ValueError: invalid literal for int() with base 10: 'a'".
@bad(r"tl\.range's num_stages must be a constexpr int >= 0, got 'a'")
def range_num_stages_string(x_ptr, n):
    for i in tl.range(0, n, num_stages="a"):  # <-
        pass


# was: accepted, and a negative unroll factor given to the compiler.
@bad(r"tl\.range's loop_unroll_factor must be a constexpr int >= 0, got -1")
def range_negative_unroll(x_ptr, n):
    for i in tl.range(0, n, loop_unroll_factor=-1):  # <-
        pass


# was: "AttributeError: 'dtype' object has no attribute 'shape'".
@bad(r"dot accumulator is a scalar \(fp32\); expected a tensor of shape \[16, 16\]", caret_at="tl.dot")
def dot_scalar_accumulator(x_ptr):
    a = tl.zeros((16, 16), tl.float16)
    c = tl.dot(a, a, acc=1.0)  # <-


@bad(r"dot accumulator is a scalar \(fp32\); expected a tensor of shape \[2, 2, 16, 16\]")
def dot_of_batches_scalar_accumulator(x_ptr):
    a = tl.zeros((2, 2, 16, 16), tl.float16)
    c = tl.dot(a, a, 0.0)  # <-


# was: "TypeError: 'NoneType' object is not iterable".
@bad(r"a shape must be a tuple of constexpr ints, such as \(16, 32\), got None", caret_at="tl.zeros")
def zeros_shape_none(x_ptr):
    z = tl.zeros(None, tl.float32)  # <-


# was: "'tensor(int32[16])' is a plain Python function and cannot be called from a kernel".
@bad(r"^'x' is a tensor \(int32\[16\]\), not a function: it cannot be called$", caret_at="x(4)")
def call_a_tensor(x_ptr):
    x = tl.arange(0, 16)
    y = x(4)  # <-


@bad(r"^'SCALE' is a value of type int, not a function: it cannot be called$", caret_at="SCALE(")
def call_a_constexpr(x_ptr, SCALE: tl.constexpr = 4):
    y = SCALE(2)  # <-


# was: "`+` cannot combine the constants BlockPointer(fp32, block_shape=[16]) and 16".
@bad(r"`\+` does not apply to a block pointer; move it with tl\.advance\(pointer, offsets\)")
def block_pointer_plus_int(x_ptr):
    p = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (16,), (0,))
    q = p + 16  # <-


# ============================================================================= already right (kept so)


@bad(r"shapes \[16\] and \[32\] are incompatible", caret_at="tl.arange(0, 16) +")
def add_mismatched_shapes(x_ptr):
    a = tl.arange(0, 16) + tl.arange(0, 32)  # <-


@bad(r"dot shapes do not match: \[16, 32\] @ \[16, 16\]", caret_at="tl.dot")
def dot_k_mismatch(x_ptr):
    a = tl.zeros((16, 32), tl.float16)
    b = tl.zeros((16, 16), tl.float16)
    c = tl.dot(a, b)  # <-


@bad(r"arange\(0, 10\) has 10 elements; the number of elements must be a power of 2")
def arange_not_power_of_2(x_ptr):
    offs = tl.arange(0, 10)  # <-


@bad(r"arange's start and end must be constexpr integers.*'n' is a parameter of arange_runtime_end without "
     r"tl\.constexpr: declare it `n: tl\.constexpr`")
def arange_runtime_end(x_ptr, n):
    offs = tl.arange(0, n)  # <-


@bad(r"shape dimensions must be constexpr integers, got a value known only at run time; 'n' is a parameter")
def zeros_runtime_shape(x_ptr, n):
    z = tl.zeros((n,), tl.float32)  # <-


@bad(r"shapes \[32\] and \[16\] are incompatible", caret_at="tl.load")
def load_mask_wrong_shape(x_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs, mask=tl.arange(0, 32) < 5)  # <-


@bad(r"unsupported tensor index tensor\(int32\[4\]\): only `:` and `None` are allowed")
def index_tensor_with_tensor(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = x[tl.arange(0, 4)]  # <-


@bad(r"reduction axis 5 is out of range for a tensor of rank 1", caret_at="tl.sum")
def sum_axis_5(x_ptr):
    s = tl.sum(tl.arange(0, 16), axis=5)  # <-


def plain_helper(x):
    return x + 1


@bad(r"'plain_helper' is a plain Python function and cannot be called from a kernel; decorate it with @tilec\.jit")
def call_plain_function(x_ptr):
    y = plain_helper(tl.arange(0, 16))  # <-


@bad(r"^static_assert failed: BLOCK too small$", caret_at="tl.static_assert")
def static_assert_false(x_ptr):
    tl.static_assert(False, "BLOCK too small")  # <-


@bad(r"loop-carried variable 'acc' is int32 before the loop but fp32 at the end of its body")
def loop_carried_type_change(x_ptr, n):
    acc = 0
    for i in range(n):  # <-
        acc = acc + 1.5
    tl.store(x_ptr, acc)


@bad(r"program_id axis must be 0, 1, or 2 but got 3")
def program_id_3(x_ptr):
    pid = tl.program_id(3)  # <-


@bad(r"atomic_add needs 32- or 64-bit integers or floats, got int16", signature={"x_ptr": "*i16"})
def atomic_add_int16(x_ptr):
    tl.atomic_add(x_ptr, 1)  # <-


@bad(r"make_tensor_descriptor's block_shape \[12, 16\]: every dimension must be a power of 2")
def descriptor_block_not_power_of_2(x_ptr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[64, 64], strides=[64, 1], block_shape=[12, 16])  # <-


@bad(r"a tensor descriptor's last stride must be 1 \(the last dimension contiguous\), got 64")
def descriptor_transposed_strides(x_ptr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[64, 64], strides=[1, 64], block_shape=[16, 16])  # <-


@pytest.mark.parametrize("kernel, signature, caret_at, sentence", CASES)
def test_compile_reports_the_line(kernel, signature, caret_at, sentence):
    with pytest.raises(CompilationError) as info:
        tilec.compile(kernel, signature=compile_signature(kernel, signature), target="sm_90")
    assert_located(info.value, kernel, sentence, caret_at)


@pytest.mark.parametrize("kernel, signature, caret_at, sentence", CASES)
def test_interpreter_reports_the_line(kernel, signature, caret_at, sentence, monkeypatch):
    monkeypatch.setattr(config, "interpret", True)
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](*host_arguments(kernel, signature))
    assert_located(info.value, kernel, sentence, caret_at)


# ============================================================================= launches and entry points


@tilec.jit
def copy_block(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@pytest.mark.parametrize("grid, axis, size", [((1, 70000), 1, 70000), ((1, 1, 65536), 2, 65536),
                                              ((2**31,), 0, 2**31)])
def test_grid_beyond_the_gpu_limits(grid, axis, size, monkeypatch):
    # was: the interpreter ran 70000 programs where the GPU refuses the launch (CUDA_ERROR_INVALID_VALUE).
    monkeypatch.setattr(config, "interpret", True)
    x = np.random.rand(64).astype(np.float32)
    with pytest.raises(LaunchError, match=rf"the grid \({grid[0]}, .*\) has {size} programs along axis {axis}, "
                                          r"more than a GPU grid allows \(2147483647 along axis 0, 65535 along "
                                          r"axes 1 and 2\)"
                       if len(grid) > 1 else rf"has {size} programs along axis 0, more than a GPU grid allows"):
        copy_block[grid](x, 16, BLOCK=16)


def test_grid_at_the_gpu_limits_is_accepted(monkeypatch):
    monkeypatch.setattr(config, "interpret", True)
    x = np.random.rand(64).astype(np.float32)
    want = x + 1.0
    copy_block[(1, 1, 1)](x, 64, BLOCK=64)
    np.testing.assert_array_equal(x, want)
    assert copy_block._resolve_grid((2**31 - 1, 65535, 65535), []) == (2**31 - 1, 65535, 65535)


def test_jit_of_a_lambda():
    # was: SyntaxError from the generated launcher ("def <lambda>(...)").
    with pytest.raises(UsageError, match=r"@jit needs a function defined with `def`, not a lambda"):
        tilec.jit(lambda x_ptr: x_ptr)


@pytest.mark.parametrize("options, sentence", [
    ({"num_warps": 3}, r"tilec\.compile: num_warps must be a power of 2 between 1 and 32, got 3"),
    ({"num_warps": 64}, r"num_warps must be a power of 2 between 1 and 32, got 64"),
    ({"num_stages": -1}, r"tilec\.compile: num_stages must be a non-negative int, got -1"),
])
def test_compile_options_out_of_range(options, sentence):
    # was: a bare ValueError raised from tilec/backend/kernel_data.py, with its traceback.
    with pytest.raises(UsageError, match=sentence) as info:
        tilec.compile(copy_block, signature={"x_ptr": "*fp32", "n": "i32"}, constexprs={"BLOCK": 16},
                      target="sm_90", **options)
    assert isinstance(info.value, ValueError)  # as the ValueError it replaces


def test_warmup_with_a_misspelt_pointer_type():
    # was: '*fp33' taken for a constexpr string, then "the string '*fp33' is a compile-time
    # constant, not a number or a tensor" at the kernel's first use of x_ptr.
    with pytest.raises(LaunchError, match=r"argument 'x_ptr' of copy_block\(\): '\*fp33' is not a pointer type "
                                          r"\(unknown type 'fp33' in signature"):
        copy_block.warmup("*fp33", "i32", BLOCK=16, grid=(1,), target="sm_90")


# was: compiled with `rest` taken for an int32 scalar when the signature named it, "parameter
# 'rest' ... is in neither signature nor constexprs" when not, and "missing argument 'rest'"
# at launch.
@tilec.jit
def kernel_with_varargs(x_ptr, *rest):
    tl.store(x_ptr, 1.0)


def test_compile_of_a_kernel_with_varargs():
    with pytest.raises(UsageError, match=r"tilec\.compile: kernel_with_varargs\(\) takes \*rest, which a kernel "
                                         r"cannot take"):
        tilec.compile(kernel_with_varargs, signature={"x_ptr": "*fp32", "rest": "i32"}, target="sm_90")


@pytest.mark.parametrize("interpret", [True, False])
def test_launch_of_a_kernel_with_varargs(interpret, monkeypatch):
    monkeypatch.setattr(config, "interpret", interpret)
    x = np.random.rand(64).astype(np.float32)
    with pytest.raises(LaunchError, match=r"kernel_with_varargs\(\) takes \*rest, which a kernel launch cannot pass"):
        kernel_with_varargs[(1,)](x)
    with pytest.raises(LaunchError, match=r"kernel_with_varargs\(\) takes \*rest"):
        kernel_with_varargs[(1,)](x, 1, 2)


@tilec.jit
def varargs_helper(*values):
    return values[0] + values[1]


@tilec.jit
def calls_varargs_helper(x_ptr):
    tl.store(x_ptr, varargs_helper(1.5, 2.0))


def test_varargs_still_work_in_called_functions(monkeypatch):
    monkeypatch.setattr(config, "interpret", True)
    x = np.random.rand(4).astype(np.float32)
    calls_varargs_helper[(1,)](x)
    assert x[0] == 3.5
    tilec.compile(calls_varargs_helper, signature={"x_ptr": "*fp32"}, target="sm_90")


# ============================================================================= atomic_cas with a block of compares


@tilec.jit
def cas_block_at_one_address(x_ptr, old_ptr, base):
    # was: an InternalError (invalid IR: 'tile.atomic_cas' operands of different shapes)
    # compiled, and NumPy's "cannot broadcast a non-scalar to a scalar array" interpreted.
    offs = tl.arange(0, 16)
    old = tl.atomic_cas(x_ptr, base + offs, -1)
    tl.store(old_ptr + offs, old)


def test_atomic_cas_with_a_block_of_compares_at_one_address(backend):
    rng = np.random.default_rng(7)
    base = int(rng.integers(0, 1000))
    hit = int(rng.integers(0, 16))
    x = device_array(np.array([base + hit], np.int32), backend)
    old = device_array(np.full(16, -7, np.int32), backend)
    cas_block_at_one_address[(1,)](x, old, base)
    olds = to_numpy(old)
    assert to_numpy(x)[0] == -1  # exactly the lane whose compare matched swapped
    assert olds[hit] == base + hit
    assert set(olds.tolist()) <= {base + hit, -1}


@pytest.mark.parametrize("interpret", [True, False])
def test_tensor_for_a_constexpr(interpret, monkeypatch):
    # was: accepted (a torch tensor hashes by identity), then "arange's start and end must be
    # constexpr integers (got int and Tensor); mark them tl.constexpr" on a parameter that is one.
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(config, "interpret", interpret)
    with pytest.raises(LaunchError, match=r"tl\.constexpr argument 'BLOCK' of copy_block\(\) is a Tensor of int64 "
                                          r"on cpu; a constexpr takes a compile-time value"):
        copy_block[(1,)](None, 4, BLOCK=torch.tensor(16))


@pytest.mark.parametrize("arguments, sentence", [
    ({"signature": "*fp32,i32", "constexprs": {"BLOCK": 16}},
     r"tilec\.compile: signature must be a dict from parameter names to types, such as \{'x_ptr': '\*fp32', "
     r"'n': 'i32'\}, got '\*fp32,i32'"),
    ({"signature": {"x_ptr": "*fp32", "n": "i32"}, "constexprs": [16]},
     r"tilec\.compile: constexprs must be a dict from parameter names to values, such as \{'BLOCK': 64\}, "
     r"got \[16\]"),
])
def test_compile_signature_not_a_dict(arguments, sentence):
    # was: "parameter 'x_ptr' of copy_block is in neither signature nor constexprs" (Triton's
    # older string signatures, "*fp32,i32", still appear in examples).
    with pytest.raises(UsageError, match=sentence):
        tilec.compile(copy_block, target="sm_90", **arguments)


@tilec.jit
def store_block_length(x_ptr):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, offs * 0.0 + len(offs))


def test_len_of_a_block_on_both_backends(backend):
    # was: compiled (len(x) is the first dimension, frontend/calls.py) but a bare TypeError
    # "object of type 'tensor' has no len()" in the interpreter.
    x = device_array(np.full(16, np.nan, np.float32), backend)
    store_block_length[(1,)](x)
    np.testing.assert_array_equal(to_numpy(x), np.full(16, 16.0, np.float32))
