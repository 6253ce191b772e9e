"""Codegen, without a GPU, of attention's second dot (p @ v), whose A operand is already
in registers: tilegpu-optimize-dot-operands slices it along K like a dot read from
shared memory, taking A's slices with tilegpu.extract_slice (a register selection) and
B's through memdesc_subview, so only one 16-deep slice of V's fragments is live at a
time. For HEAD_DIM 64, BLOCK_M 128, BLOCK_N 64 on 4 warps, sm_80, the kernel then fits
in registers: ptxas reports no spills and the PTX has no local-memory traffic."""
from __future__ import annotations

import re

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def attention_kernel(Q, K, V, Out, sm_scale, stride_qm, stride_kn, stride_vn, stride_om, N_CTX,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Flash-attention forward (non-causal), as in benchmarks/bench_attention.py: one
    program's BLOCK_M queries against every key, online softmax in base 2."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * stride_qm + offs_d[None, :])
    k_ptrs = K + offs_n[None, :] * stride_kn + offs_d[:, None]       # [HEAD_DIM, BLOCK_N]
    v_ptrs = V + offs_n[:, None] * stride_vn + offs_d[None, :]       # [BLOCK_N, HEAD_DIM]
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in tl.range(0, N_CTX, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_ptrs + start_n * stride_kn)
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs + start_n * stride_vn)
        acc = tl.dot(p.to(tl.float16), v, acc)                      # A = p: from the #mma result
        m_i = m_ij
    out = acc / l_i[:, None]
    tl.store(Out + offs_m[:, None] * stride_om + offs_d[None, :], out.to(tl.float16))


SIGNATURE = {"Q": "*fp16:16", "K": "*fp16:16", "V": "*fp16:16", "Out": "*fp16:16", "sm_scale": "fp32",
             "stride_qm": "i32:16", "stride_kn": "i32:16", "stride_vn": "i32:16", "stride_om": "i32:16",
             "N_CTX": "i32:16"}


@pytest.fixture(scope="module")
def attention():
    return tilec.compile(attention_kernel, signature=SIGNATURE, target="sm_80", num_warps=4, num_stages=3,
                         constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64})


def _definitions(ttgir: str) -> dict[str, str]:
    """Each SSA value of the ttgir (as printed: `%12 = "op"(...) ...`) to its line."""
    return {m[1]: m[0] for m in re.finditer(r"^\s*(%\w+) = .*$", ttgir, re.M)}


def _operand(line: str, op: str) -> str:
    """The first operand of `op` on `line`."""
    return re.search(rf'"{re.escape(op)}"\((%\w+)', line)[1]


def test_p_operand_is_sliced_along_k_in_registers(attention):
    ttgir = attention.asm["ttgir"]
    defs = _definitions(ttgir)
    dots = re.findall(r'^\s*(%\w+) = "tile\.dot"\((%\w+), (%\w+), (%\w+)\)', ttgir, re.M)
    p_dots = [dot for dot in dots if '"tilegpu.extract_slice"' in defs[dot[1]]]
    # p @ v (K = BLOCK_N = 64) becomes 4 dots one m16n8k16 deep, chained through the
    # accumulator; dot i takes the [128, 16] slice of the one converted p at K offset
    # 16 * i by extract_slice ...
    assert len(p_dots) == 4
    assert len({_operand(defs[a], "tilegpu.extract_slice") for _, a, _, _ in p_dots}) == 1
    for i, (result, a, b, acc) in enumerate(p_dots):
        assert (f"{{offsets = array<i32: 0, {16 * i}>}} : (tensor<128x64xf16, #dot_op0>) "
                f"-> tensor<128x16xf16, #dot_op0>") in defs[a]
        if i:
            assert acc == p_dots[i - 1][0]
        # ... and the matching 16 rows of V, read alone from its shared-memory slot.
        assert '"tilegpu.local_load"' in defs[b] and defs[b].endswith("-> tensor<16x64xf16, #dot_op1>")
        view = defs[_operand(defs[b], "tilegpu.local_load")]
        assert '"tilegpu.memdesc_subview"' in view and f"{{offsets = array<i32: {16 * i}, 0>}}" in view
        assert "-> !tilegpu.memdesc<tensor<16x64xf16," in view
    # No whole-K dot remains, nor a whole [64, 64] operand in registers.
    assert "tensor<128x64xf16, #dot_op0>, tensor<64x64xf16" not in ttgir
    assert "-> tensor<64x64xf16, #dot_op1>" not in ttgir


def test_attention_does_not_spill_on_sm_80(attention):
    ptx = attention.asm["ptx"]
    # No local memory in the PTX itself (no stack arrays left by the lowering), and none
    # added by ptxas's register allocation: with p @ v taken whole, V's 64x64 fragments
    # stay live beside p and the accumulator, and ptxas spills (4 bytes here).
    assert "ld.local" not in ptx and "st.local" not in ptx
    assert attention.n_spills == 0
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
