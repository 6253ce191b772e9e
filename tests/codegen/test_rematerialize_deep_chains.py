"""Codegen, without a GPU, of seeded dropout (Triton's tutorial 04, the corpus's
k_dropout): `keep = tl.rand(seed, offs) > p` is ten Philox rounds of elementwise integer
work on `offs`, and `x` comes from a load that coalescing gives 8 elements a thread.

The whole Philox chain is index arithmetic (make_range, splat, constants, elementwise
ops), so tilegpu-remove-layout-conversions can compute it in the load's layout, and the
kernel needs no layout conversion (Triton's output has none). The chain is 37 to 39 ops
deep: when rematerialisation stopped at a depth of 32, `x` went to the
one-element-a-thread layout and back through shared memory (2 conversions here, 3 in the
bias + dropout + residual kernel, about 8% more instructions, and the corpus's dropout
rows at 0.93-0.96x Triton's speed)."""
from __future__ import annotations

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    out = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_philox_chain_runs_in_the_load_layout(dtype):
    kernel = tilec.compile(dropout_kernel, target="sm_90a", num_warps=4, constexprs={"BLOCK": 1024},
                           signature={"x_ptr": f"*{dtype}:16", "out_ptr": f"*{dtype}:16", "n": "i32:16",
                                      "p": "fp32", "seed": "i32"})
    assert "tilegpu.convert_layout" not in kernel.asm["ttgir"]
    ptx = kernel.asm["ptx"]
    assert "st.shared" not in ptx and "ld.shared" not in ptx
    assert ptx.count("ld.global.v4.b32") == (1 if dtype == "fp16" else 2)
