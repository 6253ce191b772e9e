"""NumPy versions of the NVVM intrinsics that `tl.extra.cuda` calls through
extern_elementwise (the compiled kernel calls the `llvm.nvvm.*` functions themselves):
the same rounding, bit for bit, except where the GPU's instruction is approximate
(ex2.approx: NumPy's correctly rounded 2**x, within its 2 ulp) or leaves a NaN's bits
unspecified.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

_SIGN = np.uint32(0x80000000)
_CANONICAL_NAN = np.uint32(0x7FFFFFFF)
_SMALLEST_NORMAL = np.float32(2.0 ** -126)


def _f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _exp2_ftz(x) -> np.ndarray:
    x = _f32(x)
    x = np.where(np.abs(x) < _SMALLEST_NORMAL, np.float32(0), x)  # a subnormal input counts as 0
    with np.errstate(all="ignore"):
        y = np.exp2(x).astype(np.float32)
    return np.where(np.abs(y) < _SMALLEST_NORMAL, np.float32(0), y).astype(np.float32)


def _tf32(x, ties_to_even: bool) -> np.ndarray:
    """The fp32 bits of x rounded to tf32 (10 fraction bits): int32 bits, low 13 bits clear."""
    bits = _f32(x).view(np.uint32).astype(np.uint64)
    if ties_to_even:
        rounded = bits + 0xFFF + ((bits >> 13) & 1)
    else:
        rounded = bits + 0x1000  # on the magnitude: ties away from zero
    rounded = (rounded & 0xFFFFE000).astype(np.uint32)
    nan = np.isnan(_f32(x))
    return np.where(nan, _CANONICAL_NAN, rounded).astype(np.uint32).view(np.int32)


def _xorsign_abs(pick: Callable) -> Callable:
    def apply(a, b) -> np.ndarray:
        a, b = _f32(a), _f32(b)
        magnitude = pick(np.abs(a), np.abs(b)).astype(np.float32)
        sign = (a.view(np.uint32) ^ b.view(np.uint32)) & _SIGN
        result = magnitude.view(np.uint32) | sign
        result = np.where(np.isnan(a) | np.isnan(b), _CANONICAL_NAN, result)
        return np.asarray(result, dtype=np.uint32).view(np.float32)
    return apply


# e2m1 (fp4): sign, 2 exponent bits (bias 1), 1 fraction bit; its 8 magnitudes by code.
_E2M1_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def _e2m1(x: np.ndarray) -> np.ndarray:
    """Codes 0..15 of fp32 values rounded to nearest even and saturated (NaN: 6.0)."""
    x = np.asarray(x, dtype=np.float64)
    magnitude = np.where(np.isnan(x), 6.0, np.minimum(np.abs(x), 6.0))
    # Nearest representable magnitude; on a tie, the code whose fraction bit is 0 (even).
    distance = np.abs(magnitude[..., None] - _E2M1_VALUES)
    best = distance.min(axis=-1, keepdims=True)
    candidates = distance == best
    even = candidates & (np.arange(8) % 2 == 0)
    code = np.where(even.any(axis=-1), np.argmax(even, axis=-1), np.argmax(candidates, axis=-1))
    negative = np.signbit(x) & ~np.isnan(x)
    return (code | np.where(negative, 8, 0)).astype(np.uint16)


def _e2m1x2(hi, lo) -> np.ndarray:
    return ((_e2m1(hi) << 4) | _e2m1(lo)).astype(np.uint16)


NUMPY_IMPLEMENTATIONS: dict[str, Callable[..., np.ndarray]] = {
    "llvm.nvvm.ex2.approx.ftz.f32": _exp2_ftz,
    "llvm.nvvm.f2tf32.rn": lambda x: _tf32(x, ties_to_even=True),
    "llvm.nvvm.f2tf32.rna": lambda x: _tf32(x, ties_to_even=False),
    "llvm.nvvm.fmin.nan.xorsign.abs.f": _xorsign_abs(np.minimum),
    "llvm.nvvm.fmax.nan.xorsign.abs.f": _xorsign_abs(np.maximum),
    "llvm.nvvm.ff.to.e2m1x2.rn.satfinite": _e2m1x2,
}
