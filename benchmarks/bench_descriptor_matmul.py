"""fp16 matmul through host-side tensor descriptors, the shape of Triton tutorial 09's
descriptor kernels: one output tile per program, and persistent (each program walks
output tiles NUM_SMS apart), both grouped for L2 reuse; A [M, K] and B given as B^T
[N, K], both read by `desc.load`, C written by `desc.store`; and the persistent kernel
with its descriptors made in the kernel from pointer arguments. One source run by tilec and by Triton with only the imports swapped, each
over the same configs, the best kept; torch (cuBLAS) beside them. Both lower the
loads to TMA copies streamed into multi-buffered rings; tilec keeps the store of the
persistent kernel (in its tile loop) as the threads' own stores.

    python benchmarks/bench_descriptor_matmul.py
"""
from __future__ import annotations

import linecache
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Row, have_triton, print_table, time_gpu  # noqa: E402

SOURCE = textwrap.dedent('''
    @triton.jit
    def persistent_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
        start_pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        k_tiles = tl.cdiv(K, BLOCK_K)
        num_tiles = num_pid_m * num_pid_n
        num_pid_in_group = GROUP_M * num_pid_n
        for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
            group_id = tile_id // num_pid_in_group
            first_pid_m = group_id * GROUP_M
            group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
            pid_m = first_pid_m + (tile_id % group_size_m)
            pid_n = (tile_id % num_pid_in_group) // group_size_m
            accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for ki in range(k_tiles):
                a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
                b = b_desc.load([pid_n * BLOCK_N, ki * BLOCK_K])
                accumulator = tl.dot(a, b.T, accumulator)
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], accumulator.to(tl.float16))

    @triton.jit
    def matmul_descriptor_persistent(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                     BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
        persistent_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_SMS)

    @triton.jit
    def matmul_device_descriptor_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                                            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                                            NUM_SMS: tl.constexpr):
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
        persistent_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_SMS)

    @triton.jit
    def matmul_descriptor(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (pid % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, ki * BLOCK_K])
            accumulator = tl.dot(a, b.T, accumulator)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], accumulator.to(tl.float16))
''')

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
CONFIGS = [
    (128, 256, 64, 8, 8, 3),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 64, 8, 8, 4),
    (128, 256, 64, 8, 8, 4),
]
SIZES = [4096, 8192]


# The three kernels: one tile per program, persistent, persistent with the descriptors
# made in the kernel (tutorial 09's `matmul_kernel_descriptor_persistent`).
KINDS = {"one tile per program": "matmul_descriptor", "persistent": "matmul_descriptor_persistent",
         "persistent, descriptors made in the kernel": "matmul_device_descriptor_persistent"}


def _kernel(triton, tl, kind: str):
    filename = f"<bench_descriptor_matmul for {triton.__name__}>"
    linecache.cache[filename] = (len(SOURCE), None, SOURCE.splitlines(keepends=True), filename)
    namespace = {"triton": triton, "tl": tl, "__name__": f"bench_descriptor_matmul_{triton.__name__}"}
    exec(compile(SOURCE, filename, "exec"), namespace)
    return namespace[KINDS[kind]]


def _best(name: str, kernel, descriptor_class, size: int, notes: list[str], kind: str) -> float:
    import torch
    torch.manual_seed(0)
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b_t = torch.randn(size, size, device="cuda", dtype=torch.float16)  # B^T: [N, K]
    expected = a @ b_t.T
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    best, best_config = 0.0, None
    for bm, bn, bk, gm, warps, stages in CONFIGS:
        c = torch.empty(size, size, device="cuda", dtype=torch.float16)
        if KINDS[kind].startswith("matmul_device"):
            descs = (a, b_t, c)
        else:
            descs = (descriptor_class.from_tensor(a, [bm, bk]), descriptor_class.from_tensor(b_t, [bn, bk]),
                     descriptor_class.from_tensor(c, [bm, bn]))
        tiles = (size // bm) * (size // bn)
        grid = (min(sms, tiles),) if "persistent" in kind else (tiles,)

        def call(descs=descs, grid=grid, bm=bm, bn=bn, bk=bk, gm=gm, warps=warps, stages=stages):
            return kernel[grid](*descs, size, size, size, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                                NUM_SMS=grid[0], num_warps=warps, num_stages=stages)
        try:
            handle = call()
            torch.testing.assert_close(c, expected, rtol=2e-2, atol=1.0)
        except Exception as exc:  # noqa: BLE001 -- a config one compiler cannot run is reported, not hidden
            notes.append(f"{size}^3 {name} {(bm, bn, bk, warps, stages)}: skipped, {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:160]}")
            continue
        tflops = 2 * size ** 3 / time_gpu(call, reps=20) / 1e9
        if tflops > best:
            best, best_config = tflops, (bm, bn, bk, gm, warps, stages)
            if name.startswith("tilec"):
                handle = kernel.warmup(*descs, size, size, size, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                                       NUM_SMS=grid[0], num_warps=warps, num_stages=stages, grid=grid)
            resources = (handle.n_regs, handle.n_spills, handle.metadata.shared)
    if best_config is not None:
        notes.append(f"{size}^3 {name}: best (BM, BN, BK, GROUP_M, warps, stages) = {best_config}, "
                     f"regs {resources[0]}, spills {resources[1]}, shared {resources[2]}")
    return best


def run() -> tuple[list[Row], list[str]]:
    import torch
    import tilec
    import tilec.language as tcl
    from tilec.tools.tensor_descriptor import TensorDescriptor as TilecDescriptor
    rows, notes = [], []
    # Descriptors made in the kernel: Triton builds their tensor maps in global scratch
    # memory it asks this allocator for; tilec's launcher encodes them on the host.
    def scratch(size: int, alignment: int, stream):
        return torch.empty(size, device="cuda", dtype=torch.int8)
    tilec.set_allocator(scratch)
    for kind in KINDS:
        for size in SIZES:
            results = {"tilec": _best(f"tilec {kind}", _kernel(tilec, tcl, kind), TilecDescriptor, size, notes, kind)}
            if have_triton():
                import triton
                import triton.language as tl
                from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor
                triton.set_allocator(scratch)
                results["triton"] = _best(f"triton {kind}", _kernel(triton, tl, kind), TritonDescriptor, size,
                                          notes, kind)
            a = torch.randn(size, size, device="cuda", dtype=torch.float16)
            b = torch.randn(size, size, device="cuda", dtype=torch.float16)
            results["torch"] = 2 * size ** 3 / time_gpu(lambda: a @ b, reps=20) / 1e9
            label = {"one tile per program": "", "persistent": " persistent"}.get(kind, " persistent, in-kernel")
            rows.append(Row(f"descriptor matmul f16 {size}^3{label}", results, "TF/s"))
    return rows, notes


if __name__ == "__main__":
    found, found_notes = run()
    print_table("persistent descriptor matmul fp16 (TFLOP/s, higher is better)", found)
    for note in found_notes:
        print(note)
