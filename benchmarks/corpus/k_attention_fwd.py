"""Flash-attention forward (FlashAttention-2's loop as the Triton libraries write it): one
program per block of queries and (batch, head), keys and values streamed through in
blocks, an online softmax in base 2 (`exp2`, the scale folded with log2(e)), `tl.dot` for
QK^T and PV. Causal and not, head dim 64 and 128, fp16 and bf16. The row log-sum-exp is
saved (base 2) as a backward pass would need it."""
import math

import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n, lo, hi, N_CTX,
                    qk_scale, BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        if MASKED:
            k = tl.load(k_ptrs + start_n * stride_kn, mask=cols[:, None] < N_CTX, other=0.0)
        else:
            k = tl.load(k_ptrs + start_n * stride_kn)
        qk = tl.dot(q, tl.trans(k))
        if MASKED:
            keep = cols[None, :] < N_CTX
            if CAUSAL:
                keep = keep & (offs_m[:, None] >= cols[None, :])
            qk = tl.where(keep, qk * qk_scale, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if MASKED:
            v = tl.load(v_ptrs + start_n * stride_vn, mask=cols[:, None] < N_CTX, other=0.0)
        else:
            v = tl.load(v_ptrs + start_n * stride_vn)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


def _prune(configs, named_args, **kwargs):
    # causal blocks split the key range at BLOCK_M, which BLOCK_N must divide
    kept = [c for c in configs if c.kwargs["BLOCK_M"] % c.kwargs["BLOCK_N"] == 0]
    # a head dim of 128 with 128x128 tiles and 4 warps spills on Hopper; leave it out
    return [c for c in kept if not (kwargs.get("HEAD_DIM", 64) >= 128 and c.kwargs["BLOCK_N"] == 128
                                    and c.num_warps == 4)] or kept


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=4),
    ],
    key=["N_CTX", "HEAD_DIM", "CAUSAL"],
    prune_configs_by={"early_config_prune": _prune},
)
@triton.jit
def attn_fwd_kernel(Q, K, V, Out, LSE, sm_scale,
                    stride_qz, stride_qh, stride_qm, stride_qk,
                    stride_kz, stride_kh, stride_kn, stride_kk,
                    stride_vz, stride_vh, stride_vn, stride_vk,
                    stride_oz, stride_oh, stride_om, stride_ok,
                    H, N_CTX,
                    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_base = Q + off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_base = K + off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_base = V + off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_base = Out + off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk
    k_ptrs = k_base + offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kk
    v_ptrs = v_base + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vk

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e): exp(x) = exp2(x * log2(e))

    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    if CAUSAL:
        # keys before this block of queries are seen by every query: no mask
        full_hi = start_m * BLOCK_M
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    else:
        full_hi = (N_CTX // BLOCK_N) * BLOCK_N
        hi = N_CTX
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n,
                                    0, full_hi, N_CTX, qk_scale, BLOCK_N, False, CAUSAL)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n,
                                    full_hi, hi, N_CTX, qk_scale, BLOCK_N, True, CAUSAL)

    acc = acc / l_i[:, None]
    tl.store(LSE + off_hz.to(tl.int64) * N_CTX + offs_m, m_i + tl.math.log2(l_i), mask=offs_m < N_CTX)
    o_ptrs = o_base + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def attention(q, k, v, causal, sm_scale=None):
    """softmax(q k^T * sm_scale) v for q, k, v of shape (batch, heads, seq, head_dim)."""
    batch, heads, n_ctx, head_dim = q.shape
    assert k.shape == v.shape == q.shape and head_dim in (16, 32, 64, 128)
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(head_dim)
    out = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_ctx), device=q.device, dtype=torch.float32)

    def grid(meta):
        return (triton.cdiv(n_ctx, meta["BLOCK_M"]), batch * heads)

    attn_fwd_kernel[grid](q, k, v, out, lse, sm_scale,
                          q.stride(0), q.stride(1), q.stride(2), q.stride(3),
                          k.stride(0), k.stride(1), k.stride(2), k.stride(3),
                          v.stride(0), v.stride(1), v.stride(2), v.stride(3),
                          out.stride(0), out.stride(1), out.stride(2), out.stride(3),
                          heads, n_ctx, HEAD_DIM=head_dim, CAUSAL=causal)
    return out


def reference(q, k, v, causal):
    """SDPA in float64 on the CPU; in float32 on the GPU (its fused kernels keep the
    full-size score matrix out of memory)."""
    wide = torch.float64 if q.device.type == "cpu" else torch.float32
    return torch.nn.functional.scaled_dot_product_attention(q.to(wide), k.to(wide), v.to(wide), is_causal=causal)


def cases(device, size):
    shapes = {"full": [(4, 32, 4096, 64), (4, 32, 4096, 128), (16, 32, 1024, 64), (16, 32, 1024, 128)],
              "quick": [(2, 8, 1024, 64)],
              "tiny": [(2, 2, 50, 16), (1, 3, 64, 32)]}[size]
    dtypes = ((torch.float16, 2e-3, 1e-2), (torch.bfloat16, 1e-2, 2e-2))
    for dtype, atol, rtol in dtypes:
        name = str(dtype).replace("torch.", "")
        for causal in (False, True):
            for b, h, n, d in shapes:
                flops = 4 * b * h * n * n * d * (0.5 if causal else 1.0)
                yield Case(f"attention fwd {'causal' if causal else 'full'} {name}", f"{b}x{h}x{n}x{d}",
                           inputs=lambda b=b, h=h, n=n, d=d, dtype=dtype: {
                               t: torch.randn(b, h, n, d, device=device).to(dtype) for t in "qkv"},
                           run=lambda m, i, causal=causal: lambda: m.attention(i["q"], i["k"], i["v"], causal),
                           reference=lambda i, causal=causal: reference(i["q"], i["k"], i["v"], causal),
                           atol=atol, rtol=rtol, flops=flops)
