"""Persistent matmul: one program per SM walking the output tiles NUM_SMS apart (grouped
for L2 reuse), in the three forms of Triton's tutorial 09 (each written here anew):

- pointers: tensors of pointers, tiles past the edge clamped with tl.where and declared
  contiguous with tl.max_contiguous / tl.multiple_of, K masked;
- host descriptors: A [M, K], B^T [N, K] and C [M, N] as triton.tools.tensor_descriptor
  TensorDescriptors, made with a placeholder block shape that the autotuner's pre-hook
  sets to each config's tiles; read and written by desc.load / desc.store (TMA on Hopper);
- device descriptors: the same made in the kernel with tl.make_tensor_descriptor from
  pointer arguments, after triton.set_allocator gives Triton its scratch memory.
fp16 and bf16 in and out, fp32 accumulation."""
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from case import Case


def num_sms(device):
    if torch.device(device).type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


@triton.jit
def tile_pid(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (tile_id // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


def _configs(pre_hook=None):
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s,
                          pre_hook=pre_hook)
            for bm, bn, bk, w, s in ((128, 128, 64, 4, 3), (128, 128, 64, 8, 4), (128, 256, 64, 8, 3),
                                     (64, 128, 64, 4, 4))]


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def persistent_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                             stride_cm, stride_cn, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_pid(tile_id, num_pid_m, num_pid_n, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        # Rows and columns past the edge read row/column 0 (their results are not stored),
        # so the loads need no mask along M and N.
        offs_am = tl.max_contiguous(tl.multiple_of(tl.where(offs_m < M, offs_m, 0), BLOCK_M), BLOCK_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(tl.where(offs_n < N, offs_n, 0), BLOCK_N), BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak,
                        mask=offs_k[None, :] < K, other=0.0)
            b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn,
                        mask=offs_k[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_persistent(a, b):
    """a [M, K] @ b [K, N]."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    sms = num_sms(a.device)
    grid = lambda meta: (min(sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)
    persistent_matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                   c.stride(0), c.stride(1), NUM_SMS=sms)
    return c


def set_descriptor_blocks(nargs):
    """Autotuner pre-hook: the descriptors' blocks are the config's tiles."""
    bm, bn, bk = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [bm, bk]
    nargs["b_desc"].block_shape = [bn, bk]
    nargs["c_desc"].block_shape = [bm, bn]


@triton.autotune(configs=_configs(pre_hook=set_descriptor_blocks), key=["M", "N", "K"])
@triton.jit
def tma_persistent_matmul_kernel(a_desc, b_desc, c_desc, M, N, K, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr,
                                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    dtype = c_desc.dtype
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_pid(tile_id, num_pid_m, num_pid_n, GROUP_M)
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([offs_am, ki * BLOCK_K])
            b = b_desc.load([offs_bn, ki * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([offs_am, offs_bn], acc.to(dtype))


def matmul_tma_persistent(a, b_t):
    """a [M, K] @ b_t [N, K]^T through host-side tensor descriptors."""
    M, K = a.shape
    N = b_t.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    placeholder = [1, 1]
    a_desc = TensorDescriptor.from_tensor(a, placeholder)
    b_desc = TensorDescriptor.from_tensor(b_t, placeholder)
    c_desc = TensorDescriptor.from_tensor(c, placeholder)
    sms = num_sms(a.device)
    grid = lambda meta: (min(sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)
    tma_persistent_matmul_kernel[grid](a_desc, b_desc, c_desc, M, N, K, NUM_SMS=sms)
    return c


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def device_descriptor_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr,
                                    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    dtype = c_ptr.dtype.element_ty
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_pid(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, ki * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(dtype))


def matmul_device_descriptor(a, b_t):
    """a [M, K] @ b_t [N, K]^T through descriptors the kernel makes."""
    M, K = a.shape
    N = b_t.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)

    def alloc_fn(size, alignment, stream):  # Triton's scratch for the descriptors it builds on the GPU
        return torch.empty(size, device=a.device, dtype=torch.int8)

    triton.set_allocator(alloc_fn)
    sms = num_sms(a.device)
    grid = lambda meta: (min(sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)
    device_descriptor_matmul_kernel[grid](a, b_t, c, M, N, K, NUM_SMS=sms)
    return c


def cases(device, size):
    # K and N multiples of 8 (16-byte rows), as descriptors need.
    shapes = {
        "full": [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (8192, 8192, 512), (1000, 2000, 3000)],
        "quick": [(1024, 1024, 1024)],
        "tiny": [(37, 48, 40), (260, 136, 24)],  # the second: 6 tiles for 4 programs
    }[size]
    for dtype, tol in ((torch.float16, 1e-2), (torch.bfloat16, 2e-2)):
        name = str(dtype).replace("torch.", "")
        for M, N, K in shapes:
            common = dict(atol=tol * K ** 0.5, rtol=tol, flops=2.0 * M * N * K,
                          bytes=(M * K + K * N + M * N) * dtype.itemsize)
            yield Case(f"persistent {name}", f"{M}x{N}x{K}",
                       inputs=lambda M=M, N=N, K=K, dtype=dtype: {
                           "a": torch.randn(M, K, device=device, dtype=dtype),
                           "b": torch.randn(K, N, device=device, dtype=dtype)},
                       run=lambda m, i: lambda: m.matmul_persistent(i["a"], i["b"]),
                       reference=lambda i: i["a"].double() @ i["b"].double(), **common)
            transposed = lambda M=M, N=N, K=K, dtype=dtype: {
                "a": torch.randn(M, K, device=device, dtype=dtype),
                "b_t": torch.randn(N, K, device=device, dtype=dtype)}
            # B read K-contiguous through pointers (b_t.T: nn.Linear's weight), as
            # tutorial 09's benchmark passes it.
            yield Case(f"persistent {name}, B K-contiguous", f"{M}x{N}x{K}", inputs=transposed,
                       run=lambda m, i: lambda: m.matmul_persistent(i["a"], i["b_t"].T),
                       reference=lambda i: i["a"].double() @ i["b_t"].double().T, **common)
            yield Case(f"persistent host descriptors {name}", f"{M}x{N}x{K}", inputs=transposed,
                       run=lambda m, i: lambda: m.matmul_tma_persistent(i["a"], i["b_t"]),
                       reference=lambda i: i["a"].double() @ i["b_t"].double().T, needs=(9, 0), **common)
            yield Case(f"persistent device descriptors {name}", f"{M}x{N}x{K}", inputs=transposed,
                       run=lambda m, i: lambda: m.matmul_device_descriptor(i["a"], i["b_t"]),
                       reference=lambda i: i["a"].double() @ i["b_t"].double().T, needs=(9, 0), **common)
