"""Kernels and @jit functions build namedtuples (`typing.NamedTuple` and
`collections.namedtuple` classes, as Triton's do): a tuple of kernel values whose items
also have names, passed to @jit functions, returned, carried through an `if`, and read
by name or by position, as a namedtuple passed from the host is."""
from __future__ import annotations

import collections
from typing import NamedTuple

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -555.0


class View(NamedTuple):
    ptr: object
    rows: object
    cols: object
    stride: object
    scale: tl.constexpr = 3  # a default, a constant


Pair = collections.namedtuple("Pair", ["first", "second"])


@tilec.jit
def _make_view(ptr, rows, cols, stride):
    return View(ptr, rows=rows, cols=cols, stride=stride)


@tilec.jit
def _mask_of(view, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    return (offs_m[:, None] < view.rows) & (offs_n[None, :] < view.cols)


@tilec.jit
def _offsets_of(view, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    return tl.arange(0, BLOCK_M)[:, None] * view.stride + tl.arange(0, BLOCK_N)[None, :]


@tilec.jit
def namedtuple_kernel(x_ptr, y_ptr, rows, cols, stride, flag, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x = _make_view(x_ptr, rows, cols, stride)
    y = View(y_ptr, rows, cols, stride, 2)
    tl.static_assert(x.scale == 3 and y[4] == 2)
    values = tl.load(x.ptr + _offsets_of(x, BLOCK_M, BLOCK_N), mask=_mask_of(x, BLOCK_M, BLOCK_N), other=0.0)
    pair = Pair(values * x.scale, values * y.scale)
    if flag > 0:  # decided at run time: the namedtuple is joined item by item
        pair = Pair(first=pair.second, second=pair.first)
    first, second = pair
    tl.store(y.ptr + _offsets_of(y, BLOCK_M, BLOCK_N), first - second, mask=_mask_of(y, BLOCK_M, BLOCK_N))


@pytest.mark.parametrize("flag", [-2, 5])
def test_namedtuples_built_in_kernels(backend, rng, flag):
    rows, cols, stride = 5, 12, 16
    x = rng.standard_normal((8, stride)).astype(np.float32)
    y = device_array(np.full((8, stride), POISON, np.float32), backend)
    namedtuple_kernel[(1,)](device_array(x, backend), y, rows, cols, stride, flag, BLOCK_M=8, BLOCK_N=16)
    got = to_numpy(y)
    x64 = x.astype(np.float64)
    want = x64 * 3 - x64 * 2 if flag <= 0 else x64 * 2 - x64 * 3
    np.testing.assert_allclose(got[:rows, :cols], want[:rows, :cols], rtol=1e-6, atol=1e-6)
    assert (got[rows:] == POISON).all() and (got[:, cols:] == POISON).all()


@tilec.constexpr_function
def _passthrough(value):
    return value


class Trivial(NamedTuple):
    foo: tl.constexpr


@tilec.jit
def constant_namedtuple_kernel(out_ptr):
    tl.static_assert(_passthrough(Trivial(4)).foo == 4)
    tl.store(out_ptr, Trivial(foo=7).foo + Pair(1, second=2)[1])


def test_namedtuples_of_constants(backend):
    out = device_array(np.full(1, -1, np.int32), backend)
    constant_namedtuple_kernel[(1,)](out)
    assert to_numpy(out)[0] == 9


@tilec.jit
def missing_field_kernel(out_ptr):
    tl.store(out_ptr, Pair(1).first)


def test_a_missing_field_is_a_located_error(backend):
    out = device_array(np.full(1, -1, np.int32), backend)
    with pytest.raises(tilec.CompilationError, match=r"Pair\(\) missing 1 required positional argument: 'second'"):
        missing_field_kernel[(1,)](out)
