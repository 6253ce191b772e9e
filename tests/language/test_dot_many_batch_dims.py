"""tl.dot and tl.trans over several batch dimensions (as Triton since 3.6): tl.dot of
[..., M, K] and [..., K, N] multiplies each matrix of the batch, tl.trans(x) without dims
swaps the last two dimensions of any tensor of rank 2 or more. On both backends (compiled,
the batch dimensions are merged into one and the 3-D dot is reused)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def _offsets(B0: tl.constexpr, B1: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    """Row-major offsets of a [B0, B1, R, C] block."""
    b0 = tl.arange(0, B0)[:, None, None, None]
    b1 = tl.arange(0, B1)[None, :, None, None]
    r = tl.arange(0, R)[None, None, :, None]
    c = tl.arange(0, C)[None, None, None, :]
    return ((b0 * B1 + b1) * R + r) * C + c


@tilec.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, out_ptr, B0: tl.constexpr, B1: tl.constexpr, M: tl.constexpr,
                       N: tl.constexpr, K: tl.constexpr, TRANS_B: tl.constexpr):
    a = tl.load(a_ptr + _offsets(B0, B1, M, K))
    if TRANS_B:  # b stored as [B0, B1, N, K]
        b = tl.trans(tl.load(b_ptr + _offsets(B0, B1, N, K)))
    else:
        b = tl.load(b_ptr + _offsets(B0, B1, K, N))
    acc = tl.load(c_ptr + _offsets(B0, B1, M, N))
    d = tl.dot(a, b, acc=acc)
    tl.static_assert(d.shape == [B0, B1, M, N])
    tl.store(out_ptr + _offsets(B0, B1, M, N), d)


@pytest.mark.parametrize("b0,b1,m,n,k", [(2, 2, 16, 16, 16), (2, 4, 32, 16, 32), (4, 1, 16, 32, 16)])
@pytest.mark.parametrize("trans_b", [False, True])
def test_dot_with_two_batch_dimensions(backend, rng, b0, b1, m, n, k, trans_b):
    a = rng.standard_normal((b0, b1, m, k)).astype(np.float16)
    b = rng.standard_normal((b0, b1, k, n)).astype(np.float16)
    c = rng.standard_normal((b0, b1, m, n)).astype(np.float32)
    stored_b = np.ascontiguousarray(np.swapaxes(b, -1, -2)) if trans_b else b
    out = device_array(np.full((b0, b1, m, n), np.nan, np.float32), backend)
    batched_dot_kernel[(1,)](device_array(a, backend), device_array(stored_b, backend), device_array(c, backend), out,
                             B0=b0, B1=b1, M=m, N=n, K=k, TRANS_B=trans_b)
    want = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    # fp16 products are exact in fp32; the sums are rounded in fp32 in some order.
    bound = k * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + np.abs(c))
    assert np.all(np.abs(to_numpy(out) - want) <= bound + 1e-30)


@tilec.jit
def rank5_dot_kernel(a_ptr, b_ptr, out_ptr):
    i2, i16 = tl.arange(0, 2), tl.arange(0, 16)
    offs = (i2[:, None, None, None, None] * 4 + i2[None, :, None, None, None] * 2
            + i2[None, None, :, None, None]) * 256 + i16[None, None, None, :, None] * 16 + i16[None, None, None, None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, tl.dot(a, b, input_precision="ieee"))


def test_dot_with_three_batch_dimensions(backend, rng):
    a = rng.standard_normal((2, 2, 2, 16, 16)).astype(np.float32)
    b = rng.standard_normal((2, 2, 2, 16, 16)).astype(np.float32)
    out = device_array(np.full(a.shape, np.nan, np.float32), backend)
    rank5_dot_kernel[(1,)](device_array(a, backend), device_array(b, backend), out)
    np.testing.assert_allclose(to_numpy(out), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


@tilec.jit
def trans_kernel(x_ptr, out_ptr, B0: tl.constexpr, B1: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    x = tl.load(x_ptr + _offsets(B0, B1, R, C))
    t = x.trans()                                   # [B0, B1, C, R]
    tl.static_assert(t.shape == [B0, B1, C, R])
    tl.store(out_ptr + _offsets(B0, B1, C, R), t)
    p = tl.permute(x, 3, 1, 0, 2)                   # [C, B1, B0, R]
    c = tl.arange(0, C)[:, None, None, None]
    b1 = tl.arange(0, B1)[None, :, None, None]
    b0 = tl.arange(0, B0)[None, None, :, None]
    r = tl.arange(0, R)[None, None, None, :]
    tl.store(out_ptr + B0 * B1 * R * C + ((c * B1 + b1) * B0 + b0) * R + r, p)


def test_trans_and_permute_of_rank_4(backend, rng):
    x = rng.integers(-2**31, 2**31 - 1, (2, 4, 8, 16)).astype(np.int32)
    out = device_array(np.full(2 * x.size, 7, np.int32), backend)
    trans_kernel[(1,)](device_array(x, backend), out, B0=2, B1=4, R=8, C=16)
    got = to_numpy(out)
    np.testing.assert_array_equal(got[:x.size].reshape(2, 4, 16, 8), np.swapaxes(x, -1, -2))
    np.testing.assert_array_equal(got[x.size:].reshape(16, 4, 2, 8), x.transpose(3, 1, 0, 2))


@tilec.jit
def bad_dot_kernel(out_ptr, KIND: tl.constexpr):
    a = tl.zeros((2, 2, 16, 16), tl.float16)
    if KIND == "batch":
        b = tl.zeros((2, 4, 16, 16), tl.float16)
        c = tl.dot(a, b)
    elif KIND == "acc":
        c = tl.dot(a, a, acc=tl.zeros((4, 16, 16), tl.float32))
    else:
        c = tl.dot(a, tl.zeros((2, 16, 16), tl.float16))
    tl.store(out_ptr + tl.arange(0, 1), tl.sum(tl.ravel(c)))


@pytest.mark.parametrize("kind,message", [
    ("batch", r"dot shapes do not match: \[2, 2, 16, 16\] @ \[2, 4, 16, 16\]"),
    ("acc", r"dot accumulator has shape \[4, 16, 16\]; expected \[2, 2, 16, 16\]"),
    ("rank", r"dot needs two tensors of one rank, 2 or more .* got shapes \[2, 2, 16, 16\] and \[2, 16, 16\]"),
])
def test_batched_dot_refuses_mismatched_shapes(backend, kind, message):
    with pytest.raises(tilec.CompilationError, match=message):
        bad_dot_kernel[(1,)](device_array(np.zeros(1, np.float32), backend), KIND=kind)
