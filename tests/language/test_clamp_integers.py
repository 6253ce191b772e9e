"""tl.clamp of integers (Triton 3.9 accepts them): minimum(maximum(x, lo), hi), compared as
signed or unsigned by the type, on both backends."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

TL = {np.int8: tl.int8, np.int16: tl.int16, np.int32: tl.int32, np.int64: tl.int64, np.uint8: tl.uint8,
      np.uint32: tl.uint32, np.uint64: tl.uint64}


@tilec.jit
def clamp_kernel(x_ptr, lo_ptr, hi_ptr, out_ptr, scalar_out_ptr, N: tl.constexpr, DT: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    z = tl.clamp(x, tl.load(lo_ptr + i), tl.load(hi_ptr + i))
    tl.static_assert(z.dtype == DT)
    tl.store(out_ptr + i, z)
    # Bounds given as Python ints adapt to x's type, as in arithmetic.
    s = tl.clamp(x, 3, 100)
    tl.static_assert(s.dtype == DT)
    tl.store(scalar_out_ptr + i, s)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64])
def test_integer_clamp(backend, rng, dtype):
    n = 128
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    x[:4] = [info.min, info.max, lo[2], hi[3]]  # the extremes and the bounds themselves
    lo[5] = hi[5]                               # an empty range but one value
    out = device_array(np.full(n, 77, dtype), backend)
    scalar_out = device_array(np.full(n, 77, dtype), backend)
    clamp_kernel[(1,)](device_array(x, backend), device_array(lo, backend), device_array(hi, backend), out,
                       scalar_out, N=n, DT=TL[dtype])
    np.testing.assert_array_equal(to_numpy(out), np.minimum(np.maximum(x, lo), hi))
    np.testing.assert_array_equal(to_numpy(scalar_out), np.minimum(np.maximum(x, dtype(3)), dtype(100)))


@tilec.jit
def clamp_bool_kernel(x_ptr, out_ptr):
    i = tl.arange(0, 16)
    x = tl.load(x_ptr + i) != 0
    tl.store(out_ptr + i, tl.clamp(x, False, True))


def test_clamp_refuses_bools(backend):
    x = np.arange(16, dtype=np.int32)
    with pytest.raises(tilec.CompilationError, match=r"clamp needs a number \(a float or an integer\), got int1"):
        clamp_bool_kernel[(1,)](device_array(x, backend), device_array(np.zeros(16, np.int32), backend))
