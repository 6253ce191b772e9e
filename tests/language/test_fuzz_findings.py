"""Miscompiles the differential fuzzer (tests/fuzz) found on the GPU, each cut down to
the language feature at fault and checked on both backends. The interpreter agreed
with the fuzzer's reference every time; the compiled kernels did not."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def abs_mod_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, tl.abs(x) % 3, mask=offs < n)


def test_abs_of_the_most_negative_int16_wraps(backend, rng):
    """|-32768| is -32768 in int16 (wrap-around), so `abs(x) % 3` is -2 there; ptxas read
    `abs.s16`'s result as +32768 and gave -1."""
    x = rng.integers(-32768, 32768, 256).astype(np.int16)
    x[::7] = -32768
    y = device_array(np.full(256, 99, np.int16), backend)
    abs_mod_kernel[(1,)](device_array(x, backend), y, 250, BLOCK=256)
    wide = np.abs(x.astype(np.int64))
    expected = np.where(x == -32768, -2, np.fmod(wide, 3)).astype(np.int16)
    expected[250:] = 99
    np.testing.assert_array_equal(to_numpy(y), expected)


@tilec.jit
def through_double_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr, DST: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float64).to(DST))


@pytest.mark.parametrize("dst,np_dtype", [(tl.int32, np.int32), (tl.int16, np.int16), (tl.uint8, np.uint8)])
def test_an_integer_widened_to_double_converts_back_saturating(backend, rng, dst, np_dtype):
    """int64 -> fp64 -> a narrower integer saturates at its range; LLVM folded the two
    conversions into a truncation of the int64 (out-of-range fptosi is poison to it)."""
    x = rng.integers(-2**62, 2**62, 256, dtype=np.int64)
    x[:64] = rng.integers(-300, 300, 64)
    y = device_array(np.zeros(256, np_dtype), backend)
    through_double_kernel[(1,)](device_array(x, backend), y, BLOCK=256, DST=dst)
    info = np.iinfo(np_dtype)
    expected = np.clip(x.astype(np.float64), info.min, info.max).astype(np_dtype)
    np.testing.assert_array_equal(to_numpy(y), expected)


@tilec.jit
def float_to_unsigned_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x.to(tl.uint16).to(tl.float32) + (x.to(tl.uint16) >= 1))


def test_a_negative_float_to_unsigned_is_zero_before_further_use(backend, rng):
    x = (rng.standard_normal(128) * 100).astype(np.float32)
    x[::5] = -2.0
    y = device_array(np.full(128, np.nan, np.float32), backend)
    float_to_unsigned_kernel[(1,)](device_array(x, backend), y, BLOCK=128)
    u = np.clip(np.trunc(x), 0, 65535)
    np.testing.assert_array_equal(to_numpy(y), (u + (u >= 1)).astype(np.float32))


@tilec.jit
def store_where_nonzero_kernel(y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs, mask=offs.to(tl.int1))


def test_a_mask_that_changes_inside_a_vector(backend):
    """`offs.to(tl.int1)` (offs != 0) was taken as constant over aligned runs, so the
    first element's predicate guarded a whole 16-byte store."""
    y = device_array(np.full(512, -7, np.int32), backend)
    store_where_nonzero_kernel[(2,)](y, BLOCK=256)
    expected = np.arange(512, dtype=np.int32)
    expected[0] = -7
    np.testing.assert_array_equal(to_numpy(y), expected)


@tilec.jit
def copy_rows_kernel(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offsets = (rows * stride)[:, None] + tl.arange(0, BLOCK)[None, :]
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets) + 1)


@pytest.mark.parametrize("stride", [33, 40])
def test_rows_of_an_odd_stride_are_not_vector_aligned(backend, rng, stride):
    """Only the first row of `rows * stride` is 16-byte aligned for an unknown stride; the
    GPU faulted (misaligned address) on 16-byte accesses to the others."""
    x = rng.standard_normal(32 * stride + 32).astype(np.float16)
    y = device_array(np.zeros_like(x), backend)
    copy_rows_kernel[(1,)](device_array(x, backend), y, stride, BLOCK=32)
    index = (np.arange(32)[:, None] * stride + np.arange(32)[None, :]).ravel()
    expected = np.zeros_like(x)
    expected[index] = x[index] + np.float16(1)
    np.testing.assert_array_equal(to_numpy(y), expected)
