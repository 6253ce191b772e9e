"""NamedTuple kernel arguments whose fields hold @jit functions (called in the kernel, as
Triton's `closure.fn(x, *closure.captured)`) or are annotated `tl.constexpr` (compile-time
values the kernel is specialised on: shapes, flags)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -444.0


@tilec.jit
def _mul(x, a_ptr):
    return x * tl.load(a_ptr)


@tilec.jit
def _add(x, a_ptr):
    return x + tl.load(a_ptr)


class Function(NamedTuple):
    fn: tl.constexpr
    captured: tuple


class Tile(NamedTuple):
    ptr: object
    rows: tl.constexpr
    cols: tl.constexpr
    stride: int


@tilec.jit
def closure_kernel(closure, src, dst):
    offs_m = tl.arange(0, src.rows)
    offs_n = tl.arange(0, src.cols)  # constexpr fields are shapes
    x = tl.load(src.ptr + offs_m[:, None] * src.stride + offs_n[None, :])
    y = closure.fn(x, *closure.captured)
    tl.store(dst.ptr + offs_m[:, None] * dst.stride + offs_n[None, :], y)


@pytest.mark.parametrize("fn", [_mul, _add])
def test_a_jit_function_in_a_namedtuple_argument(backend, rng, fn):
    rows, cols, stride = 8, 16, 24
    x = rng.standard_normal((rows, stride)).astype(np.float32)
    a = rng.standard_normal(1).astype(np.float32)
    out = device_array(np.full((rows, stride), POISON, np.float32), backend)
    a_dev, x_dev = device_array(a, backend), device_array(x, backend)
    closure_kernel[(1,)](Function(fn, (a_dev,)), Tile(x_dev, rows, cols, stride), Tile(out, rows, cols, stride))
    got = to_numpy(out)
    want = x[:, :cols] * a[0] if fn is _mul else x[:, :cols] + a[0]
    np.testing.assert_array_equal(got[:, :cols], want)
    assert (got[:, cols:] == POISON).all()


def test_constexpr_fields_are_compiled_in():
    from tilec.runtime.jit import JITFunction
    assert isinstance(closure_kernel, JITFunction)
    x = np.zeros((4, 8), np.float32)
    specs = closure_kernel.specialization([Function(_mul, (x,)), Tile(x, 4, 8, 8), Tile(x, 4, 8, 8)],
                                          host_arrays=True)
    by_name = {spec.name: spec for spec in specs}
    assert by_name["closure.0"].is_constant and by_name["closure.0"].constant is _mul
    assert by_name["src.1"].is_constant and by_name["src.1"].constant == 4    # rows: tl.constexpr
    assert not by_name["src.3"].is_constant and str(by_name["src.3"].ty) == "int32"  # stride: int, a value
    # a new source for the function passed is a new kernel in the disk cache
    assert "@" in by_name["closure.0"].key()[2]
