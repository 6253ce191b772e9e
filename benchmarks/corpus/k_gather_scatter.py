"""Gathers and scatters by index: an embedding lookup (rows of a table gathered by token
id, fp32 and fp16), its backward (rows of the gradient added into the table's gradient
with fp32 atomics, skipping the padding id, as torch's padding_idx does), index_select
along columns (out[:, j] = x[:, index[j]]), and tl.gather inside a block (each row of a
tile permuted by its own indices: torch.gather(x, 1, index) for rows that fit a block)."""
import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, T, D, stride_weight, stride_out,
                     BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    token_mask = tokens < T
    mask = token_mask[:, None] & (cols[None, :] < D)
    ids = tl.load(ids_ptr + tokens, mask=token_mask, other=0)
    rows = tl.load(weight_ptr + ids[:, None] * stride_weight + cols[None, :], mask=mask)
    tl.store(out_ptr + tokens.to(tl.int64)[:, None] * stride_out + cols[None, :], rows, mask=mask)


@triton.jit
def embedding_backward_kernel(ids_ptr, grad_out_ptr, grad_weight_ptr, T, D, padding_idx, stride_grad_out,
                              stride_grad_weight, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    token_mask = tokens < T
    ids = tl.load(ids_ptr + tokens, mask=token_mask, other=0)
    mask = (token_mask & (ids != padding_idx))[:, None] & (cols[None, :] < D)
    grad = tl.load(grad_out_ptr + tokens.to(tl.int64)[:, None] * stride_grad_out + cols[None, :], mask=mask,
                   other=0.0)
    tl.atomic_add(grad_weight_ptr + ids[:, None] * stride_grad_weight + cols[None, :], grad, mask=mask,
                  sem="relaxed")


@triton.jit
def index_select_cols_kernel(x_ptr, index_ptr, out_ptr, M, K, stride_x, stride_out,
                             BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    k_mask = ks < K
    mask = (rows[:, None] < M) & k_mask[None, :]
    cols = tl.load(index_ptr + ks, mask=k_mask, other=0)
    rows64 = rows.to(tl.int64)[:, None]
    values = tl.load(x_ptr + rows64 * stride_x + cols[None, :], mask=mask)
    tl.store(out_ptr + rows64 * stride_out + ks[None, :], values, mask=mask)


@triton.jit
def gather_rows_kernel(x_ptr, index_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offsets = rows.to(tl.int64)[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    index = tl.load(index_ptr + offsets, mask=mask, other=0)  # padding reads column 0
    tl.store(out_ptr + offsets, tl.gather(x, index, axis=1), mask=mask)


# ----------------------------------------------------------------------------- host wrappers

def embedding(ids, weight):
    T, D = ids.numel(), weight.shape[1]
    out = torch.empty(T, D, device=weight.device, dtype=weight.dtype)
    block_d = min(triton.next_power_of_2(D), 512)
    grid = (triton.cdiv(T, 8), triton.cdiv(D, block_d))
    embedding_kernel[grid](ids, weight, out, T, D, weight.stride(0), out.stride(0), BLOCK_T=8, BLOCK_D=block_d)
    return out


def embedding_backward(ids, grad_out, num_embeddings, padding_idx=-1):
    T, D = grad_out.shape
    grad_weight = torch.zeros(num_embeddings, D, device=grad_out.device, dtype=torch.float32)
    block_d = min(triton.next_power_of_2(D), 512)
    grid = (triton.cdiv(T, 8), triton.cdiv(D, block_d))
    embedding_backward_kernel[grid](ids, grad_out, grad_weight, T, D, padding_idx, grad_out.stride(0),
                                    grad_weight.stride(0), BLOCK_T=8, BLOCK_D=block_d)
    return grad_weight


def index_select_cols(x, index):
    M, K = x.shape[0], index.numel()
    out = torch.empty(M, K, device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, 32), triton.cdiv(K, 128))
    index_select_cols_kernel[grid](x, index, out, M, K, x.stride(0), out.stride(0), BLOCK_M=32, BLOCK_K=128)
    return out


def gather_rows(x, index):
    """torch.gather(x, 1, index) for index of x's shape."""
    M, N = x.shape
    out = torch.empty_like(x)
    block_n = triton.next_power_of_2(N)
    block_m = max(1, 4096 // block_n)
    gather_rows_kernel[(triton.cdiv(M, block_m),)](x, index, out, M, N, x.stride(0), BLOCK_M=block_m,
                                                   BLOCK_N=block_n)
    return out


def _embedding_backward_reference(ids, grad_out, num_embeddings, padding_idx):
    keep = ids != padding_idx
    grad_weight = torch.zeros(num_embeddings, grad_out.shape[1], device=grad_out.device, dtype=torch.float64)
    return grad_weight.index_add(0, ids[keep], grad_out[keep].double())


def cases(device, size):
    embeddings = {"full": [(16384, 32000, 4096)], "quick": [(2048, 32000, 1024)], "tiny": [(37, 50, 45)]}[size]
    selects = {"full": [(4096, 8192, 4096)], "quick": [(1024, 1000, 500)], "tiny": [(13, 40, 21)]}[size]
    gathers = {"full": [(16384, 1024)], "quick": [(1024, 1000)], "tiny": [(5, 37)]}[size]
    for t, v, d in embeddings:
        for dtype in (torch.float32, torch.float16):
            name = str(dtype).replace("torch.", "")
            yield Case(f"embedding {name}", f"{t} ids into {v}x{d}",
                       inputs=lambda t=t, v=v, d=d, dtype=dtype: {
                           "ids": torch.randint(0, v, (t,), device=device),
                           "weight": torch.randn(v, d, device=device).to(dtype)},
                       run=lambda m, i: lambda: m.embedding(i["ids"], i["weight"]),
                       reference=lambda i: i["weight"][i["ids"]].double(),
                       atol=0, rtol=0, bytes=2 * t * d * dtype.itemsize + 8 * t)
        # ids drawn from a quarter of the table: repeated ids make atomics meet
        yield Case("embedding backward fp32 atomics", f"{t} ids into {v}x{d}",
                   inputs=lambda t=t, v=v, d=d: {"ids": torch.randint(0, max(2, v // 4), (t,), device=device),
                                                 "grad_out": torch.randn(t, d, device=device)},
                   run=lambda m, i, v=v: lambda: m.embedding_backward(i["ids"], i["grad_out"], v, padding_idx=1),
                   reference=lambda i, v=v: _embedding_backward_reference(i["ids"], i["grad_out"], v, 1),
                   atol=1e-5, rtol=1e-5, bytes=t * d * 4 + 8 * t + 2 * v * d * 4)
    for m, n, k in selects:
        for dtype in (torch.float32, torch.float16):
            name = str(dtype).replace("torch.", "")
            yield Case(f"index_select columns {name}", f"{m}x{n} -> {m}x{k}",
                       inputs=lambda m=m, n=n, k=k, dtype=dtype: {
                           "x": torch.randn(m, n, device=device).to(dtype),
                           "index": torch.randint(0, n, (k,), device=device)},
                       run=lambda mod, i: lambda: mod.index_select_cols(i["x"], i["index"]),
                       reference=lambda i: i["x"].index_select(1, i["index"]).double(),
                       atol=0, rtol=0, bytes=2 * m * k * dtype.itemsize + 8 * k)
    for m, n in gathers:
        yield Case("tl.gather within rows fp32", f"{m}x{n}",
                   inputs=lambda m=m, n=n: {"x": torch.randn(m, n, device=device),
                                            "index": torch.randint(0, n, (m, n), device=device, dtype=torch.int32)},
                   run=lambda mod, i: lambda: mod.gather_rows(i["x"], i["index"]),
                   reference=lambda i: torch.gather(i["x"], 1, i["index"].long()).double(),
                   atol=0, rtol=0, bytes=3 * m * n * 4)
