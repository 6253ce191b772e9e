"""Issue 3's elementwise operations in the interpreter: umulhi, fma, div_rn, pow, sqrt_rn,
tan, trunc and libdevice calls, against exact or float64 references."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from interpreter_testing import BF16, block, exact_round

import tilec
import tilec.language as tl
from tilec.language.core import TilecSemanticError


@tilec.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if OP == "umulhi":
        z = tl.umulhi(x, y)
    elif OP == "div_rn":
        z = tl.div_rn(x, y)
    elif OP == "fdiv_ieee":
        z = tl.fdiv(x, y, ieee_rounding=True)
    else:
        z = tl.fdiv(x, y)
    tl.store(out_ptr + offs, z)


@pytest.mark.parametrize("dtype", [np.uint32, np.int32])
def test_umulhi_is_the_high_half_of_the_unsigned_product(rng, dtype):
    x = rng.integers(1, 2**32, 256, dtype=np.uint64).astype(np.uint32).view(dtype)
    y = rng.integers(1, 2**32, 256, dtype=np.uint64).astype(np.uint32).view(dtype)
    x[:3] = np.array([0xFFFFFFFF, 0x80000000, 1], dtype=np.uint32).view(dtype)
    y[:3] = np.array([0xFFFFFFFF, 0x80000000, 0xFFFFFFFF], dtype=np.uint32).view(dtype)
    out = np.zeros(256, dtype=dtype)
    binary_kernel[(1,)](x, y, out, "umulhi", BLOCK=256)
    expected = [(int(a) * int(b)) >> 32 for a, b in zip(x.view(np.uint32), y.view(np.uint32))]
    np.testing.assert_array_equal(out.view(np.uint32), np.array(expected, dtype=np.uint32))


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.uint16, np.uint8])
def test_mulhiui_for_every_width(sem, rng, dtype):
    bits = np.dtype(dtype).itemsize * 8
    udt = np.dtype(f"uint{bits}")
    x = rng.integers(1, 2**bits, 512, dtype=np.uint64).astype(udt)
    y = rng.integers(1, 2**bits, 512, dtype=np.uint64).astype(udt)
    x[0] = y[0] = (1 << bits) - 1
    ty = {np.uint64: tl.uint64, np.int64: tl.int64, np.uint16: tl.uint16, np.uint8: tl.uint8}[dtype]
    got = sem.builder.binary("mulhiui", x.view(dtype), y.view(dtype), block(x.view(dtype), ty).type)
    expected = np.array([(int(a) * int(b)) >> bits for a, b in zip(x, y)], dtype=udt)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.view(udt), expected)


@pytest.mark.parametrize("op", ["div_rn", "fdiv_ieee"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ieee_division_is_correctly_rounded(rng, op, dtype):
    x = (rng.standard_normal(128) * 10.0 ** rng.integers(-5, 5, 128)).astype(dtype)
    y = (rng.standard_normal(128) * 10.0 ** rng.integers(-5, 5, 128)).astype(dtype)
    x[:6] = [1.0, -1.0, 0.0, np.inf, np.nan, -0.0]
    y[:6] = [0.0, 0.0, 0.0, np.inf, 1.0, 3.0]
    out = np.zeros(128, dtype=dtype)
    binary_kernel[(1,)](x, y, out, op, BLOCK=128)
    for i in range(6, 128):
        assert out[i] == exact_round(Fraction(float(x[i])) / Fraction(float(y[i])), np.dtype(dtype))
    np.testing.assert_array_equal(out[:6], np.array([np.inf, -np.inf, np.nan, np.nan, np.nan, -0.0], dtype))
    assert np.signbit(out[5])


def test_fdiv_of_halves_divides_in_fp32(rng):
    x = rng.uniform(0.5, 4, 64).astype(np.float16)
    y = rng.uniform(0.5, 4, 64).astype(np.float16)
    out = np.zeros(64, dtype=np.float32)
    binary_kernel[(1,)](x, y, out, "fdiv", BLOCK=64)
    np.testing.assert_array_equal(out, x.astype(np.float32) / y.astype(np.float32))


@tilec.jit
def fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.fma(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)))


def _fma_reference(x, y, z, dtype):
    return np.array([exact_round(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)), np.dtype(dtype))
                     for a, b, c in zip(x.astype(np.float64), y.astype(np.float64), z.astype(np.float64))])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_fma_rounds_once(rng, dtype):
    n = 256
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    # Near-cancellation makes the single rounding matter.
    z = (-(x.astype(np.float64) * y.astype(np.float64)) * (1 + rng.standard_normal(n) * 1e-3)).astype(dtype)
    out = np.zeros(n, dtype=dtype)
    fma_kernel[(1,)](x, y, z, out, BLOCK=n)
    np.testing.assert_array_equal(out, _fma_reference(x, y, z, dtype).astype(dtype))


def test_fma_fp32_is_not_double_rounded():
    # exact = 1 + 2**-11 + 2**-24 + 2**-80: just above a float32 midpoint; fp64 then fp32 rounds down.
    x = np.array([1 + 2.0 ** -12], dtype=np.float32)
    z = np.array([2.0 ** -80], dtype=np.float32)
    out = np.zeros(1, dtype=np.float32)
    fma_kernel[(1,)](x, x, z, out, BLOCK=1)
    assert out[0] == np.float32(1 + 2.0 ** -11 + 2.0 ** -23)
    naive = (x.astype(np.float64) * x + z).astype(np.float32)
    assert naive[0] != out[0]


def test_fma_fp64_extremes_and_specials(sem):
    x = np.array([2.0 ** 512, 2.0 ** -600, 3.0, np.inf, 0.0, -0.0, 1e308, 1.5], dtype=np.float64)
    y = np.array([2.0 ** 512, 2.0 ** -500, 1.0 / 3.0, 0.0, 5.0, 5.0, 1.75, 2.0 ** 1000], dtype=np.float64)
    z = np.array([-np.finfo(np.float64).max, 2.0 ** -1074, -1.0, 1.0, -0.0, -0.0, -1e308, -1.0], dtype=np.float64)
    got = sem.builder.ternary("fma", x, y, z, block(x, tl.float64).type)
    assert got[0] == 2.0 ** 971  # the product overflows, the result does not
    assert got[1] == 2.0 ** -1074
    assert got[2] == float(Fraction(3) * Fraction(1.0 / 3.0) - 1)
    assert np.isnan(got[3])
    assert got[4] == 0 and not np.signbit(got[4])  # +0 + -0 = +0
    assert got[5] == 0 and np.signbit(got[5])  # -0 + -0 = -0
    assert got[6] == float(Fraction(1e308) * Fraction(1.75) - Fraction(1e308))
    assert got[7] == 1.5 * 2.0 ** 1000  # -1 is far below the last bit
    scalar = sem.builder.ternary("fma", x[0], y[0], z[0], tl.float64)  # 0-d operands, the slow path
    assert scalar.shape == () and scalar == 2.0 ** 971


def test_fma_bf16_rounds_once(sem, rng):
    x = rng.standard_normal(128).astype(BF16)
    y = rng.standard_normal(128).astype(BF16)
    z = (-(x.astype(np.float64) * y.astype(np.float64)) * 1.001).astype(np.float32).astype(BF16)
    got = sem.builder.ternary("fma", x, y, z, block(x, tl.bfloat16).type)
    assert got.dtype == BF16
    expected = [exact_round(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)), BF16)
                for a, b, c in zip(x.astype(np.float32), y.astype(np.float32), z.astype(np.float32))]
    np.testing.assert_array_equal(got.astype(np.float64), np.array(expected))


@tilec.jit
def unary_kernel(x_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if OP == "tan":
        y = tl.tan(x)
    elif OP == "trunc":
        y = tl.trunc(x)
    else:
        y = tl.sqrt_rn(x)
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_tan_trunc_sqrt_rn(rng, dtype):
    n = 128
    x = rng.uniform(-1.5, 1.5, n).astype(dtype)
    x[:4] = [np.nan, np.inf, -0.0, 0.5]
    out = np.zeros(n, dtype=dtype)
    unary_kernel[(1,)](x, out, "tan", BLOCK=n)
    np.testing.assert_allclose(out[4:], np.tan(x[4:].astype(np.float64)), rtol=4 * np.finfo(dtype).eps)
    assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] == 0 and np.signbit(out[2])

    x = (rng.standard_normal(n) * 100).astype(dtype)
    x[:5] = [np.nan, -np.inf, -0.5, 2.5, -0.0]
    unary_kernel[(1,)](x, out, "trunc", BLOCK=n)
    np.testing.assert_array_equal(out, np.trunc(x))
    assert np.signbit(out[2]) and out[2] == 0  # trunc(-0.5) = -0

    if dtype == np.float16:
        return  # tl.sqrt_rn refuses fp16, as Triton's does (test_math_dtypes.py)
    x = np.abs(rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(dtype)
    x[:4] = [-1.0, np.inf, -0.0, 2.0]
    unary_kernel[(1,)](x, out, "sqrt_rn", BLOCK=n)
    for i in range(4, n):
        root = exact_round(Fraction(float(np.sqrt(np.float64(x[i])))), np.dtype(dtype)) if dtype != np.float64 \
            else float(np.sqrt(x[i]))
        assert out[i] == root
    assert np.isnan(out[0]) and out[1] == np.inf and np.signbit(out[2]) and out[3] == np.sqrt(dtype(2.0))


POW_TABLE = tl.constexpr({(tl.float32, tl.float32): ("__nv_powf", tl.float32)})


@tilec.jit
def pow_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.extern_elementwise("", "", [x, y], POW_TABLE, is_pure=True))


def test_powf_through_the_builder(sem, rng):
    x = rng.uniform(0.1, 4, 64).astype(np.float32)
    y = rng.uniform(-3, 3, 64).astype(np.float32)
    x[:4], y[:4] = [-8.0, 1.0, 0.0, 2.0], [1.0 / 3.0, np.nan, -1.0, 0.0]
    got = sem.builder.binary("powf", x, y, block(x, tl.float32).type)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got[4:], np.power(x[4:].astype(np.float64), y[4:]), rtol=3e-7)
    assert np.isnan(got[0]) and got[1] == 1.0 and got[2] == np.inf and got[3] == 1.0


def test_bf16_binary_ops_round_like_the_type(sem, rng):
    x = rng.standard_normal(256).astype(BF16)
    y = rng.standard_normal(256).astype(BF16)
    ty = block(x, tl.bfloat16).type
    for op, fn in [("addf", np.add), ("subf", np.subtract), ("mulf", np.multiply), ("divf_rn", np.divide),
                   ("maxnumf", np.fmax), ("remf", np.fmod), ("powf", None)]:
        got = sem.builder.binary(op, x, y, ty)
        assert got.dtype == BF16, op
        if fn is None:
            continue
        exact = [exact_round(Fraction(float(v)), BF16) if np.isfinite(v) else v
                 for v in fn(x.astype(np.float64), y.astype(np.float64))]
        np.testing.assert_array_equal(got.astype(np.float64), np.array(exact), err_msg=op)


# ----------------------------------------------------------------------------- libdevice


def test_extern_elementwise_uses_the_libdevice_table(sem, rng, monkeypatch):
    from tilec.interpreter import libdevice_numpy
    table = dict(libdevice_numpy.NUMPY_IMPLEMENTATIONS)
    table["__nv_test_twice"] = lambda x: x * 2.0  # float64 result: rounded to the declared type
    monkeypatch.setattr(libdevice_numpy, "NUMPY_IMPLEMENTATIONS", table)
    x = rng.standard_normal(16).astype(np.float32)
    got = sem.builder.extern_elementwise("__nv_test_twice", [x], block(x, tl.float32).type)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, x * 2)
    scalar = sem.builder.extern_elementwise("__nv_test_twice", [np.array(1.5, np.float32)], tl.float32)
    assert scalar.shape == () and scalar == 3.0


def test_extern_elementwise_unknown_symbol(sem, monkeypatch):
    from tilec.interpreter import libdevice_numpy
    monkeypatch.setattr(libdevice_numpy, "NUMPY_IMPLEMENTATIONS", {})
    with pytest.raises(TilecSemanticError, match="'__nv_nosuchthing'"):
        sem.builder.extern_elementwise("__nv_nosuchthing", [np.ones(4, np.float32)], block(np.ones(4), tl.float32).type)


@pytest.mark.parametrize("symbol, dtype", [("__nv_fdiv_rn", np.float32), ("__nv_ddiv_rn", np.float64),
                                           ("__nv_fsqrt_rn", np.float32), ("__nv_dsqrt_rn", np.float64)])
def test_extern_elementwise_ieee_fallbacks(sem, rng, monkeypatch, symbol, dtype):
    from tilec.interpreter import libdevice_numpy
    monkeypatch.setattr(libdevice_numpy, "NUMPY_IMPLEMENTATIONS", {})
    x = np.abs(rng.standard_normal(64)).astype(dtype) + dtype(0.1)
    y = rng.standard_normal(64).astype(dtype)
    ty = block(x, tl.float32 if dtype == np.float32 else tl.float64).type
    if "div" in symbol:
        got = sem.builder.extern_elementwise(symbol, [x, y], ty)
        expected = [exact_round(Fraction(float(a)) / Fraction(float(b)), np.dtype(dtype)) for a, b in zip(x, y)]
    else:
        got = sem.builder.extern_elementwise(symbol, [x], ty)
        expected = [exact_round(Fraction(float(np.sqrt(np.float64(a)))), np.dtype(dtype)) if dtype == np.float32
                    else float(np.sqrt(a)) for a in x]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.array(expected, dtype=dtype))


def test_extern_elementwise_through_the_language(rng, monkeypatch):
    from tilec.interpreter import libdevice_numpy
    table = dict(libdevice_numpy.NUMPY_IMPLEMENTATIONS)
    table.setdefault("__nv_powf", lambda x, y: np.power(x, y))
    monkeypatch.setattr(libdevice_numpy, "NUMPY_IMPLEMENTATIONS", table)
    x = rng.uniform(0.5, 2, 32).astype(np.float32)
    y = rng.uniform(-2, 2, 32).astype(np.float32)
    out = np.zeros(32, np.float32)
    pow_kernel[(1,)](x, y, out, BLOCK=32)
    np.testing.assert_allclose(out, np.power(x.astype(np.float64), y), rtol=3e-7)
