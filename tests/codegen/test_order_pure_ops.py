"""tilegpu-order-pure-ops, checked in the PTX of a memory-bound row kernel without a GPU.

SwiGLU backward (the corpus's k_swiglu: a row of 14336 fp16 in a 16384 block, 16 warps)
makes three vector loads and two stores per 8 elements, one chain of elementwise ops
between them. Lowered op by op, the chain reached ptxas as 32 exponentials, then 32
divisions...: to bound the registers all those intermediates take, ptxas spread the 12
loads of a thread over 5 groups that each waited for memory, used 72 registers (one
program of 512 threads per SM), and the kernel ran at 0.87x Triton's speed on an H200.
Ordered element by element, the stores' values are finished in turn, the 12 loads go
out together, 64 registers (two programs per SM): 1.03x."""
from __future__ import annotations

import re

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec.config import config
from tilec_testing import swiglu_bwd_kernel

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def scaled_matmul(a_ptr, b_ptr, c_ptr, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    c = tl.dot(a, b) * scale
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], tl.exp(c).to(tl.float16))


SWIGLU_SIGNATURE = {name: "*fp16:16" for name in ("DC", "A", "B", "DA", "DB")} | {"stride": "i32:16",
                                                                                  "n_cols": "i32:16"}


def _compile_swiglu():
    return tilec.compile(swiglu_bwd_kernel, signature=SWIGLU_SIGNATURE, target="sm_90a", num_warps=16,
                         constexprs={"BLOCK": 16384})


def _lines(ptx: str, pattern: str) -> list[int]:
    return [i for i, line in enumerate(ptx.splitlines()) if re.search(pattern, line)]


@pytest.fixture(scope="module")
def swiglu():
    return _compile_swiglu()


def test_swiglu_backward_is_computed_element_by_element(swiglu):
    ptx = swiglu.asm["ptx"]
    loads, stores = _lines(ptx, r"ld\.global\.v4\.b32"), _lines(ptx, r"st\.global\.v4\.b32")
    exps = _lines(ptx, r"ex2\.approx\.f32")
    assert (len(loads), len(stores), len(exps)) == (12, 8, 32)
    # the loads first, together; the first store's 8 values before most of the other exponentials
    assert max(loads) < min(exps)
    assert sum(e < min(stores) for e in exps) <= 8, "the chain was lowered op by op"


def test_swiglu_backward_leaves_room_for_two_programs(swiglu):
    registers_per_program = -(-swiglu.n_regs // 8) * 8 * 512
    assert swiglu.n_spills == 0
    assert 65536 // registers_per_program == 2, swiglu.n_regs


def test_turned_off_keeps_the_lowering_order(monkeypatch):
    monkeypatch.setattr(config, "order_pure_ops", False)
    ptx = _compile_swiglu().asm["ptx"]
    exps, stores = _lines(ptx, r"ex2\.approx\.f32"), _lines(ptx, r"st\.global\.v4\.b32")
    assert all(e < min(stores) for e in exps)  # op by op: every exponential before any store


def test_tensor_core_kernels_are_left_alone(monkeypatch):
    def ptx():
        return tilec.compile(scaled_matmul, signature={"a_ptr": "*fp16:16", "b_ptr": "*fp16:16",
                                                       "c_ptr": "*fp16:16", "scale": "fp32"},
                             target="sm_90a", num_warps=4, constexprs={"BLOCK": 64}).asm["ptx"]
    on = ptx()
    assert "wgmma.mma_async" in on
    monkeypatch.setattr(config, "order_pure_ops", False)
    assert ptx() == on
