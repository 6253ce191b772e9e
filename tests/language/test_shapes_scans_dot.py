"""Shape ops, reductions with indices and user combiners, scans, while loops, atomics and
tl.dot, on both backends (random inputs, poisoned outputs, float64 references)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


def run(kernel, backend, inputs, out_shape, out_dtype, grid=(1,), **constexprs):
    dev = [device_array(x, backend) for x in inputs]
    poison = np.full(out_shape, -7 if np.issubdtype(out_dtype, np.integer) else np.nan, out_dtype)
    out = device_array(poison, backend)
    kernel[grid](*dev, out, **constexprs)
    return to_numpy(out)


# ----------------------------------------------------------------------------- shape ops

@tilec.jit
def shape_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    if OP == "trans":
        y = tl.ravel(tl.trans(x))
    elif OP == "T":
        y = tl.reshape(x.T, (M * N,))
    elif OP == "reshape":
        y = tl.reshape(tl.reshape(x, (N, M)) * 2, (M * N,))
    elif OP == "permute3":
        y = tl.ravel(tl.permute(tl.reshape(x, (M, N // 2, 2)), (2, 0, 1)))
    elif OP == "join_split":
        a, b = tl.split(tl.join(x, x * 3))
        y = tl.ravel(a + b * 10)
    elif OP == "interleave":
        y = tl.ravel(tl.interleave(x, -x))
        y = tl.reshape(y, (2, M * N)).ravel()
        y = tl.sum(tl.reshape(y, (M * N, 2)), axis=1)
    else:
        y = tl.ravel(tl.cat(x, x * 2))
        y = tl.reshape(y, (2, M * N)).ravel()
        y = tl.max(tl.reshape(y, (2, M * N)), axis=0)
    tl.store(out_ptr + tl.arange(0, M * N), y)


def _shape_reference(x, op):
    x = x.astype(np.float64)
    if op in ("trans", "T"):
        return x.T.ravel()
    if op == "reshape":
        return (x.reshape(x.shape[1], x.shape[0]) * 2).ravel()
    if op == "permute3":
        m, n = x.shape
        return np.transpose(x.reshape(m, n // 2, 2), (2, 0, 1)).ravel()
    if op == "join_split":
        return (x + 30 * x).ravel()
    if op == "interleave":
        return np.zeros(x.size)
    return np.maximum(x.ravel(), 2 * x.ravel())


@pytest.mark.parametrize("m,n", [(16, 32), (64, 16), (32, 64)])
@pytest.mark.parametrize("op", ["trans", "T", "reshape", "permute3", "join_split", "interleave", "cat"])
def test_shape_ops(backend, rng, op, m, n):
    x = rng.standard_normal((m, n)).astype(np.float32)
    got = run(shape_kernel, backend, [x], m * n, np.float32, M=m, N=n, OP=op)
    np.testing.assert_allclose(got, _shape_reference(x, op), rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------- reductions

@tilec.jit
def pair_max(a, ia, b, ib):
    take_a = (a > b) | ((a == b) & (ia < ib))
    return tl.where(take_a, a, b), tl.where(take_a, ia, ib)


@tilec.jit
def argreduce_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + rows, tl.argmax(x, axis=1))
    tl.store(out_ptr + M + cols, tl.argmin(x, axis=0))
    value, index = tl.max(x, axis=1, return_indices=True)
    tl.store(out_ptr + M + N + rows, index)
    index2 = tl.reduce((x, cols[None, :] + rows[:, None] * 0), 1, pair_max)[1]
    tl.store(out_ptr + 2 * M + N + rows, index2)
    tl.store(out_ptr + 3 * M + N, tl.argmax(tl.ravel(x), axis=0))
    tl.store(out_ptr + 3 * M + N + 1, tl.xor_sum(tl.ravel(x.to(tl.int32)), axis=None))


@pytest.mark.parametrize("m,n", [(16, 32), (32, 16), (64, 64)])
def test_argmax_argmin_ties_lowest_index(backend, rng, m, n):
    x = rng.integers(-3, 4, (m, n)).astype(np.float32)  # many ties
    got = run(argreduce_kernel, backend, [x], 3 * m + n + 2, np.int32, M=m, N=n)
    np.testing.assert_array_equal(got[:m], x.argmax(1))
    np.testing.assert_array_equal(got[m:m + n], x.argmin(0))
    np.testing.assert_array_equal(got[m + n:2 * m + n], x.argmax(1))
    np.testing.assert_array_equal(got[2 * m + n:3 * m + n], x.argmax(1))
    assert got[3 * m + n] == x.ravel().argmax()
    assert got[3 * m + n + 1] == np.bitwise_xor.reduce(x.astype(np.int32).ravel())


@tilec.jit
def argmax_nan_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr, tl.argmax(x, axis=0))
    tl.store(out_ptr + 1, tl.argmin(x, axis=0))
    tl.store(out_ptr + 2, tl.argmax(x, axis=0, tie_break_left=False))
    tl.store(out_ptr + 3, tl.max(x, axis=0, return_indices=True)[0] == tl.max(x, axis=0))


def test_argmax_and_argmin_skip_nan(backend, rng):
    # As Triton 3.8 (and NumPy's nanargmax): NaNs are skipped; the value returned with the
    # index is tl.max's.
    x = rng.standard_normal(128).astype(np.float32)
    x[[3, 17, 90]] = np.nan
    got = run(argmax_nan_kernel, backend, [x], 4, np.int32, N=128)
    assert got[0] == np.nanargmax(x) and got[1] == np.nanargmin(x) and got[2] == np.nanargmax(x)
    assert got[3] == 1


def test_argmax_of_nans_only(backend):
    # A line of NaNs: every element ties, so the tie rule picks the first (the last).
    x = np.full(64, np.nan, np.float32)
    got = run(argmax_nan_kernel, backend, [x], 4, np.int32, N=64)
    np.testing.assert_array_equal(got[:3], [0, 0, 63])


# ----------------------------------------------------------------------------- scans

@tilec.jit
def pair_sum(a, b):
    return a + b


@tilec.jit
def scan_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr,
                KIND: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs)
    if KIND == "sum":
        y = tl.cumsum(x, axis=AXIS, reverse=REVERSE)
    elif KIND == "prod":
        y = tl.cumprod(x, axis=AXIS, reverse=REVERSE)
    else:
        y = tl.associative_scan(x, AXIS, pair_sum, reverse=REVERSE)
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("num_warps", [1, 4])
@pytest.mark.parametrize("m,n", [(4, 64), (32, 32), (64, 8)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("kind", ["sum", "prod", "user"])
def test_scans(backend, rng, kind, reverse, axis, m, n, num_warps):
    if kind == "prod":
        x = rng.uniform(0.9, 1.1, (m, n)).astype(np.float32)
    else:
        x = rng.standard_normal((m, n)).astype(np.float32)
    dev = [device_array(x, backend)]
    out = device_array(np.full((m, n), np.nan, np.float32), backend)
    scan_kernel[(1,)](dev[0], out, M=m, N=n, AXIS=axis, REVERSE=reverse, KIND=kind, num_warps=num_warps)
    ref = x.astype(np.float64)
    if reverse:
        ref = np.flip(ref, axis)
    ref = np.cumprod(ref, axis) if kind == "prod" else np.cumsum(ref, axis)
    if reverse:
        ref = np.flip(ref, axis)
    np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-5, atol=1e-5)


@tilec.jit
def int_cumsum_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


def test_int8_cumsum_accumulates_in_int32(backend, rng):
    x = rng.integers(-128, 128, 256).astype(np.int8)
    got = run(int_cumsum_kernel, backend, [x], 256, np.int32, N=256)
    np.testing.assert_array_equal(got, np.cumsum(x.astype(np.int64)).astype(np.int32))


# ----------------------------------------------------------------------------- while loops

@tilec.jit
def collatz_kernel(x_ptr, out_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    steps = 0
    while v != 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
    tl.store(out_ptr + pid, steps)


def test_while_loop_with_data_dependent_trip_count(backend, rng):
    x = rng.integers(1, 1000, 16).astype(np.int32)

    def collatz(v):
        steps = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            steps += 1
        return steps

    got = run(collatz_kernel, backend, [x], 16, np.int32, grid=(16,), N=16)
    np.testing.assert_array_equal(got, [collatz(int(v)) for v in x])


# ----------------------------------------------------------------------------- atomics

@tilec.jit
def histogram_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(out_ptr + bins, 1, mask=mask)


@pytest.mark.parametrize("block", [32, 256])
def test_atomic_add_with_collisions(backend, rng, block):
    n, bins = 3000, 16
    x = rng.integers(0, bins, n).astype(np.int32)
    out = device_array(np.zeros(bins, np.int32), backend)
    histogram_kernel[(tilec.cdiv(n, block),)](device_array(x, backend), out, n, BLOCK=block, BINS=bins)
    np.testing.assert_array_equal(to_numpy(out), np.bincount(x, minlength=bins))


@tilec.jit
def atomic_ops_kernel(i_ptr, f_ptr, old_ptr, x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    xi = tl.load(x_ptr + offs)
    xf = xi.to(tl.float32) - 500.0
    o1 = tl.atomic_max(i_ptr + 0, xi)
    tl.atomic_min(i_ptr + 1, xi)
    tl.atomic_or(i_ptr + 2, xi)
    tl.atomic_and(i_ptr + 3, xi | 0x100000)
    tl.atomic_xor(i_ptr + 4, xi)
    tl.atomic_max(f_ptr + 0, xf)
    tl.atomic_min(f_ptr + 1, xf)
    tl.atomic_add(f_ptr + 2, xf)
    tl.store(old_ptr + offs, o1)


def test_atomic_operations(backend, rng):
    block = 128
    x = rng.integers(1, 1000, block).astype(np.int32)
    ints = device_array(np.array([0, 1 << 30, 0, -1, 0], np.int32), backend)
    floats = device_array(np.array([-1e30, 1e30, 0.0], np.float32), backend)
    old = device_array(np.full(block, -7, np.int32), backend)
    atomic_ops_kernel[(1,)](ints, floats, old, device_array(x, backend), BLOCK=block)
    got_i, got_f = to_numpy(ints), to_numpy(floats)
    assert got_i[0] == x.max() and got_i[1] == x.min()
    assert got_i[2] == np.bitwise_or.reduce(x) and got_i[3] == np.bitwise_and.reduce(x | 0x100000)
    assert got_i[4] == np.bitwise_xor.reduce(x)
    xf = x.astype(np.float32) - 500.0
    assert got_f[0] == xf.max() and got_f[1] == xf.min()
    np.testing.assert_allclose(got_f[2], xf.astype(np.float64).sum(), rtol=1e-5)
    olds = to_numpy(old)
    assert (olds <= x.max()).all() and (olds >= 0).all() and 0 in olds  # every old value was a running max


@tilec.jit
def cas_lock_kernel(lock_ptr, count_ptr):
    # every program increments the counter under a spin lock built from atomic_cas/xchg
    while tl.atomic_cas(lock_ptr, 0, 1) != 0:
        pass
    tl.store(count_ptr, tl.load(count_ptr, volatile=True) + 1)
    tl.atomic_xchg(lock_ptr, 0)


def test_atomic_cas_spin_lock(backend):
    lock = device_array(np.zeros(1, np.int32), backend)
    count = device_array(np.zeros(1, np.int32), backend)
    cas_lock_kernel[(64,)](lock, count)
    assert to_numpy(count)[0] == 64 and to_numpy(lock)[0] == 0


@tilec.jit
def scalar_atomic_kernel(counter_ptr, out_ptr):
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(out_ptr + ticket, tl.program_id(0))


def test_scalar_atomic_returns_unique_tickets(backend):
    counter = device_array(np.zeros(1, np.int32), backend)
    out = device_array(np.full(32, -1, np.int32), backend)
    scalar_atomic_kernel[(32,)](counter, out)
    assert to_numpy(counter)[0] == 32
    assert sorted(to_numpy(out).tolist()) == list(range(32))


# ----------------------------------------------------------------------------- dot

@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  PRECISION: tl.constexpr, OUT: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), OUT)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("dtype,precision,rtol", [
    ("float16", "ieee", 2e-3), ("bfloat16", "ieee", 1e-2), ("float32", "ieee", 1e-5), ("float32", "tf32", 3e-3),
    ("float32", "tf32x3", 1e-5), ("float32", "bf16x3", 1e-4), ("float32", "bf16x6", 1e-5), ("int8", "ieee", 0),
])
@pytest.mark.parametrize("shape,blocks", [((64, 64, 64), (32, 32, 16)), ((100, 70, 50), (32, 64, 32)),
                                          ((16, 16, 16), (16, 16, 16))])
def test_dot(backend, rng, dtype, precision, rtol, shape, blocks):
    if dtype == "bfloat16" and backend == "interpreter":
        pytest.importorskip("ml_dtypes")
    m, n, k = shape
    bm, bn, bk = blocks
    if dtype == "int8":
        a = rng.integers(-100, 100, (m, k)).astype(np.int8)
        b = rng.integers(-100, 100, (k, n)).astype(np.int8)
        out_np, out_tl = np.int32, tl.int32
    else:
        np_dtype = np.float32 if dtype != "float16" else np.float16
        a = rng.standard_normal((m, k)).astype(np_dtype)
        b = rng.standard_normal((k, n)).astype(np_dtype)
        if dtype == "bfloat16":
            import ml_dtypes
            a, b = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
        out_np, out_tl = np.float32, tl.float32
    c = device_array(np.full((m, n), -7 if dtype == "int8" else np.nan, out_np), backend)
    grid = (tilec.cdiv(m, bm), tilec.cdiv(n, bn))
    matmul_kernel[grid](device_array(a, backend), device_array(b, backend), c, m, n, k, BM=bm, BN=bn, BK=bk,
                        PRECISION=precision, OUT=out_tl)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if dtype == "int8":
        np.testing.assert_array_equal(to_numpy(c), ref.astype(np.int32))
    else:
        got = to_numpy(c).astype(np.float64)
        assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < rtol


@tilec.jit
def whole_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                     PRECISION: tl.constexpr, OUT: tl.constexpr):
    """One dot of whole operands: [B, M, K] @ [B, K, N] (B = 0: plain [M, K] @ [K, N])."""
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    if B == 0:
        a = tl.load(a_ptr + m[:, None] * K + k[None, :])
        b = tl.load(b_ptr + k[:, None] * N + n[None, :])
        acc = tl.full((M, N), 1, OUT)
        tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=OUT))
    else:
        i = tl.arange(0, B)[:, None, None]
        a = tl.load(a_ptr + i * M * K + m[None, :, None] * K + k[None, None, :])
        b = tl.load(b_ptr + i * K * N + k[None, :, None] * N + n[None, None, :])
        c = tl.dot(a, b, input_precision=PRECISION, out_dtype=OUT) + 1
        tl.store(c_ptr + i * M * N + m[None, :, None] * N + n[None, None, :], c)


@pytest.mark.parametrize("dtype,out,precision,rtol", [
    ("float32", "float32", "ieee", 1e-5), ("float32", "float32", "tf32", 3e-3), ("float32", "float32", "tf32x3", 1e-5),
    ("float32", "float32", "bf16x3", 1e-4), ("float32", "float32", "bf16x6", 1e-5), ("float16", "float32", "ieee", 2e-3),
    ("float16", "float16", "ieee", None), ("int8", "int32", "ieee", 0)])
@pytest.mark.parametrize("batch,m,n,k", [
    (0, 32, 16, 1024),   # K beyond what fits in shared memory at once: processed in slices
    (0, 64, 64, 256),
    (2, 16, 32, 64),     # batched
    (2, 16, 16, 512),    # batched, in slices
])
def test_dot_whole_operands(backend, dtype, out, precision, rtol, batch, m, n, k):
    rng = np.random.default_rng(batch * 1000 + m + n + k)
    shape_a, shape_b = ((batch,) if batch else ()) + (m, k), ((batch,) if batch else ()) + (k, n)
    if dtype == "int8":
        a, b = (rng.integers(-100, 100, s).astype(np.int8) for s in (shape_a, shape_b))
    else:
        a, b = (rng.standard_normal(s).astype(np.float32 if dtype == "float32" else np.float16)
                for s in (shape_a, shape_b))
    out_np = {"float32": np.float32, "float16": np.float16, "int32": np.int32}[out]
    out_tl = {"float32": tl.float32, "float16": tl.float16, "int32": tl.int32}[out]
    c = device_array(np.full(((batch,) if batch else ()) + (m, n), -7 if out == "int32" else np.nan, out_np), backend)
    whole_dot_kernel[(1,)](device_array(a, backend), device_array(b, backend), c, B=batch, M=m, N=n, K=k,
                           PRECISION=precision, OUT=out_tl)
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64)) + 1
    got = to_numpy(c).astype(np.float64)
    if out == "int32":
        np.testing.assert_array_equal(got, ref)
    elif out == "float16":
        assert_whole_dot_half_accumulated(a, b, got, batch)
    else:
        assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < rtol


def _half_accumulator_tolerance(a: np.ndarray, b: np.ndarray, start: float, block: int = 16):
    """(elementwise bound, per-element standard deviation) of the error of an fp16
    accumulator that starts at `start` and is rounded once after each `block` products
    (one tensor-core instruction's k), against the exact result.

    Each rounding errs by at most half the fp16 spacing at the running sum S_j, and on
    average is uniform in that interval (standard deviation spacing / sqrt(12)). The
    bound takes a whole spacing per rounding (a running sum may cross a binade), plus
    the fp32 error of summing each block."""
    products = a.astype(np.float64)[..., :, :, None] * b.astype(np.float64)[..., None, :, :]  # [.., M, K, N]
    k = a.shape[-1]
    blocks = products.reshape(products.shape[:-3] + (products.shape[-3], k // block, block, products.shape[-1]))
    running = start + np.cumsum(blocks.sum(axis=-2), axis=-2)  # S_j: [.., M, K / block, N]
    spacing = np.spacing(np.abs(running).astype(np.float16)).astype(np.float64)
    fp32_error = np.abs(products).sum(axis=-2) * block * 2.0 ** -24
    bound = spacing.sum(axis=-2) + fp32_error
    sigma = np.sqrt((spacing ** 2).sum(axis=-2) / 12)
    return bound, sigma


@pytest.mark.parametrize("batch,m,n,k", [(0, 32, 32, 512), (2, 16, 16, 512)])
def test_dot_half_precision_accumulator(backend, batch, m, n, k):
    """out_dtype=float16 is accumulated as the tensor cores do it: once per 16 products,
    not after every k. Rounding per k would make the error about four times the
    expected standard deviation (sqrt(16)); per-instruction rounding keeps it at one."""
    rng = np.random.default_rng(k + batch)
    lead = (batch,) if batch else ()
    a = rng.standard_normal(lead + (m, k)).astype(np.float16)
    b = rng.standard_normal(lead + (k, n)).astype(np.float16)
    c = device_array(np.full(lead + (m, n), np.nan, np.float16), backend)
    whole_dot_kernel[(1,)](device_array(a, backend), device_array(b, backend), c, B=batch, M=m, N=n, K=k,
                           PRECISION="ieee", OUT=tl.float16)
    assert_whole_dot_half_accumulated(a, b, to_numpy(c), batch)


@tilec.jit
def small_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                     PRECISION: tl.constexpr, OUT: tl.constexpr):
    """[M, K] @ [K, N] with M or N below 16 (a matrix-vector product at M = 1 or N = 1),
    plus a loaded accumulator."""
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    acc = tl.load(c_ptr + m[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=OUT))


@pytest.mark.parametrize("dtype,precision,rtol", [("float16", "ieee", 2e-3), ("float32", "ieee", 1e-5),
                                                  ("float32", "tf32", 3e-3), ("int8", "ieee", 0),
                                                  ("float64", "ieee", 1e-12)])
@pytest.mark.parametrize("m,n,k", [(1, 64, 32), (64, 1, 16), (1, 1, 64), (2, 16, 16), (8, 8, 32), (16, 4, 16),
                                   (4, 128, 16)])
def test_dot_with_small_m_or_n(backend, dtype, precision, rtol, m, n, k):
    """M and N may be as small as 1 (Triton's lower bounds on NVIDIA GPUs: M, N >= 1 and
    K >= 16, 4 for fp64)."""
    if dtype == "float64":
        k = max(4, k // 4)  # fp64 takes K down to 4
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    if dtype == "int8":
        a, b = rng.integers(-100, 100, (m, k)).astype(np.int8), rng.integers(-100, 100, (k, n)).astype(np.int8)
        acc = rng.integers(-1000, 1000, (m, n)).astype(np.int32)
        out = tl.int32
    else:
        np_dtype = {"float16": np.float16, "float32": np.float32, "float64": np.float64}[dtype]
        a, b = rng.standard_normal((m, k)).astype(np_dtype), rng.standard_normal((k, n)).astype(np_dtype)
        acc = rng.standard_normal((m, n)).astype(np.float64 if dtype == "float64" else np.float32)
        out = tl.float64 if dtype == "float64" else tl.float32
    c = device_array(acc, backend)
    small_dot_kernel[(1,)](device_array(a, backend), device_array(b, backend), c, M=m, N=n, K=k,
                           PRECISION=precision, OUT=out)
    ref = a.astype(np.float64) @ b.astype(np.float64) + acc.astype(np.float64)
    got = to_numpy(c).astype(np.float64)
    if dtype == "int8":
        np.testing.assert_array_equal(got, ref)
    else:
        assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < rtol


@tilec.jit
def dot_out_dtype_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, OUT: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    c = tl.dot(a, b, out_dtype=OUT)
    tl.static_assert(c.dtype == c_ptr.dtype.element_ty)  # the result type, checked at compile time
    tl.store(c_ptr + m[:, None] * N + n[None, :], c)


@pytest.mark.parametrize("dtype,out,result", [
    ("int8", tl.int8, np.int32),          # integer dots accumulate in int32 whatever out_dtype says
    ("int8", tl.float32, np.int32),
    ("float64", tl.float32, np.float64),  # fp64 dots in fp64
    ("float32", tl.float16, np.float32),  # fp32 dots in fp32
])
def test_dot_out_dtype_only_chooses_for_fp16(backend, dtype, out, result):
    """As in Triton, out_dtype picks the accumulator of fp16 and fp8 dots; other dots keep
    theirs and ignore it."""
    rng = np.random.default_rng(7)
    if dtype == "int8":
        a, b = rng.integers(-100, 100, (16, 32)).astype(np.int8), rng.integers(-100, 100, (32, 16)).astype(np.int8)
    else:
        np_dtype = np.float64 if dtype == "float64" else np.float32
        a, b = rng.standard_normal((16, 32)).astype(np_dtype), rng.standard_normal((32, 16)).astype(np_dtype)
    c = device_array(np.full((16, 16), -7, result), backend)
    dot_out_dtype_kernel[(1,)](device_array(a, backend), device_array(b, backend), c, M=16, N=16, K=32, OUT=out)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    got = to_numpy(c)
    assert got.dtype == result
    if dtype == "int8":
        np.testing.assert_array_equal(got, ref.astype(np.int32))
    else:
        # fp32 inputs take tf32 by default
        np.testing.assert_allclose(got, ref, rtol=1e-2 if dtype == "float32" else 1e-12, atol=1e-2)


@pytest.mark.parametrize("dtype", [tl.float16, tl.float32, tl.float64])
def test_dot_refuses_a_bf16_accumulator(dtype):
    """Triton's words, so searches and tests that match them keep working."""
    @tilec.jit
    def bf16_out(x_ptr, DT: tl.constexpr):
        a = tl.zeros((16, 16), DT)
        tl.store(x_ptr + tl.arange(0, 16), tl.sum(tl.dot(a, a, out_dtype=tl.bfloat16), axis=0))

    with pytest.raises(tilec.CompilationError, match=r"out_dtype=bfloat16 is unsupported"):
        tilec.compile(bf16_out, signature={"x_ptr": "*bf16"}, constexprs={"DT": dtype}, target="sm_90")


def assert_whole_dot_half_accumulated(a: np.ndarray, b: np.ndarray, got: np.ndarray, batch: int) -> None:
    """`got` from whole_dot_kernel with OUT=float16 is within the error of once-per-16
    rounding: never beyond its bound, and about one standard deviation on average."""
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64)) + 1
    # The 2-D kernel starts the accumulator at 1; the batched one adds 1 after the dot
    # (one more fp16 rounding).
    bound, sigma = _half_accumulator_tolerance(a, b, 1.0 if not batch else 0.0)
    if batch:
        last = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
        bound, sigma = bound + last, np.sqrt(sigma ** 2 + last ** 2 / 12)
    error = got.astype(np.float64) - exact
    assert (np.abs(error) <= bound).all(), np.max(np.abs(error) / bound)
    rms = float(np.sqrt(np.mean((error / sigma) ** 2)))
    assert rms < 2.0, f"error is {rms:.2f} standard deviations of once-per-16 rounding"


def test_dot_in_slices_bounds_shared_memory():
    """A dot whose operands exceed the chunk budget stages K in slices: the kernel's
    shared memory stays within 48 KiB (plus a dummy slot)."""
    kernel = tilec.compile(whole_dot_kernel, signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"},
                           constexprs={"B": 0, "M": 32, "N": 32, "K": 1024, "PRECISION": "ieee", "OUT": tl.float32})
    assert kernel.metadata.shared <= 48 * 1024 + 4


# ----------------------------------------------------------------------------- exchanges beyond shared memory

@tilec.jit
def wide_exchange_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr, TRANS: tl.constexpr):
    """A transpose of more elements than shared memory holds: the transpose of an N x N
    tile exchanges every element. Without TRANS, x is read contiguously and y with a
    stride of 2: coalescing gives both loads the longer run (as Triton's does), so their
    sum needs no exchange."""
    if TRANS:
        r = tl.arange(0, N)
        x = tl.load(x_ptr + r[:, None] * N + r[None, :])
        tl.store(out_ptr + r[:, None] * N + r[None, :], tl.trans(x) * 2)
    else:
        offs = tl.arange(0, N)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs * 2)
        tl.store(out_ptr + offs, x + y)


@pytest.mark.parametrize("n,trans", [(65536, False), (256, True)])
def test_exchange_larger_than_shared_memory(backend, rng, n, trans):
    """256 KiB of fp32 to exchange on a GPU with 227 KiB of shared memory: done in rounds
    rather than refused."""
    x = rng.standard_normal(n * n if trans else n).astype(np.float32)
    y = rng.standard_normal(2 * n).astype(np.float32)
    out = device_array(np.full_like(x, np.nan), backend)
    wide_exchange_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, N=n, TRANS=trans,
                               num_warps=8)
    expected = (x.reshape(n, n).T * 2).ravel() if trans else x + y[::2]
    np.testing.assert_array_equal(to_numpy(out), expected)


def test_exchange_rounds_fit_shared_memory():
    """Compiled for sm_90, the 256 KiB transpose takes half of shared memory (64 KiB, plus
    a spare slot) and ptxas accepts the rounds."""
    from tilec.backend import toolkit
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:
        pytest.skip("ptxas is not available")
    kernel = tilec.compile(wide_exchange_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16",
                                                            "out_ptr": "*fp32:16"},
                           constexprs={"N": 256, "TRANS": True}, target="sm_90", num_warps=8)
    assert kernel.shared == 64 * 1024 + 16
    assert kernel.asm["ptx"].count("bar.sync") >= 4 * 2 - 1  # four rounds: a barrier after each write and read
