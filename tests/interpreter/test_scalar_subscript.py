"""A scalar indexed with `None` becomes a one-element block, wherever the `None` stands,
as in Triton (its `__getitem__` splats a scalar to [1]): vLLM's prefix-prefill kernel
loads a block number `bn` and writes `bn[:, None] * stride + ...`, which tilec refused
("expand_dims axis 1 is out of range for a scalar"). `tl.expand_dims(scalar, 1)` itself
stays an error, on both."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def scalar_subscript_kernel(idx_ptr, out_ptr, N: tl.constexpr, D: tl.constexpr):
    bn = tl.load(idx_ptr)  # a scalar
    rows = tl.arange(0, N)
    cols = tl.arange(0, D)
    tail = bn[:, None] * 1000 + rows[:, None] * D + cols[None, :]  # [1] + [N, 1] + [1, D]
    head = bn[None, :] + bn[None, None] * 0  # [1] and [1, 1]
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], tail + head)


def test_scalar_indexed_with_none_broadcasts(backend, rng):
    n, d = 8, 16
    bn = int(rng.integers(1, 50))
    out = device_array(np.full((n, d), -7777, np.int32), backend)
    scalar_subscript_kernel[(1,)](device_array(np.array([bn], np.int32), backend), out, N=n, D=d)
    want = bn * 1000 + np.arange(n)[:, None] * d + np.arange(d)[None, :] + bn
    np.testing.assert_array_equal(to_numpy(out), want)


def test_scalar_indexed_with_none_compiles_for_sm_90():
    kernel = tilec.compile(scalar_subscript_kernel, signature={"idx_ptr": "*i32", "out_ptr": "*i32"},
                           constexprs={"N": 8, "D": 16}, target="sm_90")
    assert "st.global" in kernel.asm["ptx"]


@tilec.jit
def expand_scalar_kernel(idx_ptr, out_ptr):
    bn = tl.load(idx_ptr)
    tl.store(out_ptr + tl.arange(0, 1), tl.expand_dims(bn, 1))


def test_expand_dims_of_a_scalar_past_axis_0_stays_an_error():
    with pytest.raises(tilec.CompilationError, match="expand_dims axis 1 is out of range for a scalar"):
        tilec.compile(expand_scalar_kernel, signature={"idx_ptr": "*i32", "out_ptr": "*i32"}, target="sm_90",
                      constexprs={})
