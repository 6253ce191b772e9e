"""Codegen, without a GPU, of loads and stores under a tail mask: tilegpu-coalesce gives
a thread no longer a run than the mask's constancy along the contiguous dimension (as
Triton's coalescing does), since a mask that may change at any element splits a wider
access into scalar ones anyway.

LayerNorm forward over rows of 1000 (k_layernorm, 1024 block, 4 warps; 1000 is not a
multiple of 16, so the `cols < N` tail mask may change at any element): the weight and
bias loads had 8 elements per thread, as their aligned pointers allow, but the mask made
them 8 scalar loads anyway, and each result then went through shared memory to the row's
layout (one element per thread, its stride being unknown), the bias's loads waiting for
the weight's conversion (0.94x Triton). Now every tensor of the kernel has one layout and
there is no conversion.
"""
from __future__ import annotations

import re

import pytest

import tilec
from tilec.backend import toolkit
from tilec_testing import layer_norm_fwd_kernel

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


def _lines(ptx: str, pattern: str) -> list[int]:
    return [i for i, line in enumerate(ptx.splitlines()) if re.search(pattern, line)]


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_layer_norm_tail_mask_needs_no_conversion(dtype):
    signature = {"X": f"*{dtype}:16", "Y": f"*{dtype}:16", "W": f"*{dtype}:16", "B": f"*{dtype}:16",
                 "Mean": "*fp32:16", "Rstd": "*fp32:16", "stride": "i32", "N": "i32", "eps": "fp32"}
    kernel = tilec.compile(layer_norm_fwd_kernel, signature=signature, target="sm_90a", num_warps=4,
                           constexprs={"BLOCK_N": 1024})
    assert "convert_layout" not in kernel.asm["ttgir"]
    ptx = kernel.asm["ptx"]
    # shared memory only for the two reductions' partials: one 4-byte load per lane each
    assert re.findall(r"^\s*(?:@%p\d+\s+)?ld\.shared\.(\S+)", ptx, re.M) == ["b32", "b32"]
    assert not _lines(ptx, r"st\.shared\.v"), "a loaded row went through shared memory"
    # x, w and b: 8 scalar loads each per thread (the mask splits any wider access)
    assert len(_lines(ptx, r"ld\.global\.b16")) == 24
