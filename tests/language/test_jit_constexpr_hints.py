"""A called @jit function's `tl.constexpr` annotation is a hint, as in Triton: an argument
known only at run time is passed as it is (Triton's tutorial 06 passes `offs_m`, a
tensor, to `_attn_fwd_inner(..., offs_m: tl.constexpr, ...)`), a compile-time one stays
a constant, and the body refuses the run-time value only where it needs a constant,
saying which annotated parameter received it."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -777.0


@tilec.jit
def _inner(acc, x, offs_m: tl.constexpr, offs_n: tl.constexpr, STAGE: tl.constexpr, N: tl.constexpr):
    # offs_m / offs_n arrive as tensors, STAGE and N as constants (as in tutorial 06).
    if STAGE == 1:
        mask = offs_m[:, None] >= offs_n[None, :]
    else:
        mask = offs_m[:, None] < N
    return acc + tl.where(mask, x, 0.0), tl.arange(0, N)


@tilec.jit
def tutorial_style_kernel(x_ptr, out_ptr, STAGE: tl.constexpr, M: tl.constexpr):
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, M)
    x = tl.load(x_ptr + offs_m[:, None] * M + offs_n[None, :])
    acc = tl.zeros([M, M], tl.float32)
    acc, cols = _inner(acc, x, offs_m, offs_n, STAGE, M // 2)
    tl.static_assert(cols.shape[0] == M // 2)  # N stayed a constant: arange took it
    tl.store(out_ptr + offs_m[:, None] * M + offs_n[None, :], acc * 2.0)


@pytest.mark.parametrize("stage", [1, 2])
def test_runtime_values_for_annotated_parameters_of_a_called_function(backend, rng, stage):
    m = 16
    x = rng.standard_normal((m, m)).astype(np.float32)
    out = device_array(np.full((m, m), POISON, np.float32), backend)
    tutorial_style_kernel[(1,)](device_array(x, backend), out, STAGE=stage, M=m)
    rows, cols = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    mask = rows >= cols if stage == 1 else rows < m // 2
    np.testing.assert_array_equal(to_numpy(out), np.where(mask, x.astype(np.float64) * 2, 0.0))


@tilec.jit
def _scale(x, FACTOR: tl.constexpr):
    return x * FACTOR


@tilec.jit
def scale_kernel(x_ptr, out_ptr, factor, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, _scale(x, factor) + _scale(x, 3.0))


def test_a_runtime_scalar_for_an_annotated_parameter_is_used_as_a_value(backend, rng):
    x = rng.standard_normal(32).astype(np.float32)
    factor = float(rng.uniform(0.5, 2.0))
    out = device_array(np.full(32, POISON, np.float32), backend)
    scale_kernel[(1,)](device_array(x, backend), out, factor, BLOCK=32)
    want = x * np.float32(factor) + x * np.float32(3.0)
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-6, atol=1e-6)


@tilec.jit
def _block_of(ptr, N: tl.constexpr):
    return tl.load(ptr + tl.arange(0, N))


@tilec.jit
def runtime_bound_kernel(x_ptr, out_ptr, n):
    tl.store(out_ptr + tl.arange(0, 16), _block_of(x_ptr, n))


def test_a_runtime_value_where_the_callee_needs_a_constant_names_the_annotation(monkeypatch):
    # Triton: "arange's arguments must be of type tl.constexpr", at the callee's line.
    with pytest.raises(tilec.CompilationError) as info:
        tilec.compile(runtime_bound_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"})
    message = info.value.message
    assert "'N' is annotated tl.constexpr in _block_of, but the caller passed a value known only at run time" \
        in message
    assert "tl.arange(0, N)" in str(info.value) and "_block_of(x_ptr, n)" in str(info.value)
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)  # the interpreter refuses it the same way
    with pytest.raises(tilec.CompilationError, match="'N' is annotated tl.constexpr in _block_of"):
        runtime_bound_kernel[(1,)](np.ones(16, np.float32), np.zeros(16, np.float32), 16)
