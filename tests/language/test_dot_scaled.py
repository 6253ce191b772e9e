"""tl.dot_scaled: microscaled (OCP MX) operands, fp4 e2m1 / fp8 e4m3, e5m2 / bf16 / fp16 with
e8m0 scales, on both backends, against a NumPy reference that decodes, scales and rounds
each operand to the compute type (bf16, or fp16 when a format is fp16) as the emulation
on GPUs without a scaled instruction does, then multiplies in float64."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float64)
M, N, K = 32, 32, 64


def decode_e2m1(codes: np.ndarray) -> np.ndarray:
    return np.where(codes & 8, -1.0, 1.0) * E2M1[codes & 7]


def unpack(packed: np.ndarray, axis: int) -> np.ndarray:
    """Two e2m1 codes per byte along `axis`, the low nibble first."""
    pair = np.stack([packed & 0xF, packed >> 4], axis=axis + 1)
    shape = list(packed.shape)
    shape[axis] *= 2
    return decode_e2m1(pair.reshape(shape))


def random_operand(fmt: str, shape: tuple[int, int], k_axis: int, k_pack: bool, rng):
    """(what the kernel loads, its decoded float64 values [rows, cols] before scaling)."""
    if fmt == "e2m1":
        axis = k_axis if k_pack else 1 - k_axis
        packed_shape = list(shape)
        packed_shape[axis] //= 2
        stored = rng.integers(0, 256, packed_shape).astype(np.uint8)
        return stored, unpack(stored, axis)
    if fmt in ("e4m3", "e5m2"):
        kind = ml_dtypes.float8_e4m3fn if fmt == "e4m3" else ml_dtypes.float8_e5m2
        values = (rng.standard_normal(shape) * 4).astype(np.float32).astype(kind)
        return values.view(np.uint8), values.astype(np.float64)
    kind = ml_dtypes.bfloat16 if fmt == "bf16" else np.float16
    values = rng.standard_normal(shape).astype(kind)
    return values, values.astype(np.float64)


def scaled(values: np.ndarray, scale: np.ndarray | None, k_axis: int, compute) -> np.ndarray:
    if scale is not None:
        if scale.dtype == np.uint8:  # e8m0 exponents
            factor = np.where(scale == 255, np.nan, np.exp2(scale.astype(np.float64) - 127))
        else:  # fp8 e4m3 factors (NVFP4)
            factor = scale.astype(np.float64)
        factor = np.repeat(factor, values.shape[k_axis] // scale.shape[1], axis=1)  # [rows, K]
        values = values * (factor if k_axis == 1 else factor.T)
    return values.astype(np.float32).astype(compute).astype(np.float64)


@tilec.jit
def mx_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr,
              AR: tl.constexpr, AC: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr,
              M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, A_FMT: tl.constexpr, B_FMT: tl.constexpr,
              A_KPACK: tl.constexpr, B_KPACK: tl.constexpr, B_SCALED: tl.constexpr, G: tl.constexpr = 32):
    a = tl.load(a_ptr + tl.arange(0, AR)[:, None] * AC + tl.arange(0, AC)[None, :])
    b = tl.load(b_ptr + tl.arange(0, BR)[:, None] * BC + tl.arange(0, BC)[None, :])
    a_scale = tl.load(a_scale_ptr + tl.arange(0, M)[:, None] * (K // G) + tl.arange(0, K // G)[None, :])
    if B_SCALED:
        b_scale = tl.load(b_scale_ptr + tl.arange(0, N)[:, None] * (K // G) + tl.arange(0, K // G)[None, :])
    else:
        b_scale = None
    acc = tl.full((M, N), 0.25, tl.float32)
    c = tl.dot_scaled(a, a_scale, A_FMT, b, b_scale, B_FMT, acc, lhs_k_pack=A_KPACK, rhs_k_pack=B_KPACK)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


def run_case(backend, a_fmt, b_fmt, a_kpack=True, b_kpack=True, b_scaled=True, scale_range=(118, 136), seed=0,
             nan_group=False, nvfp4=False, int8_scales=False):
    """`nvfp4`: fp8 e4m3 scale factors, one per 16 elements of K (else e8m0 exponents,
    one per 32; `int8_scales`: their bits passed as int8, as Triton's tests do)."""
    rng = np.random.default_rng(seed)
    a_stored, a_values = random_operand(a_fmt, (M, K), 1, a_kpack, rng)
    b_stored, b_values = random_operand(b_fmt, (K, N), 0, b_kpack, rng)
    group = 16 if nvfp4 else 32
    if nvfp4:
        a_scale, b_scale = ((rng.uniform(0.01, 8, (rows, K // group)) * rng.choice([-1, 1], (rows, K // group)))
                            .astype(ml_dtypes.float8_e4m3fn) for rows in (M, N))
    else:
        a_scale = rng.integers(*scale_range, (M, K // 32)).astype(np.uint8)
        b_scale = rng.integers(*scale_range, (N, K // 32)).astype(np.uint8)
    if nan_group:
        a_scale[3, 1] = 255
    compute = np.float16 if "fp16" in (a_fmt, b_fmt) else ml_dtypes.bfloat16
    a_ref = scaled(a_values, a_scale, 1, compute)
    b_ref = scaled(b_values, b_scale if b_scaled else None, 0, compute)
    with np.errstate(invalid="ignore"):
        want = a_ref @ b_ref + 0.25
        size = np.abs(a_ref) @ np.abs(b_ref) + 0.25
    c = device_array(np.full((M, N), -7.0, np.float32), backend)
    passed = (a_scale.view(np.int8), b_scale.view(np.int8)) if int8_scales else (a_scale, b_scale)
    mx_kernel[(1,)](device_array(a_stored, backend), device_array(passed[0], backend), device_array(b_stored, backend),
                    device_array(passed[1], backend), c, AR=a_stored.shape[0], AC=a_stored.shape[1],
                    BR=b_stored.shape[0], BC=b_stored.shape[1], M=M, N=N, K=K, A_FMT=a_fmt, B_FMT=b_fmt,
                    A_KPACK=a_kpack, B_KPACK=b_kpack, B_SCALED=b_scaled, G=group)
    got = to_numpy(c).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.all(np.abs(got[ok] - want[ok]) <= 1e-6 * size[ok] + 1e-30), np.max(np.abs(got[ok] - want[ok]))
    return want


FORMAT_PAIRS = [("e2m1", "e2m1"), ("e4m3", "e4m3"), ("e5m2", "e4m3"), ("e2m1", "e5m2"), ("e4m3", "bf16"),
                ("bf16", "e2m1"), ("fp16", "e4m3")]


@pytest.mark.parametrize("a_fmt, b_fmt", FORMAT_PAIRS, ids=[f"{a}-{b}" for a, b in FORMAT_PAIRS])
def test_dot_scaled_formats(backend, a_fmt, b_fmt):
    if backend == "gpu" and {a_fmt, b_fmt} & {"e4m3", "e5m2"}:
        import torch
        if torch.cuda.get_device_capability() < (8, 9):
            pytest.skip("fp8 conversions need sm_89 or newer")
    scale_range = (124, 131) if "fp16" in (a_fmt, b_fmt) else (118, 136)  # fp16's range is narrow
    run_case(backend, a_fmt, b_fmt, scale_range=scale_range, seed=len(a_fmt + b_fmt))


@pytest.mark.parametrize("a_kpack, b_kpack", [(False, True), (True, False), (False, False)])
def test_dot_scaled_fp4_packed_along_m_or_n(backend, a_kpack, b_kpack):
    run_case(backend, "e2m1", "e2m1", a_kpack, b_kpack, seed=3)


def test_dot_scaled_unscaled_rhs_nan_scale_and_tiny_scales(backend):
    run_case(backend, "e2m1", "bf16", b_scaled=False, seed=5)
    want = run_case(backend, "e2m1", "e2m1", nan_group=True, seed=6)
    assert np.isnan(want[3]).all() and not np.isnan(want[4]).any()  # the NaN group's row only
    run_case(backend, "e2m1", "e2m1", scale_range=(0, 4), seed=7)  # 2**-127 and up: subnormal scales


def test_dot_scaled_int8_scales_are_e8m0_bits(backend):
    """int8 scales (Triton's tests pass them so) hold the same e8m0 bits as uint8 ones:
    scales from 118 to 150 include bytes above 127, negative as int8."""
    run_case(backend, "e2m1", "e4m3" if backend != "gpu" or _has_fp8_conversions() else "e2m1",
             scale_range=(118, 150), seed=13, int8_scales=True)


def test_dot_scaled_nvfp4_fp8_scales_per_16(backend):
    """NVFP4 (Triton's tutorial 10): e2m1 operands with float8e4nv scale factors, one per
    16 elements of K; fp8 operands take them too."""
    run_case(backend, "e2m1", "e2m1", nvfp4=True, seed=11)
    if backend != "gpu" or _has_fp8_conversions():
        run_case(backend, "e4m3", "e2m1", nvfp4=True, seed=12)


def test_dot_scaled_nvfp4_compiles_for_blackwell():
    """Tutorial 10's kernels are Blackwell-only; their product compiles for sm_100a."""
    kernel = mx_kernel.warmup("*u8", "*fp8e4nv", "*u8", "*fp8e4nv", "*fp32", AR=M, AC=K // 2, BR=K // 2, BC=N, M=M,
                              N=N, K=K, A_FMT="e2m1", B_FMT="e2m1", A_KPACK=True, B_KPACK=True, B_SCALED=True, G=16,
                              grid=(1,), target="sm_100a")
    assert kernel.asm["cubin"] and ".target sm_100a" in kernel.asm["ptx"]


def _has_fp8_conversions() -> bool:
    import torch
    return torch.cuda.get_device_capability() >= (8, 9)


@tilec.jit
def bad_mx_kernel(a_ptr, s_ptr, CASE: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    s = tl.load(s_ptr + tl.arange(0, 32)[:, None] + tl.arange(0, 4)[None, :])
    if CASE == 0:
        tl.dot_scaled(a, s, "e3m4", a, None, "e4m3")
    elif CASE == 1:
        tl.dot_scaled(a, s, "e4m3", a, None, "e4m3")
    elif CASE == 2:
        tl.dot_scaled(a, None, "e4m3", a, None, "e4m3", lhs_k_pack=False)
    else:
        tl.dot_scaled(a.to(tl.float32), None, "e4m3", a, None, "e4m3")


@pytest.mark.parametrize("case, message", [
    (0, r"formats are 'e2m1', 'e4m3', 'e5m2', 'bf16', 'fp16', got 'e3m4'"),
    (1, r"lhs_scale has shape \[32, 4\]; with lhs of 32 elements along K it must be \[32, 1\] \(one scale per "
        r"32 elements of K\) or \[32, 2\] \(one per 16\)"),
    (2, r"only e2m1 operands can be packed along a dimension other than K"),
    (3, r"a e4m3 operand is fp8e4nv or its uint8 bits; lhs is fp32"),
])
def test_dot_scaled_errors(case, message):
    with pytest.raises(tilec.CompilationError, match=message):
        bad_mx_kernel.warmup("*u8", "*u8", CASE=case, grid=(1,))
