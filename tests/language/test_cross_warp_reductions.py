"""Reductions whose reduced axis is split across warps, on both backends, for 2 to 32
warps: the partial result of each warp goes through shared memory and is combined there.

When the lanes of a warp all hold the same output elements (a whole row reduced to a
scalar, or rows held one per warp group), each lane loads one partial and butterfly
shuffles combine them; otherwise every thread combines the partials of its elements in
turn. These tests cover both, for sums (exact: small integers in fp32, and int64 / fp64,
whose shuffles move two 32-bit halves), max, argmax (a tuple combiner) and a user
combiner, with outputs poisoned before the launch."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

WARPS = [2, 4, 8, 16, 32]
POISON = -12345


@tilec.jit
def _row_reductions(X, SUM, MAX, ARGMAX, N, BLOCK: tl.constexpr):
    """One row per program, the whole row in one block reduced to scalars."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0)
    tl.store(SUM + row, tl.sum(x, axis=0))
    lowest = tl.where(mask, x, -1e30 if X.dtype.element_ty.is_floating() else -(1 << 62))
    tl.store(MAX + row, tl.max(lowest, axis=0))
    tl.store(ARGMAX + row, tl.argmax(lowest, axis=0))


@pytest.mark.parametrize("num_warps", WARPS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_row_to_scalar(backend, num_warps, dtype):
    rng = np.random.default_rng(num_warps)
    rows, n = 5, 32 * num_warps * 2 - 3  # a masked tail, every warp holding part of the row
    block = 32 * num_warps * 2
    # small integers: every summation order gives the exact sum; distinct values for argmax
    x = (rng.permutation(rows * n) % 2000 - 1000).reshape(rows, n).astype(dtype)
    if dtype == "int64":
        x *= 1 << 33  # beyond 32 bits: both halves of each shuffle matter
    sums = np.full(rows, POISON, dtype=dtype)
    maxes = np.full(rows, POISON, dtype=dtype)
    argmaxes = np.full(rows, POISON, dtype=np.int32)
    out = [device_array(a, backend) for a in (sums, maxes, argmaxes)]
    _row_reductions[(rows,)](device_array(x, backend), *out, n, BLOCK=block, num_warps=num_warps)
    np.testing.assert_array_equal(to_numpy(out[0]), x.sum(1))
    np.testing.assert_array_equal(to_numpy(out[1]), x.max(1))
    np.testing.assert_array_equal(to_numpy(out[2]), x.argmax(1))


@tilec.jit
def _max_and_count(a, a_count, b, b_count):
    """(maximum, how many elements reached it): a combiner of two values per element."""
    larger = tl.maximum(a, b)
    return larger, tl.where(a == larger, a_count, 0) + tl.where(b == larger, b_count, 0)


@tilec.jit
def _tile_reductions(X, SUM, TOP, COUNT, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    """A [M, N] tile reduced along AXIS: the sum, and a user combiner's (max, count)."""
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    ones = tl.full([M, N], 1, tl.int32)
    top, count = tl.reduce((x, ones), AXIS, _max_and_count)
    out = tl.arange(0, N) if AXIS == 0 else tl.arange(0, M)
    tl.store(SUM + out, tl.sum(x, axis=AXIS))
    tl.store(TOP + out, top)
    tl.store(COUNT + out, count)


@pytest.mark.parametrize("num_warps", [4, 16])
@pytest.mark.parametrize("shape", [(2, 2048), (16, 256), (64, 64), (1024, 4)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("axis", [0, 1])
def test_tile_along_an_axis(backend, num_warps, shape, axis):
    M, N = shape
    rng = np.random.default_rng(M * 7 + N + axis)
    x = rng.integers(-8, 8, size=shape).astype(np.float32)  # repeated maxima: the counts matter
    length = N if axis == 0 else M
    sums = np.full(length, POISON, dtype=np.float32)
    tops = np.full(length, POISON, dtype=np.float32)
    counts = np.full(length, POISON, dtype=np.int32)
    out = [device_array(a, backend) for a in (sums, tops, counts)]
    _tile_reductions[(1,)](device_array(x, backend), *out, M=M, N=N, AXIS=axis, num_warps=num_warps)
    np.testing.assert_array_equal(to_numpy(out[0]), x.sum(axis))
    np.testing.assert_array_equal(to_numpy(out[1]), x.max(axis))
    np.testing.assert_array_equal(to_numpy(out[2]), (x == x.max(axis, keepdims=True)).sum(axis))
