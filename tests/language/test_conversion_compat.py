"""Conversions as Triton's test_conversions.py expects them on NVIDIA GPUs:

- fp32 -> fp8e5 with fp_downcast_rounding="rtz" (the one fp8 toward-zero conversion
  Triton's NVIDIA backend has), against an exact reference: the largest e5m2 magnitude
  not above |x|, with finite values beyond 57344 kept at 57344, infinities infinite and
  NaN 0x7F;
- the other toward-zero fp8 conversions are refused, with the sentence that names the
  accepted pairs;
- AMD's fnuz fp8 formats (fp8e4b8, fp8e5b16): compiling any kernel that uses them is
  refused ("type fp8e4b8 not supported in this architecture", what Triton's test
  matches), while the interpreter runs them.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.config import config
from tilec_testing import device_array, to_numpy

POISON = 0x55

# Every finite non-negative e5m2 value, in code order (0x00..0x7B), exactly as float64.
E5M2_MAGNITUDES = np.arange(0x7C, dtype=np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float64)


def toward_zero_e5m2(x: np.ndarray) -> np.ndarray:
    """The e5m2 codes of fp32 values rounded toward zero (the reference)."""
    with np.errstate(invalid="ignore"):  # signalling NaNs
        x = x.astype(np.float64)  # exact
    magnitude = np.abs(x)
    finite = np.isfinite(x)
    # The largest magnitude not above |x|: codes grow with magnitudes, so the index is the code.
    code = np.searchsorted(E5M2_MAGNITUDES, np.where(finite, magnitude, 0.0), side="right") - 1
    code = np.where(np.isinf(x), 0x7C, code)
    code = np.where(np.signbit(x), code | 0x80, code)
    return np.where(np.isnan(x), 0x7F, code).astype(np.uint8)


def e5m2_test_values(rng: np.random.Generator) -> np.ndarray:
    """Every e5m2 value and its fp32 neighbours, halfway points, the overflow edges (57344,
    fp16's 65504 and its rounding edge 65520), fp16 and e5m2 subnormals and below,
    specials, random values over the range and random bit patterns."""
    values = E5M2_MAGNITUDES.astype(np.float32)
    up, down = np.nextafter(values, np.float32(np.inf)), np.nextafter(values, np.float32(0))
    halfway = ((E5M2_MAGNITUDES[1:] + E5M2_MAGNITUDES[:-1]) / 2).astype(np.float32)
    edges = np.array([57344.0, 57345.0, 61440.0, 65504.0, 65519.0, 65520.0, 65536.0, 1e30, 3.4e38, np.inf, np.nan,
                      2.0 ** -16, 2.0 ** -17, 2.0 ** -24, 2.0 ** -25, 1e-45, 0.0, 3.0 * 2.0 ** -17], np.float32)
    spread = (rng.uniform(1, 2, 4000) * np.exp2(rng.integers(-26, 18, 4000))).astype(np.float32)
    bits = rng.integers(0, 1 << 32, 2000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    magnitudes = np.concatenate([values, up, down, halfway, edges, spread])
    x = np.concatenate([magnitudes, -magnitudes, bits])
    return rng.permutation(x).astype(np.float32)


@tilec.jit
def fp8e5_toward_zero_kernel(x_ptr, y_ptr, scalar_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(tl.float8e5, fp_downcast_rounding="rtz"), mask=mask)
    if tl.program_id(0) == 0:
        # a scalar, and a constant: 1.7 lies between the e5m2 values 1.5 and 1.75
        tl.store(scalar_ptr, tl.cast(tl.load(x_ptr), tl.float8e5, fp_downcast_rounding="rtz"))
        tl.store(scalar_ptr + 1, tl.cast(1.7, tl.float8e5, fp_downcast_rounding="rtz"))


def test_fp32_to_fp8e5_toward_zero(backend):
    x = e5m2_test_values(np.random.default_rng(2024))
    y = device_array(np.full(x.size, POISON, np.uint8), backend)
    scalars = device_array(np.full(2, POISON, np.uint8), backend)
    block = 1024
    fp8e5_toward_zero_kernel[(-(-x.size // block),)](device_array(x, backend), tilec.reinterpret(y, tl.float8e5),
                                                      tilec.reinterpret(scalars, tl.float8e5), x.size, BLOCK=block)
    got, want = to_numpy(y), toward_zero_e5m2(x)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(x[i]), hex(got[i]), hex(want[i])) for i in bad[:8]]
    assert list(to_numpy(scalars)) == [want[0], 0x3E]  # 0x3E: 1.5 (nearest would give 1.75, 0x3F)


def test_fp8e5_toward_zero_differs_from_nearest():
    """The reference itself: toward zero is not nearest even (guards against a reference
    that would pass a conversion that rounds to nearest)."""
    x = np.array([1.7, -1.7, 60000.0, 65520.0, np.inf, 2.0 ** -17 * 3], np.float32)
    assert [hex(c) for c in toward_zero_e5m2(x)] == ["0x3e", "0xbe", "0x7b", "0x7b", "0x7c", "0x1"]
    with np.errstate(over="ignore"):
        nearest = x.astype(ml_dtypes.float8_e5m2).view(np.uint8)
    assert (nearest != toward_zero_e5m2(x)).sum() >= 3


def test_fp8e5_toward_zero_compiles_without_fp8_instructions():
    """fp16's cvt.rz and integer operations only, so an sm_80 target takes it (PTX's fp8
    conversions need sm_89)."""
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp8e5", "scalar_ptr": "*fp8e5", "n": "i32"}
    kernel = tilec.compile(fp8e5_toward_zero_kernel, signature=signature, constexprs={"BLOCK": 256}, target="sm_80")
    ptx = kernel.asm["ptx"]
    assert "cvt.rz.f16.f32" in ptx and "e5m2" not in ptx


@tilec.jit
def rounding_kernel(x_ptr, y_ptr, SRC: tl.constexpr, DST: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16)).to(SRC)
    tl.store(y_ptr + tl.arange(0, 16), x.to(DST, fp_downcast_rounding="rtz").to(tl.uint8, bitcast=True))


@pytest.mark.parametrize("src, dst", [(tl.float16, tl.float8e5), (tl.bfloat16, tl.float8e5),
                                      (tl.float64, tl.float8e5), (tl.float32, tl.float8e4nv),
                                      (tl.float32, tl.float8e4b15), (tl.float16, tl.float8e4nv)])
def test_other_toward_zero_fp8_conversions_are_refused(backend, src, dst):
    x = device_array(np.linspace(-3, 3, 16, dtype=np.float32), backend)
    y = device_array(np.full(16, POISON, np.uint8), backend)
    sentence = (r"fp_downcast_rounding='rtz' applies to float32 -> float16/bfloat16/float8e5 and float64 -> "
                rf"float32, not {src.name} -> {dst.name}")
    with pytest.raises(tilec.CompilationError, match=sentence) as info:
        rounding_kernel[(1,)](x, y, SRC=src, DST=dst)
    assert "fp_downcast_rounding" in info.value.location.source_line
    assert (to_numpy(y) == POISON).all()


# ------------------------------------------------------------------ the fnuz fp8 formats

FNUZ = {"float8e4b8": (tl.float8e4b8, ml_dtypes.float8_e4m3fnuz), "float8e5b16": (tl.float8e5b16,
                                                                                   ml_dtypes.float8_e5m2fnuz)}


@tilec.jit
def populate_kernel(dst_ptr, BLOCK: tl.constexpr):
    """Triton's test builds its fnuz inputs this way: bytes bitcast, stored through an fnuz
    pointer; the parameter alone makes the kernel uncompilable for an NVIDIA GPU."""
    offs = tl.arange(0, BLOCK)
    codes = (offs * 37 + 11).to(tl.uint8)
    tl.store(dst_ptr + offs, codes.to(dst_ptr.dtype.element_ty, bitcast=True))


@tilec.jit
def fnuz_in_body_kernel(x_ptr, y_ptr, FMT: tl.constexpr, HOW: tl.constexpr):
    offs = tl.arange(0, 64)
    x = tl.load(x_ptr + offs)
    if HOW == "convert":
        y = x.to(FMT).to(tl.float32)
    elif HOW == "bitcast":
        y = x.to(tl.uint32, bitcast=True).to(tl.uint8).to(FMT, bitcast=True).to(tl.float32)
    else:
        y = x + tl.full((64,), 1.5, FMT).to(tl.float32)
    tl.store(y_ptr + offs, y)


@pytest.mark.parametrize("fmt", list(FNUZ))
def test_fnuz_pointer_parameter_is_refused_when_compiled(fmt):
    with pytest.raises(tilec.CompilationError, match=f"type fp8{fmt[6:]} not supported in this architecture") as info:
        tilec.compile(populate_kernel, signature={"dst_ptr": f"*fp8{fmt[6:]}"}, constexprs={"BLOCK": 256})
    error = info.value
    assert "parameter dst_ptr" in str(error) and "def populate_kernel(dst_ptr" in error.location.source_line
    assert error.location.lineno == populate_kernel.fn.__code__.co_firstlineno + 1  # the def line (after @jit)


@pytest.mark.parametrize("fmt", list(FNUZ))
@pytest.mark.parametrize("how, line", [("convert", "x.to(FMT)"), ("bitcast", "bitcast=True"),
                                       ("constant", "tl.full")])
def test_fnuz_types_in_a_kernel_body_are_refused_when_compiled(fmt, how, line):
    with pytest.raises(tilec.CompilationError, match="not supported in this architecture") as info:
        tilec.compile(fnuz_in_body_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32"},
                      constexprs={"FMT": FNUZ[fmt][0], "HOW": how})
    assert line in info.value.location.source_line


def exact_fnuz_values(codes: np.ndarray, mantissa: int, bias: int) -> np.ndarray:
    """fnuz codes decoded from the format's definition (0x80 is NaN; no infinities)."""
    magnitude = codes & 0x7F
    exponent, fraction = magnitude >> mantissa, magnitude & ((1 << mantissa) - 1)
    significand = np.where(exponent > 0, fraction + (1 << mantissa), fraction).astype(np.float64)
    value = np.ldexp(significand, np.maximum(exponent, 1).astype(np.int64) - bias - mantissa)
    value = np.where(codes & 0x80, -value, value)
    return np.where(codes == 0x80, np.nan, value)


@tilec.jit
def widen_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float32))


@pytest.mark.parametrize("fmt", list(FNUZ))
def test_fnuz_types_run_in_the_interpreter(monkeypatch, fmt):
    """What Triton's test does with them off NVIDIA GPUs: populate through an fnuz
    pointer, then widen every code (the `backend` fixture is not used: its compilation
    is the refusal tested above)."""
    monkeypatch.setattr(config, "interpret", True)
    ty, np_type = FNUZ[fmt]
    mantissa, bias = {"float8e4b8": (3, 8), "float8e5b16": (2, 16)}[fmt]
    stored = np.full(256, POISON, np.uint8)
    populate_kernel[(1,)](tilec.reinterpret(stored, ty), BLOCK=256)
    want_codes = ((np.arange(256) * 37 + 11) & 0xFF).astype(np.uint8)
    np.testing.assert_array_equal(stored, want_codes)
    widened = np.full(256, -7.0, np.float32)
    widen_kernel[(1,)](stored.view(np_type), widened, BLOCK=256)
    np.testing.assert_array_equal(widened, exact_fnuz_values(want_codes, mantissa, bias).astype(np.float32))


@pytest.mark.gpu
def test_fnuz_launch_on_the_gpu_is_refused(monkeypatch):
    import torch
    monkeypatch.setattr(config, "interpret", False)
    dst = torch.full((256,), POISON, dtype=torch.uint8, device="cuda")
    with pytest.raises(tilec.CompilationError, match="type fp8e4b8 not supported in this architecture"):
        populate_kernel[(1,)](tilec.reinterpret(dst, tl.float8e4b8), BLOCK=256)
    assert (dst.cpu().numpy() == POISON).all()
