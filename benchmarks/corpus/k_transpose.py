"""Transposes through registers: a 2-D transpose of tiles with tl.trans (autotuned tile
sizes), and a 3-D permute with tl.permute, an image's HWC layout to CHW
(y[c, h, w] = x[h, w, c]); fp32 and fp16, masked edges."""
import torch
import triton
import triton.language as tl

from case import Case


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8),
    ],
    key=["M", "N"],
)
@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(x_ptr + rows.to(tl.int64)[:, None] * stride_x + cols[None, :], mask=mask)
    # y[cols, rows] = x[rows, cols]: the stores run along y's contiguous rows
    tl.store(y_ptr + cols.to(tl.int64)[:, None] * stride_y + rows[None, :], tl.trans(tile),
             mask=(cols[:, None] < N) & (rows[None, :] < M))


@triton.jit
def hwc_to_chw_kernel(x_ptr, y_ptr, H, W, C, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr, BLOCK_C: tl.constexpr):
    h = tl.program_id(0) * BLOCK_H + tl.arange(0, BLOCK_H)
    w = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)
    c = tl.program_id(2) * BLOCK_C + tl.arange(0, BLOCK_C)
    h3 = h.to(tl.int64)[:, None, None]
    w3 = w[None, :, None]
    c3 = c[None, None, :]
    mask = (h3 < H) & (w3 < W) & (c3 < C)
    tile = tl.load(x_ptr + (h3 * W + w3) * C + c3, mask=mask)         # [BLOCK_H, BLOCK_W, BLOCK_C]
    out = tl.permute(tile, (2, 0, 1))                                   # [BLOCK_C, BLOCK_H, BLOCK_W]
    c_out = c.to(tl.int64)[:, None, None]
    h_out = h[None, :, None]
    w_out = w[None, None, :]
    out_mask = (c_out < C) & (h_out < H) & (w_out < W)
    tl.store(y_ptr + (c_out * H + h_out) * W + w_out, out, mask=out_mask)


# ----------------------------------------------------------------------------- host wrappers

def transpose(x):
    M, N = x.shape
    y = torch.empty(N, M, device=x.device, dtype=x.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    transpose_kernel[grid](x, y, M, N, x.stride(0), y.stride(0))
    return y


def hwc_to_chw(x):
    H, W, C = x.shape
    y = torch.empty(C, H, W, device=x.device, dtype=x.dtype)
    block_c = min(triton.next_power_of_2(C), 32)
    grid = (triton.cdiv(H, 4), triton.cdiv(W, 32), triton.cdiv(C, block_c))
    hwc_to_chw_kernel[grid](x, y, H, W, C, BLOCK_H=4, BLOCK_W=32, BLOCK_C=block_c)
    return y


def cases(device, size):
    matrices = {"full": [(8192, 8192), (5000, 7001)], "quick": [(1000, 777)], "tiny": [(37, 50)]}[size]
    images = {"full": [(1024, 1024, 64), (2048, 2048, 3)], "quick": [(256, 200, 48)], "tiny": [(5, 40, 12)]}[size]
    for dtype in (torch.float32, torch.float16):
        name = str(dtype).replace("torch.", "")
        for m, n in matrices:
            yield Case(f"transpose 2-D {name}", f"{m}x{n}",
                       inputs=lambda m=m, n=n, dtype=dtype: {"x": torch.randn(m, n, device=device).to(dtype)},
                       run=lambda mod, i: lambda: mod.transpose(i["x"]),
                       reference=lambda i: i["x"].t().double(),
                       atol=0, rtol=0, bytes=2 * m * n * dtype.itemsize)
        for h, w, c in images:
            yield Case(f"permute HWC -> CHW {name}", f"{h}x{w}x{c}",
                       inputs=lambda h=h, w=w, c=c, dtype=dtype: {"x": torch.randn(h, w, c, device=device).to(dtype)},
                       run=lambda mod, i: lambda: mod.hwc_to_chw(i["x"]),
                       reference=lambda i: i["x"].permute(2, 0, 1).double(),
                       atol=0, rtol=0, bytes=2 * h * w * c * dtype.itemsize)
