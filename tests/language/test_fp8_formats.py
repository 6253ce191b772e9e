"""The fp8 formats without conversion instructions on NVIDIA GPUs: float8e4b15 (4
exponent bits, bias 15, largest finite 1.75, NaN 0x7F/0xFF), float8e4b8 and float8e5b16
(the "fnuz" formats: biases 8 and 16, no infinities, no negative zero, NaN 0x80).

Loads, stores and conversions on both backends, against a reference built here from the
formats' definitions: every code decoded exactly, and the nearest code chosen in exact
rational arithmetic (ties to the even code, saturating at the largest finite value, NaN
to NaN, its sign not kept). Arrays of these formats are passed as bytes with `tilec.reinterpret`.
The fnuz formats are AMD's: as in Triton, only the interpreter runs them, and compiling a
kernel that uses them is refused (see `launch`).
"""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

# name: (dtype, mantissa bits, bias, fnuz)
FORMATS = {
    "float8e4b15": (tl.float8e4b15, 3, 15, False),
    "float8e4b8": (tl.float8e4b8, 3, 8, True),
    "float8e5b16": (tl.float8e5b16, 2, 16, True),
}
FNUZ = {tl.float8e4b8, tl.float8e5b16}
WIDE = {"float32": (tl.float32, np.float32), "float16": (tl.float16, np.float16),
        "bfloat16": (tl.bfloat16, ml_dtypes.bfloat16), "float64": (tl.float64, np.float64)}


def decode(code: int, mantissa: int, bias: int, fnuz: bool) -> Fraction | None:
    """The exact value of one code (None for NaN)."""
    if (fnuz and code == 0x80) or (not fnuz and code & 0x7F == 0x7F):
        return None
    exponent, fraction = (code & 0x7F) >> mantissa, code & ((1 << mantissa) - 1)
    significand = Fraction(fraction, 1 << mantissa) + (1 if exponent else 0)
    value = significand * Fraction(2) ** (max(exponent, 1) - bias)
    return -value if code & 0x80 else value


def encode(x: float, mantissa: int, bias: int, fnuz: bool) -> int:
    """The code `x` converts to: nearest (ties to the even code), saturating, NaN to NaN."""
    if np.isnan(x):
        return 0x80 if fnuz else 0x7F  # NaN signs are not kept
    finite = [(code, decode(code, mantissa, bias, fnuz)) for code in range(0x80)]
    finite = [(code, value) for code, value in finite if value is not None]
    magnitude = Fraction(abs(x)) if np.isfinite(x) else finite[-1][1] * 2
    best = min(finite, key=lambda cv: (abs(cv[1] - magnitude), cv[0] % 2))[0]
    if np.signbit(x) and not (fnuz and best == 0):
        best |= 0x80
    return best


def wanted_codes(x: np.ndarray, fmt: str) -> np.ndarray:
    _, mantissa, bias, fnuz = FORMATS[fmt]
    return np.array([encode(float(v), mantissa, bias, fnuz) for v in x.astype(np.float64)], np.uint8)


def test_format_properties():
    for name, (ty, mantissa, bias, _) in FORMATS.items():
        assert ty.is_fp8() and ty.is_floating() and not ty.is_int()
        assert ty.primitive_bitwidth == 8 and ty.itemsize == 1
        assert ty.fp_mantissa_width == mantissa and ty.exponent_bias == bias
        assert repr(ty) == f"tl.{name}" and getattr(tl, name) is ty
        assert getattr(ty, f"is_fp8{name[len('float8'):]}")()
    assert tl.float32.exponent_bias == 127 and tl.float8e4nv.exponent_bias == 7 and tl.float8e5.exponent_bias == 15
    assert tl.core.dtype_from_signature("*fp8e4b15") == tl.pointer_type(tl.float8e4b15)
    with pytest.raises(TypeError, match="not a floating-point type"):
        tl.int32.exponent_bias


def test_reference_decodes_known_values():
    assert decode(0x7E, 3, 15, False) == Fraction(7, 4)  # e4b15's largest finite value
    assert decode(0x7F, 3, 8, True) == 240 and decode(0x7F, 2, 16, True) == 57344
    assert decode(0x01, 3, 15, False) == Fraction(1, 2 ** 17)
    assert encode(1.875, 3, 15, False) == 0x7E  # saturates: 0x7F is NaN
    assert encode(-0.0, 3, 8, True) == 0x00 and encode(-0.0, 3, 15, False) == 0x80


def launch(kernel, grid, backend: str, types, *args, **kwargs) -> bool:
    """`kernel[grid](*args, **kwargs)`; returns whether it computed its outputs. With an
    fnuz format among `types` compiling is refused (no NVIDIA GPU has these formats): the
    GPU runs nothing, and the interpreter runs the kernel before the `backend` fixture's
    compilation is refused (test_conversion_compat.py checks the refusal itself)."""
    refused = "not supported in this architecture"
    if FNUZ.isdisjoint(types):
        kernel[grid](*args, **kwargs)
        return True
    if backend == "gpu":
        with pytest.raises(tilec.CompilationError, match=refused):
            kernel[grid](*args, **kwargs)
        return False
    try:
        kernel[grid](*args, **kwargs)
    except tilec.CompilationError as error:
        if refused not in str(error):
            raise
    return True


def special_values(fmt: str, src, n: int, rng) -> np.ndarray:
    """Random values over the format's range, and its edges: zeros, infinities, NaN, the
    largest finite value and beyond, halfway points, subnormals and the steps between."""
    _, mantissa, bias, fnuz = FORMATS[fmt]
    values = sorted(float(decode(c, mantissa, bias, fnuz)) for c in range(0x80) if decode(c, mantissa, bias, fnuz) is not None)
    big, tiny = values[-1], values[1]
    halfway = [(a + b) / 2 for a, b in zip(values, values[1:])]
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, big, -big, big * 1.04, big * 1.2, -1e30, tiny, -tiny, tiny / 2,
             -tiny / 2, tiny * 0.49, tiny * 1.5] + halfway + [-h for h in halfway[::3]]
    x = rng.standard_normal(n) * np.exp2(rng.integers(-bias - 2, 2 ** (7 - mantissa) - bias, n))
    x[: len(edges)] = edges
    with np.errstate(over="ignore"):
        return x.astype(src)


@tilec.jit
def convert_kernel(x_ptr, y_ptr, n, DST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(DST), mask=mask)


def as_format(array: np.ndarray, fmt: str, backend: str):
    return tilec.reinterpret(device_array(array, backend), FORMATS[fmt][0])


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("src", list(WIDE))
def test_narrow_to_format(backend, fmt, src):
    x = special_values(fmt, WIDE[src][1], 600, np.random.default_rng(17))
    out = device_array(np.full(x.size, 0x55, np.uint8), backend)
    if not launch(convert_kernel, (3,), backend, [FORMATS[fmt][0]], device_array(x, backend),
                  tilec.reinterpret(out, FORMATS[fmt][0]), x.size, DST=FORMATS[fmt][0], BLOCK=256):
        return
    got, want = to_numpy(out), wanted_codes(x, fmt)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(x[i]), hex(got[i]), hex(want[i])) for i in bad[:6]]


def test_fp64_rounds_once():
    """From fp64, a value a hair above a halfway point (the hair below fp32's precision)
    rounds up: the conversion does not round to fp32 first and then again."""
    for fmt, (_, mantissa, bias, fnuz) in FORMATS.items():
        one_up = float(decode(0x38 if mantissa == 3 else 0x3C, mantissa, bias, fnuz))
        x = np.array([1.0 + (one_up - 1.0) / 2 * (1 + 2.0 ** -40)] * 4 + [1.0 + (one_up - 1.0) / 2] * 4)
        for backend in ("interpreter",):
            out = np.zeros(8, np.uint8)
            tilec.config.config.interpret, old = True, tilec.config.config.interpret
            try:
                convert_kernel[(1,)](x, tilec.reinterpret(out, FORMATS[fmt][0]), 8, DST=FORMATS[fmt][0], BLOCK=8)
            finally:
                tilec.config.config.interpret = old
            np.testing.assert_array_equal(out, wanted_codes(x, fmt), err_msg=f"{fmt} on the {backend}")


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("dst", list(WIDE))
def test_widen_every_code(backend, fmt, dst):
    _, mantissa, bias, fnuz = FORMATS[fmt]
    codes = np.random.default_rng(3).permutation(256).astype(np.uint8)
    out = device_array(np.full(256, 7, WIDE[dst][1]), backend)
    if not launch(convert_kernel, (2,), backend, [FORMATS[fmt][0]], as_format(codes, fmt, backend), out, 256,
                  DST=WIDE[dst][0], BLOCK=128):
        return
    got = to_numpy(out).astype(np.float64)
    for code, value in zip(codes, got):
        want = decode(int(code), mantissa, bias, fnuz)
        if want is None:
            assert np.isnan(value), (hex(code), value)
        else:
            assert Fraction(float(value)) == want and np.signbit(value) == bool(code & 0x80), (hex(code), value)


@tilec.jit
def across_kernel(x_ptr, y_ptr, z_ptr, SRC: tl.constexpr, DST: tl.constexpr):
    offs = tl.arange(0, 256)
    x = tl.load(x_ptr + offs)                   # fp8 of one format
    y = x.to(DST)                               # to another: through fp16, one rounding
    tl.store(y_ptr + offs, y)
    c = tl.full([256], 1.3, SRC).to(tl.float32) + tl.full([256], -100.0, DST).to(tl.float32)
    tl.store(z_ptr + offs, c)                   # constants are encoded as conversions round


@pytest.mark.parametrize("pair", [("float8e4b15", "float8e4b8"), ("float8e5b16", "float8e4b15"),
                                  ("float8e4b8", "float8e5b16")])
def test_between_formats_and_constants(backend, pair):
    src, dst = pair
    codes = np.arange(256, dtype=np.uint8)
    y = device_array(np.zeros(256, np.uint8), backend)
    z = device_array(np.zeros(256, np.float32), backend)
    if not launch(across_kernel, (1,), backend, [FORMATS[src][0], FORMATS[dst][0]], as_format(codes, src, backend),
                  tilec.reinterpret(y, FORMATS[dst][0]), z, SRC=FORMATS[src][0], DST=FORMATS[dst][0]):
        return
    values = np.array([np.nan if v is None else float(v) for v in (decode(int(c), *FORMATS[src][1:]) for c in codes)])
    signs = np.where(codes & 0x80, -1.0, 1.0)
    values = np.where(np.isnan(values), np.copysign(np.nan, signs), values)
    np.testing.assert_array_equal(to_numpy(y), wanted_codes(values, dst))
    want_c = float(decode(int(wanted_codes(np.array([1.3]), src)[0]), *FORMATS[src][1:])) + \
        float(decode(int(wanted_codes(np.array([-100.0]), dst)[0]), *FORMATS[dst][1:]))
    np.testing.assert_array_equal(to_numpy(z), np.full(256, want_c, np.float32))


@tilec.jit
def fp8_dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b))


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_dot_of_format(backend, fmt):
    _, mantissa, bias, fnuz = FORMATS[fmt]
    rng = np.random.default_rng(8)
    a = rng.integers(0, 256, (32, 32)).astype(np.uint8)
    b = rng.integers(0, 256, (32, 32)).astype(np.uint8)
    nan_codes = [0x80] if fnuz else [0x7F, 0xFF]
    a[np.isin(a, nan_codes)] = 0x11
    b[np.isin(b, nan_codes)] = 0x22
    c = device_array(np.full((32, 32), np.nan, np.float32), backend)
    if not launch(fp8_dot_kernel, (1,), backend, [FORMATS[fmt][0]], as_format(a, fmt, backend),
                  as_format(b, fmt, backend), c, N=32):
        return
    va = np.vectorize(lambda code: float(decode(int(code), mantissa, bias, fnuz)))(a)
    vb = np.vectorize(lambda code: float(decode(int(code), mantissa, bias, fnuz)))(b)
    want = va @ vb  # every product is exact in fp32; the sums differ only in rounding
    np.testing.assert_allclose(to_numpy(c), want, rtol=1e-5, atol=1e-6 * (np.abs(va) @ np.abs(vb)).max())


def test_fnuz_arrays_of_ml_dtypes_and_torch_names():
    """NumPy arrays of ml_dtypes' fnuz types (and torch's float8_e4m3fnuz/e5m2fnuz tensors)
    are taken as the matching formats without reinterpret."""
    from tilec.runtime.specialize import dtype_of_array
    assert dtype_of_array(np.zeros(2, ml_dtypes.float8_e4m3fnuz)) == tl.float8e4b8
    assert dtype_of_array(np.zeros(2, ml_dtypes.float8_e5m2fnuz)) == tl.float8e5b16


def test_reinterpret_rules():
    x = np.zeros(8, np.uint8)
    wrapped = tilec.reinterpret(x, tl.float8e4b15)
    assert isinstance(wrapped, tilec.TensorWrapper) and wrapped.base is x and wrapped.dtype == tl.float8e4b15
    assert tilec.reinterpret(wrapped, tl.float8e4b8).base is x  # a wrapper of a wrapper wraps the base
    assert tilec.reinterpret(wrapped, tl.uint8) is x
    assert tilec.reinterpret(x, tl.uint8) is x
    with pytest.raises(TypeError, match="element sizes differ"):
        tilec.reinterpret(np.zeros(4, np.float32), tl.float8e4b15)
    with pytest.raises(TypeError, match="takes an array"):
        tilec.reinterpret([1, 2], tl.int8)
