"""Hybrid stream-K matmul: one persistent program per SM. When the output tiles do not
split into whole waves over the SMs, the last tiles (the partial wave, plus one full wave
when there is one to spare) are shared out by K-iterations instead: each program takes an
equal, contiguous run of the (tile, k-slice) iterations, which may start and end inside
tiles, and adds each partial tile into C (fp32, zeroed first) with tl.atomic_add. The
remaining tiles, whole waves, are computed one per program and stored, data-parallel.
fp16 and bf16 inputs, fp32 out."""
import torch
import triton
import triton.language as tl

from case import Case


def num_sms(device):
    if torch.device(device).type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def prune_configs(configs, named_args, **kwargs):
    """Small tiles only for small problems."""
    big = named_args["M"] * named_args["N"] >= 1 << 20
    return [c for c in configs if (c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] >= 64 * 64) == big] or configs


@triton.jit
def tile_coordinates(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (tile // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile % num_pid_in_group) % group_size_m
    pid_n = (tile % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def mac_loop(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n, k_first, k_last,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """The partial product of one tile over its K-slices k_first .. k_last - 1."""
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = k_first * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(k_first, k_last):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        offs_k += BLOCK_K
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4}, num_warps=4, num_stages=3),
    ],
    key=["M", "N", "K"], reset_to_zero=["c_ptr"], prune_configs_by={"early_config_prune": prune_configs},
)
@triton.jit
def streamk_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                          stride_cn, NUM_SMS: tl.constexpr, SK_WAVES: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    total_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    iters_per_tile = tl.cdiv(K, BLOCK_K)
    sk_tiles = total_tiles % NUM_SMS
    if sk_tiles > 0 and total_tiles >= NUM_SMS * (SK_WAVES + 1):
        sk_tiles += NUM_SMS * SK_WAVES
    dp_tiles = total_tiles - sk_tiles

    # Stream-K: this program's share of the last sk_tiles tiles' iterations.
    sk_iters = sk_tiles * iters_per_tile
    iters_per_program = sk_iters // NUM_SMS
    extra = sk_iters % NUM_SMS
    start = pid * iters_per_program + min(pid, extra)
    end = start + iters_per_program + (pid < extra).to(tl.int32)
    while start < end:
        tile_in_sk = start // iters_per_tile
        tile_first_iter = tile_in_sk * iters_per_tile
        stop = min(end, tile_first_iter + iters_per_tile)
        pid_m, pid_n = tile_coordinates(dp_tiles + tile_in_sk, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = mac_loop(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n,
                       start - tile_first_iter, stop - tile_first_iter, BLOCK_M, BLOCK_N, BLOCK_K)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.atomic_add(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N), sem="relaxed")
        start = stop

    # Data-parallel: whole tiles, whole waves.
    for tile in range(pid, dp_tiles, NUM_SMS):
        pid_m, pid_n = tile_coordinates(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = mac_loop(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n,
                       0, iters_per_tile, BLOCK_M, BLOCK_N, BLOCK_K)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_streamk(a, b, sk_waves=1):
    """a [M, K] @ b [K, N] -> fp32 [M, N]."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.zeros((M, N), device=a.device, dtype=torch.float32)
    sms = num_sms(a.device)
    streamk_matmul_kernel[(sms,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                  c.stride(0), c.stride(1), NUM_SMS=sms, SK_WAVES=sk_waves)
    return c


def cases(device, size):
    shapes = {
        "full": [(4096, 4096, 4096), (2048, 2048, 16384), (1536, 1536, 12288), (1000, 3000, 7000)],
        "quick": [(1536, 1536, 2048)],
        "tiny": [(80, 96, 100), (37, 45, 61)],
    }[size]
    for dtype in (torch.float16, torch.bfloat16):
        name = str(dtype).replace("torch.", "")
        for M, N, K in shapes:
            yield Case(f"stream-k {name}", f"{M}x{N}x{K}",
                       inputs=lambda M=M, N=N, K=K, dtype=dtype: {
                           "a": torch.randn(M, K, device=device, dtype=dtype),
                           "b": torch.randn(K, N, device=device, dtype=dtype)},
                       run=lambda m, i: lambda: m.matmul_streamk(i["a"], i["b"]),
                       reference=lambda i: i["a"].double() @ i["b"].double(),
                       atol=1e-3 * K ** 0.5, rtol=1e-3, flops=2.0 * M * N * K,
                       bytes=(M * K + K * N) * dtype.itemsize + 4 * M * N)
