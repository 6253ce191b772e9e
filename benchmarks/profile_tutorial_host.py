"""Where a tutorial's host wrapper spends its time, on tilec and on Triton: the time per
call with the GPU synchronised after each (what do_bench sees when the host is the
bottleneck), the host time to enqueue one call, and tilec's hottest Python functions.

    python benchmarks/profile_tutorial_host.py [tutorials folder]
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_tutorials import load_tutorial  # noqa: E402


def wrappers(module, number: str, torch):
    """(name, call) of the wrappers to measure."""
    if number == "02":
        x = torch.randn(1823, 781, device="cuda")
        yield "softmax 1823x781", lambda: module.softmax(x)
    if number == "09":
        a = torch.randn(512, 512, device="cuda", dtype=torch.float16)
        b = torch.randn(512, 512, device="cuda", dtype=torch.float16).T.contiguous()
        for name in ("matmul_tma", "matmul_tma_persistent", "matmul_descriptor_persistent", "matmul_persistent"):
            fn = getattr(module, name, None)
            if fn is None:
                continue
            if name == "matmul_persistent":
                yield name, (lambda fn=fn: fn(a, b.T))
            else:
                yield name, (lambda fn=fn: fn(a, b, False))


def measure(call, torch, repeat: int = 200) -> tuple[float, float]:
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        call()
        torch.cuda.synchronize()
    synced = (time.perf_counter() - start) / repeat
    start = time.perf_counter()
    for _ in range(repeat):
        call()
    enqueue = (time.perf_counter() - start) / repeat
    torch.cuda.synchronize()
    return synced * 1e6, enqueue * 1e6


def blocks_on_the_gpu(call, torch) -> float:
    """Host time of one call made while the GPU is busy for ~20 ms: about 20 ms when the
    call waits for the GPU (a synchronisation hidden in the launch path), else small."""
    call()
    torch.cuda.synchronize()
    torch.cuda._sleep(40_000_000)
    start = time.perf_counter()
    call()
    host = time.perf_counter() - start
    torch.cuda.synchronize()
    return host * 1e3


def main() -> None:
    import torch
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".triton-tutorials")
    for number, file in (("02", "02-fused-softmax.py"), ("09", "09-persistent-matmul.py")):
        mods = {backend: load_tutorial(os.path.join(folder, file), backend).module for backend in ("tilec", "triton")}
        for backend, module in mods.items():
            for name, call in wrappers(module, number, torch):
                synced, enqueue = measure(call, torch)
                blocked = blocks_on_the_gpu(call, torch)
                print(f"{number} {name:32} {backend:6}: {synced:8.1f} us per call synchronised, "
                      f"{enqueue:8.1f} us to enqueue, {blocked:6.2f} ms behind a busy GPU", flush=True)
                if backend == "tilec" and os.environ.get("PROFILE"):
                    profile = cProfile.Profile()
                    profile.enable()
                    for _ in range(100):
                        call()
                    profile.disable()
                    torch.cuda.synchronize()
                    text = io.StringIO()
                    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(8)
                    print("\n".join(line for line in text.getvalue().splitlines()[6:22] if line.strip()))


if __name__ == "__main__":
    main()
