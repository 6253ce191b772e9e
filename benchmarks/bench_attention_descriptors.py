"""Flash-attention forward, fp16, through host tensor descriptors: the shape Triton 3.6's
tutorial 06 takes on Hopper (q, k, v and o as descriptors over the [B*H*N_CTX, HEAD_DIM]
tensors, k loaded [BLOCK_N, HEAD_DIM] and used transposed). One source run by tilec and
by Triton (imports swapped), beside torch's SDPA, in TFLOP/s; each compiler's best
correct config over a few. Both stream k and v by TMA.

    python benchmarks/bench_attention_descriptors.py
"""
from __future__ import annotations

import linecache
import math
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Row, have_triton, print_table, time_gpu  # noqa: E402

SOURCE = textwrap.dedent('''
    @triton.jit
    def _inner(acc, l_i, m_i, q, desc_k, desc_v, row0, start_m, qk_scale, offs_m, offs_n,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr, N_CTX: tl.constexpr):
        if STAGE == 0:
            lo, hi = 0, N_CTX
        elif STAGE == 1:
            lo, hi = 0, start_m * BLOCK_M
        else:
            lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        for start_n in tl.range(lo, hi, BLOCK_N):
            k = desc_k.load([row0 + start_n, 0])
            qk = tl.dot(q, k.T)
            if STAGE == 2:
                causal = offs_m[:, None] >= (start_n + offs_n)[None, :]
                qk = tl.where(causal, qk * qk_scale, float("-inf"))
                m_ij = tl.maximum(m_i, tl.max(qk, 1))
                qk = qk - m_ij[:, None]
            else:
                m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
                qk = qk * qk_scale - m_ij[:, None]
            p = tl.exp2(qk)
            alpha = tl.exp2(m_i - m_ij)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            v = desc_v.load([row0 + start_n, 0])
            acc = tl.dot(p.to(tl.float16), v, acc)
            m_i = m_ij
        return acc, l_i, m_i

    @triton.jit
    def attn_fwd_desc(desc_q, desc_k, desc_v, desc_o, sm_scale, H, N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
        start_m = tl.program_id(0)
        off_hz = tl.program_id(1)
        row0 = off_hz * N_CTX
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        qk_scale = sm_scale * 1.44269504
        q = desc_q.load([row0 + start_m * BLOCK_M, 0])
        if CAUSAL:
            acc, l_i, m_i = _inner(acc, l_i, m_i, q, desc_k, desc_v, row0, start_m, qk_scale, offs_m, offs_n,
                                   BLOCK_M, BLOCK_N, 1, N_CTX)
            acc, l_i, m_i = _inner(acc, l_i, m_i, q, desc_k, desc_v, row0, start_m, qk_scale, offs_m, offs_n,
                                   BLOCK_M, BLOCK_N, 2, N_CTX)
        else:
            acc, l_i, m_i = _inner(acc, l_i, m_i, q, desc_k, desc_v, row0, start_m, qk_scale, offs_m, offs_n,
                                   BLOCK_M, BLOCK_N, 0, N_CTX)
        desc_o.store([row0 + start_m * BLOCK_M, 0], (acc / l_i[:, None]).to(tl.float16))
''')

CONFIGS = [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 3)]
SHAPE = (4, 32, 4096)


def _kernel(triton, tl):
    filename = f"<bench_attention_descriptors for {triton.__name__}>"
    linecache.cache[filename] = (len(SOURCE), None, SOURCE.splitlines(keepends=True), filename)
    namespace = {"triton": triton, "tl": tl, "__name__": f"bench_attention_descriptors_{triton.__name__}"}
    exec(compile(SOURCE, filename, "exec"), namespace)
    return namespace["attn_fwd_desc"]


def _best(kernel, descriptor_class, q, k, v, o, ref, causal, flops, notes, name) -> float:
    import torch
    batch, heads, n_ctx, d = q.shape
    flat = [t.reshape(batch * heads * n_ctx, d) for t in (q, k, v, o)]
    best = 0.0
    for bm, bn, warps, stages in CONFIGS:
        descs = [descriptor_class.from_tensor(t, [bm if i in (0, 3) else bn, d]) for i, t in enumerate(flat)]

        def call(descs=descs, bm=bm, bn=bn, warps=warps, stages=stages):
            return kernel[(n_ctx // bm, batch * heads)](*descs, 1.0 / math.sqrt(d), heads, N_CTX=n_ctx, HEAD_DIM=d,
                                                        BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=warps,
                                                        num_stages=stages)
        try:
            o.fill_(float("nan"))
            call()
            torch.testing.assert_close(o, ref, atol=2e-2, rtol=2e-2)
        except Exception as exc:  # noqa: BLE001 -- reported, not hidden
            notes.append(f"  {name} {bm}x{bn} w{warps}: skipped, {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
            continue
        tflops = flops / time_gpu(call, reps=20) / 1e9
        if tflops > best:
            best = tflops
            notes.append(f"  {name} {bm}x{bn} w{warps} s{stages}: {tflops:.1f} TF/s")
    return best


def run() -> list[Row]:
    import torch
    import torch.nn.functional as F
    import tilec
    import tilec.language as tcl
    from tilec.tools.tensor_descriptor import TensorDescriptor as TilecDescriptor
    contenders = {"tilec": (_kernel(tilec, tcl), TilecDescriptor)}
    if have_triton():
        import triton
        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor
        contenders["triton"] = (_kernel(triton, tl), TritonDescriptor)
    batch, heads, n_ctx = SHAPE
    rows = []
    for head_dim in (64, 128):
        for causal in (False, True):
            torch.manual_seed(0)
            q, k, v = (torch.randn(batch, heads, n_ctx, head_dim, device="cuda", dtype=torch.float16) for _ in range(3))
            o = torch.empty_like(q)
            scale = 1.0 / math.sqrt(head_dim)
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
            flops = 4 * batch * heads * n_ctx * n_ctx * head_dim * (0.5 if causal else 1.0)
            notes, results = [], {}
            for name, (kernel, descriptor_class) in contenders.items():
                results[name] = _best(kernel, descriptor_class, q, k, v, o, ref, causal, flops, notes, name)
            results["torch"] = flops / time_gpu(
                lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale), reps=20) / 1e9
            label = f"d{head_dim} {'causal' if causal else 'full'} {batch}x{heads}x{n_ctx}"
            print(label + ":\n" + "\n".join(notes))
            rows.append(Row(label, results, "TF/s"))
    return rows


if __name__ == "__main__":
    print_table("flash attention fwd f16 through host descriptors (TFLOP/s, higher is better)", run())
