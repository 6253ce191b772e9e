"""Host cost of a launch, and the first call with a cold cache: tilec vs Triton vs torch.

- host time per launch: many back-to-back launches of a tiny kernel timed on the host
  clock (with a final synchronize), divided by their number;
- first call, cold cache: a fresh process with an empty cache directory times its
  first launch (compile + load + launch, imports excluded).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time

import torch

from common import Row, have_triton, print_table
from bench_vector_add import add_tilec, make_triton_kernel


def host_time_per_launch(fn, iterations: int = 20000) -> float:
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(iterations):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / iterations)
    return best * 1e6


_COLD = textwrap.dedent('''
    import os, sys, time
    import torch
    x = torch.randn(4096, device="cuda"); y = torch.randn(4096, device="cuda"); out = torch.empty_like(x)
    if sys.argv[1] == "tilec":
        import tilec, tilec.language as tl
        @tilec.jit
        def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
    else:
        import triton, triton.language as tl
        @triton.jit
        def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
    torch.cuda.synchronize()
    start = time.perf_counter()
    add[(4,)](x, y, out, 4096, BLOCK=1024)
    torch.cuda.synchronize()
    first = time.perf_counter() - start
    assert torch.equal(out, x + y)
    print(first * 1000)
''')


def cold_first_call_ms(which: str) -> float:
    with tempfile.TemporaryDirectory() as cache:
        script = os.path.join(cache, "cold_start.py")  # @jit needs a source file
        with open(script, "w") as f:
            f.write(_COLD)
        env = dict(os.environ, TILEC_CACHE_DIR=os.path.join(cache, "tilec"), TRITON_CACHE_DIR=os.path.join(cache, "triton"))
        out = subprocess.run([sys.executable, script, which], capture_output=True, text=True, env=env)
        if out.returncode != 0:
            raise RuntimeError(out.stderr)
        return float(out.stdout.strip().splitlines()[-1])


def run() -> tuple[list[Row], list[Row]]:
    n = 1024
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    launch = {"tilec": host_time_per_launch(lambda: add_tilec[(1,)](x, y, out, n, BLOCK_SIZE=1024)),
              "torch": host_time_per_launch(lambda: torch.add(x, y, out=out))}
    cold = {"tilec": cold_first_call_ms("tilec")}
    if have_triton():
        kernel = make_triton_kernel()
        launch["triton"] = host_time_per_launch(lambda: kernel[(1,)](x, y, out, n, BLOCK_SIZE=1024))
        cold["triton"] = cold_first_call_ms("triton")
    # Lower is better here: report the inverse ratio by flipping the values.
    return [Row("host time per launch", launch, "us")], [Row("first call, cold cache", cold, "ms")]


if __name__ == "__main__":
    launch, cold = run()
    print_table("launch cost (lower is better; ratio = tilec/triton)", launch)
    print_table("first call with a cold cache (lower is better; ratio = tilec/triton)", cold)
