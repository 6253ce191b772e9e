"""Whole kernels in the interpreter against NumPy references computed in float64."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl


@tilec.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@pytest.mark.parametrize("n", [1, 127, 128, 1000, 4097])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_vector_add_masked_tail(rng, n, dtype):
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    out = np.full(n + 7, np.nan, dtype=dtype)  # the tail past n must stay untouched
    add_kernel[(tilec.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    expected = (x.astype(np.float64) + y.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(out[:n], expected)  # one correctly rounded add
    assert np.isnan(out[n:]).all()


def test_callable_grid_keywords_and_launch_options(rng):
    n = 300
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (tilec.cdiv(meta["n"], meta["BLOCK"]),)

    add_kernel[grid](x, y, out_ptr=out, n=n, BLOCK=64, num_warps=8, num_stages=2, num_ctas=1,
                     maxnreg=None, debug=True, enable_fp_fusion=False, stream=None)
    np.testing.assert_allclose(out, x.astype(np.float64) + y, rtol=1e-6)
    assert seen["BLOCK"] == 64 and seen["n"] == n


def test_empty_grid_runs_nothing(rng):
    x = rng.standard_normal(16).astype(np.float32)
    out = np.full(16, np.nan, dtype=np.float32)
    add_kernel[(0,)](x, x, out, 16, BLOCK=16)
    add_kernel[(4, 0)](x, x, out, 16, BLOCK=16)
    assert np.isnan(out).all()


@tilec.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=mask)


@pytest.mark.parametrize("n_rows, n_cols", [(1, 1), (5, 37), (17, 100), (3, 256)])
def test_softmax_strided_rows(rng, n_rows, n_cols):
    # Rows are views into wider arrays, so the row strides differ from n_cols.
    big_in = rng.standard_normal((n_rows, n_cols + 13)).astype(np.float32) * 4
    x = big_in[:, 5:5 + n_cols]
    big_out = np.full((n_rows, n_cols + 3), np.nan, dtype=np.float32)
    out = big_out[:, :n_cols]
    block = tilec.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](out, x, x.strides[0] // 4, out.strides[0] // 4, n_cols, BLOCK=block)
    ref = x.astype(np.float64)
    ref = np.exp(ref - ref.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-7)
    assert np.isnan(big_out[:, n_cols:]).all()


@tilec.jit
def scale_2d_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_xr, stride_xc, stride_or, stride_oc, scale,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * stride_xr + cols[None, :] * stride_xc, mask=mask)
    y = x * scale + tl.program_id(1) + 10 * tl.num_programs(1)
    tl.store(out_ptr + rows[:, None] * stride_or + cols[None, :] * stride_oc, y, mask=mask)


def test_2d_grid_and_transposed_views(rng):
    n_rows, n_cols = 45, 70
    x = rng.standard_normal((n_cols, n_rows)).astype(np.float32).T  # a transposed (column-major) view
    out = np.full((n_rows, n_cols), np.nan, dtype=np.float32)
    grid = (tilec.cdiv(n_rows, 16), tilec.cdiv(n_cols, 32))
    scale_2d_kernel[grid](x, out, n_rows, n_cols, *(s // 4 for s in x.strides), *(s // 4 for s in out.strides),
                          1.5, BLOCK_R=16, BLOCK_C=32)
    col_block = np.arange(n_cols) // 32
    expected = x.astype(np.float64) * 1.5 + col_block[None, :] + 10 * grid[1]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@tilec.jit
def strided_copy_kernel(src_ptr, dst_ptr, n, src_stride, dst_stride, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets * dst_stride, tl.load(src_ptr + offsets * src_stride, mask=mask) * 2, mask=mask)


def test_strided_numpy_views_write_in_place(rng):
    base = rng.integers(1, 1000, size=300).astype(np.int64)
    src = base[3::2]  # offset and stride inside one buffer
    dst_base = np.full(500, -7, dtype=np.int64)
    dst = dst_base[::-3]  # negative stride: the view starts at the buffer's end
    n = min(len(src), len(dst))
    strided_copy_kernel[(tilec.cdiv(n, 32),)](src, dst, n, src.strides[0] // 8, dst.strides[0] // 8, BLOCK=32)
    np.testing.assert_array_equal(dst[:n], src[:n] * 2)
    untouched = np.ones(500, dtype=bool)
    untouched[np.arange(499, -1, -3)[:n]] = False
    assert (dst_base[untouched] == -7).all()


def test_views_of_one_buffer_share_memory(rng):
    buf = rng.standard_normal(64).astype(np.float32)
    expected = buf.copy()
    expected[32:] = buf[:32] + buf[16:48]
    add_kernel[(1,)](buf[:32], buf[16:48], buf[32:], 32, BLOCK=32)
    np.testing.assert_array_equal(buf, expected)


def test_cpu_torch_tensors(rng):
    torch = pytest.importorskip("torch")
    n = 200
    x = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    y = torch.from_numpy(rng.standard_normal(2 * n).astype(np.float32))[::2]  # strided view of a storage
    out = torch.full((n,), float("nan"))
    strided_copy_kernel[(tilec.cdiv(n, 64),)](y, out, n, 2, 1, BLOCK=64)
    np.testing.assert_array_equal(out.numpy(), y.numpy() * 2)
    add_kernel[(tilec.cdiv(n, 64),)](x, out, out, n, BLOCK=64)
    np.testing.assert_allclose(out.numpy(), x.numpy().astype(np.float64) + y.numpy() * 2, rtol=1e-6)


@tilec.jit
def control_flow_kernel(x_ptr, out_ptr, flag_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    best = tl.full([BLOCK], -float("inf"), tl.float32)
    for r in range(n_rows):  # runtime bound: a tensor used as a Python int
        row = tl.load(x_ptr + r * stride + cols, mask=mask, other=0.0)
        acc += row
        best = tl.maximum(best, row)
    count = 0
    i = n_rows
    while i > 1:  # a loop-carried scalar tensor
        i = i // 2
        count += 1
    if pid == 0:
        tl.store(flag_ptr, count + 100)
    else:
        tl.store(flag_ptr + pid, count)
    tl.store(out_ptr + pid * 2 * n_cols + cols, acc, mask=mask)
    tl.store(out_ptr + pid * 2 * n_cols + n_cols + cols, best, mask=mask)


@pytest.mark.parametrize("n_rows", [1, 6, 33])
def test_scalar_control_flow(rng, n_rows):
    n_cols, programs = 20, 3
    x = rng.standard_normal((n_rows, n_cols + 4)).astype(np.float32)
    out = np.full((programs, 2 * n_cols), np.nan, dtype=np.float32)
    flags = np.full(programs, -1, dtype=np.int32)
    control_flow_kernel[(programs,)](x, out, flags, n_rows, n_cols, x.shape[1], BLOCK=32)
    ref = x[:, :n_cols].astype(np.float64)
    for p in range(programs):
        np.testing.assert_allclose(out[p, :n_cols], ref.sum(axis=0), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out[p, n_cols:], ref.max(axis=0).astype(np.float32))
    levels = int(np.floor(np.log2(n_rows)))
    assert flags.tolist() == [levels + 100] + [levels] * (programs - 1)


@tilec.jit
def helper_scale(x, factor):
    return x * factor


@tilec.jit
def scalar_args_kernel(out_ptr, big, huge, ratio, negate, maybe_ptr, one):
    value = helper_scale(big - 4000000000, ratio)
    if negate:
        value = -value
    if maybe_ptr is None:
        value += 1000.0
    tl.store(out_ptr, value)
    tl.store(out_ptr + one, (huge >> 60).to(tl.float32) + one)


def test_scalar_arguments():
    out = np.full(2, np.nan, dtype=np.float32)
    # big is int64, huge uint64, ratio fp32, negate int1, and 1 stays a runtime value.
    scalar_args_kernel[(1,)](out, 4000000123, (1 << 64) - 1, 0.5, True, None, 1)
    assert out.tolist() == [-61.5 + 1000.0, 16.0]


@tilec.jit
def interleave_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    even = offs % 2 == 0
    # One block of pointers into two arrays: loads and stores gather and scatter across both.
    ptrs = tl.where(even, x_ptr + offs, y_ptr + offs)
    values = tl.load(ptrs, mask=mask)
    tl.store(tl.where(even, y_ptr + offs, x_ptr + offs), values * 10, mask=mask)


def test_pointer_block_spanning_two_arrays(rng):
    n = 13
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    x0, y0 = x.copy(), y.copy()
    interleave_kernel[(1,)](x, y, n, BLOCK=16)
    np.testing.assert_array_equal(y[0::2], x0[0::2] * 10)
    np.testing.assert_array_equal(x[1::2], y0[1::2] * 10)
    np.testing.assert_array_equal(x[0::2], x0[0::2])
    np.testing.assert_array_equal(y[1::2], y0[1::2])


@pytest.mark.gpu
def test_cuda_tensors_are_copied_in_and_out():
    """The interpreter accepts CUDA torch tensors: it computes on host copies and writes back."""
    import torch
    x = torch.randn(3000, device="cuda")
    y = torch.randn(3000, device="cuda")
    out = torch.full((3005,), float("nan"), device="cuda")
    view = out[5:]  # a view with a storage offset must be written back into its place
    add_kernel[(tilec.cdiv(3000, 256),)](x, y, view, 3000, BLOCK=256)
    torch.testing.assert_close(out[5:], (x.double() + y.double()).float())
    assert torch.isnan(out[:5]).all()
