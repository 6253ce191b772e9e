"""Block pointers (tl.make_block_ptr, tl.advance) and device-side tensor descriptors
(tl.make_tensor_descriptor), on both backends.

Inputs are random, outputs are poisoned before the run; references come from NumPy.
Output buffers are larger than the region a kernel may write (a wider row stride,
extra rows) so the tests also see writes that land outside the region.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -12345.0


def _padded(rows: int, cols: int, row_stride: int, extra_rows: int = 3) -> np.ndarray:
    return np.full((rows + extra_rows, row_stride), POISON, np.float32)


def _check_region(out: np.ndarray, expected: np.ndarray) -> None:
    """`out` holds `expected` in its top-left corner and poison everywhere else."""
    rows, cols = expected.shape
    np.testing.assert_array_equal(out[:rows, :cols], expected)
    outside = np.ones(out.shape, bool)
    outside[:rows, :cols] = False
    assert (out[outside] == POISON).all(), "a store wrote outside the block pointer's shape"


# ----------------------------------------------------------------------------- 2-D copy


@tilec.jit
def copy_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, stride_on,
                BM: tl.constexpr, BN: tl.constexpr, ORDER: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_block_ptr(base=x_ptr, shape=(M, N), strides=(stride_xm, stride_xn),
                            offsets=(pid_m * BM, pid_n * BN), block_shape=(BM, BN), order=ORDER)
    dst = tl.make_block_ptr(out_ptr, (M, N), (stride_om, stride_on), (pid_m * BM, pid_n * BN), (BM, BN), ORDER)
    block = tl.load(src, boundary_check=(0, 1))
    tl.store(dst, block, boundary_check=(1, 0))


@pytest.mark.parametrize("order", [(1, 0), (0, 1)])
@pytest.mark.parametrize("m,n,bm,bn", [(37, 50, 16, 32), (64, 33, 32, 8)])
def test_copy_2d_boundary_check(backend, rng, order, m, n, bm, bn):
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = _padded(m, n, row_stride=n + 7)
    out_dev = device_array(out, backend)
    grid = (tilec.cdiv(m, bm), tilec.cdiv(n, bn))
    copy_kernel[grid](device_array(x, backend), out_dev, m, n, n, 1, n + 7, 1, BM=bm, BN=bn, ORDER=order)
    _check_region(to_numpy(out_dev), x)


@pytest.mark.parametrize("bm,bn", [(16, 16), (8, 32)])
def test_transposed_view_via_strides(backend, rng, bm, bn):
    # Read x (m x n, row-major) as its transpose: shape (n, m), strides (1, n).
    m, n = 45, 29
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = _padded(n, m, row_stride=m + 3)
    out_dev = device_array(out, backend)
    grid = (tilec.cdiv(n, bm), tilec.cdiv(m, bn))
    # copy_kernel's source is (M, N) = (n, m) with strides (1, n).
    copy_kernel[grid](device_array(x, backend), out_dev, n, m, 1, n, m + 3, 1, BM=bm, BN=bn, ORDER=(0, 1))
    _check_region(to_numpy(out_dev), x.T)


# ----------------------------------------------------------------------------- loop-carried block pointers


@tilec.jit
def row_sum_kernel(x_ptr, out_ptr, M, K, stride_m, BM: tl.constexpr, BK: tl.constexpr, METHOD: tl.constexpr):
    pid = tl.program_id(0)
    ptr = tl.make_block_ptr(x_ptr, (M, K), (stride_m, 1), (pid * BM, 0), (BM, BK), (1, 0))
    acc = tl.zeros((BM, BK), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc += tl.load(ptr, boundary_check=(0, 1), padding_option="zero")
        if METHOD:
            ptr = ptr.advance((0, BK))
        else:
            ptr = tl.advance(ptr, (0, BK))
    out = tl.make_block_ptr(out_ptr, (M,), (1,), (pid * BM,), (BM,), (0,))
    tl.store(out, tl.sum(acc, axis=1), boundary_check=(0,))


@pytest.mark.parametrize("method", [False, True])
@pytest.mark.parametrize("m,k", [(50, 100), (32, 64)])
def test_advance_in_loop(backend, rng, m, k, method):
    x = rng.standard_normal((m, k)).astype(np.float32)
    out = np.full(m + 8, POISON, np.float32)
    out_dev = device_array(out, backend)
    row_sum_kernel[(tilec.cdiv(m, 16),)](device_array(x, backend), out_dev, m, k, k, BM=16, BK=32, METHOD=method)
    got = to_numpy(out_dev)
    np.testing.assert_allclose(got[:m], x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    assert (got[m:] == POISON).all()


@tilec.jit
def branch_kernel(x_ptr, out_ptr, N, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    # A block pointer merged across a runtime `if`: odd programs read one block further.
    pid = tl.program_id(0)
    ptr = tl.make_block_ptr(x_ptr, (N,), (1,), (pid * BLOCK,), (BLOCK,), (0,))
    if pid % 2 == 1:
        ptr = tl.advance(ptr, (SHIFT,))
    dst = tl.make_block_ptr(out_ptr, (N,), (1,), (pid * BLOCK,), (BLOCK,), (0,))
    tl.store(dst, tl.load(ptr, boundary_check=(0,)), boundary_check=(0,))


def test_block_pointer_through_runtime_if(backend, rng):
    n, block, shift = 100, 16, 5
    x = rng.standard_normal(n).astype(np.float32)
    out_dev = device_array(np.full(n, POISON, np.float32), backend)
    branch_kernel[(tilec.cdiv(n, block),)](device_array(x, backend), out_dev, n, SHIFT=shift, BLOCK=block)
    index = np.arange(n) + np.where((np.arange(n) // block) % 2 == 1, shift, 0)
    expected = np.where(index < n, x[np.minimum(index, n - 1)], 0).astype(np.float32)
    np.testing.assert_array_equal(to_numpy(out_dev), expected)


# ----------------------------------------------------------------------------- padding


@tilec.jit
def padding_kernel(x_ptr, out_ptr, M, N, off_m, off_n, BM: tl.constexpr, BN: tl.constexpr,
                   CHECK: tl.constexpr, PADDING: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (off_m, off_n), (BM, BN), (1, 0))
    block = tl.load(src, boundary_check=CHECK, padding_option=PADDING)
    # The whole block goes to a BM x BN buffer: no boundary check needed.
    dst = tl.make_block_ptr(out_ptr, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(dst, block)


@pytest.mark.parametrize("padding", ["zero", "nan", ""])
def test_padding_option(backend, rng, padding):
    m, n, bm, bn = 20, 24, 16, 16
    off_m, off_n = 8, 16  # rows 8..23 (20.. outside), columns 16..31 (24.. outside)
    x = rng.standard_normal((m, n)).astype(np.float32)
    out_dev = device_array(np.full((bm, bn), POISON, np.float32), backend)
    padding_kernel[(1,)](device_array(x, backend), out_dev, m, n, off_m, off_n, BM=bm, BN=bn, CHECK=(0, 1),
                         PADDING=padding)
    got = to_numpy(out_dev)
    rows, cols = m - off_m, n - off_n
    np.testing.assert_array_equal(got[:rows, :cols], x[off_m:, off_n:])
    outside = np.ones((bm, bn), bool)
    outside[:rows, :cols] = False
    if padding == "nan":
        assert np.isnan(got[outside]).all()
    else:  # "zero"; "" leaves them undefined, which both backends read as 0
        assert (got[outside] == 0).all()


@tilec.jit
def int_padding_kernel(x_ptr, out_ptr, N, off, BLOCK: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (N,), (1,), (off,), (BLOCK,), (0,))
    dst = tl.make_block_ptr(out_ptr, (BLOCK,), (1,), (0,), (BLOCK,), (0,))
    tl.store(dst, tl.load(src, boundary_check=(0,), padding_option="zero") + 1)


def test_negative_offsets_and_int_elements(backend, rng):
    # Offsets may be negative: indices below 0 are out of bounds like those past the end.
    n, block, off = 20, 32, -5
    x = rng.integers(-100, 100, n).astype(np.int32)
    out_dev = device_array(np.full(block, -7, np.int32), backend)
    int_padding_kernel[(1,)](device_array(x, backend), out_dev, n, off, BLOCK=block)
    index = np.arange(block) + off
    expected = np.where((index >= 0) & (index < n), x[np.clip(index, 0, n - 1)], 0) + 1
    np.testing.assert_array_equal(to_numpy(out_dev), expected)


def test_partial_boundary_check(backend, rng):
    # Only the columns are checked; the rows of the block are all inside the tensor.
    m, n, bm, bn = 16, 20, 16, 32
    x = rng.standard_normal((m, n)).astype(np.float32)
    out_dev = device_array(np.full((bm, bn), POISON, np.float32), backend)
    padding_kernel[(1,)](device_array(x, backend), out_dev, m, n, 0, 0, BM=bm, BN=bn, CHECK=(1,), PADDING="nan")
    got = to_numpy(out_dev)
    np.testing.assert_array_equal(got[:, :n], x)
    assert np.isnan(got[:, n:]).all()


# ----------------------------------------------------------------------------- 64-bit shapes and strides


@tilec.jit
def far_kernel(x_ptr, out_ptr, far, M, N, stride_m, total, BM: tl.constexpr, BN: tl.constexpr):
    # The view starts `far` (> 2**31) elements before x and is entered at row far // stride_m:
    # (offset + row) * stride_m overflows 32 bits, so the index math must be 64-bit.
    pid = tl.program_id(0)
    rows_before = far // stride_m
    src = tl.make_block_ptr(x_ptr - far, (rows_before + M, N), (stride_m, 1),
                            ((rows_before + pid * BM).to(tl.int32), 0), (BM, BN), (1, 0))
    block = tl.load(src, boundary_check=(0, 1))
    # An int64 shape beyond 2**32 as a 1-D view of the output: the check must compare in 64 bits.
    dst = tl.make_block_ptr(out_ptr, (total, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    tl.store(dst, block, boundary_check=(0, 1))


def test_int64_shapes_and_strides(backend, rng):
    m, n, bm, bn = 40, 24, 16, 32
    x = rng.standard_normal((m, n)).astype(np.float32)
    rows_before = (1 << 27) + 3
    far = rows_before * n  # > 2**31 elements
    assert far > 1 << 31
    out = np.full((tilec.cdiv(m, bm) * bm, n), POISON, np.float32)
    out_dev = device_array(out, backend)
    far_kernel[(tilec.cdiv(m, bm),)](device_array(x, backend), out_dev, far, m, n, n, (1 << 33) + 1, BM=bm, BN=bn)
    got = to_numpy(out_dev)
    np.testing.assert_array_equal(got[:m], x)
    # Rows past M are outside the source (zero) but inside the huge destination shape.
    assert (got[m:] == 0).all()


# ----------------------------------------------------------------------------- tensor descriptors


@tilec.jit
def descriptor_kernel(x_ptr, out_ptr, M, N, shift_m, shift_n, BM: tl.constexpr, BN: tl.constexpr,
                      FREE: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, [M, N], [N, 1], [BM, BN])
    if FREE:
        block = tl.load_tensor_descriptor(src, [pid_m * BM + shift_m, pid_n * BN + shift_n])
        tl.store_tensor_descriptor(dst, [pid_m * BM, pid_n * BN], block * 2)
    else:
        block = src.load([pid_m * BM + shift_m, pid_n * BN + shift_n])
        dst.store([pid_m * BM, pid_n * BN], block * 2)


@pytest.mark.parametrize("free", [False, True])
@pytest.mark.parametrize("shift", [(0, 0), (5, -3)])
def test_tensor_descriptor_load_store(backend, rng, shift, free):
    m, n, bm, bn = 30, 40, 16, 16
    x = rng.standard_normal((m, n)).astype(np.float32)
    # `out` has exactly m x n elements: a store outside the descriptor would fault
    # (interpreter) or corrupt the guard that follows it.
    buffer = np.full(m * n + 64, POISON, np.float32)
    out_dev = device_array(buffer, backend)
    grid = (tilec.cdiv(m, bm), tilec.cdiv(n, bn))
    descriptor_kernel[grid](device_array(x, backend), out_dev, m, n, shift[0], shift[1], BM=bm, BN=bn, FREE=free)
    got = to_numpy(out_dev)
    rows = np.arange(m)[:, None] + shift[0]
    cols = np.arange(n)[None, :] + shift[1]
    inside = (rows >= 0) & (rows < m) & (cols >= 0) & (cols < n)
    expected = np.where(inside, x[np.clip(rows, 0, m - 1), np.clip(cols, 0, n - 1)] * 2, 0)
    np.testing.assert_array_equal(got[:m * n].reshape(m, n), expected)
    assert (got[m * n:] == POISON).all()


@tilec.jit
def descriptor_nan_kernel(x_ptr, out_ptr, N, off, BLOCK: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, [N], [1], [BLOCK], padding_option="nan")
    out = tl.make_tensor_descriptor(out_ptr, [BLOCK], [1], [BLOCK])
    out.store([0], desc.load([off]))


def test_tensor_descriptor_nan_padding(backend, rng):
    n, block, off = 50, 64, -4
    x = rng.standard_normal(n).astype(np.float32)
    out_dev = device_array(np.full(block, POISON, np.float32), backend)
    descriptor_nan_kernel[(1,)](device_array(x, backend), out_dev, n, off, BLOCK=block)
    got = to_numpy(out_dev)
    index = np.arange(block) + off
    inside = (index >= 0) & (index < n)
    np.testing.assert_array_equal(got[inside], x[index[inside]])
    assert np.isnan(got[~inside]).all()


# ----------------------------------------------------------------------------- errors


@tilec.jit
def error_kernel(x_ptr, N, CASE: tl.constexpr):
    if CASE == "lengths":
        p = tl.make_block_ptr(x_ptr, (N, N), (N, 1), (0,), (16, 16), (1, 0))
    elif CASE == "block_shape":
        p = tl.make_block_ptr(x_ptr, (N,), (1,), (0,), (12,), (0,))
    elif CASE == "order":
        p = tl.make_block_ptr(x_ptr, (N, N), (N, 1), (0, 0), (16, 16), (0, 0))
    else:
        p = tl.make_block_ptr(x_ptr, (N, N), (N, 1), (0, 0), (16, 16), (1, 0))
    if CASE == "mask":
        tl.load(p, mask=tl.arange(0, 16) < N)
    elif CASE == "other":
        tl.load(p, other=0.0)
    elif CASE == "store_mask":
        tl.store(p, tl.zeros((16, 16), tl.float32), mask=tl.arange(0, 16) < N)
    elif CASE == "boundary_check":
        tl.load(p, boundary_check=(0, 2))
    elif CASE == "padding":
        tl.load(p, boundary_check=(0,), padding_option="inf")
    elif CASE == "store_shape":
        tl.store(p, tl.zeros((16, 8), tl.float32))
    elif CASE == "store_dtype":
        tl.store(p, tl.zeros((16, 16), tl.float16))
    elif CASE == "offsets_i64":
        tl.advance(p, (N.to(tl.int64), 0))
    elif CASE == "advance_rank":
        tl.advance(p, (16,))
    elif CASE == "desc_stride":
        tl.make_tensor_descriptor(x_ptr, [N, N], [N, 2], [16, 16])
    elif CASE == "desc_bytes":
        tl.make_tensor_descriptor(x_ptr, [N, N], [N, 1], [16, 2])
    elif CASE == "desc_store_shape":
        d = tl.make_tensor_descriptor(x_ptr, [N, N], [N, 1], [16, 16])
        d.store([0, 0], tl.zeros((8, 16), tl.float32))
    elif CASE == "desc_offsets":
        d = tl.make_tensor_descriptor(x_ptr, [N, N], [N, 1], [16, 16])
        d.load([0])


@tilec.jit
def int_nan_kernel(x_ptr, N):
    p = tl.make_block_ptr(x_ptr, (N,), (1,), (0,), (16,), (0,))
    tl.load(p, boundary_check=(0,), padding_option="nan")


_ERRORS = {
    "lengths": "must have the same length",
    "block_shape": "power of 2",
    "order": "permutation",
    "mask": "`mask` and `other` cannot be used",
    "other": "`mask` and `other` cannot be used",
    "store_mask": "`mask` cannot be used when storing through a block pointer",
    "boundary_check": "boundary_check dimension 2 is out of range",
    "padding": "padding_option 'inf' is not supported",
    "store_shape": "shape [16, 8] but the block has shape [16, 16]",
    "store_dtype": "element type fp16",
    "offsets_i64": "must be 32-bit integers",
    "advance_rank": "1 offsets for a block pointer of rank 2",
    "desc_stride": "last stride must be 1",
    "desc_bytes": "at least 16 bytes",
    "desc_store_shape": "shape [8, 16] but the block has shape [16, 16]",
    "desc_offsets": "1 offsets for a descriptor of rank 2",
}


@pytest.mark.parametrize("case", list(_ERRORS))
def test_errors(backend, case):
    x = device_array(np.zeros(256, np.float32), backend)
    with pytest.raises(tilec.CompilationError, match=re.escape(_ERRORS[case])):
        error_kernel[(1,)](x, 16, CASE=case)


def test_nan_padding_needs_floats(backend):
    x = device_array(np.zeros(16, np.int32), backend)
    with pytest.raises(tilec.CompilationError, match="needs floating-point elements"):
        int_nan_kernel[(1,)](x, 16)


@tilec.jit
def descriptor_rows_kernel(x_ptr, idx_ptr, g_ptr, s_ptr, acc_ptr, M, N, R: tl.constexpr, BN: tl.constexpr,
                           COL: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [1, BN])
    rows = tl.load(idx_ptr + tl.arange(0, R))
    got = src.gather(rows, COL)                                    # [R, BN]; rows/columns outside read 0
    r, c = tl.arange(0, R), tl.arange(0, BN)
    tl.store(g_ptr + r[:, None] * BN + c[None, :], got)
    dst = tl.make_tensor_descriptor(s_ptr, [M, N], [N, 1], [1, BN])
    dst.scatter(got * 2, rows, COL)                                # outside elements are dropped
    acc = tl.make_tensor_descriptor(acc_ptr, [M, N], [N, 1], [2, BN])
    acc.atomic_add([1, COL], tl.full([2, BN], 1.5, tl.float32))    # rows 1, 2; relaxed
    acc.atomic_add([4, COL], tl.full([2, BN], 100.0, tl.float32))  # row 5 is outside when M = 5


def test_descriptor_gather_scatter_and_atomics(backend, rng):
    m, n, bn, col = 5, 24, 16, 12  # columns 12..27: 24..27 are outside
    x = rng.standard_normal((m, n)).astype(np.float32)
    rows = np.array([4, 0, -1, 2, 7, 1, 3, 0], np.int32)  # -1 and 7 are outside
    g = device_array(np.full((8, bn), POISON, np.float32), backend)
    s = device_array(np.full((m, n), POISON, np.float32), backend)
    acc0 = rng.standard_normal((m, n)).astype(np.float32)
    acc = device_array(acc0, backend)
    descriptor_rows_kernel[(1,)](device_array(x, backend), device_array(rows, backend), g, s, acc, m, n, R=8,
                                 BN=bn, COL=col)
    want = np.zeros((8, bn), np.float32)
    for i, row in enumerate(rows):
        if 0 <= row < m:
            width = n - col
            want[i, :width] = x[row, col:]
    np.testing.assert_array_equal(to_numpy(g), want)
    want_s = np.full((m, n), POISON, np.float32)
    for i, row in enumerate(rows):
        if 0 <= row < m:
            want_s[row, col:] = 2 * want[i, :n - col]
    np.testing.assert_array_equal(to_numpy(s), want_s)
    want_acc = acc0.copy()
    want_acc[1:3, col:] += np.float32(1.5)
    want_acc[4, col:] += np.float32(100.0)
    np.testing.assert_array_equal(to_numpy(acc), want_acc)
