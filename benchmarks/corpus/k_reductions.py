"""Reductions of a row-major 2-D tensor, fp32 and fp16 inputs (accumulated in fp32): along
axis 1 (row sums; row max with argmax) looping over the columns in blocks, along axis 0
(column sums; column max with argmax) looping over the rows in blocks, and of the whole
tensor to one number, with an atomic add per program or in two passes (partial sums,
then one program summing them)."""
import math

import torch
import triton
import triton.language as tl

from case import Case


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 4, "BLOCK_N": 128}, num_warps=4),
        triton.Config({"BLOCK_M": 1, "BLOCK_N": 2048}, num_warps=8),
        triton.Config({"BLOCK_M": 4, "BLOCK_N": 1024}, num_warps=4),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 256}, num_warps=4),
    ],
    key=["M", "N"],
)
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    row_start = x_ptr + rows.to(tl.int64)[:, None] * stride
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        acc += tl.load(row_start + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + rows, tl.sum(acc, axis=1), mask=row_mask)


@triton.jit
def row_max_argmax_kernel(x_ptr, max_ptr, idx_ptr, N, stride, BLOCK_N: tl.constexpr):
    """Each lane keeps the largest value it saw and where (the first, on ties); the lanes
    are then combined, the smallest index among the lanes holding the maximum winning."""
    row = tl.program_id(0).to(tl.int64)
    best = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    best_idx = tl.zeros([BLOCK_N], dtype=tl.int32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        take = x > best
        best = tl.where(take, x, best)
        best_idx = tl.where(take, cols, best_idx)
    row_max = tl.max(best, axis=0)
    row_idx = tl.min(tl.where(best == row_max, best_idx, N), axis=0)
    tl.store(max_ptr + row, row_max.to(max_ptr.dtype.element_ty))
    tl.store(idx_ptr + row, row_idx.to(tl.int64))


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 64}, num_warps=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_warps=8),
    ],
    key=["M", "N"],
)
@triton.jit
def col_sum_kernel(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        x = tl.load(x_ptr + rows.to(tl.int64)[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        acc += x.to(tl.float32)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=col_mask)


@triton.jit
def col_max_argmax_kernel(x_ptr, max_ptr, idx_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Per block of rows: its column maxima and their rows; a block replaces the running
    maximum only when strictly larger, so the first row wins ties."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    best = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    best_idx = tl.zeros([BLOCK_N], dtype=tl.int32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        x = tl.load(x_ptr + rows.to(tl.int64)[:, None] * stride + cols[None, :], mask=mask,
                    other=float("-inf")).to(tl.float32)
        block_max = tl.max(x, axis=0)
        block_idx = tl.argmax(x, axis=0) + start
        take = block_max > best
        best = tl.where(take, block_max, best)
        best_idx = tl.where(take, block_idx, best_idx)
    tl.store(max_ptr + cols, best.to(max_ptr.dtype.element_ty), mask=col_mask)
    tl.store(idx_ptr + cols, best_idx.to(tl.int64), mask=col_mask)


@triton.jit
def sum_atomic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@triton.jit
def sum_partials_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(partial_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def sum_finish_kernel(partial_ptr, out_ptr, n_partials, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    partials = tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(partials, axis=0))


# ----------------------------------------------------------------------------- host wrappers

def row_sum(x):
    M, N = x.shape
    out = torch.empty(M, device=x.device, dtype=torch.float32)
    row_sum_kernel[lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)](x, out, M, N, x.stride(0))
    return out


def row_max_argmax(x):
    M, N = x.shape
    values = torch.empty(M, device=x.device, dtype=x.dtype)
    indices = torch.empty(M, device=x.device, dtype=torch.int64)
    block = min(triton.next_power_of_2(N), 2048)
    row_max_argmax_kernel[(M,)](x, values, indices, N, x.stride(0), BLOCK_N=block, num_warps=4 if block <= 1024 else 8)
    return values, indices


def col_sum(x):
    M, N = x.shape
    out = torch.empty(N, device=x.device, dtype=torch.float32)
    col_sum_kernel[lambda meta: (triton.cdiv(N, meta["BLOCK_N"]),)](x, out, M, N, x.stride(0))
    return out


def col_max_argmax(x):
    M, N = x.shape
    values = torch.empty(N, device=x.device, dtype=x.dtype)
    indices = torch.empty(N, device=x.device, dtype=torch.int64)
    col_max_argmax_kernel[(triton.cdiv(N, 32),)](x, values, indices, M, N, x.stride(0), BLOCK_M=64, BLOCK_N=32)
    return values, indices


def sum_atomic(x):
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    sum_atomic_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)
    return out


def sum_two_pass(x):
    n = x.numel()
    block = min(triton.next_power_of_2(math.ceil(math.sqrt(n))), 8192)
    n_partials = triton.cdiv(n, block)
    partials = torch.empty(n_partials, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    sum_partials_kernel[(n_partials,)](x, partials, n, BLOCK=block, num_warps=8 if block >= 4096 else 4)
    sum_finish_kernel[(1,)](partials, out, n_partials, BLOCK=triton.next_power_of_2(n_partials), num_warps=8)
    return out


def cases(device, size):
    matrices = {"full": [(8192, 8192), (32768, 1000)], "quick": [(1024, 1000)], "tiny": [(37, 300), (8, 5000)]}[size]
    columns = {"full": [(8192, 8192), (2048, 32768)], "quick": [(1000, 1024)], "tiny": [(150, 45)]}[size]
    numbers = {"full": [1 << 26], "quick": [1 << 20], "tiny": [4999]}[size]
    for dtype in (torch.float32, torch.float16):
        name = str(dtype).replace("torch.", "")
        item = dtype.itemsize
        matrix = lambda rows, cols, dtype=dtype: {"x": torch.randn(rows, cols, device=device).to(dtype)}
        # fp16 maxima are found among small integers: many ties, which go to the first index
        ties = " ties" if dtype == torch.float16 else ""
        peaked = matrix if not ties else lambda rows, cols, dtype=dtype: {
            "x": torch.randint(-2, 2, (rows, cols), device=device).to(dtype)}
        for rows, cols in matrices:
            yield Case(f"row sum {name}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, matrix=matrix: matrix(rows, cols),
                       run=lambda m, i: lambda: m.row_sum(i["x"]),
                       reference=lambda i: i["x"].double().sum(1),
                       atol=1e-3, rtol=1e-5, bytes=rows * cols * item)
            yield Case(f"row max+argmax {name}{ties}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, peaked=peaked: peaked(rows, cols),
                       run=lambda m, i: lambda: m.row_max_argmax(i["x"]),
                       reference=lambda i: tuple(torch.max(i["x"].double(), 1)),
                       atol=0, rtol=0, bytes=rows * cols * item)
        for rows, cols in columns:
            yield Case(f"col sum {name}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, matrix=matrix: matrix(rows, cols),
                       run=lambda m, i: lambda: m.col_sum(i["x"]),
                       reference=lambda i: i["x"].double().sum(0),
                       atol=1e-3, rtol=1e-5, bytes=rows * cols * item)
            yield Case(f"col max+argmax {name}{ties}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, peaked=peaked: peaked(rows, cols),
                       run=lambda m, i: lambda: m.col_max_argmax(i["x"]),
                       reference=lambda i: tuple(torch.max(i["x"].double(), 0)),
                       atol=0, rtol=0, bytes=rows * cols * item)
        for n in numbers:
            # fp32 sums of n values in blocks, then of the blocks' sums in some order
            atol = 1e-6 * n ** 0.75
            for how, wrapper in (("atomic", "sum_atomic"), ("two-pass", "sum_two_pass")):
                yield Case(f"sum {how} {name}", f"n={n}",
                           inputs=lambda n=n, dtype=dtype: {"x": torch.randn(n, device=device).to(dtype)},
                           run=lambda m, i, wrapper=wrapper: lambda: getattr(m, wrapper)(i["x"]),
                           reference=lambda i: i["x"].double().sum().reshape(1),
                           atol=atol, rtol=1e-5, bytes=n * item)
