"""Side effects happen once per element, however many threads hold it.

On the GPU a scalar is held by every thread, and a block whose layout is larger than the
block (32 elements over 4 warps) holds each element in several threads. A store, an
atomic or an assert executed by every copy is wrong, not just wasteful: a scalar
`x = tl.load(p); tl.store(p, x + 1)` lets one warp read what another already wrote
(the count then comes out too high or too low). Each element's side effect belongs to one
thread, its owner. Each kernel below repeats a load-modify-store of the same cells, so
a copy that stores would be read back by the owner, and the final count would be off.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

STEPS = 12


@tilec.jit
def scalar_increment_kernel(cell_ptr, STEPS: tl.constexpr):
    cell = cell_ptr + tl.program_id(0)
    for _ in range(STEPS):
        x = tl.load(cell)
        tl.store(cell, x * 2 + 1)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_scalar_load_modify_store(backend, rng, num_warps):
    start = rng.integers(-50, 50, 256).astype(np.int64)
    cells = device_array(start, backend)
    scalar_increment_kernel[(256,)](cells, STEPS=STEPS, num_warps=num_warps)
    expected = start.copy()
    for _ in range(STEPS):
        expected = expected * 2 + 1
    np.testing.assert_array_equal(to_numpy(cells), expected)


@tilec.jit
def block_increment_kernel(x_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    for _ in range(STEPS):
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, x * 3 - 1)


@tilec.jit
def block_2d_increment_kernel(x_ptr, M: tl.constexpr, N: tl.constexpr, STEPS: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    offs = tl.program_id(0) * M * N + rows * N + cols
    for _ in range(STEPS):
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, x * 3 - 1)


@pytest.mark.parametrize("block,num_warps", [(2, 4), (32, 4), (64, 8), (128, 4)])
def test_replicated_block_load_modify_store(backend, rng, block, num_warps):
    """Blocks smaller than the threads: each element lives in several warps or lanes."""
    programs = 64
    start = rng.integers(-9, 9, programs * block).astype(np.int32)
    x = device_array(start, backend)
    block_increment_kernel[(programs,)](x, BLOCK=block, STEPS=STEPS, num_warps=num_warps)
    expected = start.astype(np.int64)
    for _ in range(STEPS):
        expected = expected * 3 - 1
    np.testing.assert_array_equal(to_numpy(x), expected.astype(np.int32))


def test_replicated_2d_load_modify_store(backend, rng):
    programs, m, n = 32, 4, 8
    start = rng.integers(-9, 9, programs * m * n).astype(np.int32)
    x = device_array(start, backend)
    block_2d_increment_kernel[(programs,)](x, M=m, N=n, STEPS=STEPS, num_warps=4)
    expected = start.astype(np.int64)
    for _ in range(STEPS):
        expected = expected * 3 - 1
    np.testing.assert_array_equal(to_numpy(x), expected.astype(np.int32))


@tilec.jit
def replicated_atomic_kernel(counts_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(counts_ptr + offs, offs + 1)
    tl.atomic_add(counts_ptr + BLOCK, 1)  # a scalar atomic: once per program


@pytest.mark.parametrize("block,num_warps", [(4, 4), (32, 8)])
def test_replicated_atomics_apply_once(backend, block, num_warps):
    counts = device_array(np.zeros(block + 1, np.int32), backend)
    replicated_atomic_kernel[(10,)](counts, BLOCK=block, num_warps=num_warps)
    np.testing.assert_array_equal(to_numpy(counts), np.append(10 * np.arange(1, block + 1), 10))


# ----------------------------------------------------------------------------- assert

_ASSERT_ONCE_SCRIPT = textwrap.dedent("""
    import torch, tilec, tilec.language as tl

    @tilec.jit
    def scalar_assert_kernel(x_ptr):
        tl.device_assert(tl.load(x_ptr) < 0, "scalar not negative")

    @tilec.jit
    def block_assert_kernel(x_ptr, BLOCK: tl.constexpr):
        tl.device_assert(tl.load(x_ptr + tl.arange(0, BLOCK)) < 0, "element not negative")

    x = -torch.rand(16, device="cuda") - 1
    x[{index}] = 1.0
    if {index} == 0:
        scalar_assert_kernel[(1,)](x, num_warps=8, debug=True)
    else:
        block_assert_kernel[(1,)](x, BLOCK=16, num_warps=8, debug=True)
    torch.cuda.synchronize()
""")


@pytest.mark.gpu
@pytest.mark.parametrize("index", [0, 5])
def test_gpu_assert_reports_each_failing_element_once(index):
    """A scalar (index 0) and a 16-element block on 8 warps: each held by many threads,
    one failing element, one report. In a subprocess: the assert ends the CUDA context."""
    done = subprocess.run([sys.executable, "-c", _ASSERT_ONCE_SCRIPT.format(index=index)], capture_output=True,
                          text=True, timeout=300, cwd=os.path.dirname(os.path.abspath(__file__)))
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    reports = [line for line in out.splitlines() if line.startswith("device assertion failed")]
    assert len(reports) == 1, out
    assert ("idx ( 5)" in reports[0]) == (index == 5), out
