"""The kernels of ../shared/seeds/004 (people's own Triton kernels), on both backends.

Each kernel body is the seed's text with only `triton` swapped for `tilec` — keyword
launches, a `None` pointer guarded by a constexpr flag, a string argument, `tl.swizzle2d`
over `tl.num_programs`, a Python-float accumulator carried through a loop of `tl.sum`s,
loads without `other`. Two known slips in the seed (its 2-D matmul swaps `m` and `n` in
the store mask; its conv reads columns with the row block size) are left as written, and
the shapes are chosen so they do not matter, as the seed's own usage does.

Inputs are random, outputs poisoned with NaN before the launch, references in float64.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec as triton
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK_SIZE: tl.constexpr):
    # 1. pid
    pid = tl.program_id(0)
    # 2. offset
    offset = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    # 3. mask
    mask = offset < n
    # 4. load
    a = tl.load(a_ptr + offset, mask)
    b = tl.load(b_ptr + offset, mask)
    # 5. compute
    c = a + b
    # 6. store
    tl.store(c_ptr + offset, c, mask)


@triton.jit
def matrix_add_kernel(a_ptr, b_ptr, c_ptr, m, n, bs0: tl.constexpr, bs1: tl.constexpr):
    pid_x = tl.program_id(0)
    pid_y = tl.program_id(1)
    off_x = pid_x * bs0 + tl.arange(0, bs0)
    off_y = pid_y * bs1 + tl.arange(0, bs1)
    offset = off_x[:, None] * n + off_y[None, :]
    mask_x = off_x < m
    mask_y = off_y < n
    mask = mask_x[:, None] & mask_y[None, :]
    a = tl.load(a_ptr + offset, mask)
    b = tl.load(b_ptr + offset, mask)
    c = a + b
    tl.store(c_ptr + offset, c, mask)


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    m, n, k,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    bm: tl.constexpr, bn: tl.constexpr, bk: tl.constexpr
):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    off_m = pid_m * bm + tl.arange(0, bm)
    off_n = pid_n * bn + tl.arange(0, bn)
    acc = tl.zeros((bm, bn), dtype=tl.float32)
    for i in range(0, k, bk):
        off_k = i + tl.arange(0, bk)
        off_A = off_k[None, :] * stride_ak + off_m[:, None] * stride_am
        mask_A = (off_k[None, :] < k) & (off_m[:, None] < m)
        off_B = off_n[None, :] * stride_bn + off_k[:, None] * stride_bk
        mask_B = (off_n[None, :] < n) & (off_k[:, None] < k)
        A = tl.load(a_ptr + off_A, mask_A, other=0.0)
        B = tl.load(b_ptr + off_B, mask_B, other=0.0)
        acc += tl.dot(A, B, allow_tf32=False)
    off_C = off_n[None, :] * stride_cn + off_m[:, None] * stride_cm
    mask_C = (off_n[None, :] < m) & (off_m[:, None] < n)
    tl.store(c_ptr + off_C, acc, mask=mask_C)


@triton.jit
def matmul_kernel1(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    A_stride_batch, A_stride_height, A_stride_width,
    B_stride_height, B_stride_width,
    C_stride_batch, C_stride_height, C_stride_width,
    bias_ptr, add_bias:tl.constexpr,
    activation, apply_activation:tl.constexpr,
    bm: tl.constexpr, bn: tl.constexpr, bk: tl.constexpr,
    group_sz: tl.constexpr
):
    batch_idx = tl.program_id(0)
    pid_m, pid_n = tl.program_id(1), tl.program_id(2)
    num_pid_m, num_pid_n = tl.num_programs(1), tl.num_programs(2)
    pid_m, pid_n = tl.swizzle2d(pid_m, pid_n, num_pid_m, num_pid_n, group_sz)
    off_m = pid_m * bm + tl.arange(0, bm)
    off_n = pid_n * bn + tl.arange(0, bn)
    A_offset_batch = batch_idx * A_stride_batch
    C_offset_batch = batch_idx * C_stride_batch
    acc = tl.zeros((bm, bn), dtype=tl.float32)
    for i in range(0, K, bk):
        off_k = i + tl.arange(0, bk)
        off_A = off_k[None, :] * A_stride_width + off_m[:, None] * A_stride_height
        mask_A = (off_k[None, :] < K) & (off_m[:, None] < M)
        off_B = off_n[None, :] * B_stride_width + off_k[:, None] * B_stride_height
        mask_B = (off_n[None, :] < N) & (off_k[:, None] < K)
        A = tl.load(a_ptr + off_A + A_offset_batch, mask_A, other=0.0)
        B = tl.load(b_ptr + off_B, mask_B, other=0.0)
        acc += tl.dot(A, B, allow_tf32=False)
    if add_bias:
        bias = tl.load(bias_ptr + off_n, off_n < N)
        acc += bias[None, :]
    off_C = off_n[None, :] * C_stride_width + off_m[:, None] * C_stride_height
    mask_C = (off_n[None, :] < N) & (off_m[:, None] < M)
    tl.store(c_ptr + off_C + C_offset_batch, acc, mask=mask_C)


@triton.jit
def matmul_kernel2(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    A_stride_height, A_stride_width,
    B_stride_batch, B_stride_height, B_stride_width,
    C_stride_batch, C_stride_height, C_stride_width,
    bias_ptr, add_bias: tl.constexpr,
    activation, apply_activation:tl.constexpr,
    bm: tl.constexpr, bn: tl.constexpr, bk: tl.constexpr,
    group_sz: tl.constexpr
):
    batch_idx = tl.program_id(0)
    pid_m, pid_n = tl.program_id(1), tl.program_id(2)
    num_pid_m, num_pid_n = tl.num_programs(1), tl.num_programs(2)
    pid_m, pid_n = tl.swizzle2d(pid_m, pid_n, num_pid_m, num_pid_n, group_sz)
    off_m = pid_m * bm + tl.arange(0, bm)
    off_n = pid_n * bn + tl.arange(0, bn)
    B_offset_batch = batch_idx * B_stride_batch
    C_offset_batch = batch_idx * C_stride_batch
    acc = tl.zeros((bm, bn), dtype=tl.float32)
    for i in range(0, K, bk):
        off_k = i + tl.arange(0, bk)
        off_A = off_k[None, :] * A_stride_width + off_m[:, None] * A_stride_height
        mask_A = (off_k[None, :] < K) & (off_m[:, None] < M)
        off_B = off_n[None, :] * B_stride_width + off_k[:, None] * B_stride_height
        mask_B = (off_n[None, :] < N) & (off_k[:, None] < K)
        A = tl.load(a_ptr + off_A, mask_A, other=0.0)
        B = tl.load(b_ptr + off_B + B_offset_batch, mask_B, other=0.0)
        acc += tl.dot(A, B, allow_tf32=False)
    if add_bias:
        bias = tl.load(bias_ptr + batch_idx)
        acc += bias
    off_C = off_n[None, :] * C_stride_width + off_m[:, None] * C_stride_height
    mask_C = (off_n[None, :] < N) & (off_m[:, None] < M)
    tl.store(c_ptr + off_C + C_offset_batch, acc, mask=mask_C)


@triton.jit
def transpose_kernel1(
    x_ptr,
    y_ptr,
    M,
    N,
    stride_xm,
    stride_xn,
    stride_yn,
    stride_ym,
    bm: tl.constexpr = 16, bn: tl.constexpr = 16
):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    off_m = pid_m * bm + tl.arange(0, bm)
    off_n = pid_n * bn + tl.arange(0, bn)
    off_X = off_n[None, :] * stride_xn + off_m[:, None] * stride_xm
    off_Y = off_n[:, None] * stride_yn + off_m[None, :] * stride_ym
    mask_X = (off_m[:, None] < M) & (off_n[None, :] < N)
    mask_Y = (off_m[None, :] < M) & (off_n[:, None] < N)
    x = tl.load(x_ptr + off_X, mask=mask_X)
    x_t = tl.trans(x)
    tl.store(y_ptr + off_Y, x_t, mask=mask_Y)


@triton.jit
def transpose_kernel2(
    x_ptr,
    y_ptr,
    M,
    N,
    row_stride_x,
    col_stride_x,
    row_stride_y,
    col_stride_y,
    bm: tl.constexpr = 16, bn: tl.constexpr = 16
):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    offs_row = pid_m * bm + tl.arange(0, bm)
    offs_col = pid_n * bn + tl.arange(0, bn)
    offs_X_trans = offs_col[:, None] * col_stride_x + offs_row[None, :] * row_stride_x
    offs_Y = offs_col[:, None] * row_stride_y + offs_row[None, :] * col_stride_y
    mask = (offs_col[:, None] < N) & (offs_row[None, :] < M)
    x = tl.load(x_ptr + offs_X_trans, mask=mask)
    tl.store(y_ptr + offs_Y, x, mask=mask)


@triton.jit
def conv2d_kernel(
    input_ptr,
    input_batch_stride,
    input_channel_stride,
    input_row_stride,
    input_col_stride,
    height,
    width,
    channels,
    kernel_ptr,
    kernel_height,
    kernel_width,
    kernel_dim_stride,
    kernel_channel_stride,
    kernel_row_stride,
    kernel_col_stride,
    bias_ptr,
    output_ptr,
    output_width,
    output_batch_stride,
    output_channel_stride,
    output_row_stride,
    output_col_stride,
    BLOCK_SIZE_ROW: tl.constexpr,
    BLOCK_SIZE_COL: tl.constexpr
):
    batch_idx = tl.program_id(0)
    kernel_idx = tl.program_id(1)
    row_idx = tl.program_id(2)
    bias_offset = kernel_idx
    bias = tl.load(bias_ptr + bias_offset)
    batch_offset = batch_idx*input_batch_stride
    output_batch_offset = batch_idx*output_batch_stride
    output_channel_offset = kernel_idx*output_channel_stride
    output_row_offset = row_idx*output_row_stride
    kernel_row_offset = tl.arange(0, BLOCK_SIZE_ROW)
    kernel_row_mask = kernel_row_offset[:, None] < kernel_height
    kernel_row_offset = kernel_row_offset[:, None]*kernel_row_stride
    kernel_col_offset = tl.arange(0, BLOCK_SIZE_COL)
    kernel_col_mask = kernel_col_offset[None, :] < kernel_width
    kernel_col_offset = kernel_col_offset[None, :]*kernel_col_stride
    kernel_mask = kernel_row_mask & kernel_col_mask
    for col_idx in range(output_width):
        elem = 0.0
        input_row_offset = row_idx * kernel_height + tl.arange(0, BLOCK_SIZE_ROW)
        input_row_mask = input_row_offset[:, None] < height
        input_row_offset = input_row_offset[:, None]*input_row_stride
        input_col_offset = col_idx * kernel_width + tl.arange(0, BLOCK_SIZE_ROW)
        input_col_mask = input_col_offset[None, :] < width
        input_col_offset = input_col_offset[None, :]*input_col_stride
        input_mask = input_row_mask & input_col_mask
        for c in range(channels):
            input_offset = input_ptr + batch_offset + c*input_channel_stride + input_row_offset + input_col_offset
            input_data = tl.load(input_offset, input_mask)
            kernel_offset = kernel_ptr + kernel_idx*kernel_dim_stride + c*kernel_channel_stride + kernel_row_offset + kernel_col_offset
            kernel_data = tl.load(kernel_offset, kernel_mask)
            dot_prdct = input_data * kernel_data
            elem += tl.sum(dot_prdct)
        output_offset = output_ptr + output_batch_offset + output_channel_offset + output_row_offset + col_idx
        tl.store(output_offset, elem + bias)


# ---------------------------------------------------------------------------- host side


def _nan_like(shape, dtype, backend):
    return device_array(np.full(shape, np.nan, dtype), backend)


@pytest.mark.parametrize("n", [1, 1000, 4096 + 3])
def test_vector_add(backend, rng, n):
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = _nan_like(n, np.float32, backend)
    block_size = 256
    add_kernel[(triton.cdiv(n, block_size),)](device_array(a, backend), device_array(b, backend), c, n, block_size)
    np.testing.assert_array_equal(to_numpy(c), a + b)


@pytest.mark.parametrize("m,n,bs", [(37, 53, (16, 32)), (64, 64, (32, 16))])
def test_matrix_add(backend, rng, m, n, bs):
    a = rng.standard_normal((m, n)).astype(np.float32)
    b = rng.standard_normal((m, n)).astype(np.float32)
    c = _nan_like((m, n), np.float32, backend)
    grid = (triton.cdiv(m, bs[0]), triton.cdiv(n, bs[1]))
    matrix_add_kernel[grid](device_array(a, backend), device_array(b, backend), c, m, n, bs[0], bs[1])
    np.testing.assert_array_equal(to_numpy(c), a + b)


@pytest.mark.parametrize("size,bs", [(48, 16), (80, 32)])
def test_matmul_square(backend, rng, size, bs):
    # square, as the seed's store mask (m and n swapped) requires
    m = n = k = size
    A = rng.standard_normal((m, k)).astype(np.float16)
    B = rng.standard_normal((k, n)).astype(np.float16)
    C = _nan_like((m, n), np.float16, backend)
    grid = lambda meta: (triton.cdiv(m, meta['bm']), triton.cdiv(n, meta['bn']))
    matmul_kernel[grid](
        device_array(A, backend), device_array(B, backend), C,
        m, n, k,
        k, 1, n, 1, n, 1,
        bm=bs, bn=bs, bk=bs,
    )
    ref = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(to_numpy(C).astype(np.float64), ref, rtol=2e-3, atol=2e-2)


@pytest.mark.parametrize("with_bias", [False, True])
def test_batched_matmul_bias_swizzle(backend, rng, with_bias):
    batch, M, K, N = 2, 40, 24, 72
    A = rng.standard_normal((batch, M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    bias = rng.standard_normal((1, N)).astype(np.float32)
    C = _nan_like((batch, M, N), np.float32, backend)
    grid = lambda meta: (batch, triton.cdiv(M, meta["bm"]), triton.cdiv(N, meta["bn"]))
    matmul_kernel1[grid](
        device_array(A, backend), device_array(B, backend), C,
        M=M, N=N, K=K,
        A_stride_batch=M * K, A_stride_height=K, A_stride_width=1,
        B_stride_height=N, B_stride_width=1,
        C_stride_batch=M * N, C_stride_height=N, C_stride_width=1,
        bias_ptr=device_array(bias, backend) if with_bias else None,
        add_bias=with_bias,
        activation="gelu" if with_bias else None,
        apply_activation=with_bias,
        bm=16, bn=16, bk=16, group_sz=16,
    )
    ref = A.astype(np.float64) @ B.astype(np.float64) + (bias if with_bias else 0)
    np.testing.assert_allclose(to_numpy(C), ref, rtol=1e-4, atol=1e-4)


def test_batched_weights_matmul(backend, rng):
    batch, M, K, N = 3, 20, 40, 33
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((batch, K, N)).astype(np.float32)
    bias = rng.standard_normal((batch, 1)).astype(np.float32)
    C = _nan_like((batch, M, N), np.float32, backend)
    grid = lambda meta: (batch, triton.cdiv(M, meta["bm"]), triton.cdiv(N, meta["bn"]))
    matmul_kernel2[grid](
        device_array(A, backend), device_array(B, backend), C,
        M=M, N=N, K=K,
        A_stride_height=K, A_stride_width=1,
        B_stride_batch=K * N, B_stride_height=N, B_stride_width=1,
        C_stride_batch=M * N, C_stride_height=N, C_stride_width=1,
        bias_ptr=device_array(bias, backend),
        add_bias=True,
        activation="gelu",
        apply_activation=True,
        bm=16, bn=16, bk=16, group_sz=16,
    )
    ref = A.astype(np.float64) @ B.astype(np.float64) + bias[:, :, None]
    np.testing.assert_allclose(to_numpy(C), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel", [transpose_kernel1, transpose_kernel2], ids=["trans", "strides"])
@pytest.mark.parametrize("M,N", [(16, 16), (45, 70)])
def test_transpose(backend, rng, kernel, M, N):
    x = rng.standard_normal((M, N)).astype(np.float16)
    y = _nan_like((N, M), np.float16, backend)
    grid = lambda META: (triton.cdiv(M, META['bm']), triton.cdiv(N, META['bn']))
    kernel[grid](device_array(x, backend), y, M, N, N, 1, M, 1)
    np.testing.assert_array_equal(to_numpy(y), x.T)


@pytest.mark.parametrize("kh", [2, 4])
def test_conv2d_naive(backend, rng, kh):
    batch, channels, height, width, n_kernels = 2, 3, 4 * kh, 3 * kh, 4
    x = rng.standard_normal((batch, channels, height, width)).astype(np.float32)
    kernel = rng.standard_normal((n_kernels, channels, kh, kh)).astype(np.float32)
    bias = rng.standard_normal((n_kernels, 1)).astype(np.float32)
    out = _nan_like((batch, n_kernels, height // kh, width // kh), np.float32, backend)
    block = triton.next_power_of_2(kh)
    grid = (batch, n_kernels, height // kh)
    conv2d_kernel[grid](
        input_ptr=device_array(x, backend),
        input_batch_stride=channels * height * width, input_channel_stride=height * width,
        input_row_stride=width, input_col_stride=1,
        height=height, width=width, channels=channels,
        kernel_ptr=device_array(kernel, backend),
        kernel_height=kh, kernel_width=kh,
        kernel_dim_stride=channels * kh * kh, kernel_channel_stride=kh * kh,
        kernel_row_stride=kh, kernel_col_stride=1,
        bias_ptr=device_array(bias, backend),
        output_ptr=out,
        output_width=width // kh,
        output_batch_stride=n_kernels * (height // kh) * (width // kh),
        output_channel_stride=(height // kh) * (width // kh),
        output_row_stride=width // kh, output_col_stride=1,
        BLOCK_SIZE_ROW=block, BLOCK_SIZE_COL=block,
    )
    patches = x.reshape(batch, channels, height // kh, kh, width // kh, kh).astype(np.float64)
    ref = np.einsum("bchiwj,kcij->bkhw", patches, kernel.astype(np.float64)) + bias[None, :, :, None]
    np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-5, atol=1e-5)


# The seed's autotuned matmul: its configs and key as written, over the one-dimensional
# grouped ordering of the "Grouped ordering" section.
@triton.autotune(
    configs=[
        triton.Config({'bm': 128, 'bn': 256, 'bk': 64, 'group_sz': 8}, num_stages=3, num_warps=8),
        triton.Config({'bm': 64, 'bn': 256, 'bk': 32, 'group_sz': 8}, num_stages=4, num_warps=4),
        triton.Config({'bm': 128, 'bn': 128, 'bk': 32, 'group_sz': 8}, num_stages=4, num_warps=4),
        triton.Config({'bm': 128, 'bn': 64, 'bk': 32, 'group_sz': 8}, num_stages=4, num_warps=4),
        triton.Config({'bm': 64, 'bn': 128, 'bk': 32, 'group_sz': 8}, num_stages=4, num_warps=4),
        triton.Config({'bm': 128, 'bn': 32, 'bk': 32, 'group_sz': 8}, num_stages=4, num_warps=4),
        triton.Config({'bm': 64, 'bn': 32, 'bk': 32, 'group_sz': 8}, num_stages=5, num_warps=2),
        triton.Config({'bm': 32, 'bn': 64, 'bk': 32, 'group_sz': 8}, num_stages=5, num_warps=2),
    ],
    key=['m', 'n', 'k'],
)
@triton.jit
def grouped_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    m, n, k,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    bm: tl.constexpr, bn: tl.constexpr, bk: tl.constexpr, group_sz: tl.constexpr
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(m, bm)
    num_pid_n = tl.cdiv(n, bn)
    num_pid_in_group = group_sz * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * group_sz
    group_size_m = min(num_pid_m - first_pid_m, group_sz)
    pid_idx_in_group = pid % num_pid_in_group
    pid_m = first_pid_m + (pid_idx_in_group % group_size_m)
    pid_n = pid_idx_in_group // group_size_m
    off_m = pid_m * bm + tl.arange(0, bm)
    off_n = pid_n * bn + tl.arange(0, bn)
    acc = tl.zeros((bm, bn), dtype=tl.float32)
    for i in range(0, k, bk):
        off_k = i + tl.arange(0, bk)
        off_A = off_k[None, :] * stride_ak + off_m[:, None] * stride_am
        mask_A = (off_k[None, :] < k) & (off_m[:, None] < m)
        off_B = off_n[None, :] * stride_bn + off_k[:, None] * stride_bk
        mask_B = (off_n[None, :] < n) & (off_k[:, None] < k)
        A = tl.load(a_ptr + off_A, mask_A, other=0.0)
        B = tl.load(b_ptr + off_B, mask_B, other=0.0)
        acc += tl.dot(A, B, allow_tf32=False)
    off_C = off_n[None, :] * stride_cn + off_m[:, None] * stride_cm
    mask_C = (off_n[None, :] < n) & (off_m[:, None] < m)
    tl.store(c_ptr + off_C, acc.to(tl.float16), mask=mask_C)


def test_autotuned_grouped_matmul(backend, rng):
    m, k, n = 300, 96, 520
    A = rng.standard_normal((m, k)).astype(np.float16)
    B = rng.standard_normal((k, n)).astype(np.float16)
    C = _nan_like((m, n), np.float16, backend)
    grid = lambda meta: (triton.cdiv(m, meta['bm']) * triton.cdiv(n, meta['bn']),)
    grouped_matmul_kernel[grid](device_array(A, backend), device_array(B, backend), C, m, n, k,
                                k, 1, n, 1, n, 1)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(to_numpy(C).astype(np.float64), ref, rtol=2e-3, atol=2e-2)
    assert grouped_matmul_kernel.best_config in grouped_matmul_kernel.configs
