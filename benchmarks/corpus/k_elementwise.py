"""Elementwise kernels: vector add, axpy, activations through libdevice (GELU with erf and
with tanh, Mish, a focal-loss term with exp/log1p/pow), a fused bias + GELU over a 2-D
tensor, SwiGLU's silu(a) * b; fp32, fp16 and bf16, computed in fp32 where the inputs are
narrower. Bandwidth-bound at the full shapes (2^26 elements); every size is masked."""
import math

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from case import Case


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (alpha * x + y).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _gelu_erf(x):
    return 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))


@triton.jit
def _gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + libdevice.tanh(inner))


@triton.jit
def activation_kernel(x_ptr, out_ptr, n, ACTIVATION: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if ACTIVATION == "gelu":
        y = _gelu_erf(x)
    elif ACTIVATION == "gelu_tanh":
        y = _gelu_tanh(x)
    else:  # mish: x * tanh(softplus(x)), softplus linear above 20 as torch's is
        softplus = tl.where(x > 20.0, x, libdevice.log1p(tl.exp(x)))
        y = x * libdevice.tanh(softplus)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def focal_loss_kernel(logits_ptr, target_ptr, out_ptr, n, alpha, gamma, BLOCK: tl.constexpr):
    """Sigmoid focal loss per element: alpha_t * (1 - p_t)^gamma * BCE-with-logits."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(logits_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    t = tl.load(target_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    p = 1.0 / (1.0 + tl.exp(-x))
    ce = tl.maximum(x, 0.0) - x * t + libdevice.log1p(tl.exp(-tl.abs(x)))
    p_t = p * t + (1.0 - p) * (1.0 - t)
    alpha_t = alpha * t + (1.0 - alpha) * (1.0 - t)
    loss = alpha_t * libdevice.pow(1.0 - p_t, gamma) * ce
    tl.store(out_ptr + offs, loss.to(out_ptr.dtype.element_ty), mask=mask)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 256}, num_warps=4),
        triton.Config({"BLOCK_M": 8, "BLOCK_N": 512}, num_warps=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 128}, num_warps=8),
    ],
    key=["N"],
)
@triton.jit
def bias_gelu_kernel(x_ptr, bias_ptr, out_ptr, M, N, stride_x, stride_out,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    mask = (rows[:, None] < M) & col_mask[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    y = _gelu_erf(x + b[None, :])
    tl.store(out_ptr + rows[:, None] * stride_out + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def silu_mul_kernel(a_ptr, b_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + row * stride + cols, mask=mask, other=0.0)
    silu = a * tl.sigmoid(a)
    tl.store(out_ptr + row * stride + cols, (silu * b).to(out_ptr.dtype.element_ty), mask=mask)


# ----------------------------------------------------------------------------- host wrappers

def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


def axpy(alpha, x, y):
    out = torch.empty_like(y)
    n = x.numel()
    axpy_kernel[(triton.cdiv(n, 1024),)](x, y, out, alpha, n, BLOCK=1024)
    return out


def activation(x, name):
    out = torch.empty_like(x)
    n = x.numel()
    activation_kernel[(triton.cdiv(n, 1024),)](x, out, n, ACTIVATION=name, BLOCK=1024)
    return out


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    out = torch.empty_like(logits)
    n = logits.numel()
    focal_loss_kernel[(triton.cdiv(n, 1024),)](logits, targets, out, n, alpha, gamma, BLOCK=1024)
    return out


def bias_gelu(x, bias):
    M, N = x.shape
    out = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    bias_gelu_kernel[grid](x, bias, out, M, N, x.stride(0), out.stride(0))
    return out


def silu_mul(a, b):
    rows, cols = a.shape
    out = torch.empty_like(a)
    block = min(triton.next_power_of_2(cols), 4096)
    silu_mul_kernel[(rows, triton.cdiv(cols, block))](a, b, out, cols, a.stride(0), BLOCK=block,
                                                        num_warps=4 if block <= 1024 else 8)
    return out


# ----------------------------------------------------------------------------- references

def _gelu_ref(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _gelu_tanh_ref(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def _mish_ref(x):
    return x * torch.tanh(torch.nn.functional.softplus(x))


def _focal_ref(x, t, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(x)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none")
    p_t = p * t + (1 - p) * (1 - t)
    return (alpha * t + (1 - alpha) * (1 - t)) * (1 - p_t) ** gamma * ce


# Relative rounding of one result to the dtype (half an ulp), and the tolerance of a
# chain of fp32 operations rounded to the dtype at the end.
UNIT = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
CHAIN = {torch.float32: (1e-6, 1e-5), torch.float16: (1e-5, 1.5e-3), torch.bfloat16: (1e-4, 1e-2)}  # atol, rtol


def cases(device, size):
    ns = {"full": [1 << 26], "quick": [1_000_003], "tiny": [1237]}[size]
    odd = {"full": [(1 << 26) - 17], "quick": [], "tiny": [77]}[size]
    matrices = {"full": [(16384, 4096)], "quick": [(1024, 1000)], "tiny": [(7, 300)]}[size]

    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        name = str(dtype).replace("torch.", "")
        item = dtype.itemsize
        atol, rtol = CHAIN[dtype]
        vector = lambda n, dtype=dtype: torch.randn(n, device=device).to(dtype)
        for n in ns + (odd if dtype == torch.float32 else []):
            yield Case(f"add {name}", f"n={n}",
                       inputs=lambda n=n, vector=vector: {"x": vector(n), "y": vector(n)},
                       run=lambda m, i: lambda: m.add(i["x"], i["y"]),
                       reference=lambda i: i["x"].double() + i["y"].double(),
                       atol=0.0, rtol=UNIT[dtype], bytes=3 * n * item)
        for n in ns:
            yield Case(f"axpy {name}", f"n={n}",
                       inputs=lambda n=n, vector=vector: {"x": vector(n), "y": vector(n)},
                       run=lambda m, i: lambda: m.axpy(1.75, i["x"], i["y"]),
                       reference=lambda i: 1.75 * i["x"].double() + i["y"].double(),
                       atol=atol, rtol=rtol, bytes=3 * n * item)
            for act, ref in (("gelu", _gelu_ref), ("gelu_tanh", _gelu_tanh_ref), ("mish", _mish_ref)):
                yield Case(f"{act} {name}", f"n={n}",
                           inputs=lambda n=n, vector=vector: {"x": 3 * vector(n)},
                           run=lambda m, i, act=act: lambda: m.activation(i["x"], act),
                           reference=lambda i, ref=ref: ref(i["x"].double()),
                           atol=atol, rtol=rtol, bytes=2 * n * item)
            yield Case(f"focal loss {name}", f"n={n}",
                       inputs=lambda n=n, vector=vector, dtype=dtype: {
                           "x": 2 * vector(n), "t": (torch.rand(n, device=device) < 0.3).to(dtype)},
                       run=lambda m, i: lambda: m.sigmoid_focal_loss(i["x"], i["t"]),
                       reference=lambda i: _focal_ref(i["x"].double(), i["t"].double()),
                       atol=atol, rtol=rtol, bytes=3 * n * item)
        for rows, cols in matrices:
            yield Case(f"bias+gelu {name}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, dtype=dtype: {
                           "x": torch.randn(rows, cols, device=device).to(dtype),
                           "b": torch.randn(cols, device=device).to(dtype)},
                       run=lambda m, i: lambda: m.bias_gelu(i["x"], i["b"]),
                       reference=lambda i: _gelu_ref(i["x"].double() + i["b"].double()),
                       atol=atol, rtol=rtol, bytes=2 * rows * cols * item)
            yield Case(f"silu*mul {name}", f"{rows}x{cols}",
                       inputs=lambda rows=rows, cols=cols, dtype=dtype: {
                           "a": torch.randn(rows, cols, device=device).to(dtype),
                           "b": torch.randn(rows, cols, device=device).to(dtype)},
                       run=lambda m, i: lambda: m.silu_mul(i["a"], i["b"]),
                       reference=lambda i: torch.nn.functional.silu(i["a"].double()) * i["b"].double(),
                       atol=atol, rtol=rtol, bytes=3 * rows * cols * item)
