"""Grouped-query attention: fewer key/value heads than query heads (32 query heads, 8
key/value heads: each group of 4 query heads reads one key/value head).

- Prefill: the flash-attention forward loop, each query head reading its group's
  key/value head; causal, fp16 and bf16, head dim 128.
- Decode: one query token per sequence against a long paged key/value cache (vLLM's
  layout: blocks of PAGE_SIZE tokens, a block table per sequence, sequences of different
  lengths), split-KV ("flash decoding") as vLLM's and SGLang's Triton decode kernels do:
  stage 1 gives each (sequence, key/value head, split) a program that computes the whole
  group of query heads at once (so the dot has a useful M) over its share of the tokens,
  writing a partial output and its log-sum-exp; stage 2 merges the splits.
"""
import math

import torch
import triton
import triton.language as tl

from case import Case


# ---------------------------------------------------------------------------- prefill
@triton.jit
def _gqa_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n, lo, hi, N_CTX, qk_scale,
               BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        if MASKED:
            k = tl.load(k_ptrs + start_n * stride_kn, mask=cols[:, None] < N_CTX, other=0.0)
            v = tl.load(v_ptrs + start_n * stride_vn, mask=cols[:, None] < N_CTX, other=0.0)
        else:
            k = tl.load(k_ptrs + start_n * stride_kn)
            v = tl.load(v_ptrs + start_n * stride_vn)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        if MASKED:
            qk = tl.where((cols[None, :] < N_CTX) & (offs_m[:, None] >= cols[None, :]), qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
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
    key=["N_CTX", "HEAD_DIM"],
)
@triton.jit
def gqa_fwd_kernel(Q, K, V, Out, sm_scale,
                   stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn,
                   stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om,
                   H, N_CTX, GROUP_SIZE: tl.constexpr, HEAD_DIM: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    off_kvh = off_h // GROUP_SIZE
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + off_z.to(tl.int64) * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :]
    k_ptrs = K + off_z.to(tl.int64) * stride_kz + off_kvh * stride_kh + offs_n[:, None] * stride_kn + offs_d[None, :]
    v_ptrs = V + off_z.to(tl.int64) * stride_vz + off_kvh * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :]

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    # causal: keys before the block of queries unmasked, the diagonal block masked
    acc, l_i, m_i = _gqa_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n,
                               0, start_m * BLOCK_M, N_CTX, qk_scale, BLOCK_N, False)
    acc, l_i, m_i = _gqa_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n,
                               start_m * BLOCK_M, tl.minimum((start_m + 1) * BLOCK_M, N_CTX), N_CTX, qk_scale,
                               BLOCK_N, True)
    acc = acc / l_i[:, None]
    o_ptrs = Out + off_z.to(tl.int64) * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def gqa_attention(q, k, v):
    """Causal attention; q (batch, heads, seq, dim), k and v (batch, kv_heads, seq, dim),
    the last dimension contiguous."""
    batch, heads, n_ctx, head_dim = q.shape
    kv_heads = k.shape[1]
    assert heads % kv_heads == 0 and q.stride(-1) == k.stride(-1) == v.stride(-1) == 1
    out = torch.empty_like(q)

    def grid(meta):
        return (triton.cdiv(n_ctx, meta["BLOCK_M"]), batch * heads)

    gqa_fwd_kernel[grid](q, k, v, out, 1.0 / math.sqrt(head_dim),
                         q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                         v.stride(0), v.stride(1), v.stride(2), out.stride(0), out.stride(1), out.stride(2),
                         heads, n_ctx, GROUP_SIZE=heads // kv_heads, HEAD_DIM=head_dim)
    return out


# ----------------------------------------------------------------------------- decode
@triton.jit
def decode_split_kernel(Q, K_cache, V_cache, Block_table, Seq_lens, Mid_o, Mid_lse, sm_scale,
                        stride_qb, stride_qh, stride_kblk, stride_kpage, stride_kh,
                        stride_vblk, stride_vpage, stride_vh, stride_bt,
                        stride_mb, stride_mh, stride_ms, stride_lb, stride_lh,
                        GROUP_SIZE: tl.constexpr, BLOCK_H: tl.constexpr, HEAD_DIM: tl.constexpr,
                        BLOCK_N: tl.constexpr, PAGE_SIZE: tl.constexpr, NUM_SPLITS: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    split = tl.program_id(2)
    heads = kv_head * GROUP_SIZE + tl.arange(0, BLOCK_H)     # the group, padded to BLOCK_H rows
    head_ok = tl.arange(0, BLOCK_H) < GROUP_SIZE
    offs_d = tl.arange(0, HEAD_DIM)
    offs_n = tl.arange(0, BLOCK_N)

    seq_len = tl.load(Seq_lens + seq)
    per_split = tl.cdiv(tl.cdiv(seq_len, NUM_SPLITS), PAGE_SIZE) * PAGE_SIZE
    start = split * per_split
    end = tl.minimum(start + per_split, seq_len)

    q = tl.load(Q + seq * stride_qb + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    if end > start:
        for start_n in range(start, end, BLOCK_N):
            tokens = start_n + offs_n
            valid = tokens < end
            # token t lives in the cache block Block_table[seq, t // PAGE_SIZE], row t % PAGE_SIZE
            block = tl.load(Block_table + seq * stride_bt + tokens // PAGE_SIZE, mask=valid, other=0)
            row = block.to(tl.int64) * stride_kblk + (tokens % PAGE_SIZE) * stride_kpage + kv_head * stride_kh
            k = tl.load(K_cache + row[:, None] + offs_d[None, :], mask=valid[:, None], other=0.0)
            qk = tl.dot(q, tl.trans(k)) * qk_scale
            qk = tl.where(valid[None, :], qk, float("-inf"))
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            p = tl.math.exp2(qk - m_ij[:, None])
            alpha = tl.math.exp2(m_i - m_ij)
            l_i = l_i * alpha + tl.sum(p, 1)
            v_row = block.to(tl.int64) * stride_vblk + (tokens % PAGE_SIZE) * stride_vpage + kv_head * stride_vh
            v = tl.load(V_cache + v_row[:, None] + offs_d[None, :], mask=valid[:, None], other=0.0)
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
            m_i = m_ij
        mid = seq * stride_mb + heads * stride_mh + split * stride_ms
        tl.store(Mid_o + mid[:, None] + offs_d[None, :], acc / l_i[:, None], mask=head_ok[:, None])
        tl.store(Mid_lse + seq * stride_lb + heads * stride_lh + split, m_i + tl.math.log2(l_i), mask=head_ok)


@triton.jit
def decode_reduce_kernel(Mid_o, Mid_lse, Out, Seq_lens, stride_mb, stride_mh, stride_ms, stride_lb, stride_lh,
                         stride_ob, stride_oh,
                         HEAD_DIM: tl.constexpr, NUM_SPLITS: tl.constexpr, PAGE_SIZE: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    offs_d = tl.arange(0, HEAD_DIM)
    seq_len = tl.load(Seq_lens + seq)
    per_split = tl.cdiv(tl.cdiv(seq_len, NUM_SPLITS), PAGE_SIZE) * PAGE_SIZE
    m = float("-inf")
    total = 0.0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for split in range(NUM_SPLITS):
        if split * per_split < seq_len:   # splits past the end were left empty
            part = tl.load(Mid_o + seq * stride_mb + head * stride_mh + split * stride_ms + offs_d)
            lse = tl.load(Mid_lse + seq * stride_lb + head * stride_lh + split)
            new_m = tl.maximum(m, lse)
            scale = tl.math.exp2(m - new_m)
            weight = tl.math.exp2(lse - new_m)
            acc = acc * scale + part * weight
            total = total * scale + weight
            m = new_m
    tl.store(Out + seq * stride_ob + head * stride_oh + offs_d, (acc / total).to(Out.dtype.element_ty))


def paged_decode(q, k_cache, v_cache, block_table, seq_lens, num_splits=16):
    """One decoding step: q (seqs, heads, dim); k_cache, v_cache (blocks, page_size,
    kv_heads, dim); block_table (seqs, max_blocks) int32; seq_lens (seqs,) int32."""
    seqs, heads, head_dim = q.shape
    _, page_size, kv_heads, _ = k_cache.shape
    group = heads // kv_heads
    block_h = max(16, triton.next_power_of_2(group))   # tl.dot wants 16 rows at least
    mid_o = torch.empty(seqs, heads, num_splits, head_dim, device=q.device, dtype=torch.float32)
    mid_lse = torch.empty(seqs, heads, num_splits, device=q.device, dtype=torch.float32)
    decode_split_kernel[(seqs, kv_heads, num_splits)](
        q, k_cache, v_cache, block_table, seq_lens, mid_o, mid_lse, 1.0 / math.sqrt(head_dim),
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), block_table.stride(0),
        mid_o.stride(0), mid_o.stride(1), mid_o.stride(2), mid_lse.stride(0), mid_lse.stride(1),
        GROUP_SIZE=group, BLOCK_H=block_h, HEAD_DIM=head_dim, BLOCK_N=64, PAGE_SIZE=page_size,
        NUM_SPLITS=num_splits, num_warps=4, num_stages=2)
    out = torch.empty_like(q)
    decode_reduce_kernel[(seqs, heads)](mid_o, mid_lse, out, seq_lens, mid_o.stride(0), mid_o.stride(1),
                                        mid_o.stride(2), mid_lse.stride(0), mid_lse.stride(1),
                                        out.stride(0), out.stride(1),
                                        HEAD_DIM=head_dim, NUM_SPLITS=num_splits, PAGE_SIZE=page_size)
    return out


# ---------------------------------------------------------------------------- cases
def _wide(t):
    return torch.float64 if t.device.type == "cpu" else torch.float32


def gqa_reference(q, k, v):
    group = q.shape[1] // k.shape[1]
    wide = _wide(q)
    k, v = (t.to(wide).repeat_interleave(group, dim=1) for t in (k, v))
    return torch.nn.functional.scaled_dot_product_attention(q.to(wide), k, v, is_causal=True)


def decode_inputs(seqs, heads, kv_heads, dim, max_len, page_size, dtype, device):
    """Sequence lengths at random in [max_len / 4, max_len] (one of exactly max_len), their
    pages scattered through the cache in random order."""
    lens = torch.randint(max_len // 4, max_len + 1, (seqs,))
    lens[0] = max_len
    pages = (lens + page_size - 1) // page_size
    max_pages = int(pages.max())
    total = int(pages.sum())
    order = torch.randperm(total + 7)[:total].to(torch.int32)   # a few cache blocks belong to no one
    table = torch.zeros(seqs, max_pages, dtype=torch.int32)
    used = 0
    for s in range(seqs):
        table[s, :pages[s]] = order[used:used + pages[s]]
        used += int(pages[s])
    blocks = total + 7
    return {"q": torch.randn(seqs, heads, dim, device=device).to(dtype),
            "k_cache": torch.randn(blocks, page_size, kv_heads, dim, device=device).to(dtype),
            "v_cache": torch.randn(blocks, page_size, kv_heads, dim, device=device).to(dtype),
            "block_table": table.to(device), "seq_lens": lens.to(torch.int32).to(device)}


def decode_reference(i):
    q, table, lens = i["q"], i["block_table"].long(), i["seq_lens"].tolist()
    wide = _wide(q)
    page = i["k_cache"].shape[1]
    group = q.shape[1] // i["k_cache"].shape[2]
    out = torch.empty(q.shape, dtype=wide, device=q.device)
    for s, n in enumerate(lens):
        tokens = torch.arange(n, device=q.device)
        where = table[s, tokens // page], tokens % page
        k = i["k_cache"][where].to(wide).repeat_interleave(group, dim=1)   # (n, heads, dim)
        v = i["v_cache"][where].to(wide).repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[s].to(wide), k) / math.sqrt(q.shape[-1])
        out[s] = torch.einsum("hn,nhd->hd", torch.softmax(scores, -1), v)
    return out


def cases(device, size):
    prefill = {"full": [(4, 32, 8, 4096, 128), (16, 32, 8, 1024, 128)], "quick": [(2, 16, 4, 1024, 128)],
               "tiny": [(2, 4, 2, 50, 16), (1, 6, 2, 37, 32)]}[size]
    for dtype, atol, rtol in ((torch.float16, 2e-3, 1e-2), (torch.bfloat16, 1e-2, 2e-2)):
        name = str(dtype).replace("torch.", "")
        for b, h, hkv, n, d in prefill:
            yield Case(f"gqa prefill causal {name} {h}/{hkv} heads", f"{b}x{h}x{n}x{d}",
                       inputs=lambda b=b, h=h, hkv=hkv, n=n, d=d, dtype=dtype: {
                           "q": torch.randn(b, h, n, d, device=device).to(dtype),
                           "k": torch.randn(b, hkv, n, d, device=device).to(dtype),
                           "v": torch.randn(b, hkv, n, d, device=device).to(dtype)},
                       run=lambda m, i: lambda: m.gqa_attention(i["q"], i["k"], i["v"]),
                       reference=lambda i: gqa_reference(i["q"], i["k"], i["v"]),
                       atol=atol, rtol=rtol, flops=2 * b * h * n * n * d)
    # (sequences, query heads, kv heads, head dim, longest sequence, page size, splits)
    decode = {"full": [(32, 32, 8, 128, 8192, 16, 16), (128, 32, 8, 128, 2048, 16, 8)],
              "quick": [(8, 32, 8, 128, 1024, 16, 8)],
              "tiny": [(3, 8, 2, 32, 70, 16, 4), (2, 6, 1, 16, 45, 8, 3)]}[size]
    for dtype, atol, rtol in ((torch.float16, 2e-3, 1e-2), (torch.bfloat16, 1e-2, 2e-2)):
        name = str(dtype).replace("torch.", "")
        for seqs, h, hkv, d, max_len, page, splits in decode:
            # what a step reads: the cache entries of every sequence, about 5/8 of the longest each
            moved = 2 * seqs * (5 * max_len // 8) * hkv * d * dtype.itemsize
            yield Case(f"paged decode {name} {h}/{hkv} heads, {splits} splits", f"{seqs}x{max_len}x{d}",
                       inputs=lambda seqs=seqs, h=h, hkv=hkv, d=d, max_len=max_len, page=page, dtype=dtype:
                           decode_inputs(seqs, h, hkv, d, max_len, page, dtype, device),
                       run=lambda m, i, splits=splits: lambda: m.paged_decode(
                           i["q"], i["k_cache"], i["v_cache"], i["block_table"], i["seq_lens"], splits),
                       reference=decode_reference, atol=atol, rtol=rtol, bytes=moved)
