"""Cross-entropy over a large vocabulary, as the fused kernels of Liger-Kernel and
flash-attention write it: one program per row walks the vocabulary in blocks keeping an
online log-sum-exp (a running max and the sum of exponentials rescaled to it), so no row
of logits is ever held whole; targets equal to `ignore_index` contribute neither loss nor
gradient.

- forward: per-row loss (lse - logit[target]) and the row's lse, saved for
- backward: d logits = (softmax - onehot(target)) * dloss, a 2-D grid over (row, vocab
  block) recomputing softmax from the saved lse;
- fused (Liger's way, for training): a second pass over the row in the same program
  writes the gradient of the mean loss at once, so the backward is only a scaling.
"""
import torch
import triton
import triton.language as tl

from case import Case

IGNORE_INDEX = -100


@triton.jit
def cross_entropy_fwd_kernel(Logits, Target, Loss, LSE, stride, V, ignore_index, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    logits = Logits + row * stride
    target = tl.load(Target + row)
    m = float("-inf")
    d = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(logits + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        new_m = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    lse = m + tl.log(d)
    valid = target != ignore_index
    x_target = tl.load(logits + target, mask=valid, other=0.0).to(tl.float32)
    tl.store(LSE + row, lse)
    tl.store(Loss + row, tl.where(valid, lse - x_target, 0.0))


@triton.jit
def cross_entropy_bwd_kernel(Logits, DLogits, Target, LSE, DLoss, stride_x, stride_dx, V, ignore_index,
                             BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)
    mask = cols < V
    target = tl.load(Target + row)
    dloss = tl.where(target != ignore_index, tl.load(DLoss + row), 0.0)
    lse = tl.load(LSE + row)
    x = tl.load(Logits + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    grad = tl.exp(x - lse) - tl.where(cols == target, 1.0, 0.0)
    tl.store(DLogits + row * stride_dx + cols, (grad * dloss).to(DLogits.dtype.element_ty), mask=mask)


@triton.jit
def cross_entropy_fused_kernel(Logits, Grad, Target, Loss, stride_x, stride_g, V, ignore_index, n_valid,
                               BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    logits = Logits + row * stride_x
    grad_row = Grad + row * stride_g
    target = tl.load(Target + row)
    if target == ignore_index:
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            tl.store(grad_row + cols, tl.zeros([BLOCK_V], dtype=Grad.dtype.element_ty), mask=cols < V)
        tl.store(Loss + row, 0.0)
        return
    # pass 1: the row's log-sum-exp
    m = float("-inf")
    d = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(logits + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        new_m = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    lse = m + tl.log(d)
    # pass 2: the gradient of the mean loss, (softmax - onehot) / n_valid
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(logits + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        grad = (tl.exp(x - lse) - tl.where(cols == target, 1.0, 0.0)) / n_valid
        tl.store(grad_row + cols, grad.to(Grad.dtype.element_ty), mask=cols < V)
    x_target = tl.load(logits + target).to(tl.float32)
    tl.store(Loss + row, (lse - x_target) / n_valid)


MAX_BLOCK_V = 4096


def _block(V):
    return min(triton.next_power_of_2(V), MAX_BLOCK_V)


def cross_entropy_forward(logits, target, ignore_index=IGNORE_INDEX):
    """Per-row losses (0 where ignored) and the rows' log-sum-exp."""
    rows, V = logits.shape
    loss = torch.empty(rows, device=logits.device, dtype=torch.float32)
    lse = torch.empty(rows, device=logits.device, dtype=torch.float32)
    cross_entropy_fwd_kernel[(rows,)](logits, target, loss, lse, logits.stride(0), V, ignore_index,
                                      BLOCK_V=_block(V), num_warps=8)
    return loss, lse


def cross_entropy_backward(logits, target, lse, dloss, ignore_index=IGNORE_INDEX):
    rows, V = logits.shape
    dlogits = torch.empty_like(logits)
    block = _block(V)
    cross_entropy_bwd_kernel[(rows, triton.cdiv(V, block))](logits, dlogits, target, lse, dloss, logits.stride(0),
                                                           dlogits.stride(0), V, ignore_index,
                                                           BLOCK_V=block, num_warps=8)
    return dlogits


def cross_entropy_fused(logits, target, ignore_index=IGNORE_INDEX):
    """The mean loss over the rows not ignored, and its gradient with respect to logits."""
    rows, V = logits.shape
    n_valid = max(int((target != ignore_index).sum()), 1)   # Liger counts them on the host too
    loss = torch.empty(rows, device=logits.device, dtype=torch.float32)
    grad = torch.empty_like(logits)
    cross_entropy_fused_kernel[(rows,)](logits, grad, target, loss, logits.stride(0), grad.stride(0), V,
                                        ignore_index, n_valid, BLOCK_V=_block(V), num_warps=8)
    return loss.sum(), grad


def _inputs(rows, V, dtype, device):
    target = torch.randint(0, V, (rows,), device=device)
    target[torch.rand(rows, device=device) < 0.1] = IGNORE_INDEX
    return {"logits": (2 * torch.randn(rows, V, device=device)).to(dtype), "target": target,
            "dloss": torch.rand(rows, device=device) + 0.5}


def _reference_losses(i):
    x = i["logits"].double()
    loss = torch.nn.functional.cross_entropy(x, i["target"], ignore_index=IGNORE_INDEX, reduction="none")
    return loss, torch.logsumexp(x, -1)


def _reference_backward(i):
    x = i["logits"].double().requires_grad_()
    torch.nn.functional.cross_entropy(x, i["target"], ignore_index=IGNORE_INDEX, reduction="none").backward(
        i["dloss"].double())
    return x.grad


def _reference_fused(i):
    x = i["logits"].double().requires_grad_()
    loss = torch.nn.functional.cross_entropy(x, i["target"], ignore_index=IGNORE_INDEX)
    loss.backward()
    return loss.detach(), x.grad


def _with_lse(i):
    x = i["logits"].double()
    return i | {"lse": torch.logsumexp(x, -1).float()}


def cases(device, size):
    shapes = {"full": [(4096, 32000), (4096, 128256)], "quick": [(1024, 32000)], "tiny": [(9, 300), (6, 5000)]}[size]
    for dtype, rtol in ((torch.float32, 1e-5), (torch.bfloat16, 1e-2)):
        name = str(dtype).replace("torch.", "")
        for rows, V in shapes:
            moved = rows * V * dtype.itemsize
            # probabilities are about 1/V: the absolute tolerance must be far below that
            grad_atol = 1e-3 / V
            yield Case(f"cross-entropy fwd {name}", f"{rows}x{V}",
                       inputs=lambda rows=rows, V=V, dtype=dtype: _inputs(rows, V, dtype, device),
                       run=lambda m, i: lambda: m.cross_entropy_forward(i["logits"], i["target"]),
                       reference=_reference_losses, atol=1e-5, rtol=1e-5, bytes=moved)
            yield Case(f"cross-entropy bwd {name}", f"{rows}x{V}",
                       inputs=lambda rows=rows, V=V, dtype=dtype: _with_lse(_inputs(rows, V, dtype, device)),
                       run=lambda m, i: lambda: m.cross_entropy_backward(i["logits"], i["target"], i["lse"],
                                                                         i["dloss"]),
                       reference=_reference_backward, atol=grad_atol, rtol=rtol, bytes=2 * moved)
            yield Case(f"cross-entropy fused fwd+bwd {name}", f"{rows}x{V}",
                       inputs=lambda rows=rows, V=V, dtype=dtype: _inputs(rows, V, dtype, device),
                       run=lambda m, i: lambda: m.cross_entropy_fused(i["logits"], i["target"]),
                       reference=_reference_fused, atol=grad_atol / rows, rtol=rtol, bytes=3 * moved)
