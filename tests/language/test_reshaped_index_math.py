"""Index arithmetic through reshapes and transposes (tl.sort's network builds its bit
positions so): remove-layout-conversions recomputes it in whatever layout its user wants
(the shape op keeps its elements in registers). The values must not change: stored
through pointers of another order, random offsets added, on both backends."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def reshaped_range_kernel(out_ptr, x_ptr, R: tl.constexpr, C: tl.constexpr, TRANSPOSE: tl.constexpr):
    idx = tl.reshape(tl.arange(0, R * C) * 3 + 1, (R, C))
    if TRANSPOSE:
        idx = tl.trans(tl.reshape(idx, (C, R)))
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows + cols * R)          # column-major: another order than idx's
    tl.store(out_ptr + rows + cols * R, idx + x)


@pytest.mark.parametrize("r, c", [(16, 16), (8, 32), (64, 4)])
@pytest.mark.parametrize("transpose", [False, True])
def test_reshaped_index_math(backend, rng, r, c, transpose):
    x = rng.integers(-1000, 1000, (c, r)).astype(np.int32)  # column-major [r, c]
    out = device_array(np.full((c, r), -7, np.int32), backend)
    reshaped_range_kernel[(1,)](out, device_array(x, backend), R=r, C=c, TRANSPOSE=transpose)
    idx = (np.arange(r * c) * 3 + 1).reshape(r, c)
    if transpose:
        idx = idx.reshape(c, r).T
    np.testing.assert_array_equal(to_numpy(out).T, idx + x.T)
