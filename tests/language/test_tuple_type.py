"""`tl.tuple_type`: the type of a tuple of kernel values (`t.type`), the types of its items
and a namedtuple's field names, as Triton 3.9's; two are equal when both are."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


def test_equality_and_spelling():
    pair = tl.tuple_type([tl.int32, tl.float16])
    assert pair == tl.tuple_type([tl.int32, tl.float16])
    assert pair != tl.tuple_type([tl.int32, tl.float32])
    assert pair != tl.tuple_type([tl.int32, tl.float16], ["a", "b"])
    assert tl.tuple_type([tl.int32], ("a",)) == tl.tuple_type([tl.int32], ["a"])
    assert str(pair) == "[int32,fp16]" and str(tl.tuple_type([tl.int8], ["x"])) == "[x:int8]"
    assert list(pair) == [tl.int32, tl.float16] and pair[1] == tl.float16 and len(pair) == 2
    assert tl.constexpr(3).type == tl.int32  # a constant item's type is its natural dtype's
    assert tl.tuple_type([tl.constexpr(3).type]) == tl.tuple_type([tl.int32])


class Point(NamedTuple):
    x: object
    y: object


@tilec.jit
def _signed(x):
    if x < 0:
        return -1, x
    else:
        return 1, x


@tilec.jit
def tuple_type_kernel(out_ptr, v, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    values = tl.load(out_ptr + offs)
    c = _signed(v)  # decided at run time: the constants become int32 tensors
    tl.static_assert(c.type == tl.tuple_type([tl.int32, tl.int32]))
    d = _signed(-2)  # a constant condition: constants
    tl.static_assert(d.type == tl.tuple_type([tl.int32, tl.int32]))
    p = Point(values, v.to(tl.float16))
    tl.static_assert(p.type == tl.tuple_type([tl.block_type(tl.float32, [BLOCK]), tl.float16], ["x", "y"]))
    tl.static_assert(p.type != tl.tuple_type([tl.block_type(tl.float32, [BLOCK]), tl.float16]))
    nested = (values, (v, 2.5))
    tl.static_assert(nested.type[1] == tl.tuple_type([tl.int32, tl.float32]))
    tl.static_assert(len(nested.type) == 2)
    tl.store(out_ptr + offs, values * c[0] + d[1] + p.y.to(tl.float32))


@pytest.mark.parametrize("v", [-3, 6])
def test_the_type_of_tuples_in_kernels(backend, rng, v):
    x = rng.standard_normal(16).astype(np.float32)
    out = device_array(x.copy(), backend)
    tuple_type_kernel[(1,)](out, v, BLOCK=16)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(to_numpy(out), x64 * (1 if v >= 0 else -1) - 2 + v, rtol=1e-6)


class Field(NamedTuple):
    type: object  # a field named `type` stays the field


@tilec.jit
def field_named_type_kernel(out_ptr):
    f = Field(tl.int16)
    tl.static_assert(f.type == tl.int16)
    tl.store(out_ptr, tl.full((), 5, f.type).to(tl.int32))


def test_a_field_named_type_is_the_field(backend):
    out = device_array(np.full(1, -1, np.int32), backend)
    field_named_type_kernel[(1,)](out)
    assert to_numpy(out)[0] == 5
