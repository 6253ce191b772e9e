"""Chained comparisons in kernels: `lo <= x < hi` on tensors is `(lo <= x) & (x < hi)`
elementwise; each operand is computed once, left to right, and a link that is false
when compiling ends the chain without computing the operands after it (Python's and
Triton's order)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def window_kernel(x_ptr, out_ptr, lo, hi, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    inside = lo <= x < hi                       # scalar, block, scalar
    ordered = 0 <= offs < n <= BLOCK            # three links, the last on scalars
    strictly = x > lo > -100.0                  # block, scalar, constant
    tl.store(out_ptr + offs, inside.to(tl.int8) + 2 * ordered.to(tl.int8) + 4 * strictly.to(tl.int8))


@pytest.mark.parametrize("n", [37, 64])
def test_chains_on_tensors_are_elementwise(backend, rng, n):
    block = 64
    x = rng.uniform(-2.0, 2.0, block).astype(np.float32)
    lo, hi = float(rng.uniform(-1.0, 0.0)), float(rng.uniform(0.0, 1.0))
    out = device_array(np.full(block, -1, np.int8), backend)
    window_kernel[(1,)](device_array(x, backend), out, lo, hi, n, BLOCK=block)
    xs = np.where(np.arange(block) < n, x, np.float32(0))
    lo32, hi32 = np.float32(lo), np.float32(hi)
    inside = (lo32 <= xs) & (xs < hi32)
    ordered = (np.arange(block) < n) & (n <= block)
    strictly = (xs > lo32) & (lo32 > -100.0)
    want = inside.astype(np.int8) + 2 * ordered.astype(np.int8) + 4 * strictly.astype(np.int8)
    np.testing.assert_array_equal(to_numpy(out), want)


@tilec.jit
def _count_and_return(counter_ptr, value):
    tl.atomic_add(counter_ptr, 1)
    return value


@tilec.jit
def once_kernel(counter_ptr, out_ptr, v, N: tl.constexpr):
    # the middle operand is computed once although two links read it
    both = 0 < _count_and_return(counter_ptr, v) < 10
    # `N > 8` is false when compiling for N = 4: the call after it never happens
    never = N > 8 > _count_and_return(counter_ptr + 1, v)
    tl.static_assert(not isinstance(never, tl.tensor) and not never)
    tl.store(out_ptr, both.to(tl.int32))


@pytest.mark.parametrize("v, inside", [(5, 1), (12, 0), (-3, 0)])
def test_each_operand_is_computed_once_and_a_false_constant_link_stops(backend, v, inside):
    counters = device_array(np.zeros(2, np.int32), backend)
    out = device_array(np.full(1, -1, np.int32), backend)
    once_kernel[(1,)](counters, out, v, N=4)
    np.testing.assert_array_equal(to_numpy(counters), [1, 0])
    assert to_numpy(out)[0] == inside
