"""fp8 (float8e4nv = e4m3fn, float8e5 = e5m2): loads, stores and conversions on both
backends. Conversions to fp8 round to nearest even and saturate to the largest finite
value (what the sm_89+ conversion instructions do); NaN stays NaN."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

FP8 = {
    "float8e4nv": (tl.float8e4nv, ml_dtypes.float8_e4m3fn),
    "float8e5": (tl.float8e5, ml_dtypes.float8_e5m2),
}
WIDE = {"float32": (tl.float32, np.float32), "float16": (tl.float16, np.float16),
        "bfloat16": (tl.bfloat16, ml_dtypes.bfloat16), "float64": (tl.float64, np.float64)}


def _needs_fp8(backend):
    if backend == "gpu":
        import torch
        if torch.cuda.get_device_capability() < (8, 9):
            pytest.skip("fp8 conversions need sm_89 or newer")


def reference_to_fp8(x: np.ndarray, fp8) -> np.ndarray:
    """Round to nearest even, saturating finite: what cvt.rn.satfinite does."""
    big = float(ml_dtypes.finfo(fp8).max)
    wide = x.astype(np.float64)
    clipped = np.where(np.isnan(wide), wide, np.clip(wide, -big, big))
    return clipped.astype(np.float32).astype(fp8) if x.dtype != np.float64 else clipped.astype(fp8)


def special_values(n: int, fp8, src, rng) -> np.ndarray:
    """Random values across the fp8 range plus the edge cases: +-0, +-inf, NaN, values just
    above the largest finite, halfway points, subnormals."""
    big = float(ml_dtypes.finfo(fp8).max)
    tiny = float(ml_dtypes.finfo(fp8).smallest_subnormal)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, big, -big, big * 1.06, -big * 1.2, 1e30,
             tiny, -tiny, tiny / 2, tiny * 1.5, tiny * 0.49, 1.0, 1.0625, 1.125, -3.75]
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-8, 8, n))).astype(np.float64)
    x[: len(edges)] = edges
    with np.errstate(over="ignore"):  # 1e30 becomes inf in the 16-bit types
        return x.astype(src)


@tilec.jit
def to_fp8_kernel(x_ptr, y_ptr, n, DST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(DST), mask=mask)


@tilec.jit
def from_fp8_kernel(x_ptr, y_ptr, n, DST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(DST), mask=mask)


@pytest.mark.parametrize("fp8", list(FP8))
@pytest.mark.parametrize("src", list(WIDE))
def test_narrow_to_fp8(backend, fp8, src):
    _needs_fp8(backend)
    tl_fp8, np_fp8 = FP8[fp8]
    rng = np.random.default_rng(11)
    n = 1000
    x = special_values(n, np_fp8, WIDE[src][1], rng)
    out = device_array(np.full(n, np.nan, np_fp8), backend)
    to_fp8_kernel[(triton_cdiv(n, 256),)](device_array(x, backend), out, n, DST=tl_fp8, BLOCK=256)
    got = to_numpy(out).view(np.uint8)
    want = reference_to_fp8(x, np_fp8)
    nan = np.isnan(want.astype(np.float32))
    assert np.isnan(to_numpy(out).astype(np.float32)[nan]).all()
    mismatch = np.nonzero(got[~nan] != want.view(np.uint8)[~nan])[0]
    assert mismatch.size == 0, (x[~nan][mismatch[:5]], got[~nan][mismatch[:5]], want.view(np.uint8)[~nan][mismatch[:5]])


@pytest.mark.parametrize("fp8", list(FP8))
@pytest.mark.parametrize("dst", list(WIDE))
def test_widen_from_fp8(backend, fp8, dst):
    """Every one of the 256 bit patterns, widened exactly."""
    _needs_fp8(backend)
    tl_fp8, np_fp8 = FP8[fp8]
    bits = np.random.default_rng(3).permutation(256).astype(np.uint8)
    x = bits.view(np_fp8)
    np_dst = WIDE[dst][1]
    out = device_array(np.full(256, 7, np_dst), backend)
    from_fp8_kernel[(2,)](device_array(x, backend), out, 256, DST=WIDE[dst][0], BLOCK=128)
    got = to_numpy(out).astype(np.float64)
    want = x.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


@tilec.jit
def scale_kernel(x_ptr, s_ptr, y_ptr, amax_ptr, n, FP8: tl.constexpr, BLOCK: tl.constexpr):
    """Per-block scaled quantisation, the way fp8 kernels are written: compute in fp32, cast
    at the edges; a where() and a reshape on fp8 values on the way."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x))
    scale = tl.load(s_ptr) / tl.maximum(amax, 1e-12)
    q = (x * scale).to(FP8)
    q = tl.where(offs % 3 == 0, q, tl.reshape(tl.reshape(q, (BLOCK // 2, 2)), (BLOCK,)))
    tl.store(y_ptr + offs, q, mask=mask)
    tl.store(amax_ptr + pid, amax)


@pytest.mark.parametrize("fp8", list(FP8))
def test_scaled_quantisation(backend, fp8):
    _needs_fp8(backend)
    tl_fp8, np_fp8 = FP8[fp8]
    rng = np.random.default_rng(5)
    n, block = 1000, 128
    x = (rng.standard_normal(n) * 3).astype(np.float16)
    fmax = np.array([float(ml_dtypes.finfo(np_fp8).max)], np.float32)
    y = device_array(np.full(n, np.nan, np_fp8), backend)
    amax = device_array(np.full(8, np.nan, np.float32), backend)
    scale_kernel[(8,)](device_array(x, backend), device_array(fmax, backend), y, amax, n,
                       FP8=tl_fp8, BLOCK=block)
    xs = np.pad(x.astype(np.float32), (0, 8 * block - n)).reshape(8, block)
    want_amax = np.abs(xs).max(axis=1)
    np.testing.assert_array_equal(to_numpy(amax), want_amax)
    scaled = (xs * (fmax[0] / want_amax)[:, None]).astype(np.float32).ravel()[:n]
    want = reference_to_fp8(scaled, np_fp8)
    np.testing.assert_array_equal(to_numpy(y).view(np.uint8), want.view(np.uint8))


@tilec.jit
def fp8_add_kernel(x_ptr, y_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(y_ptr + tl.arange(0, 16), x + x)


def test_fp8_arithmetic_is_refused_clearly():
    with pytest.raises(tilec.CompilationError, match=r"(?s)x \+ x.*\^.*fp8e4nv.*\.to\(tl\.float32\)"):
        fp8_add_kernel.warmup("*fp8e4nv", "*fp8e4nv", grid=(1,))


def triton_cdiv(a, b):
    return -(-a // b)
