"""tl.dot with K below the tensor-core instruction's (K = 1, 2, 4, 8), on both backends.

Such dots run on CUDA cores when compiled (tilegpu-accelerate-matmul keeps them on the
FMA path), with any M and N from 1; the interpreter computes them as any other dot.
Triton's interpreter accepts them too (its test_dot has K = 4 cases).
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def small_k_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PRECISION: tl.constexpr,
                   OUT: tl.constexpr, ACC: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    if ACC:
        acc = tl.load(c_ptr + m[:, None] * N + n[None, :])
        c = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=OUT)
    else:
        c = tl.dot(a, b, input_precision=PRECISION, out_dtype=OUT)
    tl.store(c_ptr + m[:, None] * N + n[None, :], c.to(c_ptr.dtype.element_ty))


# (operand type, input_precision, accumulator type, relative tolerance of the result)
TYPES = [
    ("float16", "ieee", np.float32, 1e-6),
    ("float16", "ieee", np.float16, 2e-3),
    ("bfloat16", "ieee", np.float32, 1e-6),
    ("float32", "ieee", np.float32, 1e-6),
    ("float32", "tf32", np.float32, 3e-3),
    ("float32", "tf32x3", np.float32, 1e-5),
    ("int8", "ieee", np.int32, 0),
    ("float64", "ieee", np.float64, 1e-13),
]


def _operands(rng, dtype, m, n, k):
    if dtype == "int8":
        return rng.integers(-100, 100, (m, k)).astype(np.int8), rng.integers(-100, 100, (k, n)).astype(np.int8)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    if dtype == "bfloat16":  # bf16 values held in fp32 arrays, passed as bf16 through torch-free reinterpret
        return a.astype(np.float32), b.astype(np.float32)
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype,precision,out,rtol", TYPES)
@pytest.mark.parametrize("m,n,k", [(64, 64, 4), (16, 16, 8), (32, 8, 1), (1, 32, 2), (128, 16, 4), (2, 2, 2)])
@pytest.mark.parametrize("with_acc", [False, True])
def test_dot_with_small_k(backend, rng, dtype, precision, out, rtol, m, n, k, with_acc):
    if dtype == "bfloat16":
        pytest.skip("bf16 operands are covered by test_dot_with_small_k_bf16")
    a, b = _operands(rng, dtype, m, n, k)
    if with_acc:
        start = rng.integers(-1000, 1000, (m, n)) if out == np.int32 else rng.standard_normal((m, n))
        start = start.astype(out)
    else:
        start = np.full((m, n), -77, out)  # poison: the dot without acc must overwrite it
    c = device_array(start.copy(), backend)
    small_k_kernel[(1,)](device_array(a, backend), device_array(b, backend), c, M=m, N=n, K=k, PRECISION=precision,
                         OUT=getattr(tl, np.dtype(out).name), ACC=with_acc)
    ref = a.astype(np.float64) @ b.astype(np.float64) + (start.astype(np.float64) if with_acc else 0)
    got = to_numpy(c).astype(np.float64)
    if rtol == 0:
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * np.abs(ref).max())


def test_dot_with_small_k_bf16(backend, rng):
    torch = pytest.importorskip("torch")
    m, n, k = 32, 16, 4
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float32)).to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float32)).to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), dtype=torch.float32)
    if backend == "gpu":
        a, b, c = a.cuda(), b.cuda(), c.cuda()
    small_k_kernel[(1,)](a, b, c, M=m, N=n, K=k, PRECISION="ieee", OUT=tl.float32, ACC=False)
    ref = a.double().cpu().numpy() @ b.double().cpu().numpy()
    np.testing.assert_allclose(c.cpu().numpy(), ref, rtol=1e-6, atol=1e-6)


@tilec.jit
def batched_small_k_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                           K: tl.constexpr):
    bb = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + bb * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + bb * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + bb * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], c)


def test_batched_dot_with_small_k(backend, rng):
    batch, m, n, k = 2, 16, 32, 2
    a = rng.standard_normal((batch, m, k)).astype(np.float16)
    b = rng.standard_normal((batch, k, n)).astype(np.float16)
    c = device_array(np.full((batch, m, n), np.nan, np.float32), backend)
    batched_small_k_kernel[(1,)](device_array(a, backend), device_array(b, backend), c, B=batch, M=m, N=n, K=k)
    np.testing.assert_allclose(to_numpy(c), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-6, atol=1e-6)
