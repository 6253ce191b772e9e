"""tl.extra.cuda (Triton's triton.language.extra.cuda): smid, globaltimer, num_warps,
num_threads, gdc_wait / gdc_launch_dependents, exp2_ftz, round_f32_to_tf32,
min/max_nan_xorsign_abs_f32, f32_to_e2m1x2 and convert_custom_float8_sm80/_sm70, against
references computed here from the definitions (in float64 or on the bit patterns)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
import tilec.runtime.driver
from tilec.language.extra import cuda as tlc
from tilec_testing import device_array, to_numpy


# ----------------------------------------------------------------------------- hardware facts


@tilec.jit
def facts_kernel(out_ptr, times_ptr):
    pid = tl.program_id(0)
    tlc.gdc_wait()                                   # nothing to wait for: a plain launch
    start = tlc.globaltimer()
    tl.store(out_ptr + pid * 3, tlc.smid())
    tl.store(out_ptr + pid * 3 + 1, tlc.num_warps())
    tl.store(out_ptr + pid * 3 + 2, tlc.num_threads())
    tl.static_assert(tlc.num_threads() == tlc.num_warps() * 32)
    total = tl.zeros([tlc.num_threads()], tl.int32)  # a constexpr: usable as a shape
    tl.store(times_ptr + pid * 3, start)
    tl.store(times_ptr + pid * 3 + 1, tlc.globaltimer())
    tl.store(times_ptr + pid * 3 + 2, tl.sum(total + 1))
    tlc.gdc_launch_dependents()


@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_hardware_facts(backend, num_warps):
    programs = 6
    out = device_array(np.full(programs * 3, -1, np.int32), backend)
    times = device_array(np.zeros(programs * 3, np.int64), backend)
    facts_kernel[(programs,)](out, times, num_warps=num_warps)
    facts = to_numpy(out).reshape(programs, 3)
    assert ((facts[:, 0] >= 0) & (facts[:, 0] < 1024)).all()                 # an SM index
    np.testing.assert_array_equal(facts[:, 1], num_warps)
    np.testing.assert_array_equal(facts[:, 2], num_warps * 32)
    t = to_numpy(times).reshape(programs, 3)
    assert (t[:, 0] > 0).all() and (t[:, 1] >= t[:, 0]).all()              # a clock that does not go back
    np.testing.assert_array_equal(t[:, 2], num_warps * 32)


def test_what_the_hardware_reads_compile_to():
    k = tilec.compile(facts_kernel, signature={"out_ptr": "*i32", "times_ptr": "*i64"}, num_warps=8)
    ptx = k.asm["ptx"]
    assert ptx.count("%globaltimer") == 2 and "%smid" in ptx                  # two reads, not merged
    assert "griddepcontrol.wait;" in ptx and "griddepcontrol.launch_dependents;" in ptx
    with pytest.raises(tilec.CompilationError, match="gdc_wait needs an sm_90 or newer GPU \\(griddepcontrol.wait\\); "
                                                     "the target is sm_80"):
        tilec.compile(facts_kernel, signature={"out_ptr": "*i32", "times_ptr": "*i64"}, target="sm_80")


# ----------------------------------------------------------------------------- elementwise helpers


@tilec.jit
def float_helpers_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tlc.exp2_ftz(x))
    tl.store(out_ptr + N + offs, tlc.round_f32_to_tf32(y, "rn"))
    tl.store(out_ptr + 2 * N + offs, tlc.round_f32_to_tf32(y, "rna"))
    tl.store(out_ptr + 3 * N + offs, tlc.min_nan_xorsign_abs_f32(x, y))
    tl.store(out_ptr + 4 * N + offs, tlc.max_nan_xorsign_abs_f32(x, y))


def _tf32_reference(y: np.ndarray, ties_to_even: bool) -> np.ndarray:
    """y rounded to tf32 (11 significant bits; fp32's exponent range, subnormals included),
    computed in float64 from the value: steps of one tf32 ulp, rounded."""
    y = y.astype(np.float64)
    exponent = np.frexp(y)[1]                                  # |y| in [2**(e-1), 2**e)
    ulp = np.ldexp(1.0, np.maximum(exponent, -125) - 11)       # subnormals: fp32's fixed step
    steps = y / ulp
    steps = np.round(steps) if ties_to_even else np.sign(steps) * np.floor(np.abs(steps) + 0.5)
    with np.errstate(over="ignore"):
        return (steps * ulp).astype(np.float32)


def test_float_helpers(backend, rng):
    n = 512
    x = (rng.standard_normal(n) * 20).astype(np.float32)
    x[:6] = [-130.0, -126.5, 1e-40, -1e-40, 0.0, 127.5]        # subnormal results / inputs flush to 0 / 1
    y = (rng.standard_normal(n) * 1000).astype(np.float32)
    bits = y.view(np.uint32)
    bits[:8] = (bits[:8] & ~np.uint32(0x1FFF)) | np.uint32(0x1000)          # exact ties of tf32 rounding
    bits[8:10] = [0x7F7FFFFF, 0x00000FFF]                                    # rounds to inf; a subnormal
    y[10], y[11], x[11] = np.nan, -np.inf, np.nan
    y[12], x[12] = -0.0, 0.0
    out = device_array(np.full(5 * n, -7.0, np.float32), backend)
    float_helpers_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, N=n)
    exp2, rn, rna, lo, hi = to_numpy(out).reshape(5, n)

    want = np.exp2(np.where(np.abs(x) < 2.0 ** -126, 0, x).astype(np.float64))
    want = np.where(want < 2.0 ** -126, 0, want)
    np.testing.assert_allclose(exp2[~np.isnan(x)], want[~np.isnan(x)], rtol=2.0 ** -21, atol=0)
    assert exp2[0] == 0 and exp2[2] == 1 and exp2[3] == 1

    finite = np.isfinite(y)
    for got, even in ((rn, True), (rna, False)):
        np.testing.assert_array_equal(got[finite], _tf32_reference(y[finite], even))
        assert (got.view(np.uint32)[finite] & 0x1FFF == 0).all()
        assert np.isnan(got[10]) and got[11] == -np.inf
    assert rn[8] == np.inf and rna[8] == np.inf

    nan = np.isnan(x) | np.isnan(y)
    sign = np.signbit(x) ^ np.signbit(y)
    for got, pick in ((lo, np.minimum), (hi, np.maximum)):
        assert np.isnan(got[nan]).all()
        magnitude = pick(np.abs(x), np.abs(y))
        np.testing.assert_array_equal(np.abs(got[~nan]), magnitude[~nan])
        np.testing.assert_array_equal(np.signbit(got[~nan]), sign[~nan])


def test_helpers_compile_to_their_instructions_and_check_the_target():
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"}
    ptx = tilec.compile(float_helpers_kernel, signature=signature, constexprs={"N": 128}).asm["ptx"]
    for instruction in ("ex2.approx.ftz.f32", "cvt.rn.tf32.f32", "cvt.rna.tf32.f32", "min.NaN.xorsign.abs.f32",
                        "max.NaN.xorsign.abs.f32"):
        assert instruction in ptx, instruction
    with pytest.raises(tilec.CompilationError, match="round_f32_to_tf32 needs an sm_90 or newer GPU "
                                                     "\\(cvt.rn.tf32.f32\\); the target is sm_86"):
        tilec.compile(float_helpers_kernel, signature=signature, constexprs={"N": 128}, target="sm_86")


@tilec.jit
def bad_helper_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if CASE == 0:
        tlc.round_f32_to_tf32(x, "rz")
    elif CASE == 1:
        tlc.min_nan_xorsign_abs_f32(x, x)
    else:
        tlc.exp2_ftz(x.to(tl.float16))


@pytest.mark.parametrize("case, target, message", [
    (0, "sm_90", "round_f32_to_tf32's rounding must be \"rn\" or \"rna\", got 'rz'"),
    (1, "sm_80", "min_nan_xorsign_abs_f32 needs an sm_86 or newer GPU"),
    (2, "sm_90", "no version of this function for argument types \\(fp16\\); available: \\(fp32\\)"),
])
def test_helper_errors(case, target, message):
    with pytest.raises(tilec.CompilationError, match=message):
        tilec.compile(bad_helper_kernel, signature={"x_ptr": "*fp32"}, constexprs={"CASE": case}, target=target)


# ----------------------------------------------------------------------------- fp4 (e2m1) pairs

_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def _e2m1_code(v: float) -> int:
    """Nearest e2m1 magnitude (ties to the even code), saturated at 6; the sign on top."""
    magnitude = min(abs(v), 6.0)
    distances = np.abs(_E2M1 - magnitude)
    best = np.flatnonzero(distances == distances.min())
    code = int(best[0] if len(best) == 1 else best[best % 2 == 0][0])
    return code | (8 if np.signbit(v) else 0)


@tilec.jit
def e2m1_kernel(hi_ptr, lo_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tlc.f32_to_e2m1x2(tl.load(hi_ptr + offs), tl.load(lo_ptr + offs)))


def test_fp4_pairs(monkeypatch, rng):
    """cvt.rn.satfinite.e2m1x2.f32 exists on Blackwell ('a' chips) only: interpreted as for
    sm_100a, and compiled for it (not run: the test GPUs are older)."""
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    monkeypatch.setattr(tilec.runtime.driver, "default_target", lambda: "sm_100a")
    n = 256
    hi = (rng.standard_normal(n) * 3).astype(np.float32)
    lo = (rng.standard_normal(n) * 3).astype(np.float32)
    hi[:12] = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.5, -100.0, np.inf, -0.0, -0.1]   # ties, saturation, signs
    out = np.full(n, 0xFFFF, np.uint16)
    e2m1_kernel[(1,)](hi, lo, out, N=n)
    want = [(_e2m1_code(h) << 4) | _e2m1_code(v) for h, v in zip(hi, lo)]
    np.testing.assert_array_equal(out, want)
    monkeypatch.setattr(tilec.config.config, "interpret", False)
    signature = {"hi_ptr": "*fp32", "lo_ptr": "*fp32", "out_ptr": "*u16"}
    ptx = tilec.compile(e2m1_kernel, signature=signature, constexprs={"N": n}, target="sm_100a").asm["ptx"]
    assert "cvt.rn.satfinite.e2m1x2.f32" in ptx
    with pytest.raises(tilec.CompilationError, match="f32_to_e2m1x2 needs one of the GPUs sm_100a"):
        tilec.compile(e2m1_kernel, signature=signature, constexprs={"N": n}, target="sm_90")


# ----------------------------------------------------------------------------- fp8e4b15 by Triton's recipe


def _e4b15_value(code: int) -> float:
    sign = -1.0 if code & 0x80 else 1.0
    exponent, fraction = (code >> 3) & 0xF, code & 0x7
    if exponent == 0:
        return sign * fraction / 8 * 2.0 ** -14
    return sign * (1 + fraction / 8) * 2.0 ** (exponent - 15)


_MAGNITUDES = np.array([_e4b15_value(c) for c in range(0x7F)])  # codes 0..0x7E: up to 1.75


def _e4b15_code(v: float) -> int:
    """|v| clamped to 1.75 (NaN too), the nearest code, ties away from zero; the sign bit kept."""
    magnitude = 1.75 if np.isnan(v) else min(abs(v), 1.75)
    distances = np.abs(_MAGNITUDES - magnitude)
    code = int(np.flatnonzero(distances == distances.min())[-1])
    return code | (0x80 if np.signbit(v) else 0)


@tilec.jit
def custom_fp8_kernel(codes_ptr, h_ptr, f_ptr, narrow16_ptr, narrow32_ptr, src16_ptr, src32_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    f8 = tl.load(codes_ptr + offs)                                     # fp8e4b15
    tl.store(h_ptr + offs, tlc.convert_custom_float8_sm80(f8, tl.float16))
    tl.store(f_ptr + offs, tlc.convert_custom_float8_sm70(f8, tl.float32))
    tl.store(narrow16_ptr + offs, tlc.convert_custom_float8_sm80(tl.load(src16_ptr + offs), tl.float8e4b15))
    tl.store(narrow32_ptr + offs, tlc.convert_custom_float8_sm70(tl.load(src32_ptr + offs), tl.float8e4b15))


def test_custom_fp8_conversions(backend, rng):
    n = 256
    codes = np.arange(n, dtype=np.uint8)
    src16 = (rng.standard_normal(n) * 0.8).astype(np.float16)
    src16[:10] = [1.74, 1.8125, 2.0, 65504.0, np.nan, -np.inf, 2.0 ** -17, -(2.0 ** -14) * 1.0625, 0.0, -0.0]
    bits = src16.view(np.uint16)
    bits[10:20] = (bits[10:20] & 0xFF80) | 0x40                         # exact ties of the fp8 rounding
    src32 = (rng.standard_normal(n) * 0.8).astype(np.float16).astype(np.float32)   # exact in fp16
    h = device_array(np.full(n, -9, np.float16), backend)
    f = device_array(np.full(n, -9, np.float32), backend)
    narrow16 = device_array(np.full(n, 0xAA, np.uint8), backend)
    narrow32 = device_array(np.full(n, 0xAA, np.uint8), backend)
    as_fp8 = (lambda a: tilec.reinterpret(a, tl.float8e4b15))
    custom_fp8_kernel[(1,)](as_fp8(device_array(codes, backend)), h, f, as_fp8(narrow16), as_fp8(narrow32),
                            device_array(src16, backend), device_array(src32, backend), N=n)
    values = np.array([_e4b15_value(c & 0x7F) * (-1 if c & 0x80 else 1) for c in range(n)])
    values[0x7F], values[0xFF] = 1.875, -1.875                           # no NaN in Triton's recipe
    np.testing.assert_array_equal(to_numpy(h).astype(np.float64), values)
    np.testing.assert_array_equal(np.signbit(to_numpy(h)), codes >= 0x80)
    np.testing.assert_array_equal(to_numpy(f), values.astype(np.float32))
    np.testing.assert_array_equal(to_numpy(narrow16), [_e4b15_code(float(v)) for v in src16])
    np.testing.assert_array_equal(to_numpy(narrow32), [_e4b15_code(float(v)) for v in src32])
