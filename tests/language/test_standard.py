"""The standard library written in the language (tilec/language/standard.py): sort, topk,
bitonic_merge, flip, softmax, swizzle2d and reduce_or, on both backends.

Inputs are random with duplicates, negative values, extremes, -0.0 and infinities;
outputs are poisoned (every byte 0xA5) before the launch; references are computed in
NumPy independently (sorting and flipping by NumPy itself, float64 softmax, swizzle2d by
enumerating the groups). NaN sorting is checked bit for bit against a NumPy model of the
compare-exchange network Triton uses (see the module docstring of standard.py).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import CompilationError
from tilec_testing import device_array, to_numpy

DTYPES = {
    "bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
    "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
    "float8e4nv": ml_dtypes.float8_e4m3fn, "float8e5": ml_dtypes.float8_e5m2,
    "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64,
}
FLOATS = ("float8e4nv", "float8e5", "float16", "bfloat16", "float32", "float64")


def poisoned(shape, dtype) -> np.ndarray:
    """An array whose every byte is 0xA5 (True for bools): no result looks like it."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.ones(shape, np.bool_)
    return np.full(int(np.prod(shape)) * dtype.itemsize, 0xA5, np.uint8).view(dtype).reshape(shape)


def bits(a: np.ndarray) -> np.ndarray:
    """The bit patterns of `a` (unsigned integers of its width)."""
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def random_values(rng, name: str, shape, specials: bool = True) -> np.ndarray:
    """Random values of dtype `name`: about half from a small range (many duplicates), the
    rest spread wide, plus the extremes (integers) or -0.0, +0.0, +inf, -inf (floats)."""
    dt = DTYPES[name]
    n = int(np.prod(shape))
    if name == "bool":
        return (rng.random(n) < 0.5).reshape(shape)
    if name in FLOATS:
        small = rng.integers(-4, 5, n) * 0.5
        wide = np.clip(rng.standard_normal(n) * 100, -400, 400)
        x = np.where(rng.random(n) < 0.5, small, wide)
        if specials:
            big = 448.0 if name == "float8e4nv" else np.inf  # e4m3fn has no infinities
            extra = [-0.0, 0.0, big, -big, -0.0]
            where = rng.permutation(n)[:min(n, len(extra))]
            x[where] = extra[:len(where)]
        return x.astype(dt).reshape(shape)
    info = np.iinfo(dt)
    small = rng.integers(max(int(info.min), -20), min(int(info.max), 20) + 1, n)
    wide = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    x = np.where(rng.random(n) < 0.5, small.astype(dt), wide)
    if specials:
        # The extremes, and for unsigned types values with the top bit set (they would
        # come first if compared as signed).
        if info.min < 0:
            extra = [info.min, info.max, info.max - 1, -1, 0]
        else:
            extra = [0, info.max, info.max - 1, 1 << (info.bits - 1), 1]
        where = rng.permutation(n)[:min(n, len(extra))]
        x[where] = np.array(extra[:len(where)], dtype=object).astype(dt)
    return x.reshape(shape)


def comparable(a: np.ndarray) -> np.ndarray:
    """Values NumPy orders exactly: floats (fp8/bf16 included) as float64, integers as
    they are (float64 would merge neighbouring 64-bit values), bools as int64."""
    if a.dtype == np.bool_:
        return a.astype(np.int64)
    return a if np.issubdtype(a.dtype, np.integer) else a.astype(np.float64)


# ----------------------------------------------------------------------------- the kernel

@tilec.jit
def family_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, RANK: tl.constexpr,
                  OP: tl.constexpr, DIM: tl.constexpr, DESC: tl.constexpr, K: tl.constexpr, TYPE: tl.constexpr):
    """Loads an A*B*C tensor of rank RANK (shape (C,), (B, C) or (A, B, C)), applies OP
    along DIM and stores the result (of type TYPE) flat, in row-major order."""
    flat = tl.load(x_ptr + tl.arange(0, A * B * C))
    if RANK == 1:
        x = flat
    elif RANK == 2:
        x = tl.reshape(flat, (B, C))
    else:
        x = tl.reshape(flat, (A, B, C))
    if OP == "sort":
        y = tl.sort(x, DIM, DESC)
    elif OP == "sort_defaults":
        y = tl.sort(x)
    elif OP == "sort_keywords":
        y = tl.sort(x, descending=DESC, dim=DIM)
    elif OP == "flip":
        y = tl.flip(x, DIM)
    elif OP == "flip_default":
        y = tl.flip(x)
    elif OP == "merge":
        y = tl.bitonic_merge(x, DIM, DESC)
    else:
        y = tl.topk(x, K, dim=DIM)
    tl.static_assert(y.dtype == TYPE)
    tl.store(out_ptr + tl.arange(0, y.numel), tl.ravel(y))


TL_TYPES = {"bool": tl.int1, "int8": tl.int8, "uint8": tl.uint8, "int16": tl.int16, "uint16": tl.uint16,
            "int32": tl.int32, "uint32": tl.uint32, "int64": tl.int64, "uint64": tl.uint64,
            "float8e4nv": tl.float8e4nv, "float8e5": tl.float8e5, "float16": tl.float16, "bfloat16": tl.bfloat16,
            "float32": tl.float32, "float64": tl.float64}


def type_name(dtype) -> str:
    return next(name for name, dt in DTYPES.items() if np.dtype(dt) == np.dtype(dtype))


def launch(backend, x: np.ndarray, op: str, dim=None, descending=False, k=1, out_shape=None,
           out_dtype=None) -> np.ndarray:
    """Runs `op` on x; the result must have type out_dtype (default: x's)."""
    shape = (1,) * (3 - x.ndim) + x.shape
    out_shape = x.shape if out_shape is None else out_shape
    out_dtype = x.dtype if out_dtype is None else np.dtype(out_dtype)
    out = device_array(poisoned(out_shape, out_dtype), backend)
    family_kernel[(1,)](device_array(x, backend), out, A=shape[0], B=shape[1], C=shape[2], RANK=x.ndim,
                        OP=op, DIM=dim, DESC=descending, K=k, TYPE=TL_TYPES[type_name(out_dtype)])
    return to_numpy(out).reshape(out_shape)


def sorted_reference(x: np.ndarray, dim, descending: bool) -> np.ndarray:
    dim = x.ndim - 1 if dim is None else dim
    ref = np.sort(comparable(x), axis=dim, kind="stable")
    return np.flip(ref, axis=dim) if descending else ref


# ----------------------------------------------------------------------------- sort

@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("name", list(DTYPES))
def test_sort_every_dtype(backend, rng, name, descending):
    x = random_values(rng, name, (4, 16))
    got = launch(backend, x, "sort", dim=1, descending=descending)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(comparable(got), sorted_reference(x, 1, descending))
    if name not in FLOATS:  # a permutation of the input, bit for bit (±0 may merge, see the docs)
        np.testing.assert_array_equal(np.sort(bits(got), axis=1), np.sort(bits(x), axis=1))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape,dim", [
    ((1,), None), ((2,), 0), ((32,), -1),
    ((1, 8), 0), ((1, 8), 1), ((4, 2), 1), ((8, 4), 0), ((4, 8), -2), ((16, 4), None),
    ((2, 4, 8), 1), ((2, 4, 8), 0), ((4, 2, 4), -1),
])
def test_sort_shapes_and_dims(backend, rng, shape, dim, descending):
    x = random_values(rng, "int32" if len(shape) == 2 else "float32", shape)
    got = launch(backend, x, "sort", dim=dim, descending=descending)
    np.testing.assert_array_equal(comparable(got), sorted_reference(x, dim, descending))


@pytest.mark.parametrize("op", ["sort_defaults", "sort_keywords"])
def test_sort_argument_forms(backend, rng, op):
    # tl.sort(x): last dimension, ascending; keywords in any order.
    x = random_values(rng, "float32", (8, 8))
    got = launch(backend, x, op, dim=0, descending=True)
    if op == "sort_defaults":
        np.testing.assert_array_equal(got, sorted_reference(x, 1, False))
    else:
        np.testing.assert_array_equal(got, sorted_reference(x, 0, True))


def network_reference(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Triton's bitonic network along `dim`, modelled on positions: returns, bit for bit,
    what it computes, NaN or not. Stage s merges runs of 2**s (direction: bit s of the
    position, the requested one in the last stage) by exchanges at bits s-1, ..., 0; a
    slot takes its partner when (mine > partner) != (upper slot XOR descending run)."""
    moved = np.moveaxis(x, dim, -1)
    values = comparable(moved)  # exact, same order and NaN behaviour as the narrow types
    n = moved.shape[-1]
    log_n = n.bit_length() - 1
    pos = np.arange(n)
    source = np.broadcast_to(pos, moved.shape).copy()  # which input element each slot holds
    for stage in range(1, log_n + 1):
        run_descends = (pos >> stage) & 1 if stage < log_n else np.full(n, int(descending))
        for bit in reversed(range(stage)):
            partner = pos ^ (1 << bit)
            mine = np.take_along_axis(values, source, -1)
            other = np.take_along_axis(values, source[..., partner], -1)
            upper = (pos >> bit) & 1
            take = (mine > other) != ((upper ^ run_descends) != 0)
            source = np.where(take, source[..., partner], source)
    return np.moveaxis(np.take_along_axis(moved, source, -1), -1, dim)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("name,shape,dim", [
    ("float32", (4, 16), 1), ("float16", (4, 16), 1), ("bfloat16", (2, 32), 1), ("float64", (16, 4), 0),
])
def test_sort_nan_and_signed_zero_match_tritons_network(backend, rng, name, shape, dim, descending):
    x = random_values(rng, name, shape)
    flat = x.reshape(-1)
    nan_bits = {"float32": [0x7FC00001, 0xFFC12345], "float16": [0x7E01, 0xFE42],
                "bfloat16": [0x7FC1, 0xFFC3], "float64": [0x7FF8000000000001, 0xFFF8000000000ABC]}[name]
    where = rng.permutation(flat.size)[:6]
    bits(flat)[where] = np.array(nan_bits * 3, dtype=object).astype(bits(flat).dtype)  # NaNs with payloads
    got = launch(backend, x, "sort", dim=dim, descending=descending)
    np.testing.assert_array_equal(bits(got), bits(network_reference(x, dim, descending)))


def test_sort_network_model_sorts_without_nans(rng):
    # The model above, checked against NumPy where sorting is well defined.
    x = random_values(rng, "float32", (8, 32))
    for descending in (False, True):
        np.testing.assert_array_equal(network_reference(x, 1, descending), sorted_reference(x, 1, descending))


# ----------------------------------------------------------------------------- topk

def topk_reference(x: np.ndarray, k: int, dim) -> np.ndarray:
    dim = x.ndim - 1 if dim is None else dim
    return np.take(sorted_reference(x, dim, True), np.arange(k), axis=dim)


@pytest.mark.parametrize("name,shape,k,dim", [
    ("float32", (1,), 1, None), ("float32", (2,), 1, 0), ("float32", (2,), 2, None),
    ("float32", (16,), 1, None), ("float32", (16,), 4, None), ("float32", (16,), 16, -1),
    ("float32", (64,), 8, None), ("int32", (4, 32), 8, -1), ("int32", (32, 4), 2, 0),
    ("float32", (2, 8, 4), 4, 1), ("int8", (4, 16), 4, 1), ("uint64", (4, 16), 2, 1),
    ("int64", (2, 16), 8, None), ("float16", (4, 16), 4, 1), ("bfloat16", (4, 16), 8, 1),
    ("float64", (8, 8), 4, 0), ("bool", (2, 16), 4, 1), ("float8e4nv", (4, 16), 4, 1), ("float8e5", (32,), 1, None),
    ("float16", (2, 8), 8, 1), ("uint8", (16, 2), 16, 0),
])
def test_topk(backend, rng, name, shape, k, dim):
    x = random_values(rng, name, shape)
    d = len(shape) - 1 if dim is None else dim % len(shape)
    out_shape = shape[:d] + (k,) + shape[d + 1:]
    # As Triton's: below k == n the candidates go through tl.max, which Triton computes in
    # fp32 / int32 for narrower types; the result keeps that type.
    out_dtype = x.dtype
    if k < shape[d] and np.dtype(x.dtype).itemsize < 4:
        out_dtype = np.float32 if name in FLOATS else np.int32
    got = launch(backend, x, "topk", dim=dim, k=k, out_shape=out_shape, out_dtype=out_dtype)
    np.testing.assert_array_equal(comparable(got), topk_reference(x, k, dim))


# ----------------------------------------------------------------------------- bitonic_merge

def bitonic_rows(rng, name, shape, dim) -> np.ndarray:
    """Random bitonic lines along `dim`: ascending then descending, rotated at random."""
    moved = np.moveaxis(random_values(rng, name, shape), dim, -1).copy()
    n = moved.shape[-1]
    for line in moved.reshape(-1, n):
        up = np.sort(line[:n // 2])
        down = np.sort(line[n // 2:])[::-1]
        line[:] = np.roll(np.concatenate([up, down]), rng.integers(n))
    return np.moveaxis(moved, -1, dim)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("name,shape,dim", [
    ("float32", (2,), None), ("float32", (16,), 0), ("int16", (4, 16), 1), ("uint32", (16, 4), 0),
    ("float16", (2, 4, 8), -1),
])
def test_bitonic_merge_sorts_bitonic_lines(backend, rng, name, shape, dim, descending):
    x = bitonic_rows(rng, name, shape, len(shape) - 1 if dim is None else dim)
    got = launch(backend, x, "merge", dim=dim, descending=descending)
    np.testing.assert_array_equal(comparable(got), sorted_reference(x, dim, descending))


def test_bitonic_merge_of_other_input_is_a_permutation(backend, rng):
    x = random_values(rng, "int32", (4, 16))
    got = launch(backend, x, "merge", dim=1)
    np.testing.assert_array_equal(np.sort(got, axis=1), np.sort(x, axis=1))
    # Only the first compare-exchange (distance 8) fixes order across halves: the lower
    # half holds the pairwise minima of the two halves.
    np.testing.assert_array_equal(np.sort(got[:, :8], axis=1), np.sort(np.minimum(x[:, :8], x[:, 8:]), axis=1))


# ----------------------------------------------------------------------------- flip

@pytest.mark.parametrize("name,shape,dim", [
    ("float32", (1,), None), ("float32", (2,), 0), ("float32", (32,), -1),
    ("float32", (4, 8), 0), ("float32", (4, 8), 1), ("float64", (4, 8), None), ("bfloat16", (8, 4), -2),
    ("int8", (4, 16), 1), ("uint64", (16, 2), 0), ("bool", (4, 8), 1), ("float16", (2, 4, 8), 1),
    ("int16", (2, 4, 8), 2), ("float8e5", (4, 8), 1),
])
def test_flip(backend, rng, name, shape, dim):
    x = random_values(rng, name, shape)
    if name in FLOATS:  # NaNs with payloads must arrive unchanged
        flat = x.reshape(-1)
        bits(flat)[rng.integers(flat.size)] = bits(np.array([np.nan], x.dtype))[0] | 5
    got = launch(backend, x, "flip", dim=dim)
    ref = np.flip(x, axis=len(shape) - 1 if dim is None else dim)
    np.testing.assert_array_equal(bits(got), bits(ref))


def test_flip_default_is_last_dim(backend, rng):
    x = random_values(rng, "int32", (4, 8))
    np.testing.assert_array_equal(launch(backend, x, "flip_default"), x[:, ::-1])


# ----------------------------------------------------------------------------- errors

@pytest.mark.parametrize("op,shape,dim,k,message", [
    ("topk", (16,), None, 3, "topk: k must be a positive power of two"),
    ("topk", (16,), None, 32, "topk: k must not exceed the size of the selected dimension"),
    ("topk", (4, 8), 2, 2, "topk: dim must be None or a dimension of x"),
    ("sort", (4, 8), 2, 1, "sort: dim must be None or a dimension of x"),
    ("sort", (4, 8), -3, 1, "sort: dim must be None or a dimension of x"),
    ("merge", (16,), 1, 1, "bitonic_merge: dim must be None or a dimension of x"),
    ("flip", (4, 8), 5, 1, "flip: dim must be None or a dimension of x"),
])
def test_bad_arguments_fail_to_compile(backend, rng, op, shape, dim, k, message):
    x = random_values(rng, "float32", shape)
    with pytest.raises(CompilationError, match=message):
        launch(backend, x, op, dim=dim, k=k)


@tilec.jit
def reduce_or_float_kernel(x_ptr, out_ptr):
    tl.store(out_ptr, tl.reduce_or(tl.load(x_ptr + tl.arange(0, 4)), 0))


def test_reduce_or_rejects_floats(backend):
    with pytest.raises(CompilationError, match="reduce_or only supported for integers"):
        reduce_or_float_kernel[(1,)](device_array(np.ones(4, np.float32), backend),
                                     device_array(np.zeros(1, np.float32), backend))


# ----------------------------------------------------------------------------- softmax

@tilec.jit
def softmax_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, RANK: tl.constexpr, DIM: tl.constexpr,
                   KEEP: tl.constexpr, IEEE: tl.constexpr, DEFAULTS: tl.constexpr):
    if RANK == 1:
        offs = tl.arange(0, N)
    else:
        offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    if DEFAULTS:
        y = tl.softmax(x)
    else:
        y = tl.softmax(x, DIM, ieee_rounding=IEEE)  # keep_dims is keyword-only, deprecated and ignored
    # fp16/bf16 are computed and returned in fp32, as in Triton.
    if x.dtype == tl.float64:
        tl.static_assert(y.dtype == tl.float64)
    else:
        tl.static_assert(y.dtype == tl.float32)
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("name,shape,dim,keep,ieee,defaults", [
    ("float32", (32,), None, False, False, True),
    ("float32", (8, 16), None, False, False, True),
    ("float32", (8, 16), 1, False, False, False),
    ("float32", (16, 8), 0, True, True, False),
    ("float32", (8, 8), -1, False, True, False),
    ("float16", (8, 16), 1, True, False, False),
    ("bfloat16", (16, 8), 0, False, False, False),
    ("float64", (8, 16), 1, False, True, False),
])
def test_softmax(backend, rng, name, shape, dim, keep, ieee, defaults):
    scale = 4 if name == "float16" else 40
    x64 = rng.standard_normal(shape) * scale
    flat = x64.reshape(-1)
    flat[rng.permutation(flat.size)[:3]] = -np.inf  # masked entries (no line is all -inf)
    flat[rng.permutation(flat.size)[:2]] = 3 * scale  # far above the rest
    x = x64.astype(DTYPES[name])
    out_dtype = np.float64 if name == "float64" else np.float32
    out = device_array(poisoned(shape, out_dtype), backend)
    softmax_kernel[(1,)](device_array(x, backend), out, M=shape[0], N=shape[-1], RANK=len(shape), DIM=dim,
                         KEEP=keep, IEEE=ieee, DEFAULTS=defaults)
    axis = 0 if dim is None else dim
    ref = x.astype(np.float64)
    ref = np.exp(ref - ref.max(axis=axis, keepdims=True))
    ref /= ref.sum(axis=axis, keepdims=True)
    got = to_numpy(out)
    if name == "float64":
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-300)
    else:
        np.testing.assert_allclose(got, ref, rtol=5e-5, atol=1e-30)
    np.testing.assert_allclose(got.sum(axis=axis), 1.0, rtol=1e-5)


# ----------------------------------------------------------------------------- swizzle2d

@tilec.jit
def swizzle_tensor_kernel(out_ptr, size_i, size_j, size_g, BI: tl.constexpr, BJ: tl.constexpr):
    i = tl.arange(0, BI)[:, None]
    j = tl.arange(0, BJ)[None, :]
    new_i, new_j = tl.swizzle2d(i, j, size_i, size_j, size_g)
    mask = (i < size_i) & (j < size_j)
    offs = i * size_j + j
    tl.store(out_ptr + offs, new_i, mask=mask)
    tl.store(out_ptr + size_i * size_j + offs, new_j, mask=mask)


@tilec.jit
def swizzle_scalar_kernel(out_ptr, size_i, size_j, size_g):
    pid = tl.program_id(0)
    new_i, new_j = tl.swizzle2d(pid // size_j, pid % size_j, size_i, size_j, size_g)
    tl.store(out_ptr + pid, new_i)
    tl.store(out_ptr + size_i * size_j + pid, new_j)


def swizzle_reference(size_i: int, size_j: int, size_g: int) -> tuple[np.ndarray, np.ndarray]:
    """The tile each program visits: groups of size_g rows (the last one may be shorter),
    walked column by column, top to bottom within a column."""
    order = []
    for first in range(0, size_i, size_g):
        rows = range(first, min(first + size_g, size_i))
        order += [(r, c) for c in range(size_j) for r in rows]
    tiles = np.array(order)
    return tiles[:, 0].reshape(size_i, size_j), tiles[:, 1].reshape(size_i, size_j)


@pytest.mark.parametrize("size_i,size_j,size_g", [(4, 4, 2), (5, 3, 3), (7, 5, 2), (6, 4, 1), (3, 8, 4), (9, 2, 4)])
def test_swizzle2d(backend, size_i, size_j, size_g):
    ref_i, ref_j = swizzle_reference(size_i, size_j, size_g)
    n = size_i * size_j
    if (size_i, size_j, size_g) == (4, 4, 2):  # Triton's documented example: the program of each tile
        program_of_tile = np.empty((4, 4), np.int64)
        program_of_tile[ref_i, ref_j] = np.arange(n).reshape(4, 4)
        np.testing.assert_array_equal(program_of_tile, [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]])
    out = device_array(np.full(2 * n, -7, np.int32), backend)
    swizzle_tensor_kernel[(1,)](out, size_i, size_j, size_g, BI=16, BJ=8)
    got = to_numpy(out)
    np.testing.assert_array_equal(got[:n].reshape(size_i, size_j), ref_i)
    np.testing.assert_array_equal(got[n:].reshape(size_i, size_j), ref_j)
    out = device_array(np.full(2 * n, -7, np.int32), backend)
    swizzle_scalar_kernel[(n,)](out, size_i, size_j, size_g)
    got = to_numpy(out)
    np.testing.assert_array_equal(got[:n].reshape(size_i, size_j), ref_i)
    np.testing.assert_array_equal(got[n:].reshape(size_i, size_j), ref_j)


# ----------------------------------------------------------------------------- reduce_or

@tilec.jit
def reduce_or_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    y = tl.reduce_or(x, AXIS, keep_dims=KEEP)
    if AXIS is None and not KEEP:
        tl.store(out_ptr, y)
    else:
        tl.store(out_ptr + tl.arange(0, y.numel), tl.ravel(y))


@pytest.mark.parametrize("name,axis,keep", [
    ("int8", 1, False), ("uint8", 0, True), ("int32", 0, False), ("uint64", 1, True), ("int64", None, False),
    ("int16", None, True), ("bool", 1, False),
])
def test_reduce_or(backend, rng, name, axis, keep):
    m, n = 8, 4
    if name == "bool":
        x = rng.random((m, n)) < 0.2
    else:
        # At most one bit set per element (the top bit included), so that the OR of a line
        # is neither all ones nor any single element.
        width = np.dtype(DTYPES[name]).itemsize
        position = rng.integers(0, 8 * width, (m, n)).astype(np.uint64)
        one_bit = np.where(rng.random((m, n)) < 0.7, np.left_shift(np.uint64(1), position), np.uint64(0))
        x = one_bit.astype(f"u{width}").view(DTYPES[name])
    ref = np.asarray(np.bitwise_or.reduce(x, axis=axis, keepdims=keep))
    out = device_array(poisoned(ref.shape or (1,), x.dtype), backend)
    reduce_or_kernel[(1,)](device_array(x, backend), out, M=m, N=n, AXIS=axis, KEEP=keep)
    got = to_numpy(out)
    np.testing.assert_array_equal(bits(got), bits(ref.reshape(ref.shape or (1,))))
