"""Scans, fp32: cumsum along the last axis (forward and reversed), one program per row
looping over the row in blocks with a running total; cumsum along axis 0, one program
per strip of columns looping down the rows; and a first-order linear recurrence
h[t] = a[t] * h[t-1] + x[t] along the last axis (the scan of gated linear RNNs and
state-space models) through tl.associative_scan with a tuple combine function."""
import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def cumsum_rows_kernel(x_ptr, out_ptr, N, stride, REVERSE: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    out_row = out_ptr + row * stride
    running = 0.0  # the total of the blocks already done
    num_blocks = tl.cdiv(N, BLOCK_N)
    for i in range(0, num_blocks):
        if REVERSE:
            start = (num_blocks - 1 - i) * BLOCK_N
        else:
            start = i * BLOCK_N
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        scanned = tl.cumsum(x, axis=0, reverse=REVERSE) + running
        tl.store(out_row + cols, scanned, mask=mask)
        running += tl.sum(x, axis=0)


@triton.jit
def cumsum_cols_kernel(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    running = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        offsets = rows.to(tl.int64)[:, None] * stride + cols[None, :]
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(out_ptr + offsets, tl.cumsum(x, axis=0) + running[None, :], mask=mask)
        running += tl.sum(x, axis=0)


@triton.jit
def _affine_combine(a_first, b_first, a_second, b_second):
    """Composition of h -> a_first * h + b_first, then h -> a_second * h + b_second."""
    return a_first * a_second, b_first * a_second + b_second


@triton.jit
def linear_recurrence_kernel(a_ptr, x_ptr, h_ptr, R, T, stride, BLOCK_R: tl.constexpr, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < R
    offs_t = tl.arange(0, BLOCK_T)
    h = tl.zeros([BLOCK_R], dtype=tl.float32)  # the state entering the chunk
    for start in range(0, T, BLOCK_T):
        cols = start + offs_t
        mask = row_mask[:, None] & (cols[None, :] < T)
        offsets = rows.to(tl.int64)[:, None] * stride + cols[None, :]
        # masked steps are the identity map (a = 1, x = 0): the last column is the chunk's end
        a = tl.load(a_ptr + offsets, mask=mask, other=1.0)
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        a_prefix, b_prefix = tl.associative_scan((a, x), axis=1, combine_fn=_affine_combine)
        states = a_prefix * h[:, None] + b_prefix
        tl.store(h_ptr + offsets, states, mask=mask)
        h = tl.sum(tl.where(offs_t[None, :] == BLOCK_T - 1, states, 0.0), axis=1)


# ----------------------------------------------------------------------------- host wrappers

def cumsum_rows(x, reverse=False):
    M, N = x.shape
    out = torch.empty_like(x)
    block = min(triton.next_power_of_2(N), 4096)
    cumsum_rows_kernel[(M,)](x, out, N, x.stride(0), REVERSE=reverse, BLOCK_N=block,
                             num_warps=4 if block <= 1024 else 8)
    return out


def cumsum_cols(x):
    M, N = x.shape
    out = torch.empty_like(x)
    cumsum_cols_kernel[(triton.cdiv(N, 32),)](x, out, M, N, x.stride(0), BLOCK_M=64, BLOCK_N=32)
    return out


def linear_recurrence(a, x):
    R, T = x.shape
    h = torch.empty_like(x)
    block_t = min(triton.next_power_of_2(T), 512)
    linear_recurrence_kernel[(triton.cdiv(R, 4),)](a, x, h, R, T, x.stride(0), BLOCK_R=4, BLOCK_T=block_t)
    return h


def _linear_recurrence_reference(a, x):
    a, x = a.double(), x.double()
    h = torch.zeros_like(x[:, 0])
    out = torch.empty_like(x)
    for t in range(x.shape[1]):
        h = a[:, t] * h + x[:, t]
        out[:, t] = h
    return out


def cases(device, size):
    rows = {"full": [(4096, 4096), (1024, 32768)], "quick": [(1000, 1000)], "tiny": [(5, 300), (3, 5000)]}[size]
    cols = {"full": [(4096, 4096), (1024, 32768)], "quick": [(1000, 1000)], "tiny": [(150, 45)]}[size]
    recurrences = {"full": [(4096, 4096)], "quick": [(1024, 1000)], "tiny": [(6, 700)]}[size]
    matrix = lambda m, n: {"x": torch.randn(m, n, device=device)}
    for m, n in rows:
        # fp32 running sums of up to n standard normal values
        atol = 1e-5 * n ** 0.5
        yield Case("cumsum last axis fp32", f"{m}x{n}",
                   inputs=lambda m=m, n=n: matrix(m, n),
                   run=lambda mod, i: lambda: mod.cumsum_rows(i["x"]),
                   reference=lambda i: i["x"].double().cumsum(1),
                   atol=atol, rtol=1e-5, bytes=2 * m * n * 4)
        yield Case("reverse cumsum last axis fp32", f"{m}x{n}",
                   inputs=lambda m=m, n=n: matrix(m, n),
                   run=lambda mod, i: lambda: mod.cumsum_rows(i["x"], reverse=True),
                   reference=lambda i: i["x"].double().flip(1).cumsum(1).flip(1),
                   atol=atol, rtol=1e-5, bytes=2 * m * n * 4)
    for m, n in cols:
        yield Case("cumsum axis 0 fp32", f"{m}x{n}",
                   inputs=lambda m=m, n=n: matrix(m, n),
                   run=lambda mod, i: lambda: mod.cumsum_cols(i["x"]),
                   reference=lambda i: i["x"].double().cumsum(0),
                   atol=1e-5 * m ** 0.5, rtol=1e-5, bytes=2 * m * n * 4)
    for r, t in recurrences:
        yield Case("linear recurrence scan fp32", f"{r}x{t}",
                   inputs=lambda r=r, t=t: {"a": 0.5 + 0.49 * torch.rand(r, t, device=device),
                                            "x": torch.randn(r, t, device=device)},
                   run=lambda mod, i: lambda: mod.linear_recurrence(i["a"], i["x"]),
                   reference=lambda i: _linear_recurrence_reference(i["a"], i["x"]),
                   atol=1e-5, rtol=1e-5, bytes=3 * r * t * 4)
