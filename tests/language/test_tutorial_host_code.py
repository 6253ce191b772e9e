"""Host code written for Triton's tutorials, with the imports swapped.

The fused-softmax tutorial sizes a persistent launch from `driver.active`'s device
properties and the compiled kernel's register and shared-memory use
(`kernel = fn.warmup(...)`, `kernel._init_handles()`, `kernel.n_regs`,
`kernel.metadata.shared`, then `kernel[grid](...)` with every argument). The matmul
tutorial tests `driver.active.get_current_target().backend` and uses a string
constexpr for its activation. Both run on both backends: in the interpreter the
properties are the fallback target's and the compiled kernel's launch runs its source.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec as triton
import tilec.language as tl
from tilec.runtime import driver
from tilec_testing import device_array, to_numpy


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr,
                   num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


def softmax(x, y):
    properties = driver.active.utils.get_device_properties(driver.active.get_current_device())
    NUM_SM = properties["multiprocessor_count"]
    NUM_REGS = properties["max_num_regs"]
    SIZE_SMEM = properties["max_shared_mem"]
    WARP_SIZE = properties["warpSize"]
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 4 if SIZE_SMEM > 200000 else 2
    stride_x, stride_y = n_cols, n_cols
    kernel = softmax_kernel.warmup(y, x, stride_x, stride_y, n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                   num_stages=num_stages, num_warps=num_warps, grid=(1, ))
    kernel._init_handles()
    n_regs = kernel.n_regs
    size_smem = kernel.metadata.shared
    occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
    occupancy = min(occupancy, SIZE_SMEM // size_smem)
    num_programs = NUM_SM * occupancy
    num_programs = min(num_programs, n_rows)
    kernel[(num_programs, 1, 1)](y, x, stride_x, stride_y, n_rows, n_cols, BLOCK_SIZE, num_stages)
    return num_programs


@pytest.mark.parametrize("n_rows,n_cols", [(1823, 781), (37, 128)])
def test_fused_softmax_tutorial(backend, rng, n_rows, n_cols):
    x = rng.standard_normal((n_rows, n_cols)).astype(np.float32)
    y = device_array(np.full((n_rows, n_cols), np.nan, np.float32), backend)
    num_programs = softmax(device_array(x, backend), y)
    assert 1 <= num_programs <= n_rows
    z = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(to_numpy(y), z / z.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def activation_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACTIVATION: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if ACTIVATION == "leaky_relu":
        x = leaky_relu(x)
    tl.store(y_ptr + offs, x, mask=offs < n)


@pytest.mark.parametrize("activation", ["leaky_relu", ""])
def test_string_constexpr_and_target(backend, rng, activation):
    assert driver.active.get_current_target().backend == "cuda"
    assert driver.active.get_current_target().arch >= 80
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = device_array(np.full(n, np.nan, np.float32), backend)
    activation_kernel[(triton.cdiv(n, 256),)](device_array(x, backend), y, n, BLOCK=256, ACTIVATION=activation)
    expected = np.where(x >= 0, x, np.float32(0.01) * x) if activation else x
    np.testing.assert_array_equal(to_numpy(y), expected)


def test_compiled_kernel_launch_checks_the_argument_count(backend, rng):
    x = device_array(rng.standard_normal(16).astype(np.float32), backend)
    kernel = activation_kernel.warmup(x, x, 16, BLOCK=16, ACTIVATION="", grid=(1,))
    with pytest.raises(triton.LaunchError, match="takes 5 arguments but 3 were given"):
        kernel[(1,)](x, x, 16)


# The layer-norm tutorial's forward and backward kernels (the backward accumulates the
# weight and bias gradients of row groups under a spin lock built from atomic_cas).
@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N, GROUP_SIZE_M: tl.constexpr,
                             BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


@pytest.mark.parametrize("M,N", [(151, 300), (64, 1024)])
def test_layer_norm_tutorial_forward_and_backward(backend, rng, M, N):
    eps = 1e-5
    x = (rng.standard_normal((M, N)) * 2 + 0.5).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    dy = rng.standard_normal((M, N)).astype(np.float32)
    X, W, B, DY = (device_array(a, backend) for a in (x, w, b, dy))
    Y = device_array(np.full((M, N), np.nan, np.float32), backend)
    mean = device_array(np.full(M, np.nan, np.float32), backend)
    rstd = device_array(np.full(M, np.nan, np.float32), backend)
    BLOCK_SIZE = min(65536 // 4, triton.next_power_of_2(N))
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    _layer_norm_fwd_fused[(M, )](X, Y, W, B, mean, rstd, N, N, eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
                                 num_ctas=1)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=1, keepdims=True)
    sigma = 1 / np.sqrt(xd.var(axis=1, keepdims=True) + eps)
    xhat = (xd - mu) * sigma
    np.testing.assert_allclose(to_numpy(Y), xhat * w + b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_numpy(mean), mu[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(rstd), sigma[:, 0], rtol=1e-5)

    GROUP_SIZE_M = 16
    locks = device_array(np.zeros(2 * GROUP_SIZE_M, np.int32), backend)
    _dw = device_array(np.zeros((GROUP_SIZE_M, N), np.float32), backend)
    _db = device_array(np.zeros((GROUP_SIZE_M, N), np.float32), backend)
    dw = device_array(np.full(N, np.nan, np.float32), backend)
    db = device_array(np.full(N, np.nan, np.float32), backend)
    DX = device_array(np.full((M, N), np.nan, np.float32), backend)
    _layer_norm_bwd_dx_fused[(M, )](DX, DY, _dw, _db, X, W, mean, rstd, locks, N, N, BLOCK_SIZE_N=BLOCK_SIZE,
                                    GROUP_SIZE_M=GROUP_SIZE_M, num_warps=num_warps)
    grid = lambda meta: (triton.cdiv(N, meta['BLOCK_SIZE_N']), )
    _layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, min(GROUP_SIZE_M, M), N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    dyd = dy.astype(np.float64)
    wdy = w * dyd
    dx_ref = (wdy - (xhat * (xhat * wdy).mean(axis=1, keepdims=True) + wdy.mean(axis=1, keepdims=True))) * sigma
    np.testing.assert_allclose(to_numpy(DX), dx_ref, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(to_numpy(dw), (dyd * xhat).sum(axis=0), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(to_numpy(db), dyd.sum(axis=0), rtol=1e-4, atol=1e-3)
    assert (to_numpy(locks)[:GROUP_SIZE_M] == 0).all()


@triton.jit
def mode_kernel(x_ptr, MODE, n):
    offs = tl.arange(0, 16)
    if MODE == "i32":  # a string argument that happens to spell a type is still a string
        tl.store(x_ptr + offs, offs.to(tl.float32), mask=offs < n)
    else:
        tl.store(x_ptr + offs, -offs.to(tl.float32), mask=offs < n)


@pytest.mark.parametrize("mode", ["i32", "fp16"])
def test_string_arguments_that_spell_types_stay_strings(backend, mode):
    x = device_array(np.full(16, np.nan, np.float32), backend)
    mode_kernel[(1,)](x, mode, 16)
    expected = np.arange(16, dtype=np.float32) * (1 if mode == "i32" else -1)
    np.testing.assert_array_equal(to_numpy(x), expected)
