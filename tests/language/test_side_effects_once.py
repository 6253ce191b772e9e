"""Side effects happen once per element, however many threads hold it.

On the GPU a scalar is held by every thread, and a block whose layout is larger than the
block (32 elements over 4 warps) holds each element in several threads. A store, an
atomic or an assert executed by every copy is wrong, not just wasteful: a scalar
`x = tl.load(p); tl.store(p, x + 1)` lets one warp read what another already wrote
(the count then comes out too high or too low). Each element's side effect belongs to one
thread, its owner. The kernels below do load-modify-stores of the same cells over many
programs (the race is rare: it showed in a few of 16384 programs of 32 warps), some
repeating it, so a copy that stores late is read back and the final value is off.
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


def _programs(backend: str) -> int:
    # The race needed many warps and many programs to show on an H100 (a few wrong
    # cells in 16384 programs of 32 warps); the interpreter has no threads to race.
    return 16384 if backend == "gpu" else 64


@tilec.jit
def scalar_double_kernel(cell_ptr):
    cell = cell_ptr + tl.program_id(0)
    x = tl.load(cell)
    tl.store(cell, x * 2)


@tilec.jit
def scalar_steps_kernel(cell_ptr, STEPS: tl.constexpr):
    cell = cell_ptr + tl.program_id(0)
    for _ in range(STEPS):
        x = tl.load(cell)
        tl.store(cell, x * 2 + 1)


@pytest.mark.parametrize("num_warps", [1, 8, 32])
def test_scalar_load_modify_store(backend, rng, num_warps):
    programs = _programs(backend)
    for _ in range(3):
        start = rng.integers(-50, 50, programs).astype(np.int32)
        cells = device_array(start, backend)
        scalar_double_kernel[(programs,)](cells, num_warps=num_warps)
        np.testing.assert_array_equal(to_numpy(cells), start * 2)
    start = rng.integers(-50, 50, programs).astype(np.int64)
    cells = device_array(start, backend)
    scalar_steps_kernel[(programs,)](cells, STEPS=STEPS, num_warps=num_warps)
    expected = start.copy()
    for _ in range(STEPS):
        expected = expected * 2 + 1
    np.testing.assert_array_equal(to_numpy(cells), expected)


@tilec.jit
def block_steps_kernel(x_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    for _ in range(STEPS):
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, x * 3 - 1)


@tilec.jit
def block_2d_steps_kernel(x_ptr, M: tl.constexpr, N: tl.constexpr, STEPS: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    offs = tl.program_id(0) * M * N + rows * N + cols
    for _ in range(STEPS):
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, x * 3 - 1)


def _after_steps(start: np.ndarray, steps: int) -> np.ndarray:
    expected = start.astype(np.int64)
    for _ in range(steps):
        expected = expected * 3 - 1
    return expected.astype(start.dtype)


@pytest.mark.parametrize("block,num_warps", [(2, 32), (32, 4), (64, 8), (128, 32)])
@pytest.mark.parametrize("steps", [1, STEPS])
def test_replicated_block_load_modify_store(backend, rng, block, num_warps, steps):
    """Blocks smaller than the threads: each element lives in several warps or lanes."""
    programs = _programs(backend) // (block // 2)
    start = rng.integers(-9, 9, programs * block).astype(np.int32)
    x = device_array(start, backend)
    block_steps_kernel[(programs,)](x, BLOCK=block, STEPS=steps, num_warps=num_warps)
    np.testing.assert_array_equal(to_numpy(x), _after_steps(start, steps))


def test_replicated_2d_load_modify_store(backend, rng):
    programs, m, n = 32, 4, 8
    start = rng.integers(-9, 9, programs * m * n).astype(np.int32)
    x = device_array(start, backend)
    block_2d_steps_kernel[(programs,)](x, M=m, N=n, STEPS=STEPS, num_warps=4)
    np.testing.assert_array_equal(to_numpy(x), _after_steps(start, STEPS))


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
def test_gpu_assert_reports_each_failing_element_once(index, tmp_path):
    """A scalar (index 0) and a 16-element block on 8 warps: each held by many threads,
    one failing element, one report. In a subprocess (from a file: @jit reads the kernel's
    source), since the assert ends the CUDA context."""
    script = tmp_path / "assert_once.py"
    script.write_text(_ASSERT_ONCE_SCRIPT.format(index=index))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TILEC_CACHE_DIR": str(tmp_path / "cache")})
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    reports = [line for line in out.splitlines() if line.startswith("device assertion failed")]
    assert len(reports) == 1, out
    assert ("idx ( 5)" in reports[0]) == (index == 5), out
