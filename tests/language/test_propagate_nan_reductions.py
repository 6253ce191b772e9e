"""tl.max / tl.min with propagate_nan=tl.PropagateNan.NONE | ALL, with and without
return_indices, on both backends.

NONE (the default) ignores NaNs: a line of only NaNs gives NaN. ALL lets a NaN win: the
value is NaN as soon as the line holds one, and with return_indices the index is that of
the first NaN (return_indices_tie_break_left=True) or of the last one (False).
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

ROWS, COLS = 16, 8


@tilec.jit
def reduce_kernel(x_ptr, value_ptr, index_ptr, OP: tl.constexpr, PROPAGATE: tl.constexpr, INDICES: tl.constexpr,
                  LEFT: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :])
    cols = tl.arange(0, COLS)
    if INDICES:
        if OP == "max":
            value, index = tl.max(x, 0, return_indices=True, return_indices_tie_break_left=LEFT,
                                  propagate_nan=PROPAGATE)
        else:
            value, index = x.min(0, return_indices=True, return_indices_tie_break_left=LEFT, propagate_nan=PROPAGATE)
        tl.store(index_ptr + cols, index)
    else:
        if OP == "max":
            value = x.max(axis=0, propagate_nan=PROPAGATE)
        else:
            value = tl.min(x, 0, propagate_nan=PROPAGATE)
    tl.store(value_ptr + cols, value.to(value_ptr.dtype.element_ty))


def _input(rng, dtype):
    """Random values; column 0 has no NaN, column 1 only NaNs, the others one to three NaNs
    (columns 2 and 3 with repeated extreme values as well)."""
    x = rng.standard_normal((ROWS, COLS)).astype(np.float64)
    x[:, 1] = np.nan
    for col in range(2, COLS):
        x[rng.choice(ROWS, size=1 + col % 3, replace=False), col] = np.nan
    x[[4, 9], 2] = 5.0
    x[[3, 12], 3] = -5.0
    return x.astype(dtype)


def _reference(x, op, propagate, left):
    """(values, indices) column by column, in float64."""
    values, indices = [], []
    for column in x.astype(np.float64).T:
        nans = np.flatnonzero(np.isnan(column))
        if len(nans) and (propagate or len(nans) == len(column)):
            values.append(np.nan)
            indices.append(nans[0] if left else nans[-1])
            continue
        clean = np.where(np.isnan(column), -np.inf if op == "max" else np.inf, column)
        best = clean.max() if op == "max" else clean.min()
        ties = np.flatnonzero(clean == best)
        values.append(best)
        indices.append(ties[0] if left else ties[-1])
    return np.array(values), np.array(indices, np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("propagate", [False, True])
@pytest.mark.parametrize("indices,left", [(False, True), (True, True), (True, False)])
def test_propagate_nan(backend, rng, dtype, op, propagate, indices, left):
    x = _input(rng, dtype)
    values = device_array(np.full(COLS, 12345.0, dtype), backend)
    where = device_array(np.full(COLS, -7, np.int32), backend)
    mode = tl.PropagateNan.ALL if propagate else tl.PropagateNan.NONE
    reduce_kernel[(1,)](device_array(x, backend), values, where, OP=op, PROPAGATE=mode, INDICES=indices, LEFT=left,
                        ROWS=ROWS, COLS=COLS)
    want_values, want_indices = _reference(x, op, propagate, left)
    np.testing.assert_array_equal(to_numpy(values).astype(np.float64), want_values)
    if indices:
        np.testing.assert_array_equal(to_numpy(where), want_indices)
    assert np.isnan(to_numpy(values)[1])  # a line of NaNs gives NaN either way
    assert np.isnan(to_numpy(values)[2]) == propagate


@tilec.jit
def bad_mode_kernel(x_ptr):
    tl.store(x_ptr, tl.max(tl.load(x_ptr + tl.arange(0, 4)), 0, propagate_nan="all"))


def test_propagate_nan_must_be_a_mode():
    with pytest.raises(tilec.CompilationError, match="propagate_nan must be tl.PropagateNan.ALL or"):
        bad_mode_kernel.warmup("*fp32", grid=(1,))
