"""The interpreter's versions of NVIDIA's libdevice functions, in NumPy.

`tilec.language.extra.libdevice` declares each function (its name, argument types and
`__nv_*` symbols); a kernel's call becomes `extern_elementwise(symbol, ...)`, which the
compiler turns into a call of the symbol and `NumpyBuilder` into a call of
`NUMPY_IMPLEMENTATIONS[symbol]` (a missing entry fails, naming the symbol).
"""
from __future__ import annotations

import builtins as _py
import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Callable

import numpy as np

# NUMPY_IMPLEMENTATIONS (at the end) maps every libdevice symbol to a function of NumPy arrays (0-d
# for scalars). Integer arguments may come in either signedness (the bits are what counts);
# results have the symbol's own type, and the interpreter converts them to the tensor type.
#
# Accuracy: functions NumPy lacks in fp32 (or altogether) are computed in float64 and rounded
# once, so fp32 results are correctly rounded or within an ulp; fp64 results are within a few
# ulp, inside libdevice's documented bounds (lgamma uses 50-digit decimal arithmetic: Python's
# math.lgamma is off by up to ~100 ulp). The explicit rounding modes are exact: they round the
# exact rational result. The fast_* functions return the accurate values, except that
# fast_dividef flushes 1/y to 0 for |y| > 2**126 as the GPU does.
#
# Where libdevice's results are not the mathematical ones, the GPU's are reproduced (checked on
# an H200): powi squares and multiplies in the type (so pow(x, n) with a large n is not
# correctly rounded); rcp64h keeps the high 32 bits; jn and yn are NaN for negative orders;
# NaN converts to 0 from fp32 to 32-bit integers and to the top-bit pattern (INT_MIN,
# LLONG_MIN, 2**31, 2**63) otherwise. Known differences: jnf(n >= 2, x) is NaN on the GPU for
# x = 0 and tiny x (here 0), and the fast_* functions differ in their last bits and outside
# their documented ranges.

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_I32, _U32, _I64, _U64 = np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.int64), np.dtype(np.uint64)


def _bits(x, dt: np.dtype) -> np.ndarray:
    """The integer `x` as `dt`: the same bits when the widths match, else wrapped or extended."""
    x = np.asarray(x)
    return x.view(dt) if x.dtype.itemsize == dt.itemsize and x.dtype.kind in "iu" else x.astype(dt)


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _rounded(fn: Callable, dt: np.dtype) -> Callable:
    """`fn` of float64 arrays (integer arguments passed as they are), rounded once to `dt`."""
    def impl(*args):
        args = [np.asarray(a) for a in args]
        return np.asarray(fn(*[a.astype(np.float64) if a.dtype.kind == "f" else a for a in args])).astype(dt)
    return impl


def _scalar(fn: Callable, on_error: Callable = lambda *args: math.nan) -> Callable:
    """Apply the Python float function `fn` to every element of float64 arrays; Python's
    ValueError/OverflowError become `on_error(*args)` (libdevice never raises)."""
    def safe(*args):
        try:
            return fn(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            return on_error(*args)

    def impl(*arrays):
        arrays = np.broadcast_arrays(*[_f64(a) for a in arrays])
        if not arrays[0].size:
            return arrays[0].copy()
        return np.asarray(np.frompyfunc(safe, len(arrays), 1)(*arrays), dtype=np.float64)
    return impl


# ----------------------------------------------------------------------------- integer helpers


def _bit_length(u: np.ndarray) -> np.ndarray:
    """Bit lengths of unsigned 32- or 64-bit values, as int32."""
    u = np.asarray(u)
    if u.dtype.itemsize == 8:
        high, low = (u >> np.uint64(32)).astype(np.uint32), (u & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return np.where(high != 0, 32 + _bit_length(high), _bit_length(low)).astype(np.int32)
    return np.frexp(u.astype(np.float64))[1].astype(np.int32)  # exact below 2**53; frexp(0) = (0, 0)


def _clz(x, dt: np.dtype) -> np.ndarray:
    return (dt.itemsize * 8 - _bit_length(_bits(x, dt))).astype(np.int32)


def _popc(x, dt: np.dtype) -> np.ndarray:
    u = _bits(x, dt).astype(np.uint64)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(u).astype(np.int32)
    u = u - ((u >> np.uint64(1)) & np.uint64(0x5555555555555555))
    u = (u & np.uint64(0x3333333333333333)) + ((u >> np.uint64(2)) & np.uint64(0x3333333333333333))
    u = (u + (u >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((u * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int32)


def _ffs(x, dt: np.dtype) -> np.ndarray:
    u = _bits(x, dt)
    return _bit_length(u & (~u + dt.type(1)))


_REVERSED_BYTES = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def _brev(x, dt: np.dtype) -> np.ndarray:
    u = _bits(x, dt)
    as_bytes = np.ascontiguousarray(u.reshape(-1)).view(np.uint8).reshape(-1, dt.itemsize)
    return np.ascontiguousarray(_REVERSED_BYTES[as_bytes[:, ::-1]]).view(dt).reshape(u.shape)


def _byte_perm(x, y, s) -> np.ndarray:
    value = _bits(x, _U32).astype(np.uint64) | (_bits(y, _U32).astype(np.uint64) << np.uint64(32))
    selector = _bits(s, _U32).astype(np.uint64)
    result = np.zeros(value.shape, np.uint64)
    for n in range(4):
        byte = (selector >> np.uint64(4 * n)) & np.uint64(7)
        result |= ((value >> (byte * np.uint64(8))) & np.uint64(0xFF)) << np.uint64(8 * n)
    return result.astype(np.uint32)


def _mulhi32(x, y, signed: bool) -> np.ndarray:
    if signed:
        return ((_bits(x, _I32).astype(np.int64) * _bits(y, _I32).astype(np.int64)) >> 32).astype(np.int32)
    return ((_bits(x, _U32).astype(np.uint64) * _bits(y, _U32).astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)


def _mulhi64(x, y, signed: bool) -> np.ndarray:
    """The high 64 bits of the 128-bit product, from 32-bit limbs."""
    a, b = _bits(x, _U64), _bits(y, _U64)
    mask, shift = np.uint64(0xFFFFFFFF), np.uint64(32)
    a0, a1, b0, b1 = a & mask, a >> shift, b & mask, b >> shift
    middle = ((a0 * b0) >> shift) + ((a1 * b0) & mask) + a0 * b1  # < 2**64
    high = a1 * b1 + ((a1 * b0) >> shift) + (middle >> shift)
    if not signed:
        return high
    zero = np.uint64(0)  # two's complement: subtract b if a < 0 and a if b < 0 (mod 2**64)
    high = high - np.where(_bits(x, _I64) < 0, b, zero) - np.where(_bits(y, _I64) < 0, a, zero)
    return high.view(np.int64)


def _low24(x, signed: bool) -> np.ndarray:
    low = _bits(x, _U32).astype(np.int64) & 0xFFFFFF
    return np.where(low >= 1 << 23, low - (1 << 24), low) if signed else low


def _mul24(x, y, signed: bool) -> np.ndarray:
    product = _low24(x, signed) * _low24(y, signed)  # < 2**48: exact; keep the low 32 bits
    return product.astype(np.int32) if signed else product.astype(np.uint32)


def _halving_add(x, y, up: bool, signed: bool) -> np.ndarray:
    dt = _I32 if signed else _U32
    total = _bits(x, dt).astype(np.int64) + _bits(y, dt).astype(np.int64) + int(up)
    return (total >> 1).astype(dt)  # an arithmetic shift: rounds down


def _sad(x, y, z, signed: bool) -> np.ndarray:
    dt = _I32 if signed else _U32
    diff = np.abs(_bits(x, dt).astype(np.int64) - _bits(y, dt).astype(np.int64))
    return (diff + _bits(z, _U32).astype(np.int64)).astype(dt)  # wraps modulo 2**32


def _int_minmax(fn: Callable, dt: np.dtype) -> Callable:
    return lambda x, y: fn(_bits(x, dt), _bits(y, dt))


# ----------------------------------------------------------------------------- float helpers


def _round_half_away(x: np.ndarray) -> np.ndarray:
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)  # x - whole is exact


def _to_int(x, dt: np.dtype, rounding: Callable) -> np.ndarray:
    """x rounded to an integer by `rounding`, then converted to the integer type `dt` the way
    the GPU's cvt does: out-of-range values saturate; NaN becomes 0 from fp32 to 32 bits, and
    the pattern with only the top bit set otherwise (INT_MIN, LLONG_MIN, 2**31, 2**63)."""
    x = np.asarray(x)
    r = rounding(_f64(x))
    info = np.iinfo(dt)
    low, high = float(info.min), float(info.max) + 1.0  # both powers of two: exact
    nan, below, above = np.isnan(r), r < low, r >= high
    inside = np.where(nan | below | above, 0.0, r).astype(dt)
    nan_value = 0 if x.dtype == _F32 and dt.itemsize == 4 else 1 << (dt.itemsize * 8 - 1)
    nan_value = np.array(nan_value, dtype=np.uint64).astype(dt)  # the top bit, in either signedness
    return np.where(nan, nan_value, np.where(below, dt.type(info.min), np.where(above, dt.type(info.max), inside)))


_INT_ROUNDING = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def _fdim(x, y):
    return np.where(np.isnan(x) | np.isnan(y), x + y, np.where(x > y, x - y, 0.0)).astype(np.asarray(x).dtype)


def _ilogb(x) -> np.ndarray:
    exponent = np.frexp(np.asarray(x))[1].astype(np.int64) - 1
    int_min, int_max = -(1 << 31), (1 << 31) - 1
    return np.where((x == 0) | np.isnan(x), int_min, np.where(np.isinf(x), int_max, exponent)).astype(np.int32)


def _logb(x) -> np.ndarray:
    x = np.asarray(x)
    exponent = (np.frexp(x)[1] - 1).astype(x.dtype)
    return np.where(x == 0, -np.inf, np.where(np.isfinite(x), exponent, np.abs(x))).astype(x.dtype)


def _saturate(x) -> np.ndarray:
    return np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 1.0)).astype(np.asarray(x).dtype)


def _split_product_error(a: np.ndarray, b: np.ndarray, product: np.ndarray) -> np.ndarray:
    """a * b - product exactly (Dekker's product with Veltkamp splits; |a|, |b| < 2**995)."""
    def split(v):
        t = 134217729.0 * v  # 2**27 + 1
        high = t - (t - v)
        return high, v - high
    a_hi, a_lo = split(a)
    b_hi, b_lo = split(b)
    return ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


_remainder = _scalar(math.remainder)  # exact; NaN for y = 0 or infinite x


def _sinpi(x: np.ndarray) -> np.ndarray:
    """sin(pi x) for float64 x, reduced exactly to sin(pi a) with a in [0, 1/2]."""
    a = np.abs(np.fmod(x, 2.0))  # exact, in [0, 2)
    negate = a >= 1.0
    a = np.where(negate, a - 1.0, a)  # sin(pi (a + 1)) = -sin(pi a); exact
    a = np.where(a > 0.5, 1.0 - a, a)  # sin(pi (1 - a)) = sin(pi a); exact
    value = np.sin(np.pi * a) * np.where(negate, -1.0, 1.0) * np.sign(x)
    return np.where(value == 0, np.copysign(0.0, x), value)  # sinpi(n) = +-0, the sign of n


def _cospi(x: np.ndarray) -> np.ndarray:
    a = np.abs(np.fmod(x, 2.0))
    a = np.where(a > 1.0, 2.0 - a, a)  # cos(pi (2 - a)) = cos(pi a); now a in [0, 1]
    near_half = (a > 0.25) & (a < 0.75)
    return np.where(a <= 0.25, np.cos(np.pi * a),
                    np.where(near_half, np.sin(np.pi * (0.5 - a)), -np.cos(np.pi * (1.0 - a))))


def _norm(*xs) -> np.ndarray:
    """sqrt(sum of squares), scaled by a power of two so that nothing overflows."""
    xs = [np.abs(_f64(x)) for x in xs]
    largest = xs[0]
    for x in xs[1:]:
        largest = np.maximum(largest, x)
    exponent = np.frexp(np.where(np.isfinite(largest) & (largest > 0), largest, 1.0))[1]
    total = sum(np.ldexp(x, -exponent) ** 2 for x in xs)
    value = np.ldexp(np.sqrt(total), exponent)
    any_inf = np.logical_or.reduce([np.isinf(x) for x in xs])
    return np.where(any_inf, np.inf, np.where(largest == 0, 0.0, value))


def _pow(x, y) -> np.ndarray:
    return np.power(_f64(x), _f64(y))


def _powi(dt: np.dtype) -> Callable:
    """x ** n as libdevice computes it: square-and-multiply in the type, rounding each
    product, then 1 / r for negative n (not correctly rounded for large |n|)."""
    def impl(x, n):
        base = np.asarray(x).astype(dt)
        n = _bits(n, _I32).astype(np.int64)
        exponent, result = np.abs(n), np.ones(base.shape, dt)
        while True:
            result = np.where(exponent & 1, result * base, result)
            exponent = exponent >> 1
            if not exponent.any():
                break
            base = base * base
        return np.where(n < 0, dt.type(1) / result, result)
    return impl


def _high_word(x: np.ndarray) -> np.ndarray:
    return (_f64(x).view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)


def _rcp64h(x) -> np.ndarray:
    """1 / x from the high 32 bits of x, the low 32 bits of the result cleared (as the GPU's
    rcp.approx.ftz.f64 gives it; its last bits may differ)."""
    return _high_word(1.0 / _high_word(x))


def _fast_divide(x, y) -> np.ndarray:
    """x / y as x * (1 / y), with 1 / y flushed to 0 for |y| > 2**126 (so inf / huge is NaN)."""
    x, y = _f64(x), _f64(y)
    return np.where(np.abs(y) > 2.0 ** 126, x * 0.0, x / y)


def _fast_pow(x, y) -> np.ndarray:
    return np.exp2(_f64(y) * np.log2(_f64(x)))  # as the hardware's ex2/lg2: NaN for x < 0


# ----------------------------------------------------------------------------- error functions

_erf = _scalar(math.erf)
_erfc = _scalar(math.erfc)
_TWO_OVER_SQRT_PI = 1.1283791670955126
_SQRT_PI = 1.7724538509055159
_SQRT2 = 1.4142135623730951
_SQRT1_2_HI, _SQRT1_2_LO = 0.7071067811865476, -4.833646656726457e-17  # hi + lo = 1/sqrt(2)


def _erfcx(x) -> np.ndarray:
    """exp(x * x) * erfc(x): directly (with x * x kept exact) below 10, asymptotically above."""
    x = _f64(x)
    direct_x = np.where(x < 10.0, x, 0.0)
    square = direct_x * direct_x
    square_error = _split_product_error(direct_x, direct_x, square)
    direct = np.exp(square) * (1.0 + square_error) * _erfc(direct_x)
    large = np.where(x >= 10.0, x, 10.0)
    t = -0.5 / (large * large)
    series, term = np.ones_like(large), np.ones_like(large)
    for k in range(1, 25):  # sum of (-1)**k (2k - 1)!! / (2 x**2)**k
        term = term * (2 * k - 1) * t
        series = series + term
    value = np.where(x < 10.0, direct, np.where(np.isnan(x), x, series / (large * _SQRT_PI)))
    return np.where(x < -26.7, np.inf, value)  # exp(x * x) overflows


def _erfinv_central(a: np.ndarray) -> np.ndarray:
    """erfinv(a) for a in [0, 1/2]: Newton's method on erf from the first terms of the series."""
    c = np.pi * a * a
    x = 0.5 * _SQRT_PI * a * (1.0 + c / 12.0 + 7.0 * c * c / 480.0 + 127.0 * c ** 3 / 40320.0)
    for _ in range(4):
        x = x - (_erf(x) - a) / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
    return x


def _erfcinv_tail(q: np.ndarray) -> np.ndarray:
    """erfcinv(q) for q in (0, 1/2]: Newton's method on log(erfc) = log(erfcx) - x * x (accurate
    down to the smallest subnormal q), from Winitzki's approximation."""
    log_one_minus_y2 = np.log(q) + np.log(2.0 - q)  # log(1 - y**2) for y = 1 - q
    t = 2.0 / (np.pi * 0.147) + 0.5 * log_one_minus_y2
    x = np.sqrt(np.sqrt(t * t - log_one_minus_y2 / 0.147) - t)
    log_q = np.log(q)
    for _ in range(6):
        scaled = _erfcx(x)
        x = x + (np.log(scaled) - x * x - log_q) * (0.5 * _SQRT_PI) * scaled
    return x


def _erfcinv_positive(q: np.ndarray) -> np.ndarray:
    """erfcinv(q) >= 0 for q in (0, 1]."""
    central = q >= 0.5
    return np.where(central, _erfinv_central(np.where(central, 1.0 - q, 0.0)),  # 1 - q is exact
                    _erfcinv_tail(np.where(central, 0.5, q)))


def _erfinv(y) -> np.ndarray:
    y = _f64(y)
    a = np.abs(y)
    inside = a < 1.0
    central = a <= 0.5
    x = np.where(central, _erfinv_central(np.where(central, a, 0.0)),
                 _erfcinv_positive(np.where(central | ~inside, 0.5, 1.0 - a)))
    return np.where(inside, np.copysign(x, y), np.where(a == 1.0, np.copysign(np.inf, y), np.nan))


def _erfcinv(q) -> np.ndarray:
    q = _f64(q)
    upper = q > 1.0
    r = np.where(upper, 2.0 - q, q)  # erfcinv(2 - r) = -erfcinv(r); exact
    inside = (r > 0.0) & (q < 2.0) & (q > 0.0)
    x = _erfcinv_positive(np.where(inside, r, 1.0))
    x = np.where(upper, -x, x)
    return np.where(inside, x, np.where(q == 0.0, np.inf, np.where(q == 2.0, -np.inf, np.nan)))


def _normcdf(x) -> np.ndarray:
    """erfc(-x / sqrt(2)) / 2, with the rounding error of -x / sqrt(2) corrected for."""
    x = _f64(x)
    moderate = np.abs(x) < 1e300
    xm = np.where(moderate, x, 0.0)
    t = -xm * _SQRT1_2_HI
    error = _split_product_error(-xm, np.full_like(xm, _SQRT1_2_HI), t) - xm * _SQRT1_2_LO
    value = 0.5 * (_erfc(t) - error * _TWO_OVER_SQRT_PI * np.exp(-t * t))
    return np.where(moderate, value, 0.5 * _erfc(-x * _SQRT1_2_HI))


def _normcdfinv(p) -> np.ndarray:
    return -_SQRT2 * _erfcinv(2.0 * _f64(p)) + 0.0


def _lgamma_error(x):
    return math.inf


def _tgamma_error(x):
    if x == 0:
        return math.copysign(math.inf, x)
    return math.inf if x > 0 else math.nan


_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
              Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798),
              Fraction(-174611, 330)]  # B_2, B_4, ..., B_20
_PI_DIGITS = "3.141592653589793238462643383279502884197169399375105820974944592"


def _lgamma_accurate(x: float) -> float:
    """log |Gamma(x)| for x > 0 with an absolute error below 1e-35 (Python's math.lgamma is
    off by up to ~100 ulp): Stirling's series, after moving x past 60 with
    Gamma(z + 1) = z Gamma(z); for x < 0 the reflection formula, with log(pi / |sin(pi x)|)
    in float64."""
    if not math.isfinite(x) or (x <= 0 and x == math.floor(x)):
        return math.inf if not math.isnan(x) else x
    if x == 1.0 or x == 2.0:
        return 0.0
    if x < 0:
        return math.log(math.pi / math.fabs(float(_sinpi(np.float64(x))))) - _lgamma_accurate(1.0 - x)
    with localcontext() as ctx:
        ctx.prec = 50
        z, product = Decimal(x), Decimal(1)
        while z < 60:
            product *= z
            z += 1
        series = sum(Decimal(b.numerator) / (b.denominator * (2 * k + 2) * (2 * k + 1) * z ** (2 * k + 1))
                     for k, b in enumerate(_BERNOULLI))
        half_log_2pi = (2 * Decimal(_PI_DIGITS)).ln() / 2
        return float((z - Decimal("0.5")) * z.ln() - z + half_log_2pi + series - product.ln())


_lgamma = _scalar(math.lgamma, _lgamma_error)  # fp32: float64 is accurate enough
_lgamma64 = _scalar(_lgamma_accurate)
_tgamma = _scalar(math.gamma, _tgamma_error)


# ----------------------------------------------------------------------------- Bessel functions
#
# J_n by its power series where that is accurate ((x/2)**2 < n + 1, or |x| < 4), else by the
# Jacobi-Anger expansion (the FFT of exp(-i x sin t) holds J_0(x), J_1(x), ... at once) below
# max(30, n**2), else by Hankel's asymptotic expansion. Y_0 and Y_1 come from Neumann's series
# in the J_k (no cancellation) below 30 and from Hankel's expansion above; Y_n by the forward
# recurrence (stable for Y). I_0 and I_1: the power series (positive terms) up to 20, the
# asymptotic expansion above.

_EULER_GAMMA = 0.5772156649015329
_ASYMPTOTIC_FROM = 30.0


def _bessel_j_series(n: np.ndarray, x: np.ndarray, terms: int = 60) -> np.ndarray:
    half = 0.5 * x
    n = n.astype(np.int64)
    log_first = n * np.log(np.where(half == 0, 1.0, np.abs(half))) - _scalar(math.lgamma)(n + 1.0)
    first = np.where(n <= 30, np.power(half, n.astype(np.float64)) / _scalar(math.gamma)(n + 1.0),
                     np.exp(log_first) * np.where((half < 0) & (n % 2 == 1), -1.0, 1.0))
    first = np.where((half == 0) & (n > 0), 0.0, first)
    total, term, minus_h2 = first, first, -half * half
    for k in range(1, terms):
        term = term * minus_h2 / (k * (k + n))
        total = total + term
    return total


def _bessel_j_table(x: np.ndarray, orders: int) -> np.ndarray:
    """J_k(x) for k < orders, shape (orders,) + x.shape, by the FFT (absolute error ~1e-16)."""
    flat = np.abs(x.reshape(-1))
    size = 64
    while size < orders + 1.1 * (flat.max(initial=0.0)) + 64:
        size *= 2
    angles = np.sin(2.0 * np.pi * np.arange(size) / size)
    table = np.empty((orders, flat.size))
    chunk = _py.max(1, (1 << 21) // size)
    for start in range(0, flat.size, chunk):
        phases = np.exp(-1j * np.outer(flat[start:start + chunk], angles))
        table[:, start:start + chunk] = np.fft.ifft(phases, axis=1).real[:, :orders].T
    return table.reshape((orders,) + x.shape)


def _hankel(n: np.ndarray, x: np.ndarray, terms: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """(J_n(x), Y_n(x)) by Hankel's asymptotic expansion (x large against n**2)."""
    mu = 4.0 * n.astype(np.float64) ** 2
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 2 * terms):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if k % 2:
            q = q + (term if k % 4 == 1 else -term)
        else:
            p = p + (term if k % 4 == 0 else -term)
    # chi = x - (2n + 1) pi / 4: cos and sin by angle addition (exact multiples of pi/4)
    octant = (2 * n.astype(np.int64) + 1) % 8
    cos_theta = np.where((octant == 1) | (octant == 7), 1.0, -1.0) * math.sqrt(0.5)
    sin_theta = np.where((octant == 1) | (octant == 3), 1.0, -1.0) * math.sqrt(0.5)
    cos_x, sin_x = np.cos(x), np.sin(x)
    cos_chi = cos_x * cos_theta + sin_x * sin_theta
    sin_chi = sin_x * cos_theta - cos_x * sin_theta
    scale = np.sqrt(2.0 / (np.pi * x))
    return scale * (p * cos_chi - q * sin_chi), scale * (p * sin_chi + q * cos_chi)


_MAX_TABLE = 1 << 16  # orders (and x) beyond this take Hankel's expansion: bounded work, rough values
_MAX_RECURRENCE = 10000


def _jn_positive(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """J_n(x) for n >= 0 and finite x >= 0."""
    n = np.broadcast_to(n, x.shape).astype(np.int64)
    order = n.astype(np.float64)
    negligible = order > np.maximum(np.e * x, 1100.0)  # J_n(x) < 2**-1100: 0 in fp64
    use_series = ~negligible & ((0.25 * x * x < n + 1) | (x < 4.0))
    use_hankel = ~negligible & ~use_series & ((x >= np.maximum(_ASYMPTOTIC_FROM, order ** 2))
                                              | (order + 1.1 * x > _MAX_TABLE))  # too big for the FFT
    use_fft = ~negligible & ~use_series & ~use_hankel
    result = np.zeros(x.shape)
    if use_series.any():
        result[use_series] = _bessel_j_series(n[use_series], x[use_series],
                                              terms=int(40 + 2 * x[use_series].max()))
    if use_hankel.any():
        result[use_hankel] = _hankel(n[use_hankel], x[use_hankel])[0]
    if use_fft.any():
        xs, ns = x[use_fft], n[use_fft]
        table = _bessel_j_table(xs, int(ns.max()) + 1)
        result[use_fft] = np.take_along_axis(table, ns[None, :], axis=0)[0]
    return result


def _y01(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Y_0(x), Y_1(x)) for finite x > 0."""
    y0, y1 = np.empty(x.shape), np.empty(x.shape)
    large = x >= _ASYMPTOTIC_FROM
    if large.any():
        y0[large] = _hankel(np.zeros(1, np.int64), x[large])[1]
        y1[large] = _hankel(np.ones(1, np.int64), x[large])[1]
    small = ~large
    if small.any():
        xs = x[small]
        orders = int(xs.max() + 48) | 1
        table = _bessel_j_table(xs, orders + 1)
        j0, j1 = table[0], table[1]
        log_term = np.log(0.5 * xs) + _EULER_GAMMA
        k = np.arange(1, (orders + 1) // 2)[:, None]
        sign = np.where(k % 2 == 0, 1.0, -1.0)
        sum0 = np.sum(sign * table[2 * k[:, 0]] / k, axis=0)
        sum1 = np.sum(sign * (2 * k + 1) * table[2 * k[:, 0] + 1] / (k * (k + 1)), axis=0)
        y0[small] = (2.0 / np.pi) * (log_term * j0 - 2.0 * sum0)
        y1[small] = -2.0 * j0 / (np.pi * xs) + (2.0 / np.pi) * ((log_term - 1.0) * j1 - sum1)
    return y0, y1


def _jn(n, x) -> np.ndarray:
    x = _f64(x)
    n = np.broadcast_to(_bits(n, _I32), x.shape).astype(np.int64)
    finite = np.isfinite(x)
    ax = np.where(finite, np.abs(x), 0.0)
    value = _jn_positive(np.abs(n), ax)
    odd = (n % 2 == 1)
    value = np.where(odd & (x < 0), -value, value)  # J_n(-x) = (-1)**n J_n(x)
    value = np.where(np.isnan(x), x, np.where(finite, value, 0.0))
    return np.where(n < 0, np.nan, value)  # as libdevice: NaN for negative orders


def _yn(n, x) -> np.ndarray:
    x = _f64(x)
    n = np.broadcast_to(_bits(n, _I32), x.shape).astype(np.int64)
    positive = np.isfinite(x) & (x > 0)
    xs = np.where(positive, x, 1.0)
    order = np.abs(n)
    previous, current = _y01(xs)
    value = np.where(order == 0, previous, current)
    for k in range(1, int(np.where(order <= _MAX_RECURRENCE, order, 1).max(initial=1))):
        following = (2.0 * k / xs) * current - previous  # Y_{k+1} = 2k/x Y_k - Y_{k-1}
        previous, current = current, np.where(np.isinf(current), current, following)  # -inf stays
        value = np.where(order == k + 1, current, value)
    far = order > _MAX_RECURRENCE  # beyond the recurrence: overflow, or Hankel's expansion (rough)
    if far.any():
        rough = _hankel(order, np.where(far, xs, 1.0))[1]
        value = np.where(far, np.where(xs < 0.669 * order, -np.inf, rough), value)
    special = np.where(x == 0, -np.inf, np.where(x == np.inf, 0.0, np.nan))
    return np.where(n < 0, np.nan, np.where(positive, value, special))  # NaN for negative orders


def _bessel_i(order: int, x) -> np.ndarray:
    x = _f64(x)
    ax = np.where(np.isfinite(x), np.abs(x), 0.0)
    small = ax <= 20.0  # beyond, the asymptotic expansion (40 terms) is converged
    half = 0.5 * np.where(small, ax, 0.0)
    term = half if order else np.ones_like(half)
    total = term
    for k in range(1, 60):
        term = term * half * half / (k * (k + order))
        total = total + term
    value = total
    if not small.all():
        # I_n(x) ~ exp(x) / sqrt(2 pi x) * sum of (-1)**k a_k(n) / x**k
        big = np.where(small, 40.0, ax)
        mu = 4.0 * order * order
        term, series = np.ones_like(big), np.ones_like(big)
        for k in range(1, 40):
            term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * big)
            series = series + term
        half_exponent = 0.5 * big  # exp(|x|) alone overflows before I_n(x) does
        large = np.exp(half_exponent) * (series / np.sqrt(2.0 * np.pi * big)) * np.exp(half_exponent)
        value = np.where(small, total, large)
    value = np.where(np.isinf(x), np.inf, value)
    return np.where(np.isnan(x), x, np.where((x < 0) & (order == 1), -value, value))  # I_1 is odd


# ----------------------------------------------------------------------------- explicit rounding modes

_FORMATS = {_F32: (24, -126, 127), _F64: (53, -1022, 1023)}  # precision, emin, emax


def _round_rational(q: Fraction, dt: np.dtype, mode: str) -> float:
    """The exact rational `q` rounded to the float type `dt` in `mode` (rn, rz, rd, ru)."""
    precision, emin, emax = _FORMATS[dt]
    negative = q < 0
    a = -q if negative else q
    exponent = a.numerator.bit_length() - a.denominator.bit_length()  # 2**e <= a < 2**(e + 2)
    if Fraction(2) ** exponent > a:
        exponent -= 1
    ulp = _py.max(exponent, emin) - (precision - 1)
    scaled = a / Fraction(2) ** ulp
    whole, rest = divmod(scaled.numerator, scaled.denominator)
    if rest:
        if mode == "rn":
            twice = 2 * rest
            up = twice > scaled.denominator or (twice == scaled.denominator and whole % 2 == 1)
        else:
            up = {"rz": False, "ru": not negative, "rd": negative}[mode]
        whole += up
    if ulp > emax or whole >= 1 << (emax + 1 - ulp):  # at least 2**(emax + 1): overflow
        to_inf = mode == "rn" or (mode == "ru" and not negative) or (mode == "rd" and negative)
        value = math.inf if to_inf else float(np.finfo(dt).max)
    else:
        value = math.ldexp(whole, ulp)
    return -value if negative else value


def _exact_elementwise(exact: Callable, rn: Callable, dt: np.dtype, mode: str, addends) -> Callable:
    """Rounds `exact(*Fractions)` per element; non-finite operands (and division by zero)
    take NumPy's round-to-nearest result `rn`, as do exact zeros, whose sign follows IEEE
    754: a zero sum of nonzero or opposite-signed addends is -0 when rounding down."""
    def impl(*args):
        args = [np.asarray(a).astype(dt) for a in np.broadcast_arrays(*args)]
        nearest = np.asarray(rn(*args)).astype(dt)
        out = nearest.copy()
        for index in np.ndindex(out.shape):
            values = [a[index] for a in args]
            if not all(np.isfinite(v) for v in values):
                continue
            try:
                q = exact(*[Fraction(float(v)) for v in values])
            except ZeroDivisionError:
                continue
            if q != 0:
                out[index] = _round_rational(q, dt, mode)
            elif addends is not None and mode == "rd" and not all(
                    v == 0 and not np.signbit(v) for v in addends(values)):
                out[index] = -0.0
        return out
    return impl


def _fmaf_rn(x, y, z) -> np.ndarray:
    """fp32 fma: the product is exact in float64; the sum is made exact by TwoSum and rounded
    to odd, which makes the final rounding to fp32 correct."""
    x, y, z = (_f64(a) for a in (x, y, z))
    product = x * y
    total = product + z
    virtual = total - product
    error = (product - (total - virtual)) + (z - virtual)  # exact: product + z = total + error
    ok = np.isfinite(total) & np.isfinite(error)
    error = np.where(ok, error, 0.0)
    even = (total.view(np.int64) & 1) == 0
    odd_total = np.where((error != 0) & even, np.nextafter(total, np.where(error > 0, np.inf, -np.inf)), total)
    return odd_total.astype(np.float32)


def _fma_nearest64(x, y, z):
    """The non-finite cases of fp64 fma: a finite product plus an infinite z is z."""
    x, y, z = _f64(x), _f64(y), _f64(z)
    return np.where(np.isfinite(x) & np.isfinite(y) & np.isinf(z), z, x * y + z)


_ADD = (lambda x, y: x + y, np.add, lambda v: v)
_SUB = (lambda x, y: x - y, np.subtract, lambda v: [v[0], -v[1]])
_FMA_ADDENDS = lambda v: [v[0] * v[1], v[2]]  # noqa: E731


def _rounded_arithmetic(op: str, dt: np.dtype, mode: str) -> Callable:
    """`op` (add sub mul div rcp sqrt fma) on `dt` values, rounded in `mode`."""
    if op == "sqrt":
        return _rounded_sqrt(dt, mode)
    fma_nearest = _fmaf_rn if dt == _F32 else _fma_nearest64
    exact, nearest, addends = {
        "add": _ADD, "sub": _SUB, "mul": (lambda x, y: x * y, np.multiply, None),
        "div": (lambda x, y: x / y, np.divide, None), "rcp": (lambda x: 1 / x, np.reciprocal, None),
        "fma": (lambda x, y, z: x * y + z, fma_nearest, _FMA_ADDENDS),
    }[op]
    if mode == "rn" and (op != "fma" or dt == _F32):  # IEEE in NumPy already (fp32 fma: see _fmaf_rn)
        return lambda *args: np.asarray(nearest(*[np.asarray(a).astype(dt) for a in args])).astype(dt)
    return _exact_elementwise(exact, nearest, dt, mode, addends)


def _rounded_sqrt(dt: np.dtype, mode: str) -> Callable:
    def impl(x):
        x = np.asarray(x).astype(dt)
        nearest = np.sqrt(x)
        if mode == "rn":
            return nearest
        sign = np.zeros(x.shape)
        for index in np.ndindex(x.shape):
            if np.isfinite(nearest[index]) and x[index] > 0:
                c = Fraction(float(nearest[index]))
                sign[index] = (Fraction(float(x[index])) > c * c) - (Fraction(float(x[index])) < c * c)
        return _directed(nearest, sign, mode)
    return impl


def _directed(nearest: np.ndarray, sign: np.ndarray, mode: str) -> np.ndarray:
    """Round-to-nearest results moved to the rounding of `mode`, given sign(exact - nearest)."""
    if mode == "rn":
        return nearest
    if mode == "ru":
        step, target = sign > 0, np.inf
    elif mode == "rd":
        step, target = sign < 0, -np.inf
    else:
        step, target = ((sign < 0) & (nearest > 0)) | ((sign > 0) & (nearest < 0)), 0.0
    return np.where(step, np.nextafter(nearest, np.asarray(target, nearest.dtype)), nearest)


def _double2float(mode: str) -> Callable:
    def impl(x):
        x = _f64(x)
        nearest = x.astype(np.float32)
        return _directed(nearest, np.sign(x - nearest.astype(np.float64)), mode)  # the difference is exact
    return impl


def _int2float(src: np.dtype, dst: np.dtype, mode: str) -> Callable:
    def impl(x):
        x = _bits(x, src)
        nearest = x.astype(dst)
        if mode == "rn":
            return nearest
        if src.itemsize == 4:  # exact differences in int64
            return _directed(nearest, np.sign(x.astype(np.int64) - nearest.astype(np.int64)), mode)
        out = nearest.copy()
        for index in np.ndindex(x.shape):
            out[index] = _round_rational(Fraction(int(x[index])), dst, mode)
        return out
    return impl


# ----------------------------------------------------------------------------- the table


def _pair(base: str, fn: Callable) -> dict[str, Callable]:
    """__nv_{base}f (fp32) and __nv_{base} (fp64), both `fn` in float64 rounded to the result."""
    return {f"__nv_{base}f": _rounded(fn, _F32), f"__nv_{base}": _rounded(fn, _F64)}


def _native(fn: Callable, dt: np.dtype) -> Callable:
    """`fn` on the float arguments converted to `dt` (for exact functions NumPy has in fp32)."""
    return lambda *args: np.asarray(fn(*[np.asarray(a).astype(dt) if np.asarray(a).dtype.kind == "f" else a
                                         for a in args])).astype(dt)


def _native_pair(base: str, fn: Callable) -> dict[str, Callable]:
    return {f"__nv_{base}f": _native(fn, _F32), f"__nv_{base}": _native(fn, _F64)}


def _is(test: Callable) -> Callable:
    return lambda x: test(np.asarray(x)).astype(np.int32)


def _reinterpret(src: np.dtype, dst: np.dtype) -> Callable:
    return lambda x: np.asarray(x).astype(src).view(dst).copy()


NUMPY_IMPLEMENTATIONS: dict[str, Callable] = {
    # integer functions
    "__nv_clz": lambda x: _clz(x, _U32), "__nv_clzll": lambda x: _clz(x, _U64),
    "__nv_popc": lambda x: _popc(x, _U32), "__nv_popcll": lambda x: _popc(x, _U64),
    "__nv_ffs": lambda x: _ffs(x, _U32), "__nv_ffsll": lambda x: _ffs(x, _U64),
    "__nv_brev": lambda x: _brev(x, _U32), "__nv_brevll": lambda x: _brev(x, _U64),
    "__nv_byte_perm": _byte_perm,
    "__nv_mulhi": lambda x, y: _mulhi32(x, y, signed=True), "__nv_umulhi": lambda x, y: _mulhi32(x, y, signed=False),
    "__nv_mul64hi": lambda x, y: _mulhi64(x, y, signed=True),
    "__nv_umul64hi": lambda x, y: _mulhi64(x, y, signed=False),
    "__nv_mul24": lambda x, y: _mul24(x, y, signed=True), "__nv_umul24": lambda x, y: _mul24(x, y, signed=False),
    "__nv_hadd": lambda x, y: _halving_add(x, y, up=False, signed=True),
    "__nv_rhadd": lambda x, y: _halving_add(x, y, up=True, signed=True),
    "__nv_uhadd": lambda x, y: _halving_add(x, y, up=False, signed=False),
    "__nv_urhadd": lambda x, y: _halving_add(x, y, up=True, signed=False),
    "__nv_sad": lambda x, y, z: _sad(x, y, z, signed=True), "__nv_usad": lambda x, y, z: _sad(x, y, z, signed=False),
    "__nv_abs": lambda x: np.abs(_bits(x, _I32)), "__nv_llabs": lambda x: np.abs(_bits(x, _I64)),  # MIN stays MIN
    "__nv_min": _int_minmax(np.minimum, _I32), "__nv_umin": _int_minmax(np.minimum, _U32),
    "__nv_llmin": _int_minmax(np.minimum, _I64), "__nv_ullmin": _int_minmax(np.minimum, _U64),
    "__nv_max": _int_minmax(np.maximum, _I32), "__nv_umax": _int_minmax(np.maximum, _U32),
    "__nv_llmax": _int_minmax(np.maximum, _I64), "__nv_ullmax": _int_minmax(np.maximum, _U64),
    # rounding, sign and decomposition (exact: computed in the argument's type)
    **_native_pair("fabs", np.abs), **_native_pair("floor", np.floor), **_native_pair("ceil", np.ceil),
    **_native_pair("trunc", np.trunc), **_native_pair("round", _round_half_away), **_native_pair("rint", np.rint),
    **_native_pair("nearbyint", np.rint), **_native_pair("copysign", np.copysign), **_native_pair("fmin", np.fmin),
    **_native_pair("fmax", np.fmax), **_native_pair("fdim", _fdim), **_native_pair("fmod", np.fmod),
    **_pair("remainder", _remainder), **_native_pair("nextafter", np.nextafter),
    **_native_pair("ldexp", lambda x, n: np.ldexp(x, _bits(n, _I32))),
    **_native_pair("scalbn", lambda x, n: np.ldexp(x, _bits(n, _I32))),
    **_native_pair("logb", _logb),
    "__nv_ilogbf": lambda x: _ilogb(np.asarray(x, np.float32)), "__nv_ilogb": lambda x: _ilogb(_f64(x)),
    "__nv_llrintf": lambda x: _to_int(x, _I64, np.rint), "__nv_llrint": lambda x: _to_int(x, _I64, np.rint),
    "__nv_llroundf": lambda x: _to_int(x, _I64, _round_half_away),
    "__nv_llround": lambda x: _to_int(x, _I64, _round_half_away),
    "__nv_saturatef": _native(_saturate, _F32),
    "__nv_fmaf": _fmaf_rn, "__nv_fma": _rounded_arithmetic("fma", _F64, "rn"),
    # classification
    "__nv_isnanf": _is(np.isnan), "__nv_isnand": _is(np.isnan),
    "__nv_isinff": _is(np.isinf), "__nv_isinfd": _is(np.isinf),
    "__nv_signbitf": _is(np.signbit), "__nv_signbitd": _is(np.signbit),
    "__nv_finitef": _is(np.isfinite), "__nv_isfinited": _is(np.isfinite),
    # powers, roots and exponentials
    **_pair("sqrt", np.sqrt), **_pair("rsqrt", lambda x: 1.0 / np.sqrt(x)),
    **_pair("cbrt", np.cbrt), **_pair("rcbrt", lambda x: 1.0 / np.cbrt(x)),
    **_pair("hypot", np.hypot), **_pair("rhypot", lambda x, y: 1.0 / np.hypot(x, y)),
    **_pair("norm3d", _norm), **_pair("rnorm3d", lambda *xs: 1.0 / _norm(*xs)),
    **_pair("norm4d", _norm), **_pair("rnorm4d", lambda *xs: 1.0 / _norm(*xs)),
    **_pair("pow", _pow), "__nv_powif": _powi(_F32), "__nv_powi": _powi(_F64),
    **_pair("exp", np.exp), **_pair("exp2", np.exp2), **_pair("exp10", lambda x: np.power(10.0, x)),
    **_pair("expm1", np.expm1), **_pair("log", np.log), **_pair("log2", np.log2), **_pair("log10", np.log10),
    **_pair("log1p", np.log1p),
    # trigonometric and hyperbolic functions
    **_pair("sin", np.sin), **_pair("cos", np.cos), **_pair("tan", np.tan),
    **_pair("sinpi", _sinpi), **_pair("cospi", _cospi),
    **_pair("asin", np.arcsin), **_pair("acos", np.arccos), **_pair("atan", np.arctan),
    **_pair("atan2", np.arctan2),
    **_pair("sinh", np.sinh), **_pair("cosh", np.cosh), **_pair("tanh", np.tanh),
    **_pair("asinh", np.arcsinh), **_pair("acosh", np.arccosh), **_pair("atanh", np.arctanh),
    # special functions
    **_pair("erf", _erf), **_pair("erfc", _erfc), **_pair("erfcx", _erfcx),
    **_pair("erfinv", _erfinv), **_pair("erfcinv", _erfcinv),
    **_pair("normcdf", _normcdf), **_pair("normcdfinv", _normcdfinv),
    "__nv_lgammaf": _rounded(_lgamma, _F32), "__nv_lgamma": _rounded(_lgamma64, _F64), **_pair("tgamma", _tgamma),
    **_pair("j0", lambda x: _jn(np.zeros(x.shape, np.int32), x)),
    **_pair("j1", lambda x: _jn(np.ones(x.shape, np.int32), x)), **_pair("jn", _jn),
    **_pair("y0", lambda x: _yn(np.zeros(x.shape, np.int32), x)),
    **_pair("y1", lambda x: _yn(np.ones(x.shape, np.int32), x)), **_pair("yn", _yn),
    **_pair("cyl_bessel_i0", lambda x: _bessel_i(0, x)), **_pair("cyl_bessel_i1", lambda x: _bessel_i(1, x)),
    # fast approximations: the accurate values
    "__nv_fast_sinf": _rounded(np.sin, _F32), "__nv_fast_cosf": _rounded(np.cos, _F32),
    "__nv_fast_tanf": _rounded(np.tan, _F32), "__nv_fast_tanhf": _rounded(np.tanh, _F32),
    "__nv_fast_expf": _rounded(np.exp, _F32), "__nv_fast_exp10f": _rounded(lambda x: np.power(10.0, x), _F32),
    "__nv_fast_logf": _rounded(np.log, _F32), "__nv_fast_log2f": _rounded(np.log2, _F32),
    "__nv_fast_log10f": _rounded(np.log10, _F32), "__nv_fast_powf": _rounded(_fast_pow, _F32),
    "__nv_fast_fdividef": _rounded(_fast_divide, _F32),
    # explicit rounding modes
    "__nv_frsqrt_rn": _rounded(lambda x: 1.0 / np.sqrt(x), _F32),
    "__nv_rcp64h": _rcp64h,
    # reinterpretation of bits
    "__nv_hiloint2double": lambda hi, lo: ((_bits(hi, _U32).astype(np.uint64) << np.uint64(32))
                                           | _bits(lo, _U32).astype(np.uint64)).view(np.float64),
    "__nv_double2hiint": lambda x: (_f64(x).view(np.uint64) >> np.uint64(32)).astype(np.uint32).view(np.int32),
    "__nv_double2loint": lambda x: _f64(x).view(np.uint64).astype(np.uint32).view(np.int32),
    "__nv_int_as_float": _reinterpret(_I32, _F32), "__nv_uint_as_float": _reinterpret(_U32, _F32),
    "__nv_float_as_int": _reinterpret(_F32, _I32), "__nv_float_as_uint": _reinterpret(_F32, _U32),
    "__nv_longlong_as_double": _reinterpret(_I64, _F64), "__nv_double_as_longlong": _reinterpret(_F64, _I64),
    "__nv_int2double_rn": lambda x: _bits(x, _I32).astype(np.float64),
    "__nv_uint2double_rn": lambda x: _bits(x, _U32).astype(np.float64),
}

for _mode in ("rn", "rz", "rd", "ru"):
    for _op, _f32_name, _f64_name in [("add", "fadd", "dadd"), ("sub", "fsub", "dsub"), ("mul", "fmul", "dmul"),
                                      ("div", "fdiv", "ddiv"), ("rcp", "frcp", "drcp"),
                                      ("sqrt", "fsqrt", "dsqrt"), ("fma", "fmaf", "fma")]:
        NUMPY_IMPLEMENTATIONS[f"__nv_{_f32_name}_{_mode}"] = _rounded_arithmetic(_op, _F32, _mode)
        NUMPY_IMPLEMENTATIONS[f"__nv_{_f64_name}_{_mode}"] = _rounded_arithmetic(_op, _F64, _mode)
    NUMPY_IMPLEMENTATIONS[f"__nv_double2float_{_mode}"] = _double2float(_mode)
    for _source in ("float", "double"):
        for _target, _dt in [("int", _I32), ("uint", _U32), ("ll", _I64), ("ull", _U64)]:
            NUMPY_IMPLEMENTATIONS[f"__nv_{_source}2{_target}_{_mode}"] = (
                lambda x, dt=_dt, rounding=_INT_ROUNDING[_mode]: _to_int(x, dt, rounding))
    for _source, _src in [("int", _I32), ("uint", _U32), ("ll", _I64), ("ull", _U64)]:
        NUMPY_IMPLEMENTATIONS[f"__nv_{_source}2float_{_mode}"] = _int2float(_src, _F32, _mode)
        if _src.itemsize == 8:
            NUMPY_IMPLEMENTATIONS[f"__nv_{_source}2double_{_mode}"] = _int2float(_src, _F64, _mode)

__all__ = ["NUMPY_IMPLEMENTATIONS"]
