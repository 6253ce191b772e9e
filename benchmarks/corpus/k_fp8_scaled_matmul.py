"""fp8 (e4m3) matmul with the scales of quantisation applied in the epilogue, as inference
servers run their fp8 linear layers: activations quantised per row (per token), weights
per output channel, or both per tensor; C = (A_q @ W_q^T) * a_scale[:, None] *
w_scale[None, :] (+ bias), written in bf16. W is [N, K] (nn.Linear's layout), so B is read
K-contiguous."""
import torch
import triton
import triton.language as tl

from case import Case

FP8_MAX = 448.0  # largest finite e4m3 value


def _config(bm, bn, bk, warps, stages):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=warps,
                         num_stages=stages)


CONFIGS = [
    _config(128, 128, 128, 8, 4),
    _config(128, 256, 128, 8, 3),
    _config(64, 128, 128, 4, 4),
    _config(128, 64, 128, 4, 4),
    _config(16, 64, 256, 4, 4),
    _config(32, 64, 128, 4, 4),
    _config(64, 64, 256, 4, 3),
]


def prune_configs(configs, named_args, **kwargs):
    m = named_args["M"]
    if m <= 64:
        want = max(16, triton.next_power_of_2(m))
        return [c for c in configs if c.kwargs["BLOCK_M"] == want]
    return [c for c in configs if c.kwargs["BLOCK_M"] >= 64]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"], prune_configs_by={"early_config_prune": prune_configs})
@triton.jit
def scaled_mm_kernel(a_ptr, w_ptr, c_ptr, a_scale_ptr, w_scale_ptr, bias_ptr, M, N, K,
                     stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
                     ROW_SCALES: tl.constexpr, HAS_BIAS: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    if ROW_SCALES:
        a_scale = tl.load(a_scale_ptr + offs_m, mask=mask_m, other=0.0)
        w_scale = tl.load(w_scale_ptr + offs_n, mask=mask_n, other=0.0)
        acc = acc * a_scale[:, None] * w_scale[None, :]
    else:
        acc = acc * (tl.load(a_scale_ptr) * tl.load(w_scale_ptr))
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n, mask=mask_n, other=0.0)
        acc = acc + bias[None, :].to(tl.float32)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def scaled_mm(a, w, a_scale, w_scale, bias=None, out_dtype=torch.bfloat16):
    """a [M, K] fp8 with a_scale [M] (or one value), w [N, K] fp8 with w_scale [N] (or one):
    (a @ w^T) scaled, plus bias [N]."""
    M, K = a.shape
    N = w.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    row_scales = a_scale.numel() > 1 or w_scale.numel() > 1
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    scaled_mm_kernel[grid](a, w, c, a_scale, w_scale, bias, M, N, K, a.stride(0), a.stride(1), w.stride(0),
                           w.stride(1), c.stride(0), c.stride(1), ROW_SCALES=row_scales, HAS_BIAS=bias is not None)
    return c


def quantize(x, per_row):
    """x in e4m3 and the fp32 scales that bring it back: per row, or one for the tensor."""
    amax = x.abs().amax(dim=1, keepdim=True) if per_row else x.abs().amax().reshape(1, 1)
    scale = amax.float().clamp(min=1e-12) / FP8_MAX
    return (x / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale.reshape(-1).contiguous()


def make_inputs(device, M, N, K, per_row, with_bias):
    a, a_scale = quantize(torch.randn(M, K, device=device), per_row)
    w, w_scale = quantize(torch.randn(N, K, device=device), per_row)
    bias = torch.randn(N, device=device, dtype=torch.bfloat16) if with_bias else None
    return {"a": a, "w": w, "a_scale": a_scale, "w_scale": w_scale, "bias": bias}


def reference(i):
    a = i["a"].double() * i["a_scale"].double().reshape(-1, 1)
    w = i["w"].double() * i["w_scale"].double().reshape(-1, 1)
    c = a @ w.T
    return c + i["bias"].double() if i["bias"] is not None else c


def cases(device, size):
    if size == "tiny":
        shapes = [(37, 45, 64, "row"), (1, 40, 96, "row"), (80, 48, 72, "tensor"), (50, 33, 64, "row+bias")]
    elif size == "quick":
        shapes = [(1024, 1024, 1024, "row"), (1024, 1024, 1024, "tensor")]
    else:
        shapes = [(4096, 4096, 4096, "row"), (8192, 8192, 8192, "row"), (2048, 28672, 4096, "row"),
                  (4096, 8192, 28672, "row"), (16, 8192, 8192, "row"), (1000, 4096, 4096, "row+bias"),
                  (4096, 4096, 4096, "tensor"), (8192, 8192, 8192, "tensor")]
    for M, N, K, scales in shapes:
        per_row, with_bias = scales.startswith("row"), scales.endswith("bias")
        yield Case(f"fp8 e4m3 scaled mm, {'per-row/column' if per_row else 'per-tensor'} scales"
                   + (" + bias" if with_bias else ""), f"{M}x{N}x{K}",
                   inputs=lambda M=M, N=N, K=K, per_row=per_row, with_bias=with_bias: make_inputs(
                       device, M, N, K, per_row, with_bias),
                   run=lambda m, i: lambda: m.scaled_mm(i["a"], i["w"], i["a_scale"], i["w_scale"], i["bias"]),
                   # Hopper's fp8 wgmma adds into fewer bits than fp32 (~14): at K = 28672 both
                   # compilers' outputs miss the fp64 reference by up to 0.04 sqrt(K) (1 of 33M).
                   reference=reference, atol=6e-2 * K ** 0.5, rtol=2e-2, flops=2.0 * M * N * K,
                   bytes=M * K + N * K + 2 * M * N, needs=(8, 9))
