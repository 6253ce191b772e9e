"""tl.extra.libdevice on both backends: every function, for every argument type it takes.

Each case (a function at one signature, e.g. `erfinv-f->f`) gets random inputs in the
function's domain (never zero) and is checked against a reference: exact results (integer
functions, rounding, conversions, explicit rounding modes: checked against exact rational
arithmetic) must match bit for bit; the others must be within a few ulp of a float64 (or
60-digit) reference, at the accuracy CUDA documents for libdevice (its "Mathematical
Functions" appendix) plus the reference's own error.

Compiling a kernel costs far more than running it, so the cases of one signature run
together, several functions per kernel (`_apply*` below); each batch runs once per backend
and test process, and each case checks its own row of the result. Where ptxas is present
the interpreter launches are also compiled (tests/conftest.py), which links and assembles
every libdevice symbol.
"""
from __future__ import annotations

import inspect
import math
import re
import subprocess
import zlib
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.interpreter import libdevice_numpy
from tilec.language.extra import libdevice
from tilec_testing import device_array, to_numpy

N = 256  # elements per case
BATCH = 16  # functions per kernel

# ----------------------------------------------------------------------------- kernels


@tilec.jit
def _apply1(a_ptr, out_ptr, N: tl.constexpr, NAMES: tl.constexpr):
    offs = tl.arange(0, N)
    for i in tl.static_range(len(NAMES)):
        fn = getattr(libdevice, NAMES[i])
        tl.store(out_ptr + i * N + offs, fn(tl.load(a_ptr + i * N + offs)))


@tilec.jit
def _apply2(a_ptr, b_ptr, out_ptr, N: tl.constexpr, NAMES: tl.constexpr):
    offs = tl.arange(0, N)
    for i in tl.static_range(len(NAMES)):
        fn = getattr(libdevice, NAMES[i])
        row = i * N + offs
        tl.store(out_ptr + row, fn(tl.load(a_ptr + row), tl.load(b_ptr + row)))


@tilec.jit
def _apply3(a_ptr, b_ptr, c_ptr, out_ptr, N: tl.constexpr, NAMES: tl.constexpr):
    offs = tl.arange(0, N)
    for i in tl.static_range(len(NAMES)):
        fn = getattr(libdevice, NAMES[i])
        row = i * N + offs
        tl.store(out_ptr + row, fn(tl.load(a_ptr + row), tl.load(b_ptr + row), tl.load(c_ptr + row)))


@tilec.jit
def _apply4(a_ptr, b_ptr, c_ptr, d_ptr, out_ptr, N: tl.constexpr, NAMES: tl.constexpr):
    offs = tl.arange(0, N)
    for i in tl.static_range(len(NAMES)):
        fn = getattr(libdevice, NAMES[i])
        row = i * N + offs
        tl.store(out_ptr + row, fn(tl.load(a_ptr + row), tl.load(b_ptr + row), tl.load(c_ptr + row),
                                   tl.load(d_ptr + row)))


_KERNELS = {1: _apply1, 2: _apply2, 3: _apply3, 4: _apply4}

# Signature letters, as in the case names: fp32, fp64, int32, uint32, int64, uint64.
_TYPES = {"f": np.float32, "d": np.float64, "i": np.int32, "u": np.uint32, "l": np.int64, "q": np.uint64}
_TL_TYPES = {"f": tl.float32, "d": tl.float64, "i": tl.int32, "u": tl.uint32, "l": tl.int64, "q": tl.uint64}

# ----------------------------------------------------------------------------- cases


class Case:
    def __init__(self, name: str, sig: str, inputs, check):
        self.name, self.sig = name, sig
        self.args, self.result = sig.split("->")
        self.inputs, self.check = inputs, check

    @property
    def id(self) -> str:
        return f"{self.name}-{self.sig}"


CASES: dict[str, Case] = {}


def case(name: str, sig: str, inputs, check) -> None:
    c = Case(name, sig, inputs, check)
    assert c.id not in CASES, c.id
    CASES[c.id] = c


# -- input generators: inputs(rng) -> one array per argument, each of N elements


def _nonzero(x: np.ndarray) -> np.ndarray:
    x[x == 0] = 1
    return x


def uniform(*ranges):
    """One argument per range: uniform in (lo, hi), never zero."""
    def make(rng, types):
        return [_nonzero(rng.uniform(lo, hi, N).astype(t)) for (lo, hi), t in zip(ranges, types)]
    return make


def log_uniform(lo_exp: float, hi_exp: float, signed: bool = False, count: int = 1):
    """10 ** uniform(lo_exp, hi_exp), with random signs if `signed`."""
    def make(rng, types):
        out = []
        for t in types[:count]:
            x = 10.0 ** rng.uniform(lo_exp, hi_exp, N)
            out.append((x * rng.choice([-1.0, 1.0], N) if signed else x).astype(t))
        return out
    return make


def spread(count: int, lo: int = -20, hi: int = 20, positive: bool = False):
    """Normal values scaled by 2 ** uniform(lo, hi): many binades, both signs."""
    def make(rng, types):
        out = []
        for t in types[:count]:
            x = rng.standard_normal(N) * 2.0 ** rng.uniform(lo, hi, N)
            out.append(_nonzero((np.abs(x) if positive else x).astype(t)))
        return out
    return make


def integers(count: int):
    """Uniform over each integer type's whole range, never zero."""
    def make(rng, types):
        out = []
        for t in types[:count]:
            info = np.iinfo(t)
            out.append(_nonzero(rng.integers(info.min, info.max, N, dtype=t, endpoint=True)))
        return out
    return make


def joined(*makers):
    """Argument lists of several generators, one after the other."""
    def make(rng, types):
        out, position = [], 0
        for maker in makers:
            part = maker(rng, types[position:])
            out += part
            position += len(part)
        return out
    return make


def with_specials(make, specials):
    """The inputs of `make`, the first argument's first elements replaced by `specials`."""
    def wrapped(rng, types):
        args = make(rng, types)
        args[0][:len(specials)] = specials
        return args
    return wrapped


# -- checks: check(args, got), args and got as NumPy arrays of the argument/result types


def _report(mask, args, got, ref=None) -> str:
    rows = np.flatnonzero(mask)[:5]
    lines = [f"{mask.sum()} of {mask.size} elements wrong, e.g."]
    for r in rows:
        inputs = ", ".join(repr(a[r].item()) for a in args)
        lines.append(f"  ({inputs}) -> {got[r].item()!r}" + ("" if ref is None else f", expected {ref[r]!r}"))
    return "\n".join(lines)


def close(reference, ulps32: float, ulps64: float, atol32: float = 0.0, atol64: float = 0.0):
    """|got - ref| <= ulps * eps * |ref| + atol, ref computed in float64 (or better)."""
    def check(args, got):
        ref = np.asarray(reference(*[np.asarray(a) for a in args]), dtype=np.float64)
        single = got.dtype == np.float32
        eps = float(np.finfo(got.dtype).eps)
        ulps, atol = (ulps32, atol32) if single else (ulps64, atol64)
        atol = max(atol, 1e-37 if single else 1e-300)
        value = got.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(value - ref)
            ok = (err <= ulps * eps * np.abs(ref) + atol) | (value == ref) | (np.isnan(ref) & np.isnan(value))
        assert ok.all(), _report(~ok, args, got, ref)
    return check


def exact(reference):
    """Bit-exact: the same values (NaN equal to NaN) and the same signs of zeros."""
    def check(args, got):
        ref = reference(*[np.asarray(a) for a in args])
        ref = np.array(ref, dtype=got.dtype) if isinstance(ref, list) else np.asarray(ref).astype(got.dtype)
        if got.dtype.kind == "f":
            same = (got == ref) & (np.signbit(got) == np.signbit(ref)) | (np.isnan(got) & np.isnan(ref))
        else:
            same = got == ref
        assert same.all(), _report(~same, args, got, ref)
    return check


def per_element(fn):
    """A reference computed element by element with Python numbers."""
    return lambda *args: [fn(*values) for values in zip(*[a.tolist() for a in args])]


def correctly_rounded(compare, mode: str):
    """The result is the exact value rounded in `mode` (rn: to nearest even; rz, rd, ru).

    compare(values, v) is the sign of v - exact for a Fraction v, exactly (so that roots
    need no irrational arithmetic)."""
    def check(args, got):
        wrong = np.zeros(got.shape, dtype=bool)
        up = np.nextafter(got, got.dtype.type(np.inf))
        down = np.nextafter(got, got.dtype.type(-np.inf))
        for i in range(got.size):
            values = [Fraction(a[i].item()) if a.dtype.kind == "f" else int(a[i]) for a in args]
            v = got[i]
            if not np.isfinite(v):
                wrong[i] = True
                continue
            sign = compare(values, Fraction(v.item()))
            if mode == "rn":
                low = compare(values, (Fraction(v.item()) + Fraction(down[i].item())) / 2)
                high = compare(values, (Fraction(v.item()) + Fraction(up[i].item())) / 2)
                even = int(v.view(np.uint64 if v.dtype == np.float64 else np.uint32)) % 2 == 0
                ok = low <= 0 <= high and (even or (low != 0 and high != 0))
            else:
                toward = {"rd": "rd", "ru": "ru", "rz": "rd" if compare(values, Fraction(0)) <= 0 else "ru"}[mode]
                if toward == "rd":
                    ok = sign <= 0 and compare(values, Fraction(up[i].item())) > 0
                else:
                    ok = sign >= 0 and compare(values, Fraction(down[i].item())) < 0
            wrong[i] = not ok
        assert not wrong.any(), _report(wrong, args, got)
    return check


def _sign(x) -> int:
    return (x > 0) - (x < 0)


def exact_value(fn):
    """compare() for a rational exact value fn(*values)."""
    return lambda values, v: _sign(v - fn(*values))


def sqrt_compare(values, v):
    return _sign(v) if v <= 0 else _sign(v * v - values[0])


def rsqrt_compare(values, v):
    return _sign(v * v * values[0] - 1) if v > 0 else -1


def _unsigned(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


def _wrap(value: int, bits: int, signed: bool) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def _round_half_even(q: Fraction) -> int:
    return round(q)  # Python rounds Fractions to the nearest integer, halfway cases to even


def _round_half_away(q: Fraction) -> int:
    return math.floor(q + Fraction(1, 2)) if q >= 0 else -math.floor(-q + Fraction(1, 2))


_TO_INTEGER = {"rn": _round_half_even, "rz": math.trunc, "rd": math.floor, "ru": math.ceil}


def _saturate(value: int, t) -> int:
    info = np.iinfo(t)
    return min(max(value, int(info.min)), int(info.max))


# ----------------------------------------------------------------------------- references

_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
_EULER_GAMMA = Decimal("0.57721566490153286060651209008240243104215933593992359880576723")


def bessel(kind: str, n: int, x: float) -> float:
    """J_n(x), Y_n(x) (x > 0) or I_n(x) from power series in 60-digit decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 60
        x = Decimal(x)
        h = x / 2
        tiny = Decimal(10) ** -45

        def series(order: int, sign: int) -> Decimal:
            term = abs(h) ** order / math.factorial(order)
            total, k = term, 0
            while abs(term) > tiny * abs(total) or k < 5:
                k += 1
                term = term * sign * h * h / (k * (k + order))
                total += term
            return total if h >= 0 or order % 2 == 0 else -total

        if kind == "i":
            return float(series(n, 1))
        if kind == "j":
            return float(series(n, -1))
        j0, j1, log = series(0, -1), series(1, -1), (x / 2).ln()
        total, term, harmonic, k = Decimal(0), Decimal(1), Decimal(0), 0
        while k < 5 or abs(term) * harmonic > tiny:
            k += 1
            term = -term * h * h / (k * k)
            harmonic += Decimal(1) / k
            total -= term * harmonic
        y0 = 2 / _PI * ((log + _EULER_GAMMA) * j0 + total)
        total, term, k, psi = Decimal(0), h, 0, -_EULER_GAMMA  # psi(k + 1)
        while k < 5 or abs(term) * (abs(psi) + 1) > tiny:
            total += term * (2 * psi + Decimal(1) / (k + 1))
            k += 1
            psi += Decimal(1) / k
            term = -term * h * h / (k * (k + 1))
        ys = [y0, -2 / (_PI * x) + 2 / _PI * log * j1 - total / _PI]
        for m in range(1, n):
            ys.append(2 * m / x * ys[m] - ys[m - 1])
        return float(ys[n])


_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
              Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798)]


def lgamma_reference(x: float) -> float:
    """log Gamma(x), x > 0, by Stirling's series past 60, in 50-digit decimal arithmetic
    (Python's math.lgamma is off by tens of ulp)."""
    with localcontext() as ctx:
        ctx.prec = 50
        z, product = Decimal(x), Decimal(1)
        while z < 60:
            product, z = product * z, z + 1
        series = sum(Decimal(b.numerator) / (b.denominator * (2 * k + 2) * (2 * k + 1) * z ** (2 * k + 1))
                     for k, b in enumerate(_BERNOULLI))
        return float((z - Decimal("0.5")) * z.ln() - z + (2 * _PI).ln() / 2 + series - product.ln())


def _exact_square(x: float) -> tuple[float, float]:
    high = x * x
    return high, float(Fraction(x) ** 2 - Fraction(high))


def erfcx_reference(x: float) -> float:
    high, low = _exact_square(x)  # exp(x*x) = exp(high) * (1 + low), erfc accurate in float64
    return math.exp(high) * (1.0 + low) * math.erfc(x)


def normcdf_reference(x: float) -> float:
    with localcontext() as ctx:
        ctx.prec = 40
        exact = -Decimal(x) / Decimal(2).sqrt()
    t = float(exact)
    delta = float(exact - Decimal(t))  # erfc(t + delta) = erfc(t) - delta * 2/sqrt(pi) * exp(-t*t)
    return 0.5 * (math.erfc(t) - delta * 2.0 / math.sqrt(math.pi) * math.exp(-t * t))


def _newton(f, derivative, x: float, target: float) -> float:
    for _ in range(60):
        step = (f(x) - target) / derivative(x)
        x -= step
        if abs(step) <= 1e-17 * abs(x):
            break
    return x


def erfinv_reference(y: float) -> float:
    return _newton(math.erf, lambda x: 2 / math.sqrt(math.pi) * math.exp(-x * x), 0.0, y)


def erfcinv_reference(q: float) -> float:
    if 0.5 <= q <= 1.5:
        return erfinv_reference(1.0 - q)  # exact; erf is accurate near 0, erfc is not
    if q > 1:
        return -erfcinv_reference(2.0 - q)  # exact for q in [1, 2]
    return _newton(math.erfc, lambda x: -2 / math.sqrt(math.pi) * math.exp(-x * x), 0.5, q)


def normcdfinv_reference(p: float) -> float:
    return -math.sqrt(2.0) * erfcinv_reference(2.0 * p)


def _reduce_pi(x: np.ndarray):
    n = np.rint(x)
    return n, x - n  # exact; r in [-1/2, 1/2]


def sinpi_reference(x):
    n, r = _reduce_pi(x.astype(np.float64))
    return np.where(n % 2 == 0, 1.0, -1.0) * np.sin(np.pi * r)


def cospi_reference(x):
    n, r = _reduce_pi(x.astype(np.float64))
    a = np.abs(r)
    value = np.where(a <= 0.25, np.cos(np.pi * a), np.sin(np.pi * (0.5 - a)))  # 0.5 - a exact
    return np.where(n % 2 == 0, 1.0, -1.0) * value


def _f64(fn):
    """A NumPy float64 function as a reference for both widths."""
    return lambda *args: fn(*[np.asarray(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else a
                              for a in args])


def _python(fn):
    return per_element(lambda *xs: fn(*[float(x) for x in xs]))


def _exact_norm(*xs) -> float:
    """sqrt of the exactly summed squares, rounded once (via a 60-digit square root)."""
    with localcontext() as ctx:
        ctx.prec = 60
        total = sum(Fraction(x) ** 2 for x in xs)
        return float(Decimal(total.numerator).sqrt() / Decimal(total.denominator).sqrt())


# ----------------------------------------------------------------------------- the float cases

# name: (inputs, reference, (ulps fp32, ulps fp64), (atol fp32, atol fp64)); the ulps are
# CUDA's documented maximum errors, plus one for the reference's own rounding in fp64.
FLOAT_FUNCTIONS = {
    # powers, roots and exponentials
    "sqrt": (log_uniform(-30, 30), _f64(np.sqrt), (1, 1)),
    "rsqrt": (log_uniform(-30, 30), _f64(lambda x: 1 / np.sqrt(x)), (2, 2)),
    "cbrt": (log_uniform(-30, 30, signed=True), _f64(np.cbrt), (1, 2)),
    "rcbrt": (log_uniform(-30, 30, signed=True), _f64(lambda x: 1 / np.cbrt(x)), (1, 2)),
    "hypot": (spread(2), _python(lambda x, y: _exact_norm(x, y)), (3, 2)),
    "rhypot": (spread(2), _python(lambda x, y: 1 / _exact_norm(x, y)), (2, 2)),
    "norm3d": (spread(3), _python(lambda *xs: _exact_norm(*xs)), (3, 2)),
    "rnorm3d": (spread(3), _python(lambda *xs: 1 / _exact_norm(*xs)), (2, 2)),
    "norm4d": (spread(4), _python(lambda *xs: _exact_norm(*xs)), (3, 2)),
    "rnorm4d": (spread(4), _python(lambda *xs: 1 / _exact_norm(*xs)), (2, 2)),
    "exp": (uniform((-80, 80)), _f64(np.exp), (2, 2)),
    "exp2": (uniform((-120, 120)), _f64(np.exp2), (2, 2)),
    "exp10": (uniform((-35, 35)), _f64(lambda x: np.power(10.0, x)), (2, 2)),
    "expm1": (uniform((-10, 10)), _f64(np.expm1), (1, 2)),
    "log": (log_uniform(-30, 30), _f64(np.log), (1, 2)),
    "log2": (log_uniform(-30, 30), _f64(np.log2), (1, 2)),
    "log10": (log_uniform(-30, 30), _f64(np.log10), (2, 2)),
    "log1p": (uniform((-0.9, 10)), _f64(np.log1p), (1, 2)),
    "pow": (uniform((0.01, 100), (-10, 10)), _f64(np.power), (4, 3)),
    # trigonometric and hyperbolic functions
    "sin": (uniform((-100, 100)), _f64(np.sin), (2, 3)),
    "cos": (uniform((-100, 100)), _f64(np.cos), (2, 3)),
    "tan": (uniform((-100, 100)), _f64(np.tan), (4, 3)),
    "sinpi": (uniform((-4, 4)), sinpi_reference, (1, 3)),
    "cospi": (uniform((-4, 4)), cospi_reference, (1, 3)),
    "asin": (uniform((-1, 1)), _f64(np.arcsin), (2, 3)),
    "acos": (uniform((-1, 1)), _f64(np.arccos), (2, 3)),
    "atan": (uniform((-100, 100)), _f64(np.arctan), (2, 3)),
    "atan2": (uniform((-10, 10), (-10, 10)), _f64(np.arctan2), (3, 3)),
    "sinh": (uniform((-50, 50)), _f64(np.sinh), (3, 3)),
    "cosh": (uniform((-50, 50)), _f64(np.cosh), (2, 2)),
    "tanh": (uniform((-10, 10)), _f64(np.tanh), (2, 2)),
    "asinh": (log_uniform(-5, 5, signed=True), _f64(np.arcsinh), (3, 4)),
    "acosh": (uniform((1, 1000)), _f64(np.arccosh), (4, 4)),
    "atanh": (uniform((-0.99, 0.99)), _f64(np.arctanh), (3, 3)),
    # special functions
    "erf": (uniform((-4, 4)), _python(math.erf), (2, 3)),
    "erfc": (uniform((-2, 9)), _python(math.erfc), (4, 6)),
    "erfcx": (uniform((-2, 25)), _python(erfcx_reference), (4, 5)),
    "erfinv": (uniform((-0.9, 0.9)), _python(erfinv_reference), (2, 6)),
    "erfcinv": (uniform((0.1, 1.9)), _python(erfcinv_reference), (4, 7)),
    "normcdf": (uniform((-8, 5)), _python(normcdf_reference), (5, 6)),
    "normcdfinv": (uniform((0.01, 0.99)), _python(normcdfinv_reference), (5, 9)),
    "lgamma": (uniform((0.05, 50)), _python(lgamma_reference), (6, 5), (1e-7, 1e-16)),
    "tgamma": (uniform((0.1, 30)), _python(math.gamma), (5, 11)),
    "j0": (uniform((0.1, 20)), _python(lambda x: bessel("j", 0, x)), (9, 8), (2.2e-6, 5e-12)),
    "j1": (uniform((0.1, 20)), _python(lambda x: bessel("j", 1, x)), (9, 8), (2.2e-6, 5e-12)),
    "y0": (uniform((0.1, 20)), _python(lambda x: bessel("y", 0, x)), (9, 8), (2.2e-6, 5e-12)),
    "y1": (uniform((0.1, 20)), _python(lambda x: bessel("y", 1, x)), (9, 8), (2.2e-6, 5e-12)),
    "cyl_bessel_i0": (uniform((-15, 15)), _python(lambda x: bessel("i", 0, x)), (6, 7)),
    "cyl_bessel_i1": (uniform((-15, 15)), _python(lambda x: bessel("i", 1, x)), (6, 7)),
}

for _name, (_inputs, _reference, _ulps, *_atol) in FLOAT_FUNCTIONS.items():
    _arity = len(inspect.signature(getattr(libdevice, _name)).parameters)
    _atol = _atol[0] if _atol else (0.0, 0.0)
    for _t in "fd":
        case(_name, _t * _arity + "->" + _t, _inputs, close(_reference, _ulps[0], _ulps[1], *_atol))

case("pow", "fi->f", joined(uniform((-10, 10)), lambda rng, types: [rng.integers(-10, 11, N).astype(np.int32)]),
     close(_f64(lambda x, n: np.power(x, n.astype(np.float64))), 8, 0))
case("pow", "di->d", joined(uniform((-10, 10)), lambda rng, types: [rng.integers(-10, 11, N).astype(np.int32)]),
     close(_f64(lambda x, n: np.power(x, n.astype(np.float64))), 0, 8))
for _name, _kind in (("jn", "j"), ("yn", "y")):
    for _t in "fd":
        case(_name, "i" + _t + "->" + _t,
             lambda rng, types: [rng.integers(0, 5, N).astype(np.int32), rng.uniform(0.5, 20, N).astype(types[1])],
             close(per_element(lambda n, x, k=_kind: bessel(k, n, x)), 9, 8, 1e-5, 5e-11))

# Fast approximations (fp32 only): the hardware's approximate instructions.
for _name, _inputs, _reference, _rtol, _atol in [
    ("fast_sinf", uniform((-3.14, 3.14)), np.sin, 1e-6, 1e-6),
    ("fast_cosf", uniform((-3.14, 3.14)), np.cos, 1e-6, 1e-6),
    ("fast_tanf", uniform((-1.4, 1.4)), np.tan, 1e-5, 1e-6),
    ("fast_tanhf", uniform((-5, 5)), np.tanh, 1e-3, 1e-6),
    ("fast_expf", uniform((-20, 20)), np.exp, 1e-5, 0),
    ("fast_exp10f", uniform((-10, 10)), lambda x: np.power(10.0, x), 1e-5, 0),
    ("fast_logf", log_uniform(-10, 10), np.log, 1e-6, 1e-6),
    ("fast_log2f", log_uniform(-10, 10), np.log2, 1e-6, 1e-6),
    ("fast_log10f", log_uniform(-10, 10), np.log10, 1e-6, 1e-6),
    ("fast_powf", uniform((0.1, 10), (-5, 5)), np.power, 1e-5, 0),
    ("fast_dividef", spread(2, -10, 10), np.divide, 2.5e-7, 0),
]:
    _arity = len(inspect.signature(getattr(libdevice, _name)).parameters)
    case(_name, "f" * _arity + "->f", _inputs, close(_f64(_reference), _rtol / 2 ** -23, 0, _atol))

case("rcp64h", "d->d", spread(1), close(_f64(lambda x: 1 / x), 0, 2 ** -19 / 2 ** -52))

# ----------------------------------------------------------------------------- exact float functions

_SPECIAL_FLOATS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.5, 2.5]
EXACT_FLOAT_FUNCTIONS = {
    "fabs": (spread(1), np.abs),
    "floor": (spread(1, -5, 30), np.floor),
    "ceil": (spread(1, -5, 30), np.ceil),
    "trunc": (spread(1, -5, 30), np.trunc),
    "round": (with_specials(spread(1, -5, 30), [0.5, -0.5, 1.5, -2.5, 0.49999997]),
              lambda x: np.where(np.abs(x - np.trunc(x)) >= 0.5, np.trunc(x) + np.sign(x), np.trunc(x))),
    "rint": (with_specials(spread(1, -5, 30), [0.5, -0.5, 1.5, -2.5]), np.rint),
    "nearbyint": (with_specials(spread(1, -5, 30), [0.5, -0.5, 1.5, -2.5]), np.rint),
    "copysign": (spread(2), np.copysign),
    "fmin": (spread(2), np.fmin),
    "fmax": (spread(2), np.fmax),
    "fdim": (spread(2), lambda x, y: np.where(x > y, x - y, 0).astype(x.dtype)),
    "fmod": (spread(2), np.fmod),
    "remainder": (spread(2), per_element(math.remainder)),
    "nextafter": (spread(2), np.nextafter),
    "logb": (spread(1, -100, 100), lambda x: (np.frexp(x)[1] - 1).astype(x.dtype)),
    "min": (spread(2), np.fmin),
    "max": (spread(2), np.fmax),
    "abs": (spread(1), np.abs),
}

for _name, (_inputs, _reference) in EXACT_FLOAT_FUNCTIONS.items():
    _arity = len(inspect.signature(getattr(libdevice, _name)).parameters)
    for _t in "fd":
        case(_name, _t * _arity + "->" + _t, _inputs, exact(_reference))

for _t in "fd":
    _exponents = lambda rng, types: [rng.integers(-40, 40, N).astype(np.int32)]  # noqa: E731
    for _name in ("ldexp", "scalbn"):
        case(_name, _t + "i->" + _t, joined(spread(1), _exponents), exact(lambda x, n: np.ldexp(x, n)))
    case("ilogb", _t + "->i", spread(1, -100, 100), exact(lambda x: np.frexp(x)[1] - 1))
    _halves = with_specials(uniform((-1e6, 1e6)), [0.5, -0.5, 1.5, -2.5, 3.5])
    case("llrint", _t + "->l", _halves, exact(per_element(lambda x: _round_half_even(Fraction(x)))))
    case("llround", _t + "->l", _halves, exact(per_element(lambda x: _round_half_away(Fraction(x)))))
    _classified = with_specials(spread(1), _SPECIAL_FLOATS)
    case("isnan", _t + "->i", _classified, exact(lambda x: np.isnan(x)))
    case("isinf", _t + "->i", _classified, exact(lambda x: np.isinf(x)))
    case("signbit", _t + "->i", _classified, exact(lambda x: np.signbit(x)))
    case("fma", _t * 3 + "->" + _t, spread(3, -10, 10),  # the exact value, rounded to nearest
         correctly_rounded(exact_value(lambda x, y, z: x * y + z), "rn"))
case("finitef", "f->i", with_specials(spread(1), _SPECIAL_FLOATS), exact(lambda x: np.isfinite(x)))
case("isfinited", "d->i", with_specials(spread(1), _SPECIAL_FLOATS), exact(lambda x: np.isfinite(x)))
case("saturatef", "f->f", uniform((-0.5, 1.5)), exact(lambda x: np.clip(x, 0, 1)))

# ----------------------------------------------------------------------------- integer functions


def _int_cases(name: str, sigs: list[str], reference, inputs=None) -> None:
    for sig in sigs:
        arity = len(sig.split("->")[0])
        case(name, sig, inputs or integers(arity), exact(per_element(reference(sig))))


def _bits_of(sig_letter: str) -> int:
    return np.dtype(_TYPES[sig_letter]).itemsize * 8


_int_cases("clz", ["i->i", "u->i", "l->i", "q->i"],
           lambda sig: lambda x, w=_bits_of(sig[0]): w - _unsigned(x, w).bit_length())
_int_cases("popc", ["i->i", "u->i", "l->i", "q->i"],
           lambda sig: lambda x, w=_bits_of(sig[0]): bin(_unsigned(x, w)).count("1"))
_int_cases("ffs", ["i->i", "u->i", "l->i", "q->i"],
           lambda sig: lambda x, w=_bits_of(sig[0]): (_unsigned(x, w) & -_unsigned(x, w)).bit_length())
_int_cases("brev", ["i->i", "u->u", "l->l", "q->q"],
           lambda sig: lambda x, w=_bits_of(sig[0]), s=sig[-1] in "il":
           _wrap(int(f"{_unsigned(x, w):0{w}b}"[::-1], 2), w, s))


def _byte_perm(x: int, y: int, s: int) -> int:
    value = _unsigned(x, 32) | _unsigned(y, 32) << 32
    return sum(((value >> 8 * ((s >> 4 * n) & 7)) & 0xFF) << 8 * n for n in range(4))


_int_cases("byte_perm", ["iii->i", "uuu->u"],
           lambda sig: lambda x, y, s: _wrap(_byte_perm(x, y, s), 32, sig[-1] == "i"))


def _high_half(sig: str, unsigned: bool):
    w = _bits_of(sig[0])
    if unsigned:
        return lambda x, y: _wrap((_unsigned(x, w) * _unsigned(y, w)) >> w, w, sig[-1] in "il")
    return lambda x, y: _wrap((x * y) >> w, w, sig[-1] in "il")


_int_cases("mulhi", ["ii->i", "ll->l"], lambda sig: _high_half(sig, unsigned=False))
_int_cases("mulhi", ["uu->u", "qq->q"], lambda sig: _high_half(sig, unsigned=True))
_int_cases("umulhi", ["uu->u", "ii->i"], lambda sig: _high_half(sig, unsigned=True))
_int_cases("mul64hi", ["ll->l"], lambda sig: _high_half(sig, unsigned=False))
_int_cases("mul64hi", ["qq->q"], lambda sig: _high_half(sig, unsigned=True))
_int_cases("umul64hi", ["qq->q", "ll->l"], lambda sig: _high_half(sig, unsigned=True))


def _low24(x: int, signed: bool) -> int:
    return _wrap(x, 24, signed)


_int_cases("mul24", ["ii->i", "uu->u"],
           lambda sig: lambda x, y, s=sig[0] == "i": _wrap(_low24(x, s) * _low24(y, s), 32, s))
_int_cases("umul24", ["uu->u", "ii->i"],
           lambda sig: lambda x, y, s=sig[-1] == "i": _wrap(_low24(x, False) * _low24(y, False), 32, s))
for _name, _up in (("hadd", 0), ("rhadd", 1)):
    _int_cases(_name, ["ii->i", "uu->u"], lambda sig, up=_up: lambda x, y: (x + y + up) >> 1)
_int_cases("uhadd", ["uu->u"], lambda sig: lambda x, y: (x + y) >> 1)
_int_cases("urhadd", ["uu->u"], lambda sig: lambda x, y: (x + y + 1) >> 1)
_int_cases("sad", ["iiu->i", "iii->i", "uuu->u"],
           lambda sig: lambda x, y, z, s=sig[-1] == "i": _wrap(abs(x - y) + z, 32, s))
_int_cases("usad", ["uuu->u"], lambda sig: lambda x, y, z: _wrap(abs(x - y) + z, 32, False))
_int_cases("abs", ["i->i", "l->l"], lambda sig: lambda x, w=_bits_of(sig[0]): _wrap(abs(x), w, True))
for _fn, _name in ((min, "min"), (max, "max")):
    _int_cases(_name, ["ii->i", "uu->u", "ll->l", "qq->q"], lambda sig, fn=_fn: fn)

# ----------------------------------------------------------------------------- explicit rounding modes

_ROUNDED = {  # name: (letters of the argument count, compare, inputs)
    "add": (2, exact_value(lambda x, y: x + y), spread(2)),
    "sub": (2, exact_value(lambda x, y: x - y), spread(2)),
    "mul": (2, exact_value(lambda x, y: x * y), spread(2)),
    "div": (2, exact_value(lambda x, y: x / y), spread(2)),
    "rcp": (1, exact_value(lambda x: 1 / x), spread(1)),
    "sqrt": (1, sqrt_compare, spread(1, positive=True)),
    "fma": (3, exact_value(lambda x, y, z: x * y + z), spread(3, -10, 10)),
}
for _op, (_arity, _compare, _inputs) in _ROUNDED.items():
    for _mode in ("rn", "rz", "rd", "ru"):
        for _t in "fd":
            case(f"{_op}_{_mode}", _t * _arity + "->" + _t, _inputs, correctly_rounded(_compare, _mode))
case("rsqrt_rn", "f->f", spread(1, positive=True), correctly_rounded(rsqrt_compare, "rn"))

# ----------------------------------------------------------------------------- conversions

_INT_NAMES = {"i": "int", "u": "uint", "l": "ll", "q": "ull"}
_FLOAT_NAMES = {"f": "float", "d": "double"}
_RANGES = {"i": 3e9, "u": 5e9, "l": 1.2e19, "q": 2.2e19}  # a little beyond each type: saturation

for _mode in ("rn", "rz", "rd", "ru"):
    case(f"double2float_{_mode}", "d->f", spread(1, -140, 120), correctly_rounded(exact_value(lambda x: x), _mode))
    for _f, _fname in _FLOAT_NAMES.items():
        for _i, _iname in _INT_NAMES.items():
            # float -> integer: rounded, saturated (negative values give 0 for unsigned types)
            _lo = -_RANGES[_i] if _i in "il" else -10.0
            _reference = per_element(lambda x, t=_TYPES[_i], r=_TO_INTEGER[_mode]: _saturate(r(Fraction(x)), t))
            case(f"{_fname}2{_iname}_{_mode}", f"{_f}->{_i}", uniform((_lo, _RANGES[_i])), exact(_reference))
            # integer -> float
            if _f == "d" and _i in "iu":  # exact: only _rn exists
                if _mode == "rn":
                    case(f"{_iname}2double_rn", f"{_i}->d", integers(1), exact(lambda x: x.astype(np.float64)))
            else:
                case(f"{_iname}2{_fname}_{_mode}", f"{_i}->{_f}", integers(1),
                     correctly_rounded(exact_value(lambda x: Fraction(x)), _mode))

case("hiloint2double", "ii->d", integers(2),
     exact(lambda hi, lo: ((hi.astype(np.int64) << 32) | (lo.astype(np.int64) & 0xFFFFFFFF)).view(np.float64)))
case("double2hiint", "d->i", spread(1), exact(lambda x: (x.view(np.int64) >> 32).astype(np.int32)))
case("double2loint", "d->i", spread(1), exact(lambda x: x.view(np.int64).astype(np.int32)))
for _name, _sig, _inputs, _to in [
    ("int_as_float", "i->f", integers(1), np.float32), ("uint_as_float", "u->f", integers(1), np.float32),
    ("float_as_int", "f->i", spread(1), np.int32), ("float_as_uint", "f->u", spread(1), np.uint32),
    ("longlong_as_double", "l->d", integers(1), np.float64), ("double_as_longlong", "d->l", spread(1), np.int64),
]:
    case(_name, _sig, _inputs, exact(lambda x, to=_to: x.view(to)))

# ----------------------------------------------------------------------------- running the cases


def _batches() -> dict[str, tuple[str, ...]]:
    """Case id -> the ids of the batch it runs in (cases of one signature, BATCH at most)."""
    by_sig: dict[str, list[str]] = {}
    for cid in sorted(CASES):
        by_sig.setdefault(CASES[cid].sig, []).append(cid)
    batch_of = {}
    for ids in by_sig.values():
        for start in range(0, len(ids), BATCH):
            chunk = tuple(ids[start:start + BATCH])
            for cid in chunk:
                batch_of[cid] = chunk
    return batch_of


_BATCH_OF = _batches()
_RESULTS: dict[tuple[str, tuple[str, ...]], dict] = {}


def _inputs_of(c: Case) -> list[np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(c.id.encode()))
    types = [_TYPES[t] for t in c.args]
    args = c.inputs(rng, types)
    assert len(args) == len(types), c.id
    return [np.ascontiguousarray(a, dtype=t) for a, t in zip(args, types)]


def _run_batch(backend: str, batch: tuple[str, ...]) -> dict[str, tuple[list[np.ndarray], np.ndarray]]:
    cases = [CASES[cid] for cid in batch]
    inputs = [_inputs_of(c) for c in cases]
    stacked = [np.stack([args[k] for args in inputs]) for k in range(len(cases[0].args))]
    result_type = _TYPES[cases[0].result]
    poison = np.nan if np.dtype(result_type).kind == "f" else 0x5A
    out = device_array(np.full((len(cases), N), poison, dtype=result_type), backend)
    _KERNELS[len(stacked)][(1,)](*[device_array(a, backend) for a in stacked], out, N=N,
                                 NAMES=tuple(c.name for c in cases))
    got = to_numpy(out)
    return {c.id: (args, got[i]) for i, (c, args) in enumerate(zip(cases, inputs))}


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_function(backend, case_id):
    batch = _BATCH_OF[case_id]
    key = (backend, batch)
    if key not in _RESULTS:
        _RESULTS[key] = _run_batch(backend, batch)
    args, got = _RESULTS[key][case_id]
    CASES[case_id].check(args, got)


# ----------------------------------------------------------------------------- special values


@tilec.jit
def _specials_kernel(x_ptr, out_ptr, N: tl.constexpr, NAMES: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    for i in tl.static_range(len(NAMES)):
        tl.store(out_ptr + i * N + offs, getattr(libdevice, NAMES[i])(x))


_SPECIAL_INPUTS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 1e30, -1e30]
_INF, _NAN = np.inf, np.nan
# name: expected results for _SPECIAL_INPUTS (C99 / CUDA semantics)
SPECIAL_RESULTS = {
    "exp": [_NAN, _INF, 0.0, 1.0, 1.0, math.e, 1 / math.e, math.exp(0.5), math.exp(2), math.exp(-2), _INF, 0.0],
    "log": [_NAN, _INF, _NAN, -_INF, -_INF, 0.0, _NAN, math.log(0.5), math.log(2), _NAN, math.log(1e30), _NAN],
    "sqrt": [_NAN, _INF, _NAN, 0.0, -0.0, 1.0, _NAN, math.sqrt(0.5), math.sqrt(2), _NAN, 1e15, _NAN],
    "rsqrt": [_NAN, 0.0, _NAN, _INF, -_INF, 1.0, _NAN, math.sqrt(2), math.sqrt(0.5), _NAN, 1e-15, _NAN],
    "tanh": [_NAN, 1.0, -1.0, 0.0, -0.0, math.tanh(1), -math.tanh(1), math.tanh(0.5), math.tanh(2), -math.tanh(2),
             1.0, -1.0],
    "erfinv": [_NAN, _NAN, _NAN, 0.0, -0.0, _INF, -_INF, 0.4769362762044699, _NAN, _NAN, _NAN, _NAN],
    "lgamma": [_NAN, _INF, _INF, _INF, _INF, 0.0, _INF, math.lgamma(0.5), 0.0, _INF, math.lgamma(1e30), _INF],
    "floor": [_NAN, _INF, -_INF, 0.0, -0.0, 1.0, -1.0, 0.0, 2.0, -2.0, 1e30, -1e30],
    "trunc": [_NAN, _INF, -_INF, 0.0, -0.0, 1.0, -1.0, 0.0, 2.0, -2.0, 1e30, -1e30],
    "logb": [_NAN, _INF, _INF, -_INF, -_INF, 0.0, 0.0, -1.0, 1.0, 1.0, 99.0, 99.0],
    "fabs": [_NAN, _INF, _INF, 0.0, 0.0, 1.0, 1.0, 0.5, 2.0, 2.0, 1e30, 1e30],
}
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
SPECIAL_INT_RESULTS = {
    # conversions saturate; NaN becomes 0 from fp32, INT_MIN (the "integer indefinite") from fp64
    "float2int_rz": [0, _INT_MAX, _INT_MIN, 0, 0, 1, -1, 0, 2, -2, _INT_MAX, _INT_MIN],
    "double2int_rz": [_INT_MIN, _INT_MAX, _INT_MIN, 0, 0, 1, -1, 0, 2, -2, _INT_MAX, _INT_MIN],
    "isnan": [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    "isinf": [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    "signbit": [0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1],
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values(backend, dtype):
    x = np.array(_SPECIAL_INPUTS + [1.0] * (16 - len(_SPECIAL_INPUTS)), dtype=dtype)
    for table, result_type in ((SPECIAL_RESULTS, dtype), (SPECIAL_INT_RESULTS, np.int32)):
        skip = "double2int_rz" if dtype == np.float32 else "float2int_rz"
        names = tuple(name for name in table if name != skip)
        out = device_array(np.full((len(names), 16), 7, dtype=result_type), backend)
        _specials_kernel[(1,)](device_array(x, backend), out, N=16, NAMES=names)
        got = to_numpy(out)[:, :len(_SPECIAL_INPUTS)]
        for row, name in enumerate(names):
            expected = np.array(table[name], dtype=np.float64)
            if result_type is np.int32:
                np.testing.assert_array_equal(got[row], expected.astype(np.int32), err_msg=name)
            else:
                np.testing.assert_allclose(got[row].astype(np.float64), expected, rtol=4 * np.finfo(dtype).eps,
                                           atol=0, err_msg=name)
                zeros = expected == 0
                np.testing.assert_array_equal(np.signbit(got[row][zeros]), np.signbit(expected[zeros]),
                                              err_msg=f"{name}: signs of zeros")


# ----------------------------------------------------------------------------- dispatch


@tilec.jit
def _pow_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, libdevice.pow(x, 3))  # int32 exponent: __nv_powif
    tl.store(out_ptr + N + offs, libdevice.pow(x, 0.5))  # float exponent: __nv_powf
    tl.store(out_ptr + 2 * N + offs, libdevice.atan2(x, 1))  # promoted to (fp32, fp32)


def test_dispatch_by_argument_types(backend, rng):
    x = rng.uniform(0.5, 2.0, 64).astype(np.float32)
    out = device_array(np.full(3 * 64, np.nan, np.float32), backend)
    _pow_kernel[(1,)](device_array(x, backend), out, N=64)
    got = to_numpy(out).reshape(3, 64)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got[0], x64 ** 3, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.sqrt(x64), rtol=1e-6)
    np.testing.assert_allclose(got[2], np.arctan2(x64, 1.0), rtol=1e-6)


@tilec.jit
def _fp16_sin_kernel(x_ptr, out_ptr):
    tl.store(out_ptr, libdevice.sin(tl.load(x_ptr)))


def test_unsupported_argument_type():
    from tilec.config import config
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "interpret", True)
        with pytest.raises(Exception, match=r"no version of this function for argument types \(fp16\)"):
            _fp16_sin_kernel[(1,)](np.ones(1, np.float16), np.zeros(1, np.float16))


# ----------------------------------------------------------------------------- the tables themselves


def _tables() -> dict[str, dict]:
    """Every function's dispatch table, captured by calling it with a recording stand-in
    for tl.extern_elementwise."""
    from tilec.language import builtins
    tables = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(builtins, "extern_elementwise", lambda lib, path, args, table, is_pure: table)
        for name in libdevice.__all__:
            fn = getattr(libdevice, name)
            tables[name] = fn(*[None] * len(inspect.signature(fn).parameters))
    return tables


def test_every_function_is_tested():
    tested = {(c.name, tuple(_TL_TYPES[t] for t in c.args)) for c in CASES.values()}
    untested = [f"{name}{tuple(str(t) for t in key)}" for name, table in _tables().items() for key in table
                if (name, key) not in tested]
    assert not untested, untested


def test_numpy_implementations_cover_every_symbol():
    symbols = {symbol for table in _tables().values() for symbol, _ in table.values()}
    assert symbols == set(libdevice_numpy.NUMPY_IMPLEMENTATIONS)
    assert len(libdevice.__all__) >= 200


_LLVM_TYPES = {tl.float32: "float", tl.float64: "double", tl.int32: "i32", tl.uint32: "i32",
               tl.int64: "i64", tl.uint64: "i64"}


def test_tables_match_libdevice_declarations():
    from tilec.backend import toolkit
    try:
        text = subprocess.run([toolkit.llvm_tool("llvm-dis"), toolkit.libdevice_path(), "-o", "-"],
                              capture_output=True, text=True, check=True).stdout
    except (toolkit.ToolkitError, OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"libdevice or llvm-dis not available: {exc}")
    declared = {}
    for match in re.finditer(r"^define (?:[\w()]+ )*?(\S+) @(__nv_\w+)\(([^)]*)\)", text, re.M):
        result, symbol, params = match.groups()
        declared[symbol] = (result, [p.split()[0] for p in params.split(",") if p.strip()])
    wrong = []
    for name, table in _tables().items():
        for key, (symbol, result) in table.items():
            want = (_LLVM_TYPES[result], [_LLVM_TYPES[t] for t in key])
            if declared.get(symbol) != want:
                wrong.append(f"{name}: {symbol} is declared {declared.get(symbol)}, the table says {want}")
    assert not wrong, "\n".join(wrong)
