"""Element semantics that must match the GPU, not NumPy: wraparound, C division, shifts,
NaN handling, saturating conversions, math functions, reductions."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tilec
import tilec.language as tl


@tilec.jit
def int_ops_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    tl.store(out_ptr + 0 * n + offs, a + b, mask=mask)
    tl.store(out_ptr + 1 * n + offs, a - b, mask=mask)
    tl.store(out_ptr + 2 * n + offs, a * b, mask=mask)
    tl.store(out_ptr + 3 * n + offs, a // b, mask=mask)
    tl.store(out_ptr + 4 * n + offs, a % b, mask=mask)
    tl.store(out_ptr + 5 * n + offs, -a, mask=mask)
    tl.store(out_ptr + 6 * n + offs, tl.abs(a), mask=mask)
    tl.store(out_ptr + 7 * n + offs, tl.maximum(a, b), mask=mask)
    tl.store(out_ptr + 8 * n + offs, ~a ^ b, mask=mask)


def _wrap(value: int, bits: int, signed: bool) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >= 1 << (bits - 1) else value


def _c_divmod(a: int, b: int, bits: int, signed: bool) -> tuple[int, int]:
    if b == 0:  # the interpreter's documented choice: all ones, and the dividend
        return _wrap(-1, bits, signed), a
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return _wrap(q, bits, signed), _wrap(a - q * b, bits, signed)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64])
def test_integer_ops_wrap_and_divide_like_c(rng, dtype):
    info = np.iinfo(dtype)
    bits, signed = info.bits, info.min < 0
    edges = [info.min, info.max, info.min + 1, info.max - 1] + ([-1, -7, 7, 3, -3] if signed else [1, 7, 3])
    n = 64
    a = np.concatenate([np.array(edges, dtype), rng.integers(info.min, info.max, n - len(edges), dtype, endpoint=True)])
    b = np.concatenate([np.array(edges[::-1], dtype), rng.integers(info.min, info.max, n - len(edges), dtype, endpoint=True)])
    b[5], b[6] = 0, (-1 if signed else 2)
    a[6] = info.min  # MIN // -1 overflows back to MIN
    out = np.zeros(9 * n, dtype=dtype)
    out[:] = 99
    int_ops_kernel[(1,)](a, b, out, n, BLOCK=64)
    got = out.reshape(9, n)
    for i in range(n):
        x, y = int(a[i]), int(b[i])
        q, r = _c_divmod(x, y, bits, signed)
        expected = [_wrap(x + y, bits, signed), _wrap(x - y, bits, signed), _wrap(x * y, bits, signed), q, r,
                    _wrap(-x, bits, signed), _wrap(abs(x), bits, signed) if signed else x, max(x, y),
                    _wrap(~x ^ y, bits, signed)]
        assert [int(v) for v in got[:, i]] == expected, (x, y)


@tilec.jit
def shift_kernel(a_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a << s, mask=mask)
    tl.store(out_ptr + n + offs, a >> s, mask=mask)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64])
def test_shifts_past_the_width(rng, dtype):
    info = np.iinfo(dtype)
    bits, signed = info.bits, info.min < 0
    n = 40
    a = rng.integers(info.min, info.max, n, dtype, endpoint=True)
    a[0], a[1] = -5 if signed else 5, info.max
    shifts = rng.integers(0, bits + 8, n).astype(dtype)
    shifts[:4] = [bits, bits + 1, 0, bits - 1]
    if signed:
        shifts[4] = -1  # a negative amount is a huge unsigned one
    out = np.full(2 * n, 77, dtype=dtype)
    shift_kernel[(1,)](a, shifts, out, n, BLOCK=64)
    for i in range(n):
        x, s = int(a[i]), int(shifts[i]) & ((1 << bits) - 1)
        left = 0 if s >= bits else _wrap(x << s, bits, signed)
        right = (-1 if x < 0 else 0) if s >= bits else x >> s
        assert (int(out[i]), int(out[n + i])) == (left, right), (x, s)


@tilec.jit
def float_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + 0 * n + offs, tl.maximum(x, y), mask=mask)
    tl.store(out_ptr + 1 * n + offs, tl.minimum(x, y), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(out_ptr + 3 * n + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(out_ptr + 4 * n + offs, x % y, mask=mask)
    tl.store(out_ptr + 5 * n + offs, x / y, mask=mask)
    tl.store(out_ptr + 6 * n + offs, tl.where(x != y, 1.0, 0.0), mask=mask)
    tl.store(out_ptr + 7 * n + offs, tl.where(x < y, 1.0, 0.0), mask=mask)


def test_float_nan_semantics(rng):
    x = rng.standard_normal(16).astype(np.float32) * 10
    y = rng.standard_normal(16).astype(np.float32) * 3
    x[0], y[1], x[2], y[2], y[3] = np.nan, np.nan, np.nan, np.nan, 0.0
    n = len(x)
    out = np.full(8 * n, -123.0, dtype=np.float32)
    float_kernel[(1,)](x, y, out, n, BLOCK=16)
    got = out.reshape(8, n)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_array_equal(got[0], np.fmax(x, y))  # maxnumf ignores NaN
    np.testing.assert_array_equal(got[1], np.fmin(x, y))
    assert np.isnan(got[2][:3]).all() and np.isnan(got[3][:3]).all()  # maximumf propagates it
    np.testing.assert_array_equal(got[2][3:], np.maximum(x, y)[3:])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got[4], np.fmod(x64, y64).astype(np.float32))  # C fmod, not Python %
    assert np.isnan(got[4][3]) and (got[4][4:] * x[4:] >= 0).all()  # x % 0 is NaN; sign of dividend
    np.testing.assert_allclose(got[5][4:], x64[4:] / y64[4:], rtol=1e-7)
    assert np.isinf(got[5][3])
    assert got[6].tolist() == [1.0 if not (a == b) else 0.0 for a, b in zip(x, y)]  # une is true on NaN
    assert got[7].tolist() == [1.0 if a < b else 0.0 for a, b in zip(x, y)]  # olt is false on NaN


@tilec.jit
def convert_kernel(f_ptr, i8_ptr, u32_ptr, to_i32_ptr, to_u8_ptr, to_i8_ptr, to_f32_ptr, bits_ptr, n,
                   BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    f = tl.load(f_ptr + offs, mask=mask)
    i8 = tl.load(i8_ptr + offs, mask=mask)
    u32 = tl.load(u32_ptr + offs, mask=mask)
    tl.store(to_i32_ptr + offs, f.to(tl.int32), mask=mask)
    tl.store(to_u8_ptr + offs, f.to(tl.uint8), mask=mask)
    tl.store(to_i8_ptr + offs, (u32 + i8.to(tl.int32).to(tl.uint32)).to(tl.int8), mask=mask)
    tl.store(to_f32_ptr + offs, u32.to(tl.float32), mask=mask)
    tl.store(bits_ptr + offs, f.to(tl.int32, bitcast=True), mask=mask)


def test_conversions_saturate_wrap_and_reinterpret(rng):
    f = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, -2.7, 2.7, 300.0, -0.5, 255.9, 2.0**31, -2.0**31],
                 dtype=np.float32)
    n = len(f)
    i8 = rng.integers(-128, 127, n).astype(np.int8)
    u32 = rng.integers(0, 2**32 - 1, n, endpoint=True).astype(np.uint32)
    u32[0] = 2**32 - 1
    outs = [np.full(n, 3, dtype=t) for t in (np.int32, np.uint8, np.int8, np.float32, np.int32)]
    convert_kernel[(1,)](f, i8, u32, *outs, n, BLOCK=16)
    imax, imin = 2**31 - 1, -2**31
    assert outs[0].tolist() == [0, imax, imin, imax, imin, -2, 2, 300, 0, 255, imax, imin]
    assert outs[1].tolist() == [0, 255, 0, 255, 0, 0, 2, 255, 0, 255, 255, 0]
    expected_i8 = [_wrap(int(u) + int(i), 8, True) for u, i in zip(u32, i8)]  # extsi then trunci
    assert outs[2].tolist() == expected_i8
    np.testing.assert_array_equal(outs[3], u32.astype(np.float64).astype(np.float32))
    assert outs[3][0] == 4294967296.0  # unsigned, not -1
    np.testing.assert_array_equal(outs[4], f.view(np.int32))


@tilec.jit
def math_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    results = (tl.exp(x), tl.exp2(x), tl.log(tl.abs(x)), tl.log2(tl.abs(x)), tl.sqrt(tl.abs(x)),
               tl.rsqrt(tl.abs(x)), tl.sin(x), tl.cos(x), tl.floor(x), tl.ceil(x), tl.erf(x))
    for i in tl.static_range(11):
        tl.store(out_ptr + i * n + offs, results[i], mask=mask)


# fp16 is refused, as in Triton (tests/language/test_math_dtypes.py).
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-6), (np.float64, 1e-14)])
def test_math_functions_in_element_precision(rng, dtype, rtol):
    n = 100
    x = (rng.standard_normal(n) * 3).astype(dtype)
    out = np.full(11 * n, np.nan, dtype=dtype)
    math_kernel[(2,)](x, out, n, BLOCK=64)
    v = x.astype(np.float64)
    a = np.abs(v)
    refs = [np.exp(v), np.exp2(v), np.log(a), np.log2(a), np.sqrt(a), 1 / np.sqrt(a), np.sin(v), np.cos(v),
            np.floor(v), np.ceil(v), np.array([math.erf(t) for t in v])]
    for got, ref in zip(out.reshape(11, n), refs):
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=rtol, atol=rtol)


@tilec.jit
def reduce_kernel(x_ptr, small_ptr, out_ptr, small_out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + rows, tl.sum(x, axis=1))
    tl.store(out_ptr + M + cols, tl.max(x, axis=0))
    tl.store(out_ptr + M + N + cols, tl.min(x, axis=0))
    total = tl.sum(tl.sum(x, axis=1, keep_dims=True), axis=0)  # [M, 1] -> [1]
    tl.store(out_ptr + M + 2 * N + tl.arange(0, 1), total)
    tl.store(out_ptr + M + 2 * N + 1, tl.max(tl.max(x, axis=0), axis=0))  # down to a scalar
    small = tl.load(small_ptr + cols)
    tl.store(small_out_ptr, tl.sum(small, axis=0))  # int8 accumulates in int32


def test_reductions(rng):
    M, N = 8, 32
    x = rng.standard_normal((M, N)).astype(np.float32)
    small = rng.integers(60, 127, N).astype(np.int8)  # sums far past int8's range
    out = np.full(M + 2 * N + 2, np.nan, dtype=np.float32)
    small_out = np.zeros(1, dtype=np.int32)
    reduce_kernel[(1,)](x, small, out, small_out, M=M, N=N)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out[:M], x64.sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[M:M + N], x.max(axis=0))
    np.testing.assert_array_equal(out[M + N:M + 2 * N], x.min(axis=0))
    np.testing.assert_allclose(out[M + 2 * N], x64.sum(), rtol=1e-5)
    assert out[M + 2 * N + 1] == x.max()
    assert small_out[0] == int(small.astype(np.int64).sum())


@tilec.jit
def bool_kernel(flags_ptr, x_ptr, out_flags_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    flags = tl.load(flags_ptr + offs, mask=mask)
    x = tl.load(x_ptr + offs, mask=mask)
    positive = x > 0
    tl.store(out_flags_ptr + offs, flags ^ positive, mask=mask)
    tl.store(out_ptr + offs, tl.where(flags & positive, x, -x), mask=mask)
    tl.store(out_ptr + n + offs, flags + positive, mask=mask)  # int1 arithmetic is modulo 2


def test_bool_memory_and_logic(rng):
    n = 50
    flags = rng.integers(0, 2, n).astype(bool)
    x = rng.standard_normal(n).astype(np.float32)
    out_flags = np.zeros(n, dtype=bool)
    out = np.full(2 * n, np.nan, dtype=np.float32)
    bool_kernel[(1,)](flags, x, out_flags, out, n, BLOCK=64)
    np.testing.assert_array_equal(out_flags, flags ^ (x > 0))
    np.testing.assert_array_equal(out[:n], np.where(flags & (x > 0), x, -x))
    np.testing.assert_array_equal(out[n:], (flags ^ (x > 0)).astype(np.float32))
