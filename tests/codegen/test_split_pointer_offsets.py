"""A loop's `ptr + (invariant + varying)` compiles as `(ptr + invariant) + varying`
(tile-combine), without a GPU.

Triton's tutorial 09 writes its persistent kernel's addresses inside the K loop as
`a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)`. Summed first,
the offsets are added, widened and multiplied per element every iteration (12 extra
`mul.wide.s32` and 24 `add.s32` per iteration at 128x256x64 on 8 warps); split, the
invariant block of pointers is made once and each iteration adds the varying part. The
two spellings must compile to the same code."""
from __future__ import annotations

from collections import Counter

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, SUMMED: tl.constexpr,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_am = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_bn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in range(tl.cdiv(K, BK)):
        offs_k = ki * BK + tl.arange(0, BK)
        if SUMMED:  # the tutorial's spelling
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :])
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :])
        else:
            a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
            b_ptrs = b_ptr + offs_bn[None, :] + offs_k[:, None] * stride_bk
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + offs_am[:, None] * stride_cm + offs_bn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_am[:, None] < M) & (offs_bn[None, :] < N))


SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32:16", "N": "i32:16",
             "K": "i32:16", "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}


def _compile(summed: bool, target: str):
    return tilec.compile(matmul, signature=SIGNATURE, target=target, num_warps=8, num_stages=3,
                         constexprs={"SUMMED": summed, "BM": 128, "BN": 128, "BK": 64})


def _instructions(kernel) -> Counter:
    """How many times each PTX instruction occurs (the order of independent
    instructions may differ between the spellings)."""
    return Counter(line.split()[0] for line in kernel.asm["ptx"].splitlines()
                   if line.strip() and not line.strip().startswith(("//", ".", "$", "{", "}", ")")))


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
def test_both_spellings_compile_alike(target):
    summed, split = _compile(True, target), _compile(False, target)
    assert _instructions(summed) == _instructions(split)
    assert summed.n_regs == split.n_regs
