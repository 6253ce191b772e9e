"""A parameter annotated `tl.const` is a pointer to constant data, `*const fp32`: its type
says so where it is printed, so a name that is a const pointer on one path and a plain
pointer on another is reported with both types told apart, and with the phrase Triton's
error carries (for a `return`, an `if`, a conditional expression)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -777.0


def test_a_const_pointer_prints_its_constness():
    assert str(tl.pointer_type(tl.float32, const=True)) == "*const fp32"
    assert str(tl.pointer_type(tl.float32)) == "*fp32"
    assert str(tl.block_type(tl.pointer_type(tl.int8, const=True), [4])) == "*const int8[4]"
    assert tl.pointer_type(tl.float32, const=True) != tl.pointer_type(tl.float32)


@tilec.jit
def _choose(a, b, choose_b):
    if choose_b:
        return b
    else:
        return a


@tilec.jit
def const_mix_kernel(in_ptr: tl.const, out, c_out: tl.const, choose, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    val = tl.load(in_ptr + offs, mask=mask)
    if MODE == "call":
        final_out = _choose(out, c_out, choose)
    elif MODE == "ternary":
        final_out = c_out if choose else out
    elif MODE == "if":
        if choose:
            final_out = c_out
        else:
            final_out = out
    else:
        final_out = out  # the same type on every path: it runs
    tl.store(final_out + offs, val * 2.0, mask=mask)


@pytest.mark.parametrize("mode, phrase, own_words", [
    ("call", "Inconsistent return types", "_choose() returns *const fp32 on one path and *fp32 on another"),
    ("if", "Mismatched type for final_out", "'final_out' is *const fp32 in the `if` branch but *fp32 in the `else`"),
    ("ternary", "Ternary expression with dynamic condition has inconsistent type",
     "have different types (*const fp32 and *fp32)"),
])
def test_const_and_plain_pointers_do_not_meet(backend, rng, mode, phrase, own_words):
    x = device_array(rng.standard_normal(32).astype(np.float32), backend)
    out = device_array(np.full(32, POISON, np.float32), backend)
    with pytest.raises(tilec.CompilationError) as info:
        const_mix_kernel[(1,)](x, out, out, 3, 32, BLOCK=32, MODE=mode)  # 3: not folded, as 1 is
    assert phrase in info.value.message
    assert own_words in info.value.message
    assert (to_numpy(out) == POISON).all()  # refused before anything ran


def test_one_pointer_type_on_every_path_runs(backend, rng):
    x = rng.standard_normal(32).astype(np.float32)
    out = device_array(np.full(32, POISON, np.float32), backend)
    const_mix_kernel[(1,)](device_array(x, backend), out, out, 1, 20, BLOCK=32, MODE="plain")
    got = to_numpy(out)
    np.testing.assert_array_equal(got[:20], x[:20].astype(np.float64) * 2.0)
    assert (got[20:] == POISON).all()


@tilec.jit
def store_through_const_kernel(c_out: tl.const):
    tl.store(c_out + tl.arange(0, 4), tl.zeros((4,), tl.float32))


def test_storing_through_a_const_pointer_is_refused(backend):
    out = device_array(np.full(4, POISON, np.float32), backend)
    with pytest.raises(tilec.CompilationError, match="Cannot store to a constant pointer"):
        store_through_const_kernel[(1,)](out)
