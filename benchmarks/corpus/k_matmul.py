"""The tiled matmul most Triton users start from: one output tile per program, programs
ordered in groups of GROUP_M rows of tiles for L2 reuse, every load and the store masked,
autotuned over tile shapes (configs pruned by the problem's M and the tiles' shared memory,
as kernel libraries do). C = A @ B for fp16, bf16, fp32 at input_precision="tf32", int8
(int32 out) and fp8 e4m3 / e5m2 (fp32 out; B passed transposed, K contiguous, as Triton's
tutorial does for fp8), at square, odd, prime, skinny-M, huge-N (a vocabulary projection)
and short-K shapes."""
import torch
import triton
import triton.language as tl

from case import Case

SMEM_LIMIT = 220 * 1024  # an H100 block may use 227 KiB; keep some for the epilogue


def _config(bm, bn, bk, warps, stages):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=warps,
                         num_stages=stages)


# Tiles for M above 64, then narrower ones for skinny M (one row of tiles).
CONFIGS = [
    _config(64, 128, 64, 4, 4),
    _config(128, 256, 64, 8, 3),
    _config(128, 128, 64, 4, 4),
    _config(128, 128, 32, 4, 4),
    _config(128, 256, 128, 8, 3),
    _config(128, 128, 128, 8, 4),
    _config(16, 64, 128, 4, 4),
    _config(16, 32, 256, 4, 4),
    _config(32, 64, 128, 4, 4),
    _config(64, 64, 128, 4, 4),
]


def prune_configs(configs, named_args, **kwargs):
    """Keeps the tiles that suit this M and fit in shared memory with this element size."""
    m = named_args["M"]
    element = named_args["a_ptr"].element_size()
    if m <= 64:
        want = max(16, triton.next_power_of_2(m))
        kept = [c for c in configs if c.kwargs["BLOCK_M"] == want]
    else:
        kept = [c for c in configs if c.kwargs["BLOCK_M"] >= 64]
    kept = [c for c in kept
            if c.num_stages * (c.kwargs["BLOCK_M"] + c.kwargs["BLOCK_N"]) * c.kwargs["BLOCK_K"] * element <= SMEM_LIMIT]
    return kept or configs[:1]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": prune_configs})
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  ACC_TYPE: tl.constexpr, INPUT_PRECISION: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
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
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    mask_m = offs_m[:, None] < M
    mask_n = offs_n[None, :] < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_TYPE)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION, out_dtype=ACC_TYPE)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=mask_m & mask_n)


def matmul(a, b, out_dtype=None):
    """a [M, K] @ b [K, N]; fp16/bf16 give their own type, fp32 is multiplied at tf32,
    int8 gives int32, fp8 fp32 (or `out_dtype`)."""
    assert a.shape[1] == b.shape[0] and a.dtype == b.dtype
    M, K = a.shape
    N = b.shape[1]
    if a.dtype == torch.int8:
        acc_type, out_dtype = tl.int32, torch.int32
    else:
        acc_type = tl.float32
        if out_dtype is None:
            out_dtype = torch.float32 if a.element_size() == 1 else a.dtype
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), ACC_TYPE=acc_type, INPUT_PRECISION="tf32")
    return c


# name: (torch dtype, rtol, atol per sqrt(K): fp16/bf16 round the result, tf32 (truncated by
# Hopper's wgmma) the inputs, fp8 dots accumulate with ~13 mantissa bits; int8 is exact.
DTYPES = {
    "fp16": (torch.float16, 1e-2, 1e-2),
    "bf16": (torch.bfloat16, 2e-2, 2e-2),
    "tf32": (torch.float32, 1e-2, 1e-2),
    "int8": (torch.int8, 0.0, 0.0),
    "fp8e4m3": (torch.float8_e4m3fn, 2e-2, 3e-2),
    "fp8e5m2": (torch.float8_e5m2, 2e-2, 3e-2),
}


def shapes(name, size):
    if size == "tiny":
        return [(37, 45, 61), (1, 40, 50), (80, 48, 72)]
    if size == "quick":
        return [(1024, 1024, 1024)]
    square = [(4096, 4096, 4096)] + ([(8192, 8192, 8192)] if name in ("fp16", "bf16") else [])
    return square + [(1000, 2000, 3000), (4099, 4093, 4091), (1, 8192, 8192), (16, 8192, 8192), (64, 8192, 8192),
                     (2048, 50257, 4096), (8192, 8192, 1024)]


def make_inputs(device, dtype, M, N, K):
    if dtype == torch.int8:
        a = torch.randint(-128, 128, (M, K), device=device, dtype=torch.int8)
        b = torch.randint(-128, 128, (K, N), device=device, dtype=torch.int8)
    elif dtype.itemsize == 1:
        a = torch.randn(M, K, device=device).to(dtype)
        b = torch.randn(N, K, device=device).to(dtype).T  # K contiguous
    else:
        a = torch.randn(M, K, device=device, dtype=dtype)
        b = torch.randn(K, N, device=device, dtype=dtype)
    return {"a": a, "b": b}


def cases(device, size):
    for name, (dtype, rtol, atol) in DTYPES.items():
        for M, N, K in shapes(name, size):
            out_size = 4 if dtype.itemsize == 1 else dtype.itemsize
            yield Case(f"matmul {name}", f"{M}x{N}x{K}",
                       inputs=lambda dtype=dtype, M=M, N=N, K=K: make_inputs(device, dtype, M, N, K),
                       run=lambda m, i: lambda: m.matmul(i["a"], i["b"]),
                       reference=lambda i: i["a"].double() @ i["b"].double(),
                       atol=atol * K ** 0.5, rtol=rtol, flops=2.0 * M * N * K,
                       bytes=(M * K + K * N) * dtype.itemsize + M * N * out_size,
                       needs=(8, 9) if name.startswith("fp8") else None)
