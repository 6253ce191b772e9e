"""fp8 (e4m3 / e5m2) values widened to fp16, bf16, fp32 and fp64, checked bit for bit
against ml_dtypes on both backends. Compiled, the conversions run two registers at a time
(one cvt.rn.f16x2 per pair, see fp8.py): every code of each format is tested, in both
halves of a pair (an odd count too, so the last pair is partial and masked), and an fp8
dot with a single row (a decode step, M = 1) whose operands are widened that way in the
mma.sync fragments."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

FP8 = [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]


def _needs(backend, capability):
    if backend == "gpu":
        import torch
        if torch.cuda.get_device_capability() < capability:
            pytest.skip(f"needs sm_{capability[0]}{capability[1]} or newer")


@tilec.jit
def widen_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x.to(y_ptr.dtype.element_ty), mask=offs < n)


@pytest.mark.parametrize("fp8", FP8)
@pytest.mark.parametrize("out", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_every_fp8_code_widens_exactly(backend, fp8, out):
    _needs(backend, (8, 9))
    rng = np.random.default_rng(31)
    codes = np.arange(256, dtype=np.uint8)
    # Each code at an even and an odd position (low and high half of a pair), shuffled,
    # and an odd total so that the last pair is cut by the mask.
    bits = np.concatenate([codes, rng.permutation(codes), codes[1:], rng.integers(0, 256, 97, dtype=np.uint8)])
    x = bits.view(fp8)
    n = x.size
    y = device_array(np.full(n + 5, np.nan, out), backend)
    widen_kernel[(triton_cdiv(n, 256),)](device_array(x, backend), y, n, BLOCK=256)
    got = to_numpy(y)
    want = x.astype(np.float64).astype(out)  # exact in every one of these types
    nan = np.isnan(want.astype(np.float64))
    assert np.isnan(got[:n][nan].astype(np.float64)).all()
    np.testing.assert_array_equal(got[:n][~nan], want[~nan])
    # the signs of zeros too
    np.testing.assert_array_equal(np.signbit(got[:n][~nan].astype(np.float64)), np.signbit(want[~nan].astype(np.float64)))
    assert np.isnan(got[n:].astype(np.float64)).all()


def triton_cdiv(x, y):
    return (x + y - 1) // y


@tilec.jit
def gemv_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_bn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * K + (offs_k[None, :] + k),
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptr + (offs_k[:, None] + k) + offs_n[None, :] * stride_bn,
                    mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@pytest.mark.parametrize("fp8", FP8)
def test_fp8_dot_of_one_row(backend, fp8):
    _needs(backend, (8, 9))
    rng = np.random.default_rng(32)
    m, n, k = 1, 100, 300  # a partial column tile and a masked K tail
    a = (rng.standard_normal((m, k)) * 3).astype(np.float32).astype(fp8)
    b_nk = (rng.standard_normal((n, k)) * 3).astype(np.float32).astype(fp8)  # K contiguous, as Triton's fp8 tutorial
    c = device_array(np.full((m, n), np.nan, np.float32), backend)
    gemv_kernel[(triton_cdiv(n, 64),)](device_array(a, backend), device_array(b_nk, backend), c, m, n, k, k,
                                      BLOCK_M=16, BLOCK_N=64, BLOCK_K=128, num_warps=4, num_stages=3)
    wa, wb = a.astype(np.float64), b_nk.astype(np.float64).T
    want = wa @ wb
    np.testing.assert_allclose(to_numpy(c), want, rtol=0, atol=1e-5 * (np.abs(wa) @ np.abs(wb)).max())
