"""Gated MLP activations, forward and backward, as Liger-Kernel writes them: SwiGLU
(silu(a) * b) and GeGLU with the tanh approximation of gelu (gelu_tanh(a) * b), a and
b the two halves of the up-projection. One program per row, the whole row in one block,
arithmetic in fp32; the backward recomputes the activation instead of saving it. fp16
and bf16."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from case import Case


@triton.jit
def swiglu_fwd_kernel(A, B, C, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(A + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    c = a * tl.sigmoid(a) * b
    tl.store(C + row * stride + cols, c.to(C.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_bwd_kernel(DC, A, B, DA, DB, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dc = tl.load(DC + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(A + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    sig = tl.sigmoid(a)
    silu = a * sig
    db = dc * silu
    da = dc * b * (sig + silu * (1.0 - sig))   # d silu / da = sig (1 + a (1 - sig))
    tl.store(DA + row * stride + cols, da.to(DA.dtype.element_ty), mask=mask)
    tl.store(DB + row * stride + cols, db.to(DB.dtype.element_ty), mask=mask)


@triton.jit
def geglu_fwd_kernel(A, B, C, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(A + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    sqrt_2_over_pi = 0.7978845608028654
    t = libdevice.tanh(sqrt_2_over_pi * (a + 0.044715 * a * a * a))
    c = 0.5 * a * (1.0 + t) * b
    tl.store(C + row * stride + cols, c.to(C.dtype.element_ty), mask=mask)


@triton.jit
def geglu_bwd_kernel(DC, A, B, DA, DB, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dc = tl.load(DC + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(A + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    sqrt_2_over_pi = 0.7978845608028654
    t = libdevice.tanh(sqrt_2_over_pi * (a + 0.044715 * a * a * a))
    gelu = 0.5 * a * (1.0 + t)
    db = dc * gelu
    # d gelu / da = (1 + t) / 2 + a / 2 (1 - t^2) sqrt(2 / pi) (1 + 3 * 0.044715 a^2)
    dgelu = 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * sqrt_2_over_pi * (1.0 + 0.134145 * a * a)
    da = dc * b * dgelu
    tl.store(DA + row * stride + cols, da.to(DA.dtype.element_ty), mask=mask)
    tl.store(DB + row * stride + cols, db.to(DB.dtype.element_ty), mask=mask)


def _settings(n_cols):
    """Liger's rule of thumb: the row in one block, more warps for longer rows."""
    block = triton.next_power_of_2(n_cols)
    warps = 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4
    return block, warps


def gated_forward(a, b, kind):
    assert a.shape == b.shape and a.stride() == b.stride() and a.stride(-1) == 1
    a2, b2 = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
    c = torch.empty_like(a2)
    rows, n_cols = a2.shape
    block, warps = _settings(n_cols)
    kernel = swiglu_fwd_kernel if kind == "swiglu" else geglu_fwd_kernel
    kernel[(rows,)](a2, b2, c, a2.stride(0), n_cols, BLOCK=block, num_warps=warps)
    return c.view_as(a)


def gated_backward(dc, a, b, kind):
    assert a.shape == b.shape == dc.shape and a.stride() == b.stride() == dc.stride() and a.stride(-1) == 1
    a2, b2, dc2 = (t.reshape(-1, t.shape[-1]) for t in (a, b, dc))
    da, db = torch.empty_like(a2), torch.empty_like(b2)
    rows, n_cols = a2.shape
    block, warps = _settings(n_cols)
    kernel = swiglu_bwd_kernel if kind == "swiglu" else geglu_bwd_kernel
    kernel[(rows,)](dc2, a2, b2, da, db, a2.stride(0), n_cols, BLOCK=block, num_warps=warps)
    return da.view_as(a), db.view_as(b)


def _activation(a, kind):
    if kind == "swiglu":
        return torch.nn.functional.silu(a)
    return torch.nn.functional.gelu(a, approximate="tanh")


def _reference_forward(i, kind):
    return _activation(i["a"].double(), kind) * i["b"].double()


def _reference_backward(i, kind):
    a = i["a"].double().requires_grad_()
    b = i["b"].double().requires_grad_()
    (_activation(a, kind) * b).backward(i["dc"].double())
    return a.grad, b.grad


def cases(device, size):
    shapes = {"full": [(8192, 14336), (16384, 11008), (4096, 28672)],
              "quick": [(2048, 11008)],
              "tiny": [(5, 37), (3, 300)]}[size]
    for kind in ("swiglu", "geglu"):
        for dtype, tol in ((torch.float16, 2e-3), (torch.bfloat16, 1e-2)):
            name = str(dtype).replace("torch.", "")
            for rows, cols in shapes:
                moved = rows * cols * dtype.itemsize
                yield Case(f"{kind} fwd {name}", f"{rows}x{cols}",
                           inputs=lambda rows=rows, cols=cols, dtype=dtype: {
                               t: (2 * torch.randn(rows, cols, device=device)).to(dtype) for t in ("a", "b", "dc")},
                           run=lambda m, i, kind=kind: lambda: m.gated_forward(i["a"], i["b"], kind),
                           reference=lambda i, kind=kind: _reference_forward(i, kind),
                           atol=tol, rtol=tol, bytes=3 * moved)
                yield Case(f"{kind} bwd {name}", f"{rows}x{cols}",
                           inputs=lambda rows=rows, cols=cols, dtype=dtype: {
                               t: (2 * torch.randn(rows, cols, device=device)).to(dtype) for t in ("a", "b", "dc")},
                           run=lambda m, i, kind=kind: lambda: m.gated_backward(i["dc"], i["a"], i["b"], kind),
                           reference=lambda i, kind=kind: _reference_backward(i, kind),
                           atol=tol, rtol=tol, bytes=5 * moved)
