"""tl.dot in a masked K loop, checked against float64 NumPy products on both backends:

- fp8 (e4m3, e5m2) with BLOCK_M 16, which on sm_90 runs on fp16 mma.sync with the
  operands widened in registers after an 8-bit read from shared memory (k_width 4,
  K permuted alike in A and B), B given K-contiguous or N-contiguous;
- fp16 / bf16 results narrowed from fp32 two registers at a time and stored to rows
  an odd number of elements apart (scalar stores of each half of a pair)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilec_testing import device_array, masked_matmul_kernel as matmul_kernel, to_numpy


def _run(backend, a, b_kn, b_k_contiguous, out_dtype, c_stride, blocks, num_warps=4):
    """c [M, c_stride] (the first N columns written) = a @ b_kn, B passed as given or
    transposed in memory (K contiguous)."""
    (m, k), n = a.shape, b_kn.shape[1]
    b_mem = np.ascontiguousarray(b_kn.T) if b_k_contiguous else np.ascontiguousarray(b_kn)
    stride_bk, stride_bn = (1, k) if b_k_contiguous else (n, 1)
    poison = np.full((m, c_stride), np.nan, out_dtype)
    c = device_array(poison, backend)
    block_m, block_n, block_k = blocks
    grid = (triton_cdiv(m, block_m), triton_cdiv(n, block_n))
    matmul_kernel[grid](device_array(a, backend), device_array(b_mem, backend), c, m, n, k, k, 1, stride_bk,
                        stride_bn, c_stride, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                        num_warps=num_warps, num_stages=3)
    return to_numpy(c)


def triton_cdiv(x, y):
    return (x + y - 1) // y


def _needs(backend, capability):
    if backend == "gpu":
        import torch
        if torch.cuda.get_device_capability() < capability:
            pytest.skip(f"needs sm_{capability[0]}{capability[1]} or newer")


@pytest.mark.parametrize("fp8", [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2])
@pytest.mark.parametrize("b_k_contiguous", [True, False])
@pytest.mark.parametrize("blocks", [(16, 64, 128), (16, 32, 64)])
def test_fp8_dot_short_m(backend, fp8, b_k_contiguous, blocks):
    _needs(backend, (8, 9))
    rng = np.random.default_rng(25)
    m, n, k = 20, 72, 200  # two row tiles, a partial column tile, a masked K tail
    a = (rng.standard_normal((m, k)) * 2).astype(np.float32).astype(fp8)
    b = (rng.standard_normal((k, n)) * 2).astype(np.float32).astype(fp8)
    got = _run(backend, a, b, b_k_contiguous, np.float32, n + 3, blocks)
    wa, wb = a.astype(np.float64), b.astype(np.float64)
    want = wa @ wb
    np.testing.assert_allclose(got[:, :n], want, rtol=0, atol=1e-5 * (np.abs(wa) @ np.abs(wb)).max())
    assert np.isnan(got[:, n:]).all()


@pytest.mark.parametrize("out", [np.float16, ml_dtypes.bfloat16])
def test_narrowed_result_stored_to_odd_rows(backend, out):
    rng = np.random.default_rng(26)
    m, n, k = 70, 77, 96
    a = rng.standard_normal((m, k)).astype(out)
    b = rng.standard_normal((k, n)).astype(out)
    got = _run(backend, a, b, False, out, n, (64, 64, 32))
    want = a.astype(np.float64) @ b.astype(np.float64)
    # fp32 accumulation, then one rounding to the 16-bit type (8 or 11 significant bits).
    tolerance = 2.0 ** (-7 if out == ml_dtypes.bfloat16 else -10)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance, atol=1e-3 * np.abs(want).max())
