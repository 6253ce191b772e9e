"""Compile-time checks that behave as Triton's (its test_compile_errors.py), on both
backends: the interpreter runs the compiler's frontend before running a kernel, so each
check fires there too.

- a failed tl.static_assert is a CompilationError without a __cause__;
- tl.where with a non-bool condition works (true where non-zero) and warns (UserWarning);
- tl.dot's max_num_imprecise_acc may not exceed K for fp8 operands;
- the power-of-2 shape errors of tl.arange and tl.full carry Triton's words too.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


def _launch_or_compile(backend, kernel, *args, **constexprs):
    """Launches `kernel` on `backend` (grid (1,)); arrays are moved there first."""
    args = [device_array(a, backend) if isinstance(a, np.ndarray) else a for a in args]
    kernel[(1,)](*args, **constexprs)
    return args


# ----------------------------------------------------------------------------- static_assert

@tilec.jit
def static_assert_kernel(out_ptr, N: tl.constexpr):
    tl.static_assert(N % 2 == 0, "N must be even")
    tl.store(out_ptr + tl.arange(0, 2), tl.full((2,), N, tl.int32))


def test_failed_static_assert_has_no_cause(backend):
    out = np.full(2, -1, np.int32)
    with pytest.raises(tilec.CompilationError) as info:
        _launch_or_compile(backend, static_assert_kernel, out, N=3)
    assert info.value.__cause__ is None
    assert info.value.message == "static_assert failed: N must be even"
    assert "tl.static_assert(N % 2 == 0" in str(info.value)
    (got,) = _launch_or_compile(backend, static_assert_kernel, out, N=4)
    np.testing.assert_array_equal(to_numpy(got), [4, 4])


def test_other_errors_keep_their_cause():
    @tilec.jit
    def kernel(x_ptr):
        tl.arange(0, 3)

    with pytest.raises(tilec.CompilationError) as info:
        kernel.warmup("*fp32", grid=(1,))
    assert info.value.__cause__ is not None


# ----------------------------------------------------------------------------- tl.where

@tilec.jit
def where_kernel(cond_ptr, x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    cond = tl.load(cond_ptr + offs)
    tl.store(out_ptr + offs, tl.where(cond, tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@pytest.mark.parametrize("cond_dtype", [np.uint32, np.int8, np.float32, np.bool_])
def test_where_with_a_non_bool_condition_warns(backend, rng, cond_dtype):
    block = 64
    cond = rng.integers(-2, 3, block).astype(cond_dtype)
    x, y = rng.standard_normal(block).astype(np.float32), rng.standard_normal(block).astype(np.float32)
    out = np.full(block, np.nan, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        *_, got = _launch_or_compile(backend, where_kernel, cond, x, y, out, BLOCK=block)
    np.testing.assert_array_equal(to_numpy(got), np.where(cond != 0, x, y))
    ours = [w for w in caught if "tl.where with a non-boolean condition is deprecated" in str(w.message)]
    if cond_dtype is np.bool_:
        assert not ours
    else:
        assert ours and all(w.category is UserWarning for w in ours)


def test_where_warns_once_per_interpreted_launch(monkeypatch, rng):
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)

    @tilec.jit
    def kernel(cond_ptr, out_ptr):
        offs = tl.program_id(0) * 16 + tl.arange(0, 16)
        tl.store(out_ptr + offs, tl.where(tl.load(cond_ptr + offs), 1.0, 2.0))

    cond = rng.integers(0, 2, 64).astype(np.int32)
    out = np.zeros(64, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel[(4,)](cond, out)
    assert len([w for w in caught if "non-boolean condition" in str(w.message)]) == 1
    np.testing.assert_array_equal(out, np.where(cond != 0, 1.0, 2.0))


# ----------------------------------------------------------------------------- max_num_imprecise_acc

@tilec.jit
def imprecise_kernel(a_ptr, b_ptr, c_ptr, K: tl.constexpr, LIMIT: tl.constexpr):
    m = tl.arange(0, 16)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * 16 + m[None, :])
    tl.store(c_ptr + m[:, None] * 16 + m[None, :], tl.dot(a, b, max_num_imprecise_acc=LIMIT))


@pytest.mark.parametrize("limit", [128, 32])
def test_max_num_imprecise_acc_must_not_exceed_k_for_fp8(limit):
    """fp8 operands: checked when compiling (the interpreter runs the same frontend check)."""
    if limit > 64:
        with pytest.raises(tilec.CompilationError, match=r"max_num_imprecise_acc \(128\) must be <= K \(64\)"):
            imprecise_kernel.warmup("*fp8e5", "*fp8e5", "*fp32", K=64, LIMIT=limit, grid=(1,))
    else:
        imprecise_kernel.warmup("*fp8e5", "*fp8e5", "*fp32", K=64, LIMIT=limit, grid=(1,))


def test_max_num_imprecise_acc_is_not_checked_for_other_types(backend, rng):
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    c = np.full((16, 16), np.nan, np.float32)
    *_, got = _launch_or_compile(backend, imprecise_kernel, a, b, c, K=32, LIMIT=1024)
    np.testing.assert_allclose(to_numpy(got), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_max_num_imprecise_acc_check_in_the_interpreter(monkeypatch):
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    torch = pytest.importorskip("torch")
    a = torch.zeros((16, 64), dtype=torch.float8_e5m2)
    c = torch.zeros((16, 16), dtype=torch.float32)
    with pytest.raises(tilec.CompilationError, match=r"max_num_imprecise_acc \(128\) must be <= K \(64\)"):
        imprecise_kernel[(1,)](a, a.reshape(64, 16), c, K=64, LIMIT=128)


# ----------------------------------------------------------------------------- power-of-2 shapes

@tilec.jit
def arange_kernel(out_ptr, START: tl.constexpr, END: tl.constexpr):
    tl.store(out_ptr + tl.arange(START, END) - START, tl.arange(START, END))


@tilec.jit
def full_kernel(out_ptr, SIZE: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 32), tl.full((SIZE,), 0, dtype=tl.int64).to(tl.int32) + tl.zeros((32,), tl.int32))


def test_power_of_two_messages_have_triton_words(backend):
    out = np.full(64, -1, np.int32)
    with pytest.raises(tilec.CompilationError) as info:
        _launch_or_compile(backend, arange_kernel, out, START=2, END=7)
    assert "arange(2, 7) has 5 elements; the number of elements must be a power of 2" in info.value.message
    assert "arange's range must be a power of 2" in str(info.value.__cause__)
    with pytest.raises(tilec.CompilationError) as info:
        _launch_or_compile(backend, full_kernel, out, SIZE=33)
    assert "shape [33]: every dimension must be a power of 2, and 33 is not" in info.value.message
    assert "Shape element 0 must be a power of 2" in str(info.value.__cause__)
    (got,) = _launch_or_compile(backend, arange_kernel, out, START=2, END=10)
    np.testing.assert_array_equal(to_numpy(got)[:8], np.arange(2, 10))
