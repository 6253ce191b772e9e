"""LayerNorm, forward and backward, as Triton's tutorial 05 and Liger-Kernel split it:

- forward: one program per row, the whole row in registers, statistics in fp32; the
  row's mean and 1/std are saved for the backward;
- backward: dx row by row, and dw, db in two steps: each program walks a contiguous share
  of the rows adding its dy * x_hat and dy into fp32 partial sums kept in registers,
  written out once (one row of partials per program), then a second kernel sums the
  partials column block by column block.

fp32, fp16 and bf16; weight and bias in the input's type."""
import torch
import triton
import triton.language as tl

from case import Case, check_with_slack, column_sum_slack


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row.to(tl.int64) * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    y = diff * rstd * w + b
    tl.store(Y + row.to(tl.int64) * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)


@triton.jit
def layer_norm_bwd_kernel(X, DY, DX, W, Mean, Rstd, DW_partial, DB_partial, stride_x, stride_dy, stride_dx,
                          M, N, rows_per_program, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)
    first = pid * rows_per_program
    last = tl.minimum(first + rows_per_program, M)
    for row in range(first, last):
        x = tl.load(X + row.to(tl.int64) * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + row.to(tl.int64) * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)
        x_hat = tl.where(mask, (x - mean) * rstd, 0.0)
        wdy = w * dy
        # dx = rstd * (w dy - mean(w dy) - x_hat * mean(w dy x_hat))
        c1 = tl.sum(x_hat * wdy, axis=0) / N
        c2 = tl.sum(wdy, axis=0) / N
        dx = (wdy - (x_hat * c1 + c2)) * rstd
        tl.store(DX + row.to(tl.int64) * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * x_hat
        db += dy
    tl.store(DW_partial + pid * N + cols, dw, mask=mask)
    tl.store(DB_partial + pid * N + cols, db, mask=mask)


@triton.jit
def layer_norm_dwdb_kernel(DW_partial, DB_partial, DW, DB, num_partials, N,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, num_partials, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < num_partials) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW_partial + offs, mask=mask, other=0.0)
        db += tl.load(DB_partial + offs, mask=mask, other=0.0)
    tl.store(DW + cols, tl.sum(dw, axis=0).to(DW.dtype.element_ty), mask=cols < N)
    tl.store(DB + cols, tl.sum(db, axis=0).to(DB.dtype.element_ty), mask=cols < N)


def _warps(block):
    return min(max(block // 256, 1), 16)


def _programs(device):
    if torch.device(device).type == "cuda":
        return 2 * torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def layer_norm(x, weight, bias, eps=1e-5):
    """y, and the (mean, rstd) the backward needs."""
    x2 = x.reshape(-1, x.shape[-1])
    M, N = x2.shape
    y = torch.empty_like(x2)
    mean = torch.empty(M, device=x.device, dtype=torch.float32)
    rstd = torch.empty(M, device=x.device, dtype=torch.float32)
    block = triton.next_power_of_2(N)
    layer_norm_fwd_kernel[(M,)](x2, y, weight, bias, mean, rstd, x2.stride(0), y.stride(0), N, eps,
                                BLOCK_N=block, num_warps=_warps(block))
    return y.view_as(x), mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd):
    x2 = x.reshape(-1, x.shape[-1])
    dy2 = dy.reshape(-1, dy.shape[-1])
    M, N = x2.shape
    dx = torch.empty_like(x2)
    programs = min(_programs(x.device), M)
    rows_per_program = triton.cdiv(M, programs)
    dw_partial = torch.empty(programs, N, device=x.device, dtype=torch.float32)
    db_partial = torch.empty(programs, N, device=x.device, dtype=torch.float32)
    block = triton.next_power_of_2(N)
    layer_norm_bwd_kernel[(programs,)](x2, dy2, dx, weight, mean, rstd, dw_partial, db_partial,
                                       x2.stride(0), dy2.stride(0), dx.stride(0), M, N, rows_per_program,
                                       BLOCK_N=block, num_warps=_warps(block))
    dw = torch.empty_like(weight)
    db = torch.empty_like(weight)
    layer_norm_dwdb_kernel[(triton.cdiv(N, 128),)](dw_partial, db_partial, dw, db, programs, N,
                                                   BLOCK_M=32, BLOCK_N=128)
    return dx.view_as(x), dw, db


def _reference_forward(x, w, b, eps=1e-5):
    return torch.nn.functional.layer_norm(x.double(), (x.shape[-1],), w.double(), b.double(), eps)


def _reference_backward(i):
    x = i["x"].double().requires_grad_()
    w = i["w"].double().requires_grad_()
    b = i["b"].double().requires_grad_()
    torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5).backward(i["dy"].double())
    return x.grad, w.grad, b.grad


def _check_backward(result, i, atol, rtol):
    """dx within atol + rtol |want|; dw and db (column sums over every row) within that
    plus the rounding of an fp32 sum over the rows (`case.column_sum_slack`)."""
    dy = i["dy"].double()
    x_hat = (i["x"].double() - i["mean"].double()[:, None]) * i["rstd"].double()[:, None]
    slack = (0.0, column_sum_slack(dy * x_hat), column_sum_slack(dy))
    return check_with_slack(result, _reference_backward(i), slack, atol, rtol)


def _inputs(M, N, dtype, device):
    x = (torch.randn(M, N, device=device) * 2 + 0.5).to(dtype)
    w = (1 + 0.5 * torch.randn(N, device=device)).to(dtype)
    b = (0.5 * torch.randn(N, device=device)).to(dtype)
    dy = torch.randn(M, N, device=device).to(dtype)
    return {"x": x, "w": w, "b": b, "dy": dy}


def _saved(i):
    """mean and rstd as the forward saves them (for the backward's inputs)."""
    x = i["x"].double()
    var = x.var(-1, unbiased=False)
    return x.mean(-1).float(), (1.0 / torch.sqrt(var + 1e-5)).float()


def cases(device, size):
    shapes = {"full": [(8192, 4096), (16384, 1024), (8192, 5120), (32768, 1000)],
              "quick": [(2048, 1000)],
              "tiny": [(7, 37), (33, 100)]}[size]
    # inputs are exact in their type: the error is the output's rounding and fp32 arithmetic
    dtypes = ((torch.float32, 1e-5, 1e-5), (torch.float16, 2e-3, 2e-3), (torch.bfloat16, 1e-2, 1e-2))
    for dtype, atol, rtol in dtypes:
        name = str(dtype).replace("torch.", "")
        for M, N in shapes:
            moved = M * N * dtype.itemsize
            yield Case(f"layernorm fwd {name}", f"{M}x{N}",
                       inputs=lambda M=M, N=N, dtype=dtype: _inputs(M, N, dtype, device),
                       run=lambda m, i: lambda: m.layer_norm(i["x"], i["w"], i["b"])[0],
                       reference=lambda i: _reference_forward(i["x"], i["w"], i["b"]),
                       atol=atol, rtol=rtol, bytes=2 * moved)
            yield Case(f"layernorm bwd {name}", f"{M}x{N}",
                       inputs=lambda M=M, N=N, dtype=dtype: (lambda i: i | dict(zip(("mean", "rstd"), _saved(i))))(
                           _inputs(M, N, dtype, device)),
                       run=lambda m, i: lambda: m.layer_norm_backward(i["dy"], i["x"], i["w"], i["mean"], i["rstd"]),
                       check=lambda result, i, atol=atol, rtol=rtol: _check_backward(result, i, atol, rtol),
                       bytes=3 * moved)
