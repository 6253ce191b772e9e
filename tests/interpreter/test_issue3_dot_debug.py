"""dot, device_print, device_assert, barrier, hint and assume in the interpreter's builder."""
from __future__ import annotations

import numpy as np
import pytest
from interpreter_testing import BF16, FP8E4, FP8E5, block

import tilec
import tilec.language as tl
from tilec.interpreter import DeviceAssertionError
from tilec.language.core import TilecSemanticError, block_type


def _tf32_reference(x: np.ndarray) -> np.ndarray:
    """11 significant bits, cut toward zero (what the tensor cores read of an fp32
    register), through frexp (normal numbers)."""
    mantissa, exponent = np.frexp(x.astype(np.float64))
    scaled = mantissa * 2.0 ** 11
    return np.ldexp(np.sign(scaled) * np.floor(np.abs(scaled)) / 2.0 ** 11, exponent).astype(np.float32)


@pytest.mark.parametrize("precision", ["ieee", "tf32x3", "tf32"])
def test_dot_fp32(sem, rng, precision):
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 8)).astype(np.float32)
    acc = rng.standard_normal((16, 8)).astype(np.float32)
    got = sem.builder.dot(a, b, acc, precision, block_type(tl.float32, [16, 8]))
    assert got.dtype == np.float32
    if precision == "tf32":
        a, b = _tf32_reference(a), _tf32_reference(b)
    expected = (a.astype(np.float64) @ b.astype(np.float64) + acc).astype(np.float32)
    np.testing.assert_array_equal(got, expected)
    if precision == "tf32":
        # Inputs with bits below tf32's mantissa: tf32 drops them, ieee keeps them.
        ones = np.full((16, 32), 1 + 2.0 ** -12, dtype=np.float32)
        ty = block_type(tl.float32, [16, 8])
        np.testing.assert_array_equal(sem.builder.dot(ones, b, acc, "tf32", ty),
                                      (b.astype(np.float64).sum(axis=0) + acc).astype(np.float32))
        np.testing.assert_array_equal(sem.builder.dot(ones, b, acc, "ieee", ty),
                                      ((1 + 2.0 ** -12) * b.astype(np.float64).sum(axis=0) + acc).astype(np.float32))


def test_tf32_operands_are_cut_toward_zero_on_the_bit_pattern(sem):
    """As mma.sync and wgmma read an fp32 register holding a tf32 operand (and as Triton
    hands them fp32 registers): the 13 low bits dropped, whatever they hold."""
    from tilec.interpreter.numpy_common import tf32
    ulp = 2.0 ** -10
    x = np.array([1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + 2.0 ** -20, 1 + ulp - 2.0 ** -23, -(1 + 3 * ulp / 2),
                  np.inf, np.nan, np.finfo(np.float32).max, 0.0, -0.0], dtype=np.float32)
    got = tf32(x)
    np.testing.assert_array_equal(got[:5], [1.0, 1 + ulp, 1.0, 1.0, -(1 + ulp)])
    assert got[5] == np.inf and np.isnan(got[6]) and got[7] == np.float32(2.0 ** 128 - 2.0 ** 117)
    assert got[8] == 0 and np.signbit(got[9])
    np.testing.assert_array_equal(tf32(x[:5]), _tf32_reference(x[:5]))


@pytest.mark.parametrize("dtype, out", [(np.float16, np.float32), (BF16, np.float32), (np.float16, np.float16),
                                        (BF16, BF16), (FP8E4, np.float32), (FP8E5, np.float32)])
def test_dot_low_precision_inputs(sem, rng, dtype, out):
    a = rng.standard_normal((32, 16)).astype(np.float32).astype(dtype)
    b = rng.standard_normal((16, 32)).astype(np.float32).astype(dtype)
    acc = rng.standard_normal((32, 32)).astype(np.float32).astype(out)
    names = {np.dtype(np.float32): tl.float32, np.dtype(np.float16): tl.float16, BF16: tl.bfloat16}
    got = sem.builder.dot(a, b, acc, "ieee", block_type(names[np.dtype(out)], [32, 32]))
    assert got.dtype == np.dtype(out)
    exact = a.astype(np.float64) @ b.astype(np.float64) + acc.astype(np.float64)
    if np.dtype(out) == BF16:
        from tilec.interpreter.numpy_common import round_to
        np.testing.assert_array_equal(got.astype(np.float64), round_to(exact, BF16).astype(np.float64))
    else:
        np.testing.assert_array_equal(got, exact.astype(out))


def test_dot_int8_is_exact_and_wraps(sem, rng):
    a = rng.integers(-128, 128, (16, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 16)).astype(np.int8)
    acc = rng.integers(-1000, 1000, (16, 16)).astype(np.int32)
    got = sem.builder.dot(a, b, acc, "ieee", block_type(tl.int32, [16, 16]))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64) + acc)
    acc[:] = 2**31 - 1
    ones = np.ones((16, 64), np.int8)
    got = sem.builder.dot(ones, np.ones((64, 16), np.int8), acc, "ieee", block_type(tl.int32, [16, 16]))
    assert (got == -(2**31) + 63).all()


def test_dot_batched_and_specials(sem, rng):
    a = rng.standard_normal((2, 16, 16)).astype(np.float32)
    b = rng.standard_normal((2, 16, 16)).astype(np.float32)
    acc = np.zeros((2, 16, 16), np.float32)
    a[0, 3, 5] = np.nan
    b[1, 2, 7] = np.inf
    got = sem.builder.dot(a, b, acc, "ieee", block_type(tl.float32, [2, 16, 16]))
    assert np.isnan(got[0, 3]).all() and not np.isnan(got[0, :3]).any()
    assert np.isinf(got[1, :, 7]).sum() + np.isnan(got[1, :, 7]).sum() == 16
    with pytest.raises(TilecSemanticError, match="unknown input_precision 'tf64'"):
        sem.builder.dot(a, b, acc, "tf64", block_type(tl.float32, [2, 16, 16]))


# ----------------------------------------------------------------------------- debugging


def test_device_print_one_line_per_element(sem, capsys):
    sem.builder.program = (1, 0, 2)
    x = block(np.array([[1.5, -0.0], [np.nan, 3.0]], np.float32), tl.float32)
    sem.device_print("x: ", [x], False)
    assert capsys.readouterr().out.splitlines() == [
        "pid (1, 0, 2) idx (0, 0) x: 1.5",
        "pid (1, 0, 2) idx (0, 1) x: -0",
        "pid (1, 0, 2) idx (1, 0) x: nan",
        "pid (1, 0, 2) idx (1, 1) x: 3",
    ]


def test_device_print_several_operands_hex_and_padding(sem, capsys):
    """Prefixes as Triton prints them: ending in ": ", set off by a space when not empty."""
    values = block(np.arange(12, dtype=np.int32) - 2, tl.int32)
    scalar = block(np.array(255, np.uint8), tl.uint8)
    sem.device_print("v", [block(np.arange(12, dtype=np.int32)[:2], tl.int32), scalar], True)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["pid (0, 0, 0) idx (0) v: (operand 0) 0x00000000",
                     "pid (0, 0, 0) idx (1) v: (operand 0) 0x00000001",
                     "pid (0, 0, 0) idx () v: (operand 1) 0xff"]
    sem.device_print("", [values], False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "pid (0, 0, 0) idx ( 0): -2" and lines[11] == "pid (0, 0, 0) idx (11): 9"
    sem.device_print(" neg", [block(np.array([-1], np.int8), tl.int8)], True)
    assert capsys.readouterr().out == "pid (0, 0, 0) idx (0) neg: 0xff\n"
    sem.device_print("b: ", [block(np.array([1.0], BF16), tl.bfloat16)], True)
    assert capsys.readouterr().out == "pid (0, 0, 0) idx (0) b: 0x3f80\n"


def test_device_assert_raises_where_false(sem):
    sem.builder.program = (3, 0, 0)
    cond = np.ones((4, 4), dtype=bool)
    sem.builder.device_assert(cond, "never", "k.py:1")
    cond[2, 1] = cond[3, 3] = False
    with pytest.raises(DeviceAssertionError) as info:
        sem.builder.device_assert(cond, "x must be positive", "kernels.py:42")
    error = info.value
    assert isinstance(error, AssertionError)
    assert str(error) == ("device assertion failed in kernel `test_kernel` at kernels.py:42, program id (3, 0, 0) "
                          "(element (2, 1), one of 2 failing): x must be positive")
    assert error.program_id == (3, 0, 0) and error.index == (2, 1) and error.location == "kernels.py:42"
    with pytest.raises(DeviceAssertionError, match="program id \\(3, 0, 0\\): scalar"):
        sem.builder.device_assert(np.array(0, np.int32), "scalar", "k.py:2")


def test_barrier_hint_assume(sem):
    x = np.arange(4, dtype=np.int32)
    assert sem.builder.barrier() is None
    assert sem.builder.hint(x, "multiple_of", [16]) is x
    assert sem.builder.assume(np.array(False)) is None  # nothing checked


@tilec.jit
def assert_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x > 0, "x must be positive")


@pytest.mark.skipif(not hasattr(tl, "device_assert"), reason="tl.device_assert is not in the language yet")
def test_device_assert_in_a_kernel():
    x = np.ones(16, np.float32)
    x[9] = -1
    with pytest.raises(DeviceAssertionError, match="`assert_kernel`.*program id \\(0, 0, 0\\).*element 9"):
        assert_kernel[(1,)](x, BLOCK=16, debug=True)


@tilec.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("x: ", tl.load(x_ptr + tl.arange(0, BLOCK)))


@pytest.mark.skipif(not hasattr(tl, "device_print"), reason="tl.device_print is not in the language yet")
def test_device_print_in_a_kernel(capsys):
    print_kernel[(2,)](np.array([0.5, 2.0], np.float32), BLOCK=2)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("pid (0, 0, 0) idx (0)") and out[0].endswith("0.5")
    assert out[3].startswith("pid (1, 0, 0) idx (1)") and out[3].endswith(" 2")
