"""Variable-length causal attention forward (flash-attention's `varlen` interface): the
sequences of a batch packed one after another into (total_tokens, heads, head_dim)
tensors, `cu_seqlens` holding where each begins (and the total at its end). The grid
covers the longest sequence; programs past the end of a shorter one return at once.
fp16 and bf16, head dim 128 (and 64)."""
import math

import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def _varlen_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_tok, offs_m, offs_n, lo, hi, seq_len, qk_scale,
                  BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        if MASKED:
            k = tl.load(k_ptrs + start_n * stride_tok, mask=cols[:, None] < seq_len, other=0.0)
        else:
            k = tl.load(k_ptrs + start_n * stride_tok)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        if MASKED:
            qk = tl.where((offs_m[:, None] >= cols[None, :]) & (cols[None, :] < seq_len), qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        if MASKED:
            v = tl.load(v_ptrs + start_n * stride_tok, mask=cols[:, None] < seq_len, other=0.0)
        else:
            v = tl.load(v_ptrs + start_n * stride_tok)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_ij
    return acc, l_i, m_i


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3),
    ],
    key=["HEAD_DIM"],
)
@triton.jit
def varlen_fwd_kernel(Q, K, V, Out, cu_seqlens, sm_scale, stride_tok, stride_h,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    seq = tl.program_id(2)
    seq_start = tl.load(cu_seqlens + seq)
    seq_len = tl.load(cu_seqlens + seq + 1) - seq_start
    if start_m * BLOCK_M >= seq_len:
        return

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = seq_start.to(tl.int64) * stride_tok + head * stride_h
    q = tl.load(Q + base + offs_m[:, None] * stride_tok + offs_d[None, :], mask=offs_m[:, None] < seq_len, other=0.0)
    k_ptrs = K + base + offs_n[:, None] * stride_tok + offs_d[None, :]
    v_ptrs = V + base + offs_n[:, None] * stride_tok + offs_d[None, :]

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    acc, l_i, m_i = _varlen_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_tok, offs_m, offs_n,
                                  0, start_m * BLOCK_M, seq_len, qk_scale, BLOCK_N, False)
    acc, l_i, m_i = _varlen_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_tok, offs_m, offs_n,
                                  start_m * BLOCK_M, tl.minimum((start_m + 1) * BLOCK_M, seq_len), seq_len,
                                  qk_scale, BLOCK_N, True)
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_tok + offs_d[None, :], acc.to(Out.dtype.element_ty),
             mask=offs_m[:, None] < seq_len)


def varlen_attention(q, k, v, cu_seqlens, max_seqlen):
    """Causal attention within each packed sequence; q, k, v (total_tokens, heads, head_dim)
    with the same strides, cu_seqlens (batch + 1,) int32."""
    total, heads, head_dim = q.shape
    assert q.stride() == k.stride() == v.stride() and q.stride(2) == 1
    batch = cu_seqlens.numel() - 1
    out = torch.empty_like(q)

    def grid(meta):
        return (triton.cdiv(max_seqlen, meta["BLOCK_M"]), heads, batch)

    varlen_fwd_kernel[grid](q, k, v, out, cu_seqlens, 1.0 / math.sqrt(head_dim), q.stride(0), q.stride(1),
                            HEAD_DIM=head_dim)
    return out


def make_inputs(lengths, heads, head_dim, dtype, device):
    lengths = torch.tensor(lengths, dtype=torch.int32)
    cu = torch.zeros(len(lengths) + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(lengths, 0)
    total = int(cu[-1])
    return {t: torch.randn(total, heads, head_dim, device=device).to(dtype) for t in "qkv"} | {
        "cu_seqlens": cu.to(device), "max_seqlen": int(lengths.max())}


def reference(i):
    wide = torch.float64 if i["q"].device.type == "cpu" else torch.float32
    out = torch.empty(i["q"].shape, dtype=wide, device=i["q"].device)
    bounds = i["cu_seqlens"].tolist()
    for start, end in zip(bounds[:-1], bounds[1:]):
        q, k, v = (i[t][start:end].to(wide).transpose(0, 1) for t in "qkv")   # (heads, len, dim)
        out[start:end] = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(0, 1)
    return out


def cases(device, size):
    generator = torch.Generator().manual_seed(1)
    if size == "full":
        shapes = [(torch.randint(256, 4097, (16,), generator=generator).tolist(), 32, 128),
                  (torch.randint(64, 2049, (64,), generator=generator).tolist(), 32, 64)]
    elif size == "quick":
        shapes = [(torch.randint(128, 1025, (8,), generator=generator).tolist(), 8, 64)]
    else:
        shapes = [([17, 50, 1, 33], 2, 16), ([64, 9, 40], 3, 32)]
    for dtype, atol, rtol in ((torch.float16, 2e-3, 1e-2), (torch.bfloat16, 1e-2, 2e-2)):
        name = str(dtype).replace("torch.", "")
        for lengths, heads, head_dim in shapes:
            flops = sum(2 * heads * n * n * head_dim for n in lengths)   # causal: half of 4 h n^2 d
            yield Case(f"varlen attention causal {name} ({len(lengths)} sequences)",
                       f"{sum(lengths)}x{heads}x{head_dim} (longest {max(lengths)})",
                       inputs=lambda lengths=lengths, heads=heads, head_dim=head_dim, dtype=dtype:
                           make_inputs(lengths, heads, head_dim, dtype, device),
                       run=lambda m, i: lambda: m.varlen_attention(i["q"], i["k"], i["v"], i["cu_seqlens"],
                                                                   i["max_seqlen"]),
                       reference=reference, atol=atol, rtol=rtol, flops=flops)
