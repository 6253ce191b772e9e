"""Codegen, without a GPU, of two matmul shapes on sm_90 that used to run slower than
Triton's:

- a wgmma dot whose fp16 result is stored one element at a time (an output row stride
  that is odd): the fp32 -> fp16 conversion is done two registers at a time (one
  cvt.rn.f16x2.f32, as Triton does). Converted one by one (cvt.rn.f16.f32), the reads
  of the accumulator made ptxas serialise every wgmma of the kernel (its info C7514:
  each HGMMA waited for before the next), about half the speed of the main loop.
- an fp8 dot too short in M for wgmma (BLOCK_M 16: mma.sync): the operands stay 8-bit
  until they are in the instruction's registers, so their loads are streamed with
  cp.async like any other; widened to fp16 first, they were loaded into registers and
  stored to shared memory every iteration, with nothing in flight."""
from __future__ import annotations

import re

import pytest

import tilec
from tilec_testing import masked_matmul_kernel as matmul_kernel
from tilec.backend import toolkit

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


def _compile(operand: str, out: str, block_m: int, block_n: int, block_k: int, num_warps: int):
    # B given transposed ([N, K], K contiguous: stride_bk = 1); C's rows 777 elements
    # apart, so its stores are scalar.
    signature = {"a_ptr": f"*{operand}:16", "b_ptr": f"*{operand}:16", "c_ptr": f"*{out}:16", "M": "i32",
                 "N": "i32", "K": "i32:16", "stride_am": "i32:16", "stride_bn": "i32:16", "stride_cm": "i32"}
    return tilec.compile(matmul_kernel, signature=signature, target="sm_90", num_warps=num_warps, num_stages=3,
                         constexprs={"stride_ak": 1, "stride_bk": 1, "BLOCK_M": block_m, "BLOCK_N": block_n,
                                     "BLOCK_K": block_k})


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_wgmma_result_narrowed_in_pairs_keeps_wgmma_pipelined(dtype):
    kernel = _compile(dtype, dtype, 128, 128, 64, 8)
    ptx = kernel.asm["ptx"]
    assert "wgmma.mma_async" in ptx
    ptx_type = {"fp16": "f16", "bf16": "bf16"}[dtype]
    assert len(re.findall(rf"cvt\.rn\.{ptx_type}x2\.f32", ptx)) == 128 * 128 // 256 // 2
    assert not re.search(r"cvt\.rn\.b?f16\.f32", ptx)
    assert "st.global.b16" in ptx  # the stores stay scalar: each pair is split again
    log = toolkit.assemble(ptx, "sm_90a", "matmul_kernel").log
    assert "C7514" not in log, log


@pytest.mark.parametrize("dtype", ["fp8e4nv", "fp8e5"])
def test_fp8_mma_sync_operands_streamed_and_widened_in_registers(dtype):
    kernel = _compile(dtype, "fp32", 16, 64, 128, 4)
    ttgir = kernel.asm["ttgir"]
    assert "mma<{instrShape = array<i32: 16, 8>, versionMajor = 2" in ttgir
    # Both operands copied into the rings as fp8, and read from them as fp8 fragments
    # (k_width 4) that are widened in place, one 32-deep slice at a time.
    copies = re.findall(r'"tilegpu\.async_copy_global_to_local".*-> \(\)', ttgir)
    assert len(copies) >= 2 and all("xf8E" in copy for copy in copies)
    widened = re.findall(r'"tile\.fp_to_fp".*: \(tensor<(\d+)x(\d+)xf8E\w+, (#dot_op\d)>\) -> '
                         r'tensor<\d+x\d+xf16, (#dot_op\d)>', ttgir)
    assert len(widened) == 2 * 128 // 32
    assert all(source == result for *_, source, result in widened)
    assert "kWidth = 4" in ttgir and "tilegpu.local_alloc\"(%" not in ttgir
    ptx = kernel.asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx and "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx


def test_wgmma_descriptors_are_a_32_bit_add_and_a_constant_high_word():
    # Each descriptor is {start + constant, constant}: the start field (shared address
    # / 16) plus the tile's offset in the low word, the layout's stride and swizzle
    # fields as a constant high word. As a 64-bit add, ptxas kept a carry chain of
    # dependent uniform instructions in front of every iteration's first wgmma.
    ptx = _compile("fp16", "fp16", 128, 128, 64, 8).asm["ptx"]
    wgmmas = re.findall(r"wgmma\.mma_async\S*\s+\{[^}]*\},\s*(%rd\d+),\s*(%rd\d+)", ptx)
    assert len(wgmmas) == 4  # per warpgroup: 64x128 of the 128x128 tile, K 64 in steps of 16
    pairs = dict(re.findall(r"mov\.b64\s+(%rd\d+),\s*(\{%r\d+,\s*%r\d+\});", ptx))
    highs = set()
    for desc in (d for pair in wgmmas for d in pair):
        assert desc in pairs, f"descriptor {desc} not built from a pair of 32-bit words"
        highs.add(pairs[desc].split(",")[1].strip(" }"))
    for high in highs:  # each high word is a constant moved into its register
        assert re.search(rf"mov\.b32\s+{re.escape(high)},\s*-?\d+;", ptx), high
    assert not re.search(r"and\.b32\s+%r\d+,\s*%r\d+,\s*16383;", ptx)
