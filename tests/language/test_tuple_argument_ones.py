"""An integer equal to 1 inside a tuple argument is specialised to a constexpr, as a
top-level one is (Triton's test_passing_tuple_to_make_tensor_descriptor relies on it:
strides[1] of a contiguous tensor's strides is a constexpr in the kernel). Other integers
stay runtime scalars; the kernel is compiled once per pattern of ones."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def ones_kernel(out_ptr, one, pair, nested, ONE_AT: tl.constexpr):
    tl.static_assert(isinstance(one.type, tl.constexpr_type))
    tl.static_assert(not isinstance(pair[0].type, tl.constexpr_type))
    if ONE_AT == 1:
        tl.static_assert(isinstance(pair[1].type, tl.constexpr_type))
        tl.static_assert(isinstance(nested[1][0].type, tl.constexpr_type))
    else:
        tl.static_assert(not isinstance(pair[1].type, tl.constexpr_type))
    offs = tl.arange(0, 4)
    # a loop keeps the constexpr leaves alive across the loop's scope
    total = offs * 0
    for i in tl.range(0, pair[1] + 1):
        total += pair[0] * pair[1] + nested[1][0] + one + i
    tl.store(out_ptr + offs, total + nested[0])


@pytest.mark.parametrize("second", [1, 5])
def test_ones_in_tuples_are_constexprs(backend, second):
    first, base = 7, 11
    out = device_array(np.full(4, -1, np.int32), backend)
    ones_kernel[(1,)](out, 1, (first, second), (base, (second,)), ONE_AT=1 if second == 1 else 0)
    iterations = second + 1
    want = sum(first * second + second + 1 + i for i in range(iterations)) + base
    np.testing.assert_array_equal(to_numpy(out), np.full(4, want, np.int32))


@tilec.jit
def strides_kernel(x_ptr, out_ptr, strides, BLOCK: tl.constexpr):
    tl.static_assert(isinstance(strides[1].type, tl.constexpr_type))
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    x = tl.load(x_ptr + rows * strides[0] + cols * strides[1])
    tl.store(out_ptr + rows * BLOCK + cols, x * 3)


def test_contiguous_strides_tuple(backend, rng):
    x = rng.integers(-100, 100, (8, 8)).astype(np.int32)
    out = device_array(np.full((8, 8), -1, np.int32), backend)
    strides = tuple(s // x.itemsize for s in x.strides)
    assert strides == (8, 1)
    strides_kernel[(1,)](device_array(x, backend), out, strides, BLOCK=8)
    np.testing.assert_array_equal(to_numpy(out), x * 3)
