"""Histograms and scatter-adds: tl.histogram of each block of integers, its counts added
into global bins with one atomic per bin (a byte histogram, 256 bins, and int32 values,
1024 bins); a histogram of floats over [lo, hi) (torch.histc's binning) with an atomic
increment per element, and the same binning counted per block by tl.histogram; and
index_add (out[index[i], :] += alpha * src[i, :]) with fp32 atomics."""
import torch
import triton
import triton.language as tl

from case import Case


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0).to(tl.int32)
    # tl.histogram leaves values outside [0, NUM_BINS) unspecified: mask them off
    counts = tl.histogram(x, NUM_BINS, mask=(offs < n) & (x >= 0) & (x < NUM_BINS))
    tl.atomic_add(bins_ptr + tl.arange(0, NUM_BINS), counts, sem="relaxed")


@triton.jit
def histc_kernel(x_ptr, bins_ptr, n, lo, hi, scale, NUM_BINS: tl.constexpr, PER_BLOCK: tl.constexpr,
                 BLOCK: tl.constexpr):
    """Counts x in NUM_BINS equal bins over [lo, hi); bin = floor((x - lo) * scale)."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=hi)
    valid = (offs < n) & (x >= lo) & (x < hi)
    bin = tl.minimum(((x - lo) * scale).to(tl.int32), NUM_BINS - 1)
    bin = tl.where(valid, bin, 0)
    if PER_BLOCK:  # count the block first: one atomic per bin instead of one per element
        counts = tl.histogram(bin, NUM_BINS, mask=valid)
        tl.atomic_add(bins_ptr + tl.arange(0, NUM_BINS), counts, sem="relaxed")
    else:
        tl.atomic_add(bins_ptr + bin, 1, mask=valid, sem="relaxed")


@triton.jit
def index_add_kernel(out_ptr, src_ptr, index_ptr, alpha, S, D, stride_out, stride_src,
                     BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_mask = rows < S
    mask = row_mask[:, None] & (cols[None, :] < D)
    target = tl.load(index_ptr + rows, mask=row_mask, other=0)
    src = tl.load(src_ptr + rows.to(tl.int64)[:, None] * stride_src + cols[None, :], mask=mask, other=0.0)
    tl.atomic_add(out_ptr + target[:, None] * stride_out + cols[None, :], alpha * src, mask=mask, sem="relaxed")


# ----------------------------------------------------------------------------- host wrappers

def histogram(x, num_bins):
    """Counts of the values 0 .. num_bins - 1 in the integer tensor x."""
    n = x.numel()
    bins = torch.zeros(num_bins, device=x.device, dtype=torch.int32)
    histogram_kernel[(triton.cdiv(n, 8192),)](x, bins, n, NUM_BINS=num_bins, BLOCK=8192, num_warps=8)
    return bins


def histc(x, num_bins, lo, hi, per_block=False):
    n = x.numel()
    bins = torch.zeros(num_bins, device=x.device, dtype=torch.int32)
    block = 4096
    histc_kernel[(triton.cdiv(n, block),)](x, bins, n, lo, hi, num_bins / (hi - lo), NUM_BINS=num_bins,
                                           PER_BLOCK=per_block, BLOCK=block, num_warps=8)
    return bins


def index_add(out, index, src, alpha=1.0):
    """out.index_add(0, index, src, alpha=alpha), into a copy of out."""
    out = out.clone()
    S, D = src.shape
    block_d = min(triton.next_power_of_2(D), 256)
    grid = (triton.cdiv(S, 16), triton.cdiv(D, block_d))
    index_add_kernel[grid](out, src, index, alpha, S, D, out.stride(0), src.stride(0), BLOCK_S=16, BLOCK_D=block_d)
    return out


def _histc_reference(x, num_bins, lo, hi):
    """The kernel's binning, computed the same way in fp32, then counted."""
    scale = num_bins / (hi - lo)
    valid = (x >= lo) & (x < hi)
    bins = ((x[valid] - lo) * scale).to(torch.int32).clamp(max=num_bins - 1)
    return torch.bincount(bins.long(), minlength=num_bins)


def cases(device, size):
    ns = {"full": [1 << 26], "quick": [1 << 20], "tiny": [10007]}[size]
    adds = {"full": [(65536, 1024, 4096)], "quick": [(8192, 512, 1000)], "tiny": [(50, 37, 7)]}[size]
    for n in ns:
        yield Case("histogram tl.histogram uint8, 256 bins", f"n={n}",
                   inputs=lambda n=n: {"x": torch.randint(0, 256, (n,), device=device, dtype=torch.uint8)},
                   run=lambda m, i: lambda: m.histogram(i["x"], 256),
                   reference=lambda i: torch.bincount(i["x"].long(), minlength=256),
                   atol=0, rtol=0, bytes=n)
        # values beyond the bins (negative, or >= 1024) are not counted
        yield Case("histogram tl.histogram int32, 1024 bins", f"n={n}",
                   inputs=lambda n=n: {"x": torch.randint(-50, 1100, (n,), device=device, dtype=torch.int32)},
                   run=lambda m, i: lambda: m.histogram(i["x"], 1024),
                   reference=lambda i: torch.bincount(i["x"][(i["x"] >= 0) & (i["x"] < 1024)].long(), minlength=1024),
                   atol=0, rtol=0, bytes=4 * n)
        for per_block in (False, True):
            yield Case(f"histc fp32 1024 bins, {'tl.histogram per block' if per_block else 'atomic per element'}",
                       f"n={n}",
                       inputs=lambda n=n: {"x": torch.randn(n, device=device)},
                       run=lambda m, i, per_block=per_block: lambda: m.histc(i["x"], 1024, -4.0, 4.0, per_block),
                       reference=lambda i: _histc_reference(i["x"], 1024, -4.0, 4.0),
                       atol=0, rtol=0, bytes=4 * n)
    for s, d, v in adds:
        yield Case("index_add fp32 atomics", f"src {s}x{d} into {v}x{d}",
                   inputs=lambda s=s, d=d, v=v: {"out": torch.randn(v, d, device=device),
                                                 "src": torch.randn(s, d, device=device),
                                                 "index": torch.randint(0, v, (s,), device=device)},
                   run=lambda m, i: lambda: m.index_add(i["out"], i["index"], i["src"], alpha=0.5),
                   reference=lambda i: i["out"].double().index_add(0, i["index"], i["src"].double(), alpha=0.5),
                   atol=1e-5, rtol=1e-5, bytes=s * d * 4 + s * 8 + 3 * v * d * 4)
