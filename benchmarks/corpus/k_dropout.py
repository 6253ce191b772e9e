"""Seeded dropout, as in Triton's tutorial 04: each element's random number is
tl.rand(seed, its offset), so no mask is stored and the backward pass can draw it again;
and a transformer block's fused bias add + dropout + residual add,
out = residual + dropout(x + bias). fp32 and fp16.

The random bits are not torch's, so the host cannot rebuild the mask: the checks look at
what any correct dropout gives. Every output is either dropped (0, or the residual alone)
or kept (x / (1 - p), or the residual plus it, to the division's and the dtype's rounding);
the fraction dropped is p within a few standard deviations; and neighbouring rows do not
share one mask (which a kernel drawing its numbers from the column alone would give)."""
import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    out = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def bias_dropout_residual_kernel(x_ptr, bias_ptr, residual_ptr, out_ptr, N, stride, p, seed, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    offsets = row.to(tl.int64) * stride + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    residual = tl.load(residual_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    keep = tl.rand(seed, row * N + cols) > p  # one number per element of the tensor
    y = tl.where(keep, (x + bias) / (1 - p), 0.0)
    tl.store(out_ptr + offsets, (residual + y).to(out_ptr.dtype.element_ty), mask=mask)


# ----------------------------------------------------------------------------- host wrappers

def dropout(x, p, seed):
    out = torch.empty_like(x)
    n = x.numel()
    dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK=1024)
    return out


def bias_dropout_residual(x, bias, residual, p, seed):
    M, N = x.shape
    out = torch.empty_like(x)
    block = min(triton.next_power_of_2(N), 2048)
    bias_dropout_residual_kernel[(M, triton.cdiv(N, block))](x, bias, residual, out, N, x.stride(0), p, seed,
                                                              BLOCK_N=block, num_warps=4 if block <= 1024 else 8)
    return out


# ----------------------------------------------------------------------------- checks

def _keep_scale(p):
    """1 / (1 - p) with 1 - p computed in fp32, as the kernels do with their fp32 p."""
    one = torch.tensor(1.0, dtype=torch.float32)
    return 1.0 / float(one - torch.tensor(p, dtype=torch.float32))


# fp32: the GPU's division is within 2 ulp; fp16: the fp32 result is then rounded once more
# (to half an fp16 ulp, a fixed 2^-25 below fp16's normal range)
RTOL = {torch.float32: 4e-7, torch.float16: 5e-4}
ATOL = {torch.float32: 0.0, torch.float16: 2.0 ** -25}


def _check_statistics(dropped, p, where):
    """dropped: a boolean [rows, cols] tensor of the elements judged dropped."""
    n = dropped.numel()
    fraction = dropped.double().mean().item()
    spread = 6 * (p * (1 - p) / n) ** 0.5 + 1e-3
    if abs(fraction - p) > spread:
        return f"{where}: {fraction:.4f} of the elements dropped, expected {p} +- {spread:.4f}"
    if dropped.shape[0] > 1:
        same = (dropped[1:] == dropped[:-1]).double().mean().item()
        expected = p * p + (1 - p) * (1 - p)
        if abs(same - expected) > spread + 6 * (expected * (1 - expected) / n) ** 0.5:
            return f"{where}: neighbouring rows agree on {same:.4f} of their mask, expected {expected:.4f}"
    return None


def _check_dropout(result, inputs, p):
    x, out = inputs["x"].double().flatten(), result.double().flatten()
    kept = x * _keep_scale(p)
    dropped = out == 0  # (an x of 0 counts as dropped either way: a handful at most)
    dtype = inputs["x"].dtype
    wrong = ~dropped & ((out - kept).abs() > RTOL[dtype] * kept.abs() + ATOL[dtype])
    if wrong.any():
        i = int(wrong.nonzero()[0])
        return (f"{int(wrong.sum())} outputs neither 0 nor x / (1 - p), e.g. {out[i]:.8g} for x = {x[i]:.8g} "
                f"(x / (1 - p) = {kept[i]:.8g})")
    rows = x.numel() // 1024  # rows of 1024: the blocks of the kernel, which must draw different numbers
    return _check_statistics(dropped[:rows * 1024].reshape(rows, 1024), p, "dropout")


def _check_bias_dropout_residual(result, inputs, p):
    dtype = inputs["x"].dtype
    x, bias, residual = inputs["x"].double(), inputs["bias"].double(), inputs["residual"].double()
    out = result.double()
    y = (x + bias) * _keep_scale(p)
    tolerance = RTOL[dtype] * 2 * (residual.abs() + y.abs()) + ATOL[dtype]
    is_kept = (out - (residual + y)).abs() <= tolerance
    is_dropped = (out - residual).abs() <= tolerance
    if not (is_kept | is_dropped).all():
        i = int((~(is_kept | is_dropped)).flatten().nonzero()[0])
        return (f"{int((~(is_kept | is_dropped)).sum())} outputs neither the residual nor residual + (x + bias) / "
                f"(1 - p), e.g. {out.flatten()[i]:.8g} for residual {residual.flatten()[i]:.8g}, kept "
                f"{(residual + y).flatten()[i]:.8g}")
    if (is_kept & is_dropped).double().mean() > 0.01:
        return "too many outputs where kept and dropped cannot be told apart"
    return _check_statistics(is_dropped & ~is_kept, p, "bias + dropout + residual")


def cases(device, size):
    ns = {"full": [1 << 26], "quick": [1 << 20], "tiny": [10007]}[size]
    shapes = {"full": [(16384, 4096)], "quick": [(1024, 1000)], "tiny": [(37, 300)]}[size]
    for dtype in (torch.float32, torch.float16):
        name = str(dtype).replace("torch.", "")
        item = dtype.itemsize
        for n in ns:
            yield Case(f"dropout p=0.25 {name}", f"n={n}",
                       inputs=lambda n=n, dtype=dtype: {"x": torch.randn(n, device=device).to(dtype)},
                       run=lambda m, i: lambda: m.dropout(i["x"], 0.25, seed=1234),
                       check=lambda result, i: _check_dropout(result, i, 0.25), bytes=2 * n * item)
        for rows, cols in shapes:
            yield Case(f"bias + dropout p=0.1 + residual {name}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, dtype=dtype: {
                           "x": torch.randn(rows, cols, device=device).to(dtype),
                           "bias": torch.randn(cols, device=device).to(dtype),
                           "residual": torch.randn(rows, cols, device=device).to(dtype)},
                       run=lambda m, i: lambda: m.bias_dropout_residual(i["x"], i["bias"], i["residual"], 0.1, seed=42),
                       check=lambda result, i: _check_bias_dropout_residual(result, i, 0.1),
                       bytes=3 * rows * cols * item)
