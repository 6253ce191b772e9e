"""@jit functions that return a value on some paths and reach their end on others, as
Triton 3.9 compiles them: the result of a path without `return` is undefined (Triton's
poison) and takes the type the other paths return; where only such a path is compiled
(a constant condition), the result is None. Returns of numbers meeting tensors become
tensors; a bare `return` meeting a value, or values of two types, is a "Return type
mismatch"."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -222.0


@tilec.jit
def _doubled_if_positive(x, flag):
    if flag > 0:
        return x * 2.0
    # no `return` on this path: the result is undefined


@tilec.jit
def _offset_pointer_if(ptr, flag):
    if flag > 0:
        return ptr + 1


@tilec.jit
def _pair_if(x, flag):
    if flag > 0:
        return x + 1.0, tl.constexpr(7)


@tilec.jit
def _only_when(x, ENABLED: tl.constexpr):
    if ENABLED:
        return x


@tilec.jit
def poison_kernel(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = _doubled_if_positive(x, flag)
    p = _offset_pointer_if(out_ptr, flag)
    pair = _pair_if(x, flag)
    tl.static_assert(_only_when(x, False) is None)
    if flag > 0:  # the results are used only where they are defined (zeros elsewhere: test_undefined_results.py)
        tl.static_assert(pair[1] == 7)  # a constant returned on one path stays that constant
        tl.store(out_ptr + offs, y + pair[0])
        tl.store(p + BLOCK + offs, _only_when(x, True))
    else:
        tl.store(out_ptr + offs, -x)


@pytest.mark.parametrize("flag", [-4, 4])
def test_results_of_paths_without_return(backend, rng, flag):
    block = 16
    x = rng.standard_normal(block).astype(np.float32)
    out = device_array(np.full(2 * block + 2, POISON, np.float32), backend)
    poison_kernel[(1,)](device_array(x, backend), out, flag, BLOCK=block)
    got = to_numpy(out)
    x64 = x.astype(np.float64)
    if flag > 0:
        np.testing.assert_allclose(got[:block], x64 * 2 + x64 + 1, rtol=1e-6)
        assert got[block] == POISON
        np.testing.assert_array_equal(got[block + 1:2 * block + 1], x)
        assert got[2 * block + 1] == POISON
    else:
        np.testing.assert_array_equal(got[:block], -x)
        assert (got[block:] == POISON).all()


@tilec.jit
def _signbit(x):
    if x < 0:
        return 1
    else:
        return 0


@tilec.jit
def _tuple_return(x):
    if x < 0:
        return 1, x
    else:
        return 0, x


@tilec.jit
def promotion_kernel(out_ptr, t):
    a: tl.constexpr = _signbit(-1)  # a constant condition: a constant
    b: tl.constexpr = _tuple_return(-1)
    tl.static_assert(a == 1 and b[0] == 1 and b[1] == -1)
    s = _signbit(t)                 # decided at run time: the numbers become int32 tensors
    c = _tuple_return(t)
    tl.static_assert(s.dtype == tl.int32 and c[0].dtype == tl.int32 and c[1].dtype == tl.int32)
    tl.store(out_ptr, s * 10 + c[0] + a * 100)


@pytest.mark.parametrize("t", [-5, 5])
def test_returned_numbers_meeting_at_run_time_become_tensors(backend, t):
    out = device_array(np.full(1, -1, np.int32), backend)
    promotion_kernel[(1,)](out, t)
    assert to_numpy(out)[0] == (11 if t < 0 else 0) + 100


@tilec.jit
def _bare_return(x, flag):
    if flag > 0:
        return x
    return


@tilec.jit
def _two_types(x, flag):
    if flag > 0:
        return x
    return x.to(tl.int32)


@tilec.jit
def mismatch_kernel(x_ptr, flag, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    y = _bare_return(x, flag) if CASE == 0 else _two_types(x, flag)
    tl.store(x_ptr + tl.arange(0, 4), y)


@pytest.mark.parametrize("case, described", [(0, "returns fp32[4] on one path and None on another"),
                                             (1, "returns fp32[4] on one path and int32[4] on another")])
def test_return_type_mismatch(case, described, monkeypatch):
    with pytest.raises(tilec.CompilationError) as info:
        tilec.compile(mismatch_kernel, signature={"x_ptr": "*fp32", "flag": "i32"}, constexprs={"CASE": case})
    assert info.value.message.startswith("Return type mismatch: ") and described in info.value.message
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    with pytest.raises(tilec.CompilationError, match="Return type mismatch"):
        mismatch_kernel[(1,)](np.ones(4, np.float32), 3, CASE=case)
