"""RMSNorm, forward and backward, as Liger-Kernel and unsloth write it: one program per row
for the forward (statistics in fp32, 1/rms saved); the backward gives each program a
contiguous share of the rows, writes dx row by row and keeps its share of dw in fp32
registers, one row of partials per program, which the host sums (`partials.sum(0)`, as
Liger does). y = x / rms(x) * (offset + w); offset is 0 (Llama) or 1 (Gemma)."""
import torch
import triton
import triton.language as tl

from case import Case, check_with_slack, column_sum_slack


@triton.jit
def rms_norm_fwd_kernel(X, Y, W, Rstd, stride_x, stride_y, N, eps, offset, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    tl.store(Rstd + row, rstd)
    y = x * rstd * (offset + w)
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def rms_norm_bwd_kernel(X, DY, DX, W, Rstd, DW_partial, stride_x, stride_dy, stride_dx, stride_dw,
                        M, N, offset, rows_per_program, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32) + offset
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    first = pid * rows_per_program
    last = tl.minimum(first + rows_per_program, M)
    for row in range(first, last):
        row64 = row.to(tl.int64)
        x = tl.load(X + row64 * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + row64 * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(Rstd + row)
        x_hat = x * rstd
        wdy = w * dy
        # dx = rstd * (w dy - x_hat * mean(w dy x_hat))
        dx = rstd * (wdy - x_hat * (tl.sum(wdy * x_hat, axis=0) / N))
        tl.store(DX + row64 * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * x_hat
    tl.store(DW_partial + pid * stride_dw + cols, dw, mask=mask)


def _warps(block):
    return min(max(block // 256, 1), 16)


def rms_norm(x, weight, eps=1e-6, offset=0.0):
    """y and the saved 1/rms per row."""
    x2 = x.reshape(-1, x.shape[-1])
    M, N = x2.shape
    y = torch.empty_like(x2)
    rstd = torch.empty(M, device=x.device, dtype=torch.float32)
    block = triton.next_power_of_2(N)
    rms_norm_fwd_kernel[(M,)](x2, y, weight, rstd, x2.stride(0), y.stride(0), N, eps, offset,
                              BLOCK_N=block, num_warps=_warps(block))
    return y.view_as(x), rstd


def rms_norm_backward(dy, x, weight, rstd, offset=0.0):
    x2 = x.reshape(-1, x.shape[-1])
    dy2 = dy.reshape(-1, dy.shape[-1])
    M, N = x2.shape
    if x.device.type == "cuda":
        programs = torch.cuda.get_device_properties(x.device).multi_processor_count
    else:
        programs = 4
    programs = min(programs, M)
    dx = torch.empty_like(x2)
    dw_partial = torch.empty(programs, N, device=x.device, dtype=torch.float32)
    block = triton.next_power_of_2(N)
    rms_norm_bwd_kernel[(programs,)](x2, dy2, dx, weight, rstd, dw_partial, x2.stride(0), dy2.stride(0),
                                     dx.stride(0), dw_partial.stride(0), M, N, offset, triton.cdiv(M, programs),
                                     BLOCK_N=block, num_warps=_warps(block))
    return dx.view_as(x), dw_partial.sum(0).to(weight.dtype)


def _reference(x, w, offset, eps=1e-6):
    x = x.double()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (offset + w.double())


def _reference_backward(i, offset):
    x = i["x"].double().requires_grad_()
    w = i["w"].double().requires_grad_()
    _reference(x, w, offset).backward(i["dy"].double())
    return x.grad, w.grad


def _check_backward(result, i, offset, atol, rtol):
    """dx within atol + rtol |want|; dw (a column sum over every row) within that plus
    the rounding of an fp32 sum over the rows (`case.column_sum_slack`)."""
    x_hat = i["x"].double() * i["rstd"].double()[:, None]
    slack = (0.0, column_sum_slack(i["dy"].double() * x_hat))
    return check_with_slack(result, _reference_backward(i, offset), slack, atol, rtol)


def _inputs(M, N, dtype, device, offset):
    x = torch.randn(M, N, device=device).to(dtype)
    w = ((0.0 if offset else 1.0) + 0.5 * torch.randn(N, device=device)).to(dtype)
    dy = torch.randn(M, N, device=device).to(dtype)
    rstd = torch.rsqrt(x.double().pow(2).mean(-1) + 1e-6).float()
    return {"x": x, "w": w, "dy": dy, "rstd": rstd}


def cases(device, size):
    shapes = {"full": [(8192, 4096), (16384, 2048), (4096, 8192), (16384, 5120)],
              "quick": [(2048, 4096)],
              "tiny": [(9, 64), (17, 100)]}[size]
    dtypes = ((torch.float32, 1e-5, 1e-5), (torch.float16, 2e-3, 2e-3), (torch.bfloat16, 1e-2, 1e-2))
    for dtype, atol, rtol in dtypes:
        name = str(dtype).replace("torch.", "")
        for M, N in shapes:
            offset = 1.0 if (M, N) == shapes[-1] else 0.0   # the last shape Gemma's way
            label = " (offset 1)" if offset else ""
            moved = M * N * dtype.itemsize
            yield Case(f"rmsnorm fwd {name}{label}", f"{M}x{N}",
                       inputs=lambda M=M, N=N, dtype=dtype, offset=offset: _inputs(M, N, dtype, device, offset),
                       run=lambda m, i, offset=offset: lambda: m.rms_norm(i["x"], i["w"], offset=offset)[0],
                       reference=lambda i, offset=offset: _reference(i["x"], i["w"], offset),
                       atol=atol, rtol=rtol, bytes=2 * moved)
            yield Case(f"rmsnorm bwd {name}{label}", f"{M}x{N}",
                       inputs=lambda M=M, N=N, dtype=dtype, offset=offset: _inputs(M, N, dtype, device, offset),
                       run=lambda m, i, offset=offset: lambda: m.rms_norm_backward(
                           i["dy"], i["x"], i["w"], i["rstd"], offset=offset),
                       check=lambda result, i, offset=offset, atol=atol, rtol=rtol: _check_backward(
                           result, i, offset, atol, rtol),
                       bytes=3 * moved)
