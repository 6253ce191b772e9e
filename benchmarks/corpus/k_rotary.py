"""Rotary position embedding (RoPE) applied to queries and keys, in the two layouts
libraries use:

- half-split (Llama/NeoX, `rotate_half`), Liger-Kernel's way: one program per token
  rotates every query and key head of it at once, reading the first half of its cos/sin
  rows (HF's tables repeat the frequencies across the two halves); the backward is the
  same rotation by -theta;
- interleaved (GPT-J, flash-attention's `INTERLEAVED=True`): element pairs (2i, 2i+1) are
  rotated, taken apart with `tl.split` and put back with `tl.interleave`; a program takes
  a block of tokens of one head.

q (batch, seq, q_heads, head_dim), k (batch, seq, kv_heads, head_dim), fp16 and bf16.
"""
import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def rope_half_kernel(Q, K, Q_out, K_out, Cos, Sin, stride_q_tok, stride_k_tok, stride_cos_b, stride_cos_tok,
                     seq_len, NUM_Q_HEADS: tl.constexpr, NUM_K_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
                     BLOCK_Q_HEADS: tl.constexpr, BLOCK_K_HEADS: tl.constexpr, BACKWARD: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)     # over batch * seq
    batch = token // seq_len
    pos = token % seq_len
    HALF: tl.constexpr = HEAD_DIM // 2
    dims = tl.arange(0, HALF)
    cos = tl.load(Cos + batch * stride_cos_b + pos * stride_cos_tok + dims).to(tl.float32)
    sin = tl.load(Sin + batch * stride_cos_b + pos * stride_cos_tok + dims).to(tl.float32)
    if BACKWARD:
        sin = -sin

    q_heads = tl.arange(0, BLOCK_Q_HEADS)
    q_offs = token * stride_q_tok + q_heads[:, None] * HEAD_DIM + dims[None, :]
    q_mask = q_heads[:, None] < NUM_Q_HEADS
    q1 = tl.load(Q + q_offs, mask=q_mask, other=0.0).to(tl.float32)
    q2 = tl.load(Q + q_offs + HALF, mask=q_mask, other=0.0).to(tl.float32)
    tl.store(Q_out + q_offs, (q1 * cos - q2 * sin).to(Q_out.dtype.element_ty), mask=q_mask)
    tl.store(Q_out + q_offs + HALF, (q2 * cos + q1 * sin).to(Q_out.dtype.element_ty), mask=q_mask)

    k_heads = tl.arange(0, BLOCK_K_HEADS)
    k_offs = token * stride_k_tok + k_heads[:, None] * HEAD_DIM + dims[None, :]
    k_mask = k_heads[:, None] < NUM_K_HEADS
    k1 = tl.load(K + k_offs, mask=k_mask, other=0.0).to(tl.float32)
    k2 = tl.load(K + k_offs + HALF, mask=k_mask, other=0.0).to(tl.float32)
    tl.store(K_out + k_offs, (k1 * cos - k2 * sin).to(K_out.dtype.element_ty), mask=k_mask)
    tl.store(K_out + k_offs + HALF, (k2 * cos + k1 * sin).to(K_out.dtype.element_ty), mask=k_mask)


def rope_half(q, k, cos, sin, backward=False):
    """q, k (batch, seq, heads, head_dim) contiguous; cos, sin (1 or batch, seq, head_dim)."""
    batch, seq, q_heads, head_dim = q.shape
    k_heads = k.shape[2]
    assert q.is_contiguous() and k.is_contiguous() and cos.stride() == sin.stride() and cos.stride(-1) == 1
    q_out, k_out = torch.empty_like(q), torch.empty_like(k)
    stride_cos_b = cos.stride(0) if cos.shape[0] == batch else 0
    rope_half_kernel[(batch * seq,)](q, k, q_out, k_out, cos, sin, q.stride(1), k.stride(1), stride_cos_b,
                                     cos.stride(1), seq, NUM_Q_HEADS=q_heads, NUM_K_HEADS=k_heads,
                                     HEAD_DIM=head_dim, BLOCK_Q_HEADS=triton.next_power_of_2(q_heads),
                                     BLOCK_K_HEADS=triton.next_power_of_2(k_heads), BACKWARD=backward)
    return q_out, k_out


@triton.jit
def rope_interleaved_kernel(X, Out, Cos, Sin, stride_xb, stride_xs, stride_xh, stride_ob, stride_os, stride_oh,
                            stride_cos, seq_len, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    head = tl.program_id(1)
    batch = tl.program_id(2)
    HALF: tl.constexpr = HEAD_DIM // 2
    rows = start_m + tl.arange(0, BLOCK_M)
    row_ok = rows[:, None] < seq_len
    dims = tl.arange(0, HEAD_DIM)
    halves = tl.arange(0, HALF)
    x = tl.load(X + batch * stride_xb + head * stride_xh + rows[:, None] * stride_xs + dims[None, :],
                mask=row_ok, other=0.0).to(tl.float32)
    cos = tl.load(Cos + rows[:, None] * stride_cos + halves[None, :], mask=row_ok, other=1.0).to(tl.float32)
    sin = tl.load(Sin + rows[:, None] * stride_cos + halves[None, :], mask=row_ok, other=0.0).to(tl.float32)
    x0, x1 = tl.split(tl.reshape(x, [BLOCK_M, HALF, 2]))
    out = tl.interleave(x0 * cos - x1 * sin, x0 * sin + x1 * cos)
    tl.store(Out + batch * stride_ob + head * stride_oh + rows[:, None] * stride_os + dims[None, :],
             out.to(Out.dtype.element_ty), mask=row_ok)


def rope_interleaved(x, cos, sin):
    """x (batch, seq, heads, head_dim), the last dimension contiguous; cos, sin
    (seq, head_dim / 2)."""
    batch, seq, heads, head_dim = x.shape
    assert x.stride(-1) == 1 and cos.stride() == sin.stride()
    out = torch.empty_like(x)
    block_m = 8 if head_dim >= 128 else 16
    rope_interleaved_kernel[(triton.cdiv(seq, block_m), heads, batch)](
        x, out, cos, sin, x.stride(0), x.stride(1), x.stride(2), out.stride(0), out.stride(1), out.stride(2),
        cos.stride(0), seq, HEAD_DIM=head_dim, BLOCK_M=block_m, num_warps=4)
    return out


def _angles(seq, head_dim, device):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float64) / head_dim))
    return torch.arange(seq, device=device, dtype=torch.float64)[:, None] * inv_freq[None, :]   # (seq, dim / 2)


def _half_inputs(batch, seq, q_heads, k_heads, head_dim, dtype, device):
    angles = _angles(seq, head_dim, device)
    emb = torch.cat((angles, angles), -1)[None]   # HF's (1, seq, head_dim) tables
    return {"q": torch.randn(batch, seq, q_heads, head_dim, device=device).to(dtype),
            "k": torch.randn(batch, seq, k_heads, head_dim, device=device).to(dtype),
            "cos": emb.cos().to(dtype), "sin": emb.sin().to(dtype)}


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), -1)


def _half_reference(i, backward):
    cos = i["cos"].double()[:, :, None, :]
    sin = i["sin"].double()[:, :, None, :] * (-1 if backward else 1)
    return tuple(x.double() * cos + _rotate_half(x.double()) * sin for x in (i["q"], i["k"]))


def _interleaved_inputs(batch, seq, heads, head_dim, dtype, device):
    angles = _angles(seq, head_dim, device)
    return {"x": torch.randn(batch, seq, heads, head_dim, device=device).to(dtype),
            "cos": angles.cos().to(dtype), "sin": angles.sin().to(dtype)}


def _interleaved_reference(i):
    x = i["x"].double()
    cos, sin = i["cos"].double()[:, None, :], i["sin"].double()[:, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), -1).flatten(-2)


def cases(device, size):
    # (batch, seq, q heads, kv heads, head dim)
    shapes = {"full": [(4, 4096, 32, 8, 128), (8, 2048, 32, 32, 128), (4, 4096, 16, 16, 64)],
              "quick": [(2, 1024, 32, 8, 128)],
              "tiny": [(2, 5, 3, 1, 16), (1, 19, 4, 2, 32)]}[size]
    for dtype, tol in ((torch.float16, 2e-3), (torch.bfloat16, 1e-2)):
        name = str(dtype).replace("torch.", "")
        for b, s, hq, hk, d in shapes:
            moved = 2 * b * s * (hq + hk) * d * dtype.itemsize
            for backward in (False, True):
                yield Case(f"rope half-split {'bwd' if backward else 'fwd'} q+k {name}", f"{b}x{s}x{hq}/{hk}x{d}",
                           inputs=lambda b=b, s=s, hq=hq, hk=hk, d=d, dtype=dtype:
                               _half_inputs(b, s, hq, hk, d, dtype, device),
                           run=lambda m, i, backward=backward: lambda: m.rope_half(i["q"], i["k"], i["cos"], i["sin"],
                                                                                    backward),
                           reference=lambda i, backward=backward: _half_reference(i, backward),
                           atol=tol, rtol=tol, bytes=moved)
            yield Case(f"rope interleaved fwd {name}", f"{b}x{s}x{hq}x{d}",
                       inputs=lambda b=b, s=s, hq=hq, d=d, dtype=dtype: _interleaved_inputs(b, s, hq, d, dtype, device),
                       run=lambda m, i: lambda: m.rope_interleaved(i["x"], i["cos"], i["sin"]),
                       reference=_interleaved_reference, atol=tol, rtol=tol, bytes=2 * b * s * hq * d * dtype.itemsize)
