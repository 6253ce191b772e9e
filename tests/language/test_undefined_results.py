"""The result of a path without `return` in a @jit function whose other paths return a
value (Triton's poison) is the same on both backends: zeros of the type the other paths
return (per call: each call's argument types give its own), constants kept; None where
only such paths are compiled. The interpreter, which runs one path, takes the type the
compiler's frontend recorded for the call (frontend/undefined_results.py)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -333.0


@tilec.jit
def _tripled_if_positive(x, flag):
    if flag > 0:
        return x * 3
    # no `return` here: undefined, zeros of x * 3's type


@tilec.jit
def _pair_if_positive(x, flag):
    if flag > 0:
        return x + 1.0, tl.constexpr(7)


@tilec.jit
def _pointer_if_positive(ptr, flag):
    if flag > 0:
        return ptr + 4


@tilec.jit
def _only_when(x, ENABLED: tl.constexpr):
    if ENABLED:
        return x


@tilec.jit
def undefined_results_kernel(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    a = _tripled_if_positive(x, flag)                      # fp32[BLOCK]
    b = _tripled_if_positive(x.to(tl.int16), flag)         # int16[BLOCK]: another call signature
    c = _tripled_if_positive(flag, flag)                   # an int32 scalar
    pair = _pair_if_positive(x, flag)
    tl.static_assert(pair[1] == 7)                         # the constant is kept on every path
    tl.static_assert(a.dtype == tl.float32 and b.dtype == tl.int16 and c.dtype == tl.int32)
    tl.static_assert(_only_when(x, False) is None)         # only a path without `return`: None
    p = _pointer_if_positive(out_ptr, flag)
    is_null = (p.to(tl.int64) == 0).to(tl.float32)
    tl.store(out_ptr + offs, a + b.to(tl.float32) + c.to(tl.float32) + pair[0] + pair[1] + is_null * 1000.0)


@pytest.mark.parametrize("flag", [-4, 2])
def test_paths_without_return_give_zeros(backend, rng, flag):
    block = 16
    x = np.round(rng.standard_normal(block) * 4).astype(np.float32)  # whole numbers: int16 is exact
    out = device_array(np.full(block, POISON, np.float32), backend)
    undefined_results_kernel[(1,)](device_array(x, backend), out, flag, BLOCK=block)
    got = to_numpy(out)
    x64 = x.astype(np.float64)
    if flag > 0:
        want = 3 * x64 + 3 * x64 + 3 * flag + (x64 + 1) + 7
    else:
        want = np.full(block, 0.0 + 0 + 0 + 0 + 7 + 1000.0)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@tilec.jit
def _scaled_or_nothing(x, flag, SCALE: tl.constexpr):
    if flag > 0:
        return x * SCALE


@tilec.jit
def constants_in_the_signature_kernel(out_ptr, flag):
    offs = tl.arange(0, 4)
    u = _scaled_or_nothing(tl.full((4,), 2, tl.int8), flag, 3)      # int8[4]
    v = _scaled_or_nothing(tl.full((4,), 2, tl.int8), flag, 1.5)    # fp32[4]: the constant changes the type
    tl.static_assert(u.dtype == tl.int8 and v.dtype == tl.float32)
    tl.store(out_ptr + offs, u.to(tl.float32) + v)


@pytest.mark.parametrize("flag", [-1, 3])
def test_each_call_takes_its_own_type(backend, flag):
    out = device_array(np.full(4, POISON, np.float32), backend)
    constants_in_the_signature_kernel[(1,)](out, flag)
    np.testing.assert_array_equal(to_numpy(out), np.full(4, 9.0 if flag > 0 else 0.0))
