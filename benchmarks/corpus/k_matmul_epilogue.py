"""A linear layer's forward in one kernel: C = act(A @ W + bias), the bias and the
activation applied to the fp32 accumulator before the one store, as fused MLP kernels do.
Activations: exact GELU (libdevice erf), tanh-approximated GELU (libdevice tanh), SiLU
(tl.sigmoid), or none. fp16 in and out; W scaled like a layer's weights (1/sqrt(K)) so
the activations see values of order one."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from case import Case


@triton.jit
def gelu(x):
    return 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))


@triton.jit
def gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + libdevice.tanh(inner))


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def linear_kernel(a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_wk, stride_wn,
                  stride_cm, stride_cn, ACTIVATION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
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
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc += bias[None, :]
    if ACTIVATION == "gelu":
        acc = gelu(acc)
    elif ACTIVATION == "gelu_tanh":
        acc = gelu_tanh(acc)
    elif ACTIVATION == "silu":
        acc = silu(acc)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear(a, w, bias, activation=""):
    """act(a [M, K] @ w [K, N] + bias [N])."""
    M, K = a.shape
    N = w.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    linear_kernel[grid](a, w, bias, c, M, N, K, a.stride(0), a.stride(1), w.stride(0), w.stride(1),
                        c.stride(0), c.stride(1), ACTIVATION=activation)
    return c


def reference(i, activation):
    x = i["a"].double() @ i["w"].double() + i["bias"].double()
    if activation == "gelu":
        return torch.nn.functional.gelu(x)
    if activation == "gelu_tanh":
        return torch.nn.functional.gelu(x, approximate="tanh")
    if activation == "silu":
        return torch.nn.functional.silu(x)
    return x


def cases(device, size):
    shapes = {
        "full": [(4096, 4096, 4096), (4096, 14336, 4096), (1000, 3000, 2000)],
        "quick": [(1024, 1024, 1024)],
        "tiny": [(37, 45, 61), (64, 40, 32)],
    }[size]
    for M, N, K in shapes:
        for activation in ("gelu", "gelu_tanh", "silu") + (("",) if (M, N, K) == shapes[0] else ()):
            yield Case(f"linear + bias + {activation or 'no activation'} fp16", f"{M}x{N}x{K}",
                       inputs=lambda M=M, N=N, K=K: {
                           "a": torch.randn(M, K, device=device, dtype=torch.float16),
                           "w": (torch.randn(K, N, device=device) / K ** 0.5).to(torch.float16),
                           "bias": torch.randn(N, device=device, dtype=torch.float16)},
                       run=lambda m, i, activation=activation: lambda: m.linear(i["a"], i["w"], i["bias"], activation),
                       reference=lambda i, activation=activation: reference(i, activation),
                       atol=1e-2, rtol=1e-2, flops=2.0 * M * N * K, bytes=2 * (M * K + K * N + M * N + N))
