"""Batched matmul, C[b] = A[b] @ B[b], with the batch as the grid's second dimension and
the tiles of one product, grouped for L2 reuse, along the first; strides for every
dimension, so B may be given transposed ([batch, N, K], as in attention's Q @ K^T).
fp16 and bf16, batch 16 to 64."""
import torch
import triton
import triton.language as tl

from case import Case


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
               stride_ab, stride_am, stride_ak,
               stride_bb, stride_bk, stride_bn,
               stride_cb, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    a_ptr += batch * stride_ab
    b_ptr += batch * stride_bb
    c_ptr += batch * stride_cb

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def bmm(a, b):
    """a [batch, M, K] @ b [batch, K, N] (any strides) -> c [batch, M, N] of a's type."""
    batch, M, K = a.shape
    N = b.shape[2]
    c = torch.empty((batch, M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), batch)
    bmm_kernel[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride())
    return c


def cases(device, size):
    shapes = {
        "full": [(16, 2048, 2048, 2048), (64, 512, 512, 512), (32, 1024, 1024, 128), (48, 1000, 777, 320)],
        "quick": [(16, 512, 512, 512)],
        "tiny": [(3, 37, 45, 29), (2, 64, 16, 40)],
    }[size]
    for dtype, tol in ((torch.float16, 1e-2), (torch.bfloat16, 2e-2)):
        name = str(dtype).replace("torch.", "")
        for batch, M, N, K in shapes:
            common = dict(atol=tol * K ** 0.5, rtol=tol, flops=2.0 * batch * M * N * K,
                          bytes=batch * (M * K + K * N + M * N) * dtype.itemsize)
            yield Case(f"bmm {name}", f"{batch}x{M}x{N}x{K}",
                       inputs=lambda batch=batch, M=M, N=N, K=K, dtype=dtype: {
                           "a": torch.randn(batch, M, K, device=device, dtype=dtype),
                           "b": torch.randn(batch, K, N, device=device, dtype=dtype)},
                       run=lambda m, i: lambda: m.bmm(i["a"], i["b"]),
                       reference=lambda i: torch.bmm(i["a"].double(), i["b"].double()), **common)
            yield Case(f"bmm {name} B transposed", f"{batch}x{M}x{N}x{K}",
                       inputs=lambda batch=batch, M=M, N=N, K=K, dtype=dtype: {
                           "a": torch.randn(batch, M, K, device=device, dtype=dtype),
                           "bt": torch.randn(batch, N, K, device=device, dtype=dtype)},
                       run=lambda m, i: lambda: m.bmm(i["a"], i["bt"].transpose(1, 2)),
                       reference=lambda i: torch.bmm(i["a"].double(), i["bt"].double().transpose(1, 2)), **common)
