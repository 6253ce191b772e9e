"""Column reductions (axis 0 of a row-major tile) of max/min with their indices, on both
backends, with ties and NaNs, at shapes whose rows are split across warps: the partials of
each warp go through shared memory, and are combined either by every thread for its own
columns or spread over all threads (one partial each, butterfly shuffles, a second
round through shared memory), with more or fewer slots than threads.

Semantics checked (those of tl.argmax/tl.argmin and of tl.max/tl.min with indices):
NaNs are skipped (a NaN ranks below every number for max, above for min), unless
propagate_nan=ALL, where a NaN wins; NaNs tie with each other; ties go to the lowest
row, or the highest with tie_break_left=False; a column of only NaNs gives NaN and its
first (last) row. Masked rows load NaN, so they never win over a number."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -777


@tilec.jit
def _column_extrema(X, VALUES, INDICES, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    LEFT: tl.constexpr, PROPAGATE: tl.constexpr):
    """Per column: [argmax, argmin, max-with-index's index, min-with-index's index] in
    INDICES and [max, min, max-with-index's value, min-with-index's value] in VALUES, each
    a row of N."""
    rows = tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    x = tl.load(X + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < M) & col_mask[None, :],
                other=float("nan"))
    tl.store(INDICES + cols, tl.argmax(x, axis=0, tie_break_left=LEFT), mask=col_mask)
    tl.store(INDICES + N + cols, tl.argmin(x, axis=0, tie_break_left=LEFT), mask=col_mask)
    top, top_at = tl.max(x, 0, return_indices=True, return_indices_tie_break_left=LEFT, propagate_nan=PROPAGATE)
    low, low_at = tl.min(x, 0, return_indices=True, return_indices_tie_break_left=LEFT, propagate_nan=PROPAGATE)
    tl.store(INDICES + 2 * N + cols, top_at, mask=col_mask)
    tl.store(INDICES + 3 * N + cols, low_at, mask=col_mask)
    tl.store(VALUES + cols, tl.max(x, axis=0).to(VALUES.dtype.element_ty), mask=col_mask)
    tl.store(VALUES + N + cols, tl.min(x, axis=0).to(VALUES.dtype.element_ty), mask=col_mask)
    tl.store(VALUES + 2 * N + cols, top.to(VALUES.dtype.element_ty), mask=col_mask)
    tl.store(VALUES + 3 * N + cols, low.to(VALUES.dtype.element_ty), mask=col_mask)


def _input(rng, m, n, dtype):
    """Small integers (many ties), NaNs here and there; column 0 holds only NaNs, column 1
    NaNs and -inf, column 2 NaNs and +inf, column 3 no NaN and one value repeated."""
    x = rng.integers(-3, 4, size=(m, n)).astype(np.float64)
    x[rng.random((m, n)) < 0.15] = np.nan
    x[:, 0] = np.nan
    x[:, 1] = np.where(rng.random(m) < 0.5, np.nan, -np.inf)
    x[:, 2] = np.where(rng.random(m) < 0.5, np.nan, np.inf)
    x[:, 3] = 2.0
    return x.astype(dtype)


def _arg_reference(column, largest, left, nan_wins):
    """(value, index) of one column, in float64."""
    nans = np.flatnonzero(np.isnan(column))
    pick = (lambda at: at[0]) if left else (lambda at: at[-1])
    if len(nans) and (nan_wins or len(nans) == len(column)):
        return np.nan, pick(nans)
    best = np.nanmax(column) if largest else np.nanmin(column)
    return best, pick(np.flatnonzero(column == best))


def _reference(x, block_m, left, nan_wins):
    """(values [4, N], indices [4, N]) in the kernel's order, over the loaded tile: the
    masked rows below x's hold NaN."""
    tile = np.full((block_m, x.shape[1]), np.nan)
    tile[:len(x)] = x
    values, indices = np.zeros((4, x.shape[1])), np.zeros((4, x.shape[1]), dtype=np.int64)
    for c, column in enumerate(tile.T):
        values[0, c], indices[0, c] = _arg_reference(column, True, left, False)
        values[1, c], indices[1, c] = _arg_reference(column, False, left, False)
        values[2, c], indices[2, c] = _arg_reference(column, True, left, nan_wins)
        values[3, c], indices[3, c] = _arg_reference(column, False, left, nan_wins)
    return values, indices


# (rows M, columns N, BLOCK_M, BLOCK_N, warps): rows split over 4 or 8 warps. N a multiple
# of 16 gives threads runs of 4 columns (the corpus's col max+argmax layout): lanes then
# hold copies of the columns (BLOCK_N 32), and the partials are combined spread over the
# threads, with as many slots as threads, more (BLOCK_N 256) or fewer (BLOCK_N 8). Other
# N: one column per thread, masked columns.
SHAPES = [(50, 48, 64, 32, 4), (64, 512, 64, 256, 8), (29, 16, 32, 8, 4), (50, 45, 64, 32, 4),
          (200, 20, 256, 16, 8)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "M{}xN{}-block{}x{}-w{}".format(*s))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
def test_column_max_min_with_indices(backend, shape, dtype, left):
    m, n, block_m, block_n, warps = shape
    rng = np.random.default_rng(m * n + warps)
    x = _input(rng, m, n, dtype)
    values = np.full((4, n), POISON, dtype=np.float32)
    indices = np.full((4, n), POISON, dtype=np.int32)
    out_values, out_indices = device_array(values, backend), device_array(indices, backend)
    _column_extrema[(triton_cdiv(n, block_n),)](device_array(x, backend), out_values, out_indices, m, n,
                                                BLOCK_M=block_m, BLOCK_N=block_n, LEFT=left,
                                                PROPAGATE=tl.PropagateNan.NONE, num_warps=warps)
    want_values, want_indices = _reference(x, block_m, left, nan_wins=False)
    np.testing.assert_array_equal(to_numpy(out_indices), want_indices)
    np.testing.assert_array_equal(to_numpy(out_values), want_values.astype(np.float32))


@pytest.mark.parametrize("shape", [(64, 48, 64, 32, 4), (64, 512, 64, 256, 8)],
                         ids=lambda s: "M{}xN{}-block{}x{}-w{}".format(*s))
@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
def test_column_nan_wins(backend, shape, left):
    """propagate_nan=ALL: a NaN ranks above every number, for max and for min (no masked
    rows here: their NaN would win everywhere)."""
    m, n, block_m, block_n, warps = shape
    rng = np.random.default_rng(7 * m + n)
    x = _input(rng, m, n, "float32")
    x[:, 4:][rng.random((m, n - 4)) < 0.9] = 1.0  # some columns without NaN, with ties
    values = np.full((4, n), POISON, dtype=np.float32)
    indices = np.full((4, n), POISON, dtype=np.int32)
    out_values, out_indices = device_array(values, backend), device_array(indices, backend)
    _column_extrema[(triton_cdiv(n, block_n),)](device_array(x, backend), out_values, out_indices, m, n,
                                                BLOCK_M=block_m, BLOCK_N=block_n, LEFT=left,
                                                PROPAGATE=tl.PropagateNan.ALL, num_warps=warps)
    want_values, want_indices = _reference(x, block_m, left, nan_wins=True)
    assert np.isnan(want_values[2]).any() and not np.isnan(want_values[2]).all()
    np.testing.assert_array_equal(to_numpy(out_indices), want_indices)
    np.testing.assert_array_equal(to_numpy(out_values), want_values.astype(np.float32))


@tilec.jit
def _column_argmax_ints(X, OUT, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(X + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N),
                other=-(1 << 30))
    tl.store(OUT + cols, tl.argmax(x, axis=0), mask=cols < N)
    tl.store(OUT + N + cols, tl.argmin(tl.where(rows[:, None] < M, x, 1 << 30), axis=0), mask=cols < N)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "M{}xN{}-block{}x{}-w{}".format(*s))
def test_column_argmax_integers(backend, shape):
    m, n, block_m, block_n, warps = shape
    rng = np.random.default_rng(m + n)
    x = rng.integers(-4, 5, size=(m, n)).astype(np.int32)
    out = device_array(np.full((2, n), POISON, dtype=np.int32), backend)
    _column_argmax_ints[(triton_cdiv(n, block_n),)](device_array(x, backend), out, m, n, BLOCK_M=block_m,
                                                    BLOCK_N=block_n, num_warps=warps)
    np.testing.assert_array_equal(to_numpy(out), np.stack([x.argmax(0), x.argmin(0)]))


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
