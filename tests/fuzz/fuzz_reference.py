"""Reference implementations of the language's operations on `Val`s (see fuzz_semantics).

Each function takes operands already converted to the operation's computation type
(the generator applies the promotion rules of fuzz_semantics first) and returns the
result with its error bound. Tolerances for the GPU's approximate functions are those of
docs/language.md#accuracy (and tests/language/test_matrix_elementwise.py).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fuzz_semantics import (BOOL, F32, F64, I32, INF, INT_OF_BITS, SIGN_FREE, UINT_OF_BITS, DType,
                            Val, _clean_err, exact_val, f64, finish, int_objects, mantissa_bits, max_finite, merr,
                            min_normal, propagate_int, round_to, ulp, wrap_ints)

LOG2E = 1.4426950408889634
FP32_MIN_NORMAL = 2.0 ** -126


def _bcast(*vals: Val) -> list[Val]:
    shape = np.broadcast_shapes(*(v.shape for v in vals))
    return [Val(np.broadcast_to(v.value, shape), np.broadcast_to(v.err, shape), v.dt, v.product) for v in vals]


def _any_err(*vals: Val) -> np.ndarray:
    shape = np.broadcast_shapes(*(v.shape for v in vals))
    out = np.zeros(shape)
    for v in vals:
        out = np.maximum(out, np.broadcast_to(v.err, shape))
    return out


# ----------------------------------------------------------------------------- integer arithmetic

def _uint_view(x: np.ndarray, dt: DType) -> np.ndarray:
    return np.asarray(x, dtype=dt.np).view(UINT_OF_BITS[dt.bits].np) if dt.bits > 1 else np.asarray(x)


def int_binary(op: str, a: Val, b: Val, left_signed: bool | None = None) -> Val:
    """+ - * // % & | ^ << >> on two integers of one type dt (int1 only for & | ^).
    `left_signed`: whether `>>` is arithmetic (the left operand's own signedness)."""
    a, b = _bcast(a, b)
    dt = a.dt
    x, y = np.asarray(a.value, dtype=dt.np), np.asarray(b.value, dtype=dt.np)
    with np.errstate(all="ignore"):
        if dt.is_bool:
            fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[op]
            return propagate_int(fn(x, y), dt, a.err, b.err)
        ux, uy = _uint_view(x, dt), _uint_view(y, dt)
        if op in ("add", "sub", "mul"):
            fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
            out = fn(ux, uy).view(dt.np)  # modular arithmetic on the bits
        elif op in ("floordiv", "mod"):
            safe = np.where((a.err > 0) | (b.err > 0) | (y == 0), dt.np.type(1), y)
            qo = int_objects(x)
            do = int_objects(safe)
            q = np.array([abs(p) // abs(d) * (1 if (p < 0) == (d < 0) else -1) for p, d in zip(qo.ravel(), do.ravel())],
                         dtype=object).reshape(x.shape)
            r = qo - q * do
            out = wrap_ints(q if op == "floordiv" else r, dt)
        elif op in ("and", "or", "xor"):
            fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
            out = fn(ux, uy).view(dt.np)
        elif op == "shl":
            out = np.left_shift(ux, uy.astype(ux.dtype)).view(dt.np)
        elif op == "shr":
            arithmetic = dt.signed if left_signed is None else left_signed
            if arithmetic:
                sx = ux.view(INT_OF_BITS[dt.bits].np)
                out = np.right_shift(sx, uy.astype(sx.dtype)).view(dt.np)
            else:
                out = np.right_shift(ux, uy.astype(ux.dtype)).view(dt.np)
        elif op == "umulhi":
            xo, yo = int_objects(ux), int_objects(uy)
            out = wrap_ints((xo * yo) >> dt.bits, dt)
        else:
            raise ValueError(op)
    return propagate_int(np.asarray(out, dtype=dt.np).reshape(x.shape), dt, a.err, b.err)


def int_unary(op: str, a: Val) -> Val:
    dt = a.dt
    x = np.asarray(a.value, dtype=dt.np)
    with np.errstate(all="ignore"):
        if dt.is_bool:
            out = {"invert": np.logical_not(x), "neg": x, "abs": x}[op]
        elif op == "neg":
            out = (np.zeros_like(_uint_view(x, dt)) - _uint_view(x, dt)).view(dt.np)
        elif op == "invert":
            out = np.invert(_uint_view(x, dt)).view(dt.np)
        elif op == "abs":
            if dt.signed:
                neg = (np.zeros_like(_uint_view(x, dt)) - _uint_view(x, dt)).view(dt.np)
                out = np.where(x < 0, neg, x)
            else:
                out = x
        else:
            raise ValueError(op)
    return propagate_int(np.asarray(out, dtype=dt.np).reshape(x.shape), dt, a.err)


# ----------------------------------------------------------------------------- float arithmetic

def _product_slack(v: Val) -> np.ndarray:
    """The rounding of a product that a fused multiply-add skips: half an ulp, and a little
    more, so that a product rounded from a tie still counts as uncertain (the addend that
    decides the fused rounding may vanish in float64: `p * 6 - 1` with p near 1e27)."""
    if v.product is None:
        return np.zeros(v.shape)
    return ulp(f64(v.value), v.product) * (0.5 + 2.0 ** -12)


def _keep_uncertain(err: np.ndarray, *inputs: np.ndarray) -> np.ndarray:
    """err, at least SIGN_FREE wherever an input was uncertain (a bound propagated by
    multiplication can underflow to 0: 0 * (a zero of free sign) still has a free sign)."""
    uncertain = np.zeros(np.shape(err), bool)
    for e in inputs:
        uncertain = uncertain | (np.broadcast_to(e, np.shape(err)) > 0)
    return np.where(uncertain, np.maximum(err, SIGN_FREE), err)


def _subnormal32(x64: np.ndarray) -> np.ndarray:
    return (x64 != 0) & (np.abs(x64) < FP32_MIN_NORMAL)


def float_binary(op: str, a: Val, b: Val, approx_div: bool = True) -> Val:
    """+ - * / on two floats of one type dt. `/` of fp32 is div.full.f32 (2 ulp) unless
    `approx_div` is False (tl.div_rn, tl.fdiv(ieee_rounding=True))."""
    a, b = _bcast(a, b)
    dt = a.dt
    x, y = f64(a.value), f64(b.value)
    ea, eb = a.err, b.err
    with np.errstate(all="ignore"):
        if op in ("add", "sub"):
            r = x + y if op == "add" else x - y
            err = ea + eb + _product_slack(a) + _product_slack(b)
            return finish(r, err, dt)
        if op == "mul":
            r = x * y
            err = merr(x, eb) + merr(y, ea) + np.where((ea == 0) | (eb == 0), 0.0, ea * eb)
            return finish(r, _keep_uncertain(err, ea, eb), dt, product=dt)
        if op == "div":
            r = x / y
            # divided in two steps: |y| * (|y| - eb) overflows for quotients of huge values
            prop = np.where((ea == 0) & (eb == 0), 0.0,
                            (merr(x, eb) + merr(y, ea)) / np.abs(y) / np.maximum(np.abs(y) - eb, 0.0))
            prop = np.where((eb > 0) & (eb >= np.abs(y)), INF, prop)
            prop = np.where((eb > 0) & ~np.isfinite(x), INF, prop)
            err = _clean_err(prop)
            if approx_div and dt is F32:
                impl = 2.5 * ulp(r, F32) + np.where(np.abs(r) < 2 * FP32_MIN_NORMAL, FP32_MIN_NORMAL, 0.0)
                err = err + np.where(np.isfinite(r), impl, 0.0)
                # div.full.f32 on subnormal operands: flushed, possibly (a quotient of 0 or inf)
                err = np.where(_subnormal32(x) | _subnormal32(y), INF, err)
            return finish(r, _keep_uncertain(err, ea, eb), dt)
    raise ValueError(op)


def float_neg(a: Val) -> Val:
    return Val(-np.asarray(a.value), a.err, a.dt, a.product)


def float_abs(a: Val) -> Val:
    return Val(np.abs(np.asarray(a.value)), a.err, a.dt)


def compare(op: str, a: Val, b: Val) -> Val:
    """< <= > >= == != on one type; float comparisons are false on NaN except !=."""
    a, b = _bcast(a, b)
    fn = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
          "eq": np.equal, "ne": np.not_equal}[op]
    if a.dt.is_int:
        x, y = np.asarray(a.value, dtype=a.dt.np), np.asarray(b.value, dtype=b.dt.np)
        return propagate_int(fn(x, y), BOOL, a.err, b.err)
    x, y = f64(a.value), f64(b.value)
    with np.errstate(invalid="ignore"):
        out = fn(x, y)
        e = a.err + b.err
        # decided when the values are further apart than their uncertainties
        unsure = (e > 0) & ~(np.abs(x - y) > e)
    unsure |= np.isinf(e)
    return Val(out, np.where(unsure, INF, 0.0), BOOL)


def where(c: Val, a: Val, b: Val) -> Val:
    c, a, b = _bcast(c, a, b)
    cond = np.asarray(c.value, dtype=bool)
    v = np.where(cond, a.value, b.value).astype(a.dt.np)
    e = np.where(cond, a.err, b.err)
    e = np.where(c.err > 0, INF, e)
    products = [t for t in (a.product, b.product) if t is not None]
    product = min(products, key=mantissa_bits) if products else None  # the coarser rounding
    return Val(v, e, a.dt, product)


def extremum(op: str, a: Val, b: Val, propagate_nan: bool = False) -> Val:
    """tl.maximum / tl.minimum on one type (NaN ignored unless propagate_nan)."""
    a, b = _bcast(a, b)
    dt = a.dt
    if dt.is_int:
        x, y = np.asarray(a.value, dtype=dt.np), np.asarray(b.value, dtype=dt.np)
        fn = np.maximum if op == "max" else np.minimum
        return propagate_int(fn(x, y), dt, a.err, b.err)
    x, y = f64(a.value), f64(b.value)
    with np.errstate(invalid="ignore"):
        if propagate_nan:
            fn = np.maximum if op == "max" else np.minimum
            r = fn(x, y)
            err = np.maximum(a.err, b.err)
        else:
            fn = np.fmax if op == "max" else np.fmin
            r = fn(x, y)
            err = np.where(np.isnan(x), b.err, np.where(np.isnan(y), a.err, np.maximum(a.err, b.err)))
            # an undetermined operand may not be NaN at all
            err = np.where((np.isnan(x) & (a.err > 0)) | (np.isnan(y) & (b.err > 0)), INF, err)
        # max(-0, +0): either zero may come back
        zeros = (x == 0) & (y == 0) & (np.signbit(x) != np.signbit(y))
    err = np.where(zeros & (err == 0), SIGN_FREE, err)
    return finish(r, err, dt)


# ----------------------------------------------------------------------------- math functions

# ulps of fp32 that the compiled approximations (and NumPy) stay within, for exact inputs.
_FP32_ULPS = {"exp": 3, "exp2": 3, "log": 4, "log2": 4, "sin": 4, "cos": 4, "erf": 4, "sqrt": 3, "rsqrt": 3,
              "sqrt_rn": 0, "floor": 0, "ceil": 0, "trunc": 0}
# fp64: libdevice (2 ulp) against NumPy's float64 functions (1-2 ulp); rsqrt is
# rsqrt.approx.f64 (relative error up to 2^-50: 8 ulp at the top of a binade).
_FP64_ULPS = {"sqrt": 0, "sqrt_rn": 0, "floor": 0, "ceil": 0, "trunc": 0, "rsqrt": 8}
_MONOTONE = {"exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "floor", "ceil", "trunc", "erf"}

_erf = np.vectorize(math.erf, otypes=[np.float64])
MATH = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
    "sqrt": np.sqrt, "sqrt_rn": np.sqrt, "rsqrt": lambda v: 1.0 / np.sqrt(v), "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "erf": _erf,
}


def math_unary(name: str, a: Val) -> Val:
    """A math function of a float (fp16/bf16 computed in fp32 and rounded back)."""
    dt = a.dt
    fn = MATH[name]
    x = f64(a.value)
    ea = a.err
    with np.errstate(all="ignore"):
        r = fn(x)
        prop = np.zeros(x.shape)
        if np.any(ea):
            if name in _MONOTONE:
                lo, hi = fn(x - ea), fn(x + ea)
                prop = np.maximum(np.abs(hi - r), np.abs(r - lo))
                prop = np.where(np.isnan(lo) | np.isnan(hi), INF, prop)
            else:  # sin, cos: 1-Lipschitz
                prop = np.minimum(ea, 2.0)
            prop = np.where(ea == 0, 0.0, prop)
            prop = np.where(np.isinf(ea), INF, prop)
        if dt is F64:
            tol = _FP64_ULPS.get(name, 4) * ulp(r, F64)
            impl = np.where(np.isfinite(r), tol, 0.0)
        else:
            ulps = _FP32_ULPS[name]
            if name == "exp":
                ulps = ulps + np.abs(np.where(np.isfinite(x), x, 0.0)) * LOG2E
            impl = np.where(np.isfinite(r), ulps * ulp(r, F32), 0.0)
            if _FP32_ULPS[name]:
                # .ftz and friends: subnormal results may be zero, subnormal inputs read as zero
                impl = impl + np.where(np.isfinite(r) & (np.abs(r) < 2 * FP32_MIN_NORMAL), FP32_MIN_NORMAL, 0.0)
                sub = _subnormal32(x)
                if np.any(sub):
                    r0 = fn(np.copysign(0.0, x))
                    jump = np.where(np.isfinite(r0) & np.isfinite(r), np.abs(r0 - r), INF)
                    impl = impl + np.where(sub, jump, 0.0)
        err = _clean_err(prop) + impl
    return finish(r, _keep_uncertain(err, ea), dt)


def fma(a: Val, b: Val, c: Val) -> Val:
    """a * b + c rounded once."""
    a, b, c = _bcast(a, b, c)
    dt = a.dt
    x, y, z = f64(a.value), f64(b.value), f64(c.value)
    with np.errstate(all="ignore"):
        if dt is F64:
            flat = []
            for p, q, s in zip(x.ravel(), y.ravel(), z.ravel()):
                if math.isfinite(p) and math.isfinite(q) and not math.isfinite(s):
                    flat.append(s)  # the exact product is finite, even where float64's overflows
                elif not (math.isfinite(p) and math.isfinite(q) and math.isfinite(s)) or p == 0 or q == 0:
                    flat.append(p * q + s)
                else:
                    exact = Fraction(p) * Fraction(q) + Fraction(s)
                    try:
                        flat.append(float(exact) if exact != 0 else 0.0)
                    except OverflowError:
                        flat.append(INF if exact > 0 else -INF)
            r = np.array(flat, dtype=np.float64).reshape(x.shape)
        else:
            p = x * y  # exact: at most 48 significant bits
            s = p + z
            # the rounding error of s (TwoSum), then s rounded to odd: one correct rounding below
            bp = s - z
            t = (p - bp) + (z - (s - bp))
            bits = s.view(np.uint64) if s.ndim else np.array([s]).view(np.uint64)[0]
            fix = np.isfinite(s) & (t != 0) & ((np.asarray(bits) & np.uint64(1)) == 0)
            r = np.where(fix, np.nextafter(s, np.where(t > 0, INF, -INF)), s)
        err = merr(x, b.err) + merr(y, a.err) + np.where((a.err == 0) | (b.err == 0), 0.0, a.err * b.err) + c.err
    return finish(r, _keep_uncertain(err, a.err, b.err, c.err), dt)


# ----------------------------------------------------------------------------- reductions

def _move_axis(v: np.ndarray, axis):
    """v with the reduced axis last (axis None: flattened)."""
    if axis is None:
        return np.reshape(v, (-1,))
    return np.moveaxis(v, axis, -1)


def _restore(result: np.ndarray, shape: tuple, axis, keep_dims: bool) -> np.ndarray:
    if not keep_dims:
        return result
    if axis is None:
        return np.reshape(result, (1,) * len(shape))
    return np.expand_dims(result, axis)


def _lowbit(x64: np.ndarray) -> np.ndarray:
    """The largest power of two dividing each finite nonzero value (inf elsewhere)."""
    m, e = np.frexp(np.where(np.isfinite(x64) & (x64 != 0), x64, 1.0))
    mant = np.abs(m * 2.0 ** 53).astype(np.int64)
    low = (mant & -mant).astype(np.float64)
    out = np.ldexp(low, e - 53)
    return np.where(np.isfinite(x64) & (x64 != 0), out, INF)


def _sum_lines(x: np.ndarray, err: np.ndarray, slack: np.ndarray, dt: DType, cumulative: bool):
    """Sums (or prefix sums) along the last axis of float64 values: exact value, bound."""
    n_terms = x.shape[-1]
    acc = np.cumsum if cumulative else (lambda v, axis: np.sum(v, axis=axis))
    with np.errstate(all="ignore"):
        finite = np.where(np.isfinite(x), x, 0.0)
        total = acc(finite, axis=-1)
        magnitude = acc(np.abs(finite), axis=-1)
        nan = acc(np.isnan(x), axis=-1) > 0
        pos = acc(x == INF, axis=-1) > 0
        neg = acc(x == -INF, axis=-1) > 0
        count = np.cumsum(np.ones_like(x), axis=-1) if cumulative else np.full(total.shape, float(n_terms))
        all_neg_zero = acc((x == 0) & np.signbit(x), axis=-1) == count
        propagated = acc(err + slack, axis=-1)
        gamma = np.maximum(count - 1, 0) * 2.0 ** -mantissa_bits(dt)
        rounding = gamma * magnitude
        # every partial sum exact: all terms multiples of g and the magnitudes below g * 2^(p+1)
        g = (np.minimum.accumulate(_lowbit(x), axis=-1) if cumulative else np.min(_lowbit(x), axis=-1))
        exact_sums = magnitude <= g * 2.0 ** (mantissa_bits(dt) + 1)
        rounding = np.where(exact_sums | (magnitude == 0), 0.0, rounding)
        value = np.where(total == 0, np.where(all_neg_zero, -0.0, 0.0), total)
        value = np.where(pos, INF, value)
        value = np.where(neg, -INF, value)
        value = np.where(nan | (pos & neg), np.nan, value)
        err = propagated + rounding
        # partial sums may overflow (and then meet an infinity of the other sign)
        overflow = magnitude * (1 + gamma) + propagated > max_finite(dt)
        err = np.where(overflow & ~nan, INF, err)
        err = np.where((pos | neg) & (propagated > 0), INF, err)
    return value, err


def reduce_sum(a: Val, axis, keep_dims: bool) -> Val:
    """tl.sum of a value already converted to its accumulation type."""
    dt = a.dt
    if dt.is_int:
        x = _move_axis(np.asarray(a.value, dtype=dt.np), axis)
        e = _move_axis(a.err, axis)
        with np.errstate(all="ignore"):
            out = np.sum(_uint_view(x, dt), axis=-1, dtype=_uint_view(x, dt).dtype).view(dt.np)
        r = propagate_int(np.asarray(out), dt, np.max(e, axis=-1) if e.size else 0)
        return Val(_restore(r.value, a.shape, axis, keep_dims), _restore(r.err, a.shape, axis, keep_dims), dt)
    x = _move_axis(f64(a.value), axis)
    e = _move_axis(a.err, axis)
    slack = _move_axis(_product_slack(a), axis)
    value, err = _sum_lines(x, e, slack, dt, cumulative=False)
    r = finish(value, err, dt)
    return Val(_restore(r.value, a.shape, axis, keep_dims), _restore(r.err, a.shape, axis, keep_dims), dt)


def reduce_xor(a: Val, axis, keep_dims: bool) -> Val:
    dt = a.dt
    x = _move_axis(_uint_view(a.value, dt), axis)
    e = _move_axis(a.err, axis)
    out = np.bitwise_xor.reduce(x, axis=-1).view(dt.np)
    r = propagate_int(np.asarray(out), dt, np.max(e, axis=-1))
    return Val(_restore(r.value, a.shape, axis, keep_dims), _restore(r.err, a.shape, axis, keep_dims), dt)


def reduce_extremum(op: str, a: Val, axis, keep_dims: bool) -> Val:
    """tl.max / tl.min of a value already widened (NaN ignored)."""
    dt = a.dt
    if dt.is_int:
        x = _move_axis(np.asarray(a.value, dtype=dt.np), axis)
        e = _move_axis(a.err, axis)
        out = (np.max if op == "max" else np.min)(x, axis=-1)
        r = propagate_int(np.asarray(out), dt, np.max(e, axis=-1))
    else:
        x = _move_axis(f64(a.value), axis)
        e = _move_axis(a.err, axis)
        fn = np.fmax if op == "max" else np.fmin
        with np.errstate(all="ignore"):
            value = fn.reduce(x, axis=-1)
            lo = fn.reduce(np.where(np.isnan(x), np.nan, x - e), axis=-1)
            hi = fn.reduce(np.where(np.isnan(x), np.nan, x + e), axis=-1)
            err = np.where(np.max(e, axis=-1) > 0, np.maximum(np.abs(hi - value), np.abs(value - lo)), 0.0)
            err = _keep_uncertain(err, np.max(e, axis=-1))
            err = np.where(np.isnan(err) | np.isinf(np.max(e, axis=-1)), INF, err)
            both_zeros = np.any((x == 0) & np.signbit(x), axis=-1) & np.any((x == 0) & ~np.signbit(x), axis=-1)
        err = np.where((value == 0) & both_zeros & (err == 0), SIGN_FREE, err)
        r = finish(value, err, dt)
    return Val(_restore(r.value, a.shape, axis, keep_dims), _restore(r.err, a.shape, axis, keep_dims), dt)


def reduce_arg(op: str, a: Val, axis, keep_dims: bool) -> tuple[Val, Val]:
    """(value, int32 index) of the max/min: NaNs are skipped (a line of NaNs gives index 0),
    ties go to the lowest index."""
    dt = a.dt
    xs = _move_axis(np.asarray(a.value, dtype=dt.np), axis)
    es = _move_axis(a.err, axis)
    lines_x = xs.reshape(-1, xs.shape[-1])
    lines_e = es.reshape(-1, xs.shape[-1])
    index, unsure = [], []
    for line, errs in zip(lines_x, lines_e):
        v = f64(line) if dt.is_float else np.asarray(line)  # 64-bit integers do not fit a float64
        nan = np.isnan(v) if dt.is_float else np.zeros(v.shape, bool)
        if nan.all():
            index.append(0)
            unsure.append(bool(np.any(errs > 0)))
            continue
        if nan.any():  # skipped: the extreme of the other values
            numbers = np.flatnonzero(~nan)
            i = int(numbers[np.argmax(v[numbers]) if op == "max" else np.argmin(v[numbers])])
            index.append(i)
            unsure.append(bool(np.any(errs > 0)))  # an uncertain value might be a NaN, or not
            continue
        i = int(np.argmax(v) if op == "max" else np.argmin(v))
        index.append(i)
        if np.any(errs > 0):
            if op == "max":
                others = np.delete(v + errs, i)
                unsure.append(bool(others.size) and not bool(v[i] - errs[i] > others.max()))
            else:
                others = np.delete(v - errs, i)
                unsure.append(bool(others.size) and not bool(v[i] + errs[i] < others.min()))
        else:
            unsure.append(False)
    out_shape = xs.shape[:-1]
    idx = np.array(index, dtype=np.int32).reshape(out_shape)
    idx_err = np.where(np.array(unsure, dtype=bool).reshape(out_shape), INF, 0.0)
    taken = np.take_along_axis(xs, idx[..., None].astype(np.int64), axis=-1)[..., 0]
    val_err = np.take_along_axis(es, idx[..., None].astype(np.int64), axis=-1)[..., 0]
    val_err = np.where(idx_err > 0, INF, val_err)
    values = Val(_restore(np.asarray(taken, dtype=dt.np), a.shape, axis, keep_dims),
                 _restore(val_err, a.shape, axis, keep_dims), dt)
    indices = Val(_restore(idx, a.shape, axis, keep_dims), _restore(idx_err, a.shape, axis, keep_dims), I32)
    return values, indices


# ----------------------------------------------------------------------------- scans

def _scan_axis(v: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    v = np.moveaxis(v, axis, -1)
    return v[..., ::-1] if reverse else v


def _unscan_axis(v: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    if reverse:
        v = v[..., ::-1]
    return np.moveaxis(v, -1, axis)


def scan_sum(a: Val, axis: int, reverse: bool) -> Val:
    """tl.cumsum of a value already converted to its accumulation type (or an
    associative_scan with an add combine: the input's own type)."""
    dt = a.dt
    if dt.is_int:
        x = _scan_axis(_uint_view(a.value, dt), axis, reverse)
        e = _scan_axis(a.err, axis, reverse)
        with np.errstate(all="ignore"):
            out = np.cumsum(x, axis=-1, dtype=x.dtype).view(dt.np)
        err = np.where(np.maximum.accumulate(e, axis=-1) > 0, INF, 0.0)
        return Val(_unscan_axis(out, axis, reverse), _unscan_axis(err, axis, reverse), dt)
    x = _scan_axis(f64(a.value), axis, reverse)
    e = _scan_axis(a.err, axis, reverse)
    slack = _scan_axis(_product_slack(a), axis, reverse)
    value, err = _sum_lines(x, e, slack, dt, cumulative=True)
    r = finish(value, err, dt)
    return Val(_unscan_axis(r.value, axis, reverse), _unscan_axis(r.err, axis, reverse), dt)


def scan_max(op: str, a: Val, axis: int, reverse: bool) -> Val:
    """associative_scan with a tl.maximum / tl.minimum combine (NaN ignored)."""
    dt = a.dt
    e = _scan_axis(a.err, axis, reverse)
    if dt.is_int:
        x = _scan_axis(np.asarray(a.value, dtype=dt.np), axis, reverse)
        out = (np.maximum if op == "max" else np.minimum).accumulate(x, axis=-1)
        err = np.where(np.maximum.accumulate(e, axis=-1) > 0, INF, 0.0)
        return Val(_unscan_axis(out, axis, reverse), _unscan_axis(err, axis, reverse), dt)
    x = _scan_axis(f64(a.value), axis, reverse)
    fn = np.fmax if op == "max" else np.fmin
    with np.errstate(all="ignore"):
        value = fn.accumulate(x, axis=-1)
        lo = fn.accumulate(np.where(np.isnan(x), np.nan, x - e), axis=-1)
        hi = fn.accumulate(np.where(np.isnan(x), np.nan, x + e), axis=-1)
        emax = np.maximum.accumulate(e, axis=-1)
        err = _keep_uncertain(np.where(emax > 0, np.maximum(np.abs(hi - value), np.abs(value - lo)), 0.0), emax)
        err = np.where(np.isnan(err) | np.isinf(emax), INF, err)
        negz = np.maximum.accumulate((x == 0) & np.signbit(x), axis=-1)
        posz = np.maximum.accumulate((x == 0) & ~np.signbit(x), axis=-1)
    err = np.where((value == 0) & negz & posz & (err == 0), SIGN_FREE, err)
    r = finish(value, err, dt)
    return Val(_unscan_axis(r.value, axis, reverse), _unscan_axis(r.err, axis, reverse), dt)


def scan_prod(a: Val, axis: int, reverse: bool) -> Val:
    """tl.cumprod: integers wrap in their own type; floats within a relative bound where
    no partial product (in any order) can overflow or become subnormal."""
    dt = a.dt
    e = _scan_axis(a.err, axis, reverse)
    if dt.is_int:
        if dt.is_bool:
            x = _scan_axis(np.asarray(a.value, dtype=bool), axis, reverse)
            out = np.logical_and.accumulate(x, axis=-1)
        else:
            x = _scan_axis(_uint_view(a.value, dt), axis, reverse)
            with np.errstate(all="ignore"):
                out = np.multiply.accumulate(x, axis=-1, dtype=x.dtype).view(dt.np)
        err = np.where(np.maximum.accumulate(e, axis=-1) > 0, INF, 0.0)
        return Val(_unscan_axis(out, axis, reverse), _unscan_axis(err, axis, reverse), dt)
    x = _scan_axis(f64(a.value), axis, reverse)
    mant = mantissa_bits(dt)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x)
        mag = np.where(finite & (x != 0), np.abs(x), 1.0)
        log_big = np.cumsum(np.log2(np.maximum(mag, 1.0)), axis=-1)
        log_small = np.cumsum(np.log2(np.minimum(mag, 1.0)), axis=-1)
        safe = (log_big < math.log2(max_finite(dt)) - 1) & (log_small > math.log2(min_normal(dt)) + 1)
        value = np.multiply.accumulate(x, axis=-1)
        nan = np.maximum.accumulate(np.isnan(x), axis=-1)
        zero = np.maximum.accumulate(x == 0, axis=-1)
        inf = np.maximum.accumulate(np.isinf(x), axis=-1)
        neg = np.cumsum(np.signbit(x), axis=-1) % 2 == 1
        value = np.where(zero & ~inf & ~nan, np.where(neg, -0.0, 0.0), value)
        value = np.where(inf & ~zero & ~nan, np.where(neg, -INF, INF), value)
        value = np.where(nan | (zero & inf), np.nan, value)
        count = np.cumsum(np.ones_like(x), axis=-1)
        relative = np.cumsum(np.where(e == 0, 0.0, e / np.abs(x)), axis=-1)
        integers = np.all(x == np.trunc(x), axis=-1, keepdims=True) & np.isfinite(x).all(axis=-1, keepdims=True)
        exact = integers & (np.abs(value) <= 2.0 ** (mant + 1))
        gamma = np.where(exact, 0.0, (count - 1) * 2.0 ** -mant)
        err = np.abs(value) * 2 * (gamma + relative)
        err = np.where(relative > 0.01, INF, err)
        emax = np.maximum.accumulate(e, axis=-1)
        special = nan | zero | inf
        err = np.where(special, np.where(emax > 0, INF, 0.0), np.where(safe, err, INF))
        # special results are exact only if no finite partial product can overflow / vanish
        err = np.where(special & ~nan & ~safe, INF, err)
        err = np.where(np.isnan(err), INF, err)
    r = finish(value, err, dt)
    return Val(_unscan_axis(r.value, axis, reverse), _unscan_axis(r.err, axis, reverse), dt)


# ----------------------------------------------------------------------------- sort

def sort_lines(a: Val, dim: int, descending: bool) -> Val:
    dt = a.dt
    x = np.moveaxis(np.asarray(a.value, dtype=dt.np), dim, -1)
    e = np.moveaxis(a.err, dim, -1)
    if dt.is_int:
        out = np.sort(x, axis=-1, kind="stable")
        if descending:
            out = out[..., ::-1]
        err = np.broadcast_to(np.where(np.max(e, axis=-1, keepdims=True) > 0, INF, 0.0), x.shape)
        return Val(np.moveaxis(out, -1, dim), np.moveaxis(np.array(err), -1, dim), dt)
    v = f64(x)
    with np.errstate(invalid="ignore"):
        out = np.sort(v, axis=-1)
        if descending:
            out = out[..., ::-1]
        emax = np.max(e, axis=-1, keepdims=True)
        err = np.broadcast_to(emax, x.shape).copy()
        has_nan = np.any(np.isnan(v), axis=-1, keepdims=True)
        both_zeros = (np.any((v == 0) & np.signbit(v), axis=-1, keepdims=True)
                      & np.any((v == 0) & ~np.signbit(v), axis=-1, keepdims=True))
    err = np.where((out == 0) & both_zeros & (err == 0), SIGN_FREE, err)
    err = np.where(np.broadcast_to(has_nan, x.shape), INF, err)
    r = finish(out, err, dt)
    return Val(np.moveaxis(r.value, -1, dim), np.moveaxis(r.err, -1, dim), dt)


# ----------------------------------------------------------------------------- helpers for the generator

def constant(value, dt: DType, shape=()) -> Val:
    """A Python number converted to dt (floats rounded to nearest, ints exact)."""
    if dt.is_float:
        v = round_to(np.full(shape, float(value)), dt)
        return Val(v, np.zeros(shape), dt)
    if dt.is_bool:
        return exact_val(np.full(shape, bool(value)), dt)
    return Val(wrap_ints(np.full(shape, int(value), dtype=object), dt), np.zeros(shape), dt)
