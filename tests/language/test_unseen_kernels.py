"""Realistic Triton kernels not covered elsewhere, with only the imports swapped.

Written from Triton 3.x idioms people use: seeded dropout, RMSNorm, rotary embeddings,
GELU/SwiGLU, cross-entropy with an online logsumexp, fused add + LayerNorm, softmax
over axis 0, argmax over a vocabulary, int8/fp8 quantisation, embedding and paged-KV
gathers, block-pointer and tensor-descriptor matmuls, flash attention, the autotuned
matmul tutorial with hints, persistent and split-K kernels, scans and reductions with
user combine functions, histogram/gather/sort/topk, atomics, 3-D grids, while loops,
nested helpers returning tuples, static_range, dtype promotion, bitcasts, libdevice.

Inputs are random, outputs poisoned before the launch, references in float64 NumPy
(or exact integer arithmetic). Under the interpreter backend the `backend` fixture also
compiles every launch to a cubin; some launches ask for num_warps=8.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import tilec as triton
import tilec.language as tl
from tilec.language.extra import libdevice
from tilec_testing import device_array, to_numpy

import philox_reference as philox


def _poison(shape, dtype, backend, value=np.nan):
    return device_array(np.full(shape, value, dtype), backend)


# ---------------------------------------------------------------------------- dropout


@triton.jit
def _seeded_dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def test_low_memory_dropout(backend, rng):
    n, p, seed = 1000, 0.3, 123
    x = rng.standard_normal(n).astype(np.float32)
    X = device_array(x, backend)
    outs = []
    for _ in range(2):
        out = _poison(n, np.float32, backend)
        _seeded_dropout[(triton.cdiv(n, 256),)](X, out, n, p, seed, BLOCK_SIZE=256)
        outs.append(to_numpy(out))
    keep = philox.uniform(philox.randint4x(seed, np.arange(n))[0]) > np.float32(p)
    assert 0.6 < keep.mean() < 0.8
    np.testing.assert_allclose(outs[0], np.where(keep, x.astype(np.float64) / (1 - p), 0.0), rtol=1e-6)
    np.testing.assert_array_equal(outs[0], outs[1])  # same seed, same mask
    other = _poison(n, np.float32, backend)
    _seeded_dropout[(triton.cdiv(n, 256),)](X, other, n, p, seed + 1, BLOCK_SIZE=256)
    assert ((to_numpy(other) == 0) != (outs[0] == 0)).any()


# ---------------------------------------------------------------------------- RMSNorm


@triton.jit
def _rmsnorm_fwd(X, Y, W, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    _sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _sq += x * x
    rstd = tl.rsqrt(tl.sum(_sq, axis=0) / N + eps)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _rmsnorm_bwd(DY, X, W, RSTD, DX, DW_PART, M, N, ROWS_PER_PROG: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    row_start = pid * ROWS_PER_PROG
    row_end = tl.minimum(row_start + ROWS_PER_PROG, M)
    for row in range(row_start, row_end):
        x = tl.load(X + row * N + cols, mask=mask, other=0.0)
        dy = tl.load(DY + row * N + cols, mask=mask, other=0.0)
        rstd = tl.load(RSTD + row)
        xhat = x * rstd
        wdy = w * dy
        c = tl.sum(xhat * wdy, axis=0) / N
        dx = (wdy - xhat * c) * rstd
        tl.store(DX + row * N + cols, dx, mask=mask)
        dw += dy * xhat
    tl.store(DW_PART + pid * N + cols, dw, mask=mask)


def test_rmsnorm_forward_fp16(backend, rng):
    M, N = 37, 300
    x = rng.standard_normal((M, N)).astype(np.float16)
    w = rng.standard_normal(N).astype(np.float16)
    y = _poison((M, N), np.float16, backend)
    rstd = _poison(M, np.float32, backend)
    _rmsnorm_fwd[(M,)](device_array(x, backend), y, device_array(w, backend), rstd, N, N, 1e-6, BLOCK_SIZE=128)
    xd = x.astype(np.float64)
    r = 1 / np.sqrt((xd ** 2).mean(1) + 1e-6)
    np.testing.assert_allclose(to_numpy(rstd), r, rtol=1e-4)
    np.testing.assert_allclose(to_numpy(y).astype(np.float64), xd * r[:, None] * w, rtol=5e-3, atol=5e-3)


def test_rmsnorm_backward_partial_dw(backend, rng):
    M, N, R = 33, 100, 8
    x = rng.standard_normal((M, N)).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    dy = rng.standard_normal((M, N)).astype(np.float32)
    xd = x.astype(np.float64)
    rstd = (1 / np.sqrt((xd ** 2).mean(1) + 1e-6)).astype(np.float32)
    P = triton.cdiv(M, R)
    dx = _poison((M, N), np.float32, backend)
    dwp = _poison((P, N), np.float32, backend)
    _rmsnorm_bwd[(P,)](device_array(dy, backend), device_array(x, backend), device_array(w, backend),
                       device_array(rstd, backend), dx, dwp, M, N, ROWS_PER_PROG=R, BLOCK_N=128, num_warps=8)
    r = rstd.astype(np.float64)[:, None]
    xhat = xd * r
    wdy = w * dy.astype(np.float64)
    ref_dx = (wdy - xhat * (xhat * wdy).mean(1, keepdims=True)) * r
    np.testing.assert_allclose(to_numpy(dx), ref_dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_numpy(dwp).sum(0), (dy * xhat).sum(0), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------- rotary embeddings


@triton.jit
def _rope_halves(X, COS, SIN, OUT, seq_len, n_heads, stride_s, stride_h, HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr):
    s = tl.program_id(0)
    HALF: tl.constexpr = HEAD_DIM // 2
    h = tl.arange(0, BLOCK_H)
    d = tl.arange(0, HALF)
    hmask = h[:, None] < n_heads
    base = X + s * stride_s + h[:, None] * stride_h
    x1 = tl.load(base + d[None, :], mask=hmask, other=0.0).to(tl.float32)
    x2 = tl.load(base + HALF + d[None, :], mask=hmask, other=0.0).to(tl.float32)
    cos = tl.load(COS + s * HALF + d)[None, :]
    sin = tl.load(SIN + s * HALF + d)[None, :]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    obase = OUT + s * stride_s + h[:, None] * stride_h
    tl.store(obase + d[None, :], o1.to(OUT.dtype.element_ty), mask=hmask)
    tl.store(obase + HALF + d[None, :], o2.to(OUT.dtype.element_ty), mask=hmask)


@triton.jit
def _rope_interleaved(X, COS, SIN, OUT, n_heads, stride_s, stride_h, HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr):
    s = tl.program_id(0)
    HALF: tl.constexpr = HEAD_DIM // 2
    h = tl.arange(0, BLOCK_H)
    d = tl.arange(0, HEAD_DIM)
    mask = h[:, None] < n_heads
    offs = s * stride_s + h[:, None] * stride_h + d[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0)
    x = tl.reshape(x, (BLOCK_H, HALF, 2))
    x_even, x_odd = tl.split(x)
    cos = tl.load(COS + s * HALF + tl.arange(0, HALF))[None, :]
    sin = tl.load(SIN + s * HALF + tl.arange(0, HALF))[None, :]
    o_even = x_even * cos - x_odd * sin
    o_odd = x_even * sin + x_odd * cos
    o = tl.join(o_even, o_odd)
    o = tl.reshape(o, (BLOCK_H, HEAD_DIM))
    tl.store(OUT + offs, o, mask=mask)


def _rope_tables(S, D):
    inv = 1.0 / (10000 ** (np.arange(0, D, 2) / D))
    ang = np.arange(S)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def test_rotary_neox_halves(backend, rng):
    S, H, D = 9, 5, 64
    x = rng.standard_normal((S, H, D)).astype(np.float16)
    cos, sin = _rope_tables(S, D)
    out = _poison((S, H, D), np.float16, backend)
    _rope_halves[(S,)](device_array(x, backend), device_array(cos, backend), device_array(sin, backend), out,
                       S, H, H * D, D, HEAD_DIM=D, BLOCK_H=8)
    xd = x.astype(np.float64)
    x1, x2 = xd[..., :D // 2], xd[..., D // 2:]
    c, s_ = cos[:, None, :].astype(np.float64), sin[:, None, :].astype(np.float64)
    ref = np.concatenate([x1 * c - x2 * s_, x2 * c + x1 * s_], -1)
    np.testing.assert_allclose(to_numpy(out).astype(np.float64), ref, rtol=2e-3, atol=2e-3)


def test_rotary_interleaved_split_join(backend, rng):
    S, H, D = 7, 3, 32
    x = rng.standard_normal((S, H, D)).astype(np.float32)
    cos, sin = _rope_tables(S, D)
    out = _poison((S, H, D), np.float32, backend)
    _rope_interleaved[(S,)](device_array(x, backend), device_array(cos, backend), device_array(sin, backend), out,
                            H, H * D, D, HEAD_DIM=D, BLOCK_H=4, num_warps=8)
    xd = x.astype(np.float64)
    xe, xo = xd[..., 0::2], xd[..., 1::2]
    c, s_ = cos[:, None, :].astype(np.float64), sin[:, None, :].astype(np.float64)
    ref = np.stack([xe * c - xo * s_, xe * s_ + xo * c], -1).reshape(S, H, D)
    np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------- activations


@triton.jit
def _tanh_via_sigmoid(x):
    return 2 * tl.sigmoid(2 * x) - 1


@triton.jit
def _gelu_kernel(X, Y, n, APPROX: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.).to(tl.float32)
    if APPROX == "tanh":
        k0: tl.constexpr = 0.7978845608028654
        inner = k0 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1 + libdevice.tanh(inner))
    elif APPROX == "sigmoid_tanh":
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1 + _tanh_via_sigmoid(inner))
    else:
        y = 0.5 * x * (1 + tl.erf(x * 0.7071067811865476))
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("approx", ["tanh", "sigmoid_tanh", "none"])
def test_gelu_tanh_and_erf(backend, rng, approx):
    n = 3000
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    xd = x.astype(np.float64)
    if approx == "none":
        ref = 0.5 * xd * (1 + np.array([math.erf(v / math.sqrt(2)) for v in xd]))
    else:
        ref = 0.5 * xd * (1 + np.tanh(np.sqrt(2 / np.pi) * (xd + 0.044715 * xd ** 3)))
    y = _poison(n, np.float32, backend)
    _gelu_kernel[(triton.cdiv(n, 1024),)](device_array(x, backend), y, n, APPROX=approx, BLOCK=1024)
    np.testing.assert_allclose(to_numpy(y), ref, rtol=1e-5, atol=1e-5)


@triton.jit
def _swiglu_fwd(A, B, C, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(A + row * stride + cols, mask=mask, other=0).to(tl.float32)
    b = tl.load(B + row * stride + cols, mask=mask, other=0)
    c = (a * tl.sigmoid(a)).to(b.dtype) * b
    tl.store(C + row * stride + cols, c, mask=mask)


def test_swiglu_fp16(backend, rng):
    M, N = 13, 700
    a = rng.standard_normal((M, N)).astype(np.float16)
    b = rng.standard_normal((M, N)).astype(np.float16)
    c = _poison((M, N), np.float16, backend)
    _swiglu_fwd[(M, triton.cdiv(N, 256))](device_array(a, backend), device_array(b, backend), c, N, N, BLOCK=256)
    ad = a.astype(np.float64)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), ad / (1 + np.exp(-ad)) * b.astype(np.float64),
                               rtol=4e-3, atol=4e-3)


# ---------------------------------------------------------------------------- cross-entropy


@triton.jit
def _cross_entropy_fwd(logits_ptr, labels_ptr, loss_ptr, lse_ptr, stride, n_cols, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    logits_ptr += row.to(tl.int64) * stride
    label = tl.load(labels_ptr + row)
    m = -float("inf")
    d = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(d)
    safe_label = tl.where(label == ignore_index, 0, label)
    x_label = tl.load(logits_ptr + safe_label).to(tl.float32)
    loss = tl.where(label == ignore_index, 0.0, lse - x_label)
    tl.store(loss_ptr + row, loss)
    tl.store(lse_ptr + row, lse)


@triton.jit
def _cross_entropy_bwd(dlogits_ptr, logits_ptr, labels_ptr, dloss_ptr, lse_ptr, stride, n_cols, ignore_index,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    label = tl.load(labels_ptr + row)
    dloss = tl.load(dloss_ptr + row)
    if label == ignore_index:
        dloss = 0.0
    lse = tl.load(lse_ptr + row)
    x = tl.load(logits_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    p = tl.exp(x - lse)
    grad = (p - tl.where(cols == label, 1.0, 0.0)) * dloss
    tl.store(dlogits_ptr + row * stride + cols, grad.to(dlogits_ptr.dtype.element_ty), mask=mask)


def test_cross_entropy_online_logsumexp_forward_backward(backend, rng):
    M, V = 11, 1000
    x = (rng.standard_normal((M, V)) * 4).astype(np.float32)
    labels = rng.integers(0, V, M).astype(np.int64)
    labels[3] = -100
    X, L = device_array(x, backend), device_array(labels, backend)
    loss, lse = _poison(M, np.float32, backend), _poison(M, np.float32, backend)
    _cross_entropy_fwd[(M,)](X, L, loss, lse, V, V, -100, BLOCK=256)
    xd = x.astype(np.float64)
    ref_lse = np.log(np.exp(xd - xd.max(1, keepdims=True)).sum(1)) + xd.max(1)
    safe = np.where(labels == -100, 0, labels)
    ignored = labels == -100
    np.testing.assert_allclose(to_numpy(lse), ref_lse, rtol=1e-5)
    np.testing.assert_allclose(to_numpy(loss), np.where(ignored, 0.0, ref_lse - xd[np.arange(M), safe]),
                               rtol=1e-5, atol=1e-5)
    dloss = rng.standard_normal(M).astype(np.float32)
    dx = _poison((M, V), np.float32, backend)
    _cross_entropy_bwd[(M, triton.cdiv(V, 128))](dx, X, L, device_array(dloss, backend), lse, V, V, -100, BLOCK=128,
                                                 num_warps=8)
    onehot = np.zeros((M, V))
    onehot[np.arange(M), labels] = 1
    ref_dx = (np.exp(xd - ref_lse[:, None]) - onehot) * np.where(ignored, 0, dloss)[:, None]
    np.testing.assert_allclose(to_numpy(dx), ref_dx, rtol=1e-4, atol=1e-6)
    assert (to_numpy(dx)[3] == 0).all()


# ---------------------------------------------------------------------------- normalisation and softmax


@triton.jit
def _fused_add_layernorm(X, R, Y, RES_OUT, W, B, stride, N, eps, BLOCK_N: tl.constexpr, HAS_BIAS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    x = x + r
    tl.store(RES_OUT + row * stride + cols, x.to(RES_OUT.dtype.element_ty), mask=mask)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    y = xc * rstd * w
    if HAS_BIAS:
        y += tl.load(B + cols, mask=mask).to(tl.float32)
    tl.store(Y + row * stride + cols, y.to(Y.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("has_bias", [True, False])
def test_fused_add_layernorm(backend, rng, has_bias):
    M, N = 19, 200
    x = rng.standard_normal((M, N)).astype(np.float16)
    r = rng.standard_normal((M, N)).astype(np.float16)
    w = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    y = _poison((M, N), np.float16, backend)
    res = _poison((M, N), np.float16, backend)
    _fused_add_layernorm[(M,)](device_array(x, backend), device_array(r, backend), y, res, device_array(w, backend),
                               device_array(b, backend) if has_bias else None, N, N, 1e-5, BLOCK_N=256,
                               HAS_BIAS=has_bias)
    s = x.astype(np.float64) + r.astype(np.float64)
    np.testing.assert_allclose(to_numpy(res).astype(np.float64), s, rtol=1e-3, atol=1e-3)
    ref = (s - s.mean(1, keepdims=True)) / np.sqrt(s.var(1, keepdims=True) + 1e-5) * w + (b if has_bias else 0)
    np.testing.assert_allclose(to_numpy(y).astype(np.float64), ref, rtol=5e-3, atol=5e-3)


@triton.jit
def _softmax_axis0(X, Y, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < M) & (cols < N)
    x = tl.load(X + rows * stride_m + cols, mask=mask, other=float("-inf"))
    x_max = tl.max(x, axis=0, keep_dims=True)
    e = tl.exp(x - x_max)
    denom = tl.sum(e, axis=0, keep_dims=True)
    tl.store(Y + rows * stride_m + cols, e / denom, mask=mask)


@triton.jit
def _standard_softmax(X, Y, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(X + r * N + c)
    tl.store(Y + r * N + c, tl.softmax(x, dim=1))
    tot = tl.sum(x, axis=None)
    mx = tl.max(x, axis=None, keep_dims=True)
    tl.store(Y + M * N, tot)
    tl.store(Y + M * N + 1 + tl.arange(0, 1)[:, None], mx)


def test_softmax_along_axis0_keep_dims(backend, rng):
    M, N = 50, 70
    x = (rng.standard_normal((M, N)) * 3).astype(np.float32)
    y = _poison((M, N), np.float32, backend)
    _softmax_axis0[(triton.cdiv(N, 16),)](device_array(x, backend), y, M, N, N, BLOCK_M=64, BLOCK_N=16, num_warps=8)
    e = np.exp(x.astype(np.float64) - x.max(0))
    np.testing.assert_allclose(to_numpy(y), e / e.sum(0), rtol=1e-5, atol=1e-7)


def test_tl_softmax_and_full_reductions(backend, rng):
    M, N = 8, 32
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = _poison(M * N + 2, np.float32, backend)
    _standard_softmax[(1,)](device_array(x, backend), y, M=M, N=N)
    y = to_numpy(y)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(y[:M * N].reshape(M, N), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(y[M * N], x.astype(np.float64).sum(), rtol=1e-5)
    assert y[M * N + 1] == x.max()


# ---------------------------------------------------------------------------- sampling


@triton.jit
def _argmax_vocab(LOGITS, OUT_IDX, OUT_VAL, V, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    best_val = -float("inf")
    best_idx = 0
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(LOGITS + row * stride + cols, mask=cols < V, other=-float("inf"))
        blk_val, blk_idx = tl.max(x, axis=0, return_indices=True)
        better = blk_val > best_val
        best_idx = tl.where(better, blk_idx + start, best_idx)
        best_val = tl.where(better, blk_val, best_val)
    tl.store(OUT_IDX + row, best_idx)
    tl.store(OUT_VAL + row, best_val)


def test_greedy_argmax_over_vocab_loop(backend, rng):
    M, V = 6, 1000
    x = rng.standard_normal((M, V)).astype(np.float32)
    x[2, 999] = 100.0  # in the last, partial block
    x[3, 5] = x[3, 700] = 50.0  # a tie across blocks: the first wins
    x[4, 130] = x[4, 140] = 60.0  # a tie inside a block
    idx = _poison(M, np.int32, backend, -7)
    val = _poison(M, np.float32, backend)
    _argmax_vocab[(M,)](device_array(x, backend), idx, val, V, V, BLOCK=128)
    np.testing.assert_array_equal(to_numpy(idx), x.argmax(1))
    np.testing.assert_array_equal(to_numpy(val), x.max(1))


# ---------------------------------------------------------------------------- quantisation


@triton.jit
def _quantize_rowwise(X, Q, SCALE, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.max(tl.abs(x), axis=0)
    scale = tl.maximum(absmax, 1e-8) / 127.0
    q = libdevice.rint(x / scale)
    q = tl.clamp(q, -127.0, 127.0).to(tl.int8)
    tl.store(Q + row * N + cols, q, mask=mask)
    tl.store(SCALE + row, scale)


@triton.jit
def _dequantize_rowwise(Q, SCALE, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    q = tl.load(Q + row * N + cols, mask=mask, other=0)
    s = tl.load(SCALE + row)
    tl.store(Y + row * N + cols, (q.to(tl.float32) * s).to(tl.float16), mask=mask)


def test_int8_rowwise_quantize_dequantize(backend, rng):
    M, N = 9, 300
    x = rng.standard_normal((M, N)).astype(np.float16)
    q = _poison((M, N), np.int8, backend, 99)
    s = _poison(M, np.float32, backend)
    _quantize_rowwise[(M,)](device_array(x, backend), q, s, N, BLOCK=512)
    xd = x.astype(np.float64)
    ref_s = np.abs(xd).max(1) / 127
    np.testing.assert_allclose(to_numpy(s), ref_s, rtol=1e-6)
    qn = to_numpy(q).astype(np.int64)
    ref_q = np.rint(xd / ref_s[:, None])
    assert np.abs(qn - ref_q).max() <= 1  # x / scale may round either way at .5
    assert (qn == ref_q).mean() > 0.99
    assert (np.abs(qn).max(1) == 127).all()
    y = _poison((M, N), np.float16, backend)
    _dequantize_rowwise[(M,)](q, s, y, N, BLOCK=512, num_warps=8)
    np.testing.assert_allclose(to_numpy(y).astype(np.float64), qn * to_numpy(s)[:, None].astype(np.float64), rtol=1e-3)


@triton.jit
def _fp8_quant(X, Q, SCALE_INV, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    s = tl.load(SCALE_INV)
    y = tl.clamp(x * s, -448.0, 448.0)
    tl.store(Q + offs, y.to(tl.float8e4nv), mask=mask)


def test_fp8_e4m3_per_tensor_quantize(backend, rng):
    import ml_dtypes
    n = 700
    x = (rng.standard_normal(n) * 100).astype(np.float32)
    q = device_array(np.zeros(n, ml_dtypes.float8_e4m3fn), backend)
    _fp8_quant[(triton.cdiv(n, 256),)](device_array(x, backend), q, device_array(np.array([2.0], np.float32), backend),
                                       n, BLOCK=256)
    ref = np.clip(x * 2, -448, 448).astype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(to_numpy(q).astype(np.float32), ref.astype(np.float32))


# ---------------------------------------------------------------------------- gathers and scatters


@triton.jit
def _embedding_kernel(IDS, WEIGHT, OUT, n_tokens, D, stride_w, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_t = tl.program_id(0)
    pid_d = tl.program_id(1)
    t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    tmask = t < n_tokens
    ids = tl.load(IDS + t, mask=tmask, other=0)
    mask = tmask[:, None] & (d[None, :] < D)
    vals = tl.load(WEIGHT + ids[:, None] * stride_w + d[None, :], mask=mask)
    tl.store(OUT + t[:, None].to(tl.int64) * D + d[None, :], vals, mask=mask)


def test_embedding_lookup_int64_ids(backend, rng):
    V, D, T = 500, 96, 45
    w = rng.standard_normal((V, D)).astype(np.float32)
    ids = rng.integers(0, V, T).astype(np.int64)
    out = _poison((T, D), np.float32, backend)
    _embedding_kernel[(triton.cdiv(T, 16), triton.cdiv(D, 64))](device_array(ids, backend), device_array(w, backend),
                                                                 out, T, D, D, BLOCK_T=16, BLOCK_D=64)
    np.testing.assert_array_equal(to_numpy(out), w[ids])


@triton.jit
def _paged_kv_gather(KV_CACHE, BLOCK_TABLE, SEQ_LENS, OUT, max_blocks, stride_cb, stride_ct, stride_ob, stride_ot,
                     PAGE: tl.constexpr, D: tl.constexpr, BLOCK_T: tl.constexpr):
    seq = tl.program_id(0)
    tb = tl.program_id(1)
    seq_len = tl.load(SEQ_LENS + seq)
    t = tb * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = t < seq_len
    page_idx = t // PAGE
    page = tl.load(BLOCK_TABLE + seq * max_blocks + page_idx, mask=tmask, other=0)
    slot = t % PAGE
    d = tl.arange(0, D)
    src = KV_CACHE + page[:, None].to(tl.int64) * stride_cb + slot[:, None] * stride_ct + d[None, :]
    vals = tl.load(src, mask=tmask[:, None], other=0.0)
    tl.store(OUT + seq * stride_ob + t[:, None] * stride_ot + d[None, :], vals, mask=tmask[:, None])


def test_paged_kv_gather_with_block_table(backend, rng):
    n_pages, PAGE, D, S, max_blocks = 20, 16, 32, 3, 4
    cache = rng.standard_normal((n_pages, PAGE, D)).astype(np.float16)
    table = np.stack([rng.permutation(n_pages)[:max_blocks] for _ in range(S)]).astype(np.int32)
    lens = np.array([5, 64, 33], np.int32)
    out = _poison((S, max_blocks * PAGE, D), np.float16, backend)
    _paged_kv_gather[(S, triton.cdiv(max_blocks * PAGE, 32))](
        device_array(cache, backend), device_array(table, backend), device_array(lens, backend), out,
        max_blocks, PAGE * D, D, max_blocks * PAGE * D, D, PAGE=PAGE, D=D, BLOCK_T=32)
    out = to_numpy(out)
    for s in range(S):
        np.testing.assert_array_equal(out[s, :lens[s]], cache[table[s]].reshape(-1, D)[:lens[s]])
        assert np.isnan(out[s, lens[s]:]).all()


@triton.jit
def _reshape_and_cache(KEY, CACHE, SLOTS, n_tokens, D: tl.constexpr, BLOCK_T: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tm = t < n_tokens
    slot = tl.load(SLOTS + t, mask=tm, other=-1)
    valid = tm & (slot >= 0)
    d = tl.arange(0, D)
    k = tl.load(KEY + t[:, None] * D + d[None, :], mask=valid[:, None])
    tl.store(CACHE + slot[:, None] * D + d[None, :], k.to(tl.bfloat16), mask=valid[:, None])


def test_kv_cache_scatter_bf16(backend, rng):
    import ml_dtypes
    T, S, D = 21, 64, 32
    key = rng.standard_normal((T, D)).astype(np.float32)
    slots = rng.permutation(S)[:T].astype(np.int64)
    slots[[3, 9]] = -1
    cache = device_array(np.full((S, D), 7, ml_dtypes.bfloat16), backend)
    _reshape_and_cache[(triton.cdiv(T, 16),)](device_array(key, backend), cache, device_array(slots, backend), T,
                                              D=D, BLOCK_T=16)
    ref = np.full((S, D), 7, ml_dtypes.bfloat16)
    for i in range(T):
        if slots[i] >= 0:
            ref[slots[i]] = key[i].astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(to_numpy(cache).view(np.uint16), ref.view(np.uint16))


# ---------------------------------------------------------------------------- matrix products


@triton.jit
def _matmul_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_block = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak), offsets=(pid_m * BLOCK_M, 0),
                                block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_block = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn), offsets=(0, pid_n * BLOCK_N),
                                block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        b_block = tl.advance(b_block, (BLOCK_K, 0))
    c_block = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tl.store(c_block, acc.to(tl.float16), boundary_check=(0, 1))


def test_block_pointer_matmul_with_advance(backend, rng):
    M, N, K = 70, 50, 45
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = _poison((M, N), np.float16, backend)
    _matmul_block_ptr[(triton.cdiv(M, 32), triton.cdiv(N, 32))](device_array(a, backend), device_array(b, backend), c,
                                                                 M, N, K, K, 1, N, 1, N, 1,
                                                                 BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-3, atol=2e-2)


# The matmul tutorial's kernel: autotuned, grouped ordering, hints, a string activation.
@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE_M': 32, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 16, 'GROUP_SIZE_M': 4}, num_stages=3,
                      num_warps=4),
        triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=4,
                      num_warps=8),
    ],
    key=['M', 'N', 'K'],
)
@triton.jit
def _tutorial_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                            stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                            BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)
    tl.assume(stride_am > 0)
    tl.assume(stride_ak > 0)
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = _leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def _leaky_relu(x):  # defined after its caller, as in the tutorial
    return tl.where(x >= 0, x, 0.01 * x)


@pytest.mark.parametrize("activation", ["leaky_relu", ""])
def test_matmul_tutorial_autotune_hints_activation(backend, rng, activation):
    M, N, K = 90, 72, 56
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = _poison((M, N), np.float16, backend)
    grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), )
    _tutorial_matmul_kernel[grid](device_array(a, backend), device_array(b, backend), c, M, N, K, K, 1, N, 1, N, 1,
                                  ACTIVATION=activation)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if activation:
        ref = np.where(ref >= 0, ref, 0.01 * ref)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), ref, rtol=2e-3, atol=2e-2)


@triton.jit
def _splitk_matmul(A, B, C, COUNTER, DONE, M, N, K, SPLIT_K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = pid_k * BK + tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK * SPLIT_K):
        kk = k + rk
        a = tl.load(A + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(B + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.atomic_add(C + rm[:, None] * N + rn[None, :], acc, mask=mask)
    ticket = tl.atomic_add(COUNTER + pid_m * tl.num_programs(1) + pid_n, 1)
    if ticket == SPLIT_K - 1:
        tl.store(DONE + pid_m * tl.num_programs(1) + pid_n, pid_k + 100)


def test_split_k_matmul_with_atomics_and_ticket(backend, rng):
    M, N, K = 40, 50, 200
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = device_array(np.zeros((M, N), np.float32), backend)
    gm, gn = triton.cdiv(M, 32), triton.cdiv(N, 32)
    counter = device_array(np.zeros(gm * gn, np.int32), backend)
    done = _poison(gm * gn, np.int32, backend, -1)
    _splitk_matmul[(gm, gn, 4)](device_array(a, backend), device_array(b, backend), c, counter, done, M, N, K,
                                SPLIT_K=4, BM=32, BN=32, BK=16)
    np.testing.assert_allclose(to_numpy(c), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
    assert (to_numpy(counter) == 4).all()
    done = to_numpy(done)
    assert ((done >= 100) & (done < 104)).all(), done


@triton.jit
def _int8_bmm(A, B, C, SA, SB, OUT, BATCH: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    b = tl.arange(0, BATCH)[:, None, None]
    m = tl.arange(0, M)[None, :, None]
    n = tl.arange(0, N)[None, None, :]
    kk = tl.arange(0, K)
    a = tl.load(A + b * M * K + m * K + kk[None, None, :])
    bb = tl.load(B + b * K * N + kk[None, :, None] * N + n)
    c = tl.dot(a, bb)
    tl.static_assert(c.dtype == tl.int32)
    tl.store(C + b * M * N + m * N + n, c)
    sa = tl.load(SA + tl.arange(0, M))
    sb = tl.load(SB + tl.arange(0, N))
    tl.store(OUT + b * M * N + m * N + n, c.to(tl.float32) * sa[None, :, None] * sb[None, None, :])


def test_int8_batched_dot_with_scales(backend, rng):
    Bt, M, N, K = 2, 16, 32, 64
    a = rng.integers(-128, 128, (Bt, M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (Bt, K, N)).astype(np.int8)
    sa, sb = rng.random(M).astype(np.float32), rng.random(N).astype(np.float32)
    c = _poison((Bt, M, N), np.int32, backend, 7)
    out = _poison((Bt, M, N), np.float32, backend)
    _int8_bmm[(1,)](device_array(a, backend), device_array(b, backend), c, device_array(sa, backend),
                    device_array(sb, backend), out, BATCH=Bt, M=M, N=N, K=K, num_warps=8)
    ref = np.einsum("bmk,bkn->bmn", a.astype(np.int64), b.astype(np.int64))
    np.testing.assert_array_equal(to_numpy(c), ref)
    np.testing.assert_allclose(to_numpy(out), ref * sa[None, :, None].astype(np.float64) * sb[None, None, :], rtol=1e-6)


@triton.jit
def _linear_fp16_acc(X, W, Y, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(BN, 2 * BN)  # the second half of W's rows
    k = tl.arange(0, BK)
    x = tl.load(X + m[:, None] * BK + k[None, :])
    w = tl.load(W + n[:, None] * BK + k[None, :])
    y = tl.dot(x, w.T, out_dtype=tl.float16)
    tl.static_assert(y.dtype == tl.float16)
    tl.store(Y + m[:, None] * BN + (n - BN)[None, :], y)


def test_linear_x_wT_fp16_accumulator(backend, rng):
    BM, BN, BK = 16, 32, 16
    x = (rng.standard_normal((BM, BK)) * 0.5).astype(np.float16)
    w = (rng.standard_normal((2 * BN, BK)) * 0.5).astype(np.float16)
    y = _poison((BM, BN), np.float16, backend)
    _linear_fp16_acc[(1,)](device_array(x, backend), device_array(w, backend), y, BM=BM, BN=BN, BK=BK)
    np.testing.assert_allclose(to_numpy(y).astype(np.float64), x.astype(np.float64) @ w[BN:].astype(np.float64).T,
                               rtol=1e-2, atol=1e-2)


@triton.jit
def _descriptor_transpose_add(X, Y, OUT, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x_desc = tl.make_tensor_descriptor(X, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    y_desc = tl.make_tensor_descriptor(Y, shape=[N, M], strides=[M, 1], block_shape=[BN, BM])
    o_desc = tl.make_tensor_descriptor(OUT, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    x = x_desc.load([pid_m * BM, pid_n * BN])
    y = y_desc.load([pid_n * BN, pid_m * BM])
    o_desc.store([pid_m * BM, pid_n * BN], x + tl.trans(y))


def test_tensor_descriptor_transpose_add(backend, rng):
    M, N = 40, 72
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = rng.standard_normal((N, M)).astype(np.float32)
    out = _poison((M, N), np.float32, backend)
    _descriptor_transpose_add[(triton.cdiv(M, 16), triton.cdiv(N, 32))](device_array(x, backend),
                                                                         device_array(y, backend), out, M, N,
                                                                         BM=16, BN=32)
    np.testing.assert_array_equal(to_numpy(out), x + y.T)


# ---------------------------------------------------------------------------- attention


@triton.jit
def _flash_attn_fwd(Q, K, V, O, sm_scale, seq_len, stride_h, stride_s,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + off_h * stride_h + offs_m[:, None] * stride_s + offs_d[None, :]
    q = tl.load(q_ptrs, mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    else:
        hi = seq_len
    for start_n in range(0, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k = tl.load(K + off_h * stride_h + cols[:, None] * stride_s + offs_d[None, :], mask=cols[:, None] < seq_len,
                    other=0.0)
        qk = tl.dot(q, tl.trans(k))
        valid = cols[None, :] < seq_len
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk * qk_scale, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + off_h * stride_h + cols[:, None] * stride_s + offs_d[None, :], mask=cols[:, None] < seq_len,
                    other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(O + off_h * stride_h + offs_m[:, None] * stride_s + offs_d[None, :], acc.to(O.dtype.element_ty),
             mask=offs_m[:, None] < seq_len)


def _attention_reference(q, k, v, sm_scale, causal):
    s = np.einsum("hmd,hnd->hmn", q.astype(np.float64), k.astype(np.float64)) * sm_scale
    if causal:
        S = q.shape[1]
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return p @ v.astype(np.float64)


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_forward(backend, rng, causal):
    H, S, D = 3, 100, 32
    q, k, v = (rng.standard_normal((H, S, D)).astype(np.float16) for _ in range(3))
    sm = 1 / math.sqrt(D)
    o = _poison((H, S, D), np.float16, backend)
    _flash_attn_fwd[(triton.cdiv(S, 32), H)](device_array(q, backend), device_array(k, backend),
                                             device_array(v, backend), o, sm, S, S * D, D,
                                             HEAD_DIM=D, BLOCK_M=32, BLOCK_N=32, CAUSAL=causal)
    np.testing.assert_allclose(to_numpy(o).astype(np.float64), _attention_reference(q, k, v, sm, causal),
                               rtol=1e-2, atol=1e-2)


@triton.jit
def _attn_block_ptr(Q, K, V, O, sm_scale, N_CTX, stride_qh, stride_qm, stride_kh, stride_kn, stride_vh, stride_vn,
                    stride_oh, stride_om, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    Q_block_ptr = tl.make_block_ptr(base=Q + off_h * stride_qh, shape=(N_CTX, HEAD_DIM), strides=(stride_qm, 1),
                                    offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    K_block_ptr = tl.make_block_ptr(base=K + off_h * stride_kh, shape=(HEAD_DIM, N_CTX), strides=(1, stride_kn),
                                    offsets=(0, 0), block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1))
    V_block_ptr = tl.make_block_ptr(base=V + off_h * stride_vh, shape=(N_CTX, HEAD_DIM), strides=(stride_vn, 1),
                                    offsets=(0, 0), block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0))
    O_block_ptr = tl.make_block_ptr(base=O + off_h * stride_oh, shape=(N_CTX, HEAD_DIM), strides=(stride_om, 1),
                                    offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(Q_block_ptr, boundary_check=(0,), padding_option="zero")
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K_block_ptr, boundary_check=(1,), padding_option="zero")
        qk = tl.dot(q, k)
        qk = tl.where((start_n + offs_n)[None, :] < N_CTX, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_block_ptr, boundary_check=(0,), padding_option="zero")
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
    acc = acc / l_i[:, None]
    tl.store(O_block_ptr, acc.to(O.type.element_ty), boundary_check=(0,))


def test_attention_block_pointers_transposed_k(backend, rng):
    H, S, D = 2, 80, 16
    q, k, v = (rng.standard_normal((H, S, D)).astype(np.float16) for _ in range(3))
    o = _poison((H, S, D), np.float16, backend)
    sm = 0.3
    _attn_block_ptr[(triton.cdiv(S, 32), H)](device_array(q, backend), device_array(k, backend),
                                             device_array(v, backend), o, sm, S, S * D, D, S * D, D, S * D, D, S * D, D,
                                             HEAD_DIM=D, BLOCK_M=32, BLOCK_N=16, num_warps=8)
    np.testing.assert_allclose(to_numpy(o).astype(np.float64), _attention_reference(q, k, v, sm, False),
                               rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------------------- grids and programs


@triton.jit
def _persistent_scale_rows(X, Y, S, M, N, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        x = tl.load(X + rm[:, None] * N + rn[None, :], mask=mask)
        s = tl.load(S + rm, mask=rm < M)
        tl.store(Y + rm[:, None] * N + rn[None, :], x * s[:, None] + tile_id, mask=mask)


def test_persistent_tile_loop(backend, rng):
    M, N, NUM_SMS = 100, 90, 5
    x = rng.standard_normal((M, N)).astype(np.float32)
    s = rng.standard_normal(M).astype(np.float32)
    y = _poison((M, N), np.float32, backend)
    _persistent_scale_rows[(NUM_SMS,)](device_array(x, backend), y, device_array(s, backend), M, N, NUM_SMS=NUM_SMS,
                                       BLOCK_M=32, BLOCK_N=32)
    tile = (np.arange(M)[:, None] // 32) * 3 + (np.arange(N)[None, :] // 32)
    np.testing.assert_allclose(to_numpy(y), x.astype(np.float64) * s[:, None] + tile, rtol=1e-6, atol=1e-6)


@triton.jit
def _grid3d_kernel(X, Y, B, M, N, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    pm = tl.program_id(1)
    pn = tl.program_id(2)
    nb = tl.num_programs(0)
    nm = tl.num_programs(1)
    nn = tl.num_programs(2)
    for bb in range(b, B, nb):
        for m in range(pm, M, nm):
            for n0 in range(pn * BLOCK, N, nn * BLOCK):
                cols = n0 + tl.arange(0, BLOCK)
                mask = cols < N
                off = bb * M * N + m * N + cols
                x = tl.load(X + off, mask=mask)
                tl.store(Y + off, x * 2 + (bb * 1000 + m), mask=mask)


def test_3d_grid_stride_loops_with_num_programs(backend, rng):
    B, M, N = 5, 7, 150
    x = rng.standard_normal((B, M, N)).astype(np.float32)
    y = _poison((B, M, N), np.float32, backend)
    _grid3d_kernel[(2, 3, 2)](device_array(x, backend), y, B, M, N, BLOCK=32)
    ref = x.astype(np.float64) * 2 + (np.arange(B)[:, None, None] * 1000 + np.arange(M)[None, :, None])
    np.testing.assert_allclose(to_numpy(y), ref, rtol=1e-7)


# ---------------------------------------------------------------------------- scans and reductions


@triton.jit
def _first_order_op(l_a, l_b, r_a, r_b):
    return r_a * l_a, r_a * l_b + r_b


@triton.jit
def _linear_recurrence(A, B, H, L, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < L
    a = tl.load(A + row * L + offs, mask=mask, other=1.0)
    b = tl.load(B + row * L + offs, mask=mask, other=0.0)
    _, h = tl.associative_scan((a, b), axis=0, combine_fn=_first_order_op)
    tl.store(H + row * L + offs, h, mask=mask)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _cummax_rows(X, Y, N, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    rows = tl.arange(0, 4)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    mask = cols < N
    x = tl.load(X + rows * N + cols, mask=mask, other=-float("inf"))
    y = tl.associative_scan(x, 1, _max_combine, reverse=REVERSE)
    tl.store(Y + rows * N + cols, y, mask=mask)


def test_associative_scan_linear_recurrence(backend, rng):
    R, L = 3, 100
    a = rng.uniform(0.5, 1.0, (R, L)).astype(np.float32)
    b = rng.standard_normal((R, L)).astype(np.float32)
    h = _poison((R, L), np.float32, backend)
    _linear_recurrence[(R,)](device_array(a, backend), device_array(b, backend), h, L, BLOCK=128)
    ref = np.zeros((R, L))
    prev = np.zeros(R)
    for t in range(L):
        prev = a[:, t] * prev + b[:, t]
        ref[:, t] = prev
    np.testing.assert_allclose(to_numpy(h), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_cummax(backend, rng, reverse):
    x = rng.standard_normal((4, 50)).astype(np.float32)
    y = _poison((4, 50), np.float32, backend)
    _cummax_rows[(1,)](device_array(x, backend), y, 50, BLOCK=64, REVERSE=reverse, num_warps=8)
    ref = np.maximum.accumulate(x[:, ::-1], 1)[:, ::-1] if reverse else np.maximum.accumulate(x, 1)
    np.testing.assert_array_equal(to_numpy(y), ref)


@triton.jit
def _argmin_last_combine(v0, i0, v1, i1):
    lt = v0 < v1
    eq = v0 == v1
    pick0 = lt | (eq & (i0 > i1))
    return tl.where(pick0, v0, v1), tl.where(pick0, i0, i1)


@triton.jit
def _argmin_last_rows(X, VAL, IDX, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = cols[None, :] < N
    x = tl.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=float("inf"))
    idx = tl.broadcast_to(cols[None, :], (BLOCK_M, BLOCK_N))
    v, i = tl.reduce((x, idx), 1, _argmin_last_combine)
    tl.store(VAL + rows, v)
    tl.store(IDX + rows, i)


def test_reduce_tuple_argmin_last_index(backend, rng):
    M, N = 16, 40
    x = rng.integers(-5, 5, (M, N)).astype(np.float32)  # many ties
    val = _poison(M, np.float32, backend)
    idx = _poison(M, np.int32, backend, -1)
    _argmin_last_rows[(M // 8,)](device_array(x, backend), val, idx, N, BLOCK_M=8, BLOCK_N=64)
    np.testing.assert_array_equal(to_numpy(val), x.min(1))
    np.testing.assert_array_equal(to_numpy(idx), N - 1 - x[:, ::-1].argmin(1))


@triton.jit
def _sum_max_count(a, b, c, d, e, f):
    return a + d, tl.maximum(b, e), c + f


@triton.jit
def _affine_combine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def _reduce_zoo(X, I, OUT, OUT_I, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(X + r * N + c)
    iv = tl.load(I + r * N + c)
    tl.store(OUT + r * N + c, tl.cumprod(1.0 + 0.1 * x, axis=1))
    tl.store(OUT_I + tl.arange(0, M), tl.xor_sum(iv, axis=1))
    am = tl.argmin(x, axis=0, keep_dims=True)  # [1, N]
    tl.store(OUT_I + M + c, am)
    s, mx, cnt = tl.reduce((x, x, (x > 0).to(tl.int32)), 1, _sum_max_count)
    tl.store(OUT + M * N + tl.arange(0, M), s)
    tl.store(OUT + M * N + M + tl.arange(0, M), mx)
    tl.store(OUT_I + M + N + tl.arange(0, M), cnt)
    a = 0.5 + 0.1 * x
    _, h = tl.associative_scan((a, x), 0, _affine_combine, reverse=True)
    tl.store(OUT + M * N + 2 * M + r * N + c, h)


def test_cumprod_xor_sum_argmin_three_way_reduce_reverse_tuple_scan(backend, rng):
    M, N = 16, 8
    x = rng.standard_normal((M, N)).astype(np.float32)
    iv = rng.integers(0, 2 ** 31, (M, N)).astype(np.int32)
    out = _poison(2 * M * N + 2 * M, np.float32, backend)
    oi = _poison(2 * M + N, np.int32, backend, -5)
    _reduce_zoo[(1,)](device_array(x, backend), device_array(iv, backend), out, oi, M=M, N=N)
    out, oi = to_numpy(out), to_numpy(oi)
    xd = x.astype(np.float64)
    np.testing.assert_allclose(out[:M * N].reshape(M, N), np.cumprod(1 + 0.1 * xd, 1), rtol=1e-5)
    np.testing.assert_array_equal(oi[:M], np.bitwise_xor.reduce(iv, 1))
    np.testing.assert_array_equal(oi[M:M + N], x.argmin(0))
    np.testing.assert_allclose(out[M * N:M * N + M], xd.sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[M * N + M:M * N + 2 * M], x.max(1))
    np.testing.assert_array_equal(oi[M + N:], (x > 0).sum(1))
    a = 0.5 + 0.1 * xd
    h = np.zeros((M, N))
    prev = np.zeros(N)
    for t in range(M - 1, -1, -1):
        prev = a[t] * prev + xd[t]
        h[t] = prev
    np.testing.assert_allclose(out[M * N + 2 * M:].reshape(M, N), h, rtol=1e-5, atol=1e-5)


@triton.jit
def _scan_reduce_3d(X, CS, R3, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, A)[:, None]
    c = tl.arange(0, B * C)[None, :]
    x2 = tl.load(X + r * (B * C) + c)
    tl.store(CS + r * (B * C) + c, tl.cumsum(x2, axis=0))
    x3 = tl.reshape(x2, (A, B, C))
    s = tl.sum(x3, axis=1)  # [A, C]
    m = tl.max(x3, axis=2, keep_dims=True)  # [A, B, 1]
    tl.store(R3 + tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :], s)
    tl.store(R3 + A * C + tl.arange(0, A)[:, None, None] * B + tl.arange(0, B)[None, :, None], m)


def test_cumsum_axis0_and_3d_reductions(backend, rng):
    A, B, C = 8, 4, 16
    x = rng.standard_normal((A, B * C)).astype(np.float32)
    cs = _poison((A, B * C), np.float32, backend)
    r3 = _poison(A * C + A * B, np.float32, backend)
    _scan_reduce_3d[(1,)](device_array(x, backend), cs, r3, A=A, B=B, C=C, num_warps=8)
    r3 = to_numpy(r3)
    np.testing.assert_allclose(to_numpy(cs), np.cumsum(x.astype(np.float64), 0), rtol=1e-5, atol=1e-5)
    x3 = x.reshape(A, B, C).astype(np.float64)
    np.testing.assert_allclose(r3[:A * C].reshape(A, C), x3.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(r3[A * C:].reshape(A, B), x3.max(2))


@triton.jit
def _compact_kernel(X, OUT, COUNT, n, thresh, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    base = 0
    for start in range(0, n, BLOCK):
        idx = start + offs
        mask = idx < n
        x = tl.load(X + idx, mask=mask, other=0.0)
        keep = mask & (x > thresh)
        pos = tl.cumsum(keep.to(tl.int32), axis=0) - 1
        tl.store(OUT + base + pos, x, mask=keep)
        base += tl.sum(keep.to(tl.int32), axis=0)
    tl.store(COUNT, base)


def test_stream_compaction_with_cumsum(backend, rng):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    out = _poison(n, np.float32, backend)
    cnt = _poison(1, np.int32, backend, -1)
    _compact_kernel[(1,)](device_array(x, backend), out, cnt, n, 0.3, BLOCK=256)
    kept = x[x > 0.3]
    out = to_numpy(out)
    assert to_numpy(cnt)[0] == len(kept)
    np.testing.assert_array_equal(out[:len(kept)], kept)
    assert np.isnan(out[len(kept):]).all()


# ---------------------------------------------------------------------------- histogram, gather, sort


@triton.jit
def _histogram_kernel(X, HIST, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0)
    h = tl.histogram(x, NUM_BINS, mask=mask)
    tl.atomic_add(HIST + tl.arange(0, NUM_BINS), h)


def test_histogram_per_program_then_atomic_add(backend, rng):
    n, bins = 3000, 32
    x = rng.integers(0, bins, n).astype(np.int32)
    hist = device_array(np.zeros(bins, np.int32), backend)
    _histogram_kernel[(triton.cdiv(n, 512),)](device_array(x, backend), hist, n, NUM_BINS=bins, BLOCK=512)
    np.testing.assert_array_equal(to_numpy(hist), np.bincount(x, minlength=bins))


@triton.jit
def _gather_rows(X, IDX, Y, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(X + rows * N + cols)
    idx = tl.load(IDX + rows * N + cols)
    y = tl.gather(x, idx, axis=1)
    tl.store(Y + rows * N + cols, y)


@triton.jit
def _gather_sort_zoo(X, IDX, H, OUT, OUTH, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(X + r * N + c)
    idx = tl.load(IDX + tl.arange(0, K)[:, None] * N + c)  # [K, N] row indices
    g = tl.gather(x, idx, 0)
    tl.store(OUT + tl.arange(0, K)[:, None] * N + c, g)
    h = tl.load(H + r * N + c)
    tl.store(OUTH + r * N + c, tl.sort(h, dim=1, descending=True))


def test_gather_along_rows(backend, rng):
    M, N = 8, 32
    x = rng.standard_normal((M, N)).astype(np.float32)
    idx = rng.integers(0, N, (M, N)).astype(np.int32)
    y = _poison((M, N), np.float32, backend)
    _gather_rows[(1,)](device_array(x, backend), device_array(idx, backend), y, M=M, N=N)
    np.testing.assert_array_equal(to_numpy(y), np.take_along_axis(x, idx, 1))


def test_gather_axis0_and_descending_fp16_sort(backend, rng):
    M, N, K = 16, 32, 8
    x = rng.standard_normal((M, N)).astype(np.float32)
    idx = rng.integers(0, M, (K, N)).astype(np.int32)
    h = rng.standard_normal((M, N)).astype(np.float16)
    out = _poison((K, N), np.float32, backend)
    oh = _poison((M, N), np.float16, backend)
    _gather_sort_zoo[(1,)](device_array(x, backend), device_array(idx, backend), device_array(h, backend), out, oh,
                           M=M, N=N, K=K, num_warps=8)
    np.testing.assert_array_equal(to_numpy(out), np.take_along_axis(x, idx, 0))
    np.testing.assert_array_equal(to_numpy(oh), -np.sort(-h, 1))


@triton.jit
def _sort_topk(X, SORTED, TOP, N: tl.constexpr, K: tl.constexpr):
    rows = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(X + rows * N + cols)
    s = tl.sort(x, descending=True)
    tl.store(SORTED + rows * N + cols, s)
    t = tl.topk(x, K)
    tl.store(TOP + rows * K + tl.arange(0, K), t)


@triton.jit
def _sort_2d(X, Y, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(X + r * N + c)
    tl.store(Y + r * N + c, tl.sort(x, dim=0))


def test_sort_and_topk(backend, rng):
    R, N, K = 3, 64, 8
    x = rng.standard_normal((R, N)).astype(np.float32)
    s = _poison((R, N), np.float32, backend)
    t = _poison((R, K), np.float32, backend)
    _sort_topk[(R,)](device_array(x, backend), s, t, N=N, K=K)
    np.testing.assert_array_equal(to_numpy(s), -np.sort(-x, 1))
    np.testing.assert_array_equal(to_numpy(t), -np.sort(-x, 1)[:, :K])
    xi = rng.integers(-100, 100, (16, 8)).astype(np.int32)
    yi = _poison((16, 8), np.int32, backend, 7777)
    _sort_2d[(1,)](device_array(xi, backend), yi, M=16, N=8)
    np.testing.assert_array_equal(to_numpy(yi), np.sort(xi, 0))


# ---------------------------------------------------------------------------- atomics


@triton.jit
def _atomic_hist(X, HIST, n, num_bins, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0)
    valid = mask & (x >= 0) & (x < num_bins)
    tl.atomic_add(HIST + x, 1, mask=valid)


@triton.jit
def _atomic_extrema(X, OUT, OUT_MIN, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=-float("inf"))
    tl.atomic_max(OUT, tl.max(x, axis=0))
    tl.atomic_max(OUT + 1 + offs % 4, x, mask=mask)
    xi = tl.load(X + offs, mask=mask, other=0.0).to(tl.int32)
    tl.atomic_min(OUT_MIN + offs % 3, xi, mask=mask, sem="relaxed")


def test_atomic_add_masked_histogram(backend, rng):
    n, bins = 2500, 20
    x = rng.integers(-3, bins + 3, n).astype(np.int32)
    hist = device_array(np.zeros(bins, np.int32), backend)
    _atomic_hist[(triton.cdiv(n, 256),)](device_array(x, backend), hist, n, bins, BLOCK=256, num_warps=8)
    np.testing.assert_array_equal(to_numpy(hist), np.bincount(x[(x >= 0) & (x < bins)], minlength=bins))


def test_atomic_max_on_negative_floats_and_atomic_min(backend, rng):
    n = 2500
    x = (rng.standard_normal(n) * 10 - 30).astype(np.float32)  # mostly negative
    out = device_array(np.full(5, -np.inf, np.float32), backend)
    omin = device_array(np.full(3, 2 ** 31 - 1, np.int32), backend)
    _atomic_extrema[(triton.cdiv(n, 256),)](device_array(x, backend), out, omin, n, BLOCK=256)
    out, omin = to_numpy(out), to_numpy(omin)
    assert out[0] == x.max()
    np.testing.assert_array_equal(out[1:], [x[j::4].max() for j in range(4)])
    np.testing.assert_array_equal(omin, [np.trunc(x[j::3]).astype(np.int32).min() for j in range(3)])


# ---------------------------------------------------------------------------- loops


@triton.jit
def _searchsorted_kernel(SORTED, QUERIES, OUT, n):
    pid = tl.program_id(0)
    q = tl.load(QUERIES + pid)
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        v = tl.load(SORTED + mid)
        if v < q:
            lo = mid + 1
        else:
            hi = mid
    tl.store(OUT + pid, lo)


@triton.jit
def _collatz_block(X, OUT, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    steps = tl.zeros([BLOCK], dtype=tl.int32)
    while tl.max(x, axis=0) > 1:
        active = x > 1
        nxt = tl.where(x % 2 == 0, x // 2, 3 * x + 1)
        x = tl.where(active, nxt, x)
        steps += active.to(tl.int32)
    tl.store(OUT + offs, steps)


def test_while_binary_search(backend, rng):
    n, nq = 200, 40
    s = np.sort(rng.integers(0, 1000, n)).astype(np.int32)
    q = rng.integers(-10, 1010, nq).astype(np.int32)
    q[:3] = s[[0, 50, 199]]
    out = _poison(nq, np.int32, backend, -1)
    _searchsorted_kernel[(nq,)](device_array(s, backend), device_array(q, backend), out, n)
    np.testing.assert_array_equal(to_numpy(out), np.searchsorted(s, q, side="left"))


def test_while_block_condition_reduced(backend, rng):
    x = rng.integers(1, 200, 64).astype(np.int32)
    steps = _poison(64, np.int32, backend, -1)
    _collatz_block[(2,)](device_array(x, backend), steps, BLOCK=32)

    def count(v):
        c = 0
        while v > 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            c += 1
        return c

    np.testing.assert_array_equal(to_numpy(steps), [count(int(v)) for v in x])


@triton.jit
def _ragged_rowsum(VALUES, OFFSETS, OUT, n_rows, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid, n_rows, tl.num_programs(0)):
        start = tl.load(OFFSETS + row)
        end = tl.load(OFFSETS + row + 1)
        ptrs = VALUES + start + tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        pos = start
        while pos < end:
            m = (pos + tl.arange(0, BLOCK)) < end
            acc += tl.load(ptrs, mask=m, other=0.0)
            ptrs += BLOCK
            pos += BLOCK
        tl.store(OUT + row, tl.sum(acc, axis=0))


def test_ragged_rows_while_inside_for(backend, rng):
    lens = rng.integers(0, 300, 17)
    lens[5] = 0
    offs = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    vals = rng.standard_normal(offs[-1]).astype(np.float32)
    out = _poison(17, np.float32, backend)
    _ragged_rowsum[(4,)](device_array(vals, backend), device_array(offs, backend), out, 17, BLOCK=64)
    ref = [vals[offs[i]:offs[i + 1]].astype(np.float64).sum() for i in range(17)]
    np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-5, atol=1e-5)


@triton.jit
def _first_above_rows(X, OUT, N, thresh, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    found = -1
    start = 0
    while (found < 0) & (start < N):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(X + row * N + cols, mask=cols < N, other=-float("inf"))
        hit = (x > thresh).to(tl.int32)
        if tl.max(hit, axis=0) > 0:
            found = start + tl.argmax(hit, axis=0)
        start += BLOCK
    tl.store(OUT + row, found)


def test_while_data_dependent_exit(backend, rng):
    M, N = 6, 500
    x = rng.standard_normal((M, N)).astype(np.float32)
    x[4] = np.minimum(x[4], 2.0)
    out = _poison(M, np.int32, backend, 99)
    _first_above_rows[(M,)](device_array(x, backend), out, N, 2.5, BLOCK=64)
    ref = [int(np.argmax(r > 2.5)) if (r > 2.5).any() else -1 for r in x]
    np.testing.assert_array_equal(to_numpy(out), ref)


@triton.jit
def _newton_step(x, a):
    fx = x * x - a
    return x - fx / (2 * x), tl.abs(fx)


# The residual is stored after the loop. Were it only read by the loop condition, the
# kernel would not compile (a while-carried value dead after the loop: an MLIRError in
# convert-tile-to-tilegpu); that case is left out of this file.
@triton.jit
def _newton_sqrt(A, OUT, ITERS, tol, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(A + offs)
    state = (a, tl.full([BLOCK], float("inf"), tl.float32))
    it = 0
    while (tl.max(state[1], axis=0) > tol) & (it < 100):
        x, err = state
        state = _newton_step(x, a)
        it += 1
    tl.store(OUT + offs, state[0])
    tl.store(OUT + BLOCK * tl.num_programs(0) + offs, state[1])  # used after the loop: see the note below
    tl.store(ITERS + tl.program_id(0), it)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.range(0, 10, loop_unroll_factor=2):
        acc += a * i
    tl.store(OUT + 2 * BLOCK * tl.num_programs(0) + offs, acc)


def test_while_carrying_a_tuple_from_a_helper(backend, rng):
    B = 64
    a = rng.uniform(1, 100, 2 * B).astype(np.float32)
    out = _poison(6 * B, np.float32, backend)
    iters = _poison(2, np.int32, backend, -1)
    _newton_sqrt[(2,)](device_array(a, backend), out, iters, 1e-3, BLOCK=B)
    out, iters = to_numpy(out), to_numpy(iters)
    np.testing.assert_allclose(out[:2 * B], np.sqrt(a.astype(np.float64)), rtol=1e-5)
    assert (out[2 * B:4 * B] <= 1e-3).all()
    assert ((iters > 0) & (iters < 100)).all()
    np.testing.assert_allclose(out[4 * B:], a.astype(np.float64) * 45, rtol=1e-6)


@triton.jit
def _loops_kernel(X, OUT, n, step, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    carry = tl.zeros([BLOCK], dtype=tl.float32)
    total = 0.0
    count = 0
    for i in range(n - 1, -1, -1):  # a negative runtime step
        x = tl.load(X + i * BLOCK + offs)
        carry = carry * 0.5 + x
        if i % 2 == 0:
            total += tl.sum(x, axis=0)
            count += 1
        else:
            total -= 1.0
    tl.store(OUT + offs, carry)
    tl.store(OUT + BLOCK, total)
    tl.store(OUT + BLOCK + 1, count)
    acc2 = tl.zeros([BLOCK, BLOCK], dtype=tl.float32)
    for i in range(0, n, step):
        row = tl.load(X + i * BLOCK + offs)
        for j in range(i, n, step):
            col = tl.load(X + j * BLOCK + offs)
            acc2 += row[:, None] * col[None, :]
    tl.store(OUT + BLOCK + 2 + offs[:, None] * BLOCK + offs[None, :], acc2)


def test_runtime_loops_negative_step_nested_and_if(backend, rng):
    n, B, step = 7, 16, 2
    x = rng.standard_normal((n, B)).astype(np.float32)
    out = _poison(B + 2 + B * B, np.float32, backend)
    _loops_kernel[(1,)](device_array(x, backend), out, n, step, BLOCK=B, num_warps=8)
    out = to_numpy(out)
    xd = x.astype(np.float64)
    carry, total, count = np.zeros(B), 0.0, 0
    for i in range(n - 1, -1, -1):
        carry = carry * 0.5 + xd[i]
        if i % 2 == 0:
            total += xd[i].sum()
            count += 1
        else:
            total -= 1
    np.testing.assert_allclose(out[:B], carry, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[B], total, rtol=1e-5, atol=1e-5)
    assert out[B + 1] == count
    acc = sum(np.outer(xd[i], xd[j]) for i in range(0, n, step) for j in range(i, n, step))
    np.testing.assert_allclose(out[B + 2:].reshape(B, B), acc, rtol=1e-5, atol=1e-5)


@triton.jit
def _horner_conv(X, Y, Z, C, n, DEGREE: tl.constexpr, TAPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32) + tl.load(C + DEGREE)
    for i in tl.static_range(DEGREE - 1, -1, -1):
        acc = acc * x + tl.load(C + i)
    tl.store(Y + offs, acc, mask=mask)
    conv = tl.zeros([BLOCK], dtype=tl.float32)
    for t in tl.static_range(TAPS):
        idx = offs + t - TAPS // 2
        conv += tl.load(X + idx, mask=(idx >= 0) & (idx < n), other=0.0) * (t + 1)
    tl.store(Z + offs, conv, mask=mask)


def test_static_range_horner_and_stencil(backend, rng):
    n, deg, taps = 500, 4, 5
    x = rng.uniform(-1, 1, n).astype(np.float32)
    c = rng.standard_normal(deg + 1).astype(np.float32)
    y = _poison(n, np.float32, backend)
    z = _poison(n, np.float32, backend)
    _horner_conv[(triton.cdiv(n, 128),)](device_array(x, backend), y, z, device_array(c, backend), n,
                                         DEGREE=deg, TAPS=taps, BLOCK=128)
    np.testing.assert_allclose(to_numpy(y), np.polyval(c[::-1].astype(np.float64), x.astype(np.float64)),
                               rtol=1e-5, atol=1e-5)
    xp = np.pad(x.astype(np.float64), taps // 2)
    np.testing.assert_allclose(to_numpy(z), sum(xp[t:t + n] * (t + 1) for t in range(taps)), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------- helpers returning tuples


@triton.jit
def _welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    delta = mean_b - mean_a
    frac = tl.where(n == 0, 0.0, n_b / n)
    return mean_a + delta * frac, m2_a + m2_b + delta * delta * n_a * frac, n


@triton.jit
def _block_stats(x, mask):
    cnt = tl.sum(mask.to(tl.float32), axis=0)
    mean = tl.sum(tl.where(mask, x, 0.0), axis=0) / cnt
    d = tl.where(mask, x - mean, 0.0)
    return mean, tl.sum(d * d, axis=0), cnt


@triton.jit
def _load_stats(X, start, N, BLOCK: tl.constexpr):
    cols = start + tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0)
    return _block_stats(x, mask)


@triton.jit
def _welford_rows(X, MEAN, VAR, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    mean = 0.0
    m2 = 0.0
    cnt = 0.0
    for start in range(0, N, BLOCK):
        bm, bm2, bc = _load_stats(X + row * N, start, N, BLOCK)
        mean, m2, cnt = _welford_combine(mean, m2, cnt, bm, bm2, bc)
    tl.store(MEAN + row, mean)
    tl.store(VAR + row, m2 / cnt)


def test_nested_helpers_returning_tuples_welford(backend, rng):
    M, N = 6, 333
    x = (rng.standard_normal((M, N)) * 2 + 5).astype(np.float32)
    mean = _poison(M, np.float32, backend)
    var = _poison(M, np.float32, backend)
    _welford_rows[(M,)](device_array(x, backend), mean, var, N, BLOCK=64)
    np.testing.assert_allclose(to_numpy(mean), x.astype(np.float64).mean(1), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(var), x.astype(np.float64).var(1), rtol=1e-4)


# ---------------------------------------------------------------------------- elementwise semantics


@triton.jit
def _where_scalar(X, Y, Z, n, thresh, fill, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    y = tl.where(x > thresh, x, fill)  # a runtime scalar
    y = tl.where(x < -thresh, 0, y)  # a Python int
    tl.store(Y + offs, y, mask=mask)
    pid_is_even = tl.program_id(0) % 2 == 0  # a scalar condition
    z = tl.where(pid_is_even, x, -x)
    tl.store(Z + offs, z, mask=mask)


def test_where_with_scalar_operands_and_condition(backend, rng):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = _poison(n, np.float32, backend)
    z = _poison(n, np.float32, backend)
    _where_scalar[(triton.cdiv(n, 128),)](device_array(x, backend), y, z, n, 0.5, 7.25, BLOCK=128)
    ref = np.where(x > 0.5, x, np.float32(7.25))
    ref = np.where(x < -0.5, np.float32(0), ref)
    np.testing.assert_array_equal(to_numpy(y), ref)
    even = (np.arange(n) // 128) % 2 == 0
    np.testing.assert_array_equal(to_numpy(z), np.where(even, x, -x))


@triton.jit
def _mixed_dtypes(H, F, I8, I32, U32, OUT_F, OUT_I, OUT_U, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.load(H + offs)  # fp16
    f = tl.load(F + offs)  # fp32
    i8 = tl.load(I8 + offs)  # int8
    i32 = tl.load(I32 + offs)  # int32
    u = tl.load(U32 + offs)  # uint32
    hf = h * f
    tl.static_assert(hf.dtype == tl.float32)
    s = i8 + i32
    tl.static_assert(s.dtype == tl.int32)
    tl.store(OUT_F + offs, hf + s)
    wrap = i8 * 3
    tl.static_assert(wrap.dtype == tl.int8)
    tl.store(OUT_I + offs, wrap.to(tl.int32))
    tl.store(OUT_I + BLOCK + offs, i32 >> 3)  # arithmetic shift
    tl.store(OUT_U + offs, u >> 28)  # logical shift
    tl.store(OUT_U + BLOCK + offs, (u << 4) ^ (u >> 7))
    tl.store(OUT_U + 2 * BLOCK + offs, u * 2654435761)  # wraps modulo 2**32
    tl.store(OUT_U + 3 * BLOCK + offs, u + i32.to(tl.uint32))


def test_mixed_dtype_promotion_and_unsigned_shifts(backend, rng):
    B = 64
    h = rng.standard_normal(B).astype(np.float16)
    f = rng.standard_normal(B).astype(np.float32)
    i8 = rng.integers(-128, 128, B).astype(np.int8)
    i32 = rng.integers(-2 ** 31, 2 ** 31, B).astype(np.int32)
    u = rng.integers(0, 2 ** 32, B, dtype=np.uint64).astype(np.uint32)
    of = _poison(B, np.float32, backend)
    oi = _poison(2 * B, np.int32, backend, 12345)
    ou = _poison(4 * B, np.uint32, backend, 12345)
    _mixed_dtypes[(1,)](*(device_array(a, backend) for a in (h, f, i8, i32, u)), of, oi, ou, BLOCK=B)
    of, oi, ou = to_numpy(of), to_numpy(oi), to_numpy(ou)
    ref = h.astype(np.float32) * f + (i8.astype(np.int64) + i32).astype(np.int32).astype(np.float32)
    np.testing.assert_allclose(of, ref, rtol=1e-6)
    np.testing.assert_array_equal(oi[:B], (i8.astype(np.int64) * 3).astype(np.int8))
    np.testing.assert_array_equal(oi[B:], i32 >> 3)
    U = u.astype(np.uint64)
    np.testing.assert_array_equal(ou[:B], u >> 28)
    np.testing.assert_array_equal(ou[B:2 * B], (((U << 4) & 0xFFFFFFFF) ^ (U >> 7)).astype(np.uint32))
    np.testing.assert_array_equal(ou[2 * B:3 * B], ((U * 2654435761) & 0xFFFFFFFF).astype(np.uint32))
    np.testing.assert_array_equal(ou[3 * B:], ((U + i32.astype(np.int64).astype(np.uint64)) & 0xFFFFFFFF))


@triton.jit
def _bitcast_kernel(X16, XF, OUT16, OUTF, BITS, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = tl.load(X16 + offs, mask=mask)
    b = h.to(tl.int16, bitcast=True)
    b = b & 0x7FFF  # clear the sign: |h|
    tl.store(OUT16 + offs, b.to(tl.float16, bitcast=True), mask=mask)
    f = tl.load(XF + offs, mask=mask)
    u = f.to(tl.uint32, bitcast=True)
    tl.store(BITS + offs, u, mask=mask)
    u = u ^ 0x80000000  # flip the sign
    tl.store(OUTF + offs, u.to(tl.float32, bitcast=True), mask=mask)


def test_bitcast_round_trips(backend, rng):
    n = 300
    h = rng.standard_normal(n).astype(np.float16)
    f = rng.standard_normal(n).astype(np.float32)
    o16 = _poison(n, np.float16, backend)
    of = _poison(n, np.float32, backend)
    bits = device_array(np.zeros(n, np.uint32), backend)
    _bitcast_kernel[(triton.cdiv(n, 128),)](device_array(h, backend), device_array(f, backend), o16, of, bits, n,
                                            BLOCK=128)
    np.testing.assert_array_equal(to_numpy(o16), np.abs(h))
    np.testing.assert_array_equal(to_numpy(of), -f)
    np.testing.assert_array_equal(to_numpy(bits), f.view(np.uint32))


@triton.jit
def _bf16_round(X, RNE, RTZ, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(RNE + offs, x.to(tl.bfloat16), mask=mask)
    tl.store(RTZ + offs, x.to(tl.bfloat16, fp_downcast_rounding="rtz"), mask=mask)


def test_bf16_downcast_rounding_modes(backend, rng):
    import ml_dtypes
    n = 500
    x = rng.standard_normal(n).astype(np.float32)
    rne = device_array(np.zeros(n, ml_dtypes.bfloat16), backend)
    rtz = device_array(np.zeros(n, ml_dtypes.bfloat16), backend)
    _bf16_round[(triton.cdiv(n, 128),)](device_array(x, backend), rne, rtz, n, BLOCK=128)
    np.testing.assert_array_equal(to_numpy(rne).view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))
    np.testing.assert_array_equal(to_numpy(rtz).view(np.uint16), (x.view(np.uint32) >> 16).astype(np.uint16))


@triton.jit
def _math_helpers(A, B, C, U, V, OUT, OUT_U, OUT_I, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask)
    b = tl.load(B + offs, mask=mask)
    c = tl.load(C + offs, mask=mask)
    tl.store(OUT + offs, tl.fma(a, b, c), mask=mask)
    tl.store(OUT + n + offs, tl.clamp(a, -0.5, 0.5), mask=mask)
    tl.store(OUT + 2 * n + offs, tl.maximum(a, b) - tl.minimum(a, c), mask=mask)
    u = tl.load(U + offs, mask=mask)
    v = tl.load(V + offs, mask=mask)
    tl.store(OUT_U + offs, tl.umulhi(u, v), mask=mask)
    ai = (a * 100).to(tl.int32)
    bi = tl.abs((b * 10).to(tl.int32)) + 1
    tl.store(OUT_I + offs, tl.cdiv(ai, bi), mask=mask)
    nblocks = tl.cdiv(n, BLOCK)
    tl.store(OUT_I + n + offs, nblocks + tl.zeros_like(ai), mask=mask)


def test_fma_clamp_minmax_umulhi_cdiv(backend, rng):
    n = 400
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    u = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    v = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    out = _poison(3 * n, np.float32, backend)
    ou = device_array(np.zeros(n, np.uint32), backend)
    oi = _poison(2 * n, np.int32, backend, -99)
    _math_helpers[(triton.cdiv(n, 128),)](*(device_array(t, backend) for t in (a, b, c, u, v)), out, ou, oi, n,
                                          BLOCK=128)
    out, ou, oi = to_numpy(out), to_numpy(ou), to_numpy(oi)
    ad, bd, cd = (t.astype(np.float64) for t in (a, b, c))
    np.testing.assert_array_equal(out[:n], (ad * bd + cd).astype(np.float32))  # rounded once
    np.testing.assert_array_equal(out[n:2 * n], np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(out[2 * n:], np.maximum(a, b) - np.minimum(a, c))
    np.testing.assert_array_equal(ou, ((u.astype(np.uint64) * v.astype(np.uint64)) >> 32).astype(np.uint32))
    ai = np.trunc(a * np.float32(100)).astype(np.int64)
    bi = np.abs(np.trunc(b * np.float32(10)).astype(np.int64)) + 1
    num = ai + bi - 1  # tl.cdiv is (x + div - 1) // div with C's truncating division
    np.testing.assert_array_equal(oi[:n], np.sign(num) * (np.abs(num) // bi))
    np.testing.assert_array_equal(oi[n:], np.full(n, 4))


@triton.jit
def _libdevice_kernel(X, Y, OUT, OUT_I, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.5)
    y = tl.load(Y + offs, mask=mask, other=1.0)
    tl.store(OUT + 0 * n + offs, libdevice.log1p(x), mask=mask)
    tl.store(OUT + 1 * n + offs, libdevice.expm1(x), mask=mask)
    tl.store(OUT + 2 * n + offs, libdevice.pow(tl.abs(x), y), mask=mask)
    tl.store(OUT + 3 * n + offs, libdevice.atan2(x, y), mask=mask)
    tl.store(OUT + 4 * n + offs, libdevice.erfinv(x * 0.99), mask=mask)
    tl.store(OUT + 5 * n + offs, libdevice.round(x * 10), mask=mask)
    tl.store(OUT + 6 * n + offs, libdevice.hypot(x, y), mask=mask)
    tl.store(OUT + 7 * n + offs, libdevice.cbrt(y), mask=mask)
    tl.store(OUT + 8 * n + offs, libdevice.copysign(y, x), mask=mask)
    tl.store(OUT_I + offs, libdevice.float2int_rn(x * 100), mask=mask)
    xd = x.to(tl.float64)
    tl.store(OUT + 9 * n + offs, libdevice.lgamma(xd + 2.0).to(tl.float32), mask=mask)


def test_libdevice_functions(backend, rng):
    n = 500
    x = rng.uniform(-0.99, 0.99, n).astype(np.float32)
    y = (rng.uniform(0.1, 3, n) * np.where(rng.random(n) < 0.3, -1, 1)).astype(np.float32)
    out = _poison(10 * n, np.float32, backend)
    oi = _poison(n, np.int32, backend, -999)
    _libdevice_kernel[(triton.cdiv(n, 128),)](device_array(x, backend), device_array(y, backend), out, oi, n,
                                              BLOCK=128)
    o = to_numpy(out).reshape(10, n).astype(np.float64)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(o[0], np.log1p(xd), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(o[1], np.expm1(xd), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(o[2], np.abs(xd) ** yd, rtol=1e-5)
    np.testing.assert_allclose(o[3], np.arctan2(xd, yd), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose([math.erf(v) for v in o[4]], (x * np.float32(0.99)).astype(np.float64),
                               rtol=1e-5, atol=1e-6)
    x10 = (x * np.float32(10)).astype(np.float64)
    np.testing.assert_array_equal(o[5], np.sign(x10) * np.floor(np.abs(x10) + 0.5))  # halves away from zero
    np.testing.assert_allclose(o[6], np.hypot(xd, yd), rtol=1e-6)
    np.testing.assert_allclose(o[7], np.cbrt(yd), rtol=1e-6)
    np.testing.assert_array_equal(o[8], np.copysign(y, x))
    np.testing.assert_array_equal(to_numpy(oi), np.rint(x * np.float32(100)).astype(np.int32))
    np.testing.assert_allclose(o[9], [math.lgamma(v + 2.0) for v in xd], rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------- pointers, shapes, integers


@triton.jit
def _concat_rows(A, B, OUT, n_a, n_b, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if pid < n_a:
        src = A + pid * N
    else:
        src = B + (pid - n_a) * N
    x = tl.load(src + cols, mask=cols < N)
    flip = pid % 2 == 1
    dst = tl.where(flip, OUT + (n_a + n_b) * N, OUT)
    tl.store(dst + pid * N + cols, x, mask=cols < N)


def test_pointer_chosen_by_if_and_by_where(backend, rng):
    na, nb, N = 3, 4, 20
    a = rng.standard_normal((na, N)).astype(np.float32)
    b = rng.standard_normal((nb, N)).astype(np.float32)
    out = _poison((2, na + nb, N), np.float32, backend)
    _concat_rows[(na + nb,)](device_array(a, backend), device_array(b, backend), out, na, nb, N, BLOCK=32)
    out = to_numpy(out)
    cat = np.concatenate([a, b])
    for r in range(na + nb):
        np.testing.assert_array_equal(out[r % 2, r], cat[r])
        assert np.isnan(out[1 - r % 2, r]).all()


@triton.jit
def _shape_ops(X, OUT, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(X + a * B * C + b * C + c)
    p = tl.permute(x, (2, 0, 1))  # [C, A, B]
    o0 = tl.arange(0, C)[:, None, None] * A * B + tl.arange(0, A)[None, :, None] * B + tl.arange(0, B)[None, None, :]
    tl.store(OUT + o0, p)
    flat = tl.ravel(x)
    n: tl.constexpr = A * B * C
    tl.store(OUT + n + tl.arange(0, n), tl.flip(flat, 0))
    tl.store(OUT + 2 * n + tl.arange(0, 2 * n), tl.interleave(flat, flat * 2))
    tl.store(OUT + 4 * n + tl.arange(0, 2 * n), tl.cat(flat, -flat))


def test_permute_flip_interleave_cat(backend, rng):
    A, B, C = 2, 4, 8
    x = rng.standard_normal((A, B, C)).astype(np.float32)
    n = A * B * C
    out = _poison(6 * n, np.float32, backend)
    _shape_ops[(1,)](device_array(x, backend), out, A=A, B=B, C=C, num_warps=8)
    out = to_numpy(out)
    np.testing.assert_array_equal(out[:n], x.transpose(2, 0, 1).ravel())
    np.testing.assert_array_equal(out[n:2 * n], x.ravel()[::-1])
    np.testing.assert_array_equal(out[2 * n:4 * n], np.stack([x.ravel(), x.ravel() * 2], 1).ravel())
    np.testing.assert_array_equal(out[4 * n:], np.concatenate([x.ravel(), -x.ravel()]))


@triton.jit
def _int64_offsets(X, OUT, base_off, stride, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    big = base_off + offs.to(tl.int64) * stride
    tl.store(OUT + offs, big, mask=mask)
    tl.store(OUT + n + offs, (big >> 20).to(tl.int32).to(tl.int64), mask=mask)
    x = tl.load(X + offs, mask=mask)
    tl.store(OUT + 2 * n + offs, x * (1 << 40), mask=mask)


def test_int64_arguments_and_arithmetic(backend, rng):
    n = 200
    x = rng.integers(-1000, 1000, n).astype(np.int64)
    out = _poison(3 * n, np.int64, backend, 0)
    base, stride = 3 * 2 ** 33 + 7, 2 ** 31 + 5
    _int64_offsets[(triton.cdiv(n, 64),)](device_array(x, backend), out, base, stride, n, BLOCK=64)
    out = to_numpy(out)
    big = base + np.arange(n, dtype=np.int64) * stride
    np.testing.assert_array_equal(out[:n], big)
    np.testing.assert_array_equal(out[n:2 * n], (big >> 20).astype(np.int32).astype(np.int64))
    np.testing.assert_array_equal(out[2 * n:], x * (1 << 40))


# ---------------------------------------------------------------------------- random numbers


@triton.jit
def _noise_kernel(X, Y, BITS, n, seed, sigma, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x + sigma * tl.randn(seed, offs), mask=mask)
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    tl.store(BITS + offs * 4 + 0, r0, mask=mask)
    tl.store(BITS + offs * 4 + 3, r3, mask=mask)


def test_randn_noise_and_randint4x(backend, rng):
    n, seed = 300, 42
    x = rng.standard_normal(n).astype(np.float32)
    y = _poison(n, np.float32, backend)
    bits = device_array(np.zeros(4 * n, np.uint32), backend)
    _noise_kernel[(triton.cdiv(n, 128),)](device_array(x, backend), y, bits, n, seed, 0.5, BLOCK=128)
    bits = to_numpy(bits)
    w = philox.randint4x(seed, np.arange(n))
    np.testing.assert_array_equal(bits[0::4], w[0])
    np.testing.assert_array_equal(bits[3::4], w[3])
    z, _ = philox.box_muller(philox.uniform(w[0]), philox.uniform(w[1]))
    np.testing.assert_allclose(to_numpy(y), x + 0.5 * z, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------- host-side features and Python sugar


@triton.heuristics({"EVEN_N": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit(do_not_specialize=["scale"])
def _heuristic_kernel(X, Y, n, scale, BLOCK: tl.constexpr = 64, EVEN_N: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        x = tl.load(X + offs)
        tl.store(Y + offs, x * scale + 1.0)
    else:
        x = tl.load(X + offs, mask=offs < n)
        tl.store(Y + offs, x * scale - 1.0, mask=offs < n)


@pytest.mark.parametrize("n", [256, 250])
def test_heuristics_and_do_not_specialize(backend, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    shift = 1.0 if n % 64 == 0 else -1.0
    for scale in (1, 2.5):
        y = _poison(n, np.float32, backend)
        _heuristic_kernel[(triton.cdiv(n, 64),)](device_array(x, backend), y, n, scale, BLOCK=64)
        # x * scale + shift is one fma on the GPU (fp fusion): near-cancelling results
        # differ from the twice-rounded reference by up to an ulp of the product.
        np.testing.assert_allclose(to_numpy(y), x * np.float32(scale) + shift, rtol=1e-6, atol=1e-6)


GLOBAL_SCALE = tl.constexpr(3)


@triton.jit
def _scaled_helper(x, BLOCK: tl.constexpr, scale=2.0, shift=0.0):
    tl.static_assert(BLOCK >= 16)
    return x * scale + shift


@triton.jit
def _sugar_kernel(X, OUT, lo, hi, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    inside = (lo <= x) & (x < hi)
    y = tl.where(inside, abs(x), -x)
    y = tl.where(~inside, y * GLOBAL_SCALE, y)
    factor = 10.0 if MODE == "ten" else 1.0
    y = _scaled_helper(y, BLOCK, shift=factor)
    tl.store(OUT + offs, y, mask=mask)
    rs = x.reshape(BLOCK // 16, 16).sum(axis=1)
    tl.store(OUT + n + tl.program_id(0) * (BLOCK // 16) + tl.arange(0, BLOCK // 16), rs)


@pytest.mark.parametrize("mode", ["ten", "one"])
def test_python_sugar_globals_keyword_helpers(backend, rng, mode):
    n, B = 256, 64
    x = rng.standard_normal(n).astype(np.float32)
    out = _poison(n + n // 16, np.float32, backend)
    _sugar_kernel[(n // B,)](device_array(x, backend), out, -0.5, 0.7, n, BLOCK=B, MODE=mode)
    out = to_numpy(out)
    inside = (x >= -0.5) & (x < 0.7)
    y = np.where(inside, np.abs(x), -x)
    y = np.where(~inside, y * 3, y)
    y = y * 2 + (10.0 if mode == "ten" else 1.0)
    np.testing.assert_allclose(out[:n], y, rtol=1e-6)
    np.testing.assert_allclose(out[n:], x.reshape(-1, 16).astype(np.float64).sum(1), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- more host and language features


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2), triton.Config({"BLOCK": 128}, num_warps=4),
                          triton.Config({"BLOCK": 2048}, num_warps=8)],
                 key=["n"], reset_to_zero=["total_ptr"],
                 prune_configs_by={"early_config_prune": lambda configs, named_args, **kwargs:
                                   [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]})
@triton.jit
def _atomic_sum_autotuned(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0, eviction_policy="evict_last")
    tl.atomic_add(total_ptr, tl.sum(x, axis=0))


def test_autotune_prune_and_reset_to_zero(backend, rng):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    total = device_array(np.full(1, 123.0, np.float32), backend)  # reset_to_zero clears it before each run
    _atomic_sum_autotuned[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](device_array(x, backend), total, n)
    np.testing.assert_allclose(to_numpy(total)[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-4)
    assert _atomic_sum_autotuned.best_config.kwargs["BLOCK"] in (64, 128)


@triton.jit
def _ternary_and_sums(X, Y, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)  # fp16
    scale = 2.0 if pid == 0 else 3.0  # a runtime condition
    s = tl.sum(x, axis=0, dtype=tl.float32)
    c = tl.cumsum(x.to(tl.float32) * scale, 0, reverse=True)
    tl.store(Y + offs, c, mask=offs < n)
    z = tl.full([], 0, tl.int32)
    tl.store(Y + n + 2 * pid, s)
    tl.store(Y + n + 2 * pid + 1, z + tl.max(x.to(tl.int8), axis=0))


def test_runtime_ternary_sum_dtype_reverse_cumsum(backend, rng):
    n, B = 128, 64
    x = (rng.standard_normal(n) * 5).astype(np.float16)
    y = _poison(n + 4, np.float32, backend)
    _ternary_and_sums[(2,)](device_array(x, backend), y, n, BLOCK=B)
    y = to_numpy(y)
    xd = x.astype(np.float64).reshape(2, B)
    for p, scale in ((0, 2.0), (1, 3.0)):
        np.testing.assert_allclose(y[p * B:(p + 1) * B], np.cumsum((xd[p] * scale)[::-1])[::-1], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(y[n + 2 * p], xd[p].sum(), rtol=1e-5, atol=1e-5)
        assert y[n + 2 * p + 1] == np.trunc(xd[p]).max()


@triton.jit
def _fibonacci_swap(X, Y, n):
    a = tl.load(X)
    b = tl.load(X + 1)
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    tl.store(Y, a)
    tl.store(Y + 1, b)


def test_while_tuple_swap(backend, rng):
    y = _poison(2, np.float32, backend)
    _fibonacci_swap[(1,)](device_array(np.array([0, 1], np.float32), backend), y, 10)
    np.testing.assert_array_equal(to_numpy(y), [55, 89])


@triton.jit
def _bmm_transposed_a(A, B, C, BATCH: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    b = tl.arange(0, BATCH)[:, None, None]
    kk = tl.arange(0, K)
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    at = tl.load(A + b * K * M + kk[None, :, None] * M + m[None, None, :])  # [B, K, M]: A stored transposed
    a = tl.trans(at, 0, 2, 1)  # [B, M, K]
    bb = tl.load(B + b * K * N + kk[None, :, None] * N + n[None, None, :])  # [B, K, N]
    acc = tl.full((BATCH, M, N), 1.0, tl.float32)
    c = tl.dot(a, bb, acc)
    tl.store(C + b * M * N + m[None, :, None] * N + n[None, None, :], c)


def test_batched_dot_with_3d_trans_and_acc(backend, rng):
    Bt, M, N, K = 2, 16, 16, 32
    at = rng.standard_normal((Bt, K, M)).astype(np.float16)
    b = rng.standard_normal((Bt, K, N)).astype(np.float16)
    c = _poison((Bt, M, N), np.float32, backend)
    _bmm_transposed_a[(1,)](device_array(at, backend), device_array(b, backend), c, BATCH=Bt, M=M, N=N, K=K)
    ref = np.einsum("bkm,bkn->bmn", at.astype(np.float64), b.astype(np.float64)) + 1
    np.testing.assert_allclose(to_numpy(c), ref, rtol=1e-3, atol=1e-3)


@triton.jit
def _tf32_and_ieee_dot(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)[:, None]
    n = tl.arange(0, N)[None, :]
    k = tl.arange(0, K)
    a = tl.load(A + m * K + k[None, :])
    b = tl.load(B + k[:, None] * N + n)
    tl.store(C + m * N + n, tl.dot(a, b, input_precision="tf32"))
    tl.store(C + M * N + m * N + n, tl.dot(a, b, allow_tf32=False))


def test_fp32_dot_tf32_and_ieee(backend, rng):
    M, N, K = 32, 32, 32
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = _poison(2 * M * N, np.float32, backend)
    _tf32_and_ieee_dot[(1,)](device_array(a, backend), device_array(b, backend), c, M=M, N=N, K=K, num_warps=8)
    c = to_numpy(c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c[:M * N].reshape(M, N), ref, rtol=1e-2, atol=5e-2)
    np.testing.assert_allclose(c[M * N:].reshape(M, N), ref, rtol=1e-5, atol=1e-4)


@triton.jit
def _split_3d(X, Y, A: tl.constexpr, B: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, 2)[None, None, :]
    x = tl.load(X + a * B * 2 + b * 2 + c)
    lo, hi = tl.split(x)
    tl.store(Y + tl.arange(0, A)[:, None] * B + tl.arange(0, B)[None, :], lo - hi)
    tl.store(Y + A * B, tl.sum(lo))
    tl.store(Y + A * B + 1, tl.max(hi))


def test_split_of_a_3d_block(backend, rng):
    A, B = 4, 8
    x = rng.standard_normal((A, B, 2)).astype(np.float32)
    y = _poison(A * B + 2, np.float32, backend)
    _split_3d[(1,)](device_array(x, backend), y, A=A, B=B)
    y = to_numpy(y)
    np.testing.assert_allclose(y[:A * B].reshape(A, B), x[..., 0] - x[..., 1], rtol=1e-6)
    np.testing.assert_allclose(y[A * B], x[..., 0].astype(np.float64).sum(), rtol=1e-5)
    assert y[A * B + 1] == x[..., 1].max()
