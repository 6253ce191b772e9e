"""Row kernels whose compiled code changed shape for speed, checked on both backends:

- a SwiGLU backward (two outputs from one chain of elementwise ops over three loads);
  tilegpu-order-pure-ops computes such chains element by element;
- a LayerNorm forward over rows whose length (1000) is not a multiple of 16, so the
  tail mask may change at any element: tilegpu-coalesce then gives the masked loads one
  element per thread, like the row itself, and the weight and bias need no conversion.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def swiglu_bwd(DC, A, B, DA, DB, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dc = tl.load(DC + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(A + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    sig = tl.sigmoid(a)
    silu = a * sig
    db = dc * silu
    da = dc * b * (sig + silu * (1.0 - sig))
    tl.store(DA + row * stride + cols, da.to(DA.dtype.element_ty), mask=mask)
    tl.store(DB + row * stride + cols, db.to(DB.dtype.element_ty), mask=mask)


@tilec.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row.to(tl.int64) * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row.to(tl.int64) * stride + cols, (diff * rstd * w + b).to(Y.dtype.element_ty), mask=mask)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)


@pytest.mark.parametrize("n_cols,block,warps", [(1000, 1024, 4), (2048, 2048, 8), (37, 64, 1)])
def test_swiglu_backward(backend, rng, n_cols, block, warps):
    rows = 3
    dc, a, b = (2 * rng.standard_normal((rows, n_cols))).astype(np.float16), \
        (2 * rng.standard_normal((rows, n_cols))).astype(np.float16), \
        (2 * rng.standard_normal((rows, n_cols))).astype(np.float16)
    poison = np.full((rows, n_cols), 7.0, np.float16)
    dda, ddb = device_array(poison, backend), device_array(poison, backend)
    swiglu_bwd[(rows,)](device_array(dc, backend), device_array(a, backend), device_array(b, backend), dda, ddb,
                        n_cols, n_cols, BLOCK=block, num_warps=warps)
    a64, b64, dc64 = a.astype(np.float64), b.astype(np.float64), dc.astype(np.float64)
    sig = 1 / (1 + np.exp(-a64))
    want_db = dc64 * a64 * sig
    want_da = dc64 * b64 * sig * (1 + a64 * (1 - sig))
    np.testing.assert_allclose(to_numpy(ddb).astype(np.float64), want_db, rtol=4e-3, atol=4e-3)
    np.testing.assert_allclose(to_numpy(dda).astype(np.float64), want_da, rtol=4e-3, atol=4e-3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n", [1000, 1024, 999])
def test_layer_norm_with_a_tail(backend, rng, dtype, n):
    rows, block = 5, 1024
    x = rng.standard_normal((rows, n)).astype(dtype)
    w = (1 + 0.1 * rng.standard_normal(n)).astype(dtype)
    b = (0.1 * rng.standard_normal(n)).astype(dtype)
    y = device_array(np.full((rows, n), 7.0, dtype), backend)
    mean = device_array(np.full(rows, 7.0, np.float32), backend)
    rstd = device_array(np.full(rows, 7.0, np.float32), backend)
    layer_norm_fwd[(rows,)](device_array(x, backend), y, device_array(w, backend), device_array(b, backend),
                            mean, rstd, n, n, 1e-5, BLOCK_N=block, num_warps=4)
    x64 = x.astype(np.float64)
    want_mean = x64.mean(axis=1)
    want_rstd = 1 / np.sqrt(x64.var(axis=1) + 1e-5)
    want_y = (x64 - want_mean[:, None]) * want_rstd[:, None] * w.astype(np.float64) + b.astype(np.float64)
    tol = 4e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(to_numpy(mean), want_mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(rstd), want_rstd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(y).astype(np.float64), want_y, rtol=tol, atol=tol)
