"""Reductions and scans, op x dtype x layout (shape, axis, keep_dims / reverse), on both
backends.

tl.sum / tl.max / tl.min / tl.argmax / tl.argmin / tl.xor_sum reduce 1-D blocks (axis 0
and axis=None) and 2-D blocks (axis 0, 1, -1 and None), with and without keep_dims;
tl.cumsum / tl.cumprod scan 1-D and 2-D blocks along each axis, forward and reversed. Each
reduced (or scanned) vector gets one of a set of scenarios (random values, NaN, +-inf,
both infinities, subnormals only, all -0.0, the largest finite value, many ties, INT_MIN
and INT_MAX...), with enough programs that every scenario appears in every case.

Integers are bit-exact (wrapping in the accumulation type: Triton sums integers narrower
than 32 bits in int32/uint32). Float sums and products combine in an order the
implementation chooses, so they are checked against the exact value with the first-order
error bound of any summation order: |error| <= (n + 1) u sum|x_i| for sums and
2 (n + 1) u |prod| for products (u the unit roundoff of the accumulation type: bf16 scans
accumulate in fp32, as Triton promotes them); NaN, infinities and signed zeros (a sum of
-0.0s is -0.0) must be exact. max/min ignore NaN (maxnum), and so do argmax/argmin (as
Triton 3.8's): they return the lowest index of the extreme number, and 0 for a line of
NaNs.

The result types Triton 3.6 gives are checked by test_reduction_result_type (the value
tests store into an output of Triton's result type, so they compare values only).
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

import tilec
import tilec.language as tl
from matrix_reference import (ALL_DTYPES, BITS, FLOAT_FORMAT, INT_DTYPES, SHAPES, TL, as_ints, block_offsets,
                              check_exact, check_float, f64, int_range, is_float, is_int, is_signed, launch,
                              max_finite, min_normal, min_subnormal, mn, numel, random_values, round_to, shape_id,
                              to_dtype, wrap)


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


UNIT_ROUNDOFF = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24, "fp64": 2.0 ** -53}


# ----------------------------------------------------------------------------- kernels

@tilec.jit
def _result_offsets(M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    """Offsets of this program's results: one per reduced vector, shaped like the result."""
    pid = tl.program_id(0)
    if N == 0 or AXIS is None:  # one result per program
        if not KEEP:
            offs = pid
        elif N == 0:
            offs = pid + tl.arange(0, 1)
        else:
            offs = pid + tl.arange(0, 1)[:, None] + tl.arange(0, 1)[None, :]
    elif AXIS == 0:  # one result per column
        if KEEP:
            offs = pid * N + tl.arange(0, 1)[:, None] * N + tl.arange(0, N)[None, :]
        else:
            offs = pid * N + tl.arange(0, N)
    else:  # axis 1 (or -1): one result per row
        if KEEP:
            offs = pid * M + tl.arange(0, M)[:, None] + tl.arange(0, 1)[None, :]
        else:
            offs = pid * M + tl.arange(0, M)
    return offs


@tilec.jit
def reduce_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr, AXIS: tl.constexpr,
                  KEEP: tl.constexpr):
    x = tl.load(x_ptr + block_offsets(M, N))
    if OP == "sum":
        r = tl.sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "max":
        r = tl.max(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "min":
        r = tl.min(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmax":
        r = tl.argmax(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmin":
        r = tl.argmin(x, axis=AXIS, keep_dims=KEEP)
    else:
        tl.static_assert(OP == "xor_sum")
        r = tl.xor_sum(x, axis=AXIS, keep_dims=KEEP)
    tl.store(out_ptr + _result_offsets(M, N, AXIS, KEEP), r)


@tilec.jit
def scan_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr, AXIS: tl.constexpr,
                REVERSE: tl.constexpr):
    offs = block_offsets(M, N)
    x = tl.load(x_ptr + offs)
    if OP == "cumsum":
        r = tl.cumsum(x, axis=AXIS, reverse=REVERSE)
    else:
        tl.static_assert(OP == "cumprod")
        r = tl.cumprod(x, axis=AXIS, reverse=REVERSE)
    tl.store(out_ptr + offs, r)


# ----------------------------------------------------------------------------- result types (Triton 3.6)

def triton_result_type(op: str, dt: str) -> str:
    """standard.py of Triton 3.6: max/min promote bf16 and every type narrower than 32 bits
    (fp16 -> fp32, int8/16, uint8/16 and int1 -> int32); sum, cumsum pick int32/uint32 for
    narrower integers (int1 counts as unsigned); cumsum and cumprod promote bf16 to fp32;
    argmax/argmin give int32; xor_sum keeps the type."""
    if op in ("argmax", "argmin"):
        return "int32"
    if op == "xor_sum":
        return dt
    if op in ("max", "min"):
        if BITS[dt] < 32:
            return "fp32" if is_float(dt) else "int32"
        return dt
    if op in ("cumsum", "cumprod") and dt == "bf16":
        return "fp32"
    if op in ("sum", "cumsum") and (is_int(dt) or dt == "bool") and BITS[dt] < 32:
        return "int32" if is_signed(dt) else "uint32"
    return dt


@tilec.jit
def _type_kernel(x_ptr, OP: tl.constexpr, RT: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16)[:, None] * 8 + tl.arange(0, 8)[None, :])
    if OP == "sum":
        r = tl.sum(x, axis=1)
    elif OP == "max":
        r = tl.max(x, axis=1)
    elif OP == "min":
        r = tl.min(x, axis=0)
    elif OP == "argmax":
        r = tl.argmax(x, axis=1)
    elif OP == "argmin":
        r = tl.argmin(x, axis=None)
    elif OP == "xor_sum":
        r = tl.xor_sum(x, axis=0)
    elif OP == "cumsum":
        r = tl.cumsum(x, axis=1)
    else:
        r = tl.cumprod(x, axis=0)
    tl.static_assert(r.dtype == RT, "the result type differs from Triton's")


_TYPE_OPS = ("sum", "max", "min", "argmax", "argmin", "xor_sum", "cumsum", "cumprod")


@pytest.mark.parametrize("op,dt", [pytest.param(op, dt, id=f"{op}-{dt}") for op in _TYPE_OPS for dt in ALL_DTYPES
                                   if not (op == "xor_sum" and is_float(dt))])
def test_reduction_result_type(monkeypatch, fresh_cache, op, dt):
    """The result type of each reduction and scan, as Triton 3.6 gives it (the semantic layer
    is shared by both backends; this runs it in the interpreter)."""
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    x = to_dtype(np.arange(128) % 7 == 1, "bool") if dt == "bool" else to_dtype(list(np.arange(128) % 7), dt)
    _type_kernel[(1,)](x, OP=op, RT=TL[triton_result_type(op, dt)])


# ----------------------------------------------------------------------------- data

def _float_vector(rng, dt: str, op: str, scenario: int, length: int) -> np.ndarray:
    """One reduced vector of floats (float64 values exactly representable in dt)."""
    big, sub = max_finite(dt), min_subnormal(dt)
    small_scale = 10.0 if dt == "fp16" else 1000.0  # fp16 sums must not overflow in any order
    if op in ("sum", "cumsum"):
        base = rng.standard_normal(length) * 10.0 ** rng.uniform(-3, 1 if dt == "fp16" else 3, length)
        base = np.clip(base, -small_scale * 3, small_scale * 3)
    elif op == "cumprod":
        base = rng.uniform(0.9, 1.1, length) * np.where(rng.random(length) < 0.3, -1.0, 1.0)
    else:  # max/min/argmax/argmin: many ties
        base = rng.integers(-4, 5, length).astype(np.float64)
    v = f64(round_to(base, dt))
    pos = int(rng.integers(0, length))
    pos2 = int(rng.integers(0, length))
    if op == "cumprod":
        unit = np.where(rng.random(length) < 0.5, -1.0, 1.0)
        s = scenario % 8
        if s == 0:
            return v
        v = unit
        if s == 1:
            v[pos] = math.nan
        elif s == 2:
            v[pos] = math.inf
        elif s == 3:  # an infinity and a zero: NaN from where both have been seen
            v[pos], v[pos2] = math.inf, 0.0
        elif s == 4:
            v[pos] = big
        elif s == 5:
            v[pos] = sub
        elif s == 6:
            v[pos] = -0.0
        else:
            v[pos] = 0.0
        return v
    s = scenario % 9
    if s == 1:
        v[pos] = math.nan
    elif s == 2:
        v[pos] = math.inf
    elif s == 3:
        v[pos] = -math.inf
    elif s == 4:
        v[pos], v[pos2] = math.inf, -math.inf
        if length == 1:
            v[0] = math.nan if op in ("sum", "cumsum") else -math.inf
    elif s == 5:  # subnormals only (sums of few of them are exact)
        v = np.where(rng.random(length) < min(1.0, 24.0 / length), rng.choice([-2.0, -1.0, 1.0, 2.0], length) * sub,
                     0.0)
        v[pos] = sub
    elif s == 6:  # all -0.0 (sum: -0.0; max/min: any zero)
        v = np.full(length, -0.0)
        if op not in ("sum", "cumsum"):
            v[rng.random(length) < 0.5] = 0.0
    elif s == 7:  # the largest finite value, with values too small to reach infinity in any order
        if op in ("sum", "cumsum"):
            mant, _, emax = FLOAT_FORMAT[dt]
            ulp_big = 2.0 ** (emax - mant)
            v = f64(round_to(rng.uniform(-1, 1, length) * ulp_big / (8 * length), dt))
        v[pos] = big if rng.random() < 0.5 or op in ("sum", "cumsum") else -big
    elif s == 8:  # NaN everywhere but (maybe) one element (max/min/arg), or signed zeros and one 1.5 (sum)
        if op in ("max", "min", "argmax", "argmin"):
            v = np.full(length, math.nan)
            v[pos] = 3.0
            if rng.random() < 0.3:
                v[:] = math.nan
        elif op in ("sum", "cumsum"):
            v = np.where(rng.random(length) < 0.5, 0.0, -0.0)
            v[pos] = 1.5
    return v


def _int_vector(rng, dt: str, op: str, scenario: int, length: int) -> list[int]:
    if dt == "bool":
        s = scenario % 4
        v = [int(b) for b in rng.integers(0, 2, length)]
        if s == 1:
            v = [0] * length
        elif s == 2:
            v = [1] * length
        elif s == 3:
            v = [0] * length
            v[int(rng.integers(0, length))] = 1
        return v
    lo, hi = int_range(dt)
    s = scenario % 5
    if op == "cumprod":
        small = [int(c) for c in rng.choice([-1, 1, 1, 2, -2, 3] if is_signed(dt) else [1, 1, 2, 3], length)]
        if s == 1:
            small[int(rng.integers(0, length))] = hi
        elif s == 2:
            small[int(rng.integers(0, length))] = lo if is_signed(dt) else hi - 1
        elif s == 3:
            small[int(rng.integers(0, length))] = 0
        return small
    if s == 0:
        return as_ints(random_values(rng, dt, length))
    if s == 1:  # small values, many ties
        return [int(c) for c in rng.integers(-3 if is_signed(dt) else 0, 4, length)]
    if s == 2:
        v = as_ints(random_values(rng, dt, length))
        v[int(rng.integers(0, length))] = lo
        v[int(rng.integers(0, length))] = hi
        return v
    if s == 3:
        return [hi if is_signed(dt) else lo] * length
    v = [int(c) for c in rng.choice([-1, 0] if is_signed(dt) else [0, hi], length)]
    return v


N_SCENARIOS = 9


def _vectors(rng, dt: str, op: str, count: int, length: int) -> np.ndarray:
    """count vectors of `length` elements of dt; vector i follows scenario i."""
    if is_float(dt):
        rows = [_float_vector(rng, dt, op, i, length) for i in range(count)]
        return round_to(np.array(rows, dtype=np.float64).reshape(count, length), dt)
    rows = [_int_vector(rng, dt, op, i, length) for i in range(count)]
    flat = [c for r in rows for c in r]
    if dt == "bool":
        return np.array(flat, dtype=bool).reshape(count, length)
    return wrap(flat, dt).reshape(count, length)


def _layout_data(rng, dt: str, op: str, shape, axis):
    """(blocks as the kernel reads them, vectors as reduced) with at least N_SCENARIOS
    vectors: blocks has shape (P,) + shape, vectors (R, L)."""
    m, n = mn(shape)
    if n == 0 or axis is None:
        per_block, length = 1, numel(shape)
    elif axis == 0:
        per_block, length = n, m
    else:
        per_block, length = m, n
    programs = -(-N_SCENARIOS // per_block)
    vectors = _vectors(rng, dt, op, programs * per_block, length)
    if n == 0 or axis is None:
        blocks = vectors.reshape((programs,) + tuple(shape))
    elif axis == 0:  # vector (p, j) is column j of block p
        blocks = vectors.reshape(programs, n, m).transpose(0, 2, 1)
    else:
        blocks = vectors.reshape(programs, m, n)
    return np.ascontiguousarray(blocks).reshape(-1), vectors, programs


# ----------------------------------------------------------------------------- references

def _float_sum_check(got, vectors, dt, rt, what):
    """Each result against the exact sum, within the bound that holds for any order."""
    u = UNIT_ROUNDOFF[rt]
    failures = []
    for i, vec in enumerate(f64(vectors)):
        g = float(f64(got).reshape(-1)[i])
        if np.isnan(vec).any() or (np.isposinf(vec).any() and np.isneginf(vec).any()):
            ok = math.isnan(g)
            exp = math.nan
        elif np.isinf(vec).any():
            exp = math.inf if np.isposinf(vec).any() else -math.inf
            ok = g == exp
        else:
            exp = math.fsum(vec)
            if exp == 0 and np.all(np.signbit(vec)):
                exp = -0.0
            bound = (len(vec) + 1) * u * float(np.sum(np.abs(vec))) + u * abs(exp)
            ok = math.isfinite(g) and abs(g - exp) <= bound
            if exp == 0 and bound == 0:
                ok = ok and math.copysign(1, g) == math.copysign(1, exp)
        if not ok:
            failures.append(f"  vector {i} ({len(vec)} values, e.g. {list(vec[:6])}): got {g!r}, expected {exp!r}")
    if failures:
        pytest.fail(f"{what}: {len(failures)} of {len(vectors)} results wrong\n" + "\n".join(failures[:10]))


def _extreme_index(vec: np.ndarray, largest: bool) -> int:
    numbers = vec[~np.isnan(vec)]
    if not numbers.size:  # only NaNs: all tie, the first wins
        return 0
    target = numbers.max() if largest else numbers.min()
    return int(np.flatnonzero(vec == target)[0])


def reduction_reference(op: str, dt: str, vectors: np.ndarray):
    """Integer and exact references (not float sums): one value per vector."""
    rt = triton_result_type(op, dt)
    if op in ("argmax", "argmin"):
        if is_float(dt):
            return np.array([_extreme_index(v, op == "argmax") for v in f64(vectors)], dtype=np.int32), rt
        rows = [as_ints(v) for v in vectors]
        return np.array([(r.index(max(r)) if op == "argmax" else r.index(min(r))) for r in rows], dtype=np.int32), rt
    if is_float(dt):  # max / min ignore NaN
        v64 = f64(vectors)
        with np.errstate(all="ignore"):
            fn = np.fmax if op == "max" else np.fmin
            return round_to(fn.reduce(v64, axis=1), rt), rt
    rows = [as_ints(v) for v in vectors]
    if op == "sum":
        vals = [sum(r) for r in rows]
    elif op == "max":
        vals = [max(r) for r in rows]
    elif op == "min":
        vals = [min(r) for r in rows]
    else:
        vals = []
        for r in rows:
            acc = 0
            for c in r:
                acc ^= c
            vals.append(acc)
    if rt == "bool":
        return np.array([v % 2 if op == "xor_sum" else v for v in vals], dtype=bool), rt
    return wrap(vals, rt), rt


# ----------------------------------------------------------------------------- reduction matrix

REDUCE_OPS = {"sum": ALL_DTYPES, "max": ALL_DTYPES, "min": ALL_DTYPES, "argmax": ALL_DTYPES, "argmin": ALL_DTYPES,
              "xor_sum": INT_DTYPES + ("bool",)}

LAYOUTS = [(s, axis, keep) for s in SHAPES if len(s) == 1 for axis in (0, None) for keep in (False, True)] + \
          [(s, axis, keep) for s in SHAPES if len(s) == 2 for axis in (0, 1, None) for keep in (False, True)]
# Axis -1 in place of 1 where keep_dims is False.
LAYOUTS = [(s, -1 if (a == 1 and not k) else a, k) for s, a, k in LAYOUTS]
PER_COMBO = 6


def _layout_id(shape, axis, keep) -> str:
    return f"{shape_id(shape)}-axis{axis}{'-keep' if keep else ''}"


def _reduce_cases():
    cases = []
    for oi, (op, dtypes) in enumerate(REDUCE_OPS.items()):
        for di, dt in enumerate(dtypes):
            for j in range(PER_COMBO):
                shape, axis, keep = LAYOUTS[(di * PER_COMBO + j + 5 * oi) % len(LAYOUTS)]
                cases.append(pytest.param(op, dt, shape, axis, keep, id=f"{op}-{dt}-{_layout_id(shape, axis, keep)}"))
    return cases


@pytest.mark.parametrize("op,dt,shape,axis,keep", _reduce_cases())
def test_reduce(backend, op, dt, shape, axis, keep):
    rng = _rng("reduce", op, dt, shape, axis, keep)
    norm_axis = None if axis is None else axis % len(shape)
    x, vectors, programs = _layout_data(rng, dt, op, shape, norm_axis)
    m, n = mn(shape)
    what = f"tl.{op} {dt} {_layout_id(shape, axis, keep)}"
    if op == "sum" and is_float(dt):
        rt = triton_result_type(op, dt)
        with np.errstate(invalid="ignore"):  # inf + -inf: the expected NaN
            expected = round_to(np.array([math.fsum(v) if np.isfinite(v).all() else np.sum(v)
                                          for v in f64(vectors)]), rt)
        (got,) = launch(reduce_kernel, backend, [x], [(expected, rt)], (programs,), M=m, N=n, OP=op, AXIS=axis,
                        KEEP=keep)
        _float_sum_check(got, vectors, dt, rt, what)
        return
    ref, rt = reduction_reference(op, dt, vectors)
    (got,) = launch(reduce_kernel, backend, [x], [(ref, rt)], (programs,), M=m, N=n, OP=op, AXIS=axis, KEEP=keep)
    if is_float(rt):
        # max(-0, +0) may be either zero (maxnum); the values otherwise exact.
        check_float(got, ref, rt, zero_sign=False, what=what)
    else:
        check_exact(got, ref, rt, what=what)


# ----------------------------------------------------------------------------- scans

SCAN_LAYOUTS = [(s, 0, rev) for s in SHAPES if len(s) == 1 for rev in (False, True)] + \
               [(s, axis, rev) for s in SHAPES if len(s) == 2 for axis in (0, 1) for rev in (False, True)]
SCAN_PER_COMBO = 6


def _scan_cases():
    cases = []
    for oi, op in enumerate(("cumsum", "cumprod")):
        for di, dt in enumerate(ALL_DTYPES):
            for j in range(SCAN_PER_COMBO):
                shape, axis, rev = SCAN_LAYOUTS[(di * SCAN_PER_COMBO + j + 7 * oi) % len(SCAN_LAYOUTS)]
                cases.append(pytest.param(op, dt, shape, axis, rev,
                                          id=f"{op}-{dt}-{shape_id(shape)}-axis{axis}{'-reverse' if rev else ''}"))
    return cases


def _scan_float_check(got_vectors, vectors, op, rt, what):
    """Every prefix against the exact value within the order-independent bound."""
    u = UNIT_ROUNDOFF[rt]
    failures = []
    for i, (vec, g) in enumerate(zip(f64(vectors), f64(got_vectors))):
        acc, comp, mag = 0.0, 0.0, 0.0  # compensated running sum (sum), running product (prod)
        prod = 1.0
        nan = pinf = ninf = zero = False
        neg = False
        all_negzero = True
        for k, v in enumerate(vec):
            nan |= math.isnan(v)
            if op == "cumsum":
                pinf |= v == math.inf
                ninf |= v == -math.inf
                all_negzero &= v == 0 and math.copysign(1, v) < 0
                if math.isfinite(v):
                    t = acc + v  # Neumaier's compensated summation
                    comp += (acc - t) + v if abs(acc) >= abs(v) else (v - t) + acc
                    acc = t
                    mag += abs(v)
                if nan or (pinf and ninf):
                    exp, ok = math.nan, math.isnan(g[k])
                elif pinf or ninf:
                    exp = math.inf if pinf else -math.inf
                    ok = g[k] == exp
                else:
                    exp = acc + comp
                    if all_negzero:
                        exp = -0.0
                    bound = (k + 2) * u * mag
                    ok = math.isfinite(g[k]) and abs(g[k] - exp) <= bound
                    if exp == 0 and bound == 0:
                        ok = ok and math.copysign(1, g[k]) == math.copysign(1, exp)
            else:
                neg ^= math.copysign(1, v) < 0
                if math.isinf(v):
                    pinf = True
                elif v == 0:
                    zero = True
                elif math.isfinite(v):
                    prod *= abs(v)
                sign = -1.0 if neg else 1.0
                if nan or (pinf and zero):
                    exp, ok = math.nan, math.isnan(g[k])
                elif pinf:
                    exp = sign * math.inf
                    ok = g[k] == exp
                elif zero:
                    exp = sign * 0.0
                    ok = g[k] == 0 and math.copysign(1, g[k]) == sign
                else:
                    exp = sign * prod
                    bound = 2 * (k + 2) * u * abs(exp)
                    ok = math.isfinite(g[k]) and abs(g[k] - exp) <= bound and (
                        abs(exp) >= min_normal(rt) or abs(g[k] - exp) <= bound + min_subnormal(rt))
            if not ok:
                failures.append(f"  vector {i}, prefix {k}: got {float(g[k])!r}, expected {float(exp)!r} "
                                f"(last inputs {list(vec[:k + 1][-6:])})")
                break
    if failures:
        pytest.fail(f"{what}: {len(failures)} of {len(vectors)} vectors wrong\n" + "\n".join(failures[:10]))


@pytest.mark.parametrize("op,dt,shape,axis,reverse", _scan_cases())
def test_scan(backend, op, dt, shape, axis, reverse):
    rng = _rng("scan", op, dt, shape, axis, reverse)
    m, n = mn(shape)
    x, vectors, programs = _layout_data(rng, dt, op, shape, axis)
    rt = triton_result_type(op, dt)
    what = f"tl.{op} {dt} {shape_id(shape)} axis {axis}{' reverse' if reverse else ''}"
    ordered = vectors[:, ::-1] if reverse else vectors  # the order in which prefixes accumulate
    if is_float(dt):
        # bf16 scans accumulate in fp32 (Triton promotes bf16), so the fp32 bound applies.
        with np.errstate(all="ignore"):
            hint = round_to(np.cumsum(f64(ordered), axis=1) if op == "cumsum" else np.cumprod(f64(ordered), axis=1),
                            rt)
        hint = hint[:, ::-1] if reverse else hint
        expected = _to_block_order(hint, programs, shape, axis)
        (got,) = launch(scan_kernel, backend, [x], [(expected, rt)], (programs,), M=m, N=n, OP=op, AXIS=axis,
                        REVERSE=reverse)
        got_vectors = _to_vector_order(got, programs, shape, axis)
        got_vectors = got_vectors[:, ::-1] if reverse else got_vectors
        _scan_float_check(got_vectors, ordered, op, rt, what)
        return
    rows = [as_ints(v) for v in ordered]
    prefixes = []
    for r in rows:
        acc = 0 if op == "cumsum" else 1
        out = []
        for c in r:
            acc = acc + c if op == "cumsum" else acc * c
            out.append(acc)
        prefixes.append(out[::-1] if reverse else out)
    flat = [c for p in prefixes for c in p]
    ref = np.array([c % 2 for c in flat], dtype=bool) if rt == "bool" else wrap(flat, rt)
    ref = ref.reshape(len(rows), -1)
    expected = _to_block_order(ref, programs, shape, axis)
    (got,) = launch(scan_kernel, backend, [x], [(expected, rt)], (programs,), M=m, N=n, OP=op, AXIS=axis,
                    REVERSE=reverse)
    check_exact(got, expected, rt, inputs={"x": (x, dt)}, what=what)


def _to_block_order(per_vector: np.ndarray, programs: int, shape, axis) -> np.ndarray:
    m, n = mn(shape)
    if n == 0:
        return np.ascontiguousarray(per_vector).reshape(-1)
    if axis == 0:
        return np.ascontiguousarray(per_vector.reshape(programs, n, m).transpose(0, 2, 1)).reshape(-1)
    return np.ascontiguousarray(per_vector).reshape(-1)


def _to_vector_order(flat: np.ndarray, programs: int, shape, axis) -> np.ndarray:
    m, n = mn(shape)
    if n == 0:
        return flat.reshape(programs, m)
    if axis == 0:
        return np.ascontiguousarray(flat.reshape(programs, m, n).transpose(0, 2, 1)).reshape(programs * n, m)
    return flat.reshape(programs * m, n)
