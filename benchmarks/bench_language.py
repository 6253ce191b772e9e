"""Kernels using the wider language (issue 3): one source, run by tilec and by Triton
with only the imports swapped, timed the same way.

- matmul fp16 (tiled, tl.dot): TFLOP/s. tilec's dot runs on CUDA cores for now, so a
  large gap to Triton's tensor cores is expected here.
- tl.rand: GB/s written.
- tl.cumsum along rows: TB/s (input read once, output written once).
"""
from __future__ import annotations

import linecache
import textwrap

import torch

from common import Row, have_triton, print_table, time_gpu

SOURCE = textwrap.dedent('''
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))

    @triton.jit
    def rand_kernel(out_ptr, seed, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.rand(seed, offs))

    @triton.jit
    def cumsum_kernel(x_ptr, y_ptr, N: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, N)
        x = tl.load(x_ptr + row * N + offs)
        tl.store(y_ptr + row * N + offs, tl.cumsum(x, axis=0))
''')


def _kernels(triton, tl) -> dict:
    filename = f"<bench_language for {triton.__name__}>"
    linecache.cache[filename] = (len(SOURCE), None, SOURCE.splitlines(keepends=True), filename)
    namespace = {"triton": triton, "tl": tl}
    exec(compile(SOURCE, filename, "exec"), namespace)
    return namespace


def run() -> list[Row]:
    import tilec
    import tilec.language as tcl
    contenders = {"tilec": _kernels(tilec, tcl)}
    if have_triton():
        import triton
        import triton.language as ttl
        contenders["triton"] = _kernels(triton, ttl)
    rows = []

    m = n = k = 2048
    bm, bn, bk = 64, 64, 32
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    expected = (a.float() @ b.float())
    results = {}
    for name, kernels in contenders.items():
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)

        def call(kernels=kernels, c=c):
            kernels["matmul_kernel"][(m // bm, n // bn)](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk)
        call()
        torch.testing.assert_close(c.float(), expected, rtol=2e-2, atol=0.5)
        results[name] = 2 * m * n * k / time_gpu(call, reps=20) / 1e9
    results["torch"] = 2 * m * n * k / time_gpu(lambda: a @ b, reps=20) / 1e9
    rows.append(Row(f"matmul f16 {m}^3 (64x64x32)", results, "TF/s"))

    size, block = 1 << 24, 1024
    results = {}
    outs = {}
    for name, kernels in contenders.items():
        out = torch.empty(size, device="cuda")

        def call(kernels=kernels, out=out):
            kernels["rand_kernel"][(size // block,)](out, 42, BLOCK=block)
        call()
        outs[name] = out
        results[name] = size * 4 / time_gpu(call) / 1e6
    if "triton" in outs:
        assert torch.equal(outs["tilec"], outs["triton"]), "tl.rand differs from Triton's"
    rows.append(Row("tl.rand f32 2^24", results, "GB/s"))

    rows_n, cols = 4096, 1024
    x = torch.randn(rows_n, cols, device="cuda")
    expected = torch.cumsum(x.double(), dim=1).float()
    results = {}
    for name, kernels in contenders.items():
        y = torch.empty_like(x)

        def call(kernels=kernels, y=y):
            kernels["cumsum_kernel"][(rows_n,)](x, y, N=cols)
        call()
        torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-3)
        results[name] = 2 * x.numel() * 4 / time_gpu(call) / 1e9
    results["torch"] = 2 * x.numel() * 4 / time_gpu(lambda: torch.cumsum(x, dim=1)) / 1e9
    rows.append(Row(f"cumsum f32 {rows_n}x{cols}", results, "TB/s"))
    return rows


if __name__ == "__main__":
    print_table("language kernels", run())
