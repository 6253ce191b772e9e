"""tile-carry-pointer-bases: a loop that advances a block of pointers by one scalar
(`ptrs += step`) carries the scalar base and rebuilds the block from it each iteration.

The compiled kernels are run on the CPU (block_llvm.py), one block of threads, against
NumPy: a runtime step, a constant step, a negative one, and the pointers used after the
loop. The IR shows the loop carrying a scalar pointer; blocks advanced by a tensor, and
blocks of few addresses a thread (16-byte vectors), keep their pointers. The corpus's grouped GEMM over pointer tables (2-byte
loads, 128x256x64, 8 warps) went from 652 to 372 bytes of spill stores."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from block_llvm import Memory, param_base, run
from tilec.backend import toolkit

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def walk_kernel(x_ptr, out_ptr, last_ptr, stride, step, n, BM: tl.constexpr, BN: tl.constexpr,
                STEP: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    ptrs = x_ptr + rows[:, None] * stride + cols[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(n):
        acc += tl.load(ptrs)
        if STEP == 0:
            ptrs += step
        else:
            ptrs += STEP
    out = rows[:, None] * BN + cols[None, :]
    tl.store(out_ptr + out, acc)
    tl.store(last_ptr + out, tl.load(ptrs))  # where the loop left them


@tilec.jit
def tensor_step_kernel(x_ptr, out_ptr, n, BN: tl.constexpr):
    cols = tl.arange(0, BN)
    ptrs = x_ptr + cols
    acc = tl.zeros((BN,), dtype=tl.float32)
    for i in range(n):
        acc += tl.load(ptrs)
        ptrs += cols % 2 + 1  # a step per element: the pointers stay
    tl.store(out_ptr + cols, acc)


# x_ptr of unknown alignment: scalar loads, 32 addresses a thread for a 32x32 block over one warp
SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32:16", "last_ptr": "*fp32:16", "stride": "i32", "step": "i32",
             "n": "i32"}


def _carried_types(ttir: str) -> str:
    return re.search(r"scf\.for .*? -> \((.*)\)", ttir).group(1)


@pytest.mark.parametrize("step, const_step, n, ints", [(40, 0, 3, "i32"), (-24, 0, 4, "i32"), (0, 16, 5, "i32"),
                                                       (0, -8, 2, "i32"), (40, 0, 0, "i32"), (-40, 0, 3, "i64")])
def test_runs_as_numpy_says(rng, step, const_step, n, ints):
    bm, bn, stride = 32, 32, 40
    signature = dict(SIGNATURE, stride=ints, step=ints)
    kernel = tilec.compile(walk_kernel, signature=signature, target="sm_90a", num_warps=1,
                           constexprs={"BM": bm, "BN": bn, "STEP": const_step})
    carried = _carried_types(kernel.asm["ttir"])
    assert "!tile.ptr<f32>" in carried and "x!tile.ptr" not in carried, carried
    advance = step if const_step == 0 else const_step
    # x holds every position the walk visits, negative steps included
    positions = [i * advance for i in range(n + 1)]
    low = -min(positions + [0])
    x = rng.integers(-8, 9, low + max(positions + [0]) + bm * stride + bn).astype(np.float32)
    memory = Memory()
    memory.put_array(0, x)
    memory.put_array(1, np.full((bm, bn), np.nan, np.float32))
    memory.put_array(2, np.full((bm, bn), np.nan, np.float32))
    # x_ptr points `low` elements into parameter 0's array
    run(kernel.asm["llir"], 32, memory, scalars={0: param_base(0) + 4 * low, 3: stride, 4: step, 5: n})
    tile = np.arange(bm)[:, None] * stride + np.arange(bn)[None, :] + low
    want = sum((x[tile + p] for p in positions[:n]), np.zeros((bm, bn), np.float32))
    np.testing.assert_array_equal(memory.get_array(1, np.zeros((bm, bn), np.float32)), want)
    np.testing.assert_array_equal(memory.get_array(2, np.zeros((bm, bn), np.float32)), x[tile + positions[n]])


def test_a_step_per_element_keeps_the_pointers():
    kernel = tilec.compile(tensor_step_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32:16", "n": "i32"},
                           target="sm_90a", num_warps=1, constexprs={"BN": 1024})
    assert "x!tile.ptr<f32>" in _carried_types(kernel.asm["ttir"])


@pytest.mark.parametrize("x_type, num_warps, carried", [("*fp32:16", 1, False), ("*fp32", 1, True),
                                                        ("*fp32", 4, False)])
def test_only_blocks_of_many_addresses_per_thread(x_type, num_warps, carried):
    """32x32 fp32: 16-byte aligned, a thread holds 8 vectors (32 elements / 4): the
    pointers stay; unaligned, 32 scalar addresses over one warp: the base is carried; over
    four warps, 8 a thread: they stay."""
    kernel = tilec.compile(walk_kernel, signature=dict(SIGNATURE, x_ptr=x_type, stride="i32:16", step="i32:16"), target="sm_90a",
                           num_warps=num_warps, constexprs={"BM": 32, "BN": 32, "STEP": 0})
    assert ("x!tile.ptr<f32>" not in _carried_types(kernel.asm["ttir"])) == carried
