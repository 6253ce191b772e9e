"""tl.cat, tl.squeeze and tl.unsqueeze as Triton 3.9 defines them, on both backends.

tl.cat concatenates in order along any dimension whatever `can_reorder` says (Triton 3.9
ignores it) and needs two tensors of one shape; tl.squeeze(x, dim) removes a dimension
of size 1 and tl.unsqueeze(x, dim) inserts one (Triton 3.7's standard library).
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


def _poisoned(shape, dtype) -> np.ndarray:
    return np.full(shape, -12345, dtype)


# ----------------------------------------------------------------------------- cat


@tilec.jit
def cat_kernel(x_ptr, y_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, DIM: tl.constexpr,
               REORDER: tl.constexpr):
    a, b, c = tl.arange(0, A), tl.arange(0, B), tl.arange(0, C)
    offs = a[:, None, None] * (B * C) + b[None, :, None] * C + c[None, None, :]
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.cat(x, y, can_reorder=REORDER, dim=DIM)
    # The result's strides, whichever dimension doubled.
    ra = tl.arange(0, z.shape[0])
    rb = tl.arange(0, z.shape[1])
    rc = tl.arange(0, z.shape[2])
    tl.store(out_ptr + ra[:, None, None] * (z.shape[1] * z.shape[2]) + rb[None, :, None] * z.shape[2]
             + rc[None, None, :], z)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("can_reorder", [False, True])
def test_cat_keeps_the_order_along_any_dimension(backend, rng, dim, can_reorder):
    shape = (2, 4, 8)
    x = rng.integers(-1000, 1000, shape).astype(np.int32)
    y = rng.integers(-1000, 1000, shape).astype(np.int32)
    want = np.concatenate([x, y], axis=dim)
    out = device_array(_poisoned(want.shape, np.int32), backend)
    cat_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, A=2, B=4, C=8, DIM=dim,
                     REORDER=can_reorder)
    np.testing.assert_array_equal(to_numpy(out), want)


@tilec.jit
def cat_1d_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out_ptr + tl.arange(0, 2 * N), tl.cat(tl.load(x_ptr + i), tl.load(y_ptr + i)))


def test_cat_of_two_vectors(backend, rng):
    x = rng.standard_normal(64).astype(np.float16)
    y = rng.standard_normal(64).astype(np.float16)
    out = device_array(np.full(128, np.nan, np.float16), backend)
    cat_1d_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, N=64)
    np.testing.assert_array_equal(to_numpy(out), np.concatenate([x, y]))


@tilec.jit
def cat_shapes_kernel(out_ptr, M: tl.constexpr, N: tl.constexpr, P: tl.constexpr, Q: tl.constexpr,
                      DIM: tl.constexpr):
    a = tl.zeros((M, N), tl.float32) + 1.0
    b = tl.zeros((P, Q), tl.float32) + 2.0
    c = tl.cat(a, b, dim=DIM)
    tl.store(out_ptr + tl.arange(0, 1), tl.sum(tl.ravel(c)))


@pytest.mark.parametrize("m,n,p,q,dim,message", [
    (16, 8, 8, 8, 0, r"cat needs two tensors of one shape, got \[16, 8\] and \[8, 8\]"),
    (8, 1, 8, 8, 1, r"cat needs two tensors of one shape, got \[8, 1\] and \[8, 8\]"),  # no broadcasting
    (8, 8, 8, 4, 0, r"cat needs two tensors of one shape, got \[8, 8\] and \[8, 4\]"),
    (8, 8, 8, 8, 2, r"cat's dim must be a constant from -2 to 1 for tensors of rank 2, got 2"),
])
def test_cat_refuses_tensors_of_different_shapes(backend, m, n, p, q, dim, message):
    out = device_array(np.zeros(1, np.float32), backend)
    with pytest.raises(tilec.CompilationError, match=message):
        cat_shapes_kernel[(1,)](out, M=m, N=n, P=p, Q=q, DIM=dim)


@tilec.jit
def cat_ranks_kernel(out_ptr):
    c = tl.cat(tl.zeros((8,), tl.int32), tl.zeros((1, 8), tl.int32))
    tl.store(out_ptr + tl.arange(0, 1), tl.sum(tl.ravel(c)))


def test_cat_refuses_tensors_of_different_ranks(backend):
    out = device_array(np.zeros(1, np.int32), backend)
    with pytest.raises(tilec.CompilationError,
                       match=r"cat needs two tensors of one rank, got shapes \[8\] and \[1, 8\] "
                             r"\(tensors must have the same rank, got 1 and 2\)"):
        cat_ranks_kernel[(1,)](out)


# ----------------------------------------------------------------------------- squeeze / unsqueeze


@tilec.jit
def squeeze_kernel(x_ptr, out_ptr, first_ptr):
    r, c = tl.arange(0, 4), tl.arange(0, 8)
    x = tl.load(x_ptr + r[:, None] * 8 + c[None, :])            # [4, 8]
    u = tl.unsqueeze(x, 1)                                       # [4, 1, 8]
    tl.static_assert(u.shape == [4, 1, 8])
    v = u.unsqueeze(-1)                                          # [4, 1, 8, 1]
    tl.static_assert(v.shape == [4, 1, 8, 1])
    w = tl.squeeze(v, -1).squeeze(1)                             # [4, 8] again
    tl.static_assert(w.shape == [4, 8])
    tl.store(out_ptr + r[:, None] * 8 + c[None, :], w * 2)
    one = tl.load(x_ptr + tl.arange(0, 1))                      # [1]
    first = tl.squeeze(one, 0)                                   # a scalar
    tl.static_assert(first.shape == [])
    tl.store(first_ptr, first)


def test_squeeze_and_unsqueeze_round_trip(backend, rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    out = device_array(np.full((4, 8), np.nan, np.float32), backend)
    first = device_array(np.full(1, np.nan, np.float32), backend)
    squeeze_kernel[(1,)](device_array(x, backend), out, first)
    np.testing.assert_array_equal(to_numpy(out), x * 2)
    np.testing.assert_array_equal(to_numpy(first), x[0, :1])


@tilec.jit
def bad_squeeze_kernel(out_ptr, DIM: tl.constexpr):
    x = tl.zeros((4, 1, 8), tl.float32)
    y = tl.squeeze(x, DIM)
    tl.store(out_ptr + tl.arange(0, 1), tl.sum(tl.ravel(y)))


@pytest.mark.parametrize("dim,message", [
    (2, r"squeeze can only remove a dimension of size 1; dimension 2 of \[4, 1, 8\] has size 8"),
    (0, r"squeeze can only remove a dimension of size 1; dimension 0 of \[4, 1, 8\] has size 4"),
    (3, r"squeeze dimension 3 is out of range for a tensor of rank 3"),
    (-4, r"squeeze dimension -4 is out of range for a tensor of rank 3"),
])
def test_squeeze_refuses_a_dimension_other_than_one(backend, dim, message):
    out = device_array(np.zeros(1, np.float32), backend)
    with pytest.raises(tilec.CompilationError, match=message):
        bad_squeeze_kernel[(1,)](out, DIM=dim)
