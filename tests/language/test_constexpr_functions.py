"""What kernels compute while they are compiled: `tilec.cdiv` and `tilec.next_power_of_2`
(Triton's `triton.cdiv`, `triton.next_power_of_2`) and `@tilec.constexpr_function`s
called on constants fold to constants; constants returned from @jit functions stay
constants for the caller; `tl.constexpr_type` is the type of a constant."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -555.0


@tilec.constexpr_function
def _tile_of(n, parts):
    return max(16, tilec.next_power_of_2(n) // parts)  # host calls inside run as plain Python


@tilec.jit
def folded_sizes_kernel(x_ptr, out_ptr, n, N: tl.constexpr):
    BLOCK: tl.constexpr = tilec.next_power_of_2(N)  # N = 20 -> 32
    CHUNKS = tilec.cdiv(N, 8)                         # 3, an unannotated constant
    TILE = _tile_of(N, 2)                             # 16
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.static_assert(CHUNKS == 3 and TILE == 16 and BLOCK == 32)
    tl.store(out_ptr + offs, x * CHUNKS + tl.sum(tl.arange(0, TILE), axis=0), mask=offs < n)


def test_cdiv_and_next_power_of_2_fold_in_kernels(backend, rng):
    n = 20
    x = rng.standard_normal(n).astype(np.float32)
    out = device_array(np.full(32, POISON, np.float32), backend)
    folded_sizes_kernel[(1,)](device_array(x, backend), out, n, N=n)
    got = to_numpy(out)
    np.testing.assert_allclose(got[:n], x.astype(np.float64) * 3 + 120, rtol=1e-6)
    assert (got[n:] == POISON).all()


@tilec.jit
def shape_from_cdiv_kernel(out_ptr, N: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, tilec.cdiv(N, 8)), 1.0)


def test_a_folded_value_is_a_constant_shape():
    # 24 / 8 = 3 is known when compiling (a shape), and refused as one only for not being a power of 2
    with pytest.raises(tilec.CompilationError, match="power of 2"):
        tilec.compile(shape_from_cdiv_kernel, signature={"out_ptr": "*fp32"}, constexprs={"N": 24})
    tilec.compile(shape_from_cdiv_kernel, signature={"out_ptr": "*fp32"}, constexprs={"N": 32})


def test_host_calls_are_plain_python():
    assert tilec.cdiv(10, 3) == 4 and tilec.cdiv(tl.constexpr(33), 32) == 2
    assert tilec.next_power_of_2(17) == 32 and tilec.next_power_of_2(1) == 1
    assert _tile_of(100, 4) == 32
    assert isinstance(tilec.cdiv(7, 2), int)


@tilec.jit
def runtime_cdiv_kernel(out_ptr, n):
    tl.store(out_ptr, tilec.cdiv(n, 4))


@tilec.jit
def tl_cdiv_kernel(out_ptr, n):
    tl.store(out_ptr, tl.cdiv(n, 4))


def test_cdiv_of_a_runtime_value(backend):
    with pytest.raises(tilec.CompilationError) as info:
        tilec.compile(runtime_cdiv_kernel, signature={"out_ptr": "*i32", "n": "i32"})
    assert "cdiv() runs while the kernel is compiled, and its argument 1 is only known when the kernel runs" \
        in info.value.message
    assert "tl.cdiv divides values known only at run time" in info.value.message
    out = device_array(np.full(1, -1, np.int32), backend)
    tl_cdiv_kernel[(1,)](out, 4099)  # tl.cdiv is the run-time one
    assert to_numpy(out)[0] == 1025


# ----------------------------------------------------------------------------- constants returned


@tilec.jit
def _double(n: tl.constexpr):
    return n * 2


@tilec.jit
def _halves(n: tl.constexpr):
    return n // 2, tl.constexpr(n // 4)


@tilec.jit
def _signbit(x):
    if x < 0:
        return 1
    else:
        return 0


@tilec.jit
def returned_constants_kernel(x_ptr, out_ptr, t, N: tl.constexpr):
    B = _double(N)              # 2N
    half, quarter = _halves(B)  # N, N/2
    s: tl.constexpr = _signbit(-1)  # a static `if`: the callee returns a constant
    tl.static_assert(B == 2 * N and half == N and quarter == N // 2 and s == 1)
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    r = _signbit(t)             # decided at run time: a tensor
    tl.static_assert(r.dtype == tl.int32)
    tl.store(out_ptr + offs, x + tl.sum(tl.arange(0, quarter), axis=0) + r * 100 + s)


@pytest.mark.parametrize("t", [-3, 3])
def test_constants_returned_from_jit_functions(backend, rng, t):
    n = 8
    x = rng.standard_normal(2 * n).astype(np.float32)
    out = device_array(np.full(2 * n, POISON, np.float32), backend)
    returned_constants_kernel[(1,)](device_array(x, backend), out, t, N=n)
    want = x.astype(np.float64) + sum(range(n // 2)) + (100 if t < 0 else 0) + 1
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-6)


# ----------------------------------------------------------------------------- constexpr_type


def test_constexpr_type_on_the_host():
    assert tl.constexpr(5).type == tl.constexpr_type(5)
    assert tl.constexpr(5).type != tl.constexpr_type(6)
    assert tl.constexpr(5).type != tl.constexpr_type(5.0)  # 5 and 5.0 are constants of two types
    assert repr(tl.constexpr_type(5)) == "constexpr_type[5]"
    assert tl.constexpr("gelu").type == tl.constexpr_type("gelu")
    # tilec keeps `x = 3` a constant where Triton makes a tensor: its type is also int32's
    assert tl.constexpr(3).type == tl.int32 and tl.int32 == tl.constexpr(3).type
    assert tl.constexpr(2 ** 40).type == tl.int64 and tl.constexpr(0.5).type == tl.float32
    assert tl.constexpr(True).type.is_bool() and not tl.constexpr(3).type.is_block()
    assert tl.constexpr("gelu").type != tl.int32
    assert len({tl.constexpr_type(1), tl.constexpr_type(1), tl.constexpr_type(2)}) == 2


@tilec.jit
def constexpr_type_kernel(out_ptr, v, K: tl.constexpr):
    y: tl.constexpr = 0
    tl.static_assert(y.type == tl.constexpr_type(0))
    tl.static_assert(isinstance(K.type, tl.constexpr_type))
    tl.static_assert(K.type == tl.constexpr_type(K))
    tl.static_assert(not isinstance(v.type, tl.constexpr_type))  # a run-time value's type is a dtype
    tl.store(out_ptr, v + K)


def test_constexpr_type_in_kernels(backend):
    out = device_array(np.full(1, -1, np.int32), backend)
    constexpr_type_kernel[(1,)](out, 40, K=2)
    assert to_numpy(out)[0] == 42
