"""Flash-attention backward (FlashAttention-2's, as Triton's tutorial 06 and the libraries
built on it split it): a preprocessing kernel for delta = rowsum(O * dO), one kernel that
holds a block of keys and walks the queries for dK and dV, and one that holds a block of
queries and walks the keys for dQ. Probabilities are recomputed from the forward's
log-sum-exp (base 2). Causal and not, head dim 64 and 128, fp16; q, k, v, o and do
contiguous (batch, heads, seq, head_dim)."""
import math

import torch
import triton
import triton.language as tl

from case import Case

LOG2E = 1.4426950408889634


@triton.jit
def attn_bwd_preprocess(O, DO, Delta, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = off_hz.to(tl.int64) * N_CTX + off_m
    mask = off_m[:, None] < N_CTX
    o = tl.load(O + rows[:, None] * HEAD_DIM + offs_d[None, :], mask=mask, other=0.0).to(tl.float32)
    do = tl.load(DO + rows[:, None] * HEAD_DIM + offs_d[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(Delta + rows, tl.sum(o * do, axis=1), mask=off_m < N_CTX)


@triton.jit
def _dkdv_inner(dk, dv, k, v, q_ptrs, do_ptrs, LSE, Delta, stride_tok, qk_scale, start_n, lo, hi, N_CTX,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    offs_n = start_n + tl.arange(0, BLOCK_N)
    for start_m in range(lo, hi, BLOCK_M):
        start_m = tl.multiple_of(start_m, BLOCK_M)
        offs_m = start_m + tl.arange(0, BLOCK_M)
        in_rows = offs_m < N_CTX
        # rows past the end load as zeros: their dO and Q are 0, so they add nothing
        q = tl.load(q_ptrs + start_m * stride_tok, mask=in_rows[:, None], other=0.0)
        do = tl.load(do_ptrs + start_m * stride_tok, mask=in_rows[:, None], other=0.0)
        lse = tl.load(LSE + offs_m, mask=in_rows, other=0.0)
        delta = tl.load(Delta + offs_m, mask=in_rows, other=0.0)
        qkT = tl.dot(k, tl.trans(q))
        pT = tl.math.exp2(qkT * qk_scale - lse[None, :])
        if MASK:
            pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        dv = tl.dot(pT.to(do.dtype), do, dv)
        dpT = tl.dot(v, tl.trans(do))
        dsT = pT * (dpT - delta[None, :])
        dk = tl.dot(dsT.to(q.dtype), q, dk)
    return dk, dv


@triton.jit
def attn_bwd_dkdv(Q, K, V, DO, DK, DV, LSE, Delta, sm_scale,
                  stride_z, stride_h, stride_tok, stride_d, H, N_CTX,
                  HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    base = off_z.to(tl.int64) * stride_z + off_h.to(tl.int64) * stride_h
    LSE += off_hz.to(tl.int64) * N_CTX
    Delta += off_hz.to(tl.int64) * N_CTX

    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    kv_offs = offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d
    k = tl.load(K + base + kv_offs, mask=offs_n[:, None] < N_CTX, other=0.0)
    v = tl.load(V + base + kv_offs, mask=offs_n[:, None] < N_CTX, other=0.0)
    q_ptrs = Q + base + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d
    do_ptrs = DO + base + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d

    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    if CAUSAL:
        # queries of the diagonal block see part of these keys; those after see them all
        dk, dv = _dkdv_inner(dk, dv, k, v, q_ptrs, do_ptrs, LSE, Delta, stride_tok, qk_scale, start_n,
                             start_n, start_n + BLOCK_N, N_CTX, BLOCK_M, BLOCK_N, True)
        lo = start_n + BLOCK_N
    else:
        lo = 0
    dk, dv = _dkdv_inner(dk, dv, k, v, q_ptrs, do_ptrs, LSE, Delta, stride_tok, qk_scale, start_n,
                         lo, N_CTX, N_CTX, BLOCK_M, BLOCK_N, False)

    dk *= sm_scale
    tl.store(DK + base + kv_offs, dk.to(DK.dtype.element_ty), mask=offs_n[:, None] < N_CTX)
    tl.store(DV + base + kv_offs, dv.to(DV.dtype.element_ty), mask=offs_n[:, None] < N_CTX)


@triton.jit
def _dq_inner(dq, q, do, lse, delta, k_ptrs, v_ptrs, stride_tok, qk_scale, start_m, lo, hi, N_CTX,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        offs_n = start_n + tl.arange(0, BLOCK_N)
        in_cols = offs_n[:, None] < N_CTX
        # keys past the end load as zeros: their rows of K are 0, so they add nothing to dQ
        k = tl.load(k_ptrs + start_n * stride_tok, mask=in_cols, other=0.0)
        v = tl.load(v_ptrs + start_n * stride_tok, mask=in_cols, other=0.0)
        qk = tl.dot(q, tl.trans(k))
        p = tl.math.exp2(qk * qk_scale - lse[:, None])
        if MASK:
            p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    return dq


@triton.jit
def attn_bwd_dq(Q, K, V, DO, DQ, LSE, Delta, sm_scale,
                stride_z, stride_h, stride_tok, stride_d, H, N_CTX,
                HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    base = off_z.to(tl.int64) * stride_z + off_h.to(tl.int64) * stride_h

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_offs = offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d
    in_rows = offs_m < N_CTX
    q = tl.load(Q + base + q_offs, mask=in_rows[:, None], other=0.0)
    do = tl.load(DO + base + q_offs, mask=in_rows[:, None], other=0.0)
    lse = tl.load(LSE + off_hz.to(tl.int64) * N_CTX + offs_m, mask=in_rows, other=0.0)
    delta = tl.load(Delta + off_hz.to(tl.int64) * N_CTX + offs_m, mask=in_rows, other=0.0)
    k_ptrs = K + base + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d
    v_ptrs = V + base + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d

    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    if CAUSAL:
        dq = _dq_inner(dq, q, do, lse, delta, k_ptrs, v_ptrs, stride_tok, qk_scale, start_m,
                       0, start_m, N_CTX, BLOCK_M, BLOCK_N, False)
        dq = _dq_inner(dq, q, do, lse, delta, k_ptrs, v_ptrs, stride_tok, qk_scale, start_m,
                       start_m, tl.minimum(start_m + BLOCK_M, N_CTX), N_CTX, BLOCK_M, BLOCK_N, True)
    else:
        dq = _dq_inner(dq, q, do, lse, delta, k_ptrs, v_ptrs, stride_tok, qk_scale, start_m,
                       0, N_CTX, N_CTX, BLOCK_M, BLOCK_N, False)
    dq *= sm_scale
    tl.store(DQ + base + q_offs, dq.to(DQ.dtype.element_ty), mask=in_rows[:, None])


def attention_backward(q, k, v, o, do, lse, causal, sm_scale=None):
    """dq, dk, dv of attention given the forward's output o and base-2 log-sum-exp lse
    (batch, heads, seq), float32."""
    batch, heads, n_ctx, head_dim = q.shape
    assert q.is_contiguous() and k.is_contiguous() and v.is_contiguous() and o.is_contiguous()
    assert do.is_contiguous() and q.stride() == k.stride() == v.stride() == do.stride()
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(head_dim)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    delta = torch.empty_like(lse)
    warps = 4 if head_dim <= 64 else 8
    pre_block = 128
    attn_bwd_preprocess[(triton.cdiv(n_ctx, pre_block), batch * heads)](
        o, do, delta, n_ctx, HEAD_DIM=head_dim, BLOCK_M=pre_block)
    block_m1, block_n1 = 32, 128   # dK/dV: a wide block of keys, narrow steps of queries
    attn_bwd_dkdv[(triton.cdiv(n_ctx, block_n1), batch * heads)](
        q, k, v, do, dk, dv, lse, delta, sm_scale,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3), heads, n_ctx,
        HEAD_DIM=head_dim, CAUSAL=causal, BLOCK_M=block_m1, BLOCK_N=block_n1, num_warps=warps, num_stages=3)
    block_m2, block_n2 = 128, 32   # dQ: a wide block of queries, narrow steps of keys
    attn_bwd_dq[(triton.cdiv(n_ctx, block_m2), batch * heads)](
        q, k, v, do, dq, lse, delta, sm_scale,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3), heads, n_ctx,
        HEAD_DIM=head_dim, CAUSAL=causal, BLOCK_M=block_m2, BLOCK_N=block_n2, num_warps=warps, num_stages=3)
    return dq, dk, dv


def _wide(device):
    return torch.float64 if torch.device(device).type == "cpu" else torch.float32


def make_inputs(b, h, n, d, causal, device):
    """q, k, v, do at random; o and the base-2 log-sum-exp from a forward in higher
    precision, one (batch) slice at a time so the scores of a full shape fit."""
    q, k, v, do = (torch.randn(b, h, n, d, device=device).to(torch.float16) for _ in range(4))
    wide = _wide(device)
    o = torch.empty_like(q)
    lse = torch.empty(b, h, n, device=device, dtype=torch.float32)
    scale = 1.0 / math.sqrt(d)
    for z in range(b):
        s = q[z].to(wide) @ k[z].to(wide).transpose(-1, -2) * scale
        if causal:
            s.masked_fill_(torch.ones(n, n, dtype=torch.bool, device=device).triu(1), float("-inf"))
        row_lse = torch.logsumexp(s, dim=-1)
        o[z] = (torch.exp(s - row_lse[..., None]) @ v[z].to(wide)).to(torch.float16)
        lse[z] = (row_lse * LOG2E).float()
        del s
    return {"q": q, "k": k, "v": v, "do": do, "o": o, "lse": lse}


def reference(i, causal):
    wide = _wide(i["q"].device)
    q, k, v = (i[t].to(wide).requires_grad_() for t in "qkv")
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out.backward(i["do"].to(wide))
    return q.grad, k.grad, v.grad


def cases(device, size):
    shapes = {"full": [(4, 32, 4096, 64), (4, 32, 4096, 128), (16, 32, 1024, 128)],
              "quick": [(2, 8, 1024, 64)],
              "tiny": [(2, 2, 50, 16), (1, 1, 200, 32)]}[size]
    for causal in (False, True):
        for b, h, n, d in shapes:
            flops = 2.5 * 4 * b * h * n * n * d * (0.5 if causal else 1.0)   # 5 matmuls against the forward's 2
            yield Case(f"attention bwd {'causal' if causal else 'full'} float16", f"{b}x{h}x{n}x{d}",
                       inputs=lambda b=b, h=h, n=n, d=d, causal=causal: make_inputs(b, h, n, d, causal, device),
                       run=lambda m, i, causal=causal: lambda: m.attention_backward(
                           i["q"], i["k"], i["v"], i["o"], i["do"], i["lse"], causal),
                       reference=lambda i, causal=causal: reference(i, causal),
                       atol=1e-2, rtol=1e-2, flops=flops)
