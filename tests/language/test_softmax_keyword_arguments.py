"""tl.softmax's keep_dims and ieee_rounding are keyword-only, and keep_dims is deprecated
and ignored (passing it warns), as in Triton."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

MESSAGE = "keep_dims argument to tl.softmax is deprecated and ignored"


@tilec.jit
def softmax_kernel(x_ptr, out_ptr, KEEP: tl.constexpr, MEMBER: tl.constexpr, DIM: tl.constexpr):
    offs = tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + offs)
    if MEMBER:
        y = x.softmax(dim=DIM, keep_dims=KEEP, ieee_rounding=True)
    else:
        y = tl.softmax(x, DIM, keep_dims=KEEP, ieee_rounding=True)
    tl.static_assert(y.shape == x.shape)
    tl.store(out_ptr + offs, y)


def _reference(x, dim):
    e = np.exp(x.astype(np.float64) - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("keep", [None, False, True])
@pytest.mark.parametrize("member", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_keep_dims_is_ignored_and_warns(backend, rng, keep, member, dim):
    x = (rng.standard_normal((8, 16)) * 8).astype(np.float32)
    out = device_array(np.full((8, 16), np.nan, np.float32), backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        softmax_kernel[(1,)](device_array(x, backend), out, KEEP=keep, MEMBER=member, DIM=dim)
    np.testing.assert_allclose(to_numpy(out), _reference(x, dim), rtol=1e-6, atol=1e-12)
    ours = [w for w in caught if MESSAGE in str(w.message)]
    if keep is None:
        assert not ours
    else:
        # one per compilation (the interpreter fixture also compiles each launch)
        assert ours and all(w.category is UserWarning for w in ours)


def test_the_interpreter_warns_once_per_launch(monkeypatch, rng):
    """The interpreter reports compile-time warnings from its frontend check, not once per
    program: a 4-program launch warns once."""
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)

    @tilec.jit
    def kernel(x_ptr, out_ptr):
        offs = tl.program_id(0) * 16 + tl.arange(0, 16)
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, tl.softmax(x, keep_dims=True))

    x = rng.standard_normal(64).astype(np.float32)
    out = np.full(64, np.nan, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel[(4,)](x, out)
    assert [str(w.message).startswith(MESSAGE) for w in caught] == [True]
    np.testing.assert_allclose(out.reshape(4, 16), _reference(x.reshape(4, 16), 1), rtol=1e-6)


def test_no_warning_without_keep_dims(monkeypatch, rng):
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    out = np.zeros_like(x)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*keep_dims.*")
        softmax_kernel[(1,)](x, out, KEEP=None, MEMBER=False, DIM=1)
        softmax_kernel.warmup("*fp32", "*fp32", KEEP=None, MEMBER=True, DIM=0, grid=(1,))


@tilec.jit
def positional_kernel(MEMBER: tl.constexpr):
    x = tl.full((2, 2), 1.0, tl.float32)
    if MEMBER:
        x.softmax(1, True)
    else:
        tl.softmax(x, 1, True)


@pytest.mark.parametrize("member", [False, True])
def test_a_third_positional_argument_is_refused(member):
    with pytest.raises(tilec.CompilationError, match=r"softmax\(\) takes 2 positional arguments but 3 were given; "
                                                     r"keep_dims, ieee_rounding \(after `\*`\) are passed by keyword"):
        positional_kernel.warmup(member, grid=(1,))
