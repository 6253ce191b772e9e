"""Integer reductions that redux.sync computes across a warp (sm_80 and newer): a
combiner that is one of add, min, max (signed and unsigned), and, or, xor on 32-bit
integers, over layouts whose lanes all move along the reduced axis, or hold copies of
the same elements (then only the combiners copies cannot change: not add or xor).

Values span the whole 32-bit range (sums wrap), on both backends; the PTX of each
kernel is checked for which instruction combined the lanes."""
from __future__ import annotations

import re
import zlib

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def _combine_and(a, b):
    return a & b


@tilec.jit
def _combine_or(a, b):
    return a | b


@tilec.jit
def _combine_xor(a, b):
    return a ^ b


@tilec.jit
def _combine_add(a, b):
    return a + b


@tilec.jit
def _combine_min(a, b):
    return tl.minimum(a, b)


@tilec.jit
def _combine_max(a, b):
    return tl.maximum(a, b)


COMBINERS = {"and": _combine_and, "or": _combine_or, "xor": _combine_xor, "add": _combine_add,
             "min": _combine_min, "max": _combine_max}
NUMPY = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "add": np.add,
         "min": np.minimum, "max": np.maximum}


@tilec.jit
def reduce_rows(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, COMBINE: tl.constexpr):
    """One (M, N) block (M == 0: an N-vector) reduced along AXIS with COMBINE."""
    if M == 0:
        x = tl.load(x_ptr + tl.arange(0, N))
        tl.store(out_ptr, tl.reduce(x, 0, COMBINE))
    else:
        x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
        r = tl.reduce(x, AXIS, COMBINE)
        tl.store(out_ptr + tl.arange(0, N if AXIS == 0 else M), r)


# (M, N, axis, num_warps): a warp's lanes along the axis, lanes holding copies (16
# elements on 32 lanes), warps along the axis (partials through shared memory), and
# 2-D blocks reduced along either axis.
CASES = [(0, 32, 0, 1), (0, 16, 0, 1), (0, 128, 0, 4), (0, 1024, 0, 8), (4, 64, 1, 4), (64, 4, 0, 4),
         (16, 128, 1, 4), (128, 16, 0, 4)]


@pytest.mark.parametrize("dtype", ["int32", "uint32"])
@pytest.mark.parametrize("op", sorted(COMBINERS))
@pytest.mark.parametrize("m, n, axis, num_warps", CASES, ids=lambda v: str(v))
def test_integer_reduction(backend, op, dtype, m, n, axis, num_warps):
    rng = np.random.default_rng(zlib.crc32(repr((op, dtype, m, n, axis)).encode()))
    shape = (n,) if m == 0 else (m, n)
    x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, size=shape, dtype=np.int64, endpoint=True).astype(dtype)
    outputs = 1 if m == 0 else (n if axis == 0 else m)
    out = device_array(np.full(outputs, 0x5A5A5A5A, dtype=dtype), backend)
    reduce_rows[(1,)](device_array(x, backend), out, M=m, N=n, AXIS=axis, COMBINE=COMBINERS[op],
                      num_warps=num_warps)
    with np.errstate(over="ignore"):
        want = NUMPY[op].reduce(x, axis=0 if m == 0 else axis, dtype=dtype)
    np.testing.assert_array_equal(to_numpy(out).reshape(-1), np.atleast_1d(want).reshape(-1))


def _ptx(op: str, dtype: str, n: int, target: str) -> str:
    kernel = tilec.compile(reduce_rows, signature={"x_ptr": f"*{'i32' if dtype == 'int32' else 'u32'}",
                                                   "out_ptr": f"*{'i32' if dtype == 'int32' else 'u32'}"},
                           constexprs={"M": 0, "N": n, "AXIS": 0, "COMBINE": COMBINERS[op]}, target=target, num_warps=1)
    return kernel.asm["ptx"]


REDUX_NAME = {("and", "int32"): "and.b32", ("or", "int32"): "or.b32", ("xor", "int32"): "xor.b32",
              ("add", "int32"): "add.s32", ("min", "int32"): "min.s32", ("max", "int32"): "max.s32",
              ("min", "uint32"): "min.u32", ("max", "uint32"): "max.u32", ("add", "uint32"): "add.u32"}


@pytest.mark.parametrize("op, dtype", sorted(REDUX_NAME))
def test_one_redux_replaces_the_shuffles(op, dtype):
    ptx = _ptx(op, dtype, 32, "sm_90")
    instructions = re.findall(r"redux\.sync\.(\S+)", ptx)
    assert len(instructions) == 1 and "shfl.sync" not in ptx, instructions
    # add on unsigned values is the same instruction either way
    assert instructions[0] in (REDUX_NAME[op, dtype], "add.s32"), instructions


@pytest.mark.parametrize("op, redux", [("add", False), ("xor", False), ("max", True), ("or", True)])
def test_lanes_holding_copies(op, redux):
    """16 elements on 32 lanes: lanes l and l + 16 hold the same element."""
    ptx = _ptx(op, "int32", 16, "sm_90")
    assert ("redux.sync" in ptx) == redux
    assert len(re.findall(r"shfl\.sync\.bfly", ptx)) == (0 if redux else 4)


def test_shuffles_before_sm80():
    ptx = _ptx("min", "int32", 32, "sm_75")
    assert "redux.sync" not in ptx
    assert len(re.findall(r"shfl\.sync\.bfly", ptx)) == 5
