"""Elementwise ops computed once per run of equal values a thread holds.

Axis info proves `cols < N` constant over aligned runs of 16 columns when the columns
start at a multiple of 16 and N % 16 == 0 (the `%16` specialisation). A thread holding
several columns of one run then needs one compare, not one per column; the masks of a
tiled matmul's loads and epilogue, and everything computed from them (`&` of the row
and column masks), shrink by the thread's run length. The split-K matmul's PTX had 269
`setp` at 128x128x64 (Triton 86), 93 now."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec_testing import device_array, to_numpy

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def clamp_tail_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.where(offs < n, x, -1.0))


@tilec.jit
def masked_tile_kernel(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offsets = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    # The select reads the mask element by element (a load or store reads it per vector).
    tl.store(y_ptr + offsets, tl.where(mask, x * 2.0, 1.0), mask=rows[:, None] < M)


def _count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx))


@pytest.mark.parametrize("n_spec,compares", [("i32:16", 1), ("i32", 4)])
def test_compare_once_per_constant_run(n_spec, compares):
    # 512 elements over 128 threads: 4 consecutive ones a thread (one 16-byte load).
    kernel = tilec.compile(clamp_tail_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "n": n_spec},
                           target="sm_90", num_warps=4, constexprs={"BLOCK": 512})
    ptx = kernel.asm["ptx"]
    assert _count(ptx, r"\bsetp\.") == compares
    assert _count(ptx, r"\bselp\.") == 4  # the selects still differ: x does


def test_tile_mask_and_once_per_run():
    signature = {"x_ptr": "*fp16:16", "y_ptr": "*fp16:16", "M": "i32", "N": "i32:16", "stride": "i32:16"}
    kernel = tilec.compile(masked_tile_kernel, signature=signature, target="sm_90", num_warps=4,
                           constexprs={"BLOCK_M": 64, "BLOCK_N": 128})
    ptx = kernel.asm["ptx"]
    ttgir = kernel.asm["ttgir"]
    per_thread = re.search(r"sizePerThread = array<i32: 1, (\d+)>", ttgir)
    assert per_thread is not None and int(per_thread.group(1)) == 8  # 8 halves a thread: one v4 load
    # A thread holds 64 * 128 / 128 = 64 elements in 8 rows of 8 columns: 8 row compares,
    # one column compare, one `&` per row (not one per element), 64 selects.
    assert _count(ptx, r"\bsetp\.") == 8 + 1
    assert _count(ptx, r"\band\.pred") == 8
    assert _count(ptx, r"\bselp\.") == 64


@pytest.mark.parametrize("n", [48, 200, 256])
def test_masked_tile_tails(backend, n):
    """n = 48 ends the mask at a 16-column run boundary inside a thread's tile (shared
    compares), 200 at no boundary (no divisibility: a compare per column), 256 past the
    tile; every element must be masked right either way."""
    m, block_m, block_n = 70, 64, 128
    rng = np.random.default_rng(n)
    stride = 256
    x = rng.standard_normal((m, stride)).astype(np.float16)
    y = np.full((m, stride), 7.0, dtype=np.float16)
    x_dev, y_dev = device_array(x, backend), device_array(y, backend)
    grid = (tilec.cdiv(m, block_m), tilec.cdiv(n, block_n))
    masked_tile_kernel[grid](x_dev, y_dev, m, n, stride, BLOCK_M=block_m, BLOCK_N=block_n)
    want = y.copy()
    want[:, :grid[1] * block_n] = 1.0  # in a program's tile, outside the mask
    want[:, :n] = x[:, :n].astype(np.float32) * 2.0
    np.testing.assert_array_equal(to_numpy(y_dev), want)
