"""Scans over blocked tiles as the corpus writes them, on both backends: a running
cumsum down the rows of a strip of columns (a thread holds runs of one element along the
axis, lanes and warps follow, the tile repeats), a reversed cumsum along rows in blocks,
and a first-order linear recurrence through a tuple-combine associative scan. Random
inputs, outputs poisoned with NaN, float64 references."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import cumsum_cols_kernel, cumsum_rows_kernel, device_array, to_numpy


@tilec.jit
def _affine(a_first, b_first, a_second, b_second):
    return a_first * a_second, b_first * a_second + b_second


@tilec.jit
def recurrence_kernel(a_ptr, x_ptr, h_ptr, R, T, BLOCK_R: tl.constexpr, BLOCK_T: tl.constexpr,
                      REVERSE: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_T)
    mask = (rows[:, None] < R) & (cols[None, :] < T)
    offsets = rows[:, None] * T + cols[None, :]
    a = tl.load(a_ptr + offsets, mask=mask, other=1.0)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    a_prefix, b_prefix = tl.associative_scan((a, x), axis=1, combine_fn=_affine, reverse=REVERSE)
    tl.store(h_ptr + offsets, b_prefix + 0 * a_prefix, mask=mask)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("block_m,block_n", [(64, 32), (16, 64), (128, 8)])
def test_cumsum_down_columns(backend, rng, block_m, block_n, num_warps):
    m, n = 2 * block_m + 5, block_n + 3
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = device_array(np.full((m, n), np.nan, np.float32), backend)
    cumsum_cols_kernel[(tilec.cdiv(n, block_n),)](device_array(x, backend), out, m, n, n,
                                                  BLOCK_M=block_m, BLOCK_N=block_n, num_warps=num_warps)
    np.testing.assert_allclose(to_numpy(out), np.cumsum(x.astype(np.float64), axis=0), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("block,num_warps", [(4096, 8), (1024, 4), (256, 2)])
def test_cumsum_along_rows_in_blocks(backend, rng, reverse, block, num_warps):
    m, n = 3, 2 * block + 7
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = device_array(np.full((m, n), np.nan, np.float32), backend)
    cumsum_rows_kernel[(m,)](device_array(x, backend), out, n, n, REVERSE=reverse, BLOCK_N=block,
                             num_warps=num_warps)
    ref = x.astype(np.float64)
    ref = np.flip(np.cumsum(np.flip(ref, 1), 1), 1) if reverse else np.cumsum(ref, 1)
    np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("block_r,block_t,num_warps", [(4, 512, 4), (2, 128, 1), (8, 64, 8)])
def test_linear_recurrence_scan(backend, rng, reverse, block_r, block_t, num_warps):
    r, t = 2 * block_r + 1, block_t - 3
    a = rng.uniform(0.5, 0.99, (r, t)).astype(np.float32)
    x = rng.standard_normal((r, t)).astype(np.float32)
    out = device_array(np.full((r, t), np.nan, np.float32), backend)
    recurrence_kernel[(tilec.cdiv(r, block_r),)](device_array(a, backend), device_array(x, backend), out, r, t,
                                                 BLOCK_R=block_r, BLOCK_T=block_t, REVERSE=reverse,
                                                 num_warps=num_warps)
    ref = np.empty((r, t))
    h = np.zeros(r)
    steps = range(t - 1, -1, -1) if reverse else range(t)
    for s in steps:
        h = a[:, s].astype(np.float64) * h + x[:, s]
        ref[:, s] = h
    np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-4, atol=1e-4)
