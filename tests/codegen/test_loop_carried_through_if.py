"""A tensor carried by a loop and replaced inside an `if` (`rows = ...` under `if i % cut
== 0:`; a flattened persistent loop's tile offsets, the next tile's on a tile's last
step), read every iteration in the loads' layout. tilegpu-remove-layout-conversions
carries it in that layout: before, the loop carried it in its own one-per-thread layout
and converted it through shared memory on every iteration (two conversions here).
The values are checked in the interpreter and on the GPU; the IR compiled for sm_90."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def moving_rows_kernel(x_ptr, y_ptr, n_steps, cut, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    for i in range(n_steps):
        offsets = rows[:, None] * stride + cols[None, :]
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets) * 2.0 + i)
        if i % cut == 0:
            rows = (i + 1) * BM + tl.arange(0, BM)


SIGNATURE = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "n_steps": "i32", "cut": "i32", "stride": "i32:16"}


def test_the_loop_converts_nothing():
    kernel = tilec.compile(moving_rows_kernel, signature=SIGNATURE, constexprs={"BM": 64, "BN": 64}, target="sm_90")
    ttgir = kernel.asm["ttgir"]
    loop = ttgir[ttgir.index("scf.for"):]
    assert "tilegpu.convert_layout" not in loop, loop
    assert "st.shared" not in kernel.asm["ptx"]


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_values(backend, rng, cut):
    bm, bn, steps = 16, 32, 7
    x = rng.standard_normal((bm * (steps + 1), bn)).astype(np.float32)
    y = np.full_like(x, np.nan)
    x_dev, y_dev = device_array(x, backend), device_array(y, backend)
    moving_rows_kernel[(1,)](x_dev, y_dev, steps, cut, bn, BM=bm, BN=bn)
    want = np.full_like(x, np.nan)
    start = 0
    for i in range(steps):
        want[start:start + bm] = x[start:start + bm] * 2.0 + i
        if i % cut == 0:
            start = (i + 1) * bm
    np.testing.assert_array_equal(to_numpy(y_dev), want)
