"""Aggregates built on the host and passed to a kernel (alone, or inside a tuple or a
namedtuple argument), as newer Triton passes them: each field is an argument of its own
(`epilogue.values`, ...): an array in a `tl.tensor` field a pointer, a number a scalar,
a host `TensorDescriptor` in a `tl.tensor_descriptor` field a descriptor, a
`tl.constexpr` field a constant the kernel is specialised on; the class (its fields and
its methods' sources) is part of the kernel's key."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.tools.tensor_descriptor import TensorDescriptor
from tilec_testing import device_array, to_numpy

POISON = -4444.0
BLOCK = 16


@tilec.aggregate
class Offset:
    values: tl.tensor
    bump: tl.constexpr

    @tilec.constexpr_function
    def __init__(self, values, bump):
        self.values = values
        self.bump = tl.constexpr(bump)

    @tilec.jit
    def load(self, offs):
        return tl.load(self.values + offs) + self.bump


@tilec.aggregate
class Bias:
    values: tl.tensor
    n: tl.constexpr

    def __init__(self, values, n):  # a plain (host) constructor
        self.values = values
        self.n = tl.constexpr(n)

    @tilec.jit
    def apply(self, offs):
        return tl.load(self.values + offs, mask=offs < self.n, other=0.0)


@tilec.aggregate
class ScaledBias(Bias):
    scale: tl.tensor  # a number here is a scalar argument

    def __init__(self, values, n, scale):
        self.values = values
        self.n = tl.constexpr(n)
        self.scale = scale

    @tilec.jit
    def apply(self, offs):
        return Bias.apply(self, offs) * self.scale


@tilec.jit
def apply_kernel(out_ptr, epilogue, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, epilogue.apply(offs))


def test_an_aggregate_argument(backend, rng):
    values = rng.standard_normal(BLOCK).astype(np.float32)
    out = device_array(np.full(BLOCK, POISON, np.float32), backend)
    for scale in (0.5, -3.25):  # the scalar field changes, the kernel stays
        apply_kernel[(1,)](out, ScaledBias(device_array(values, backend), 12, scale), BLOCK=BLOCK)
        want = np.where(np.arange(BLOCK) < 12, values.astype(np.float64), 0.0) * scale
        np.testing.assert_allclose(to_numpy(out), want, rtol=1e-6)


class Packed(NamedTuple):
    offset: object
    gain: object


@tilec.jit
def packed_kernel(out_ptr, packed, pair, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, packed.offset.load(offs) * packed.gain + pair[0].load(offs) * pair[1])


def test_aggregates_inside_tuple_and_namedtuple_arguments(backend, rng):
    a = rng.standard_normal(BLOCK).astype(np.float32)
    b = rng.standard_normal(BLOCK).astype(np.float32)
    out = device_array(np.full(BLOCK, POISON, np.float32), backend)
    packed_kernel[(1,)](out, Packed(Offset(device_array(a, backend), 4.0), 0.5),
                        (Offset(device_array(b, backend), -1.0), 3.0), BLOCK=BLOCK)
    want = (a.astype(np.float64) + 4.0) * 0.5 + (b.astype(np.float64) - 1.0) * 3.0
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-6)


def _epilogue_class(op: str):
    """Classes of one qualified name, which differ only in a @jit method's body."""
    @tilec.aggregate
    class Epilogue:
        values: tl.tensor

        def __init__(self, values):
            self.values = values

        if op == "add":
            @tilec.jit
            def apply(self, offs):
                return tl.load(self.values + offs) + 100.0
        else:
            @tilec.jit
            def apply(self, offs):
                return tl.load(self.values + offs) * 100.0

    return Epilogue


def test_classes_sharing_a_qualified_name_do_not_share_a_kernel(backend, rng):
    added, multiplied = _epilogue_class("add"), _epilogue_class("mul")
    assert added.__qualname__ == multiplied.__qualname__
    values = rng.standard_normal(BLOCK).astype(np.float32)
    x = device_array(values, backend)
    out = device_array(np.full(BLOCK, POISON, np.float32), backend)
    apply_kernel[(1,)](out, added(x), BLOCK=BLOCK)
    np.testing.assert_allclose(to_numpy(out), values.astype(np.float64) + 100.0, rtol=1e-6)
    apply_kernel[(1,)](out, multiplied(x), BLOCK=BLOCK)
    np.testing.assert_allclose(to_numpy(out), values.astype(np.float64) * 100.0, rtol=1e-6)


@tilec.aggregate
class Tiles:
    desc: tl.tensor_descriptor
    factor: tl.constexpr

    def __init__(self, desc, factor):
        self.desc = desc
        self.factor = tl.constexpr(factor)

    @tilec.jit
    def scaled(self, row):
        return self.desc.load([row, 0]) * self.factor


@tilec.jit
def tiles_kernel(out_ptr, tiles, BM: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0) * BM
    offs = (row + tl.arange(0, BM))[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, tiles.scaled(row))


def test_a_descriptor_field(backend, rng):
    x = rng.standard_normal((32, 16)).astype(np.float32)
    out = device_array(np.full((32, 16), POISON, np.float32), backend)
    x_dev = device_array(x, backend)
    tiles_kernel[(2,)](out, Tiles(TensorDescriptor(x_dev, [32, 16], [16, 1], [16, 16]), 3), BM=16, BN=16)
    np.testing.assert_allclose(to_numpy(out), x.astype(np.float64) * 3, rtol=1e-6)


def test_fields_refuse_values_that_cannot_be_arguments():
    with pytest.raises(TypeError, match="attribute 'values'"):
        Bias("not an array", 4)
    with pytest.raises(TypeError, match="attribute 'desc'"):
        Tiles(np.zeros(4, np.float32), 1)


def test_the_class_is_part_of_the_key(rng):
    from tilec.specialization import flatten_aggregate_argument
    values = np.zeros(4, np.float32)
    layout, leaves = flatten_aggregate_argument("e", ScaledBias(values, 3, 2.0))
    assert [name for name, _ in leaves] == ["e.values", "e.n", "e.scale"]
    assert leaves[0][1] is values and leaves[1][1] == tl.constexpr(3) and leaves[2][1] == 2.0
    other, _ = flatten_aggregate_argument("e", _epilogue_class("add")(values))
    same, _ = flatten_aggregate_argument("e", _epilogue_class("add")(values))
    different, _ = flatten_aggregate_argument("e", _epilogue_class("mul")(values))
    assert repr(other) == repr(same) and repr(other) != repr(different)
    assert "ScaledBias" in repr(layout)
