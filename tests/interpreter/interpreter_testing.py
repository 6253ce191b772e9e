"""Helpers for the interpreter's tests: tensors around arrays, exact rounding references."""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np

import tilec.language as tl
from tilec.interpreter import Memory, NumpyBuilder
from tilec.language.core import block_type, tensor

BF16 = np.dtype(ml_dtypes.bfloat16)
FP8E4 = np.dtype(ml_dtypes.float8_e4m3fn)
FP8E5 = np.dtype(ml_dtypes.float8_e5m2)


def block(values: np.ndarray, ty: tl.dtype) -> tensor:
    """A tl.tensor wrapping `values` (a block of their shape, or a scalar for 0-d)."""
    values = np.asarray(values)
    return tensor(values, block_type(ty, values.shape) if values.ndim else ty)


def builder_of(sem) -> NumpyBuilder:
    return sem.builder


def pointers(memory: Memory, name: str, offsets: np.ndarray, itemsize: int) -> np.ndarray:
    """Virtual addresses of elements `offsets` of argument `name`."""
    return (np.uint64(memory.address_of(name)) + np.asarray(offsets, dtype=np.int64).astype(np.uint64)
            * np.uint64(itemsize)).astype(np.uint64)


def _bits_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(f"u{dt.itemsize}")


def exact_round(value: Fraction, dt: np.dtype) -> float:
    """The finite `value` correctly rounded (nearest, ties to even) to the float type `dt`
    (no overflow): an independent reference built from exact rationals."""
    dt = np.dtype(dt)
    if dt == np.float64:
        return float(value)  # Fraction -> float rounds correctly
    guess = np.array([float(value)], dtype=np.float64).astype(np.float32).astype(dt)
    bits = guess.view(_bits_dtype(dt))[0]
    candidates = []
    for delta in (-2, -1, 0, 1, 2):
        raw = np.array([int(bits) + delta], dtype=np.int64)
        if raw[0] < 0 or raw[0] >= 1 << (8 * dt.itemsize):
            continue
        cand = raw.astype(_bits_dtype(dt)).view(dt)
        as_float = float(cand.astype(np.float32)[0]) if dt.itemsize < 4 else float(cand[0])
        if np.isfinite(as_float):
            candidates.append((abs(Fraction(as_float) - value), int(raw[0]) & 1, as_float))
    for zero in (0.0,):
        candidates.append((abs(value), 0, zero))
    candidates.sort()
    best = candidates[0]
    ties = [c for c in candidates if c[0] == best[0]]
    even = [c for c in ties if c[1] == 0]
    return (even or ties)[0][2]
