"""Why Triton's tutorial 02 (fused softmax) runs at the speed it does on tilec and on
Triton: for each shape, what its wrapper computes from the compiled kernel (registers,
shared memory, the occupancy-sized persistent grid), the wrapper's time per call, and the
kernel alone, launched on the same grid and on one program per row.

    python benchmarks/profile_softmax_tutorial.py [tutorials folder]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from bench_tutorials import load_tutorial  # noqa: E402


def main() -> None:
    import torch

    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".triton-tutorials")
    path = os.path.join(folder, "02-fused-softmax.py")
    import tilec.testing
    bench = tilec.testing.do_bench
    print(f"device: {torch.cuda.get_device_name()}")
    for backend in ("triton", "tilec"):
        module = load_tutorial(path, backend).module
        for rows, cols in ((1823, 781), (4096, 4096), (8192, 8192), (32768, 1024)):
            x = torch.randn(rows, cols, device="cuda")
            y = module.softmax(x)
            torch.testing.assert_close(y, torch.softmax(x, dim=-1))
            block = module.triton.next_power_of_2(cols)
            stages = 4 if module.SIZE_SMEM > 200000 else 2
            kernel = module.softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), rows, cols, BLOCK_SIZE=block,
                                                  num_stages=stages, num_warps=8, grid=(1,))
            kernel._init_handles()
            regs, smem = kernel.n_regs, kernel.metadata.shared
            occupancy = min(module.NUM_REGS // (regs * module.WARP_SIZE * 8), module.SIZE_SMEM // smem)
            programs = min(module.NUM_SM * occupancy, rows)
            wrapper = bench(lambda: module.softmax(x))
            persistent = bench(lambda: module.softmax_kernel[(programs, 1, 1)](
                y, x, x.stride(0), y.stride(0), rows, cols, block, stages, num_warps=8))
            per_row = bench(lambda: module.softmax_kernel[(rows, 1, 1)](
                y, x, x.stride(0), y.stride(0), rows, cols, block, stages, num_warps=8))
            gbps = 2 * x.numel() * 4 / 1e6
            print(f"{backend:6s} {rows}x{cols}: regs {regs} shared {smem} occupancy {occupancy} grid {programs} | "
                  f"wrapper {wrapper * 1e3:.1f} us ({gbps / wrapper:.0f} GB/s), kernel on that grid "
                  f"{persistent * 1e3:.1f} us, one program per row {per_row * 1e3:.1f} us", flush=True)


if __name__ == "__main__":
    main()
