"""Keyword-only parameters (`def k(x_ptr, *, BLOCK: tl.constexpr)`) of kernels and @jit
helpers: passed by keyword at launch, in warmup and in calls; passing one by position
is refused as Python refuses it."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import LaunchError
from tilec_testing import device_array, to_numpy

POISON = -999.0


@tilec.jit
def _affine(x, *, scale, SHIFT: tl.constexpr = 1.0):
    return x * scale + SHIFT


@tilec.jit
def affine_kernel(x_ptr, out_ptr, n, *, scale, BLOCK: tl.constexpr, SHIFT: tl.constexpr = 0.5):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = _affine(x, scale=scale, SHIFT=SHIFT) + _affine(x, scale=2.0)
    tl.store(out_ptr + offs, y, mask=mask)


@pytest.mark.parametrize("shift", [None, 3.0])
def test_keyword_only_parameters_at_launch(backend, rng, shift):
    n, block = 100, 32
    x = rng.standard_normal(n).astype(np.float32)
    scale = float(rng.uniform(0.5, 1.5))
    out = device_array(np.full(n + 4, POISON, np.float32), backend)
    extra = {} if shift is None else {"SHIFT": shift}
    affine_kernel[(tilec.cdiv(n, block),)](device_array(x, backend), out, n, scale=scale, BLOCK=block, **extra)
    x64 = x.astype(np.float64)
    want = x64 * np.float32(scale) + (0.5 if shift is None else shift) + x64 * 2.0 + 1.0
    got = to_numpy(out)
    np.testing.assert_allclose(got[:n], want, rtol=1e-6, atol=1e-6)
    assert (got[n:] == POISON).all()


def test_a_keyword_only_parameter_given_by_position_is_refused(monkeypatch):
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(LaunchError, match=r"takes 3 positional arguments but 4 were given; scale, BLOCK, SHIFT "
                                          r"\(after `\*`\) are passed by keyword only"):
        affine_kernel[(1,)](x, out, 8, 2.0, BLOCK=8)
    with pytest.raises(LaunchError, match="missing argument 'BLOCK'"):
        affine_kernel[(1,)](x, out, 8, scale=2.0)
    assert (out == 0).all()


def test_warmup_takes_keyword_only_parameters_by_keyword():
    kernel = affine_kernel.warmup("*fp32:16", "*fp32:16", "i32", scale="fp32", BLOCK=64, grid=(1,))
    assert kernel.name == "affine_kernel"
    with pytest.raises(LaunchError, match="passed by keyword only"):
        affine_kernel.warmup("*fp32:16", "*fp32:16", "i32", "fp32", BLOCK=64, grid=(1,))


@tilec.jit
def positional_call_kernel(x_ptr):
    tl.store(x_ptr, _affine(tl.load(x_ptr), 2.0))


def test_a_helper_called_with_a_keyword_only_parameter_by_position():
    message = r"_affine\(\) takes 1 positional argument but 2 were given; scale, SHIFT \(after `\*`\) are passed"
    with pytest.raises(tilec.CompilationError, match=message):
        tilec.compile(positional_call_kernel, signature={"x_ptr": "*fp32"})
