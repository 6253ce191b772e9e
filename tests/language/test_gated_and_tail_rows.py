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
from tilec_testing import device_array, layer_norm_fwd_kernel, swiglu_bwd_kernel, to_numpy


@pytest.mark.parametrize("n_cols,block,warps", [(1000, 1024, 4), (2048, 2048, 8), (37, 64, 1)])
def test_swiglu_backward(backend, rng, n_cols, block, warps):
    rows = 3
    dc, a, b = (2 * rng.standard_normal((rows, n_cols))).astype(np.float16), \
        (2 * rng.standard_normal((rows, n_cols))).astype(np.float16), \
        (2 * rng.standard_normal((rows, n_cols))).astype(np.float16)
    poison = np.full((rows, n_cols), 7.0, np.float16)
    dda, ddb = device_array(poison, backend), device_array(poison, backend)
    swiglu_bwd_kernel[(rows,)](device_array(dc, backend), device_array(a, backend), device_array(b, backend), dda, ddb,
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
    layer_norm_fwd_kernel[(rows,)](device_array(x, backend), y, device_array(w, backend), device_array(b, backend),
                            mean, rstd, n, n, 1e-5, BLOCK_N=block, num_warps=4)
    x64 = x.astype(np.float64)
    want_mean = x64.mean(axis=1)
    want_rstd = 1 / np.sqrt(x64.var(axis=1) + 1e-5)
    want_y = (x64 - want_mean[:, None]) * want_rstd[:, None] * w.astype(np.float64) + b.astype(np.float64)
    tol = 4e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(to_numpy(mean), want_mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(rstd), want_rstd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(y).astype(np.float64), want_y, rtol=tol, atol=tol)
