"""Kernels written in the style of public Triton kernel libraries that tilec got wrong:
a @jit helper recursing on a constexpr, libdevice imported as
`triton.language.extra.cuda.libdevice`, and tl.maximum / tl.minimum / tl.clamp / tl.fma /
Python's max and min, which in Triton make a Python number a tensor of its own type
before promoting (and compare bf16 in fp32), unlike arithmetic operators; and functions of
Python's `math` on constants, which Triton folds while compiling."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.language.extra.cuda.libdevice import rsqrt  # Liger-Kernel's fallback import
from tilec_testing import device_array, to_numpy

# ----------------------------------------------------------------------------- recursion on a constexpr


@tilec.jit
def _pairwise_sum(x, N: tl.constexpr):
    # Halves the block each call; the static `if` ends the recursion (Triton compiles each
    # specialisation as a function of its own).
    if N == 1:
        return x
    else:
        even, odd = tl.split(tl.reshape(x, (N // 2, 2)))
        return _pairwise_sum(even + odd, N // 2)


@tilec.jit
def pairwise_sum_kernel(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    total = _pairwise_sum(x, N)
    tl.store(out_ptr + row + tl.arange(0, 1), total)


@pytest.mark.parametrize("n", [1, 2, 64, 1024])
def test_recursion_on_a_constexpr(backend, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((3, n)).astype(np.float32)
    out = device_array(np.full(3, np.nan, np.float32), backend)
    pairwise_sum_kernel[(3,)](device_array(x, backend), out, N=n)
    np.testing.assert_allclose(to_numpy(out), x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


@tilec.jit
def _countdown(x, n):
    if n > 0:
        return _countdown(x + 1, n - 1)  # the same types and constants again: never ends when inlined
    return x


@tilec.jit
def countdown_kernel(out_ptr, n):
    tl.store(out_ptr, _countdown(tl.load(out_ptr), n))


def test_recursion_repeating_a_call_is_refused():
    with pytest.raises(tilec.CompilationError, match="calls itself .* same argument types and constants"):
        tilec.compile(countdown_kernel, signature={"out_ptr": "*i32", "n": "i32"}, target="sm_90")


# ----------------------------------------------------------------------------- libdevice as a submodule


@tilec.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    inv = rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * n_cols + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


def test_libdevice_imported_from_extra_cuda(backend):
    import tilec.language.extra.cuda.libdevice as cuda_libdevice
    import tilec.language.extra.libdevice as libdevice
    assert cuda_libdevice is libdevice is tl.extra.cuda.libdevice
    rng = np.random.default_rng(5)
    rows, cols = 4, 200
    x = rng.standard_normal((rows, cols)).astype(np.float16)
    w = rng.standard_normal(cols).astype(np.float32)
    y = device_array(np.full((rows, cols), np.nan, np.float16), backend)
    rms_norm_kernel[(rows,)](device_array(x, backend), device_array(w, backend), y, cols, 1e-6, BLOCK=256)
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 * x64).mean(1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(to_numpy(y).astype(np.float64), want, rtol=2e-3, atol=2e-3)


# ----------------------------------------------------------------------------- maximum/minimum/clamp/fma typing


@tilec.jit
def scalar_operand_kernel(i8_ptr, h_ptr, b_ptr, c_ptr, out_i_ptr, out_h_ptr, out_b_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    q = tl.load(i8_ptr + offs)
    h = tl.load(h_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = tl.load(c_ptr + offs)
    # A Python number is an int32 / fp32 tensor here, not the other operand's type.
    lo = tl.minimum(q, 100)
    hi = max(q, -100)                      # Python max on tensors is tl.maximum
    tl.static_assert(lo.dtype == tl.int32 and hi.dtype == tl.int32)
    tl.static_assert(tl.maximum(q.to(tl.uint8), -1).dtype == tl.int32)  # int32 holds both: accepted
    tl.store(out_i_ptr + offs, lo * 3 + hi * 5)  # int32 products: no int8 wrap-around
    relu = tl.maximum(h, 0.0)
    cl = tl.clamp(h, -0.5, 0.5)
    f = tl.fma(h, 3.0, 0.25)
    tl.static_assert(relu.dtype == tl.float32 and cl.dtype == tl.float32 and f.dtype == tl.float32)
    tl.static_assert(tl.maximum(h, 0).dtype == tl.float16)  # an int number takes the float's type
    tl.store(out_h_ptr + offs, relu * c + cl * c + f)  # fp32 arithmetic, one rounding at the store
    m = tl.maximum(b, c)                   # bf16 meets fp16: compared in fp32
    tl.static_assert(m.dtype == tl.float32 and tl.minimum(b, b).dtype == tl.float32)
    tl.store(out_b_ptr + offs, m * c)


def test_scalar_operands_of_maximum_minimum_clamp_fma(backend):
    rng = np.random.default_rng(11)
    n = 256
    q = rng.integers(-128, 128, n).astype(np.int8)
    h = (rng.standard_normal(n) * 4).astype(np.float16)
    b = (rng.standard_normal(n) * 4).astype(ml_dtypes.bfloat16)
    c = (rng.standard_normal(n) * 4).astype(np.float16)
    out_i = device_array(np.full(n, 12345, np.int32), backend)
    out_h = device_array(np.full(n, np.nan, np.float32), backend)
    out_b = device_array(np.full(n, np.nan, np.float32), backend)
    scalar_operand_kernel[(1,)](device_array(q, backend), device_array(h, backend), device_array(b, backend),
                                device_array(c, backend), out_i, out_h, out_b, N=n)
    qi = q.astype(np.int64)
    np.testing.assert_array_equal(to_numpy(out_i), np.minimum(qi, 100) * 3 + np.maximum(qi, -100) * 5)
    h64, c64 = h.astype(np.float64), c.astype(np.float64)
    want = np.maximum(h64, 0) * c64 + np.clip(h64, -0.5, 0.5) * c64 + (h64 * 3 + 0.25)
    np.testing.assert_allclose(to_numpy(out_h), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(to_numpy(out_b), np.maximum(b.astype(np.float64), c64) * c64, rtol=1e-6)


# ----------------------------------------------------------------------------- math on constants


@tilec.jit
def exp2_softmax_kernel(x_ptr, out_ptr, N: tl.constexpr):
    LOG2E: tl.constexpr = math.log2(math.e)                # folded while compiling, as in Triton
    HALF: tl.constexpr = math.ceil(N / 3)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs) * LOG2E
    p = tl.math.exp2(x - tl.max(x, 0))
    tl.store(out_ptr + offs, p / tl.sum(p, 0) + (offs < HALF).to(tl.float32) * math.sqrt(2.0))


def test_math_functions_of_constants(backend):
    rng = np.random.default_rng(3)
    n = 64
    x = rng.standard_normal(n).astype(np.float32)
    out = device_array(np.full(n, np.nan, np.float32), backend)
    exp2_softmax_kernel[(1,)](device_array(x, backend), out, N=n)
    e = np.exp(x.astype(np.float64) - x.max())
    want = e / e.sum() + (np.arange(n) < math.ceil(n / 3)) * math.sqrt(2.0)
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-5, atol=1e-6)
