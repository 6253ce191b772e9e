"""tl.dot in loops the compiler software-pipelines (tilegpu-pipeline), on both backends.

num_stages 1 to 5, K a multiple of the block or not (a masked tail), K only known at run
time and possibly 0 (a loop of no iterations: the prologue's copies are all predicated
off), `tl.range(..., num_stages=)`, batched and split-K kernels, fp16 and fp32 operands.
Inputs are random, outputs poisoned with NaN before the launch, references in float64.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilec.jit
def matmul_range_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                        STAGES: tl.constexpr):
    """Row-major operands indexed by the loop variable, stages from tl.range."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=STAGES):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilec.jit
def batched_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C[z] = A[z] @ B[z], contiguous batches; the batch offset is loop-invariant."""
    z = tl.program_id(2)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + z * M * K + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + z * K * N + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + z * M * N + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilec.jit
def split_k_kernel(a_ptr, b_ptr, partial_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   SPLIT_K: tl.constexpr):
    """Program (m, n, s) sums the K blocks s, s + SPLIT_K, ...: a loop starting at a run-time
    bound with a step of SPLIT_K blocks; the partial sums are added on the host."""
    s = tl.program_id(2)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(s * BK, K, SPLIT_K * BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(partial_ptr + s * M * N + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _poisoned(shape, dtype, backend):
    return device_array(np.full(shape, np.nan, dtype=dtype), backend)


def _check(out, reference, dtype):
    tolerance = dict(rtol=2e-2, atol=2e-2) if dtype == np.float16 else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_numpy(out).astype(np.float64), reference, **tolerance)


@pytest.mark.parametrize("num_stages", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=["fp16", "fp32"])
@pytest.mark.parametrize("K", [64, 40, 0], ids=["K=64", "K=40-masked-tail", "K=0-no-iterations"])
def test_matmul_loop(backend, rng, num_stages, dtype, K):
    M, N, BM, BN, BK = 48, 40, 32, 32, 16
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = _poisoned((M, N), dtype, backend)
    grid = (tilec.cdiv(M, BM), tilec.cdiv(N, BN))
    matmul_kernel[grid](device_array(a, backend), device_array(b, backend), c, M, N, K,
                        K, 1, N, 1, N, 1, BM=BM, BN=BN, BK=BK, num_stages=num_stages)
    _check(c, a.astype(np.float64) @ b.astype(np.float64), dtype)


@pytest.mark.parametrize("stages", [1, 2, 4])
@pytest.mark.parametrize("K", [96, 50])
def test_tl_range_num_stages(backend, rng, stages, K):
    M, N, BM, BN, BK = 40, 32, 32, 32, 32
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = _poisoned((M, N), np.float32, backend)
    grid = (tilec.cdiv(M, BM), tilec.cdiv(N, BN))
    matmul_range_kernel[grid](device_array(a, backend), device_array(b, backend), c, M, N, K,
                              BM=BM, BN=BN, BK=BK, STAGES=stages)
    _check(c, a.astype(np.float64) @ b.astype(np.float64), np.float32)


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=["fp16", "fp32"])
def test_batched_matmul(backend, rng, dtype):
    Z, M, N, K, BM, BN, BK = 3, 32, 48, 80, 32, 16, 16
    a = rng.standard_normal((Z, M, K)).astype(dtype)
    b = rng.standard_normal((Z, K, N)).astype(dtype)
    c = _poisoned((Z, M, N), np.float32, backend)
    grid = (tilec.cdiv(M, BM), tilec.cdiv(N, BN), Z)
    batched_matmul_kernel[grid](device_array(a, backend), device_array(b, backend), c, M, N, K,
                                BM=BM, BN=BN, BK=BK, num_stages=3)
    _check(c, a.astype(np.float64) @ b.astype(np.float64), dtype)


@pytest.mark.parametrize("num_stages", [2, 4])
@pytest.mark.parametrize("K", [128, 72, 16])
def test_split_k(backend, rng, num_stages, K):
    M, N, BM, BN, BK, SPLIT_K = 32, 32, 32, 32, 16, 3
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    partial = _poisoned((SPLIT_K, M, N), np.float32, backend)
    grid = (tilec.cdiv(M, BM), tilec.cdiv(N, BN), SPLIT_K)
    split_k_kernel[grid](device_array(a, backend), device_array(b, backend), partial, M, N, K,
                         BM=BM, BN=BN, BK=BK, SPLIT_K=SPLIT_K, num_stages=num_stages)
    _check(to_numpy(partial).astype(np.float64).sum(axis=0), a.astype(np.float64) @ b.astype(np.float64),
           np.float16)


@tilec.jit
def fp64_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       STAGES: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float64)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=STAGES):
        a = tl.load(a_ptr + rm[:, None] * K + (k * BK + rk)[None, :])
        b = tl.load(b_ptr + (k * BK + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def test_fp64_rings_and_fma_staging_share_the_shared_memory(backend, rng):
    """Four 48 KB stages of fp64 tiles (Triton's test_simple_matmul 64x128x32): the FMA
    dot's staging shrinks to smaller K-slices so that the rings and it fit in 227 KB."""
    m, n, k = 128, 256, 256
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    c = device_array(np.full((m, n), np.nan), backend)
    fp64_matmul_kernel[(m // 64, n // 128)](device_array(a, backend), device_array(b, backend), c, m, n, k,
                                            BM=64, BN=128, BK=32, STAGES=4, num_warps=8)
    np.testing.assert_allclose(to_numpy(c), a @ b, rtol=1e-12, atol=1e-12)
    compiled = tilec.compile(fp64_matmul_kernel, signature={"a_ptr": "*fp64", "b_ptr": "*fp64", "c_ptr": "*fp64",
                                                            "M": "i32", "N": "i32", "K": "i32"},
                             constexprs={"BM": 64, "BN": 128, "BK": 32, "STAGES": 4}, num_warps=8, target="sm_90a")
    assert 4 * (64 + 128) * 32 * 8 <= compiled.metadata.shared <= 232448
