"""Python's min, max and abs on tensors inside interpreted kernels behave as the compiler
maps them: tl.minimum / tl.maximum (folded left to right) and tl.abs, in the kernel and in
the @jit functions it calls, however they are reached."""
from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import CompilationError
from tilec.interpreter import KernelSemanticError, OutOfBoundsAccess


@tilec.jit
def minmax_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, min(x, y))
    tl.store(out_ptr + BLOCK + offs, max(x, y))
    tl.store(out_ptr + 2 * BLOCK + offs, max(x, y, 0.5))
    tl.store(out_ptr + 3 * BLOCK + offs, min(1.0, x))
    tl.store(out_ptr + 4 * BLOCK + offs, abs(x))
    tl.store(out_ptr + 5 * BLOCK + offs + min(BLOCK, 4) * 0, abs(x - y) + max(2, 3))


def test_min_max_abs_on_float_tensors(rng):
    n = 64
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    x[:3] = [np.nan, 1.0, -0.0]
    y[:3] = [2.0, np.nan, 0.0]
    out = np.zeros(6 * n, np.float32)
    minmax_kernel[(1,)](x, y, out, BLOCK=n)
    np.testing.assert_array_equal(out[:n], np.fmin(x, y))  # tl.minimum ignores NaN by default
    np.testing.assert_array_equal(out[n:2 * n], np.fmax(x, y))
    np.testing.assert_array_equal(out[2 * n:3 * n], np.fmax(np.fmax(x, y), np.float32(0.5)))
    np.testing.assert_array_equal(out[3 * n:4 * n], np.fmin(np.float32(1.0), x))
    np.testing.assert_array_equal(out[4 * n:5 * n], np.abs(x))
    np.testing.assert_array_equal(out[5 * n:], np.abs(x - y) + 3)


@tilec.jit
def int_minmax_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, max(min(x, 100), -100))
    tl.store(out_ptr + BLOCK + offs, abs(x))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_min_max_abs_on_integer_tensors(rng, dtype):
    x = rng.integers(-1000, 1000, 64).astype(np.int64).astype(dtype)
    x[0] = np.iinfo(dtype).min
    out = np.zeros(128, dtype)
    int_minmax_kernel[(1,)](x, out, BLOCK=64)
    np.testing.assert_array_equal(out[:64], np.clip(x, -100, 100))
    np.testing.assert_array_equal(out[64:], np.abs(x))  # abs(MIN) wraps to MIN, as tl.abs


def test_max_with_a_negative_constant_on_unsigned_is_refused(rng):
    x = rng.integers(0, 1000, 64).astype(np.uint32)
    with pytest.raises(CompilationError, match="negative constant -100 with an unsigned uint32") as info:
        int_minmax_kernel[(1,)](x, np.zeros(128, np.uint32), BLOCK=64)
    assert "max(min(x, 100), -100)" in info.value.location.source_line


@tilec.jit
def scalar_minmax_kernel(x_ptr, out_ptr, n):
    a = tl.load(x_ptr)
    b = tl.load(x_ptr + 1)
    tl.store(out_ptr, max(a, b))
    tl.store(out_ptr + 1, min(a, b, n * 1.0))
    tl.store(out_ptr + 2, abs(a))
    tl.store(out_ptr + 3, max(n, 2) * 1.0)  # a runtime int scalar is a tensor: tl.maximum


def test_min_max_on_scalars(rng):
    x = np.array([-3.5, 2.0], np.float32)
    out = np.zeros(4, np.float32)
    scalar_minmax_kernel[(1,)](x, out, 1)
    np.testing.assert_array_equal(out, [2.0, -3.5, 3.5, 2.0])


@tilec.jit
def single_tensor_min(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), min(x))


def test_min_of_one_tensor_is_refused_like_the_compiler():
    with pytest.raises(CompilationError, match="min\\(\\) on tensors takes two or more positional") as info:
        single_tensor_min[(1,)](np.zeros(4, np.float32), BLOCK=4)
    assert "min(x)" in info.value.location.source_line


# ----------------------------------------------------------------------------- nested @jit functions


@tilec.jit
def clamp_helper(x, lo, hi):
    return min(max(x, lo), hi)


@tilec.jit
def magnitude_helper(x):
    return abs(clamp_helper(x, -2.0, 2.0))


def _make_closure_kernel():
    helper = clamp_helper

    @tilec.jit
    def closure_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, helper(tl.load(x_ptr + offs), -1.0, 1.0))

    return closure_kernel


@tilec.jit
def nested_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, magnitude_helper(tl.load(x_ptr + offs)))


def test_nested_jit_functions_see_the_tensor_aware_builtins(rng):
    x = (rng.standard_normal(64) * 3).astype(np.float32)
    out = np.zeros(64, np.float32)
    nested_kernel[(1,)](x, out, BLOCK=64)
    np.testing.assert_array_equal(out, np.abs(np.clip(x, -2, 2)))
    _make_closure_kernel()[(1,)](x, out, BLOCK=64)
    np.testing.assert_array_equal(out, np.clip(x, -1, 1))


@pytest.fixture
def helper_module(tmp_path, monkeypatch):
    """A user module with @jit functions, one of which shadows `max` with its own global."""
    source = textwrap.dedent('''
        import tilec
        import tilec.language as tl


        @tilec.jit
        def smallest(a, b):
            return min(a, b)


        @tilec.jit
        def max(a, b):  # the module's own max wins over the builtin, as for the compiler
            return tl.minimum(a, b) * 0 + 7.0


        @tilec.jit
        def shadowed(a, b):
            return max(a, b)
    ''')
    (tmp_path / "tilec_interp_helpers.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("tilec_interp_helpers")
    yield module
    sys.modules.pop("tilec_interp_helpers", None)


def test_jit_functions_reached_through_a_module(rng, helper_module):
    @tilec.jit
    def module_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        tl.store(out_ptr + offs, helpers.smallest(x, y))
        tl.store(out_ptr + BLOCK + offs, helpers.shadowed(x, y))

    helpers = helper_module
    x = rng.standard_normal(32).astype(np.float32)
    y = rng.standard_normal(32).astype(np.float32)
    out = np.zeros(64, np.float32)
    module_kernel[(1,)](x, y, out, BLOCK=32)
    np.testing.assert_array_equal(out[:32], np.minimum(x, y))
    np.testing.assert_array_equal(out[32:], np.full(32, 7.0, np.float32))


@tilec.jit
def max_combine(a, b):
    return max(a, b)


@tilec.jit
def reduce_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.reduce(x, 0, max_combine))


@pytest.mark.skipif(not hasattr(tl, "reduce"), reason="tl.reduce is not in the language yet")
def test_combine_functions_called_by_the_semantic_layer(rng):
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros(1, np.float32)
    reduce_kernel[(1,)](x, out, BLOCK=64)
    assert out[0] == x.max()


@tilec.jit
def apply_kernel(x_ptr, y_ptr, out_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, FN(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


def test_jit_functions_passed_as_constexpr_arguments(rng):
    x = rng.standard_normal(16).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float32)
    apply_kernel[(1,)](x, y, out, max_combine, BLOCK=16)
    np.testing.assert_array_equal(out, np.maximum(x, y))


@tilec.jit
def bad_load_helper(ptr, n):
    return tl.load(ptr + max(n, 0))


@tilec.jit
def nested_oob_kernel(x_ptr, n):
    tl.store(x_ptr, bad_load_helper(x_ptr, n))


def test_errors_in_nested_functions_are_still_located():
    with pytest.raises(OutOfBoundsAccess) as info:
        nested_oob_kernel[(1,)](np.zeros(4, np.float32), 10)
    message = str(info.value)
    assert "(in @jit function `bad_load_helper`)" in message
    assert "tl.load(ptr + max(n, 0))" in message
    assert "called from" in message and "bad_load_helper(x_ptr, n)" in message


def test_python_builtins_outside_kernels_are_untouched():
    assert min(3, 1, 2) == 1 and max([4, 5]) == 5 and abs(-2) == 2
    from tilec.interpreter.python_builtins import KERNEL_BUILTINS
    assert KERNEL_BUILTINS["min"](3, tl.constexpr(1)) == 1
    assert KERNEL_BUILTINS["max"]([1, 9, 3]) == 9
    assert KERNEL_BUILTINS["max"]([1, 2], key=lambda v: -v) == 1
    assert KERNEL_BUILTINS["abs"](tl.constexpr(-4)) == 4


@tilec.jit
def prints_its_shape(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.static_print("x is", x)


def test_static_print_prints_once_per_program(capsys):
    # The frontend check before the first program compiles the kernel without printing.
    prints_its_shape[(2,)](np.zeros(16, np.float32), BLOCK=16)
    assert capsys.readouterr().out == "x is tensor(fp32[16])\n" * 2
