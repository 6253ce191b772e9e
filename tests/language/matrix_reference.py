"""Shared machinery of the language test matrix (tests/language/test_matrix_*.py).

Independent references: integer results are computed with Python integers and wrapped
to the result type; float results are computed exactly (float64 for +, -, *, / and
sqrt of narrower types, which is then correctly rounded once; exact rationals for fma
and conversions from 64-bit integers), or in float64 for transcendental functions, and
rounded to the result type here, without using tilec's own rounding helpers.

Comparisons count ulps on the ordered bit patterns, so infinity is one ulp above the
largest finite value, and NaNs must be NaN exactly where the reference is NaN.
Outputs are poisoned before every launch with a value that differs from the expected
one in every element (NaN where a number is expected, a number where NaN is expected,
the bitwise complement for integers), so an element the kernel never wrote fails.
"""
from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

BF16 = np.dtype(ml_dtypes.bfloat16)

INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
SIGNED_DTYPES = ("int8", "int16", "int32", "int64")
FLOAT_DTYPES = ("fp16", "bf16", "fp32", "fp64")
ALL_DTYPES = INT_DTYPES + FLOAT_DTYPES + ("bool",)

NP = {
    "int8": np.dtype(np.int8), "int16": np.dtype(np.int16), "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64), "uint8": np.dtype(np.uint8), "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32), "uint64": np.dtype(np.uint64),
    "fp16": np.dtype(np.float16), "bf16": BF16, "fp32": np.dtype(np.float32), "fp64": np.dtype(np.float64),
    "bool": np.dtype(np.bool_),
}
TL = {
    "int8": tl.int8, "int16": tl.int16, "int32": tl.int32, "int64": tl.int64,
    "uint8": tl.uint8, "uint16": tl.uint16, "uint32": tl.uint32, "uint64": tl.uint64,
    "fp16": tl.float16, "bf16": tl.bfloat16, "fp32": tl.float32, "fp64": tl.float64, "bool": tl.int1,
}
BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
        "uint64": 64, "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64, "bool": 1}
UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}

# (explicit mantissa bits, minimum normal exponent, maximum exponent)
FLOAT_FORMAT = {"fp16": (10, -14, 15), "bf16": (7, -126, 127), "fp32": (23, -126, 127), "fp64": (52, -1022, 1023)}

# 1-D sizes and 2-D shapes of the matrix (every dimension a power of two).
SHAPES = ((1,), (2,), (16,), (128,), (1024,), (1, 32), (16, 16), (8, 128), (64, 4))


def shape_id(shape) -> str:
    return "x".join(str(s) for s in shape)


def mn(shape) -> tuple[int, int]:
    """The (M, N) constexprs of a shape: N == 0 marks a 1-D block of M elements."""
    return (shape[0], 0) if len(shape) == 1 else (shape[0], shape[1])


def numel(shape) -> int:
    return math.prod(shape)


def rotating_shapes(index: int, count: int = 3) -> list[tuple]:
    """`count` of the matrix shapes for the index-th case: consecutive indices start at
    consecutive shapes and take every (9 // count)-th one, so a family of cases (an op over
    its dtypes, or a dtype over its ops) covers every shape."""
    step = len(SHAPES) // count
    return [SHAPES[(index + k * step) % len(SHAPES)] for k in range(count)]


def is_int(dt: str) -> bool:
    return dt in INT_DTYPES


def is_float(dt: str) -> bool:
    return dt in FLOAT_DTYPES


def is_signed(dt: str) -> bool:
    return dt in SIGNED_DTYPES


def int_range(dt: str) -> tuple[int, int]:
    if dt == "bool":
        return 0, 1
    bits = BITS[dt]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if is_signed(dt) else (0, (1 << bits) - 1)


def wrap(values, dt: str) -> np.ndarray:
    """Python integers (any size) wrapped to `dt` (two's complement), as an array of dt."""
    lo, _ = int_range(dt)
    span = 1 << BITS[dt]
    if isinstance(values, np.ndarray):
        shape, flat = values.shape, values.ravel().tolist()
    else:
        flat = list(values)  # never through np.asarray: big Python ints would become float64
        shape = (len(flat),)
    return np.array([((int(v) - lo) % span) + lo for v in flat], dtype=NP[dt]).reshape(shape)


def as_ints(x: np.ndarray) -> list[int]:
    return [int(v) for v in np.ravel(x)]


# ----------------------------------------------------------------------------- float formats

def min_subnormal(dt: str) -> float:
    mant, emin, _ = FLOAT_FORMAT[dt]
    return 2.0 ** (emin - mant)


def min_normal(dt: str) -> float:
    return 2.0 ** FLOAT_FORMAT[dt][1]


def max_finite(dt: str) -> float:
    mant, _, emax = FLOAT_FORMAT[dt]
    return (2.0 - 2.0 ** -mant) * 2.0 ** emax


def float_specials(dt: str) -> list[float]:
    """+-0, +-inf, NaN, the smallest and largest subnormals, the smallest normal, the
    largest finite value, and a few ordinary numbers."""
    sub, normal, big = min_subnormal(dt), min_normal(dt), max_finite(dt)
    return [0.0, -0.0, math.inf, -math.inf, math.nan, sub, -sub, normal - sub, -(normal - sub), normal, -normal,
            big, -big, 1.0, -1.0, 3.0]


def int_specials(dt: str) -> list[int]:
    if dt == "bool":
        return [0, 1]
    lo, hi = int_range(dt)
    if is_signed(dt):
        return [lo, lo + 1, -1, 0, 1, 2, hi - 1, hi]
    return [0, 1, 2, 3, hi >> 1, (hi >> 1) + 1, hi - 1, hi]


def specials(dt: str) -> list:
    return float_specials(dt) if is_float(dt) else int_specials(dt)


def to_dtype(values, dt: str) -> np.ndarray:
    """Values exactly representable in dt (specials, integers) as an array of dt."""
    if is_float(dt):
        return round_to(np.asarray(values, dtype=np.float64), dt)
    if dt == "bool":
        return np.asarray(values).astype(np.bool_)
    return wrap(values, dt)


def random_floats(rng: np.random.Generator, dt: str, n: int) -> np.ndarray:
    """n finite values of dt, never all zero: half of them normally distributed numbers of
    random magnitude, half random finite bit patterns (every exponent, subnormals too)."""
    half = n // 2
    scale = 10.0 ** rng.uniform(-3, 3, half)
    normal = round_to(rng.standard_normal(half) * scale, dt).astype(np.float64)
    bits = BITS[dt]
    raw = rng.integers(0, 1 << bits, n - half, dtype=np.uint64).astype(UINT[bits]).view(NP[dt])
    with np.errstate(invalid="ignore"):
        raw = raw.astype(np.float64)  # bf16 NaN patterns warn on the way
    raw = np.where(np.isfinite(raw), raw, 1.5)
    out = np.concatenate([normal, raw])
    rng.shuffle(out)
    out[0] = 1.25  # never all zeros
    return round_to(out, dt)


def random_ints(rng: np.random.Generator, dt: str, n: int) -> np.ndarray:
    if dt == "bool":
        out = rng.integers(0, 2, n).astype(np.bool_)
        out[0] = True
        return out
    lo, hi = int_range(dt)
    # Half uniform over the whole range, half small numbers (ties, small quotients).
    wide = [int(v) for v in rng.integers(0, 1 << BITS[dt], n // 2, dtype=np.uint64)]
    small = [int(v) for v in rng.integers(-100 if is_signed(dt) else 0, 101, n - n // 2)]
    values = np.array(wide + small, dtype=object)
    rng.shuffle(values)
    values[0] = 7
    return wrap(values, dt)


def random_values(rng, dt: str, n: int) -> np.ndarray:
    return random_floats(rng, dt, n) if is_float(dt) else random_ints(rng, dt, n)


def padded_length(shape, needed: int) -> int:
    """The smallest multiple of the block size that holds `needed` values."""
    size = numel(shape)
    return size * max(1, -(-needed // size))


def pairs_with_specials(rng, dt_x: str, dt_y: str, shape, extra: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Operands: every pair of special values, then random pairs, to a whole number of blocks."""
    sx, sy = specials(dt_x), specials(dt_y)
    px = [a for a in sx for _ in sy]
    py = [b for _ in sx for b in sy]
    total = padded_length(shape, len(px) + extra)
    x = np.concatenate([to_dtype(px, dt_x), random_values(rng, dt_x, total - len(px))])
    y = np.concatenate([to_dtype(py, dt_y), random_values(rng, dt_y, total - len(py))])
    return x, y


# ----------------------------------------------------------------------------- rounding

def odd_float32(x64: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded to odd (inexact results get an odd last bit), so that a
    second rounding to a narrower format (bf16) is correctly rounded."""
    x64 = np.asarray(x64, dtype=np.float64)
    with np.errstate(over="ignore"):
        r = x64.astype(np.float32)
    back = r.astype(np.float64)
    bits = r.view(np.uint32).copy()
    fix = ~np.isnan(x64) & ~np.isinf(x64) & (back != x64) & ((bits & 1) == 0)
    toward_zero = np.abs(back) > np.abs(x64)
    bits = np.where(fix, np.where(toward_zero, bits - np.uint32(1), bits + np.uint32(1)), bits).astype(np.uint32)
    return bits.view(np.float32)


def round_to(x64, dt: str) -> np.ndarray:
    """float64 values correctly rounded (to nearest even) to float type dt."""
    x64 = np.asarray(x64, dtype=np.float64)
    with np.errstate(over="ignore"):
        if dt == "fp64":
            return x64.copy()
        if dt in ("fp32", "fp16"):
            return x64.astype(NP[dt])  # NumPy rounds float64 directly, to nearest even
        if dt == "bf16":
            return odd_float32(x64).astype(BF16)
    raise ValueError(dt)


def _odd_float64(q: Fraction) -> float:
    """The rational q rounded to float64 *to odd* (overflow gives the largest finite value,
    whose last bit is odd), for a second correct rounding to a narrower format."""
    try:
        f = float(q)
    except OverflowError:
        return float(np.finfo(np.float64).max) * (1.0 if q > 0 else -1.0)
    if math.isinf(f):
        return float(np.finfo(np.float64).max) * (1.0 if q > 0 else -1.0)
    if Fraction(f) == q:
        return f
    bits = np.array([f]).view(np.uint64)[0]
    if bits & np.uint64(1):
        return f
    toward_zero = abs(Fraction(f)) > abs(q)
    bits = bits - np.uint64(1) if toward_zero else bits + np.uint64(1)
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def round_rational(values, dt: str) -> np.ndarray:
    """Exact rationals (Fractions or Python ints) correctly rounded to float type dt;
    an exact zero becomes +0.0."""
    out = []
    for q in values:
        q = Fraction(q)
        if dt == "fp64":
            try:
                out.append(float(q))
            except OverflowError:
                out.append(math.inf if q > 0 else -math.inf)
        else:
            out.append(_odd_float64(q))
    return round_to(np.array(out, dtype=np.float64), dt)


def f64(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # bf16 NaN patterns warn on the way
        return np.asarray(x).astype(np.float64)


def flush_subnormals(x: np.ndarray, dt: str) -> np.ndarray:
    """dt values with subnormals replaced by zero of the same sign (what .ftz does)."""
    wide = f64(x)
    tiny = (wide != 0) & (np.abs(wide) < min_normal(dt))
    return round_to(np.where(tiny, np.copysign(0.0, wide), wide), dt)


# ----------------------------------------------------------------------------- comparisons

def _ordered(x: np.ndarray, dt: str) -> list[int]:
    """Bit patterns of float dt mapped to integers in the order of the values (-0 == +0)."""
    bits = BITS[dt]
    raw = np.ascontiguousarray(np.asarray(x, dtype=NP[dt])).view(UINT[bits]).ravel()
    sign = 1 << (bits - 1)
    out = []
    for b in raw.tolist():
        out.append(-(b - sign) if b & sign else b)
    return out


def ulp_distance(got: np.ndarray, ref: np.ndarray, dt: str) -> np.ndarray:
    a, b = _ordered(got, dt), _ordered(ref, dt)
    return np.array([abs(p - q) for p, q in zip(a, b)], dtype=np.float64).reshape(np.shape(got))


def _fmt(v, dt: str) -> str:
    if is_float(dt):
        bits = BITS[dt]
        raw = int(np.asarray([v], dtype=NP[dt]).view(UINT[bits])[0])
        return f"{float(v)!r}(0x{raw:0{bits // 4}x})"
    return repr(v.item() if hasattr(v, "item") else v)


def _report(bad: np.ndarray, got, refs, dt: str, inputs: dict, what: str) -> str:
    idx = np.flatnonzero(bad)
    lines = [f"{what}: {len(idx)} of {bad.size} elements wrong (result {dt})"]
    for i in idx[:12]:
        parts = [f"{name}={_fmt(np.ravel(arr)[i], name_dt)}" for name, (arr, name_dt) in inputs.items()]
        alts = " or ".join(_fmt(np.ravel(r)[i], dt) for r in refs)
        lines.append(f"  [{i}] {' '.join(parts)} -> got {_fmt(np.ravel(got)[i], dt)}, expected {alts}")
    return "\n".join(lines)


def check_float(got, refs, dt: str, *, ulps=0, zero_sign: bool = True, inputs: dict | None = None,
                what: str = "", flush_tiny: bool = False) -> None:
    """Every element of `got` must match one of `refs` (arrays of dt, correctly rounded):
    NaN exactly where that reference is NaN, within `ulps` (scalar or per element) elsewhere,
    and with the reference's sign where the reference is zero (when zero_sign and ulps == 0).
    `flush_tiny` also accepts a zero of the right sign where the reference is subnormal (a
    flush-to-zero result)."""
    got = np.asarray(got)
    assert got.dtype == NP[dt], f"{what}: result dtype {got.dtype}, expected {NP[dt]}"
    refs = refs if isinstance(refs, (list, tuple)) else [refs]
    refs = [np.asarray(r, dtype=NP[dt]).reshape(got.shape) for r in refs]
    g64 = f64(got)
    ok = np.zeros(got.shape, dtype=bool)
    tol = np.broadcast_to(np.asarray(ulps, dtype=np.float64), got.shape)
    for ref in refs:
        r64 = f64(ref)
        nan_r, nan_g = np.isnan(r64), np.isnan(g64)
        close = ulp_distance(got, ref, dt) <= tol
        if zero_sign:
            close &= ~((r64 == 0) & (tol == 0) & (np.signbit(r64) != np.signbit(g64)))
        match = np.where(nan_r, nan_g, ~nan_g & close)
        if flush_tiny:
            tiny = (r64 != 0) & (np.abs(r64) < min_normal(dt)) & ~nan_r
            match |= tiny & (g64 == 0) & (np.signbit(g64) == np.signbit(r64))
        ok |= match
    if not ok.all():
        pytest.fail(_report(~ok, got, refs, dt, inputs or {}, what))


def check_interval(got, lo, hi, dt: str, *, ulps: int = 0, inputs: dict | None = None, what: str = "",
                   flush_tiny: bool = False) -> None:
    """Every element of `got` (dt) lies within [lo, hi] (float64 bounds, rounded to dt and
    widened by `ulps`); NaN exactly where lo is NaN. `flush_tiny` also accepts a zero where
    lo is below dt's smallest normal (a flush-to-zero result)."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    g64 = f64(got)
    g, a, b = _ordered(got, dt), _ordered(round_to(lo, dt), dt), _ordered(round_to(hi, dt), dt)
    ok = np.zeros(g64.shape, dtype=bool)
    for i, (p, q, r) in enumerate(zip(g, a, b)):
        if np.isnan(lo[i]) or np.isnan(g64[i]):
            ok[i] = bool(np.isnan(lo[i]) and np.isnan(g64[i]))
        else:
            ok[i] = min(q, r) - ulps <= p <= max(q, r) + ulps or (
                flush_tiny and g64[i] == 0 and abs(lo[i]) < min_normal(dt))
    if not ok.all():
        pytest.fail(_report(~ok, got, [round_to(lo, dt), round_to(hi, dt)], dt, inputs or {}, what))


def check_exact(got, ref, dt: str, *, inputs: dict | None = None, what: str = "") -> None:
    """Integer and boolean results: bit-exact."""
    got = np.asarray(got)
    ref = np.asarray(ref, dtype=NP[dt]).reshape(got.shape)
    assert got.dtype == NP[dt], f"{what}: result dtype {got.dtype}, expected {NP[dt]}"
    bad = got != ref
    if bad.any():
        pytest.fail(_report(bad, got, [ref], dt, inputs or {}, what))


# ----------------------------------------------------------------------------- conversions (Triton's .to)

def convert(values: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Triton's .to() of in-range values: integers wrap/extend by the source's signedness,
    integer -> float rounds to nearest, float -> float rounds to nearest."""
    if src == dst:
        return values
    if dst == "bool":
        return f64(values) != 0 if is_float(src) else np.asarray(values).astype(bool)
    if is_float(dst):
        if is_float(src):
            return round_to(f64(values), dst)
        return round_rational(as_ints(values), dst)
    if is_float(src):
        return wrap([int(v) for v in np.trunc(f64(values))], dst)
    return wrap(as_ints(values), dst)



# ----------------------------------------------------------------------------- launching

@tilec.jit
def block_offsets(M: tl.constexpr, N: tl.constexpr):
    """This program's block of offsets: [M] when N == 0, else [M, N] (row-major)."""
    if N == 0:
        offs = tl.program_id(0) * M + tl.arange(0, M)
    else:
        offs = tl.program_id(0) * (M * N) + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    return offs




def poison_for(expected: np.ndarray, dt: str) -> np.ndarray:
    """An output buffer that differs from `expected` in every element."""
    expected = np.asarray(expected)
    if dt == "bool":
        return ~expected.astype(np.bool_)
    if is_int(dt):
        return ~expected.astype(NP[dt])
    wide = f64(expected)
    return round_to(np.where(np.isnan(wide), -1234.0, np.nan), dt)


def launch(kernel, backend: str, inputs: list[np.ndarray], expected_outputs: list[tuple[np.ndarray, str]],
           grid, **constexprs) -> list[np.ndarray]:
    """Runs kernel[grid](*inputs, *outputs, **constexprs) on the backend; outputs start
    poisoned against `expected_outputs` ((expected array, dtype) pairs, the expected values
    only picking the poison) and come back as NumPy arrays."""
    args = [device_array(np.ascontiguousarray(x), backend) for x in inputs]
    outs = [device_array(poison_for(exp, dt), backend) for exp, dt in expected_outputs]
    kernel[grid](*args, *outs, **constexprs)
    return [to_numpy(o) for o in outs]
