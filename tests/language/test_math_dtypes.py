"""The operand types of the math functions, as Triton's: tl.exp, tl.log, tl.sin, ... take
fp32 and fp64 and refuse fp16 and bf16 with Triton's words ("Expected dtype ['fp32',
'fp64'] but got fp16"); tl.sqrt_rn takes fp32 (and, in tilec, fp64). tilec's own tl.tan
and tl.trunc, and tl.sigmoid, still take 16-bit floats. On both backends."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

FUNCTIONS = ("exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "rsqrt", "erf", "floor", "ceil", "sqrt_rn")


@tilec.jit
def math_kernel(x_ptr, out_ptr, FN: tl.constexpr, METHOD: tl.constexpr):
    i = tl.arange(0, 16)
    x = tl.load(x_ptr + i)
    if METHOD:
        y = getattr(x, FN)()
    else:
        y = getattr(tl, FN)(x)
    tl.store(out_ptr + i, y)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_16_bit_floats_are_refused(backend, fn, dtype):
    import ml_dtypes
    np_dtype = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    x = np.linspace(0.5, 4.0, 16).astype(np_dtype)
    name = "fp16" if dtype == "float16" else "bf16"
    accepted = "['fp32']" if fn == "sqrt_rn" else "['fp32', 'fp64']"
    message = (rf"{fn} takes fp32 or fp64 values, not {name}; convert with .to\(tl.float32\) first "
               rf"\(Expected dtype {re.escape(accepted)} but got {name}\)")
    for method in (False, True):  # tl.exp(x) and x.exp()
        with pytest.raises(tilec.CompilationError, match=message):
            math_kernel[(1,)](device_array(x, backend), device_array(np.zeros(16, np_dtype), backend), FN=fn,
                              METHOD=method)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_fp32_and_fp64_are_taken(backend, rng, fn, dtype):
    x = rng.uniform(0.25, 4.0, 16).astype(dtype)
    out = device_array(np.full(16, np.nan, dtype), backend)
    math_kernel[(1,)](device_array(x, backend), out, FN=fn, METHOD=False)
    reference = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "cos": np.cos, "sin": np.sin,
                 "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "erf": np.vectorize(math.erf),
                 "floor": np.floor, "ceil": np.ceil, "sqrt_rn": np.sqrt}[fn](x.astype(np.float64))
    np.testing.assert_allclose(to_numpy(out), reference, rtol=4 * np.finfo(dtype).eps if dtype == np.float64 else 4e-6)


@tilec.jit
def tilec_functions_kernel(x_ptr, out_ptr):
    i = tl.arange(0, 16)
    x = tl.load(x_ptr + i)
    tl.store(out_ptr + i, tl.tan(x))
    tl.store(out_ptr + 16 + i, tl.trunc(x * 8))
    s = tl.sigmoid(x)  # fp16 in, fp32 out
    tl.static_assert(s.dtype == tl.float32)
    tl.store(out_ptr + 32 + i, s)


def test_tan_trunc_and_sigmoid_take_fp16(backend, rng):
    x = rng.uniform(-1.0, 1.0, 16).astype(np.float16)
    out = device_array(np.full(48, np.nan, np.float16), backend)
    tilec_functions_kernel[(1,)](device_array(x, backend), out)
    got = to_numpy(out).astype(np.float64)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got[:16], np.tan(x64), rtol=2 ** -10)
    np.testing.assert_array_equal(got[16:32], np.trunc(x64 * 8))
    np.testing.assert_allclose(got[32:], 1 / (1 + np.exp(-x64)), rtol=2 ** -10)
