"""Host cost of a launch, and the first call in a new process: tilec vs Triton (vs torch).

Every number comes from a fresh process per contender (the same script with the import
swapped), so neither compiler's state or imports colour the other's:

- host time per launch: many back-to-back launches of a tiny kernel (vector add, one
  program) timed on the host clock with a final synchronize, divided by their number;
  the best of 5 rounds. torch.add, timed the same way, is the floor of a launch from
  Python.
- first call, cold cache: a process with an empty cache directory times its first
  launch (compile + load + launch; imports excluded).
- first call, warm cache: a process whose cache directory an earlier process filled
  times its first launch (find the kernel on disk, load it on the GPU, launch; imports
  excluded). The median of 5 processes.
- import + first call, warm cache: the same, counting `import tilec` / `import triton`
  (torch is imported before, by both).

    python benchmarks/bench_launch.py
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

from common import Row, have_triton, print_table

# One script for every measurement: argv = (tilec|triton, launch|first-call).
_SCRIPT = textwrap.dedent('''
    import json, sys, time
    import torch
    which, what = sys.argv[1], sys.argv[2]
    x = torch.randn(4096, device="cuda"); y = torch.randn(4096, device="cuda"); out = torch.empty_like(x)
    torch.cuda.synchronize()
    start_import = time.perf_counter()
    if which == "tilec":
        import tilec as compiler, tilec.language as tl
    else:
        import triton as compiler, triton.language as tl
    imported = time.perf_counter()

    @compiler.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    if what == "first-call":
        torch.cuda.synchronize()
        start = time.perf_counter()
        add[(4,)](x, y, out, 4096, BLOCK=1024)
        torch.cuda.synchronize()
        first = time.perf_counter() - start
        assert torch.equal(out, x + y)
        print(json.dumps({"first_ms": first * 1e3, "import_ms": (imported - start_import) * 1e3}))
    else:
        def best_time_per_call(fn, iterations=20000):
            for _ in range(1000):
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
        n = 1024
        result = {"launch_us": best_time_per_call(lambda: add[(1,)](x, y, out, n, BLOCK=1024))}
        assert torch.equal(out[:n], x[:n] + y[:n])
        if which == "tilec":
            result["torch_us"] = best_time_per_call(lambda: torch.add(x, y, out=out))
        print(json.dumps(result))
''')


def _run(folder: str, which: str, what: str, cache: str) -> dict:
    script = os.path.join(folder, "launch_cost.py")  # @jit needs a source file
    if not os.path.exists(script):
        with open(script, "w") as f:
            f.write(_SCRIPT)
    env = dict(os.environ, TILEC_CACHE_DIR=os.path.join(cache, "tilec"), TRITON_CACHE_DIR=os.path.join(cache, "triton"))
    env.pop("TILEC_ALWAYS_COMPILE", None)
    out = subprocess.run([sys.executable, script, which, what], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{which} {what} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(which: str, warm_runs: int = 5) -> dict[str, float]:
    """Every number of one contender, each from fresh processes."""
    with tempfile.TemporaryDirectory() as folder:
        cold_cache = os.path.join(folder, "cold")
        cold = _run(folder, which, "first-call", cold_cache)  # also fills the cache for the warm runs
        warm = [_run(folder, which, "first-call", cold_cache) for _ in range(warm_runs)]
        launch = _run(folder, which, "launch", cold_cache)
    return {
        "cold_ms": cold["first_ms"],
        "warm_ms": statistics.median(w["first_ms"] for w in warm),
        "warm_with_import_ms": statistics.median(w["first_ms"] + w["import_ms"] for w in warm),
        "launch_us": launch["launch_us"],
        **({"torch_us": launch["torch_us"]} if "torch_us" in launch else {}),
    }


def run() -> tuple[list[Row], list[Row]]:
    """(host time per launch rows, first call rows), lower is better in both."""
    results = {"tilec": measure("tilec")}
    if have_triton():
        results["triton"] = measure("triton")
    launch = {name: r["launch_us"] for name, r in results.items()}
    launch["torch.add"] = results["tilec"]["torch_us"]
    first_call = [
        Row("first call, cold cache", {name: r["cold_ms"] for name, r in results.items()}, "ms"),
        Row("first call, warm cache", {name: r["warm_ms"] for name, r in results.items()}, "ms"),
        Row("import + first call, warm", {name: r["warm_with_import_ms"] for name, r in results.items()}, "ms"),
    ]
    return [Row("host time per launch", launch, "us")], first_call


if __name__ == "__main__":
    launch, first_call = run()
    print_table("launch cost (lower is better; ratio = tilec/triton)", launch)
    print_table("first call in a new process (lower is better; ratio = tilec/triton)", first_call)
