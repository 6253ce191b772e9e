"""fp16 matmul on tensor cores: Triton tutorial 03's kernel (grouped program order,
loop-carried pointers, masked K tail), one source run by tilec and by Triton with only
the imports swapped, each over the same small config list (as the tutorial's autotuner
would search it), the best config kept per compiler.

Triton is measured twice: as it runs by default on this GPU (wgmma on Hopper) and forced
onto the same instructions as tilec (`DISABLE_MMA_V3=1`: mma.sync), the latter in a
subprocess since Triton reads the variable when it compiles. torch (cuBLAS) is printed
beside them. For each compiler's best config, registers, spills and shared memory are
reported too.

Compile time is measured too (median of five fresh processes per compiler, with empty
caches; the compilers take turns, so drift in the host's load hits each alike): the first
call of the first config (compile, load and launch, with whatever one-time set-up the
compiler does) and the first call of a second config in the same process (compile, load
and launch only).

    python benchmarks/bench_matmul.py            # all sizes
    python benchmarks/bench_matmul.py --fp8      # only the fp8 (e4m3) product
    python benchmarks/bench_matmul.py --triton-only 4096   (used for the subprocess)
    python benchmarks/bench_matmul.py --cold-compile tilec|triton   (likewise)
"""
from __future__ import annotations

import json
import linecache
import os
import subprocess
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Row, have_triton, median_cold_compiles, print_table, time_gpu  # noqa: E402

SOURCE = textwrap.dedent('''
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = accumulator.to(tl.float16)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, c, mask=c_mask)
''')

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages): a small list in the
# spirit of the tutorial's autotune configs.
CONFIGS = [
    (128, 256, 64, 8, 8, 3),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 32, 8, 4, 4),
    (256, 128, 32, 8, 8, 3),
    (128, 64, 32, 8, 4, 4),
    (64, 128, 32, 8, 4, 4),
]
SIZES = [4096, 8192]
# fp8 (e4m3) operands, B passed transposed (K contiguous) as tutorial 03 does: wider K
# blocks, since a K row of 8-bit values is half as many bytes.
FP8_CONFIGS = [
    (128, 256, 128, 8, 8, 3),
    (128, 128, 128, 8, 4, 4),
    (256, 128, 128, 8, 8, 3),
    (128, 256, 64, 8, 8, 4),
    (128, 128, 64, 8, 4, 4),
]
FP8_SIZES = [8192]


def _kernel(triton, tl):
    filename = f"<bench_matmul for {triton.__name__}>"
    linecache.cache[filename] = (len(SOURCE), None, SOURCE.splitlines(keepends=True), filename)
    namespace = {"triton": triton, "tl": tl}
    exec(compile(SOURCE, filename, "exec"), namespace)
    return namespace["matmul_kernel"]


def _operands(size: int, fp8: bool):
    """a, b and a @ b: fp16, or fp8 e4m3 with b a transposed view (K contiguous, as
    tutorial 03 passes it), the product then taken in fp16 of the fp8 values."""
    import torch
    torch.manual_seed(0)
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    if fp8:
        a, b = a.to(torch.float8_e4m3fn), b.T.contiguous().T.to(torch.float8_e4m3fn)
        return a, b, a.to(torch.float16) @ b.to(torch.float16)
    return a, b, a @ b


def _tolerance(a, b, fp8: bool) -> dict:
    """assert_close's tolerances: fp16 output rounding, and for fp8 also Hopper's fp8
    tensor cores, which accumulate with about 13 mantissa bits (as Triton's default
    `max_num_imprecise_acc` lets them): errors up to ~2^-12 of sum(|a| |b|)."""
    import torch
    if not fp8:
        return {"rtol": 2e-2, "atol": 1.0}
    scale = (a.to(torch.float16).abs() @ b.to(torch.float16).abs()).float().max().item()
    return {"rtol": 2e-2, "atol": max(1.0, scale / 1024)}


def _best(kernel, size: int, compiled_info, fp8: bool = False) -> dict:
    """The best config's TFLOP/s, with its name and resources (or why none ran)."""
    import torch
    a, b, expected = _operands(size, fp8)
    tolerance = _tolerance(a, b, fp8)
    best = {"tflops": 0.0}
    errors = []
    for bm, bn, bk, gm, warps, stages in FP8_CONFIGS if fp8 else CONFIGS:
        c = torch.empty(size, size, device="cuda", dtype=torch.float16)
        grid = (((size + bm - 1) // bm) * ((size + bn - 1) // bn),)

        def call(c=c, grid=grid, bm=bm, bn=bn, bk=bk, gm=gm, warps=warps, stages=stages):
            return kernel[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                                num_warps=warps, num_stages=stages)
        try:
            handle = call()
            torch.testing.assert_close(c, expected, **tolerance)
        except Exception as exc:  # a config that does not fit or compile is skipped
            errors.append(f"{(bm, bn, bk, warps, stages)}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            continue
        tflops = 2 * size ** 3 / time_gpu(call, reps=20) / 1e9
        if tflops > best["tflops"]:
            best = {"tflops": tflops, "config": (bm, bn, bk, gm, warps, stages), **compiled_info(handle, call)}
    best["errors"] = errors
    return best


def run_triton_only(size: int) -> dict:
    import triton
    import triton.language as tl
    return _best(_kernel(triton, tl), size, lambda h, call: {"regs": h.n_regs, "spills": h.n_spills,
                                                             "shared": h.metadata.shared})


def _triton_on_mma_sync(size: int) -> dict | None:
    """Triton forced onto mma.sync, measured in a subprocess (DISABLE_MMA_V3 is read when it compiles)."""
    env = {**os.environ, "DISABLE_MMA_V3": "1"}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--triton-only", str(size)], env=env,
                          capture_output=True, text=True, timeout=900)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    print(done.stdout[-2000:], done.stderr[-2000:])
    return None


def cold_compile(which: str) -> dict:
    """In this (fresh) process: milliseconds of the first call of CONFIGS[0] and then of
    CONFIGS[1] at 4096^3 (each a compile, a load and a launch)."""
    import torch
    if which == "tilec":
        import tilec as compiler
        import tilec.language as tl
    else:
        import triton as compiler
        import triton.language as tl
    kernel = _kernel(compiler, tl)
    size = 4096
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)
    times = []
    for bm, bn, bk, gm, warps, stages in CONFIGS[:2]:
        grid = (((size + bm - 1) // bm) * ((size + bn - 1) // bn),)
        torch.cuda.synchronize()
        start = time.perf_counter()
        kernel[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                     c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, num_warps=warps, num_stages=stages)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1000)
    return {"first": times[0], "second": times[1]}


def compile_rows() -> list[Row]:
    """Cold compile times (ms, lower is better) of tilec and Triton (default and mma.sync)."""
    contenders = {"tilec": ("tilec", None)}
    if have_triton():
        contenders["triton"] = ("triton", None)
        contenders["triton mma.sync"] = ("triton", {"DISABLE_MMA_V3": "1"})
    found = median_cold_compiles(__file__, contenders)
    rows = []
    for key, label in (("first", "first call in a fresh process"), ("second", "a second config's first call")):
        rows.append(Row(f"matmul compile: {label}", {name: r[key] for name, r in found.items() if r}, "ms"))
    return rows


def run() -> tuple[list[Row], list[str]]:
    import torch
    import tilec
    import tilec.language as tcl
    tilec_kernel = _kernel(tilec, tcl)
    rows, notes = [], []
    for size in SIZES:
        results = {}
        found = {"tilec": _best(tilec_kernel, size, lambda handle, call: {})}  # resources: from a warmup below
        if have_triton():
            import triton
            import triton.language as tl
            found["triton"] = _best(_kernel(triton, tl), size, lambda h, call: {
                "regs": h.n_regs, "spills": h.n_spills, "shared": h.metadata.shared})
            mma_sync = _triton_on_mma_sync(size)
            if mma_sync is not None:
                found["triton mma.sync"] = mma_sync
        a = torch.randn(size, size, device="cuda", dtype=torch.float16)
        b = torch.randn(size, size, device="cuda", dtype=torch.float16)
        found["torch"] = {"tflops": 2 * size ** 3 / time_gpu(lambda: a @ b, reps=20) / 1e9}
        # tilec's resources for its best config, from a warmup of the same specialisation.
        best = found["tilec"]
        if "config" in best:
            bm, bn, bk, gm, warps, stages = best["config"]
            c = torch.empty(size, size, device="cuda", dtype=torch.float16)
            compiled = tilec_kernel.warmup(a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0),
                                           b.stride(1), c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn,
                                           BLOCK_K=bk, GROUP_M=gm, num_warps=warps, num_stages=stages,
                                           grid=(1,))
            best.update(regs=compiled.n_regs, spills=compiled.n_spills, shared=compiled.metadata.shared)
        for name, found_one in found.items():
            results[name] = found_one["tflops"]
            if "config" in found_one:
                notes.append(f"{size}^3 {name}: best (BM, BN, BK, GROUP_M, warps, stages) = {found_one['config']}, "
                             f"regs {found_one.get('regs')}, spills {found_one.get('spills')}, "
                             f"shared {found_one.get('shared')}")
            for error in found_one.get("errors", []):
                notes.append(f"{size}^3 {name}: skipped {error}")
        rows.append(Row(f"matmul f16 {size}^3", results, "TF/s"))
    return rows, notes


def run_fp8() -> tuple[list[Row], list[str]]:
    """fp8 e4m3 operands (fp16 output), beside cuBLAS's fp8 product (torch._scaled_mm)."""
    import torch
    import tilec
    import tilec.language as tcl
    rows, notes = [], []
    for size in FP8_SIZES:
        found = {"tilec": _best(_kernel(tilec, tcl), size, lambda handle, call: {}, fp8=True)}
        if have_triton():
            import triton
            import triton.language as tl
            found["triton"] = _best(_kernel(triton, tl), size, lambda h, call: {
                "regs": h.n_regs, "spills": h.n_spills, "shared": h.metadata.shared}, fp8=True)
        a, b, _ = _operands(size, fp8=True)
        one = torch.ones((), device="cuda")
        try:
            found["torch"] = {"tflops": 2 * size ** 3 / time_gpu(
                lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float16), reps=20) / 1e9}
        except Exception as exc:  # noqa: BLE001 -- cuBLAS's fp8 path is optional beside the compilers
            notes.append(f"fp8 {size}^3 torch._scaled_mm: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
        best = found["tilec"]
        if "config" in best:
            bm, bn, bk, gm, warps, stages = best["config"]
            c = torch.empty(size, size, device="cuda", dtype=torch.float16)
            compiled = _kernel(tilec, tcl).warmup(a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0),
                                                  b.stride(1), c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn,
                                                  BLOCK_K=bk, GROUP_M=gm, num_warps=warps, num_stages=stages,
                                                  grid=(1,))
            best.update(regs=compiled.n_regs, spills=compiled.n_spills, shared=compiled.metadata.shared)
        for name, one_found in found.items():
            if "config" in one_found:
                notes.append(f"fp8 {size}^3 {name}: best (BM, BN, BK, GROUP_M, warps, stages) = "
                             f"{one_found['config']}, regs {one_found.get('regs')}, spills {one_found.get('spills')}, "
                             f"shared {one_found.get('shared')}")
            for error in one_found.get("errors", []):
                notes.append(f"fp8 {size}^3 {name}: skipped {error}")
        rows.append(Row(f"matmul fp8e4m3 {size}^3", {name: f["tflops"] for name, f in found.items()}, "TF/s"))
    return rows, notes


def main(fp8_only: bool = False) -> None:
    rows, notes = ([], []) if fp8_only else run()
    if rows:
        print_table("matmul fp16 (TFLOP/s, higher is better)", rows, reference="triton")
    if any("triton mma.sync" in row.results for row in rows):
        print_table("matmul fp16 against Triton on mma.sync (TFLOP/s)", rows, reference="triton mma.sync")
    fp8_rows, fp8_notes = run_fp8()
    print_table("matmul fp8 e4m3, fp16 out (TFLOP/s, higher is better)", fp8_rows, reference="triton")
    for note in notes + fp8_notes:
        print(note)
    if fp8_only:
        return
    print_table("matmul cold compile, 128x256x64 then 128x128x64 (ms, lower is better)", compile_rows())


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--triton-only":
        print("RESULT " + json.dumps(run_triton_only(int(sys.argv[2]))))
    elif len(sys.argv) == 3 and sys.argv[1] == "--cold-compile":
        print("RESULT " + json.dumps(cold_compile(sys.argv[2])))
    else:
        main(fp8_only="--fp8" in sys.argv)
