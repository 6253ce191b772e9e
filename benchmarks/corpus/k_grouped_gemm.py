"""Grouped GEMM: many independent products in one launch of a fixed number of programs,
each program walking the tiles of all problems NUM_SM apart.

- `grouped_matmul_kernel` (the shape of Triton's tutorial 08): the problems' A, B and C
  addresses come in int64 tables loaded by the kernel and cast to pointers, their M, N,
  K and leading dimensions in int32 tables; each problem has its own sizes. Masked, so
  any size works.
- `moe_grouped_matmul_kernel` (the form mixture-of-experts layers use): one A holding
  every group's rows back to back, one weight tensor per group stacked as [G, N, K]
  (nn.Linear's layout, so B is read K-contiguous), and the rows per group in a device
  tensor (a group may have none); C = A_g @ W_g^T for each group's rows.
fp16 in and out, fp32 accumulation."""
import torch
import triton
import triton.language as tl

from case import Case


def num_sms(device):
    if torch.device(device).type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    ],
    key=["group_size"],
)
@triton.jit
def grouped_matmul_kernel(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, group_lds, group_size,
                          NUM_SM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            lda = tl.load(group_lds + g * 3)
            ldb = tl.load(group_lds + g * 3 + 1)
            ldc = tl.load(group_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_in_problem = tile_idx - last_problem_end
            tile_m = tile_in_problem // num_n_tiles
            tile_n = tile_in_problem % num_n_tiles

            offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + offs_m[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_n[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_K)):
                k_left = gk - kk * BLOCK_K
                a = tl.load(a_ptrs, mask=(offs_m[:, None] < gm) & (offs_k[None, :] < k_left), other=0.0)
                b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < gn), other=0.0)
                acc += tl.dot(a, b)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * ldb
            c_ptrs = c_ptr + offs_m[:, None] * ldc + offs_n[None, :]
            tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < gm) & (offs_n[None, :] < gn))
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


def group_tables(group_a, group_b):
    """The device tables grouped_matmul_kernel reads, and the outputs they point at."""
    device = group_a[0].device
    group_c = [torch.empty((a.shape[0], b.shape[1]), device=device, dtype=a.dtype) for a, b in zip(group_a, group_b)]
    sizes, lds = [], []
    for a, b, c in zip(group_a, group_b, group_c):
        assert a.shape[1] == b.shape[0] and a.stride(1) == b.stride(1) == 1
        sizes += [a.shape[0], b.shape[1], a.shape[1]]
        lds += [a.stride(0), b.stride(0), c.stride(0)]
    tables = (torch.tensor([a.data_ptr() for a in group_a], device=device),
              torch.tensor([b.data_ptr() for b in group_b], device=device),
              torch.tensor([c.data_ptr() for c in group_c], device=device),
              torch.tensor(sizes, dtype=torch.int32, device=device),
              torch.tensor(lds, dtype=torch.int32, device=device))
    return tables, group_c


def grouped_matmul_launch(tables, group_c):
    group_size = len(group_c)
    sms = num_sms(group_c[0].device)
    grouped_matmul_kernel[(sms,)](*tables, group_size, NUM_SM=sms)
    return group_c


def group_gemm(group_a, group_b):
    """[a @ b for a, b in zip(group_a, group_b)] in one launch (tables made at each call)."""
    tables, group_c = group_tables(group_a, group_b)
    return grouped_matmul_launch(tables, group_c)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128}, num_warps=4, num_stages=4),
    ],
    key=["N", "K", "num_groups"],
)
@triton.jit
def moe_grouped_matmul_kernel(a_ptr, w_ptr, c_ptr, m_sizes_ptr, num_groups, N, K,
                              stride_am, stride_ak, stride_wg, stride_wn, stride_wk, stride_cm, stride_cn,
                              NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                              BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    tiles_before = 0
    row_start = 0
    for g in range(num_groups):
        m_size = tl.load(m_sizes_ptr + g)
        group_tiles = tl.cdiv(m_size, BLOCK_M) * num_n
        # Tile t of this group is global tile tiles_before + t, which program
        # (tiles_before + t) % NUM_SMS computes.
        first = (pid + NUM_SMS - tiles_before % NUM_SMS) % NUM_SMS
        w_group = w_ptr + g * stride_wg
        for t in range(first, group_tiles, NUM_SMS):
            offs_m = (t // num_n) * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = (t % num_n) * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            rows = row_start + offs_m
            a_ptrs = a_ptr + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
            w_ptrs = w_group + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(0, K, BLOCK_K):
                a = tl.load(a_ptrs, mask=(offs_m[:, None] < m_size) & (offs_k[None, :] + k < K), other=0.0)
                w = tl.load(w_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
                acc = tl.dot(a, w, acc)
                a_ptrs += BLOCK_K * stride_ak
                w_ptrs += BLOCK_K * stride_wk
            c_ptrs = c_ptr + rows[:, None] * stride_cm + offs_n[None, :] * stride_cn
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < m_size) & (offs_n[None, :] < N))
        tiles_before += group_tiles
        row_start += m_size


def moe_grouped_matmul(a, w, m_sizes, out=None):
    """a [sum(m_sizes), K], w [G, N, K], m_sizes int32 [G] on the device: the rows of group
    g (after those of groups before it) times w[g]^T."""
    num_groups, N, K = w.shape
    c = out if out is not None else torch.empty((a.shape[0], N), device=a.device, dtype=a.dtype)
    sms = num_sms(a.device)
    moe_grouped_matmul_kernel[(sms,)](a, w, c, m_sizes, num_groups, N, K, a.stride(0), a.stride(1),
                                      w.stride(0), w.stride(1), w.stride(2), c.stride(0), c.stride(1), NUM_SMS=sms)
    return c


def _poisoned(tensors):
    for t in tensors:
        t.fill_(float("nan"))
    return tensors


def table_case(device, name, problems):
    def inputs():
        group_a = [torch.randn(m, k, device=device, dtype=torch.float16) for m, n, k in problems]
        group_b = [torch.randn(k, n, device=device, dtype=torch.float16) for m, n, k in problems]
        tables, group_c = group_tables(group_a, group_b)
        return {"a": group_a, "b": group_b, "tables": tables, "c": group_c}

    def run(module, i):
        _poisoned(i["c"])  # each backend's first call writes into NaNs
        return lambda: module.grouped_matmul_launch(i["tables"], i["c"])

    flops = sum(2.0 * m * n * k for m, n, k in problems)
    moved = sum(2 * (m * k + k * n + m * n) for m, n, k in problems)
    worst_k = max(k for _, _, k in problems)
    shape = f"{len(problems)} problems, {problems[0][0]}x{problems[0][1]}x{problems[0][2]}" + (
        "" if len(set(problems)) == 1 else ", ...")
    return Case(name, shape, inputs=inputs, run=run,
                reference=lambda i: [a.double() @ b.double() for a, b in zip(i["a"], i["b"])],
                atol=1e-2 * worst_k ** 0.5, rtol=1e-2, flops=flops, bytes=moved)


def moe_case(device, m_sizes, N, K):
    total = sum(m_sizes)

    def inputs():
        return {"a": torch.randn(total, K, device=device, dtype=torch.float16),
                "w": torch.randn(len(m_sizes), N, K, device=device, dtype=torch.float16),
                "m_sizes": torch.tensor(m_sizes, dtype=torch.int32, device=device)}

    def reference(i):
        rows = torch.split(i["a"].double(), m_sizes)
        return torch.cat([r @ i["w"][g].double().T for g, r in enumerate(rows)])

    return Case("moe grouped gemm", f"{len(m_sizes)} groups, {total} rows, N={N}, K={K}", inputs=inputs,
                run=lambda m, i: lambda: m.moe_grouped_matmul(i["a"], i["w"], i["m_sizes"]),
                reference=reference, atol=1e-2 * K ** 0.5, rtol=1e-2, flops=2.0 * total * N * K,
                bytes=2 * (total * K + len(m_sizes) * N * K + total * N))


def cases(device, size):
    if size == "tiny":
        yield table_case(device, "grouped gemm, pointer tables", [(37, 45, 29), (16, 64, 40), (50, 20, 33)])
        yield moe_case(device, [20, 0, 37], 40, 24)
    elif size == "quick":
        yield table_case(device, "grouped gemm, pointer tables", [(512, 512, 512)] * 4)
        yield moe_case(device, [300, 0, 700, 500], 512, 512)
    else:
        yield table_case(device, "grouped gemm, pointer tables", [(2048, 2048, 2048)] * 8)
        yield table_case(device, "grouped gemm, pointer tables", [
            (4096, 4096, 512), (1000, 2000, 3000), (512, 8192, 1024), (3072, 1024, 4096), (257, 4096, 2048),
            (4096, 256, 4096), (1536, 1536, 1536), (2048, 3000, 1000), (64, 8192, 8192), (8192, 512, 512),
            (777, 999, 1111), (2048, 2048, 4096)])
        yield moe_case(device, [3000, 1000, 0, 4500, 2047, 1, 3500, 2331], 4096, 2048)
        sizes = [(97 * g * g + 31 * g) % 512 for g in range(64)]  # uneven, 0 to 511 rows
        yield moe_case(device, sizes, 1536, 2048)
