"""Sorting inside a program: tl.sort of rows (ascending and descending, fp32 and fp16),
tl.topk of rows, and the packed-key trick users reach for when they need indices too
(tl.sort and tl.topk return values only): each value's bits, made order-preserving as
a signed integer, go in the high word of an int64 and its column in the low word, so
sorting the keys carries the indices along. With it: a full argsort (stable, as
torch.sort(stable=True)), a top-k by sorting and storing the first k, and an MoE
router's top-k over experts with a softmax of the chosen logits."""
import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def sort_rows_kernel(x_ptr, out_ptr, N, stride, DESCENDING: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    pad = float("-inf") if DESCENDING else float("inf")  # padding sorts past the row's end
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=pad)
    tl.store(out_ptr + row * stride + cols, tl.sort(x, descending=DESCENDING), mask=mask)


@triton.jit
def topk_rows_kernel(x_ptr, out_ptr, N, stride, out_stride, K: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf"))
    top = tl.topk(x, K)  # the K largest, largest first
    tl.store(out_ptr + row * out_stride + tl.arange(0, K), top.to(out_ptr.dtype.element_ty))


@triton.jit
def _sortable_bits(x):
    """fp32 -> int32 whose signed order is the float order (negatives' magnitude bits flipped)."""
    bits = x.to(tl.int32, bitcast=True)
    return bits ^ ((bits >> 31) & 0x7FFFFFFF)


@triton.jit
def _float_from_sortable(key):
    bits = key ^ ((key >> 31) & 0x7FFFFFFF)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def argsort_rows_kernel(x_ptr, values_ptr, indices_ptr, N, stride, out_stride, n_out,
                        DESCENDING: tl.constexpr, BLOCK_N: tl.constexpr):
    """Sorts each row's (value, column) keys; stores the first n_out values and columns."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    pad = float("-inf") if DESCENDING else float("inf")
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=pad).to(tl.float32)
    # ties: the smaller column first, in either direction (a stable sort)
    if DESCENDING:
        low = BLOCK_N - 1 - cols
    else:
        low = cols
    keys = (_sortable_bits(x).to(tl.int64) << 32) | low.to(tl.int64)
    keys = tl.sort(keys, descending=DESCENDING)
    low = keys.to(tl.int32)  # the low word
    if DESCENDING:
        index = BLOCK_N - 1 - low
    else:
        index = low
    values = _float_from_sortable((keys >> 32).to(tl.int32))
    out_mask = cols < n_out
    tl.store(values_ptr + row * out_stride + cols, values.to(values_ptr.dtype.element_ty), mask=out_mask)
    tl.store(indices_ptr + row * out_stride + cols, index, mask=out_mask)


@triton.jit
def router_topk_kernel(logits_ptr, weights_ptr, ids_ptr, T, E, stride,
                       K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    """Top-k experts of BLOCK_T tokens and the softmax of their logits (Mixtral's routing)."""
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    experts = tl.arange(0, BLOCK_E)
    token_mask = tokens < T
    mask = token_mask[:, None] & (experts[None, :] < E)
    logits = tl.load(logits_ptr + tokens.to(tl.int64)[:, None] * stride + experts[None, :], mask=mask,
                     other=float("-inf")).to(tl.float32)
    keys = (_sortable_bits(logits).to(tl.int64) << 32) | (BLOCK_E - 1 - experts).to(tl.int64)[None, :]
    top = tl.topk(keys, K)                                     # [BLOCK_T, K], largest first
    ids = BLOCK_E - 1 - top.to(tl.int32)
    chosen = _float_from_sortable((top >> 32).to(tl.int32))
    weights = tl.exp(chosen - tl.max(chosen, axis=1)[:, None])
    weights = weights / tl.sum(weights, axis=1)[:, None]
    out = tokens.to(tl.int64)[:, None] * K + tl.arange(0, K)[None, :]
    tl.store(weights_ptr + out, weights, mask=token_mask[:, None])
    tl.store(ids_ptr + out, ids, mask=token_mask[:, None])


# ----------------------------------------------------------------------------- host wrappers

def _warps(block):
    return 4 if block <= 1024 else 8


def sort_rows(x, descending=False):
    M, N = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    sort_rows_kernel[(M,)](x, out, N, x.stride(0), DESCENDING=descending, BLOCK_N=block, num_warps=_warps(block))
    return out


def topk_rows(x, k):
    M, N = x.shape
    out = torch.empty(M, k, device=x.device, dtype=x.dtype)
    block = triton.next_power_of_2(N)
    topk_rows_kernel[(M,)](x, out, N, x.stride(0), out.stride(0), K=k, BLOCK_N=block, num_warps=_warps(block))
    return out


def argsort_rows(x, descending=False, k=None):
    """(values, int32 indices) of each row sorted, or of its first k when k is given."""
    M, N = x.shape
    n_out = N if k is None else k
    values = torch.empty(M, n_out, device=x.device, dtype=x.dtype)
    indices = torch.empty(M, n_out, device=x.device, dtype=torch.int32)
    block = triton.next_power_of_2(N)
    argsort_rows_kernel[(M,)](x, values, indices, N, x.stride(0), values.stride(0), n_out,
                              DESCENDING=descending, BLOCK_N=block, num_warps=_warps(block))
    return values, indices


def router_topk(logits, k):
    T, E = logits.shape
    weights = torch.empty(T, k, device=logits.device, dtype=torch.float32)
    ids = torch.empty(T, k, device=logits.device, dtype=torch.int32)
    block_e = triton.next_power_of_2(E)
    block_t = max(1, min(256, 2048 // block_e))
    router_topk_kernel[(triton.cdiv(T, block_t),)](logits, weights, ids, T, E, logits.stride(0), K=k,
                                                   BLOCK_T=block_t, BLOCK_E=block_e)
    return weights, ids


# ----------------------------------------------------------------------------- checks

def _sorted_reference(x, descending, k=None):
    values, indices = torch.sort(x, dim=1, descending=descending, stable=True)
    if k is not None:
        values, indices = values[:, :k], indices[:, :k]
    return values.double(), indices


def _check_router(result, inputs, k):
    weights, ids = result
    logits = inputs["logits"].double()
    want, _ = torch.topk(logits, k, dim=1)
    ids = ids.long()
    if ids.min() < 0 or ids.max() >= logits.shape[1]:
        return f"expert ids out of range: [{int(ids.min())}, {int(ids.max())}]"
    picked = logits.gather(1, ids)
    if not torch.equal(picked, want):
        bad = int((picked != want).any(1).sum())
        return f"{bad} of {logits.shape[0]} tokens chose other experts than the {k} largest logits (in order)"
    repeated = (ids.sort(1).values.diff(dim=1) == 0).any(1)
    if repeated.any():
        return f"{int(repeated.sum())} tokens chose one expert twice"
    error = (weights.double() - torch.softmax(want, 1)).abs().max()
    return None if error <= 1e-6 else f"routing weights off by {float(error):.3g}"


def cases(device, size):
    sorts = {"full": [(16384, 1024), (4096, 4000)], "quick": [(1000, 1000)], "tiny": [(5, 100), (3, 37)]}[size]
    topks = {"full": [(16384, 1024, 16)], "quick": [(1000, 1000, 16)], "tiny": [(7, 100, 4)]}[size]
    argsorts = {"full": [(16384, 1024)], "quick": [(1000, 1000)], "tiny": [(5, 100)]}[size]
    routers = {"full": [(65536, 256, 8), (65536, 8, 2)], "quick": [(4096, 128, 8)], "tiny": [(9, 60, 4), (13, 8, 2)]}[size]
    for dtype in (torch.float32, torch.float16):
        name = str(dtype).replace("torch.", "")
        item = dtype.itemsize
        rows = lambda m, n, dtype=dtype: {"x": torch.randn(m, n, device=device).to(dtype)}
        for m, n in sorts:
            for descending in (False, True):
                yield Case(f"sort {'descending' if descending else 'ascending'} {name}", f"{m}x{n}",
                           inputs=lambda m=m, n=n, rows=rows: rows(m, n),
                           run=lambda mod, i, d=descending: lambda: mod.sort_rows(i["x"], descending=d),
                           reference=lambda i, d=descending: torch.sort(i["x"].double(), 1, descending=d).values,
                           atol=0, rtol=0, bytes=2 * m * n * item)
        for m, n in argsorts:
            # fp16 rows of standard normal values hold ties: the stable order is checked too
            yield Case(f"argsort packed keys {name}", f"{m}x{n}",
                       inputs=lambda m=m, n=n, rows=rows: rows(m, n),
                       run=lambda mod, i: lambda: mod.argsort_rows(i["x"]),
                       reference=lambda i: _sorted_reference(i["x"], False),
                       atol=0, rtol=0, bytes=m * n * (2 * item + 4))
    for m, n, k in topks:
        yield Case(f"topk k={k} float32", f"{m}x{n}",
                   inputs=lambda m=m, n=n: {"x": torch.randn(m, n, device=device)},
                   run=lambda mod, i, k=k: lambda: mod.topk_rows(i["x"], k),
                   reference=lambda i, k=k: torch.topk(i["x"].double(), k, dim=1).values,
                   atol=0, rtol=0, bytes=m * (n + k) * 4)
        yield Case(f"topk k={k} by sorting, with indices float32", f"{m}x{n}",
                   inputs=lambda m=m, n=n: {"x": torch.randn(m, n, device=device)},
                   run=lambda mod, i, k=k: lambda: mod.argsort_rows(i["x"], descending=True, k=k),
                   reference=lambda i, k=k: _sorted_reference(i["x"], True, k),
                   atol=0, rtol=0, bytes=m * (n + 2 * k) * 4)
    for t, e, k in routers:
        yield Case(f"MoE router top-{k} of {e} experts float32", f"{t}x{e}",
                   inputs=lambda t=t, e=e: {"logits": torch.randn(t, e, device=device)},
                   run=lambda mod, i, k=k: lambda: mod.router_topk(i["logits"], k),
                   check=lambda result, i, k=k: _check_router(result, i, k),
                   bytes=t * (e + 2 * k) * 4)
