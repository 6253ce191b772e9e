"""Atomic max/min of fp16 and bf16 (compare-and-swap loops on the GPU), tensor descriptors'
atomics and the element types they take (those of TMA's reductions, as in Triton), and
comparisons of a descriptor's block shape with a list, as Triton's tests write them.

Several programs update the same elements, so the atomics really race on the GPU; the
expected values are order independent (max, min, sums of small integers)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import CompilationError
from tilec_testing import device_array, to_numpy

HALF = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16}


@tilec.jit
def half_max_min_kernel(x_ptr, hi_ptr, lo_ptr, old_ptr, N: tl.constexpr):
    """Program p folds row p of x into hi (max) and lo (min); old gets max's old values."""
    offsets = tl.arange(0, N)
    x = tl.load(x_ptr + tl.program_id(0) * N + offsets)
    old = tl.atomic_max(hi_ptr + offsets, x)
    tl.atomic_min(lo_ptr + offsets, x, mask=offsets % 3 != 1)
    tl.store(old_ptr + tl.program_id(0) * N + offsets, old)


@pytest.mark.parametrize("name", list(HALF))
def test_fp16_and_bf16_atomic_max_min(backend, rng, name):
    dt, rows, n = HALF[name], 6, 64
    x = (rng.standard_normal((rows, n)) * 100).astype(dt)
    x[0, :4] = np.array([-0.0, 0.0, np.inf, -np.inf], dt)
    start = (rng.standard_normal(n) * 10).astype(dt)
    hi, lo = device_array(start.copy(), backend), device_array(start.copy(), backend)
    old = device_array(np.full((rows, n), 7, dt), backend)
    half_max_min_kernel[(rows,)](device_array(x, backend), hi, lo, old, N=n)
    every = np.vstack([start[None], x]).astype(np.float64)
    np.testing.assert_array_equal(to_numpy(hi).astype(np.float64), every.max(axis=0))
    masked = np.arange(n) % 3 == 1
    want_lo = np.where(masked, start.astype(np.float64), every.min(axis=0))
    np.testing.assert_array_equal(to_numpy(lo).astype(np.float64), want_lo)
    # each old value is the maximum of the start and of some rows folded before it
    got_old = to_numpy(old).astype(np.float64)
    assert np.all(got_old >= start.astype(np.float64)) and np.all(got_old <= every.max(axis=0))


@tilec.jit
def descriptor_atomic_kernel(out_ptr, x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, KIND: tl.constexpr):
    desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    assert desc.block_shape == [BM, BN]
    assert desc.shape[1] == N
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + (tl.program_id(0) * BM + rows) * N + tl.program_id(1) * BN + cols)
    offsets = [tl.program_id(0) * BM, tl.program_id(1) * BN]
    if KIND == "add":
        desc.atomic_add(offsets, x)
    elif KIND == "min":
        desc.atomic_min(offsets, x)
    elif KIND == "max":
        desc.atomic_max(offsets, x)
    elif KIND == "and":
        desc.atomic_and(offsets, x)
    elif KIND == "or":
        desc.atomic_or(offsets, x)
    else:
        desc.atomic_xor(offsets, x)


REFERENCE = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
             "xor": np.bitwise_xor}
CASES = [("add", "int32"), ("add", "fp32"), ("add", "fp16"), ("min", "int64"), ("min", "bf16"), ("max", "fp16"),
         ("max", "int32"), ("and", "uint32"), ("or", "int64"), ("xor", "int32")]
NUMPY = {"int32": np.int32, "uint32": np.uint32, "int64": np.int64, "fp32": np.float32, "fp16": np.float16,
         "bf16": ml_dtypes.bfloat16}


@pytest.mark.parametrize("kind, name", CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_descriptor_atomics(backend, rng, kind, name):
    dt = NUMPY[name]
    m, n, bm, bn = 16, 64, 8, 32
    if np.dtype(dt).kind in "iu":
        x = rng.integers(-1000 if np.dtype(dt).kind == "i" else 0, 1000, (m, n)).astype(dt)
        out = rng.integers(-1000 if np.dtype(dt).kind == "i" else 0, 1000, (m, n)).astype(dt)
    else:  # small integers: fp16 sums stay exact
        x = rng.integers(-50, 50, (m, n)).astype(dt)
        out = rng.integers(-50, 50, (m, n)).astype(dt)
    want = REFERENCE[kind](out.astype(np.float64) if kind in ("add", "min", "max") and np.dtype(dt).kind == "f"
                           else out, x.astype(np.float64) if np.dtype(dt).kind == "f" else x)
    got = device_array(out.copy(), backend)
    descriptor_atomic_kernel[(m // bm, n // bn)](got, device_array(x, backend), m, n, BM=bm, BN=bn, KIND=kind)
    np.testing.assert_array_equal(to_numpy(got).astype(np.float64), np.asarray(want).astype(np.float64))


REFUSED = [("add", tl.int64), ("min", tl.float32), ("max", tl.int16), ("xor", tl.float16), ("and", tl.float32)]


@pytest.mark.parametrize("kind, dtype", REFUSED, ids=[f"{k}-{d.name}" for k, d in REFUSED])
def test_descriptor_atomic_element_types_as_triton(kind, dtype):
    name = {tl.int64: "*i64", tl.float32: "*fp32", tl.int16: "*i16", tl.float16: "*fp16"}[dtype]
    with pytest.raises(CompilationError, match=rf"descriptor atomic_{kind} takes .* not {dtype.name}"):
        tilec.compile(descriptor_atomic_kernel, signature={"out_ptr": name, "x_ptr": name, "M": "i32", "N": "i32"},
                      constexprs={"BM": 8, "BN": 32, "KIND": kind}, target="sm_90a")


def test_sequences_compare_item_by_item(backend):
    """`desc.block_shape == [BM, BN]` (a list of constants against a kernel's list of
    constexprs) holds, as do tuples against lists; different items do not."""

    @tilec.jit
    def kernel(out_ptr, BM: tl.constexpr, BN: tl.constexpr):
        tl.static_assert([BM, BN] == (8, 32))
        tl.static_assert((BM, BN) != [BN, BM])
        tl.static_assert([BM, [BN]] == [8, (32,)])
        tl.store(out_ptr, 1)

    out = device_array(np.zeros(1, np.int32), backend)
    kernel[(1,)](out, BM=8, BN=32)
    assert to_numpy(out)[0] == 1
