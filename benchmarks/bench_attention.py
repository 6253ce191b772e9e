"""Flash-attention forward, fp16: one source run by tilec and by Triton (imports swapped),
beside torch's F.scaled_dot_product_attention, in TFLOP/s (higher is better).

The kernel follows the shape of Triton's tutorial 06: a program owns BLOCK_M queries of one
(batch, head) and walks K/V in blocks of BLOCK_N with the online softmax in base 2. K is
loaded as a [HEAD_DIM, BLOCK_N] tile so `tl.dot(q, k)` needs no transpose. Causal runs in
two stages: the blocks strictly left of the diagonal without a mask, then the diagonal
block with one. Plain pointer loads only (no block pointers, no descriptors).

Each compiler tries a few configs and keeps its best correct time; configs that fail to
compile or give wrong results are reported, not hidden. Triton runs twice: by default (on
Hopper: wgmma) and forced onto tilec's instructions (`DISABLE_MMA_V3=1`: mma.sync), the
latter in a subprocess since Triton reads the variable when it compiles.

Cold compile is measured too (median of five fresh processes per compiler, taking turns, with empty caches): the
first call of the D128 causal kernel (128x64, 8 warps, 3 stages: compile, load, launch,
and whatever one-time set-up the compiler does), then the first call of D64 non-causal
(64x64, 4 warps) in the same process.

    python benchmarks/bench_attention.py
    python benchmarks/bench_attention.py --triton-only   (used for the subprocess)
    python benchmarks/bench_attention.py --cold-compile tilec|triton   (likewise)
"""
from __future__ import annotations

import json
import linecache
import math
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Row, have_triton, median_cold_compiles, print_table, time_gpu  # noqa: E402

SOURCE = textwrap.dedent('''
    @triton.jit
    def _attn_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, start_m, qk_scale, N_CTX,
                    offs_m, offs_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
        # STAGE 0: every key (not causal); 1: keys strictly before this query block; 2: its diagonal block.
        if STAGE == 0:
            lo, hi = 0, N_CTX
        elif STAGE == 1:
            lo, hi = 0, start_m * BLOCK_M
        else:
            lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
            lo = tl.multiple_of(lo, BLOCK_M)
        for start_n in tl.range(lo, hi, BLOCK_N):
            start_n = tl.multiple_of(start_n, BLOCK_N)
            k = tl.load(k_ptrs + start_n * stride_kn)            # [HEAD_DIM, BLOCK_N]
            qk = tl.dot(q, k)                                    # [BLOCK_M, BLOCK_N], fp32
            if STAGE == 2:
                causal = offs_m[:, None] >= (start_n + offs_n)[None, :]
                qk = tl.where(causal, qk * qk_scale, float("-inf"))
                m_ij = tl.maximum(m_i, tl.max(qk, 1))
                qk = qk - m_ij[:, None]
            else:
                m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
                qk = qk * qk_scale - m_ij[:, None]
            p = tl.exp2(qk)
            alpha = tl.exp2(m_i - m_ij)                          # rescales what was summed so far
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            v = tl.load(v_ptrs + start_n * stride_vn)            # [BLOCK_N, HEAD_DIM]
            acc = tl.dot(p.to(tl.float16), v, acc)
            m_i = m_ij
        return acc, l_i, m_i

    @triton.jit
    def attn_fwd(Q, K, V, Out, sm_scale,
                 stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn,
                 stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om,
                 H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 CAUSAL: tl.constexpr):
        start_m = tl.program_id(0)
        off_hz = tl.program_id(1)
        off_z = off_hz // H
        off_h = off_hz % H
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, HEAD_DIM)
        q_ptrs = Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :]
        k_ptrs = K + off_z * stride_kz + off_h * stride_kh + offs_n[None, :] * stride_kn + offs_d[:, None]
        v_ptrs = V + off_z * stride_vz + off_h * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :]
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        qk_scale = sm_scale * 1.44269504                          # exp(x) = exp2(x * log2(e))
        q = tl.load(q_ptrs)
        if CAUSAL:
            acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, start_m, qk_scale,
                                        N_CTX, offs_m, offs_n, BLOCK_M, BLOCK_N, 1)
            acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, start_m, qk_scale,
                                        N_CTX, offs_m, offs_n, BLOCK_M, BLOCK_N, 2)
        else:
            acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, start_m, qk_scale,
                                        N_CTX, offs_m, offs_n, BLOCK_M, BLOCK_N, 0)
        out = acc / l_i[:, None]
        o_ptrs = Out + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
        tl.store(o_ptrs, out.to(tl.float16))
''')

# (BLOCK_M, BLOCK_N, num_warps, num_stages); BLOCK_M must be a multiple of BLOCK_N (causal diagonal).
CONFIGS = [(128, 64, 4, 3), (128, 64, 8, 3), (128, 32, 4, 3), (64, 64, 4, 3)]
SHAPE = (4, 32, 4096)  # batch, heads, sequence length


def kernels(triton, tl) -> dict:
    """SOURCE executed with `triton`/`tl` bound to one compiler (linecache lets @jit read it)."""
    filename = f"<bench_attention for {triton.__name__}>"
    linecache.cache[filename] = (len(SOURCE), None, SOURCE.splitlines(keepends=True), filename)
    namespace = {"triton": triton, "tl": tl, "__name__": f"bench_attention_{triton.__name__}"}  # Triton reads __module__
    exec(compile(SOURCE, filename, "exec"), namespace)
    return namespace


def launch_args(q, k, v, o, sm_scale) -> tuple:
    """attn_fwd's runtime arguments for [B, H, N_CTX, HEAD_DIM] tensors (last dim contiguous)."""
    assert all(t.stride(-1) == 1 for t in (q, k, v, o))
    strides = [s for t in (q, k, v, o) for s in t.stride()[:3]]
    return (q, k, v, o, sm_scale, *strides, q.shape[1], q.shape[2])


def _one_compiler(name, kernel, args, grid, head_dim, causal, ref, flops, notes):
    """((best TFLOP/s, its config) or None, whether any config mismatched) for one compiler.
    The best is taken over correct configs (over all if none is); notes get each failure."""
    import torch
    o = args[3]
    best, best_bad, mismatch = None, None, False
    for bm, bn, warps, stages in CONFIGS:
        cfg = f"{bm}x{bn} w{warps} s{stages}"
        kw = dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=warps, num_stages=stages)
        g = grid(bm)

        def call(kw=kw, g=g):
            return kernel[g](*args, **kw)
        try:
            o.fill_(float("nan"))
            call()
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 -- a config one compiler cannot build is skipped, with why
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [""]
            why = " ... ".join(dict.fromkeys([lines[0], lines[-1]]))  # where, and what
            notes.append(f"  {name} {cfg}: skipped, {type(exc).__name__}: {why[:240]}")
            continue
        ok = True
        try:
            torch.testing.assert_close(o, ref, atol=2e-2, rtol=2e-2)
        except AssertionError:
            ok, mismatch = False, True
            err = (o.float() - ref.float()).abs().nan_to_num(float("inf")).max().item()
            notes.append(f"  {name} {cfg}: MISMATCH vs torch SDPA, max abs error {err:.4g}")
        tflops = flops / time_gpu(call, reps=20) / 1e9
        entry = (tflops, (bm, bn, warps, stages))
        if ok and (best is None or tflops > best[0]):
            best = entry
        if not ok and (best_bad is None or tflops > best_bad[0]):
            best_bad = entry
    return best or best_bad, mismatch


def _resources(name, kernel, args, grid, head_dim, causal, config) -> str:
    bm, bn, warps, stages = config
    kw = dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=warps, num_stages=stages)
    if name == "tilec":
        k = kernel.warmup(*args, grid=grid(bm), **kw)
    else:
        k = kernel[grid(bm)](*args, **kw)  # Triton's launch returns its CompiledKernel
    return (f"  {name:<6} best {bm}x{bn} w{warps} s{stages}: n_regs={k.n_regs} n_spills={k.n_spills} "
            f"shared={k.metadata.shared} B")


def _triton_on_mma_sync() -> dict:
    """{case label: (TFLOP/s, resources note)} of Triton forced onto mma.sync, from a subprocess."""
    env = {**os.environ, "DISABLE_MMA_V3": "1"}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--triton-only"], env=env,
                          capture_output=True, text=True, timeout=1200)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    print(done.stdout[-2000:], done.stderr[-2000:])
    return {}


def run(triton_only: bool = False) -> list[Row]:
    import torch
    import torch.nn.functional as F

    contenders = {}
    if not triton_only:
        import tilec
        import tilec.language as tcl
        contenders["tilec"] = kernels(tilec, tcl)["attn_fwd"]
    if have_triton():
        import triton
        import triton.language as ttl
        contenders["triton"] = kernels(triton, ttl)["attn_fwd"]
    on_mma_sync = _triton_on_mma_sync() if have_triton() and not triton_only else {}

    batch, heads, n_ctx = SHAPE
    rows = []
    for head_dim in (64, 128):
        for causal in (False, True):
            torch.manual_seed(0)
            q, k, v = (torch.randn(batch, heads, n_ctx, head_dim, device="cuda", dtype=torch.float16)
                       for _ in range(3))
            sm_scale = 1.0 / math.sqrt(head_dim)
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)
            flops = 4 * batch * heads * n_ctx * n_ctx * head_dim * (0.5 if causal else 1.0)
            args = launch_args(q, k, v, torch.empty_like(q), sm_scale)

            def grid(bm):
                return (triton_cdiv(n_ctx, bm), batch * heads)
            label = f"d{head_dim} {'causal' if causal else 'full'} {batch}x{heads}x{n_ctx}"
            notes, results, marks, best = [], {}, [], {}
            for name, kernel in contenders.items():
                found, mismatch = _one_compiler(name, kernel, args, grid, head_dim, causal, ref, flops, notes)
                if mismatch:
                    marks.append(name)
                if found is not None:
                    results[name], best[name] = found
            if label in on_mma_sync:
                results["triton mma.sync"], note = on_mma_sync[label]
                notes.append(note)
            if not triton_only:
                results["torch"] = flops / time_gpu(
                    lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale), reps=20) / 1e9
            for name, config in best.items():
                try:
                    notes.append(_resources(name, contenders[name], args, grid, head_dim, causal, config))
                except Exception as exc:  # noqa: BLE001
                    notes.append(f"  {name}: resources unavailable ({type(exc).__name__}: {exc})")
            if triton_only:
                notes = [n.replace("  triton ", "  triton mma.sync ") for n in notes]
            print(f"{label}:\n" + "\n".join(notes), file=sys.stderr if triton_only else sys.stdout)
            rows.append(Row(label + (" !" + ",".join(marks) if marks else ""), results, "TF/s",
                            [n for n in notes if " best " in n]))
    return rows


def cold_compile(which: str) -> dict:
    """In this (fresh) process: milliseconds of the first call of D128 causal and then
    of D64 non-causal (each a compile, a load and a launch)."""
    import time
    import torch
    if which == "tilec":
        import tilec as compiler
        import tilec.language as lang
    else:
        import triton as compiler
        import triton.language as lang
    kernel = kernels(compiler, lang)["attn_fwd"]
    batch, heads, n_ctx = SHAPE
    times = {}
    for key, head_dim, causal, (bm, bn, warps, stages) in (("first", 128, True, (128, 64, 8, 3)),
                                                           ("second", 64, False, (64, 64, 4, 3))):
        q, k, v = (torch.randn(batch, heads, n_ctx, head_dim, device="cuda", dtype=torch.float16) for _ in range(3))
        args = launch_args(q, k, v, torch.empty_like(q), 1.0 / math.sqrt(head_dim))
        torch.cuda.synchronize()
        start = time.perf_counter()
        kernel[(triton_cdiv(n_ctx, bm), batch * heads)](*args, HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=bn,
                                                        CAUSAL=causal, num_warps=warps, num_stages=stages)
        torch.cuda.synchronize()
        times[key] = (time.perf_counter() - start) * 1000
    return times


def compile_rows() -> list[Row]:
    """Cold compile times (ms, lower is better), each the median of five fresh processes (the compilers take turns)."""
    found = median_cold_compiles(__file__, {which: (which, None) for which in ["tilec"] + (["triton"] if have_triton() else [])})
    found = {which: times for which, times in found.items() if times}
    return [Row(f"attention compile: {label}", {name: r[key] for name, r in found.items()}, "ms")
            for key, label in (("first", "D128 causal, first call in a fresh process"),
                               ("second", "then D64, its first call"))]


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def main() -> None:
    import torch
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    rows = run()
    print_table("flash attention fwd f16 (TFLOP/s, higher is better; '!' = a config mismatched SDPA)", rows)
    if any("triton mma.sync" in row.results for row in rows):
        print_table("flash attention fwd f16 against Triton on mma.sync (TFLOP/s)", rows,
                    reference="triton mma.sync")
    print_table("flash attention cold compile (ms, lower is better)", compile_rows())


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--cold-compile":
        print("RESULT " + json.dumps(cold_compile(sys.argv[2])))
    elif sys.argv[1:] == ["--triton-only"]:
        found = {row.name.split(" !")[0]: (row.results["triton"], " ".join(row.notes)) for row in run(triton_only=True)
                 if "triton" in row.results}
        print("RESULT " + json.dumps(found))
    else:
        main()
