"""Codegen, without a GPU, of fp8 (e4m3 / e5m2) values widened two registers at a time.

PTX's `cvt.rn.f16x2.{e4m3,e5m2}x2` widens two fp8 values held in one 16-bit register.
Widened one element per instruction, each conversion wasted half of it and each byte was
first taken out of its register on its own (a prmt and a cvt.u16 a byte). In an fp8 dot
on mma.sync (BLOCK_M 16 on sm_90: the operands are widened in the fragment registers
after an 8-bit ldmatrix) that was three instructions per element in the main loop, twice
Triton's count of conversions: the 16x64x128 tile of the corpus matmul ran 128 cvt.f16x2
and 192 prmt an iteration, Triton 64 and none."""
from __future__ import annotations

import re

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec_testing import ptx_loops

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)

_PTX_FP8 = {"fp8e4nv": "e4m3", "fp8e5": "e5m2"}


@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _loop_body(ptx: str) -> str:
    """The PTX of the kernel's (one) loop."""
    loops = ptx_loops(ptx)
    assert loops, "no loop in the PTX"
    return loops[0]


@pytest.mark.parametrize("dtype", ["fp8e4nv", "fp8e5"])
def test_fp8_mma_sync_operands_widened_two_at_a_time(dtype):
    signature = {"a_ptr": f"*{dtype}:16", "b_ptr": f"*{dtype}:16", "c_ptr": "*fp32:16", "M": "i32", "N": "i32",
                 "K": "i32:16", "stride_am": "i32:16", "stride_bn": "i32:16", "stride_cm": "i32:16"}
    kernel = tilec.compile(matmul_kernel, signature=signature, target="sm_90", num_warps=4, num_stages=4,
                           constexprs={"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128})
    loop = _loop_body(kernel.asm["ptx"])
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in loop
    # Per thread and K step: all 16x128 of A (the 4 warps lie along N) and a quarter of
    # the 128x64 B, two elements a conversion.
    elements = 16 * 128 // 32 + 128 * 64 // 128
    assert len(re.findall(rf"cvt\.rn\.f16x2\.{_PTX_FP8[dtype]}x2", loop)) == elements // 2
    assert "prmt" not in loop  # no byte taken apart: the pairs are the halves of ldmatrix's registers


@tilec.jit
def widen_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x.to(y_ptr.dtype.element_ty), mask=offs < n)


@pytest.mark.parametrize("dtype", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize("out", ["fp16", "fp32", "bf16"])
def test_fp8_tensor_widened_in_pairs(dtype, out):
    kernel = tilec.compile(widen_kernel, signature={"x_ptr": f"*{dtype}:16", "y_ptr": f"*{out}:16", "n": "i32"},
                           target="sm_90", num_warps=4, constexprs={"BLOCK": 1024})
    ptx = kernel.asm["ptx"]
    # 1024 elements over 128 threads: 8 a thread, 4 conversions.
    assert len(re.findall(rf"cvt\.rn\.f16x2\.{_PTX_FP8[dtype]}x2", ptx)) == 4
