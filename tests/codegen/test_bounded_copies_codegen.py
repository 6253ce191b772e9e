"""Codegen, without a GPU, of cp.async copies cut by a bound (tilec/passes/bounded_runs.py).

A dot operand's load masked by `offs_k < K` with K not known to be a multiple of 8 (a
runtime size, a descriptor's shape read from memory) has a mask that may change at any
element: it used to keep every access one element wide, so a 16-bit operand was loaded
2 bytes at a time and its loop was not pipelined (cp.async copies 4 bytes at least).
The bound keeps a prefix of each run of 8, so the copies now stay 16 bytes wide and
take the bound as a source size (`cp.async.cg.shared.global [dst], [src], 16, bytes`):
the run's elements below the bound are read, the rest zero-filled.

Tutorial 08's grouped GEMM with in-kernel descriptors (the "TMA" variant) is the case
that asked for it: its descriptors are made from base pointers read from memory, so they
take the pointer form, bounded by the problem's K. Before: 1-element loads, no ring,
255 registers and 772 bytes spilled at 128x128x64 with 4 warps (0.18x Triton on an
H100). Now: a 3-stage cp.async ring feeding wgmma, 240 registers, no spills.
"""
from __future__ import annotations

import re

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec_testing import grouped_descriptor_matmul, k_tail_matmul, ptx_loops

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)

# A 16-byte copy whose source size is a register: the bounded form.
BOUNDED_COPY = re.compile(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16, %r\d+;")
BULK_LOAD = "cp.async.bulk.tensor"

K_TAIL_SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32", "N": "i32", "K": "i32",
                    "stride_am": "i32:16", "stride_bn": "i32:16", "stride_cm": "i32:16"}
GROUPED_SIGNATURE = {"group_a_ptrs": "*u64:16", "group_b_ptrs": "*u64:16", "group_c_ptrs": "*u64:16",
                     "group_sizes": "*i32:16", "group_lds": "*i32:16", "group_count": "i32"}


def _loop(ptx: str) -> str:
    """The PTX of the innermost loop holding the mma instructions: the shortest loop that
    has them."""
    return min((body for body in ptx_loops(ptx) if "mma" in body), key=len, default="")


@pytest.mark.parametrize("target, dot", [("sm_80", "mma.sync.aligned"), ("sm_90a", "wgmma.mma_async")])
def test_k_tail_loads_copy_16_bytes_with_a_source_size(target, dot):
    kernel = tilec.compile(k_tail_matmul, signature=K_TAIL_SIGNATURE, target=target, num_warps=4, num_stages=3,
                           constexprs={"BM": 64, "BN": 64, "BK": 64})
    ptx = kernel.asm["ptx"]
    loop = _loop(ptx)
    assert dot in loop
    # 64x64 halves over 128 threads: 4 copies of 8 per operand per stage, bounded by K
    assert len(BOUNDED_COPY.findall(loop)) == 8
    assert "ld.global" not in loop, "an operand is still loaded into registers"
    # Two rings: 3 slots for wgmma, num_stages - 1 = 2 where the dot reads into registers
    slots = 3 if dot.startswith("wgmma") else 2
    assert kernel.shared == slots * 2 * 64 * 64 * 2
    assert kernel.n_spills == 0


def test_loads_outside_loops_keep_one_element_per_thread_under_a_cutting_mask():
    """Only copies that the pipeliner streams read a cut run whole; a plain masked load
    keeps the layout coalescing gives it under a mask that may change at any element
    (one element a thread, the warp's lanes along the row)."""

    @tilec.jit
    def tail_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n)

    kernel = tilec.compile(tail_copy, signature={"x_ptr": "*fp16:16", "y_ptr": "*fp16:16", "n": "i32"},
                           target="sm_90a", num_warps=4, constexprs={"BLOCK": 1024})
    assert "sizePerThread = array<i32: 1>" in kernel.asm["ttgir"]
    assert "cp.async" not in kernel.asm["ptx"]


def test_tutorial_08_descriptors_from_loaded_bases_stream_through_a_ring():
    kernel = tilec.compile(grouped_descriptor_matmul, signature=GROUPED_SIGNATURE, target="sm_90a", num_warps=4,
                           num_stages=3, constexprs={"NUM_PROGRAMS": 132, "BM": 128, "BN": 128, "BK": 64})
    ptx = kernel.asm["ptx"]
    assert BULK_LOAD not in ptx  # loaded bases: the pointer form
    loop = _loop(ptx)
    assert "wgmma.mma_async" in loop
    # A [128, 64] and B [128, 64]: 8 + 8 copies of 16 bytes a thread per stage, cut by K
    assert len(BOUNDED_COPY.findall(loop)) == 16
    assert "ld.global" not in loop
    assert kernel.shared >= 3 * 2 * 128 * 64 * 2  # two 3-slot rings (was 32 KB: one staging buffer each)
    assert kernel.n_spills == 0  # was 772 bytes
    # The bounds compare int32 indices with the int32 shape (one instruction per compare
    # rather than two: there were 144 setp.lt.s64).
    assert not re.search(r"setp\.\w+\.[su]64", ptx)
