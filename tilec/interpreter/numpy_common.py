"""What the interpreter's NumPy operations share: element types, and rounding as the GPU rounds.

tilec types map to NumPy dtypes; bfloat16 and the fp8 formats come from `ml_dtypes`
(the JAX project's NumPy dtypes): bf16 -> `bfloat16`, fp8e4nv -> `float8_e4m3fn`,
fp8e5 -> `float8_e5m2`, fp8e4b8 -> `float8_e4m3fnuz`, fp8e5b16 -> `float8_e5m2fnuz`.
fp8e4b15 has no such dtype: its values are held as their bytes in a one-field structured
dtype (`FLOAT8E4B15`), which NumPy refuses to do arithmetic on, and `round_to` encodes
and decodes them. The narrow formats are computed in float32 and rounded back, which
gives the correctly rounded result of every basic operation (float32 has more than twice
their precision plus two bits), as the GPU's instructions (or its fp32 math followed by a
conversion) do.

Conversions follow the GPU:

- widening is exact;
- narrowing rounds to nearest even; fp32 -> fp16/bf16 overflows to infinity;
- to fp8 saturates as PTX `cvt.rn.satfinite` does: finite values beyond the largest
  finite value, and infinities, become that value with their sign; NaN stays NaN;
- from fp64 to bf16 or fp8 the value is first rounded to float32 *to odd*, so that the
  second rounding is correct (ml_dtypes converts float64 through float32 with two
  round-to-nearest steps, which can round wrongly).
"""
from __future__ import annotations

import os
import sys
import types
from fractions import Fraction
from typing import Any

import numpy as np

from ..language.core import TilecSemanticError, dtype, tensor

try:
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _ml = None

_NP_DTYPES: dict[str, np.dtype] = {
    "int1": np.dtype(np.bool_),
    "int8": np.dtype(np.int8), "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8), "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32), "uint64": np.dtype(np.uint64),
    "fp16": np.dtype(np.float16), "fp32": np.dtype(np.float32), "fp64": np.dtype(np.float64),
}
# fp8e4b15 as its bit pattern (see the module docstring).
FLOAT8E4B15 = np.dtype([("fp8e4b15", np.uint8)])
_NP_DTYPES["fp8e4b15"] = FLOAT8E4B15
if _ml is not None:
    BFLOAT16 = np.dtype(_ml.bfloat16)
    FLOAT8E4NV = np.dtype(_ml.float8_e4m3fn)
    FLOAT8E5 = np.dtype(_ml.float8_e5m2)
    FLOAT8E4B8 = np.dtype(_ml.float8_e4m3fnuz)
    FLOAT8E5B16 = np.dtype(_ml.float8_e5m2fnuz)
    _NP_DTYPES.update({"bf16": BFLOAT16, "fp8e4nv": FLOAT8E4NV, "fp8e5": FLOAT8E5, "fp8e4b8": FLOAT8E4B8,
                       "fp8e5b16": FLOAT8E5B16})
    # The largest finite values, where conversions to fp8 saturate.
    FP8_MAX: dict[np.dtype, float] = {FLOAT8E4NV: 448.0, FLOAT8E5: 57344.0, FLOAT8E4B8: 240.0,
                                      FLOAT8E5B16: 57344.0, FLOAT8E4B15: 1.75}
    NARROW_FLOATS = frozenset({BFLOAT16, FLOAT8E4NV, FLOAT8E5, FLOAT8E4B8, FLOAT8E5B16, FLOAT8E4B15})
else:  # pragma: no cover
    BFLOAT16 = FLOAT8E4NV = FLOAT8E5 = FLOAT8E4B8 = FLOAT8E5B16 = None
    FP8_MAX = {FLOAT8E4B15: 1.75}
    NARROW_FLOATS = frozenset({FLOAT8E4B15})


def numpy_dtype(ty: dtype) -> np.dtype:
    """The NumPy dtype holding values of tilec type `ty` (blocks: their element type)."""
    scalar = ty.scalar
    if scalar.is_ptr():
        return np.dtype(np.uint64)
    found = _NP_DTYPES.get(scalar.name)
    if found is None:
        if scalar.name == "bf16" or scalar.is_fp8():
            raise TilecSemanticError(f"interpreting {scalar!r} values needs the `ml_dtypes` package "
                                     "(pip install ml_dtypes)")
        raise TilecSemanticError(f"the interpreter does not support {scalar!r} values")
    return found


def is_float(dt: np.dtype) -> bool:
    """True for every floating-point dtype, including ml_dtypes' (whose kind is 'V')."""
    return dt.kind == "f" or dt in NARROW_FLOATS


def is_narrow(dt: np.dtype) -> bool:
    """bf16 and fp8: stored in their own dtype, computed in float32."""
    return dt in NARROW_FLOATS


def compute_dtype(dt: np.dtype) -> np.dtype:
    """The dtype operations on `dt` values are computed in (float32 for bf16/fp8)."""
    return np.dtype(np.float32) if dt in NARROW_FLOATS else dt


def signed(dt: np.dtype) -> np.dtype:
    return np.dtype(f"int{dt.itemsize * 8}")


def unsigned(dt: np.dtype) -> np.dtype:
    return np.dtype(f"uint{dt.itemsize * 8}")


def as_array(value: Any, dt: np.dtype) -> np.ndarray:
    """`value` as an array of `dt` (0-d arrays stay arrays; NumPy scalars become 0-d arrays).

    For a value already of a float type and a float `dt`, prefer `round_to`, which rounds
    as the GPU does; this is a plain `astype`.
    """
    return np.asarray(value).astype(dt, copy=False)


# ----------------------------------------------------------------------------- rounding


def to_odd_float32(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding to odd: inexact results get an odd last mantissa bit.

    Rounding the result once more, to any format with at most 22 mantissa bits, then
    gives the correctly rounded value of `x` in that format.
    """
    x = np.asarray(x, dtype=np.float64)
    r = x.astype(np.float32)
    wide = r.astype(np.float64)
    bits = r.view(np.uint32)
    fix = np.isfinite(x) & (wide != x) & ((bits & 1) == 0)
    if fix.any():
        # One step of the bit pattern changes the magnitude by one ulp (sign-magnitude).
        larger = np.abs(wide) > np.abs(x)
        step = np.where(larger, np.uint32(0xFFFFFFFF), np.uint32(1))  # -1 or +1, modulo 2**32
        bits = np.where(fix, bits + step, bits).astype(np.uint32)
        r = bits.view(np.float32)
    return r


def to_odd_float64(total: np.ndarray, error: np.ndarray) -> np.ndarray:
    """The float64 `total` rounded to odd, given the exact rounding error of computing it
    (`total + error` is the exact value): inexact results get an odd last bit."""
    total = np.asarray(total, dtype=np.float64)
    bits = total.view(np.uint64)
    fix = (error != 0) & np.isfinite(total) & ((bits & np.uint64(1)) == 0)
    if fix.any():
        # The exact value lies on the side of `error`: away from zero when they agree in sign.
        away = np.signbit(error) == np.signbit(total)
        step = np.where(away, np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF))
        bits = np.where(fix, bits + step, bits).astype(np.uint64)
        total = bits.view(np.float64)
    return total


# fp8e4b15: 1 sign, 4 exponent and 3 mantissa bits, exponent bias 15, no infinities;
# 0x7F and 0xFF are NaN, so the largest finite value is 0x7E = 1.75.
_E4B15_MANTISSA, _E4B15_BIAS, _E4B15_MAX_CODE = 3, 15, 0x7E


def _decode_e4b15(x: np.ndarray) -> np.ndarray:
    """fp8e4b15 values (their bytes) as exact float32 values."""
    bits = x.view(np.uint8).astype(np.int32)
    magnitude = bits & 0x7F
    exponent, fraction = magnitude >> _E4B15_MANTISSA, magnitude & 0x7
    # exponent 0: subnormal, fraction * 2**(1 - bias - 3); else (8 + fraction) * 2**(e - bias - 3)
    significand = np.where(exponent == 0, fraction, fraction + 8).astype(np.float32)
    scale = np.maximum(exponent, 1) - _E4B15_BIAS - _E4B15_MANTISSA
    value = np.ldexp(significand, scale).astype(np.float32)
    value = np.where(bits & 0x80, -value, value)
    return np.where(magnitude == 0x7F, np.float32(np.nan), value).astype(np.float32)  # NaN: positive


def _encode_e4b15(x: np.ndarray) -> np.ndarray:
    """float32 values to fp8e4b15: to nearest even, saturating; NaN -> 0x7F."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    sign = ((bits >> 24) & 0x80).astype(np.uint8)
    magnitude = np.abs(x).astype(np.float64)
    # Scaled so that one unit is the spacing of the subnormals (and of [2**-14, 2**-13)).
    units = magnitude * 2.0 ** (_E4B15_BIAS - 1 + _E4B15_MANTISSA)
    with np.errstate(invalid="ignore", over="ignore"):
        # units in [2**(k+3), 2**(k+4)) have spacing 2**k: the code is 8*k plus the rounded
        # multiple of 2**k (8 to 16; 16 carries into the next binade, as it should).
        binade = np.frexp(np.maximum(units, 1.0))[1].astype(np.int64) - 1
        step = np.clip(binade - _E4B15_MANTISSA, 0, 64)
        code = (step << _E4B15_MANTISSA) + np.rint(np.ldexp(units, -step))
        code = np.where(np.isfinite(code), code, _E4B15_MAX_CODE)
    code = np.minimum(code, _E4B15_MAX_CODE).astype(np.uint8)
    code = np.where(np.isnan(x), np.uint8(0x7F), code | sign)  # NaN: 0x7F, whatever its sign
    return code.astype(np.uint8).view(FLOAT8E4B15).reshape(x.shape)


def round_to(x: Any, dt: np.dtype) -> np.ndarray:
    """Float values (of any float dtype) rounded to `dt` as the GPU converts (see the module
    docstring); non-float `dt` and non-float values are converted with `astype`."""
    x = np.asarray(x)
    dt = np.dtype(dt)
    if x.dtype == dt:
        return x
    if x.dtype == FLOAT8E4B15:
        return round_to(_decode_e4b15(x), dt)
    if dt == FLOAT8E4B15:
        if not is_float(x.dtype):
            return round_to(x.astype(np.float64), dt)
        wide = x if x.dtype in (np.float32, np.float64) else round_to(x, np.dtype(np.float32))
        return _encode_e4b15(to_odd_float32(wide) if wide.dtype == np.float64 else wide)
    if not is_float(dt) or not is_float(x.dtype):
        if dt in NARROW_FLOATS:  # integers: through float64 (exact below 2**53), then rounded
            return round_to(x.astype(np.float64), dt)
        return x.astype(dt)
    if dt in FP8_MAX:
        limit = FP8_MAX[dt]
        wide = x.astype(np.float64) if x.dtype == np.float64 else x.astype(np.float32)
        wide = np.clip(wide, -limit, limit)  # satfinite: NaN stays NaN, infinities saturate
        if wide.dtype == np.float64:
            wide = to_odd_float32(wide)
        return wide.astype(dt)
    if dt == BFLOAT16:
        if x.dtype == np.float64:
            return to_odd_float32(x).astype(dt)
        return x.astype(np.float32).astype(dt)
    if x.dtype in NARROW_FLOATS:
        return x.astype(np.float32).astype(dt)  # exact widening, then at most one rounding
    return x.astype(dt)  # NumPy rounds fp64/fp32 -> fp32/fp16 to nearest even


def tf32(x: np.ndarray) -> np.ndarray:
    """float32 values cut to tf32's 10 mantissa bits (toward zero: the 13 low bits of the
    bit pattern cleared), as the tensor cores read an fp32 register holding a tf32
    operand; NaN stays NaN."""
    x = np.asarray(x, dtype=np.float32)
    truncated = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isnan(x), x, truncated)


# ----------------------------------------------------------------------------- fused multiply-add


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = 134217729.0 * a  # 2**27 + 1 (Veltkamp)
    hi = c - (c - a)
    return hi, a - hi


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _exact_fma(a: float, b: float, c: float) -> float:
    """fma of finite float64 values with a non-zero product, through exact rationals (slow;
    for extreme exponents only)."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        return float(exact)  # Fraction -> float is correctly rounded; an exact zero is +0
    except OverflowError:
        return float("inf") if exact > 0 else float("-inf")


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, dt: np.dtype) -> np.ndarray:
    """a * b + c with a single rounding to `dt`.

    For fp32 and narrower the product is exact in float64, the sum is rounded to odd in
    float64 and then to `dt`. For fp64, Boldo and Melquiond's emulation (an exact
    product, an exact sum, an addition rounded to odd) works where no intermediate
    overflows or underflows; the other elements go through exact rationals.
    """
    a64, b64, c64 = (np.asarray(v).astype(np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        if dt != np.float64:
            p = a64 * b64
            s, e = _two_sum(p, c64)
            return round_to(to_odd_float64(s, e), dt)
        return _fma64(*np.broadcast_arrays(a64, b64, c64))


def _fma64(a64: np.ndarray, b64: np.ndarray, c64: np.ndarray) -> np.ndarray:
    shape = a64.shape
    a64, b64, c64 = a64.reshape(-1), b64.reshape(-1), c64.reshape(-1)
    product = a64 * b64
    magnitude = np.abs(product)
    zero_product = (a64 == 0) | (b64 == 0)
    safe = (np.isfinite(a64) & np.isfinite(b64) & np.isfinite(c64)
            & (np.abs(a64) < 2.0 ** 995) & (np.abs(b64) < 2.0 ** 995) & (np.abs(c64) < 2.0 ** 1000)
            & (magnitude < 2.0 ** 1000) & ((magnitude > 2.0 ** -960) | zero_product))
    uh, ul = _two_product(a64, b64)
    th, tl_ = _two_sum(c64, uh)
    v, ve = _two_sum(tl_, ul)
    result = th + to_odd_float64(v, ve)
    result = np.where(zero_product, product + c64, result)  # exact, and IEEE's signed zeros
    for i in np.flatnonzero(~safe & ~zero_product):
        x, y, z = float(a64[i]), float(b64[i]), float(c64[i])
        if np.isfinite(x) and np.isfinite(y) and np.isinf(z):
            result[i] = z  # the exact product is finite: the infinite addend wins
        elif not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            result[i] = x * y + z  # infinite or NaN operands: the product is exact
        else:
            result[i] = _exact_fma(x, y, z)
    return result.reshape(shape)


# ----------------------------------------------------------------------------- combine checks


def check_combined(results: list[Any], operands: list[tensor], what: str = "reduction") -> None:
    """A reduction's or scan's combine must return one value per input, of the input's
    type (as the compiler's combiner region requires; checked here too so both agree)."""
    if len(results) != len(operands):
        raise TilecSemanticError(f"the combine function returned {len(results)} values; expected {len(operands)}")
    for result, operand in zip(results, operands):
        if not isinstance(result, tensor) or result.dtype != operand.dtype:
            got = result.dtype if isinstance(result, tensor) else type(result).__name__
            raise TilecSemanticError(f"the combine function must return {operand.dtype} values, got {got}")
        if result.type != operand.type:
            raise TilecSemanticError(f"the {what}'s combine function must combine elementwise, without changing "
                                     f"shapes (got {result.type} for operands of type {operand.type})")


_TILEC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def kernel_frame() -> types.FrameType | None:
    """The innermost frame running code outside tilec: the kernel (or a @jit function it
    called) that the interpreter is running."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_TILEC_DIR):
        frame = frame.f_back
    return frame
