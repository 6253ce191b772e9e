"""Shared benchmark helpers: one timing method for every contender, and a result table.

Timing follows the usual GPU method: warm up, then for each repetition flush the L2
cache (zero a 256 MB buffer), time the call alone with CUDA events, and report the
median. Every contender is timed by this same function in the same process.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Callable

# The tilec kernels benchmarked are the examples' own.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))


def have_triton() -> bool:
    try:
        import triton  # noqa: F401
        return True
    except ImportError:
        return False


def time_gpu(fn: Callable[[], object], warmup: int = 10, reps: int = 50) -> float:
    """Median milliseconds of fn() on the GPU, with a cold L2 for each call."""
    import torch
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


@dataclass
class Row:
    name: str
    results: dict[str, float]  # contender -> value (higher is better)
    unit: str
    notes: list[str] = field(default_factory=list)  # e.g. each contender's best config and resources


def print_table(title: str, rows: list[Row], reference: str = "triton") -> None:
    contenders = []
    for row in rows:
        for name in row.results:
            if name not in contenders:
                contenders.append(name)
    print(f"\n{title}")
    widths = {c: max(14, len(c) + 2) for c in contenders}
    last = "tilec/" + reference
    header = f"{'case':<28}" + "".join(f"{c:>{widths[c]}}" for c in contenders) + f"{last:>{max(16, len(last) + 2)}}"
    print(header)
    print("-" * len(header))
    for row in rows:
        cells = "".join(f"{row.results[c]:>{widths[c] - 4}.3f} {row.unit:<3}" if c in row.results
                        else f"{'-':>{widths[c]}}" for c in contenders)
        ratio = row.results.get("tilec", 0) / row.results[reference] if row.results.get(reference) else float("nan")
        print(f"{row.name:<28}{cells}{ratio:>{max(16, len(last) + 2) - 1}.3f}x")


def median_cold_compiles(script: str, contenders: dict[str, tuple[str, dict | None]],
                         runs: int = 5) -> dict[str, dict]:
    """For each contender (name -> (which, extra environment)), the median over `runs`
    fresh processes of each time `python script --cold-compile which` reports on its
    `RESULT` line, each process with empty tilec and Triton caches.

    The contenders take turns, one process each per round: the host's load drifts over a
    run (one process moves by up to 40% on a shared host), and interleaving spreads that
    drift over every contender rather than charging it to whichever ran during it."""
    results: dict[str, list[dict]] = {name: [] for name in contenders}
    for _ in range(runs):
        for name, (which, extra_env) in contenders.items():
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "TILEC_CACHE_DIR": os.path.join(cache, "tilec"),
                       "TRITON_CACHE_DIR": os.path.join(cache, "triton"), **(extra_env or {})}
                done = subprocess.run([sys.executable, os.path.abspath(script), "--cold-compile", which], env=env,
                                      capture_output=True, text=True, timeout=600)
            found = [json.loads(line[len("RESULT "):]) for line in done.stdout.splitlines()
                     if line.startswith("RESULT ")]
            if found:
                results[name].append(found[0])
            else:
                print(done.stdout[-2000:], done.stderr[-2000:])
    return {name: {key: statistics.median(r[key] for r in found) for key in found[0]}
            for name, found in results.items() if found}
