"""Conversions between every pair of int8..int64, uint8..uint64, fp16, bf16, fp32, fp64 and
bool (x.to(dtype)), bitcasts between types of one width, fp_downcast_rounding="rtz", and
the saturation of out-of-range float -> int conversions that tilec documents.

Triton 3.6's rules: integers wrap when narrowing and extend by the *source's* signedness
(bool zero-extends), integer -> float and float -> float round to nearest even (overflowing
to infinity), float -> int truncates toward zero (out-of-range values are undefined in
LLVM, so the matrix only converts in-range values), and anything -> bool is `x != 0` (so
NaN -> True). References: matrix_reference.py.
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

import tilec
import tilec.language as tl
from matrix_reference import (ALL_DTYPES, BITS, FLOAT_DTYPES, INT_DTYPES, NP, SHAPES, TL, UINT, block_offsets,
                              check_exact, check_float, convert, f64, float_specials, int_range, is_float,
                              launch, max_finite, mn, numel, padded_length, random_values, round_to,
                              shape_id, specials, to_dtype)


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


@tilec.jit
def cast_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, DST: tl.constexpr, MODE: tl.constexpr):
    offs = block_offsets(M, N)
    x = tl.load(x_ptr + offs)
    if MODE == "to":
        z = x.to(DST)
    elif MODE == "bitcast":
        z = x.to(DST, bitcast=True)
    else:
        tl.static_assert(MODE == "rtz")
        z = x.to(DST, fp_downcast_rounding="rtz")
    tl.static_assert(z.dtype == DST, "unexpected result type")
    tl.store(out_ptr + offs, z)


def _in_range_floats(rng, src: str, dst: str, n: int) -> np.ndarray:
    """n values of float type src whose truncation fits integer type dst (LLVM's fptosi and
    fptoui are undefined otherwise): the finite specials that fit, the largest src value
    below the range's end, the range's start, fractions that truncate to zero, and random
    values spread over the range."""
    lo, hi = int_range(dst)
    mant = {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}[src]
    end = float(hi) + 1.0  # 2**bits or 2**(bits-1): the first value out of range
    top = min(end * (1 - 2.0 ** -(mant + 1)), max_finite(src))  # the largest src value below `end`

    def fits(v: float) -> bool:
        return math.isfinite(v) and lo <= math.trunc(v) <= hi

    fixed = [v for v in float_specials(src) if math.isfinite(v)]
    fixed += [top, -top, float(lo), -max_finite(src), 0.5, -0.5, 0.9999, -0.9999, 2.5, -2.5, 127.75, 255.5, -128.5]
    values = [v for v in f64(to_dtype(fixed, src)) if fits(v)]
    rand = f64(round_to(np.exp2(rng.uniform(-30, math.log2(top), 4 * n)) *
                        np.where(rng.random(4 * n) < 0.5, -1.0, 1.0), src))
    values += [v for v in rand if fits(v)][:n - len(values)]
    assert len(values) == n
    return to_dtype(values, src)


def _cast_inputs(rng, src: str, dst: str, shape) -> np.ndarray:
    total = padded_length(shape, 160)
    if is_float(src) and dst != "bool" and not is_float(dst):
        return _in_range_floats(rng, src, dst, total)
    sp = to_dtype(specials(src), src)
    return np.concatenate([sp, random_values(rng, src, total - len(sp))])


def _cases():
    cases = []
    for i, src in enumerate(ALL_DTYPES):
        for j, dst in enumerate(ALL_DTYPES):
            for k in (0, 4):
                s = SHAPES[(i + 2 * j + k) % len(SHAPES)]
                cases.append(pytest.param(src, dst, s, id=f"{src}-to-{dst}-{shape_id(s)}"))
    return cases


@pytest.mark.parametrize("src,dst,shape", _cases())
def test_to(backend, src, dst, shape):
    rng = _rng("to", src, dst, shape)
    x = _cast_inputs(rng, src, dst, shape)
    ref = convert(x, src, dst)
    m, n = mn(shape)
    (got,) = launch(cast_kernel, backend, [x], [(ref, dst)], (len(x) // numel(shape),), M=m, N=n, DST=TL[dst],
                    MODE="to")
    inputs = {"x": (x, src)}
    if is_float(dst):
        check_float(got, ref, dst, inputs=inputs, what=f"{src}.to({dst})")
    else:
        check_exact(got, ref, dst, inputs=inputs, what=f"{src}.to({dst})")


_SAME_WIDTH = {8: ("int8", "uint8"), 16: ("int16", "uint16", "fp16", "bf16"), 32: ("int32", "uint32", "fp32"),
               64: ("int64", "uint64", "fp64")}


@pytest.mark.parametrize("src,dst,shape", [
    pytest.param(a, b, SHAPES[(i + j) % len(SHAPES)], id=f"{a}-as-{b}-{shape_id(SHAPES[(i + j) % len(SHAPES)])}")
    for group in _SAME_WIDTH.values() for i, a in enumerate(group) for j, b in enumerate(group) if a != b])
def test_bitcast(backend, src, dst, shape):
    """Every bit pattern (NaN payloads and subnormals included) is reinterpreted unchanged."""
    rng = _rng("bitcast", src, dst, shape)
    bits = BITS[src]
    total = padded_length(shape, 256)
    udt = UINT[bits]
    raw = rng.integers(0, 1 << bits, total, dtype=np.uint64).astype(udt)
    raw[:4] = [0, 1 << (bits - 1), (1 << bits) - 1, (1 << (bits - 1)) - 1]  # +0, -0 / MIN, all ones, MAX
    x = raw.view(NP[src])
    ref = raw.view(NP[dst])
    m, n = mn(shape)
    (got,) = launch(cast_kernel, backend, [x], [(ref, dst)], (len(x) // numel(shape),), M=m, N=n, DST=TL[dst],
                    MODE="bitcast")
    got_bits = np.ascontiguousarray(got).view(udt)
    bad = got_bits != raw
    assert not bad.any(), (f"bitcast {src} -> {dst}: {bad.sum()} patterns changed, first at "
                           f"{np.flatnonzero(bad)[:8]}: {raw[bad][:8]} -> {got_bits[bad][:8]}")


def _round_toward_zero(x64: np.ndarray, dst: str) -> np.ndarray:
    """x rounded toward zero to dst: the nearest value, one step toward zero where that is
    larger in magnitude; beyond the range, the largest finite value; inf and NaN unchanged."""
    near = round_to(x64, dst)
    wide = f64(near)
    bits = BITS[dst]
    raw = np.ascontiguousarray(near).view(UINT[bits]).copy()
    away = (np.abs(wide) > np.abs(x64)) & np.isfinite(x64)
    raw[away] -= 1
    return raw.view(NP[dst])


@pytest.mark.parametrize("src,dst,shape", [
    pytest.param(a, b, s, id=f"{a}-to-{b}-{shape_id(s)}")
    for (a, b), s in zip((("fp32", "fp16"), ("fp32", "bf16"), ("fp64", "fp32")), (SHAPES[8], SHAPES[4], SHAPES[2]))])
def test_fp_downcast_rounding_rtz(backend, src, dst, shape):
    rng = _rng("rtz", src, dst, shape)
    sp = to_dtype(float_specials(src), src)
    total = padded_length(shape, 256)
    x = np.concatenate([sp, random_values(rng, src, total - len(sp))])
    ref = _round_toward_zero(f64(x), dst)
    m, n = mn(shape)
    (got,) = launch(cast_kernel, backend, [x], [(ref, dst)], (len(x) // numel(shape),), M=m, N=n, DST=TL[dst],
                    MODE="rtz")
    check_float(got, ref, dst, inputs={"x": (x, src)}, what=f"{src}.to({dst}, rtz)")


@pytest.mark.parametrize("src,dst", [pytest.param(a, b, id=f"{a}-to-{b}") for a in FLOAT_DTYPES for b in INT_DTYPES])
def test_out_of_range_float_to_int_saturates(backend, request, src, dst):
    """language.md: out-of-range floats saturate and NaN gives 0 (PTX cvt.rzi), on both
    backends. (Triton leaves this undefined; tilec promises it.)"""
    lo, hi = int_range(dst)
    vals = [math.inf, -math.inf, math.nan, max_finite(src), -max_finite(src), 1e4, -1e4, 300.0, -300.0, -1.0,
            70000.0, -70000.0, 5e9, -5e9, 3e19, -3e19]
    x = to_dtype(vals, src)
    x64 = f64(x)
    ref = np.array([0 if math.isnan(v) else lo if v < lo else hi if v > hi else math.trunc(v) for v in x64],
                   dtype=object)
    ref = np.array(list(ref), dtype=NP[dst])
    (got,) = launch(cast_kernel, backend, [x], [(ref, dst)], (1,), M=16, N=0, DST=TL[dst], MODE="to")
    check_exact(got, ref, dst, inputs={"x": (x, src)}, what=f"{src}.to({dst}) out of range")
