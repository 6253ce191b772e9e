"""The fuzzer's own model (fuzz_semantics, fuzz_reference): promotion as language.md
states it, correct rounding, and error bounds that shrink back to exact values."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import fuzz_reference as ref
from fuzz_semantics import (BF16, BOOL, F16, F32, F64, I8, I32, I64, INF, SIGN_FREE, U8, U32, U64,
                            PromotionError, Val, computation_type, convert, exact_val, finish, python_scalar_type,
                            round_to, round_toward_zero, ulp)


def test_promotion_follows_the_examples_of_language_md():
    assert python_scalar_type(1, F16) == F16          # h + 1
    assert python_scalar_type(2.5, F16) == F16        # h * 2.5
    assert computation_type(python_scalar_type(1.5, I32), I32) == F32   # i + 1.5
    assert computation_type(I32, F16) == F16          # i + h
    assert computation_type(BF16, BF16) == BF16
    assert computation_type(BF16, F16) == F16
    assert computation_type(U8, I32) == I32           # u + i
    assert python_scalar_type(1, U8) == U8            # u + 1
    assert computation_type(F16, F16, div_or_mod=True) == F32
    assert computation_type(BF16, I32) == F32
    assert computation_type(U32, I32) == U32
    assert computation_type(U8, I64) == I64
    assert computation_type(BOOL, I8) == I8
    with pytest.raises(PromotionError):
        python_scalar_type(-1, U8)
    with pytest.raises(PromotionError):
        python_scalar_type(300, U8)
    with pytest.raises(PromotionError):
        computation_type(I32, U8, div_or_mod=True)
    assert python_scalar_type(2 ** 31, F16) == F16
    assert python_scalar_type(1e300, I32) == F64


def test_round_to_bf16_is_correctly_rounded():
    """No bf16 neighbour of the result is nearer (float32 in between would round twice)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(5000) * 10.0 ** rng.uniform(-30, 30, 5000)
    x[:3] = [1.0 + 2 ** -8 + 2 ** -30, 1.0 + 2 ** -8, -(1.0 + 3 * 2 ** -8)]  # near and at ties
    got = round_to(x, BF16)
    bits = got.view(np.uint16)
    for step in (1, -1):
        neighbour = (bits.astype(np.int32) + step).astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
        assert np.all(np.abs(got.astype(np.float64) - x) <= np.abs(neighbour - x))
    assert got[1] == 1.0 and got[2] == -(1.0 + 4 * 2 ** -8)   # ties to even


def test_round_toward_zero():
    x = np.array([1.0 + 2 ** -12, -(1.0 + 2 ** -12), 70000.0, -1e9, math.inf, math.nan, 0.0], dtype=np.float64)
    got = round_toward_zero(x, F16).astype(np.float64)
    assert got[0] == 1.0 and got[1] == -1.0
    assert got[2] == 65504.0 and got[3] == -65504.0
    assert got[4] == math.inf and math.isnan(got[5]) and got[6] == 0.0


def test_ulp():
    assert ulp(np.float64(1.0), F32) == 2.0 ** -23
    assert ulp(np.float64(0.0), F16) == 2.0 ** -24
    assert ulp(np.float64(3.0), F64) == 2.0 ** -51


def test_finish_exact_when_the_interval_rounds_to_one_value():
    v = finish(np.float64(1.0 + 2 ** -40), np.float64(2 ** -42), F32)
    assert v.err == 0 and v.value == np.float32(1.0)
    v = finish(np.float64(1.0), np.float64(2 ** -20), F32)
    assert 0 < v.err < 2 ** -18
    v = finish(np.float64(1e39), np.float64(1e30), F32)   # beyond fp32 either way
    assert v.err == 0 and v.value == np.float32(math.inf)
    v = finish(np.float64(3.4e38), np.float64(1e37), F32)  # may overflow
    assert v.err == INF


def test_convert_float_to_int_saturates_and_maps_nan_to_zero():
    a = exact_val(np.array([300.0, -300.0, math.nan, -0.9, 2.5], np.float32), F32)
    assert convert(a, I8).value.tolist() == [127, -128, 0, 0, 2]
    assert convert(a, U8).value.tolist() == [255, 0, 0, 0, 2]
    uncertain = Val(np.array([2.0, 2.5], np.float32), np.array([0.1, 0.1]), F32)
    assert convert(uncertain, I32).err.tolist() == [INF, 0.0]  # 1.9 .. 2.1 truncates to 1 or 2


def test_integer_ops_wrap_and_truncate():
    a = exact_val(np.array([-128, 127, -7, 7], np.int8), I8)
    b = exact_val(np.array([-1, 1, 2, -2], np.int8), I8)
    assert ref.int_binary("add", a, b).value.tolist() == [127, -128, -5, 5]
    assert ref.int_binary("floordiv", a, exact_val(np.array([3, 3, 2, -2], np.int8), I8)).value.tolist() == \
        [-42, 42, -3, -3]
    assert ref.int_binary("mod", a, exact_val(np.array([3, 3, 2, -2], np.int8), I8)).value.tolist() == [-2, 1, -1, 1]
    # >> of a signed value promoted to unsigned stays arithmetic (language.md)
    x = convert(exact_val(np.array([-8], np.int8), I8), U32)
    assert ref.int_binary("shr", x, exact_val(np.array([1], np.uint32), U32), left_signed=True).value.tolist() == \
        [0xFFFFFFFC]
    assert ref.int_binary("umulhi", exact_val(np.array([2 ** 63], np.uint64), U64),
                          exact_val(np.array([4], np.uint64), U64)).value.tolist() == [2]


def test_sums_are_exact_when_no_order_can_round():
    x = exact_val(np.array([1.0, 2.0, -3.5, 512.0], np.float16), F16)
    s = ref.reduce_sum(x, 0, False)
    assert s.err == 0 and float(s.value) == 511.5
    y = exact_val(np.array([1.0, 2.0 ** -11, 2.0 ** -11], np.float16), F16)  # order decides
    assert ref.reduce_sum(y, 0, False).err > 0
    z = exact_val(np.array([-0.0, -0.0], np.float32), F32)
    s = ref.reduce_sum(z, 0, False)
    assert s.err == 0 and math.copysign(1, float(s.value)) == -1
    w = exact_val(np.array([math.inf, -3.0e38, -3.0e38], np.float32), F32)  # inf + -inf, or inf
    assert ref.reduce_sum(w, 0, False).err == INF


def test_products_feeding_an_add_allow_a_fused_rounding():
    a = exact_val(np.array([1.0 + 2 ** -12], np.float32), F32)
    p = ref.float_binary("mul", a, a)
    assert p.product is F32 and p.err == 0
    s = ref.float_binary("sub", p, p)
    assert s.err[0] > 0        # fma(a, a, -p) is the product's rounding error, not 0


def test_maximum_of_zeros_frees_the_sign():
    a = exact_val(np.array([0.0, -0.0]), F64)
    b = exact_val(np.array([-0.0, -0.0]), F64)
    m = ref.extremum("max", a, b)
    assert m.err.tolist() == [SIGN_FREE, 0.0]


def test_a_widened_product_keeps_the_rounding_it_may_skip():
    a = exact_val(np.array([1.0 + 2 ** -10], np.float16), F16)
    p = convert(ref.float_binary("mul", a, a), F32)   # fp16 product, then fp32
    assert p.product is F16
    s = ref.float_binary("add", p, exact_val(np.array([-1.0], np.float32), F32))
    assert s.err[0] >= 2.0 ** -11      # half an fp16 ulp of the product, not an fp32 one
