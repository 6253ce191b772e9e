"""bfloat16 and fp8 in the interpreter: storage, conversions (nearest even; fp8 saturating
as PTX cvt.rn.satfinite), arithmetic rounded in the type, torch and ml_dtypes arguments."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from interpreter_testing import BF16, FP8E4, FP8E5, block, exact_round, pointers

import tilec
import tilec.language as tl
from tilec.interpreter import Memory, NumpyBuilder, OutOfBoundsAccess
from tilec.interpreter.numpy_common import round_to
from tilec.language.core import TilecSemanticError

torch = pytest.importorskip("torch")

FP8 = [(FP8E4, tl.float8e4nv, 448.0), (FP8E5, tl.float8e5, 57344.0)]


def _all_bit_patterns(dt: np.dtype) -> np.ndarray:
    return np.arange(2 ** (8 * dt.itemsize), dtype=np.int64).astype(f"u{dt.itemsize}").view(dt)


def _same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_array_equal(a.view(f"u{a.dtype.itemsize}"), b.view(f"u{b.dtype.itemsize}"))


# ----------------------------------------------------------------------------- bf16 kernels


@tilec.jit
def copy_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@tilec.jit
def convert_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(out_ptr.dtype.element_ty))


@tilec.jit
def bf16_arith_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x + y)
    tl.store(out_ptr + BLOCK + offs, x * y)
    tl.store(out_ptr + 2 * BLOCK + offs, x - y)
    tl.store(out_ptr + 3 * BLOCK + offs, tl.maximum(x, y))
    tl.store(out_ptr + 4 * BLOCK + offs, -x)
    tl.store(out_ptr + 5 * BLOCK + offs, tl.where(x < y, x, y))


def test_bf16_copy_keeps_every_bit_pattern():
    x = _all_bit_patterns(BF16)
    out = np.zeros_like(x)
    copy_kernel[(1,)](x, out, BLOCK=65536)
    _same_bits(out, x)


def test_bf16_torch_tensors(rng):
    values = rng.standard_normal(256).astype(np.float32)
    x = torch.from_numpy(values).to(torch.bfloat16)
    out = torch.zeros(256, dtype=torch.float32)
    convert_kernel[(1,)](x, out, BLOCK=256)
    np.testing.assert_array_equal(out.numpy(), x.float().numpy())  # widening is exact
    back = torch.zeros(256, dtype=torch.bfloat16)
    convert_kernel[(1,)](out, back, BLOCK=256)
    assert torch.equal(back, x)
    rounded = torch.zeros(256, dtype=torch.bfloat16)
    convert_kernel[(1,)](torch.from_numpy(values), rounded, BLOCK=256)
    assert torch.equal(rounded, torch.from_numpy(values).to(torch.bfloat16))  # torch rounds to nearest even


def test_fp32_to_bf16_rounds_to_nearest_even_and_overflows_to_inf(rng):
    x = (rng.standard_normal(1024) * 10.0 ** rng.integers(-30, 30, 1024)).astype(np.float32)
    x[:8] = [np.inf, -np.inf, np.nan, -0.0, 3.4e38, 1e-45, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8]
    out = np.zeros(1024, dtype=BF16)
    convert_kernel[(1,)](x, out, BLOCK=1024)
    _same_bits(out[3:], x[3:].astype(BF16))  # ml_dtypes rounds fp32 -> bf16 to nearest even
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2].astype(np.float32))
    assert np.signbit(out[3].astype(np.float32)) and out[4] == np.inf  # 3.4e38 rounds past bf16's max
    assert out[6] == 1.0 and out[7] == 1 + 2.0 ** -6  # ties to even


def test_fp64_to_bf16_rounds_once(rng):
    x = rng.standard_normal(512) * 10.0 ** rng.integers(-20, 20, 512)
    x[0] = 1 + 2.0 ** -8 + 2.0 ** -30  # above a tie: fp64 -> fp32 -> bf16 would round down
    out = np.zeros(512, dtype=BF16)
    convert_kernel[(1,)](x, out, BLOCK=512)
    expected = np.array([exact_round(Fraction(float(v)), BF16) for v in x])
    np.testing.assert_array_equal(out.astype(np.float64), expected)
    assert out[0] == 1 + 2.0 ** -7


def test_bf16_arithmetic_rounds_each_result(rng):
    n = 256
    x = rng.standard_normal(n).astype(BF16)
    y = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(BF16)
    x[:3] = [np.nan, np.inf, -0.0]
    y[:3] = [1.0, -np.inf, 0.0]
    out = np.zeros(6 * n, dtype=BF16)
    bf16_arith_kernel[(1,)](x, y, out, BLOCK=n)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(invalid="ignore"):
        exacts = [x64 + y64, x64 * y64, x64 - y64]
    for k, exact in enumerate(exacts):
        got = out[k * n:(k + 1) * n].astype(np.float64)
        expected = np.array([exact_round(Fraction(v), BF16) if np.isfinite(v) else v for v in exact])
        np.testing.assert_array_equal(got, expected)  # NaN and infinities as in float64
    assert out[2] == 0 and not np.signbit(out[2].astype(np.float32))  # -0 + 0 = +0
    np.testing.assert_array_equal(out[3 * n + 3:4 * n].astype(np.float32), np.fmax(x64, y64)[3:].astype(np.float32))
    _same_bits(out[4 * n:5 * n], (-x.astype(np.float32)).astype(BF16))
    np.testing.assert_array_equal(out[5 * n + 3:].astype(np.float32), np.where(x64 < y64, x64, y64)[3:])


@tilec.jit
def mixed_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # bf16
    y = tl.load(y_ptr + offs)  # fp32
    tl.store(out_ptr + offs, x + y)
    tl.store(out_ptr + BLOCK + offs, x / x)


def test_bf16_with_fp32_computes_in_fp32(rng):
    x = rng.standard_normal(64).astype(BF16)
    y = rng.standard_normal(64).astype(np.float32)
    out = np.zeros(128, np.float32)
    mixed_kernel[(1,)](x, y, out, BLOCK=64)
    np.testing.assert_array_equal(out[:64], x.astype(np.float32) + y)
    np.testing.assert_array_equal(out[64:], np.ones(64, np.float32))  # bf16 division happens in fp32


def test_bf16_unary_math_within_one_ulp(sem, rng):
    x = rng.uniform(0.1, 4, 256).astype(BF16)
    ty = block(x, tl.bfloat16).type
    for op, fn in [("exp", np.exp), ("sqrt", np.sqrt), ("log", np.log), ("sin", np.sin), ("erf", None)]:
        got = sem.builder.unary(op, x, ty)
        assert got.dtype == BF16
        if fn is not None:
            np.testing.assert_allclose(got.astype(np.float64), fn(x.astype(np.float64)), rtol=2.0 ** -8)


def test_bf16_integer_conversions(sem):
    ints = np.array([2**30 + 2**22 + 1, 2**24 + 1, -(2**30 + 2**22 + 1), 7], dtype=np.int32)
    got = sem.builder.cast("sitofp", ints, block(ints, tl.bfloat16).type)
    np.testing.assert_array_equal(got.astype(np.float64), [2**30 + 2**23, 2**24, -(2**30 + 2**23), 7])
    floats = np.array([1e10, -1e10, np.nan, -3.75, 200.5], dtype=np.float32).astype(BF16)
    got = sem.builder.cast("fptosi", floats, block(floats, tl.int8).type)
    np.testing.assert_array_equal(got, [127, -128, 0, -3, 127])
    assert sem.builder.to_python(np.array(1.5, BF16)) == 1.5
    assert type(sem.builder.to_python(np.array(1.5, BF16))) is float


def test_bf16_out_of_bounds_message():
    x = np.zeros(4, dtype=BF16)
    with pytest.raises(OutOfBoundsAccess, match="reads bfloat16 element offset 4 from argument 'x_ptr'"):
        copy_kernel[(1,)](x, np.zeros(8, BF16), BLOCK=8)


# ----------------------------------------------------------------------------- fp8 (through the builder)


@pytest.mark.parametrize("dt, ty, limit", FP8)
def test_fp8_widening_is_exact_for_every_bit_pattern(sem, dt, ty, limit):
    x = _all_bit_patterns(dt)
    for target, name in [(np.dtype(np.float32), tl.float32), (np.dtype(np.float16), tl.float16), (BF16, tl.bfloat16),
                         (np.dtype(np.float64), tl.float64)]:
        got = sem.builder.cast("extf", x, block(x, name).type)
        assert got.dtype == target
        reference = x.astype(np.float32)
        finite = np.isfinite(reference)
        np.testing.assert_array_equal(got.astype(np.float32)[finite], reference[finite])
        assert np.isnan(got.astype(np.float32)[np.isnan(reference)]).all()


@pytest.mark.parametrize("dt, ty, limit", FP8)
@pytest.mark.parametrize("source", [np.float32, np.float16, np.float64])
def test_fp8_narrowing_saturates(sem, rng, dt, ty, limit, source):
    x = (rng.standard_normal(2048) * 10.0 ** rng.integers(-6, 6, 2048)).astype(source)
    x[:7] = [np.inf, -np.inf, np.nan, limit * 1.04, -limit * 1.3, -0.0, 2.0 ** -30]
    got = sem.builder.cast("truncf", x, block(x, ty).type)
    assert got.dtype == dt
    wide = got.astype(np.float64)
    np.testing.assert_array_equal(wide[[0, 1, 3, 4]], [limit, -limit, limit, -limit])
    assert np.isnan(wide[2]) and wide[5] == 0 and np.signbit(wide[5]) and wide[6] == 0
    in_range = np.abs(x.astype(np.float64)) <= limit
    in_range[:7] = False
    expected = [exact_round(Fraction(float(v)), dt) for v in x.astype(np.float64)[in_range]]
    np.testing.assert_array_equal(wide[in_range], expected)
    beyond = ~in_range & np.isfinite(x)
    beyond[:7] = False
    np.testing.assert_array_equal(np.abs(wide[beyond]), limit)


def test_fp8_from_fp64_rounds_once(sem):
    x = np.array([1 + 2.0 ** -4 + 2.0 ** -40], dtype=np.float64)  # just above a tie of e4m3 (ulp 2**-3)
    got = sem.builder.cast("truncf", x, block(x, tl.float8e4nv).type)
    assert got.astype(np.float32)[0] == 1.125


@pytest.mark.parametrize("dt, ty, limit", FP8)
def test_fp8_constants_compare_and_select(sem, dt, ty, limit):
    assert sem.builder.constant(1000.0, ty).astype(np.float32) == limit or dt == FP8E5
    assert sem.builder.constant(1e6, ty).astype(np.float32) == limit
    x = np.array([1.0, -2.0, np.nan, 0.5], dtype=dt)
    y = np.array([1.0, 2.0, np.nan, 0.25], dtype=dt)
    lt = sem.builder.compare("olt", x, y, True, block(x, tl.int1).type)
    eq = sem.builder.compare("oeq", x, y, True, block(x, tl.int1).type)
    np.testing.assert_array_equal(lt, [False, True, False, False])
    np.testing.assert_array_equal(eq, [True, False, False, False])
    picked = sem.builder.select(lt, x, y, block(x, ty).type)
    assert picked.dtype == dt
    np.testing.assert_array_equal(picked.astype(np.float32)[[0, 1, 3]], [1.0, -2.0, 0.25])


@pytest.mark.parametrize("dt, ty, limit", FP8)
@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_fp8_load_store(rng, dt, ty, limit, kind):
    values = rng.standard_normal(64).astype(np.float32).astype(dt)
    if kind == "torch":
        torch_dtype = torch.float8_e4m3fn if dt == FP8E4 else torch.float8_e5m2
        source = torch.from_numpy(values.view(np.uint8).copy()).view(torch_dtype)
        target = torch.zeros(64, dtype=torch_dtype)
    else:
        source, target = values.copy(), np.zeros(64, dtype=dt)
    memory = Memory({"x": source, "y": target})
    builder = NumpyBuilder(memory, (1, 1, 1))
    loaded = builder.load(pointers(memory, "x", np.arange(64), 1), None, None, block(values, ty).type,
                          cache_modifier="", eviction_policy="", volatile=False)
    assert loaded.dtype == dt
    _same_bits(loaded, values)
    mask = np.arange(64) % 2 == 0
    builder.store(pointers(memory, "y", np.arange(64), 1), loaded, mask, cache_modifier="", eviction_policy="")
    stored = target.view(torch.uint8).numpy() if kind == "torch" else target.view(np.uint8)
    np.testing.assert_array_equal(stored[mask], values.view(np.uint8)[mask])
    assert (stored[~mask] == 0).all()


def test_fp8_round_trip_against_ml_dtypes(sem, rng):
    for dt, ty, _ in FP8:
        x = rng.standard_normal(512).astype(np.float32).astype(dt)
        wide = sem.builder.cast("extf", x, block(x, tl.float16).type)
        back = sem.builder.cast("truncf", wide, block(x, ty).type)
        _same_bits(back, x)
        _same_bits(round_to(x.astype(np.float32), dt), x)


@tilec.jit
def fp8_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs).to(tl.float32)
    tl.store(out_ptr + offs, (x * 2).to(out_ptr.dtype.element_ty))


@pytest.mark.parametrize("dt, ty, limit", FP8)
def test_fp8_kernel_through_the_language(rng, dt, ty, limit):
    x = rng.standard_normal(64).astype(np.float32).astype(dt)
    x[0] = limit / 2 + 64 if dt == FP8E4 else limit
    out = np.zeros(64, dtype=dt)
    try:
        fp8_kernel[(1,)](x, out, BLOCK=64)
    except TilecSemanticError as error:
        if "not supported yet" in str(error):
            pytest.skip(f"the semantic layer refuses fp8 still: {error}")
        raise
    wide = x.astype(np.float32) * 2
    assert out[0].astype(np.float32) == limit  # saturated
    _same_bits(out[1:], round_to(wide[1:], dt))
