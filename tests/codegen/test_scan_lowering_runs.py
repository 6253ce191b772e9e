"""Scans lowered to LLVM IR and run on the CPU, one block at a time (block_llvm.py): every
output element checked against NumPy, and every shared-memory access of the scan's
partial totals checked for bank conflicts. Integer-valued inputs keep the float sums
exact, so results are compared for equality.

Kernels: a cumsum down the rows of a loaded tile (threads hold one element of each
repeat along the axis, lanes, warps and repeats after it), the corpus's running cumsums
down columns and along rows in blocks (loops, masks, a sum beside the scan), a tuple scan
(a first-order linear recurrence), and hand-written layouts: lane bits along the axis
that are not adjacent, and runs that do not tile the axis as a blocked layout does (the
lowering's fallback path)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from block_llvm import Memory, run
from scan_ttgir import STRIP, linear, llvm_ir, scan_kernel
from tilec_testing import cumsum_cols_kernel as cumsum_cols, cumsum_rows_kernel as cumsum_rows


@tilec.jit
def cumsum_tile(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=AXIS, reverse=REVERSE))


@tilec.jit
def _affine(a_first, b_first, a_second, b_second):
    return a_first * a_second, b_first * a_second + b_second


@tilec.jit
def recurrence(a_ptr, x_ptr, h_ptr, T, BLOCK_R: tl.constexpr, BLOCK_T: tl.constexpr, REVERSE: tl.constexpr):
    rows = tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_T)
    mask = cols[None, :] < T
    offsets = rows[:, None] * BLOCK_T + cols[None, :]
    a = tl.load(a_ptr + offsets, mask=mask, other=1.0)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    _, h = tl.associative_scan((a, x), axis=1, combine_fn=_affine, reverse=REVERSE)
    tl.store(h_ptr + offsets, h, mask=mask)


def _integers(rng, shape) -> np.ndarray:
    return rng.integers(-8, 9, shape).astype(np.float32)


def _cumsum(x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(x, axis), axis), axis) if reverse else np.cumsum(x, axis)


TILES = [  # (M, N, axis, reverse, num_warps)
    (64, 32, 0, False, 4),  # the corpus's strip
    (64, 32, 0, True, 4),
    (16, 64, 0, False, 8),
    (128, 8, 0, True, 2),
    (32, 64, 1, False, 4),
    (8, 512, 1, True, 4),
]


@pytest.mark.parametrize("m, n, axis, reverse, num_warps", TILES)
def test_cumsum_of_a_loaded_tile(rng, m, n, axis, reverse, num_warps):
    kernel = tilec.compile(cumsum_tile, signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16"}, target="sm_90a",
                           num_warps=num_warps, constexprs={"M": m, "N": n, "AXIS": axis, "REVERSE": reverse})
    x = _integers(rng, (m, n))
    memory = Memory()
    memory.put_array(0, x)
    memory.put_array(1, np.full((m, n), np.nan, np.float32))
    run(kernel.asm["llir"], 32 * num_warps, memory)
    np.testing.assert_array_equal(memory.get_array(1, x), _cumsum(x, axis, reverse))


@pytest.mark.parametrize("reverse", [False, True])
def test_slots_of_a_column_scan_without_bank_conflicts(rng, reverse):
    """The corpus's 64x32 strip (STRIP: 4 repeats of 4 warps of 4 lanes down a column)
    scanned down its columns: the last lane of each warp along the axis stores the totals
    of its 4 columns x 4 repeats, every lane loads the totals before its own. Lanes 0-7
    of a warp hold columns 4c..4c+3: slot-major, one slot of the 32 columns is 32
    consecutive words (row-major, 16 slots a column, those lanes were 64 words apart: 8
    passes for every access). Checked on the scalar accesses the lowering emits, before
    LLVM joins a thread's 4 columns into one vector."""
    x = _integers(rng, (64, 32))
    memory = Memory()
    memory.put_array(0, x)
    memory.put_array(1, np.full((64, 32), np.nan, np.float32))
    run(llvm_ir(scan_kernel(STRIP, 64, 32, 0, reverse)), 128, memory)
    np.testing.assert_array_equal(memory.get_array(1, x), _cumsum(x, 0, reverse))
    passes = memory.shared_wavefronts()  # the kernel's only shared memory is the scan's slots
    assert len(passes) >= 4 * 16 + 4 * 15, len(passes)  # per warp: 16 slot stores, 15 slot loads
    assert set(passes.values()) == {1}, {key: n for key, n in passes.items() if n > 1}


def test_corpus_cumsum_down_columns(rng):
    """k_scans' cumsum_cols: 2 strips of 32 columns (the second masked), 80 rows in
    blocks of 64 (the second masked), the running total carried by a sum beside the scan."""
    kernel = tilec.compile(cumsum_cols, signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "M": "i32",
                                                   "N": "i32", "stride": "i32:16"},
                           target="sm_90a", num_warps=4, constexprs={"BLOCK_M": 64, "BLOCK_N": 32})
    m, n, stride = 80, 45, 48
    x = _integers(rng, (m, stride))
    memory = Memory()
    memory.put_array(0, x)
    memory.put_array(1, np.full((m, stride), np.nan, np.float32))
    for strip in range(2):
        run(kernel.asm["llir"], 128, memory, ctaid=strip, scalars={2: m, 3: n, 4: stride})
    got = memory.get_array(1, x)
    np.testing.assert_array_equal(got[:, :n], np.cumsum(x[:, :n], 0))
    assert np.isnan(got[:, n:]).all()  # masked columns untouched


@pytest.mark.parametrize("reverse", [False, True])
def test_corpus_cumsum_along_rows_in_blocks(rng, reverse):
    kernel = tilec.compile(cumsum_rows, signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "N": "i32",
                                                   "stride": "i32:16"},
                           target="sm_90a", num_warps=4, constexprs={"REVERSE": reverse, "BLOCK_N": 1024})
    n = 1100
    x = _integers(rng, (1, n))
    memory = Memory()
    memory.put_array(0, x)
    memory.put_array(1, np.full((1, n), np.nan, np.float32))
    run(kernel.asm["llir"], 128, memory, scalars={2: n, 3: n})
    np.testing.assert_array_equal(memory.get_array(1, x), _cumsum(x, 1, reverse))


@pytest.mark.parametrize("reverse", [False, True])
def test_tuple_scan_linear_recurrence(rng, reverse):
    """h_t = a_t h_(t-1) + x_t through a scan of (a, x) pairs: two slot arrays, and a
    combiner whose operands may not be swapped. a = +-1 and small integers keep every
    product and sum exact."""
    r, t, block_t = 4, 200, 256
    kernel = tilec.compile(recurrence, signature={"a_ptr": "*fp32:16", "x_ptr": "*fp32:16", "h_ptr": "*fp32:16",
                                                  "T": "i32"},
                           target="sm_90a", num_warps=4, constexprs={"BLOCK_R": r, "BLOCK_T": block_t,
                                                                     "REVERSE": reverse})
    a = rng.choice(np.array([1.0, -1.0], np.float32), (r, block_t))
    x = _integers(rng, (r, block_t))
    memory = Memory()
    memory.put_array(0, a)
    memory.put_array(1, x)
    memory.put_array(2, np.full((r, block_t), np.nan, np.float32))
    run(kernel.asm["llir"], 128, memory, scalars={3: t})
    want = np.zeros((r, t), np.float64)
    h = np.zeros(r)
    for s in (range(t - 1, -1, -1) if reverse else range(t)):
        h = a[:, s] * h + x[:, s]
        want[:, s] = h
    np.testing.assert_array_equal(memory.get_array(2, a)[:, :t], want)


# ----------------------------------------------------------------------------- hand-written layouts

# 64 x 8, scanned along rows (axis 0). Lanes 0 and 2 move down the rows (1 and 2 rows),
# lanes 1, 3 and 4 along the columns: the axis' lane bits are 0 and 2, not adjacent (the
# lane one place earlier is not lane - 1 for all of them). Warps: 4 and 8 rows;
# registers: repeats 16 and 32 rows apart.
SPLIT_LANES = linear(register=[[16, 0], [32, 0]], lane=[[1, 0], [0, 1], [2, 0], [0, 2], [0, 4]],
                     warp=[[4, 0], [8, 0]])
# Runs that do not tile the axis as a blocked layout: registers 1 and 16 rows apart (runs
# of 2 rows), lanes 2, 4 and 8 rows apart, the first warp bit 32 rows (not 16, where a
# blocked layout's warps would follow its lanes), the second 4 columns: the fallback,
# every run's total through shared memory.
SCATTERED_RUNS = linear(register=[[1, 0], [16, 0]], lane=[[2, 0], [4, 0], [8, 0], [0, 1], [0, 2]],
                        warp=[[32, 0], [0, 4]])


@pytest.mark.parametrize("layout, m, n", [(SPLIT_LANES, 64, 8), (SCATTERED_RUNS, 64, 8)],
                         ids=["lane-bits-not-adjacent", "runs-not-blocked"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_in_a_linear_layout(rng, layout, m, n, reverse):
    llir = llvm_ir(scan_kernel(layout, m, n, 0, reverse))
    x = _integers(rng, (m, n))
    memory = Memory()
    memory.put_array(0, x)
    memory.put_array(1, np.full((m, n), np.nan, np.float32))
    run(llir, 128, memory)
    np.testing.assert_array_equal(memory.get_array(1, x), _cumsum(x, 0, reverse))
