"""The fuzzer's own model of the language: types, promotion and an evaluator with error bounds.

Written from docs/language.md, independently of tilec's semantic layer (which the
interpreter and the compiler share), so that a promotion or rounding rule implemented
wrongly there shows up as a mismatch here.

Every value is a `Val`: NumPy values in the element type (`value`) and, per element, an
absolute error bound (`err`, float64) that any correct implementation stays within:

- `err == 0`: the result is determined bit for bit (NaN anywhere it is NaN, zeros with
  their sign);
- `0 < err < inf`: a float result within `err` of `value` (the sign of a zero is free);
- `err == inf`: not determined ("don't care"): an approximate value reached a
  discontinuity (a comparison too close to call, a float-to-int conversion between two
  integers), an order-dependent overflow, and the like.

Operations compute the exact result in float64 (or exactly, for integers), add the
propagated input errors and the implementation's allowed error (ulps for the
approximate functions of language.md#accuracy, reduction order, fused multiply-adds),
and round the interval to the result type (`finish`): an interval that rounds to one
value is exact again.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

INF = math.inf
# The smallest positive float64: an error bound that only frees the sign of a zero.
SIGN_FREE = 5e-324


# ----------------------------------------------------------------------------- types

@dataclass(frozen=True)
class DType:
    name: str        # the signature name: "i8", "u32", "fp16", "i1", ...
    tl: str          # how the kernel source spells it: "tl.int8"
    np: np.dtype
    bits: int
    kind: str        # "bool", "int" or "float"
    signed: bool

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        """Integers, int1 included (as the language counts them)."""
        return self.kind != "float"

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    def __repr__(self) -> str:
        return self.name


def _d(name, tl, npd, bits, kind, signed):
    return DType(name, tl, np.dtype(npd), bits, kind, signed)


BOOL = _d("i1", "tl.int1", np.bool_, 1, "bool", False)
I8 = _d("i8", "tl.int8", np.int8, 8, "int", True)
I16 = _d("i16", "tl.int16", np.int16, 16, "int", True)
I32 = _d("i32", "tl.int32", np.int32, 32, "int", True)
I64 = _d("i64", "tl.int64", np.int64, 64, "int", True)
U8 = _d("u8", "tl.uint8", np.uint8, 8, "int", False)
U16 = _d("u16", "tl.uint16", np.uint16, 16, "int", False)
U32 = _d("u32", "tl.uint32", np.uint32, 32, "int", False)
U64 = _d("u64", "tl.uint64", np.uint64, 64, "int", False)
F16 = _d("fp16", "tl.float16", np.float16, 16, "float", True)
BF16 = _d("bf16", "tl.bfloat16", ml_dtypes.bfloat16, 16, "float", True)
F32 = _d("fp32", "tl.float32", np.float32, 32, "float", True)
F64 = _d("fp64", "tl.float64", np.float64, 64, "float", True)

INTS = (I8, I16, I32, I64, U8, U16, U32, U64)
FLOATS = (F16, BF16, F32, F64)
ALL = INTS + FLOATS + (BOOL,)
BY_NAME = {t.name: t for t in ALL}
UINT_OF_BITS = {8: U8, 16: U16, 32: U32, 64: U64}
INT_OF_BITS = {8: I8, 16: I16, 32: I32, 64: I64}

# (explicit mantissa bits, minimum normal exponent, maximum exponent)
FLOAT_FORMAT = {"fp16": (10, -14, 15), "bf16": (7, -126, 127), "fp32": (23, -126, 127), "fp64": (52, -1022, 1023)}


def mantissa_bits(dt: DType) -> int:
    return FLOAT_FORMAT[dt.name][0]


def min_normal(dt: DType) -> float:
    return 2.0 ** FLOAT_FORMAT[dt.name][1]


def min_subnormal(dt: DType) -> float:
    mant, emin, _ = FLOAT_FORMAT[dt.name]
    return 2.0 ** (emin - mant)


def max_finite(dt: DType) -> float:
    mant, _, emax = FLOAT_FORMAT[dt.name]
    return (2.0 - 2.0 ** -mant) * 2.0 ** emax


def int_range(dt: DType) -> tuple[int, int]:
    if dt.is_bool:
        return 0, 1
    if dt.signed:
        return -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
    return 0, (1 << dt.bits) - 1


# ----------------------------------------------------------------------------- promotion (language.md#type-promotion)

class PromotionError(Exception):
    """The language refuses this combination (the generator then picks other operands)."""


def computation_type(a: DType, b: DType, div_or_mod: bool = False) -> DType:
    """Rules 2-4 for two tensor types."""
    if a.is_float or b.is_float:
        if F64 in (a, b):
            return F64
        if F32 in (a, b):
            return F32
        if F16 in (a, b):
            return F32 if div_or_mod else F16
        # bf16 with bf16 or with an integer
        if div_or_mod:
            return F32
        return BF16 if a == b == BF16 else F32
    if div_or_mod and a.signed != b.signed:
        raise PromotionError(f"{a} and {b} differ in signedness")
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    unsigned, signed = (a, b) if not a.signed else (b, a)
    return unsigned if unsigned.bits >= signed.bits else signed


def _kind_rank(kind: str) -> int:
    return {"bool": 0, "int": 1, "float": 2}[kind]


def python_scalar_type(value, tensor: DType) -> DType:
    """Rule 1: the type a Python number takes against a tensor of type `tensor`."""
    kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"
    if _kind_rank(kind) <= _kind_rank(tensor.kind):
        if kind == "int" and tensor.is_int:
            lo, hi = int_range(tensor)
            if not lo <= value <= hi:
                raise PromotionError(f"constant {value} does not fit {tensor}")
        return tensor
    if kind == "bool":
        return BOOL
    if kind == "int":
        for t in (I32, U32, I64, U64):
            lo, hi = int_range(t)
            if lo <= value <= hi:
                return t
        raise PromotionError(f"constant {value} fits no integer type")
    if math.isfinite(value) and value != 0 and not 2.0 ** -126 <= abs(value) <= max_finite(F32):
        return F64
    return F32


def sum_type(dt: DType) -> DType:
    """tl.sum / tl.cumsum accumulate narrow integers in 32 bits, bf16 (cumsum) in fp32."""
    if dt.is_int and dt.bits < 32:
        return I32 if dt.signed and not dt.is_bool else U32
    return dt


def extremum_type(dt: DType) -> DType:
    """tl.max / tl.min compute every type narrower than 32 bits in fp32 or int32."""
    if dt.bits < 32:
        return F32 if dt.is_float else I32
    return dt


# ----------------------------------------------------------------------------- rounding

def f64(x) -> np.ndarray:
    """float64 values, every NaN made a quiet NaN: a signalling NaN (random input bits
    make some) would turn NumPy's fmin/fmax into IEEE 754-2008 minNum, which returns NaN
    for it, where the language ignores any NaN."""
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.asarray(x).astype(np.float64)
    return np.where(np.isnan(out), np.nan, out) if out.dtype.kind == "f" else out


def _odd_float32(x64: np.ndarray) -> np.ndarray:
    """float64 rounded to float32 to odd, so that a second rounding to bf16 is correct."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = x64.astype(np.float32)
    back = r.astype(np.float64)
    bits = r.view(np.uint32).copy()
    fix = np.isfinite(x64) & (back != x64) & ((bits & 1) == 0) & np.isfinite(back)
    toward_zero = np.abs(back) > np.abs(x64)
    bits = np.where(fix, np.where(toward_zero, bits - np.uint32(1), bits + np.uint32(1)), bits).astype(np.uint32)
    # float32 overflow of a finite float64 near fp32's top: keep the largest finite (odd) value
    big = np.isfinite(x64) & ~np.isfinite(back)
    bits = np.where(big, np.where(x64 > 0, np.uint32(0x7F7FFFFF), np.uint32(0xFF7FFFFF)), bits).astype(np.uint32)
    return bits.view(np.float32)


def round_to(x64, dt: DType) -> np.ndarray:
    """float64 values correctly rounded (to nearest even) to float type dt."""
    x64 = np.asarray(x64, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if dt is F64:
            return x64.copy()
        if dt in (F32, F16):
            return x64.astype(dt.np)
        return _odd_float32(x64).astype(dt.np)


def round_toward_zero(x64, dt: DType) -> np.ndarray:
    """float64 values rounded toward zero to dt (fp_downcast_rounding="rtz"); finite values
    beyond the range give the largest finite value."""
    x64 = np.asarray(x64, dtype=np.float64)
    nearest = round_to(x64, dt)
    with np.errstate(invalid="ignore"):
        away = np.isfinite(x64) & (np.abs(f64(nearest)) > np.abs(x64))
    # one step toward zero: the magnitude bits minus one (sign-magnitude formats)
    raw = bits_of(nearest, dt)
    stepped = np.where(away, raw - raw.dtype.type(1), raw).astype(raw.dtype)
    return stepped.view(dt.np).reshape(x64.shape)


def ulp(x64, dt: DType) -> np.ndarray:
    """The spacing of dt's values around |x| (the subnormal spacing near zero)."""
    mant, emin, _ = FLOAT_FORMAT[dt.name]
    x = np.abs(np.asarray(x64, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        _, e = np.frexp(np.where(np.isfinite(x) & (x > 0), x, 1.0))
    exponent = np.where(x > 0, np.maximum(e - 1, emin), emin)
    out = np.ldexp(1.0, exponent - mant)
    return np.where(np.isfinite(x), out, INF)


def contiguous(values) -> np.ndarray:
    """A C-contiguous copy keeping the rank (np.ascontiguousarray makes 0-d arrays 1-d)."""
    return np.array(values, copy=True, order="C")


def bits_of(values: np.ndarray, dt: DType) -> np.ndarray:
    if dt.is_bool:
        return np.asarray(values).astype(np.uint8)
    return contiguous(np.asarray(values, dtype=dt.np)).view(UINT_OF_BITS[dt.bits].np)


# ----------------------------------------------------------------------------- values

@dataclass
class Val:
    value: np.ndarray     # of dt.np, the node's shape (0-d for a scalar)
    err: np.ndarray       # float64, same shape
    dt: DType
    # A float product, and the type it was rounded to: an add consuming it (also after a
    # widening conversion) may be fused into an fma that skips that rounding.
    product: DType | None = None

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape)

    def exact(self) -> bool:
        return bool(np.all(self.err == 0))


def exact_val(values, dt: DType) -> Val:
    v = np.asarray(values, dtype=dt.np)
    return Val(v, np.zeros(v.shape), dt)


def _clean_err(err) -> np.ndarray:
    err = np.asarray(err, dtype=np.float64)
    return np.where(np.isnan(err), INF, err)


def propagate_int(values, dt: DType, *errs) -> Val:
    """An integer (or bool) result: exact unless an input is not determined."""
    v = np.asarray(values, dtype=dt.np)
    err = np.zeros(v.shape)
    for e in errs:
        err = np.where(np.broadcast_to(e, v.shape) > 0, INF, err)
    return Val(v, err, dt)


def finish(y64, err, dt: DType, product: DType | None = None, rounding=None) -> Val:
    """The float result of an op: exact value y64 (float64) within `err`, rounded to dt
    (to nearest even, or by `rounding`). The rounded interval gives the error bound: a
    single value is exact."""
    rounding = rounding or round_to
    y64 = np.asarray(y64, dtype=np.float64)
    err = np.broadcast_to(_clean_err(err), y64.shape)
    if dt is F64:
        # y64 is itself rounded to float64: exact where the inputs are (IEEE +, -, *, /),
        # but around an uncertain result the exact value may sit up to half an ulp away.
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.where(err > 0, err + ulp(y64, F64) / 2, err)
    value = rounding(y64, dt)
    if not np.any(err):
        return Val(value, np.zeros(y64.shape), dt, product)
    with np.errstate(invalid="ignore", over="ignore"):
        lo, hi = rounding(y64 - err, dt), rounding(y64 + err, dt)
        same = bits_of(lo, dt) == bits_of(hi, dt)
        v64, lo64, hi64 = f64(value), f64(lo), f64(hi)
        spread = np.maximum(np.abs(hi64 - v64), np.abs(v64 - lo64))
    spread = _clean_err(np.maximum(spread, SIGN_FREE))
    out = np.where((err == 0) | same, 0.0, spread)
    # an uncertain value that may overflow, or an uncertain NaN: not determined
    unsure = (err > 0) & ~same & (~np.isfinite(lo64) | ~np.isfinite(hi64) | np.isnan(y64))
    out = np.where(unsure | np.isinf(err), INF, out)
    out = np.where((err > 0) & np.isnan(y64), INF, out)
    if dt is F64:  # float64 itself may have overflowed on the way
        out = np.where((err > 0) & ~np.isfinite(y64), INF, out)
    return Val(value, out, dt, product)


def merr(absval, err) -> np.ndarray:
    """|value| * err, with 0 when err is 0 (an exact infinity times nothing)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.asarray(err) == 0, 0.0, np.abs(absval) * err)


# ----------------------------------------------------------------------------- conversions

def as_int_list(values) -> list[int]:
    return [int(v) for v in np.ravel(values)]


def wrap_ints(ints: np.ndarray, dt: DType) -> np.ndarray:
    """Python ints (an object array) wrapped to dt's width."""
    if dt.is_bool:
        return (np.asarray(ints) % 2).astype(np.bool_)
    lo, _ = int_range(dt)
    span = 1 << dt.bits
    flat = [((int(v) - lo) % span) + lo for v in np.ravel(ints)]
    return np.array(flat, dtype=object).astype(dt.np).reshape(np.shape(ints))


def int_objects(values) -> np.ndarray:
    """Integer values as an object array of Python ints (exact for 64 bits)."""
    arr = np.asarray(values)
    return np.array([int(v) for v in arr.ravel()], dtype=object).reshape(arr.shape)


def ints_to_float(values: np.ndarray, dt: DType) -> np.ndarray:
    """Integers correctly rounded to float dt (once, from the exact integer)."""
    from fractions import Fraction
    flat = []
    for v in np.ravel(values):
        v = int(v)
        f = float(v) if abs(v) < 2 ** 1023 else math.copysign(INF, v)
        if Fraction(f) != v and dt is not F64:
            # float64 rounded it: round to odd instead, for the second rounding below
            bits = np.array([f]).view(np.uint64)[0]
            if not bits & np.uint64(1):
                toward_zero = abs(Fraction(f)) > abs(v)
                bits = bits - np.uint64(1) if toward_zero else bits + np.uint64(1)
                f = float(np.array([bits], dtype=np.uint64).view(np.float64)[0])
        flat.append(f)
    return round_to(np.array(flat, dtype=np.float64).reshape(np.shape(values)), dt)


def float_to_int(x64: np.ndarray, dt: DType) -> np.ndarray:
    """Truncation toward zero, saturating, NaN -> 0 (language.md#conversions)."""
    lo, hi = int_range(dt)
    out = []
    for v in np.ravel(x64):
        if math.isnan(v):
            out.append(0)
        elif v == INF:
            out.append(hi)
        elif v == -INF:
            out.append(lo)
        else:
            out.append(min(max(int(v), lo), hi))  # int() truncates toward zero
    return np.array(out, dtype=object).astype(dt.np).reshape(np.shape(x64))


def convert(a: Val, dst: DType, rtz: bool = False) -> Val:
    """`a.to(dst)`: wrap / extend by the source's signedness, round to nearest, saturate."""
    src = a.dt
    if src == dst:
        return Val(a.value, a.err, a.dt, a.product)
    if dst.is_bool:
        if src.is_float:
            x = f64(a.value)
            v = x != 0
            unsure = (a.err > 0) & (np.abs(x) <= a.err)
            return Val(v, np.where(unsure | np.isinf(a.err), INF, 0.0), BOOL)
        return propagate_int(np.asarray(a.value) != 0, BOOL, a.err)
    if dst.is_float:
        if src.is_float:
            x = f64(a.value)
            if rtz:
                return finish(x, a.err, dst, rounding=round_toward_zero)
            return finish(x, a.err, dst, a.product if dst.bits > src.bits else None)
        out = ints_to_float(a.value, dst)
        return Val(out, np.where(a.err > 0, INF, 0.0), dst)
    # to an integer
    if src.is_float:
        x = f64(a.value)
        v = float_to_int(x, dst)
        if np.any(a.err):
            lo = float_to_int(x - a.err, dst)
            hi = float_to_int(x + a.err, dst)
            unsure = (a.err > 0) & ((lo != hi) | np.isnan(x) | np.isinf(a.err))
            return Val(v, np.where(unsure, INF, 0.0), dst)
        return Val(v, np.zeros(x.shape), dst)
    return propagate_int(wrap_ints(int_objects(a.value), dst), dst, a.err)


def bitcast(a: Val, dst: DType) -> Val:
    """The same bits; a NaN's bits (sign, payload) are not determined."""
    v = contiguous(np.asarray(a.value, dtype=a.dt.np)).view(dst.np).reshape(a.shape)
    unsure = a.err > 0
    if a.dt.is_float:
        unsure = unsure | np.isnan(f64(a.value))
    return Val(v, np.where(unsure, INF, 0.0), dst)
