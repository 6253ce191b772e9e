"""Row softmax, forward and backward, one program per row (the common library form;
Triton's tutorial 02 has the persistent form), fp32, fp16 and bf16 inputs."""
import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def softmax_fwd_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_bwd_kernel(dx_ptr, dy_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    dx = y * (dy - tl.sum(dy * y, axis=0))
    tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
    y = torch.empty_like(x)
    softmax_fwd_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=block, num_warps=warps)
    return y


def softmax_backward(dy, y):
    rows, cols = y.shape
    block = triton.next_power_of_2(cols)
    warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
    dx = torch.empty_like(y)
    softmax_bwd_kernel[(rows,)](dx, dy, y, y.stride(0), cols, BLOCK=block, num_warps=warps)
    return dx


def cases(device, size):
    shapes = {"full": [(4096, 4096), (8192, 1000), (32768, 512)], "quick": [(1024, 1000)], "tiny": [(5, 37)]}[size]
    for dtype, tol in ((torch.float32, 1e-6), (torch.float16, 2e-3), (torch.bfloat16, 1e-2)):
        name = str(dtype).replace("torch.", "")
        for rows, cols in shapes:
            moved = rows * cols * dtype.itemsize
            yield Case(f"softmax fwd {name}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, dtype=dtype: {
                           "x": torch.randn(rows, cols, device=device).to(dtype)},
                       run=lambda m, i: lambda: m.softmax(i["x"]),
                       reference=lambda i: torch.softmax(i["x"].double(), -1),
                       atol=tol, rtol=tol, bytes=2 * moved)
            yield Case(f"softmax bwd {name}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, dtype=dtype: {
                           "y": torch.softmax(torch.randn(rows, cols, device=device), -1).to(dtype),
                           "dy": torch.randn(rows, cols, device=device).to(dtype)},
                       run=lambda m, i: lambda: m.softmax_backward(i["dy"], i["y"]),
                       reference=lambda i: i["y"].double() * (i["dy"].double() - (
                           i["dy"].double() * i["y"].double()).sum(-1, keepdim=True)),
                       atol=tol, rtol=tol, bytes=3 * moved)
