"""Elementwise semantics, op x dtype x shape, on both backends.

Every case is one launch of a generic kernel (the op, shape and expected result type are
constexprs) over a whole number of blocks holding every pair of special values of the
dtype (+-0, +-inf, NaN, subnormals, the largest finite value; INT_MIN, INT_MAX, -1, 0...)
and random values. The kernel asserts (tl.static_assert) the result type that Triton's
promotion rules give. References are independent (see matrix_reference.py): integers are
bit-exact, IEEE operations correctly rounded, and the approximate fp32 operations that
Triton and tilec compile to hardware approximations (`/` is div.full.f32, tl.sqrt is
sqrt.approx.ftz, tl.exp uses ex2.approx) get per-op ulp tolerances, plus flush-to-zero
of subnormals on the `gpu` backend only.
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

import tilec
import tilec.language as tl
from matrix_reference import (ALL_DTYPES, BITS, FLOAT_DTYPES, INT_DTYPES, NP, SHAPES, TL, as_ints, block_offsets,
                              check_exact, check_float, check_interval, convert, f64, float_specials,
                              flush_subnormals, int_range, is_float, is_int, is_signed, launch, max_finite, mn, numel,
                              padded_length, pairs_with_specials, random_values, rotating_shapes, round_rational,
                              round_to, shape_id, specials, to_dtype, wrap)

LOG2E = 1.4426950408889634


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


# ----------------------------------------------------------------------------- kernels

@tilec.jit
def unary_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr, RT: tl.constexpr):
    offs = block_offsets(M, N)
    x = tl.load(x_ptr + offs)
    if OP == "neg":
        z = -x
    elif OP == "pos":
        z = +x
    elif OP == "invert":
        z = ~x
    elif OP == "not":
        z = not x
    elif OP == "abs":
        z = tl.abs(x)
    elif OP == "exp":
        z = tl.exp(x)
    elif OP == "exp2":
        z = tl.exp2(x)
    elif OP == "log":
        z = tl.log(x)
    elif OP == "log2":
        z = tl.log2(x)
    elif OP == "sin":
        z = tl.sin(x)
    elif OP == "cos":
        z = tl.cos(x)
    elif OP == "sqrt":
        z = tl.sqrt(x)
    elif OP == "sqrt_rn":
        z = tl.sqrt_rn(x)
    elif OP == "rsqrt":
        z = tl.rsqrt(x)
    elif OP == "floor":
        z = tl.floor(x)
    elif OP == "ceil":
        z = tl.ceil(x)
    elif OP == "trunc":
        z = tl.trunc(x)
    elif OP == "erf":
        z = tl.erf(x)
    else:
        tl.static_assert(OP == "sigmoid")
        z = tl.sigmoid(x)
    tl.static_assert(z.dtype == RT, "unexpected result type")
    tl.store(out_ptr + offs, z)


@tilec.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr, RT: tl.constexpr):
    offs = block_offsets(M, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    elif OP == "mul":
        z = x * y
    elif OP == "truediv":
        z = x / y
    elif OP == "floordiv":
        z = x // y
    elif OP == "mod":
        z = x % y
    elif OP == "fdiv":
        z = tl.fdiv(x, y)
    elif OP == "fdiv_ieee":
        z = tl.fdiv(x, y, ieee_rounding=True)
    elif OP == "div_rn":
        z = tl.div_rn(x, y)
    elif OP == "maximum":
        z = tl.maximum(x, y)
    elif OP == "minimum":
        z = tl.minimum(x, y)
    elif OP == "maximum_nan":
        z = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "minimum_nan":
        z = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "and":
        z = x & y
    elif OP == "or":
        z = x | y
    elif OP == "xor":
        z = x ^ y
    elif OP == "shl":
        z = x << y
    elif OP == "shr":
        z = x >> y
    elif OP == "lt":
        z = x < y
    elif OP == "le":
        z = x <= y
    elif OP == "gt":
        z = x > y
    elif OP == "ge":
        z = x >= y
    elif OP == "eq":
        z = x == y
    elif OP == "ne":
        z = x != y
    elif OP == "umulhi":
        z = tl.umulhi(x, y)
    elif OP == "logical_and":
        z = x and y
    else:
        tl.static_assert(OP == "logical_or")
        z = x or y
    tl.static_assert(z.dtype == RT, "unexpected result type")
    tl.store(out_ptr + offs, z)


@tilec.jit
def ternary_kernel(x_ptr, y_ptr, w_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr,
                   RT: tl.constexpr):
    offs = block_offsets(M, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    w = tl.load(w_ptr + offs)
    if OP == "fma":
        z = tl.fma(x, y, w)
    elif OP == "clamp":
        z = tl.clamp(x, y, w)
    elif OP == "clamp_nan":
        z = tl.clamp(x, y, w, propagate_nan=tl.PropagateNan.ALL)
    else:
        tl.static_assert(OP == "where")
        z = tl.where(x, y, w)  # x is the condition (int1, or any integer: compared with 0)
    tl.static_assert(z.dtype == RT, "unexpected result type")
    tl.store(out_ptr + offs, z)


@tilec.jit
def scalar_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr, SCALAR: tl.constexpr,
                  RT: tl.constexpr):
    offs = block_offsets(M, N)
    x = tl.load(x_ptr + offs)
    if OP == "add":
        z = x + SCALAR
    elif OP == "radd":
        z = SCALAR + x
    elif OP == "mul":
        z = x * SCALAR
    else:
        tl.static_assert(OP == "truediv")
        z = x / SCALAR
    tl.static_assert(z.dtype == RT, "unexpected result type")
    tl.store(out_ptr + offs, z)


# ----------------------------------------------------------------------------- type rules (Triton 3.6)

def _kind(dt: str) -> int:
    return 0 if dt == "bool" else 2 if is_float(dt) else 1


def integer_promote(a: str, b: str) -> str:
    sa, sb = is_signed(a), is_signed(b)
    if sa == sb:
        return a if BITS[a] > BITS[b] else b
    unsigned, signed = (a, b) if not sa else (b, a)
    return unsigned if BITS[unsigned] >= BITS[signed] else signed


def computation_type(a: str, b: str, div_or_mod: bool = False) -> str | None:
    """Triton's computation type of two tensors; None where Triton raises (/, //, % between
    integers of different signedness)."""
    if "fp64" in (a, b):
        return "fp64"
    if "fp32" in (a, b):
        return "fp32"
    if "fp16" in (a, b):
        return "fp32" if div_or_mod else "fp16"
    if a == "bf16" and b == "bf16":
        return "fp32" if div_or_mod else "bf16"
    if "bf16" in (a, b):
        return "fp32"
    if div_or_mod and is_signed(a) != is_signed(b):
        return None
    return integer_promote(a, b)


def scalar_type(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        for dt in ("int32", "uint32", "int64", "uint64"):
            lo, hi = int_range(dt)
            if lo <= value <= hi:
                return dt
        raise ValueError(value)
    mag = abs(value)
    if mag == 0 or mag != mag or mag == math.inf or 2.0 ** -126 <= mag <= max_finite("fp32"):
        return "fp32"
    return "fp64"


# ----------------------------------------------------------------------------- references

def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_binary_reference(op: str, dt: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, str]:
    a, b = as_ints(x), as_ints(y)
    bits = BITS[dt]
    if op in ("lt", "le", "gt", "ge", "eq", "ne"):
        fn = {"lt": lambda p, q: p < q, "le": lambda p, q: p <= q, "gt": lambda p, q: p > q,
              "ge": lambda p, q: p >= q, "eq": lambda p, q: p == q, "ne": lambda p, q: p != q}[op]
        return np.array([fn(p, q) for p, q in zip(a, b)], dtype=bool), "bool"
    if op in ("logical_and", "logical_or"):
        fn = (lambda p, q: bool(p) and bool(q)) if op == "logical_and" else (lambda p, q: bool(p) or bool(q))
        return np.array([fn(p, q) for p, q in zip(a, b)], dtype=bool), "bool"
    fn = {
        "add": lambda p, q: p + q, "sub": lambda p, q: p - q, "mul": lambda p, q: p * q,
        "floordiv": _trunc_div, "mod": lambda p, q: p - _trunc_div(p, q) * q,
        "and": lambda p, q: p & q, "or": lambda p, q: p | q, "xor": lambda p, q: p ^ q,
        "shl": lambda p, q: p << q, "shr": lambda p, q: p >> q,
        "maximum": max, "minimum": min,
        "umulhi": lambda p, q: ((p % (1 << bits)) * (q % (1 << bits))) >> bits,
    }[op]
    return wrap([fn(p, q) for p, q in zip(a, b)], dt), dt


def _fmod_gpu(x64: np.ndarray, y64: np.ndarray, rt: str) -> np.ndarray:
    """LLVM's NVPTX expansion of frem (Triton's and tilec's float `%` on the GPU):
    fma(-trunc(div.rn(x, y)), y, x), and x where y is infinite."""
    with np.errstate(all="ignore"):
        q = f64(round_to(x64 / y64, rt))
        t = np.trunc(q)
        r = fma_reference(-t, y64, x64, rt)
        return np.where(np.isinf(y64), round_to(x64, rt), r)


def fma_reference(a64: np.ndarray, b64: np.ndarray, c64: np.ndarray, rt: str) -> np.ndarray:
    """a * b + c rounded once to rt (exact rationals), with IEEE's special cases."""
    from fractions import Fraction
    out = []
    with np.errstate(all="ignore"):
        for a, b, c in zip(np.ravel(a64).tolist(), np.ravel(b64).tolist(), np.ravel(c64).tolist()):
            if not (math.isfinite(a) and math.isfinite(b)) or a == 0 or b == 0:
                # An infinite, NaN or zero product is exact in float64 (IEEE zero signs too).
                out.append(round_to(np.float64(a) * np.float64(b) + np.float64(c), rt))
            elif not math.isfinite(c):
                out.append(round_to(c, rt))  # a finite product, however large, leaves c
            else:
                exact = Fraction(a) * Fraction(b) + Fraction(c)
                out.append(round_rational([exact], rt)[0])  # an exact zero is +0.0
    return np.array(out, dtype=NP[rt]).reshape(np.shape(a64))


def _flush_variants(x, y, dt) -> list[tuple[np.ndarray, np.ndarray]]:
    fx, fy = flush_subnormals(x, dt), flush_subnormals(y, dt)
    return [(fx, y), (x, fy), (fx, fy)]


def float_binary_reference(op: str, dt: str, x, y, gpu: bool):
    """(result type, accepted references, check_float keywords) of a binary op on floats."""
    x64, y64 = f64(x), f64(y)
    with np.errstate(all="ignore"):
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            fn = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                  "eq": np.equal, "ne": np.not_equal}[op]
            return "bool", [fn(x64, y64)], None
        rt = result_type(op, dt)
        if op in ("add", "sub", "mul"):
            fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
            return rt, [round_to(fn(x64, y64), rt)], {}
        if op in ("truediv", "fdiv", "fdiv_ieee", "div_rn"):
            exact = op == "div_rn" or rt == "fp64"
            refs = [round_to(x64 / y64, rt)]
            if gpu and not exact:
                refs += [round_to(f64(a) / f64(b), rt) for a, b in _flush_variants(x, y, dt)]
            # fp32 `/` and tl.fdiv are div.full.f32 (2 ulp, as in Triton, whose fdiv ignores
            # ieee_rounding); div_rn is IEEE division.
            return rt, refs, dict(ulps=0 if exact else 2, flush_tiny=gpu and not exact)
        if op == "mod":
            refs = [round_to(np.fmod(x64, y64), rt)]
            if gpu:
                refs.append(_fmod_gpu(x64, y64, rt))
            return rt, refs, {}
        if op in ("maximum", "minimum"):
            fn = np.fmax if op == "maximum" else np.fmin  # a NaN operand is ignored
            # Either zero may come back for max(-0, +0) (LLVM maxnum/minnum).
            return rt, [round_to(fn(x64, y64), rt)], dict(zero_sign=False)
        if op in ("maximum_nan", "minimum_nan"):
            fn = np.maximum if op == "maximum_nan" else np.minimum
            ref = np.where(np.isnan(x64) | np.isnan(y64), np.nan, fn(x64, y64))
            # The order of -0 and +0 is test_maximum_minimum_propagate_nan_order_zeros's.
            return rt, [round_to(ref, rt)], dict(zero_sign=False)
    raise AssertionError(op)


def result_type(op: str, dt: str) -> str:
    """The type Triton 3.6 gives op on two (or one) tensors of type dt."""
    if op in ("lt", "le", "gt", "ge", "eq", "ne", "not", "logical_and", "logical_or"):
        return "bool"
    if op in ("truediv", "fdiv", "fdiv_ieee", "div_rn", "mod", "sigmoid") and dt in ("fp16", "bf16"):
        return "fp32"
    if op == "truediv" and not is_float(dt):
        return "fp32"
    if op in ("maximum", "minimum", "maximum_nan", "minimum_nan", "clamp", "clamp_nan") and dt == "bf16":
        return "fp32"  # Triton's tl.maximum/minimum/clamp compare bf16 in fp32
    return dt


# ----------------------------------------------------------------------------- binary matrix

FLOAT_BINARY_OPS = ("add", "sub", "mul", "truediv", "mod", "fdiv", "fdiv_ieee", "div_rn", "maximum", "minimum",
                    "maximum_nan", "minimum_nan", "lt", "le", "gt", "ge", "eq", "ne")
INT_BINARY_OPS = ("add", "sub", "mul", "floordiv", "mod", "truediv", "and", "or", "xor", "shl", "shr", "maximum",
                  "minimum", "lt", "le", "gt", "ge", "eq", "ne")
BOOL_BINARY_OPS = ("and", "or", "xor", "maximum", "minimum", "lt", "le", "gt", "ge", "eq", "ne")


def _binary_cases():
    cases = []
    for oi, op in enumerate(FLOAT_BINARY_OPS):
        for di, dt in enumerate(FLOAT_DTYPES):
            cases += [(op, dt, s) for s in rotating_shapes(oi + di, 2)]
    for oi, op in enumerate(INT_BINARY_OPS):
        for di, dt in enumerate(INT_DTYPES):
            cases += [(op, dt, s) for s in rotating_shapes(oi + di, 2)]
    for oi, op in enumerate(BOOL_BINARY_OPS):
        cases += [(op, "bool", s) for s in rotating_shapes(oi, 2)]
    for di, dt in enumerate(("int32", "uint32", "int64", "uint64")):
        cases += [("umulhi", dt, s) for s in rotating_shapes(di, 2)]
    for oi, op in enumerate(("logical_and", "logical_or")):
        for di, dt in enumerate(("bool", "int32")):
            cases += [(op, dt, s) for s in rotating_shapes(oi + 2 * di, 1)]
    return [pytest.param(op, dt, s, id=f"{op}-{dt}-{shape_id(s)}") for op, dt, s in cases]


def _binary_operands(op: str, dt: str, shape, rng) -> tuple[np.ndarray, np.ndarray]:
    x, y = pairs_with_specials(rng, dt, dt, shape)
    if is_int(dt) and op in ("floordiv", "mod"):
        lo, _ = int_range(dt)
        yi, xi = as_ints(y), as_ints(x)
        # Division by zero and INT_MIN / -1 are undefined behaviour (LLVM sdiv/srem).
        yi = [1 if q == 0 or (p == lo and q == -1 and is_signed(dt)) else q for p, q in zip(xi, yi)]
        y = wrap(yi, dt)
    if op in ("shl", "shr"):
        bits = BITS[dt]
        # Shift amounts of the bit width or more are undefined (LLVM poison): 0 .. width-1.
        amounts = np.concatenate([np.arange(bits), rng.integers(0, bits, len(y) - bits)]) if len(y) > bits \
            else rng.integers(0, bits, len(y))
        y = wrap(list(amounts), dt)
    return x, y


@pytest.mark.parametrize("op,dt,shape", _binary_cases())
def test_binary(backend, request, op, dt, shape):
    rng = _rng("binary", op, dt, shape)
    x, y = _binary_operands(op, dt, shape, rng)
    gpu = backend == "gpu"
    rt = result_type(op, dt)
    m, n = mn(shape)
    if is_float(dt):
        rt, refs, kw = float_binary_reference(op, dt, x, y, gpu)
        (got,) = launch(binary_kernel, backend, [x, y], [(refs[0], rt)], (len(x) // numel(shape),),
                        M=m, N=n, OP=op, RT=TL[rt])
        inputs = {"x": (x, dt), "y": (y, dt)}
        if kw is None:
            check_exact(got, refs[0], rt, inputs=inputs, what=f"{op} {dt}")
        else:
            check_float(got, refs, rt, inputs=inputs, what=f"{op} {dt}", **kw)
        return
    if op == "truediv":  # integers divide in fp32 (each operand converted to fp32 first)
        a32, b32 = f64(round_rational(as_ints(x), "fp32")), f64(round_rational(as_ints(y), "fp32"))
        with np.errstate(all="ignore"):
            ref = round_to(a32 / b32, "fp32")
        (got,) = launch(binary_kernel, backend, [x, y], [(ref, "fp32")], (len(x) // numel(shape),),
                        M=m, N=n, OP=op, RT=tl.float32)
        refs = [ref]
        check_float(got, refs, "fp32", ulps=2, inputs={"x": (x, dt), "y": (y, dt)}, what=f"{op} {dt}",
                    flush_tiny=gpu)
        return
    ref, ref_dt = int_binary_reference(op, dt, x, y)
    (got,) = launch(binary_kernel, backend, [x, y], [(ref, ref_dt)], (len(x) // numel(shape),),
                    M=m, N=n, OP=op, RT=TL[rt])
    check_exact(got, ref, ref_dt, inputs={"x": (x, dt), "y": (y, dt)}, what=f"{op} {dt}")


# ----------------------------------------------------------------------------- unary and math matrix

MATH_OPS = ("exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "sqrt_rn", "rsqrt", "floor", "ceil", "trunc", "erf",
            "sigmoid")
# As Triton, the math functions refuse fp16/bf16 (test_refused_operations), except tilec's own
# tl.trunc and tl.sigmoid; tl.sqrt_rn takes fp32 (Triton) and fp64 (tilec).
MATH_DTYPES = {op: FLOAT_DTYPES if op in ("trunc", "sigmoid") else ("fp32", "fp64") for op in MATH_OPS}

_erf = np.vectorize(math.erf, otypes=[np.float64])

_MATH_REFERENCE = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
    "sqrt": np.sqrt, "sqrt_rn": np.sqrt, "rsqrt": lambda v: 1.0 / np.sqrt(v), "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "erf": _erf,
}


def math_tolerance(op: str, dt: str, x64: np.ndarray):
    """ulps of the result type that hold on both backends."""
    if op in ("floor", "ceil", "trunc", "sqrt_rn") or (op == "sqrt" and dt == "fp64"):
        return 0
    if dt in ("fp16", "bf16"):
        return 1  # computed in fp32 and rounded once more
    if dt == "fp64":
        return 4  # libdevice (within 2 ulp) against NumPy's float64 functions (within 1-2 ulp)
    t = np.abs(np.where(np.isfinite(x64), x64, 0.0)) * LOG2E
    return {
        "exp": 3 + t,  # ex2.approx.f32(x * log2 e): the rounding of x * log2 e grows with |x|
        "exp2": 3, "log": 4, "log2": 4, "sin": 4, "cos": 4, "erf": 4,
        "sqrt": 3,  # sqrt.approx.ftz.f32
        "rsqrt": 3,  # rsqrt.approx.ftz.f32
    }[op]


def _math_inputs(op: str, dt: str, shape, rng) -> np.ndarray:
    sp = float_specials(dt)
    extra = [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 100.0, -100.0, 0.1, 88.0, -88.0, 1e-3, 7.0, 1e4]
    values = to_dtype([v for v in sp + extra], dt)
    total = padded_length(shape, 512)
    rand = random_values(rng, dt, total - len(values))
    if op in ("exp", "exp2", "sigmoid", "erf", "sin", "cos"):
        # Half the random values in the interesting range of the function.
        k = len(rand) // 2
        rand[:k] = round_to(rng.uniform(-30, 30, k), dt)
    return np.concatenate([values, rand])


def _sigmoid_bounds(x: np.ndarray, dt: str):
    """tl.sigmoid is 1 / (1 + exp(-x)) evaluated in the language: e = tl.exp(-x) in dt (so it
    overflows to inf where exp(-x) is beyond dt's range, giving 0), d = 1 + e in dt, then the
    division (in fp32 for fp16/bf16, whose division is promoted). The bounds of 1 / d over
    every e within tl.exp's tolerance."""
    x64 = f64(x)
    mant = {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}[dt]
    exp_ulps = np.broadcast_to(math_tolerance("exp", dt, -x64), x64.shape)
    rel = (exp_ulps + 0.5) * 2.0 ** -mant
    with np.errstate(all="ignore"):
        e = np.exp(-x64)
        e_lo, e_hi = f64(round_to(e * (1 - rel), dt)), f64(round_to(e * (1 + rel), dt))
        r_lo = 1.0 / f64(round_to(1.0 + e_hi, dt))
        r_hi = 1.0 / f64(round_to(1.0 + e_lo, dt))
    nan = np.isnan(x64)
    return np.where(nan, np.nan, r_lo), np.where(nan, np.nan, r_hi)


@pytest.mark.parametrize("op,dt,shape", [
    pytest.param(op, dt, s, id=f"{op}-{dt}-{shape_id(s)}")
    for oi, op in enumerate(MATH_OPS) for di, dt in enumerate(MATH_DTYPES[op]) for s in rotating_shapes(oi + di, 2)])
def test_math(backend, op, dt, shape):
    rng = _rng("math", op, dt, shape)
    x = _math_inputs(op, dt, shape, rng)
    rt = result_type(op, dt)
    gpu = backend == "gpu"
    m, n = mn(shape)
    x64 = f64(x)
    inputs = {"x": (x, dt)}
    grid = (len(x) // numel(shape),)
    if op == "sigmoid":
        lo, hi = _sigmoid_bounds(x, dt)
        (got,) = launch(unary_kernel, backend, [x], [(round_to(lo, rt), rt)], grid, M=m, N=n, OP=op, RT=TL[rt])
        # 2 ulps for the division (div.full.f32) and the final rounding.
        check_interval(got, lo, hi, rt, ulps=2, inputs=inputs, what=f"{op} {dt}", flush_tiny=gpu and dt != "fp64")
        return
    fn = _MATH_REFERENCE[op]
    tol = math_tolerance(op, dt, x64)
    approximate = bool(np.any(np.asarray(tol) != 0))
    flush = gpu and approximate and dt != "fp64"
    with np.errstate(all="ignore"):
        refs = [round_to(fn(x64), rt)]
        if flush:
            refs.append(round_to(fn(f64(flush_subnormals(x, dt))), rt))  # .ftz: flushed inputs
    (got,) = launch(unary_kernel, backend, [x], [(refs[0], rt)], grid, M=m, N=n, OP=op, RT=TL[rt])
    check_float(got, refs, rt, ulps=tol, inputs=inputs, what=f"{op} {dt}", flush_tiny=flush)


UNARY_OPS = {"neg": ALL_DTYPES, "pos": ALL_DTYPES, "abs": ALL_DTYPES,
             "invert": INT_DTYPES + ("bool",), "not": ("bool",) + INT_DTYPES}


@pytest.mark.parametrize("op,dt,shape", [
    pytest.param(op, dt, s, id=f"{op}-{dt}-{shape_id(s)}")
    for oi, op in enumerate(UNARY_OPS) for di, dt in enumerate(UNARY_OPS[op]) for s in rotating_shapes(oi + di, 2)])
def test_unary(backend, request, op, dt, shape):
    rng = _rng("unary", op, dt, shape)
    sp = to_dtype(specials(dt), dt)
    total = padded_length(shape, len(sp) + 64)
    x = np.concatenate([sp, random_values(rng, dt, total - len(sp))])
    rt = result_type(op, dt)
    m, n = mn(shape)
    if is_float(dt):
        x64 = f64(x)
        ref = {"neg": -x64, "pos": x64, "abs": np.abs(x64)}[op]
        # -x of +0.0 is checked by test_negation_of_zero_follows_triton; here zeros compare by value for neg.
        (got,) = launch(unary_kernel, backend, [x], [(round_to(ref, rt), rt)], (len(x) // numel(shape),),
                        M=m, N=n, OP=op, RT=TL[rt])
        check_float(got, round_to(ref, rt), rt, zero_sign=op != "neg", inputs={"x": (x, dt)}, what=f"{op} {dt}")
        return
    a = as_ints(x)
    if op == "neg":
        ref = wrap([-v for v in a], dt)  # 0 - x: wraps (INT_MIN stays INT_MIN); int1 is modulo 2
    elif op == "pos":
        ref = x.copy()
    elif op == "abs":
        ref = wrap([abs(v) for v in a], dt)  # unsigned (and int1): unchanged
    elif op == "invert":
        ref = wrap([~v for v in a], dt) if dt != "bool" else np.array([not v for v in a], dtype=bool)
    else:
        ref = np.array([v == 0 for v in a], dtype=bool)
    (got,) = launch(unary_kernel, backend, [x], [(ref, rt)], (len(x) // numel(shape),), M=m, N=n, OP=op, RT=TL[rt])
    check_exact(got, ref, rt, inputs={"x": (x, dt)}, what=f"{op} {dt}")


# ----------------------------------------------------------------------------- ternary: fma, clamp, where

def _ternary_cases():
    cases = []
    for di, dt in enumerate(FLOAT_DTYPES):
        cases += [("fma", dt, s) for s in rotating_shapes(di, 2)]
        cases += [("clamp", dt, s) for s in rotating_shapes(di + 1, 2)]
        cases += [("clamp_nan", dt, s) for s in rotating_shapes(di + 2, 2)]
    for di, dt in enumerate(ALL_DTYPES):
        cases += [("where", dt, s) for s in rotating_shapes(di, 1)]
        cases += [("where_intcond", dt, s) for s in rotating_shapes(di + 1, 1)]
    return [pytest.param(op, dt, s, id=f"{op}-{dt}-{shape_id(s)}") for op, dt, s in cases]


@pytest.mark.parametrize("op,dt,shape", _ternary_cases())
def test_ternary(backend, request, op, dt, shape):
    rng = _rng("ternary", op, dt, shape)
    m, n = mn(shape)
    if op == "fma":
        x, y = pairs_with_specials(rng, dt, dt, shape)
        sp = to_dtype(float_specials(dt), dt)
        w = random_values(rng, dt, len(x))
        w[:256] = sp[(np.arange(256) * 7) % len(sp)]  # every special addend, against every pair class
        # Products near the addend (cancellation) among the random cases.
        k = min(len(x) - 256, 64)
        if k > 0:
            with np.errstate(over="ignore"):
                w[256:256 + k] = round_to(-f64(x[256:256 + k]) * f64(y[256:256 + k]), dt)
        # A finite product beyond the range (exact in fma) plus an infinity of the other sign.
        x[-1], y[-1], w[-1] = to_dtype([max_finite(dt), 2.0, -math.inf], dt)
        ref = fma_reference(f64(x), f64(y), f64(w), dt)
        (got,) = launch(ternary_kernel, backend, [x, y, w], [(ref, dt)], (len(x) // numel(shape),),
                        M=m, N=n, OP=op, RT=TL[dt])
        check_float(got, ref, dt, inputs={"x": (x, dt), "y": (y, dt), "w": (w, dt)}, what=f"fma {dt}")
        return
    if op in ("clamp", "clamp_nan"):
        sp = to_dtype(float_specials(dt), dt)
        total = padded_length(shape, 3 * len(sp) + 64)
        x = np.concatenate([sp, sp, sp, random_values(rng, dt, total - 3 * len(sp))])
        lo = f64(random_values(rng, dt, total))
        hi = f64(random_values(rng, dt, total))
        lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
        # Bounds with infinities, signed zeros and lo == hi, for every special x.
        k = len(sp)
        lo[:k], hi[:k] = -math.inf, math.inf
        lo[k:2 * k], hi[k:2 * k] = -0.0, 0.0
        lo[2 * k:3 * k], hi[2 * k:3 * k] = 1.0, 3.0
        lo[3 * k:3 * k + 8] = hi[3 * k:3 * k + 8]
        lo, hi = round_to(lo, dt), round_to(hi, dt)
        x64, lo64, hi64 = f64(x), f64(lo), f64(hi)
        if op == "clamp":  # minnum(maxnum(x, lo), hi): a NaN x gives lo
            ref = np.fmin(np.fmax(x64, lo64), hi64)
        else:  # minimum(maximum(x, lo), hi): a NaN x gives NaN
            ref = np.where(np.isnan(x64), np.nan, np.minimum(np.maximum(x64, lo64), hi64))
        ref = round_to(ref, dt)
        rt = result_type(op, dt)  # bf16 is clamped in fp32, exactly
        (got,) = launch(ternary_kernel, backend, [x, lo, hi], [(ref, rt)], (len(x) // numel(shape),),
                        M=m, N=n, OP=op, RT=TL[rt])
        check_float(got, ref, rt, zero_sign=False, inputs={"x": (x, dt), "lo": (lo, dt), "hi": (hi, dt)},
                    what=f"{op} {dt}")
        return
    # where(cond, y, w)
    y, w = pairs_with_specials(rng, dt, dt, shape)
    cond_dt = "bool" if op == "where" else "int32"
    c = random_values(rng, cond_dt, len(y))
    if cond_dt == "int32":
        c[rng.random(len(c)) < 0.3] = 0
    cond = f64(c) != 0
    ref = np.where(cond, y, w)
    (got,) = launch(ternary_kernel, backend, [c, y, w], [(ref, dt)], (len(y) // numel(shape),),
                    M=m, N=n, OP="where", RT=TL[dt])
    if is_float(dt):
        check_float(got, ref, dt, inputs={"c": (c, cond_dt), "y": (y, dt), "w": (w, dt)}, what=f"{op} {dt}")
    else:
        check_exact(got, ref, dt, inputs={"c": (c, cond_dt), "y": (y, dt), "w": (w, dt)}, what=f"{op} {dt}")


# ----------------------------------------------------------------------------- type promotion matrix

def _promotion_cases():
    cases = []
    for i, a in enumerate(ALL_DTYPES):
        for j, b in enumerate(ALL_DTYPES):
            s = SHAPES[(i + j) % len(SHAPES)]
            cases.append(pytest.param("add", a, b, s, id=f"add-{a}-{b}-{shape_id(s)}"))
            if a != b:  # same-type division is test_binary's
                s = SHAPES[(i + 2 * j + 4) % len(SHAPES)]
                cases.append(pytest.param("truediv", a, b, s, id=f"truediv-{a}-{b}-{shape_id(s)}"))
    ints = INT_DTYPES
    for i, a in enumerate(ints):
        for j, b in enumerate(ints):
            if a != b:
                s = SHAPES[(i + j + 2) % len(SHAPES)]
                cases.append(pytest.param("lt", a, b, s, id=f"lt-{a}-{b}-{shape_id(s)}"))
    return cases


@pytest.mark.parametrize("op,a,b,shape", _promotion_cases())
def test_mixed_type_promotion(backend, op, a, b, shape):
    """Two tensors of different types: Triton's computation type, then the op in it."""
    rng = _rng("promote", op, a, b, shape)
    x, y = pairs_with_specials(rng, a, b, shape, extra=32)
    m, n = mn(shape)
    grid = (len(x) // numel(shape),)
    ct = computation_type(a, b, div_or_mod=op == "truediv")
    if ct is None:
        with pytest.raises(Exception, match="signedness"):
            launch(binary_kernel, backend, [x, y], [(np.zeros(len(x), np.float32), "fp32")], grid,
                   M=m, N=n, OP=op, RT=tl.float32)
        return
    xc, yc = convert(x, a, ct), convert(y, b, ct)
    inputs = {"x": (x, a), "y": (y, b)}
    if op == "lt":
        ref = np.array([p < q for p, q in zip(as_ints(xc), as_ints(yc))], dtype=bool)
        (got,) = launch(binary_kernel, backend, [x, y], [(ref, "bool")], grid, M=m, N=n, OP=op, RT=tl.int1)
        check_exact(got, ref, "bool", inputs=inputs, what=f"{a} < {b} in {ct}")
        return
    if op == "add":
        rt = ct
        if is_float(ct):
            with np.errstate(all="ignore"):
                ref = round_to(f64(xc) + f64(yc), ct)
        else:
            ref = wrap([p + q for p, q in zip(as_ints(xc), as_ints(yc))], ct) if ct != "bool" \
                else np.array([(p + q) % 2 for p, q in zip(as_ints(xc), as_ints(yc))], dtype=bool)
        (got,) = launch(binary_kernel, backend, [x, y], [(ref, rt)], grid, M=m, N=n, OP=op, RT=TL[rt])
        if is_float(rt):
            check_float(got, ref, rt, inputs=inputs, what=f"{a} + {b} in {ct}")
        else:
            check_exact(got, ref, rt, inputs=inputs, what=f"{a} + {b} in {ct}")
        return
    # truediv: integers go to fp32; the result has the computation type (fp32 for halves).
    rt = "fp32" if not is_float(ct) else ct
    xr, yr = convert(xc, ct, rt), convert(yc, ct, rt)
    with np.errstate(all="ignore"):
        ref = round_to(f64(xr) / f64(yr), rt)
    (got,) = launch(binary_kernel, backend, [x, y], [(ref, rt)], grid, M=m, N=n, OP=op, RT=TL[rt])
    gpu = backend == "gpu"
    refs = [ref]
    if gpu and rt == "fp32":
        refs += [round_to(f64(p) / f64(q), rt) for p, q in _flush_variants(xr, yr, rt)]
    check_float(got, refs, rt, ulps=2 if rt == "fp32" else 0, inputs=inputs, what=f"{a} / {b} in {rt}",
                flush_tiny=gpu and rt == "fp32")


SCALARS = (3, -3, 2.5, True, 2 ** 40, 1e-40)


def _scalar_expectation(dt: str, op: str, scalar):
    """(result type, scalar's type in the computation) or (None, error regex) (Triton 3.6)."""
    st = scalar_type(scalar)
    div = op == "truediv"
    if _kind(st) <= _kind(dt):
        ct = "fp32" if div and dt in ("fp16", "bf16") else dt
    else:
        ct = computation_type(st, dt, div)
        if ct is None:
            return None, "signedness"
    if is_int(ct) or ct == "bool":
        if isinstance(scalar, int) and not isinstance(scalar, bool):
            lo, hi = int_range(ct)
            if scalar < 0 and not is_signed(ct):
                return None, "negative|unsigned"
            if not lo <= scalar <= hi:
                return None, "range"
    rt = ct if not (div and not is_float(ct)) else "fp32"
    return rt, ct


def _scalar_cases():
    """Every scalar with `+`; the int, negative, float and tiny-float ones with `/`; the
    float one on the left (`2.5 + x`) and with `*` for a third of the dtypes each."""
    cases = []
    for k, op in enumerate(("add", "radd", "mul", "truediv")):
        for i, dt in enumerate(ALL_DTYPES):
            for j, sc in enumerate(SCALARS):
                if op == "add" or (op == "truediv" and j in (0, 1, 2, 5)) or \
                        (op in ("radd", "mul") and j == 2 and i % 3 == k - 1):
                    s = SHAPES[(i + j + k) % len(SHAPES)]
                    cases.append(pytest.param(op, dt, sc, s, id=f"{op}-{dt}-{sc!r}-{shape_id(s)}"))
    return cases


@pytest.mark.parametrize("op,dt,scalar,shape", _scalar_cases())
def test_python_scalar_promotion(backend, op, dt, scalar, shape):
    """A tensor with a Python constant: the constant adapts to the tensor's type unless its
    kind (bool < int < float) is higher; negative or out-of-range constants are errors."""
    rng = _rng("scalar", op, dt, repr(scalar), shape)
    sp = to_dtype(specials(dt), dt)
    total = padded_length(shape, len(sp) + 32)
    x = np.concatenate([sp, random_values(rng, dt, total - len(sp))])
    m, n = mn(shape)
    grid = (len(x) // numel(shape),)
    rt, ct = _scalar_expectation(dt, op, scalar)
    if rt is None:
        with pytest.raises(Exception, match=ct):
            launch(scalar_kernel, backend, [x], [(np.zeros(len(x), np.float32), "fp32")], grid,
                   M=m, N=n, OP=op, SCALAR=scalar, RT=tl.float32)
        return
    xc = convert(x, dt, ct)
    st = scalar_type(scalar)
    sc = convert(np.array([scalar]), st if st != "bool" else "bool", ct) if not is_float(ct) else \
        round_to(np.array([float(scalar)]), ct)
    if is_float(ct):
        a64, s64 = f64(xc), f64(sc)[0]
        if op == "truediv":
            a64, s64 = f64(convert(xc, ct, rt)), float(f64(convert(sc, ct, rt))[0])
        with np.errstate(all="ignore"):
            ref = {"add": a64 + s64, "radd": s64 + a64, "mul": a64 * s64, "truediv": a64 / s64}[op]
        ref = round_to(ref, rt)
    elif op == "truediv":
        with np.errstate(all="ignore"):
            ref = round_to(f64(round_rational(as_ints(xc), "fp32")) / f64(round_rational(as_ints(sc), "fp32"))[0],
                           "fp32")
    else:
        s = as_ints(sc)[0]
        vals = [p + s if op != "mul" else p * s for p in as_ints(xc)]
        ref = wrap(vals, ct) if ct != "bool" else np.array([v % 2 for v in vals], dtype=bool)
    (got,) = launch(scalar_kernel, backend, [x], [(ref, rt)], grid, M=m, N=n, OP=op, SCALAR=scalar, RT=TL[rt])
    what = f"{dt} {op} {scalar!r} in {ct}"
    if is_float(rt):
        approx = op == "truediv" and rt == "fp32"
        check_float(got, ref, rt, ulps=2 if approx else 0, inputs={"x": (x, dt)}, what=what,
                    flush_tiny=approx and backend == "gpu")
    else:
        check_exact(got, ref, rt, inputs={"x": (x, dt)}, what=what)


# ----------------------------------------------------------------------------- focused divergences

@tilec.jit
def _neg_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, -tl.load(x_ptr + offs))


@pytest.mark.parametrize("dt", FLOAT_DTYPES)
def test_negation_flips_the_sign(backend, dt):
    """tilec's unary minus on floats is IEEE negation (a sign flip): -(+0.0) is -0.0, as
    in NumPy. Triton computes `0 - x` (giving +0.0 for both zeros); language.md documents
    the difference."""
    x = to_dtype([0.0, -0.0, 1.0, -2.0, math.inf, -math.inf, 0.0, -0.0], dt)
    ref = round_to(-f64(x), dt)
    (got,) = launch(_neg_kernel, backend, [x], [(ref, dt)], (1,), N=8)
    check_float(got, ref, dt, inputs={"x": (x, dt)}, what=f"-x {dt}")
    assert list(np.signbit(f64(got))) == [True, False, True, False, True, False, True, False]


@tilec.jit
def _minmax_nan_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.maximum(x, y, propagate_nan=True))
    tl.store(out_ptr + N + offs, tl.minimum(x, y, propagate_nan=True))


@pytest.mark.parametrize("dt", FLOAT_DTYPES)
def test_maximum_minimum_propagate_nan_order_zeros(backend, request, dt):
    """propagate_nan=True is arith.maximumf/minimumf, which (like IEEE 754-2019 maximum and
    PTX max.NaN) order -0.0 below +0.0: max(+0, -0) = +0, min(+0, -0) = -0 in either order."""
    x = to_dtype([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, math.nan, 2.0], dt)
    y = to_dtype([-0.0, 0.0, 0.0, -0.0, math.nan, -0.0, 1.0, 2.0], dt)
    x64, y64 = f64(x), f64(y)
    mx = np.where(np.isnan(x64) | np.isnan(y64), np.nan, np.where((x64 == 0) & (y64 == 0),
                  np.where(np.signbit(x64) & np.signbit(y64), -0.0, 0.0), np.maximum(x64, y64)))
    mi = np.where(np.isnan(x64) | np.isnan(y64), np.nan, np.where((x64 == 0) & (y64 == 0),
                  np.where(np.signbit(x64) | np.signbit(y64), -0.0, 0.0), np.minimum(x64, y64)))
    ref = round_to(np.concatenate([mx, mi]), dt)
    (got,) = launch(_minmax_nan_kernel, backend, [x, y], [(ref, dt)], (1,), N=8)
    check_float(got, ref, dt, inputs={"x": (np.concatenate([x, x]), dt), "y": (np.concatenate([y, y]), dt)},
                what=f"maximum/minimum propagate_nan {dt}")


# ----------------------------------------------------------------------------- refused operations

_REFUSED = [("floordiv", dt) for dt in FLOAT_DTYPES] + \
           [(op, dt) for op in ("and", "or", "xor", "shl", "shr") for dt in ("fp16", "fp32", "fp64")] + \
           [("invert", dt) for dt in FLOAT_DTYPES] + \
           [("umulhi", dt) for dt in ("int8", "int16", "uint8", "uint16", "fp32")] + \
           [(op, dt) for op in ("exp", "log", "sqrt", "sin", "floor", "erf") for dt in ("int32", "uint8", "bool")] + \
           [(op, dt) for op in ("exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "floor",
                                "ceil", "erf") for dt in ("fp16", "bf16")] + \
           [("clamp", "bool")]


@pytest.mark.parametrize("op,dt", [pytest.param(op, dt, id=f"{op}-{dt}") for op, dt in _REFUSED])
def test_refused_operations(backend, op, dt):
    """Operations Triton 3.6 refuses for these operand types fail with a user error that
    names the type (not an internal error)."""
    x = to_dtype([1, 2, 3, 4], dt) if not is_float(dt) else to_dtype([1.0, 2.0, 3.0, 4.0], dt)
    out = np.zeros(4, NP[dt])
    if op in ("exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "floor", "ceil", "erf",
              "invert"):
        kernel, args = unary_kernel, [x]
    elif op == "clamp":
        kernel, args = ternary_kernel, [x, x, x]
    else:
        kernel, args = binary_kernel, [x, x]
    with pytest.raises(Exception) as info:
        launch(kernel, backend, args, [(out, dt)], (1,), M=4, N=0, OP=op, RT=TL[dt])
    message = str(info.value)
    # `//` promotes fp16/bf16 operands to fp32 first (Triton's rule 4), so fp32 is named.
    name = "fp32" if op == "floordiv" and dt in ("fp16", "bf16") else {"bool": "int1"}.get(dt, dt)
    assert name in message and "KeyError" not in message and "Internal" not in message, message
