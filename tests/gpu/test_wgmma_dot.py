"""tl.dot on wgmma (config.wgmma, the default on sm_90): f16 and bf16 dots of several shapes and
warp counts, operands stored either way round, single tiles and a K loop with masks,
against float64 NumPy products. Also run without a GPU: the kernels must compile to
PTX holding wgmma (tests/codegen checks that part in CI)."""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.config import config

DTYPES = {"fp16": (np.float16, "f16"), "bf16": (ml_dtypes.bfloat16, "bf16")}


@pytest.fixture
def wgmma(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "wgmma", True)
    monkeypatch.setattr(config, "interpret", False)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))


def _gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("wgmma needs an sm_90 GPU")
    return torch


@tilec.jit
def tile_kernel(a_ptr, b_ptr, c_ptr, sam, sak, sbk, sbn, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * sam + rk[None, :] * sak)
    b = tl.load(b_ptr + rk[:, None] * sbk + rn[None, :] * sbn)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


def assert_product(c, a, b):
    """c (a CUDA fp32 tensor) is a @ b up to fp32 accumulation: float64 reference, error
    bounded relative to the largest |a| @ |b|."""
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))).max()
    np.testing.assert_allclose(c.cpu().numpy(), want, rtol=0, atol=2e-6 * scale + 1e-6)


def _device(x, torch):
    bits = np.ascontiguousarray(x).view(np.uint16)
    t = torch.from_numpy(bits.copy()).cuda()
    return t.view(torch.bfloat16 if x.dtype == ml_dtypes.bfloat16 else torch.float16)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("m, n, k, warps, a_col_major, b_col_major", [
    (64, 64, 32, 4, False, False), (128, 128, 64, 4, False, True), (128, 256, 64, 8, True, False),
    (64, 256, 32, 8, False, False), (256, 128, 128, 8, True, True), (64, 32, 16, 4, False, False),
])
def test_wgmma_tile(wgmma, dtype, m, n, k, warps, a_col_major, b_col_major):
    torch = _gpu()
    np_ty, _ = DTYPES[dtype]
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np_ty)
    b = rng.standard_normal((k, n)).astype(np_ty)
    a_store = np.ascontiguousarray(a.T) if a_col_major else a
    b_store = np.ascontiguousarray(b.T) if b_col_major else b
    sam, sak = (1, m) if a_col_major else (k, 1)
    sbk, sbn = (1, k) if b_col_major else (n, 1)
    c = torch.full((m, n), float("nan"), device="cuda")
    tile_kernel[(1,)](_device(a_store, torch), _device(b_store, torch), c, sam, sak, sbk, sbn, M=m, N=n, K=k,
                      num_warps=warps)
    assert_product(c, a, b)


@tilec.jit
def loop_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), ACC)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=ACC)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps", [
    (200, 300, 250, 128, 128, 64, 4), (333, 129, 97, 64, 128, 32, 4), (256, 512, 128, 128, 256, 64, 8),
])
def test_wgmma_k_loop_with_masks(wgmma, dtype, m, n, k, bm, bn, bk, warps):
    torch = _gpu()
    np_ty, _ = DTYPES[dtype]
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k)).astype(np_ty)
    b = rng.standard_normal((k, n)).astype(np_ty)
    c = torch.full((m, n), float("nan"), device="cuda")
    grid = (-(-m // bm), -(-n // bn))
    loop_kernel[grid](_device(a, torch), _device(b, torch), c, m, n, k, k, 1, n, 1, n, 1, BM=bm, BN=bn, BK=bk,
                      ACC=tl.float32, num_warps=warps)
    assert_product(c, a, b)


def test_wgmma_kernels_compile_to_wgmma(wgmma):
    """Without a GPU too: the PTX of an sm_90 dot holds the warpgroup instructions."""
    kernel = tilec.compile(tile_kernel, signature={"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp32:16",
                                                   "sam": "i32", "sak": "i32", "sbk": "i32", "sbn": "i32"},
                           constexprs={"M": 128, "N": 128, "K": 64}, target="sm_90")
    ptx = kernel.asm["ptx"]
    for piece in ("fence.proxy.async.shared::cta", "wgmma.fence.sync.aligned", "wgmma.mma_async.sync.aligned.m64n128k16",
                  "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned"):
        assert piece in ptx, piece
    assert "mma.sync" not in ptx


@tilec.jit
def pipelined_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 03's loop (masks on K only, sizes divisible by 16): its operand loads
    become cp.async copies into NVMMA rings, which the wgmma dots read."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * sbk
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


PIPELINED = [(256, 384, 320, 128, 128, 64, 4, 4), (512, 256, 1024, 128, 256, 64, 8, 3),
             (192, 128, 96, 64, 128, 32, 4, 3)]
PIPELINED_SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp32:16", "M": "i32:16", "N": "i32:16",
                       "K": "i32:16", "sam": "i32:16", "sbk": "i32:16", "scm": "i32:16"}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps, stages", PIPELINED)
def test_wgmma_pipelined_matmul(wgmma, dtype, m, n, k, bm, bn, bk, warps, stages):
    torch = _gpu()
    np_ty, _ = DTYPES[dtype]
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k)).astype(np_ty)
    b = rng.standard_normal((k, n)).astype(np_ty)
    c = torch.full((m, n), float("nan"), device="cuda")
    grid = (-(-m // bm), -(-n // bn))
    pipelined_kernel[grid](_device(a, torch), _device(b, torch), c, m, n, k, k, n, n, BM=bm, BN=bn, BK=bk,
                           num_warps=warps, num_stages=stages)
    assert_product(c, a, b)


def test_wgmma_operands_are_pipelined(wgmma):
    """The loads become cp.async into NVMMA rings whose slots the dot reads directly."""
    kernel = tilec.compile(pipelined_kernel, signature=PIPELINED_SIGNATURE,
                           constexprs={"BM": 128, "BN": 128, "BK": 64}, target="sm_90", num_stages=3)
    ttgir, ptx = kernel.asm["ttgir"], kernel.asm["ptx"]
    assert "tilegpu.async_copy_global_to_local" in ttgir and "nvmma_shared" in ttgir
    assert '"tilegpu.local_alloc"(%' not in ttgir.split("scf.for")[1]  # no staging copy left in the loop
    assert "cp.async.cg.shared.global" in ptx and "wgmma.mma_async" in ptx


@tilec.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, n_ctx, scale, D: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr, CAUSAL: tl.constexpr, DTYPE: tl.constexpr):
    """A chain of dots (attention with the online softmax): q @ k reads both operands from
    shared memory, p @ v takes p as wgmma's A operand straight from registers."""
    start_m = tl.program_id(0)
    rm = start_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :], mask=rm[:, None] < n_ctx, other=0.0)
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    hi = tl.minimum((start_m + 1) * BM, n_ctx) if CAUSAL else n_ctx
    for start_n in range(0, hi, BN):
        rn = start_n + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[None, :] * D + rd[:, None], mask=rn[None, :] < n_ctx, other=0.0)
        qk = tl.dot(q, k) * scale
        keep = rn[None, :] < n_ctx
        if CAUSAL:
            keep = keep & (rm[:, None] >= rn[None, :])
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :], mask=rn[:, None] < n_ctx, other=0.0)
        acc = tl.dot(p.to(DTYPE), v, acc * alpha[:, None])
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc / l_i[:, None], mask=rm[:, None] < n_ctx)


def _attention_reference(q, k, v, scale, causal):
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
    p = np.exp(s - s.max(1, keepdims=True))
    return (p / p.sum(1, keepdims=True)) @ v.astype(np.float64)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("n_ctx, d, bm, bn, warps, causal", [
    (256, 64, 128, 64, 8, False), (300, 64, 128, 64, 8, True), (256, 128, 128, 128, 8, False),
    (200, 128, 64, 32, 4, True), (384, 64, 128, 32, 4, False), (130, 32, 64, 64, 4, True),
])
def test_wgmma_attention(wgmma, dtype, n_ctx, d, bm, bn, warps, causal):
    torch = _gpu()
    np_ty, tl_name = DTYPES[dtype]
    rng = np.random.default_rng(n_ctx + d)
    q, k, v = (rng.standard_normal((n_ctx, d)).astype(np_ty) for _ in range(3))
    o = torch.full((n_ctx, d), float("nan"), device="cuda")
    scale = 1.0 / np.sqrt(d)
    attention_kernel[(-(-n_ctx // bm),)](_device(q, torch), _device(k, torch), _device(v, torch), o, n_ctx, scale,
                                         D=d, BM=bm, BN=bn, CAUSAL=causal,
                                         DTYPE=tl.float16 if tl_name == "f16" else tl.bfloat16, num_warps=warps)
    want = _attention_reference(q, k, v, scale, causal)
    # p is rounded to the operand type before p @ v: a relative error of 2^-8 (bf16) or 2^-11.
    tol = 2e-2 if dtype == "bf16" else 4e-3
    np.testing.assert_allclose(o.cpu().numpy(), want, rtol=0, atol=tol)


def test_wgmma_attention_reads_p_from_registers(wgmma):
    """Without a GPU: both dots of the chain are wgmma; p @ v's A operand is four
    registers (`{%r..}` after the accumulator), not a descriptor, q, loaded once, is
    staged in shared memory once, before the loop, and p @ v stays in flight."""
    kernel = tilec.compile(attention_kernel, signature={"q_ptr": "*fp16:16", "k_ptr": "*fp16:16", "v_ptr": "*fp16:16",
                                                        "o_ptr": "*fp32:16", "n_ctx": "i32", "scale": "fp32"},
                           constexprs={"D": 64, "BM": 128, "BN": 64, "CAUSAL": False, "DTYPE": tl.float16},
                           target="sm_90", num_warps=8)
    ptx, ttgir = kernel.asm["ptx"], kernel.asm["ttgir"]
    instructions = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16 \{[^}]*\}, (\{|%rd)", ptx)
    assert instructions.count("%rd") == 4 and instructions.count("{") == 4, instructions
    assert "mma.sync" not in ptx
    loop = ttgir.split("scf.for")[1]
    assert '"tilegpu.local_alloc"(%' not in loop
    # p @ v's group runs on into the next iteration (wait for all but the newest), and
    # the carried accumulator passes a wait {0} before `acc * alpha` reads it, after the
    # next q @ k was issued.
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx)
    body = loop.split("scf.yield")[0]
    assert body.index('"tilegpu.wgmma_wait"') > body.index('"tile.dot"')  # after q @ k
    assert "tilegpu.wgmma_pending = 1" in body
    # q @ k starts from zero: its first instruction per tile ignores D (scale-d 0, the
    # nvvm op's predicate set from 0) and no accumulator register is zeroed for it.
    found = re.findall(r"setp\.ne\.b32\s+p,\s*(\d+),\s*0;\s*wgmma\.mma_async[^{]*\{[^}]*\}, (%rd|\{)", ptx)
    qk = [scale for scale, a in found if a == "%rd"]
    assert qk == ["0", "1", "1", "1"], found
    # Each descriptor is one 64-bit add to its operand's start field.
    assert not re.search(r"or\.b64\s+%rd\d+, %rd\d+, \d+;\s*\n\s*wgmma", ptx)


# 8-bit operands: wgmma reads them K-major only, so an operand stored the other way
# round is transposed on its way into shared memory. fp8 e4m3 and e5m2 (either order)
# accumulate in fp32, int8 in int32 (wrapping).
EIGHT_BIT = {"e4m3": (ml_dtypes.float8_e4m3fn, "fp8e4nv"), "e5m2": (ml_dtypes.float8_e5m2, "fp8e5"),
             "int8": (np.int8, "i8")}


def _device8(x, torch):
    t = torch.from_numpy(np.ascontiguousarray(x).view(np.uint8).copy()).cuda()
    return t.view({np.dtype(np.int8): torch.int8, np.dtype(ml_dtypes.float8_e4m3fn): torch.float8_e4m3fn,
                   np.dtype(ml_dtypes.float8_e5m2): torch.float8_e5m2}[x.dtype])


def _random8(rng, shape, np_ty):
    if np_ty == np.int8:
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.standard_normal(shape).astype(np_ty)


def _check8(c, a, b):
    """int8: exact (int32). fp8: Hopper's fp8 tensor cores accumulate with about 13
    mantissa bits, not fp32's 23 (Triton's default, `max_num_imprecise_acc` unlimited, lets
    them; its results here are the same bits): errors measured up to 2^-12 of the largest
    |a| @ |b|, allowed up to 2^-10."""
    if a.dtype == np.int8:
        want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
        np.testing.assert_array_equal(c.cpu().numpy(), want)
        return
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))).max()
    np.testing.assert_allclose(c.cpu().numpy(), want, rtol=0, atol=scale / 1024)


@pytest.mark.gpu
@pytest.mark.parametrize("types", [("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e4m3", "e5m2"), ("int8", "int8")])
@pytest.mark.parametrize("m, n, k, warps, a_col_major, b_col_major", [
    (64, 64, 32, 4, False, True), (128, 128, 64, 4, False, False), (128, 256, 128, 8, True, True),
    (64, 32, 64, 4, True, False),
])
def test_wgmma_8bit_tile(wgmma, types, m, n, k, warps, a_col_major, b_col_major):
    torch = _gpu()
    (a_ty, a_name), (b_ty, b_name) = EIGHT_BIT[types[0]], EIGHT_BIT[types[1]]
    rng = np.random.default_rng(m + n + k)
    a, b = _random8(rng, (m, k), a_ty), _random8(rng, (k, n), b_ty)
    a_store = np.ascontiguousarray(a.T) if a_col_major else a
    b_store = np.ascontiguousarray(b.T) if b_col_major else b
    sam, sak = (1, m) if a_col_major else (k, 1)
    sbk, sbn = (1, k) if b_col_major else (n, 1)
    integer = a_ty == np.int8
    c = torch.full((m, n), -12345 if integer else float("nan"), device="cuda",
                   dtype=torch.int32 if integer else torch.float32)
    tile_kernel[(1,)](_device8(a_store, torch), _device8(b_store, torch), c, sam, sak, sbk, sbn, M=m, N=n, K=k,
                      num_warps=warps)
    _check8(c, a, b)


@tilec.jit
def strided_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 03's loop with both operands' strides: its fp8 case passes B transposed
    (K contiguous), which the pipeline copies straight into K-major NVMMA rings."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), tl.int32 if a_ptr.dtype.element_ty == tl.int8 else tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(EIGHT_BIT))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps, stages, b_k_major", [
    (256, 384, 320, 128, 128, 64, 4, 4, True), (512, 256, 1024, 128, 256, 128, 8, 3, True),
    (192, 128, 96, 64, 128, 32, 4, 3, False),
])
def test_wgmma_8bit_pipelined_matmul(wgmma, dtype, m, n, k, bm, bn, bk, warps, stages, b_k_major):
    torch = _gpu()
    np_ty, _ = EIGHT_BIT[dtype]
    rng = np.random.default_rng(13)
    a, b = _random8(rng, (m, k), np_ty), _random8(rng, (k, n), np_ty)
    b_dev = _device8(b.T, torch).t() if b_k_major else _device8(b, torch)  # a transposed view, as tutorial 03
    integer = np_ty == np.int8
    c = torch.full((m, n), -12345 if integer else float("nan"), device="cuda",
                   dtype=torch.int32 if integer else torch.float32)
    grid = (-(-m // bm), -(-n // bn))
    strided_matmul_kernel[grid](_device8(a, torch), b_dev, c, m, n, k, k, 1, b_dev.stride(0), b_dev.stride(1), n,
                                BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)
    _check8(c, a, b)


@pytest.mark.parametrize("a_ty, b_ty, want", [
    ("fp8e4nv", "fp8e4nv", "m64n128k32.f32.e4m3.e4m3"), ("fp8e5", "fp8e4nv", "m64n128k32.f32.e5m2.e4m3"),
    ("i8", "i8", "m64n128k32.s32.s8.s8")])
def test_wgmma_8bit_operands_are_pipelined(wgmma, a_ty, b_ty, want):
    """Without a GPU: an 8-bit matmul with B K-major (tutorial 03's fp8 case) runs on
    wgmma with both operands copied by cp.async into K-major NVMMA rings."""
    out = "i32" if a_ty == "i8" else "fp32"
    signature = {"a_ptr": f"*{a_ty}:16", "b_ptr": f"*{b_ty}:16", "c_ptr": f"*{out}:16", "M": "i32:16",
                 "N": "i32:16", "K": "i32:16", "sam": "i32:16", "sbn": "i32:16", "scm": "i32:16"}
    kernel = tilec.compile(strided_matmul_kernel, signature=signature, target="sm_90", num_stages=3,
                           constexprs={"BM": 128, "BN": 128, "BK": 128, "sak": 1, "sbk": 1})
    ttgir, ptx = kernel.asm["ttgir"], kernel.asm["ptx"]
    assert f"wgmma.mma_async.sync.aligned.{want}" in ptx and "mma.sync" not in ptx
    assert "cp.async.cg.shared.global" in ptx and "tilegpu.async_copy_global_to_local" in ttgir
    assert '"tilegpu.local_alloc"(%' not in ttgir.split("scf.for")[1]  # no staging copy left in the loop
    assert kernel.n_spills == 0


@tilec.jit
def bt_matmul_kernel(a_ptr, bt_ptr, c_ptr, M, N, K, sam, sbn, scm,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """`tl.dot(a, b.T)` with B given as B^T [N, K] (K contiguous), as Triton's persistent
    and attention tutorials load it: the ring holds b as loaded, and the dot reads the
    slot through a transposed view (no transpose in registers)."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :], mask=(k0 + rk)[None, :] < K, other=0.0)
        b = tl.load(bt_ptr + rn[:, None] * sbn + (k0 + rk)[None, :], mask=(k0 + rk)[None, :] < K, other=0.0)
        acc = tl.dot(a, b.T, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps, stages", [
    (256, 384, 320, 128, 128, 64, 4, 4), (512, 256, 1024, 128, 256, 64, 8, 3), (192, 128, 96, 64, 128, 32, 4, 3)])
def test_wgmma_b_transposed_in_the_kernel(wgmma, dtype, m, n, k, bm, bn, bk, warps, stages):
    torch = _gpu()
    np_ty, _ = DTYPES[dtype]
    rng = np.random.default_rng(17)
    a = rng.standard_normal((m, k)).astype(np_ty)
    bt = rng.standard_normal((n, k)).astype(np_ty)
    c = torch.full((m, n), float("nan"), device="cuda")
    grid = (-(-m // bm), -(-n // bn))
    bt_matmul_kernel[grid](_device(a, torch), _device(bt, torch), c, m, n, k, k, k, n, BM=bm, BN=bn, BK=bk,
                           num_warps=warps, num_stages=stages)
    assert_product(c, a, bt.T)


def test_wgmma_reads_a_transposed_ring_slot(wgmma):
    """Without a GPU: b (loaded [BN, BK]) goes by cp.async into a ring in its own
    orientation, the dot reads the slot viewed [BK, BN] (its NVMMA layout transposed),
    and no transpose, staging copy or shared-memory load is left in the loop."""
    signature = {"a_ptr": "*fp16:16", "bt_ptr": "*fp16:16", "c_ptr": "*fp32:16", "M": "i32:16", "N": "i32:16",
                 "K": "i32:16", "sam": "i32:16", "sbn": "i32:16", "scm": "i32:16"}
    kernel = tilec.compile(bt_matmul_kernel, signature=signature, target="sm_90", num_stages=3,
                           constexprs={"BM": 128, "BN": 128, "BK": 64})
    ttgir, ptx = kernel.asm["ttgir"], kernel.asm["ptx"]
    loop = ttgir.split("scf.for")[1].split("scf.yield")[0]
    assert "tile.trans" not in loop and '"tilegpu.local_alloc"(%' not in loop and "tilegpu.local_load" not in loop
    view = re.search(r'"tilegpu.memdesc_index".*tensor<3x128x64xf16, #(nvmma_shared\d)>>, i32\) -> '
                     r'!tilegpu.memdesc<tensor<64x128xf16, #(nvmma_shared\d)>>', loop)
    assert view and view.group(1) != view.group(2), "the dot reads the slot through a transposed view"
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx) and "cp.async.cg.shared.global" in ptx
    assert kernel.n_spills == 0


@pytest.mark.gpu
def test_switching_wgmma_at_run_time_recompiles(wgmma, monkeypatch):
    """config.wgmma is part of the in-memory launch key too: a kernel launched with it on
    and then off runs the other code the second time (and both are right)."""
    torch = _gpu()
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    found = []
    for on in (True, False):
        monkeypatch.setattr(config, "wgmma", on)
        c = torch.full((64, 64), float("nan"), device="cuda")
        compiled = tile_kernel[(1,)](_device(a, torch), _device(b, torch), c, 32, 1, 64, 1, M=64, N=64, K=32)
        assert_product(c, a, b)
        found.append("wgmma.mma_async" in compiled.asm["ptx"])
    assert found == [True, False]


# fp32 operands with input_precision "tf32" (tl.dot's default for fp32): wgmma reads them
# K-major only, like 8-bit ones, 8 of K per instruction. The instruction itself drops each
# operand's low 13 mantissa bits (measured: the result is that of the truncated operands),
# where mma.sync and the interpreter round to nearest first; either way each operand
# keeps tf32's 10 bits.
@tilec.jit
def precision_tile_kernel(a_ptr, b_ptr, c_ptr, sam, sak, sbk, sbn, M: tl.constexpr, N: tl.constexpr,
                          K: tl.constexpr, PRECISION: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * sam + rk[None, :] * sak)
    b = tl.load(b_ptr + rk[:, None] * sbk + rn[None, :] * sbn)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision=PRECISION))


def _check_tf32(c, a, b, bits=10):
    """c is a @ b with each operand carrying `bits` mantissa bits: float64 reference,
    error bounded by 2^-bits of the largest |a| @ |b|."""
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))).max()
    error = np.abs(c.cpu().numpy() - want).max()
    assert error <= scale * 2.0 ** -bits, (error, scale)
    return error / scale


def _truncate_tf32(x):
    return (np.ascontiguousarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.gpu
@pytest.mark.parametrize("m, n, k, warps, a_col_major, b_col_major", [
    (64, 64, 32, 4, False, False), (128, 128, 64, 4, False, True), (128, 256, 32, 8, True, False),
    (64, 32, 16, 4, True, True),
])
def test_wgmma_tf32_tile(wgmma, m, n, k, warps, a_col_major, b_col_major):
    torch = _gpu()
    rng = np.random.default_rng(m + 3 * n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    a_store = np.ascontiguousarray(a.T) if a_col_major else a
    b_store = np.ascontiguousarray(b.T) if b_col_major else b
    sam, sak = (1, m) if a_col_major else (k, 1)
    sbk, sbn = (1, k) if b_col_major else (n, 1)
    c = torch.full((m, n), float("nan"), device="cuda")
    compiled = precision_tile_kernel[(1,)](torch.from_numpy(a_store).cuda(), torch.from_numpy(b_store).cuda(), c,
                                           sam, sak, sbk, sbn, M=m, N=n, K=k, PRECISION="tf32", num_warps=warps)
    assert "f32.tf32.tf32" in compiled.asm["ptx"] and "wgmma.mma_async" in compiled.asm["ptx"]
    # Not fp32's accuracy (the operands lost 13 bits), but tf32's.
    relative = _check_tf32(c, a, b)
    assert relative > 2.0 ** -20
    # The instruction truncates: exactly the product of the truncated operands, up to
    # the order of the fp32 sums.
    want = _truncate_tf32(a).astype(np.float64) @ _truncate_tf32(b).astype(np.float64)
    scale = (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))).max()
    np.testing.assert_allclose(c.cpu().numpy(), want, rtol=0, atol=scale * 2.0 ** -20)


@pytest.mark.gpu
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps, stages, b_k_major", [
    (256, 384, 320, 128, 128, 32, 4, 3, True), (320, 256, 512, 128, 256, 32, 8, 3, False),
    (192, 128, 96, 64, 128, 16, 4, 4, False),
])
def test_wgmma_tf32_pipelined_matmul(wgmma, m, n, k, bm, bn, bk, warps, stages, b_k_major):
    torch = _gpu()
    rng = np.random.default_rng(19)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    b_dev = torch.from_numpy(np.ascontiguousarray(b.T)).cuda().t() if b_k_major else torch.from_numpy(b).cuda()
    c = torch.full((m, n), float("nan"), device="cuda")
    grid = (-(-m // bm), -(-n // bn))
    compiled = strided_matmul_kernel[grid](torch.from_numpy(a).cuda(), b_dev, c, m, n, k, k, 1, b_dev.stride(0),
                                           b_dev.stride(1), n, BM=bm, BN=bn, BK=bk, num_warps=warps,
                                           num_stages=stages)
    assert "f32.tf32.tf32" in compiled.asm["ptx"]
    _check_tf32(c, a, b)


@pytest.mark.gpu
def test_wgmma_tf32x3_is_near_fp32(wgmma):
    """tf32x3's three tf32 products (accumulated into one another, not a chain) run on
    wgmma and reach close to fp32's accuracy."""
    torch = _gpu()
    rng = np.random.default_rng(23)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32, 64)).astype(np.float32)
    c = torch.full((64, 64), float("nan"), device="cuda")
    compiled = precision_tile_kernel[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, 32, 1, 64, 1,
                                           M=64, N=64, K=32, PRECISION="tf32x3", num_warps=4)
    assert compiled.asm["ptx"].count("wgmma.mma_async") == 3 * 4 and "mma.sync" not in compiled.asm["ptx"]
    assert compiled.n_spills == 0
    _check_tf32(c, a, b, bits=18)


def test_tf32_dots_compile_to_wgmma(wgmma):
    """Without a GPU: fp32 dots at tf32 (and tf32x3's three) are wgmma m64nNk8 with both
    operands K-major in shared memory; "ieee" stays on the FMA path."""
    signature = {"a_ptr": "*fp32:16", "b_ptr": "*fp32:16", "c_ptr": "*fp32:16", "sak": "i32", "sbn": "i32"}
    ptx = {}
    for precision in ("tf32", "tf32x3", "ieee"):
        kernel = tilec.compile(precision_tile_kernel, signature=signature, target="sm_90", num_warps=4,
                               constexprs={"sam": 64, "sbk": 128, "M": 128, "N": 128, "K": 64,
                                           "PRECISION": precision})
        ptx[precision] = kernel.asm["ptx"]
        assert kernel.n_spills == 0 or precision != "tf32"
    tf32 = "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"
    assert ptx["tf32"].count(tf32) == 2 * 8 and "mma.sync" not in ptx["tf32"]
    assert ptx["tf32x3"].count(tf32) == 3 * 2 * 8 and "mma.sync" not in ptx["tf32x3"]
    assert "wgmma" not in ptx["ieee"] and "mma.sync" not in ptx["ieee"]


# ----------------------------------------------------------------------------- f16 accumulators


def assert_f16_product(c, a, b):
    """c (a CUDA fp16 tensor) is a @ b accumulated in fp16: each 16-wide K step rounds
    the running sum to fp16 (2^-11 relative), so the error grows with K / 16."""
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))).max()
    steps = -(-a.shape[1] // 16) + 1
    np.testing.assert_allclose(c.float().cpu().numpy(), want, rtol=0, atol=steps * 2.0 ** -10 * scale)


@pytest.mark.gpu
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps, stages, a_col_major", [
    (64, 64, 32, 64, 64, 32, 4, 1, False), (128, 256, 64, 128, 256, 64, 8, 1, True),
    (200, 300, 250, 128, 128, 64, 4, 3, False), (256, 512, 192, 128, 256, 64, 8, 3, True),
])
def test_wgmma_f16_accumulator(wgmma, m, n, k, bm, bn, bk, warps, stages, a_col_major):
    torch = _gpu()
    rng = np.random.default_rng(m + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    a_store = np.ascontiguousarray(a.T) if a_col_major else a
    sam, sak = (1, m) if a_col_major else (k, 1)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid = (-(-m // bm), -(-n // bn))
    loop_kernel[grid](_device(a_store, torch), _device(b, torch), c, m, n, k, sam, sak, n, 1, n, 1, BM=bm, BN=bn,
                      BK=bk, ACC=tl.float16, num_warps=warps, num_stages=stages)
    assert_f16_product(c, a, b)


@tilec.jit
def f16_chain_kernel(q_ptr, k_ptr, v_ptr, o_ptr, M: tl.constexpr, D: tl.constexpr, N: tl.constexpr):
    rm, rd, rn = tl.arange(0, M), tl.arange(0, D), tl.arange(0, N)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    k = tl.load(k_ptr + rd[:, None] * N + rn[None, :])
    v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
    p = tl.dot(q, k).to(tl.float16)
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], tl.dot(p, v, out_dtype=tl.float16))


@pytest.mark.gpu
@pytest.mark.parametrize("m, d, n, warps", [(64, 64, 64, 4), (128, 128, 64, 8)])
def test_wgmma_f16_accumulator_with_a_in_registers(wgmma, m, d, n, warps):
    torch = _gpu()
    rng = np.random.default_rng(m + d + n)
    q = (rng.standard_normal((m, d)) / 4).astype(np.float16)
    k = (rng.standard_normal((d, n)) / 4).astype(np.float16)
    v = rng.standard_normal((n, d)).astype(np.float16)
    o = torch.full((m, d), float("nan"), device="cuda", dtype=torch.float16)
    f16_chain_kernel[(1,)](_device(q, torch), _device(k, torch), _device(v, torch), o, M=m, D=d, N=n, num_warps=warps)
    p = (q.astype(np.float32) @ k.astype(np.float32)).astype(np.float16)  # p as the kernel rounds it
    assert_f16_product(o, p, v)


def test_f16_accumulators_compile_to_wgmma(wgmma):
    """Without a GPU: the f16 accumulator runs on wgmma's .f16.f16.f16 form (not
    mma.sync), its dot waits for its own group, and p @ v with an f16 accumulator reads p
    from registers."""
    signature = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32", "N": "i32:16",
                 "K": "i32:16", "sam": "i32:16", "sak": "i32", "sbk": "i32:16", "sbn": "i32", "scm": "i32:16",
                 "scn": "i32"}
    kernel = tilec.compile(loop_kernel, signature=signature,
                           constexprs={"BM": 128, "BN": 128, "BK": 64, "ACC": tl.float16},
                           target="sm_90", num_warps=8, num_stages=3)
    ptx = kernel.asm["ptx"]
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16" in ptx and "mma.sync" not in ptx
    assert not re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx)
    chain = tilec.compile(f16_chain_kernel, signature={"q_ptr": "*fp16:16", "k_ptr": "*fp16:16",
                                                       "v_ptr": "*fp16:16", "o_ptr": "*fp16:16"},
                          constexprs={"M": 64, "D": 64, "N": 64}, target="sm_90", num_warps=4)
    assert re.search(r"m64n64k16\.f16\.f16\.f16 \{[^}]*\}, \{", chain.asm["ptx"])
