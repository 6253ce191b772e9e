"""Quantization kernels: int8 row-wise quantize (absmax scale per row, round to nearest
even) and dequantize; fp8 e4m3 quantize with one scale per tensor (an atomic-max pass
for the absmax, then the conversion) and with one scale per token (row); int4 packing,
two signed nibbles per byte (element 2j in the low nibble, 2j+1 in the high one), and
unpacking back to int8 through tl.split / tl.interleave."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from case import Case

FP8_MAX = 448.0  # largest finite float8 e4m3fn


@triton.jit
def int8_quantize_rows_kernel(x_ptr, q_ptr, scale_ptr, N, stride_x, stride_q, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-10)
    q = libdevice.rint(x * (127.0 / absmax))
    tl.store(q_ptr + row * stride_q + cols, q.to(tl.int8), mask=mask)
    tl.store(scale_ptr + row, absmax / 127.0)


@triton.jit
def int8_dequantize_rows_kernel(q_ptr, scale_ptr, out_ptr, N, stride_q, stride_out, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    q = tl.load(q_ptr + row * stride_q + cols, mask=mask, other=0)
    scale = tl.load(scale_ptr + row)
    tl.store(out_ptr + row * stride_out + cols, (q.to(tl.float32) * scale).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def absmax_scale_kernel(x_ptr, scale_ptr, n, FP8_MAX: tl.constexpr, BLOCK: tl.constexpr):
    """scale = max |x| / FP8_MAX over the whole tensor (scale_ptr holds 0 to start)."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.atomic_max(scale_ptr, tl.max(tl.abs(x), axis=0) / FP8_MAX, sem="relaxed")


@triton.jit
def fp8_quantize_static_kernel(x_ptr, y_ptr, scale_ptr, n, FP8_MAX: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    scale = tl.maximum(tl.load(scale_ptr), 1e-12)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.clamp(x / scale, -FP8_MAX, FP8_MAX)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def fp8_quantize_per_token_kernel(x_ptr, y_ptr, scale_ptr, N, stride_x, stride_y,
                                  FP8_MAX: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.maximum(tl.max(tl.abs(x), axis=0) / FP8_MAX, 1e-12)
    y = tl.clamp(x / scale, -FP8_MAX, FP8_MAX)
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(scale_ptr + row, scale)


@triton.jit
def int4_pack_kernel(x_ptr, packed_ptr, M, N, stride_x, stride_packed, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows64 = rows.to(tl.int64)[:, None]
    x = tl.load(x_ptr + rows64 * stride_x + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N), other=0)
    low, high = tl.split(tl.reshape(x, [BLOCK_M, BLOCK_N // 2, 2]))
    packed = (low & 0xF) | (high << 4)
    half = tl.program_id(1) * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
    tl.store(packed_ptr + rows64 * stride_packed + half[None, :], packed.to(tl.uint8, bitcast=True),
             mask=(rows[:, None] < M) & (half[None, :] < N // 2))


@triton.jit
def int4_unpack_kernel(packed_ptr, x_ptr, M, N, stride_packed, stride_x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    half = tl.program_id(1) * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
    rows64 = rows.to(tl.int64)[:, None]
    packed = tl.load(packed_ptr + rows64 * stride_packed + half[None, :],
                     mask=(rows[:, None] < M) & (half[None, :] < N // 2), other=0)
    byte = packed.to(tl.int8, bitcast=True)
    low = (byte << 4) >> 4  # arithmetic shifts sign-extend each nibble
    high = byte >> 4
    x = tl.interleave(low, high)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(x_ptr + rows64 * stride_x + cols[None, :], x, mask=(rows[:, None] < M) & (cols[None, :] < N))


# ----------------------------------------------------------------------------- host wrappers

def _warps(block):
    return 4 if block <= 2048 else 8


def int8_quantize_rows(x):
    M, N = x.shape
    q = torch.empty(M, N, device=x.device, dtype=torch.int8)
    scale = torch.empty(M, device=x.device, dtype=torch.float32)
    block = triton.next_power_of_2(N)
    int8_quantize_rows_kernel[(M,)](x, q, scale, N, x.stride(0), q.stride(0), BLOCK_N=block, num_warps=_warps(block))
    return q, scale


def int8_dequantize_rows(q, scale, dtype):
    M, N = q.shape
    out = torch.empty(M, N, device=q.device, dtype=dtype)
    block = min(triton.next_power_of_2(N), 1024)
    int8_dequantize_rows_kernel[(M, triton.cdiv(N, block))](q, scale, out, N, q.stride(0), out.stride(0), BLOCK_N=block)
    return out


def fp8_quantize_per_tensor(x):
    n = x.numel()
    y = torch.empty(x.shape, device=x.device, dtype=torch.float8_e4m3fn)
    scale = torch.zeros(1, device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(n, 4096),)
    absmax_scale_kernel[grid](x, scale, n, FP8_MAX=FP8_MAX, BLOCK=4096, num_warps=8)
    fp8_quantize_static_kernel[grid](x, y, scale, n, FP8_MAX=FP8_MAX, BLOCK=4096, num_warps=8)
    return y, scale


def fp8_quantize_per_token(x):
    M, N = x.shape
    y = torch.empty(M, N, device=x.device, dtype=torch.float8_e4m3fn)
    scale = torch.empty(M, 1, device=x.device, dtype=torch.float32)
    block = triton.next_power_of_2(N)
    fp8_quantize_per_token_kernel[(M,)](x, y, scale, N, x.stride(0), y.stride(0), FP8_MAX=FP8_MAX, BLOCK_N=block,
                                        num_warps=_warps(block))
    return y, scale


def int4_pack(x):
    M, N = x.shape
    packed = torch.empty(M, N // 2, device=x.device, dtype=torch.uint8)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 256))
    int4_pack_kernel[grid](x, packed, M, N, x.stride(0), packed.stride(0), BLOCK_M=16, BLOCK_N=256)
    return packed


def int4_unpack(packed):
    M, N = packed.shape[0], 2 * packed.shape[1]
    x = torch.empty(M, N, device=packed.device, dtype=torch.int8)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 256))
    int4_unpack_kernel[grid](packed, x, M, N, packed.stride(0), x.stride(0), BLOCK_M=16, BLOCK_N=256)
    return x


# ----------------------------------------------------------------------------- checks

def _check_int8_quantize(result, inputs):
    q, scale = result
    x = inputs["x"].double()
    absmax = x.abs().amax(1)
    if not torch.allclose(scale.double(), absmax / 127, rtol=1e-6, atol=0):
        return f"scales off by up to {float((scale.double() - absmax / 127).abs().max()):.3g}"
    want = torch.round(x * (127 / absmax)[:, None])
    off = (q.double() - want).abs()
    # x * (127 / absmax) rounded in fp32 may fall on the other side of a .5: one step, rarely
    if off.max() > 1 or (off > 0).double().mean() > 1e-3:
        return f"{int((off > 0).sum())} of {q.numel()} values off, by up to {int(off.max())}"
    return None


def _check_fp8(result, inputs):
    y, scale = result
    x = inputs["x"].double()
    per_token = scale.numel() > 1
    absmax = x.abs().amax(1, keepdim=True) if per_token else x.abs().max()
    want_scale = (absmax / FP8_MAX).reshape(scale.shape)
    if not torch.allclose(scale.double(), want_scale, rtol=1e-6, atol=0):
        return f"scales off by up to {float((scale.double() - want_scale).abs().max()):.3g}"
    scaled = (x / scale.double()).clamp(-FP8_MAX, FP8_MAX)
    nearest = scaled.float().to(torch.float8_e4m3fn).double()
    got = y.double()
    # within one e4m3 step (an eighth of the binade) of the exact quotient, and nearly always the nearest
    bound = 0.125 * scaled.abs() + 2.0 ** -9
    if ((got - scaled).abs() > bound).any() or torch.isnan(got).any():
        return f"{int(((got - scaled).abs() > bound).sum())} values more than one e4m3 step away"
    if (got != nearest).double().mean() > 1e-3:
        return f"{int((got != nearest).sum())} of {got.numel()} values not rounded to nearest"
    return None


def _pack_reference(x):
    x = x.to(torch.int16)
    return ((x[:, 0::2] & 0xF) | ((x[:, 1::2] & 0xF) << 4)).to(torch.uint8)


def cases(device, size):
    shapes = {"full": [(16384, 4096)], "quick": [(1024, 1000)], "tiny": [(5, 300)]}[size]
    even = {"full": [(16384, 4096)], "quick": [(1024, 1000)], "tiny": [(21, 302)]}[size]
    for m, n in shapes:
        for dtype in (torch.float32, torch.float16):
            name = str(dtype).replace("torch.", "")
            yield Case(f"int8 row-wise quantize {name}", f"{m}x{n}",
                       inputs=lambda m=m, n=n, dtype=dtype: {"x": torch.randn(m, n, device=device).to(dtype)},
                       run=lambda mod, i: lambda: mod.int8_quantize_rows(i["x"]),
                       check=_check_int8_quantize, bytes=m * n * (dtype.itemsize + 1))
            yield Case(f"int8 row-wise dequantize to {name}", f"{m}x{n}",
                       inputs=lambda m=m, n=n: {"q": torch.randint(-127, 128, (m, n), device=device, dtype=torch.int8),
                                                "scale": torch.rand(m, device=device) / 100},
                       run=lambda mod, i, dtype=dtype: lambda: mod.int8_dequantize_rows(i["q"], i["scale"], dtype),
                       reference=lambda i: i["q"].double() * i["scale"].double()[:, None],
                       atol=0 if dtype == torch.float32 else 2.0 ** -25,  # half an fp16 subnormal step
                       rtol=2.0 ** -24 if dtype == torch.float32 else 2.0 ** -11,
                       bytes=m * n * (dtype.itemsize + 1))
        yield Case("fp8 e4m3 per-tensor quantize bf16", f"{m}x{n}",
                   inputs=lambda m=m, n=n: {"x": (3 * torch.randn(m, n, device=device)).to(torch.bfloat16)},
                   run=lambda mod, i: lambda: mod.fp8_quantize_per_tensor(i["x"]),
                   check=_check_fp8, bytes=m * n * (2 * 2 + 1), needs=(8, 9))
        yield Case("fp8 e4m3 per-token quantize bf16", f"{m}x{n}",
                   inputs=lambda m=m, n=n: {"x": (3 * torch.randn(m, n, device=device)).to(torch.bfloat16)},
                   run=lambda mod, i: lambda: mod.fp8_quantize_per_token(i["x"]),
                   check=_check_fp8, bytes=m * n * (2 + 1), needs=(8, 9))
    for m, n in even:
        yield Case("int4 pack", f"{m}x{n}",
                   inputs=lambda m=m, n=n: {"x": torch.randint(-8, 8, (m, n), device=device, dtype=torch.int8)},
                   run=lambda mod, i: lambda: mod.int4_pack(i["x"]),
                   reference=lambda i: _pack_reference(i["x"]),
                   atol=0, rtol=0, bytes=m * n * 3 // 2)
        yield Case("int4 unpack", f"{m}x{n}",
                   inputs=lambda m=m, n=n: {"packed": torch.randint(0, 256, (m, n // 2), device=device, dtype=torch.uint8)},
                   run=lambda mod, i: lambda: mod.int4_unpack(i["packed"]),
                   reference=lambda i: torch.stack([(i["packed"].to(torch.int16) << 12 >> 12),
                                                    (i["packed"].to(torch.int16) << 8 >> 12)], -1).flatten(1),
                   atol=0, rtol=0, bytes=m * n * 3 // 2)
