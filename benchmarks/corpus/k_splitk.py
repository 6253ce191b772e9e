"""Split-K matmul for shapes whose M x N has too few tiles to fill the GPU but whose K is
long: the grid's second dimension cuts K into SPLIT_K interleaved parts, and each program
adds its partial tile into an fp32 C (zeroed first) with tl.atomic_add. fp16 and bf16
inputs, fp32 out."""
import torch
import triton
import triton.language as tl

from case import Case


def _config(bm, bn, bk, split_k, warps=4, stages=4):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "SPLIT_K": split_k, "GROUP_M": 8},
                         num_warps=warps, num_stages=stages)


CONFIGS = [
    _config(16, 64, 128, 8),
    _config(16, 128, 128, 16),
    _config(32, 64, 128, 8),
    _config(64, 64, 64, 4),
    _config(64, 128, 64, 8),
    _config(128, 128, 64, 4),
    _config(128, 128, 64, 8),
    _config(128, 256, 64, 2, warps=8, stages=3),
]


def prune_configs(configs, named_args, **kwargs):
    m = named_args["M"]
    if m <= 32:
        want = max(16, triton.next_power_of_2(m))
        return [c for c in configs if c.kwargs["BLOCK_M"] == want]
    return [c for c in configs if c.kwargs["BLOCK_M"] >= 64]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"], reset_to_zero=["c_ptr"],
                 prune_configs_by={"early_config_prune": prune_configs})
@triton.jit
def matmul_splitk_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                         stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         SPLIT_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Part pid_k of K: its BLOCK_K-wide slices are SPLIT_K slices apart.
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_left = K - k * BLOCK_K * SPLIT_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K * stride_ak
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.atomic_add(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_splitk(a, b):
    """a [M, K] @ b [K, N] -> fp32 [M, N]."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.zeros((M, N), device=a.device, dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), meta["SPLIT_K"])
    matmul_splitk_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                               c.stride(0), c.stride(1))
    return c


def cases(device, size):
    shapes = {
        "full": [(16, 4096, 16384), (128, 2048, 16384), (512, 512, 65536), (1024, 1024, 32768), (2000, 3000, 12345)],
        "quick": [(64, 1024, 8192)],
        "tiny": [(16, 40, 300), (80, 48, 150), (5, 33, 257)],
    }[size]
    for dtype in (torch.float16, torch.bfloat16):
        name = str(dtype).replace("torch.", "")
        for M, N, K in shapes:
            yield Case(f"split-k {name}", f"{M}x{N}x{K}",
                       inputs=lambda M=M, N=N, K=K, dtype=dtype: {
                           "a": torch.randn(M, K, device=device, dtype=dtype),
                           "b": torch.randn(K, N, device=device, dtype=dtype)},
                       run=lambda m, i: lambda: m.matmul_splitk(i["a"], i["b"]),
                       reference=lambda i: i["a"].double() @ i["b"].double(),
                       atol=1e-3 * K ** 0.5, rtol=1e-3, flops=2.0 * M * N * K,
                       bytes=(M * K + K * N) * dtype.itemsize + 4 * M * N)
