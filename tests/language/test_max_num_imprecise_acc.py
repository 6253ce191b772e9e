"""tl.dot's `max_num_imprecise_acc` on Hopper: an fp8 dot sums at most that many products
of K in the tensor cores' reduced-precision accumulator, then adds them into the fp32
one (dot_wgmma.py).

Codegen (no GPU, sm_90a PTX): Triton's check from its test_dot_max_num_imprecise_acc,
one `add.f32` per accumulator element and run of the limit inside the K loop
(`(BM * BN) // (32 * num_warps) * (BK // limit)`), the wgmma instructions, groups and
waits that go with it, and no change at all without the option. Numerics (both
backends): fp8 dots with a large accumulator, against a float64 reference computed
from the exact fp8 values.
"""
from __future__ import annotations

import collections
import re

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec_testing import device_array, to_numpy


def _needs_ptxas():
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
        pytest.skip("ptxas is not available")


@tilec.jit
def triton_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                         stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                         BLOCK_SIZE_K: tl.constexpr, low_precision_acc: tl.constexpr, num_stages: tl.constexpr = 3):
    """The kernel of Triton's test_dot_max_num_imprecise_acc."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_SIZE_K), num_stages=num_stages):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        accumulator = tl.dot(a, b, acc=accumulator, max_num_imprecise_acc=low_precision_acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, accumulator)


def _compile_triton_kernel(dtype: str, block: tuple[int, int, int], limit, num_warps: int = 8):
    bm, bn, bk = block
    signature = {"a_ptr": f"*{dtype}:16", "b_ptr": f"*{dtype}:16", "c_ptr": "*fp32:16", "M": "i32:16",
                 "N": "i32:16", "K": "i32:16", "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}
    constexprs = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn,
                  "BLOCK_SIZE_K": bk, "low_precision_acc": limit}
    return tilec.compile(triton_matmul_kernel, signature=signature, constexprs=constexprs, target="sm_90a",
                         num_warps=num_warps, num_stages=3)


def _counts(ptx: str) -> collections.Counter:
    """How often each PTX instruction occurs, those inside inline-asm braces included."""
    return collections.Counter(re.findall(r"(?:^|[{;])\s*(?:@!?%?\w+\s+)?([a-z][\w.]*)", ptx, re.M))


def _wgmma_waits(ptx: str) -> list[int]:
    return [int(n) for n in re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d+);", ptx)]


# (BM, BN, BK), num_warps -> the wgmma instruction of one run and how many of its tiles
# (64 rows by its columns) each thread's warpgroup covers. A thread holding 128
# accumulator registers (a 64x256 share of 128x256 over two warpgroups, or 128x128 over
# one) takes its partial sums 64 columns at a time, 32 registers more, not in m64n256 or
# m64n128 instructions' 128 or 64 (which spill); with 64 (64x128 over one warpgroup) the
# whole m64n128 tile is summed at once; 64x64 over two warpgroups: one 64x32 tile each.
_SHAPES = {
    ((128, 256, 128), 8): ("m64n64k32", 4),
    ((64, 64, 64), 8): ("m64n32k32", 1),
    ((128, 128, 128), 4): ("m64n64k32", 4),
    ((64, 128, 128), 4): ("m64n128k32", 1),
}


@pytest.mark.parametrize("block, num_warps", list(_SHAPES))
@pytest.mark.parametrize("limit", [32, 64, 128])
def test_one_fp32_add_per_element_and_run(block, num_warps, limit):
    """Triton's PTX check, and the wgmma work around it: every run of `limit` products of
    K is its own group (fence, instructions, commit, wait for all), the first instruction
    of each starting from zero."""
    _needs_ptxas()
    bm, bn, bk = block
    if limit > bk:
        pytest.skip("Triton passes None for a limit above BLOCK_K (test_default_is_unchanged)")
    kernel = _compile_triton_kernel("fp8e4nv", block, limit, num_warps)
    ptx = kernel.asm["ptx"]
    assert ptx.count("add.f32") == (bm * bn) // (32 * num_warps) * (bk // limit)
    instruction, tiles = _SHAPES[(block, num_warps)]
    counts = _counts(ptx)
    runs = tiles * (bk // limit)
    assert counts[f"wgmma.mma_async.sync.aligned.{instruction}.f32.e4m3.e4m3"] == tiles * (bk // 32)
    assert sum(v for name, v in counts.items() if name.startswith("wgmma.mma_async")) == tiles * (bk // 32)
    assert counts["wgmma.fence.sync.aligned"] == runs and counts["wgmma.commit_group.sync.aligned"] == runs
    assert _wgmma_waits(ptx) == [0] * runs
    # The first instruction of each run ignores the registers it is given (scale-d 0).
    scale_d = re.findall(r"setp\.ne\.b32 p, (\d), 0;\s*wgmma\.mma_async", ptx)
    assert scale_d == (["0"] + ["1"] * (limit // 32 - 1)) * runs
    assert 'max_num_imprecise_acc = %d : i32' % limit in kernel.asm["ttgir"]
    assert kernel.n_spills == 0 and kernel.asm["cubin"][:4] == b"\x7fELF"


@pytest.mark.parametrize("block, num_warps", [((128, 256, 128), 8), ((64, 64, 64), 8)])
@pytest.mark.parametrize("dtype, ptx_type", [("fp8e4nv", "e4m3"), ("fp8e5", "e5m2")])
def test_default_is_unchanged(block, num_warps, dtype, ptx_type):
    """No limit (Triton's default on sm_90 is 2**30, no limit either): every product
    goes into the one accumulator, one group per dot, no fp32 add anywhere, and no
    attribute on the dot."""
    _needs_ptxas()
    kernel = _compile_triton_kernel(dtype, block, None, num_warps)
    ptx = kernel.asm["ptx"]
    counts = _counts(ptx)
    # Each warpgroup's whole share in one instruction tile: 64x256, or 64x32.
    instruction = {128: "m64n256k32", 64: "m64n32k32"}[block[0]]
    assert counts[f"wgmma.mma_async.sync.aligned.{instruction}.f32.{ptx_type}.{ptx_type}"] == block[2] // 32
    assert "add.f32" not in ptx and "add.rn.f32" not in ptx
    assert counts["wgmma.fence.sync.aligned"] == 1 and counts["wgmma.commit_group.sync.aligned"] == 1
    assert "max_num_imprecise_acc" not in kernel.asm["ttir"]


def test_other_operand_types_ignore_the_limit():
    """fp16 operands: the PTX with a limit is the PTX without."""
    _needs_ptxas()
    with_limit = _compile_triton_kernel("fp16", (64, 64, 64), 32).asm
    without = _compile_triton_kernel("fp16", (64, 64, 64), None).asm
    assert "max_num_imprecise_acc" not in with_limit["ttir"]
    assert with_limit["ptx"] == without["ptx"]


@pytest.mark.parametrize("limit, runs", [(0, 4), (1, 4), (48, 2), (96, 2), (100, 1)])
def test_limits_round_up_to_whole_instructions(limit, runs):
    """An fp8 instruction takes 32 products of K: a limit is rounded up to a multiple of
    32 (one instruction at least, 0 included, as Triton counts them), and the last run
    may be shorter (96 in a K of 128: runs of 96 and 32)."""
    _needs_ptxas()
    kernel = _compile_triton_kernel("fp8e4nv", (64, 64, 128), limit)
    ptx = kernel.asm["ptx"]
    assert ptx.count("add.f32") == (64 * 64) // (32 * 8) * runs
    assert _counts(ptx)["wgmma.commit_group.sync.aligned"] == runs
    assert _counts(ptx)["wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3"] == 4


@tilec.jit
def single_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                      LIMIT: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + n[None, :] * K + k[:, None])  # K-major, as fp8 wgmma reads B
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, max_num_imprecise_acc=LIMIT))


@pytest.mark.parametrize("limit, adds", [(32, 3), (64, 1), (128, 0)])
def test_a_zero_accumulator_takes_the_first_run_as_it_is(limit, adds):
    """tl.dot(a, b) (no accumulator): the first run's sums are the result, each later
    run adds into them (64x64 over 4 warps: 32 elements a thread)."""
    _needs_ptxas()
    signature = {"a_ptr": "*fp8e5:16", "b_ptr": "*fp8e5:16", "c_ptr": "*fp32:16"}
    kernel = tilec.compile(single_dot_kernel, signature=signature, target="sm_90a", num_warps=4,
                           constexprs={"M": 64, "N": 64, "K": 128, "LIMIT": limit})
    ptx = kernel.asm["ptx"]
    assert ptx.count("add.f32") == 32 * adds
    assert _counts(ptx)["wgmma.commit_group.sync.aligned"] == adds + 1


@tilec.jit
def pipelined_matmul_kernel(a_ptr, b_ptr, c_ptr, d_ptr, K, stride_am, stride_bn, stride_cm,
                            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, LIMIT: tl.constexpr):
    """acc (from c) + a @ b over K in steps of BK; B stored K-major ([N, K], the fp8
    wgmma operand layout). Written as the tutorial's loop, which tilegpu-pipeline turns
    into cp.async rings with each iteration's wgmma group left in flight."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] + offs_n[None, :] * stride_bn
    acc = tl.load(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :])
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=LIMIT)
        a_ptrs += BK
        b_ptrs += BK
    tl.store(d_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)


def test_a_dot_in_flight_across_iterations_waits_for_its_runs():
    """Without a limit the loop's wgmma group stays in flight into the next iteration
    (wait_group 1); with one, each run is waited for before its adds (wait_group 0)."""
    _needs_ptxas()
    signature = {"a_ptr": "*fp8e4nv:16", "b_ptr": "*fp8e4nv:16", "c_ptr": "*fp32:16", "d_ptr": "*fp32:16",
                 "K": "i32:16", "stride_am": "i32:16", "stride_bn": "i32:16", "stride_cm": "i32:16"}

    def compile_with(limit):
        return tilec.compile(pipelined_matmul_kernel, signature=signature, target="sm_90a", num_warps=4,
                             constexprs={"BM": 128, "BN": 128, "BK": 128, "LIMIT": limit})

    default = compile_with(None).asm["ptx"]
    assert 1 in _wgmma_waits(default) and "add.f32" not in default
    limited = compile_with(64)
    ptx = limited.asm["ptx"]
    assert set(_wgmma_waits(ptx)) == {0}
    assert ptx.count("add.f32") == (128 * 128) // (32 * 4) * 2
    assert limited.n_spills == 0


def test_a_negative_limit_is_refused():
    with pytest.raises(tilec.CompilationError, match=r"max_num_imprecise_acc must not be negative, got -1"):
        tilec.compile(single_dot_kernel, signature={"a_ptr": "*fp8e5", "b_ptr": "*fp8e5", "c_ptr": "*fp32"},
                      target="sm_90a", constexprs={"M": 64, "N": 64, "K": 64, "LIMIT": -1})


# ----------------------------------------------------------------------------- numerics

_FP8 = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _skip_without_fp8_dots(backend):
    if backend == "gpu":
        import torch
        if torch.cuda.get_device_capability() < (8, 9):
            pytest.skip("fp8 needs sm_89 or newer")


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
@pytest.mark.parametrize("limit", [32, 64, 128])
def test_fp8_dot_with_a_large_accumulator(backend, rng, fmt, limit):
    """128x128 outputs, K = 256 in two steps of 128, added to an accumulator of 512 to
    1024 in magnitude: the sums of each run of at most `limit` products start from zero
    and are added in fp32, so the result is within fp32 rounding of the accumulator plus
    the tensor cores' error on those short sums (2^-10 of the largest sum |a||b| allowed,
    as test_wgmma_dot.py's fp8 tolerance). Without a limit the products would be added
    to the large accumulator inside the tensor cores, in their reduced precision."""
    _skip_without_fp8_dots(backend)
    fp8 = _FP8[fmt]
    m = n = 128
    k = 256
    a = rng.standard_normal((m, k)).astype(fp8)
    b_t = rng.standard_normal((n, k)).astype(fp8)  # B stored K-major
    c = rng.uniform(512, 1024, (m, n)).astype(np.float32) * rng.choice([-1, 1], (m, n)).astype(np.float32)
    out = device_array(np.full((m, n), np.nan, np.float32), backend)
    pipelined_matmul_kernel[(m // 64, n // 64)](device_array(a, backend), device_array(b_t, backend),
                                                device_array(c, backend), out, k, k, k, n,
                                                BM=64, BN=64, BK=128, LIMIT=limit)
    a64, b64 = a.astype(np.float64), b_t.astype(np.float64).T
    want = c.astype(np.float64) + a64 @ b64
    tolerance = (np.abs(a64) @ np.abs(b64)).max() / 1024 + np.abs(want) * 2.0 ** -20
    got = to_numpy(out).astype(np.float64)
    assert not np.isnan(got).any()
    np.testing.assert_array_less(np.abs(got - want), tolerance)
