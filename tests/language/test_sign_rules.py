"""Where a sign chooses how an operation is done, on both backends.

- `x >> y`: arithmetic when the left operand is a signed integer, even when `y` is
  unsigned and promotion makes the pair unsigned (Triton's rule); the reflected
  `c >> x` takes its signedness from the tensor `x`.
- Float `atomic_max`/`atomic_min` run as integer atomics on the bit patterns; the value's
  sign bit (not `value >= 0`, which holds for -0.0) picks the signed or the unsigned form.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

# ----------------------------------------------------------------------------- shifts

SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]


@tilec.jit
def shift_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x >> y)


def _promoted(x_dt: np.dtype, y_dt: np.dtype) -> np.dtype:
    """C's usual arithmetic conversions for two integer types of at least 8 bits, as
    Triton promotes them (the wider wins; at equal width, the unsigned one)."""
    if x_dt.itemsize != y_dt.itemsize:
        return x_dt if x_dt.itemsize > y_dt.itemsize else y_dt
    return x_dt if x_dt.kind == "u" else y_dt


def _values(rng, dt: np.dtype, n: int) -> np.ndarray:
    info = np.iinfo(dt)
    specials = [info.min, info.min + 1, -1 if dt.kind == "i" else info.max, 0, 1, info.max]
    return np.concatenate([np.array(specials, dtype=dt),
                           rng.integers(info.min, info.max, n - len(specials), dtype=dt, endpoint=True)])


@pytest.mark.parametrize("x_name,y_name", [(x, y) for x in SIGNED for y in UNSIGNED] +
                                          [(x, y) for x in UNSIGNED for y in SIGNED])
def test_shift_signedness_comes_from_the_left_operand(backend, rng, x_name, y_name):
    x_dt, y_dt = np.dtype(x_name), np.dtype(y_name)
    rt = _promoted(x_dt, y_dt)
    block = 64
    x = _values(rng, x_dt, block)
    width = rt.itemsize * 8
    # Every defined amount (0 .. width - 1) once, then random ones.
    y = np.concatenate([np.arange(width), rng.integers(0, width, block)])[:block].astype(y_dt)
    out = device_array(np.full(block, 0x5A, rt), backend)
    shift_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, BLOCK=block)
    # The left operand's value converted to the result type, then shifted as its own
    # signedness says: arithmetic (Python's >> on the signed value) or logical.
    bits = [int(v) % (1 << width) for v in x]
    if x_dt.kind == "i":
        as_signed = [b - (1 << width) if b >> (width - 1) else b for b in bits]
        expected = [(s >> int(a)) % (1 << width) for s, a in zip(as_signed, y)]
    else:
        expected = [b >> int(a) for b, a in zip(bits, y)]
    got = to_numpy(out).view(np.dtype(f"u{rt.itemsize}")).astype(object)
    assert list(got) == expected


@tilec.jit
def reflected_shift_kernel(y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, 4096 >> y)


@pytest.mark.parametrize("y_name", ["int32", "uint32", "int64", "uint64"])
def test_reflected_shift(backend, rng, y_name):
    y = rng.integers(0, 14, 32).astype(y_name)
    out = device_array(np.full(32, 7, y_name), backend)
    reflected_shift_kernel[(1,)](device_array(y, backend), out, BLOCK=32)
    np.testing.assert_array_equal(to_numpy(out), (4096 >> y.astype(np.int64)).astype(y_name))


# ----------------------------------------------------------------------------- float atomic max/min


@tilec.jit
def atomic_extremum_kernel(cell_ptr, value_ptr, old_ptr, BLOCK: tl.constexpr, MAX: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    value = tl.load(value_ptr + offs)
    if MAX:
        old = tl.atomic_max(cell_ptr + offs, value)
    else:
        old = tl.atomic_min(cell_ptr + offs, value)
    tl.store(old_ptr + offs, old)


def _specials(dt: np.dtype) -> list:
    big = np.finfo(dt).max
    quiet_nan = np.array(np.nan, dt)
    negative_nan = np.negative(quiet_nan)
    return [np.array(v, dt) for v in (-big, -np.inf, -0.0, 0.0, np.inf, big, -1.5, 2.5, 1e-30)] + \
        [quiet_nan, negative_nan]


def _bits(v: np.ndarray) -> int:
    return int(np.asarray(v).view(np.dtype(f"u{v.itemsize}")))


def _expected(cell: np.ndarray, value: np.ndarray, larger: bool) -> np.ndarray:
    """The result cell: for numbers, the float maximum (minimum) with -0.0 below +0.0.
    A NaN operand follows the bit-pattern rule: a value with the sign bit clear is
    compared as signed integers, one with it set as unsigned integers, reversed."""
    if not (np.isnan(cell) or np.isnan(value)):
        a, b = float(cell), float(value)
        if a == b == 0.0:
            keep_value = (np.signbit(value) < np.signbit(cell)) if larger else (np.signbit(value) > np.signbit(cell))
        else:
            keep_value = b > a if larger else b < a
        return value if keep_value else cell
    width = cell.itemsize * 8
    c, v = _bits(cell), _bits(value)
    if v >> (width - 1) == 0:
        sc, sv = (x - (1 << width) if x >> (width - 1) else x for x in (c, v))
        keep_value = sv > sc if larger else sv < sc
    else:
        keep_value = v < c if larger else v > c
    return value if keep_value else cell


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("larger", [True, False], ids=["max", "min"])
def test_float_atomic_extremum_with_signed_zeros_infinities_and_nans(backend, dtype, larger):
    dt = np.dtype(dtype)
    pairs = list(itertools.product(_specials(dt), repeat=2))
    cells = np.array([c for c, _ in pairs], dt)
    values = np.array([v for _, v in pairs], dt)
    block = 32
    padded = -(-len(pairs) // block) * block
    cells = np.concatenate([cells, np.ones(padded - len(pairs), dt)])
    values = np.concatenate([values, np.ones(padded - len(pairs), dt)])
    cell_buf = device_array(cells, backend)
    old = device_array(np.full(padded, 3.25, dt), backend)
    atomic_extremum_kernel[(padded // block,)](cell_buf, device_array(values, backend), old, BLOCK=block,
                                               MAX=larger)
    unsigned = np.dtype(f"u{dt.itemsize}")
    got = to_numpy(cell_buf)[:len(pairs)]
    want = np.array([_expected(c, v, larger) for c, v in pairs], dt)
    wrong = np.flatnonzero(got.view(unsigned) != want.view(unsigned))
    assert not len(wrong), [(float(cells[i]), float(values[i]), float(got[i]), float(want[i])) for i in wrong[:8]]
    np.testing.assert_array_equal(to_numpy(old)[:len(pairs)].view(unsigned), cells[:len(pairs)].view(unsigned))
