"""Reductions whose partials cross warps through shared memory, combined directly (every
thread loads the partials of each of its elements), lowered to LLVM IR and run on the
CPU one block at a time (block_llvm.py): the results checked against NumPy, and every
shared-memory access of the partials checked for bank conflicts.

The corpus's argsort by packed keys (k_topk_sort: an fp16 row's order-preserving bits in
the high word of an i64, the column in the low word, tl.sort of the keys) loads 8 fp16
a thread, so each thread holds 8 consecutive keys through the bitonic network, lanes
the next 5 index bits and warps the top ones. Its stages across warps are reductions
of the reshaped keys. With the partials in row-major output order, a warp's lanes stored
and loaded 128 bytes apart, all in one bank: 32 passes for every 8-byte access (0.83x
Triton at 16384x1024 on an H200, where the fp32 variant, 16 passes, ran at 1.55x).
In lane-major slots, the 2 partials of an element side by side, a warp's lanes store 8
bytes 16 apart and load both partials as one 16-byte vector: 4 passes each, what 32
lanes moving 16 bytes need."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from block_llvm import Memory, run


@tilec.jit
def argsort_row(x_ptr, indices_ptr, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    bits = tl.load(x_ptr + cols).to(tl.float32).to(tl.int32, bitcast=True)
    keys = ((bits ^ ((bits >> 31) & 0x7FFFFFFF)).to(tl.int64) << 32) | cols.to(tl.int64)
    tl.store(indices_ptr + cols, tl.sort(keys).to(tl.int32))


@tilec.jit
def column_sums(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offsets = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + tl.arange(0, N), tl.sum(tl.load(x_ptr + offsets), axis=0))


def _bank_passes(memory: Memory) -> list[tuple[int, int]]:
    """(bytes a lane, passes) of every warp-wide shared access."""
    sizes: dict[tuple, int] = {}
    for tid, when, _, size in memory.shared_accesses:
        sizes[(tid // 32, when)] = max(size, sizes.get((tid // 32, when), 0))
    return [(sizes[key], passes) for key, passes in memory.shared_wavefronts().items()]


@pytest.mark.parametrize("dtype, block, num_warps", [("fp16", 1024, 4), ("fp32", 512, 2)])
def test_packed_key_argsort_without_bank_conflicts(rng, dtype, block, num_warps):
    """fp16: the corpus case's layout (8 keys a thread, warps on index bits 8 and 9);
    fp32: 4 keys a thread twice (16 passes an access before)."""
    kernel = tilec.compile(argsort_row, signature={"x_ptr": f"*{dtype}:16", "indices_ptr": "*i32:16"},
                           target="sm_90a", num_warps=num_warps, constexprs={"BLOCK_N": block})
    # standard normal values in fp16 repeat: ties must keep the column order
    x = rng.standard_normal(block).astype(np.float16 if dtype == "fp16" else np.float32)
    memory = Memory()
    memory.put_array(0, x)
    memory.put_array(1, np.full(block, -1, np.int32))
    run(kernel.asm["llir"], 32 * num_warps, memory)
    np.testing.assert_array_equal(memory.get_array(1, np.zeros(block, np.int32)), np.argsort(x, kind="stable"))
    passes = _bank_passes(memory)
    # the stages across warps: bits 8 and 9 of 10 (3 stages), bit 7 of 9 (2); in each,
    # every thread stores its partial of its 8 keys and loads both partials of each
    stages = {"fp16": 3, "fp32": 2}[dtype]
    # (the conversion of the sorted indices to the store's layout, 4 a thread as one
    # 16-byte write, adds conflict-free 16-byte accesses of its own)
    assert sorted(set(passes)) == [(8, 4), (16, 4)], sorted(set(passes))
    assert passes.count((8, 4)) == stages * 8 * num_warps, len(passes)
    assert passes.count((16, 4)) >= stages * 8 * num_warps, len(passes)


def test_column_sums_without_bank_conflicts(rng):
    """A 64x32 fp32 tile summed down its columns by 2 warps: the two warps' partials of
    each thread's 4 columns (8 lanes along the rows, 4 columns apart; the 4 lanes down
    the rows hold the same columns). Row-major, lanes were 32 bytes apart: 2 passes an
    access; lane-major, 8 bytes apart (stores) and one 8-byte load of both partials."""
    kernel = tilec.compile(column_sums, signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16"},
                           target="sm_90a", num_warps=2, constexprs={"M": 64, "N": 32})
    x = rng.integers(-8, 9, (64, 32)).astype(np.float32)
    memory = Memory()
    memory.put_array(0, x)
    memory.put_array(1, np.full(32, np.nan, np.float32))
    run(kernel.asm["llir"], 64, memory)
    np.testing.assert_array_equal(memory.get_array(1, np.zeros(32, np.float32)), x.sum(0))
    passes = _bank_passes(memory)
    assert sorted(set(passes)) == [(4, 1), (8, 2)], sorted(set(passes))  # 8 bytes: 16 lanes a pass
