"""Atomics in the interpreter's builder: lane-order application with duplicate addresses,
masks, old values, bounds checks; and through the language where it exists."""
from __future__ import annotations

import numpy as np
import pytest
from interpreter_testing import BF16, pointers

import tilec
import tilec.language as tl
from tilec.interpreter import Memory, NumpyBuilder, OutOfBoundsAccess
from tilec.interpreter.memory import MemoryFault
from tilec.language.core import TilecSemanticError, block_type

_TYPES = {np.dtype(np.int32): tl.int32, np.dtype(np.uint32): tl.uint32, np.dtype(np.int64): tl.int64,
          np.dtype(np.uint64): tl.uint64, np.dtype(np.float32): tl.float32, np.dtype(np.float64): tl.float64,
          np.dtype(np.float16): tl.float16, BF16: tl.bfloat16}


def _reference(op, memory, offsets, values, mask):
    """Lane by lane, as the builder documents."""
    memory = memory.copy()
    old = np.zeros(len(offsets), dtype=memory.dtype)
    for lane, (offset, value) in enumerate(zip(offsets, values)):
        if mask is not None and not mask[lane]:
            continue
        current = memory[offset]
        old[lane] = current
        memory[offset] = _apply(op, current, value, memory.dtype)
    return old, memory


def _apply(op, current, value, dt):
    if op in ("add", "fadd"):
        return (np.float32(current) + np.float32(value)).astype(dt) if dt == BF16 else (
            np.array([current], dt) + np.array([value], dt))[0]
    if op in ("max", "min", "fmax", "fmin"):
        fn = max if "max" in op else min
        return fn(current, value)
    if op in ("umax", "umin"):
        udt = np.dtype(f"uint{dt.itemsize * 8}")
        a, b = np.array([current], dt).view(udt)[0], np.array([value], dt).view(udt)[0]
        return np.array([max(a, b) if op == "umax" else min(a, b)], udt).view(dt)[0]
    if op == "and":
        return current & value
    if op == "or":
        return current | value
    if op == "xor":
        return current ^ value
    return value  # xchg


def _run(op, data, offsets, values, mask=None):
    memory = Memory({"x": data})
    builder = NumpyBuilder(memory, (1, 1, 1))
    ty = block_type(_TYPES[data.dtype], [len(offsets)])
    ptr = pointers(memory, "x", offsets, data.dtype.itemsize)
    return builder.atomic_rmw(op, ptr, values, mask, "acq_rel", "gpu", ty)


@pytest.mark.parametrize("op, dtype", [
    ("add", np.int32), ("add", np.uint64), ("fadd", np.float32), ("fadd", np.float64), ("fadd", np.float16),
    ("fadd", BF16), ("max", np.int32), ("min", np.int64), ("umax", np.int32), ("umin", np.uint32),
    ("fmax", np.float32), ("fmin", np.float64), ("and", np.int32), ("or", np.uint64), ("xor", np.int64),
    ("xchg", np.int32), ("xchg", np.float32),
])
@pytest.mark.parametrize("masked", [False, True])
def test_atomic_rmw_with_duplicate_addresses(rng, op, dtype, masked):
    dtype = np.dtype(dtype)
    n, size = 64, 8  # many lanes per element
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        data = rng.integers(lo, hi, size).astype(dtype)
        values = rng.integers(lo, hi, n).astype(dtype)
        if op in ("and", "or", "xor", "umax", "umin"):
            data = rng.integers(0, 2**31, size).astype(dtype)
            values = rng.integers(0, 2**31, n).astype(dtype)
            values[::3] = (-values[::3].astype(np.int64)).astype(dtype)  # the sign bit matters for umax/umin
    else:
        data = rng.standard_normal(size).astype(dtype)
        values = rng.standard_normal(n).astype(dtype)
    offsets = rng.integers(0, size, n)
    mask = rng.random(n) < 0.6 if masked else None
    expected_old, expected_memory = _reference(op, data, offsets, values, mask)
    old = _run(op, data, offsets, values, mask)
    assert old.dtype == dtype
    active = slice(None) if mask is None else mask
    np.testing.assert_array_equal(old[active], expected_old[active])
    if mask is not None:
        assert (old[~mask] == 0).all()
    np.testing.assert_array_equal(data, expected_memory)


def test_atomic_add_all_lanes_on_one_counter():
    counter = np.zeros(1, dtype=np.int32)
    old = _run("add", counter, np.zeros(1024, np.int64), np.ones(1024, np.int32))
    assert counter[0] == 1024
    np.testing.assert_array_equal(old, np.arange(1024))  # each lane saw the previous ones


def test_fadd_keeps_lane_order_rounding():
    data = np.array([1.0], dtype=np.float32)
    values = np.array([2.0 ** -24, 2.0 ** -24, 1.0], dtype=np.float32)
    _run("fadd", data, np.zeros(3, np.int64), values)
    assert data[0] == 2.0  # 1 + 2**-24 rounds to 1, twice; then + 1


def test_fmax_fmin_follow_the_gpus_bit_pattern_rule():
    """As compiled (and in Triton): values with the sign bit clear take the signed
    max/min of the bits, those with it set (-0.0 included) the unsigned min/max, so
    ordinary numbers and signed zeros order correctly and a NaN acts as its bits say."""
    data = np.array([np.nan, 1.0, 0.0, -0.0, -0.0, -1.0, 3.0, -5.0], dtype=np.float32)
    old = _run("fmax", data, np.arange(8), np.array([2.0, np.nan, -0.0, 0.0, -0.0, np.nan, -5.0, -3.0], np.float32))
    assert np.isnan(old[0]) and old[6] == 3.0
    assert np.isnan(data[0]) and np.isnan(data[1])  # a positive NaN is above every number, in memory or not
    assert data[2] == 0 and not np.signbit(data[2]) and not np.signbit(data[3]) and np.signbit(data[4])
    assert np.isnan(data[5])  # a NaN value does replace a negative number
    assert data[6] == 3.0 and data[7] == -3.0
    data = np.array([0.0, np.nan, 2.0, -2.0], dtype=np.float64)
    _run("fmin", data, np.arange(4), np.array([-0.0, np.nan, -7.5, -1.0], np.float64))
    assert np.signbit(data[0]) and np.isnan(data[1]) and data[2] == -7.5 and data[3] == -2.0


def test_atomic_on_a_scalar_pointer():
    data = np.array([5, 6], dtype=np.int64)
    memory = Memory({"x": data})
    builder = NumpyBuilder(memory, (1, 1, 1))
    ptr = pointers(memory, "x", np.array(1), 8).reshape(())
    old = builder.atomic_rmw("add", ptr, np.array(10, np.int64), None, "relaxed", "gpu", tl.int64)
    assert old.shape == () and old == 6 and data[1] == 16
    old = builder.atomic_rmw("add", ptr, np.array(1, np.int64), np.array(False), "relaxed", "gpu", tl.int64)
    assert old == 0 and data[1] == 16


def test_atomic_out_of_bounds_and_read_only():
    data = np.zeros(4, dtype=np.int32)
    with pytest.raises(MemoryFault, match="1 of 3 active lanes are invalid; the first is lane 2"):
        _run("add", data, np.array([0, 1, 4]), np.ones(3, np.int32))
    assert (data == 0).all()  # nothing written
    _run("add", data, np.array([0, 1, 4]), np.ones(3, np.int32), mask=np.array([True, True, False]))
    np.testing.assert_array_equal(data, [1, 1, 0, 0])
    data.flags.writeable = False
    with pytest.raises(MemoryFault, match="read-only"):
        _run("xchg", data, np.array([0]), np.ones(1, np.int32))


def test_atomic_rejects_mismatched_types():
    with pytest.raises(TilecSemanticError, match="atomic fadd does not apply to int32"):
        _run("fadd", np.zeros(2, np.int32), np.arange(2), np.ones(2, np.int32))
    with pytest.raises(TilecSemanticError, match="unknown atomic operation 'nand'"):
        _run("nand", np.zeros(2, np.int32), np.arange(2), np.ones(2, np.int32))


def test_atomic_cas_compares_bits_lane_by_lane():
    data = np.array([0, 0, 7], dtype=np.int32)
    memory = Memory({"x": data})
    builder = NumpyBuilder(memory, (1, 1, 1))
    offsets = np.array([0, 0, 0, 1, 2])
    ptr = pointers(memory, "x", offsets, 4)
    cmp = np.array([0, 0, 1, 5, 7], np.int32)
    val = np.array([1, 2, 3, 9, 8], np.int32)
    old = builder.atomic_cas(ptr, cmp, val, "acq_rel", "gpu", block_type(tl.int32, [5]))
    # lane 0 swaps 0 -> 1; lane 1 sees 1 (no swap); lane 2 sees 1 == 1 and swaps to 3
    np.testing.assert_array_equal(old, [0, 1, 1, 0, 7])
    np.testing.assert_array_equal(data, [3, 0, 8])

    floats = np.array([-0.0, np.nan], dtype=np.float32)
    memory = Memory({"f": floats})
    builder = NumpyBuilder(memory, (1, 1, 1))
    ptr = pointers(memory, "f", np.arange(2), 4)
    old = builder.atomic_cas(ptr, np.array([0.0, np.nan], np.float32), np.array([5.0, 6.0], np.float32),
                             "acq_rel", "gpu", block_type(tl.float32, [2]))
    assert np.signbit(old[0]) and np.isnan(old[1])
    assert np.signbit(floats[0]) and floats[0] == 0  # +0 has other bits than -0: no swap
    assert floats[1] == 6.0  # the same NaN bits: swapped


# ----------------------------------------------------------------------------- through the language


@tilec.jit
def histogram_atomic_kernel(x_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + bins, 1, mask=mask)


@pytest.mark.skipif(not hasattr(tl, "atomic_add"), reason="tl.atomic_add is not in the language yet")
def test_atomic_add_histogram_kernel(rng):
    x = rng.integers(0, 16, 1000).astype(np.int32)
    counts = np.zeros(16, dtype=np.int32)
    histogram_atomic_kernel[(tilec.cdiv(1000, 128),)](x, counts, 1000, BLOCK=128)
    np.testing.assert_array_equal(counts, np.bincount(x, minlength=16))


@pytest.mark.skipif(not hasattr(tl, "atomic_add"), reason="tl.atomic_add is not in the language yet")
def test_atomic_out_of_bounds_in_a_kernel_names_the_line():
    x = np.array([0, 1, 16, 2], dtype=np.int32)
    counts = np.zeros(16, dtype=np.int32)
    with pytest.raises(OutOfBoundsAccess, match="out-of-bounds atomic_rmw in kernel `histogram_atomic_kernel`") as info:
        histogram_atomic_kernel[(1,)](x, counts, 4, BLOCK=4)
    assert "tl.atomic_add" in info.value.source_line
