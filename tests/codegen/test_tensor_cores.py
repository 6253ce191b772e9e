"""Codegen of tl.dot on tensor cores, without a GPU: the PTX of the tutorial matmul
(Triton tutorial 03's kernel, from test_software_pipelining.py: loop-carried pointers, a
masked K tail, an fp16 epilogue)
and of each dot type has the instructions the sm_80 path promises (and on sm_90 the wgmma
path), and ptxas takes it."""
from __future__ import annotations

import collections
import re

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


def _tutorial_matmul(target: str):
    # The tutorial kernel and its launch-time specialisation live beside the pipelining tests.
    from test_software_pipelining import compile_matmul
    return compile_matmul(target, num_stages=3, block=(128, 128, 32), num_warps=4)


def _counts(ptx: str) -> collections.Counter:
    """How often each PTX instruction occurs, those inside inline-asm braces
    (`{ .reg .pred p; setp...; cp.async...; }`) included."""
    return collections.Counter(re.findall(r"(?:^|[{;])\s*(?:@!?%?\w+\s+)?([a-z][\w.]*)", ptx, re.M))


@pytest.mark.parametrize("target, wgmma", [("sm_80", True), ("sm_90", False)])
def test_tutorial_matmul_runs_on_tensor_cores(target, wgmma, monkeypatch):
    """mma.sync: on sm_80, and on sm_90 with wgmma turned off (TILEC_WGMMA=0)."""
    from tilec.config import config
    monkeypatch.setattr(config, "wgmma", wgmma)
    kernel = _tutorial_matmul(target)
    counts = _counts(kernel.asm["ptx"])
    # 128x128x32 per iteration over 4 warps: 64 instructions m16n8k16 per thread's warp.
    assert counts["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"] == 64
    # A (K-major in shared memory) by ldmatrix, B (N-major) by ldmatrix.trans: 8 each.
    assert counts["ldmatrix.sync.aligned.m8n8.x4.shared.b16"] == 8
    assert counts["ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"] == 8
    # Pipelined (num_stages=3): the operands arrive by 16-byte cp.async into 2-slot rings
    # (num_stages - 1, as Triton's), 8 copies per iteration (4 for A, 4 for B) in the body
    # and in each of the two prologue stages; the body waits for all but the newest group.
    assert counts["cp.async.cg.shared.global"] == 24 and counts["cp.async.commit_group"] == 3
    assert re.search(r"cp\.async\.wait_group\s+1;", kernel.asm["ptx"]) and "ld.global" not in kernel.asm["ptx"]
    assert kernel.shared == 2 * (128 * 32 + 32 * 128) * 2
    assert kernel.n_spills == 0 and kernel.asm["cubin"][:4] == b"\x7fELF"
    # In the loop: the wait's barrier, the first K slice's reads (so the first mma waits
    # for no other), every mma with the other slices' reads, then a barrier and the
    # copies that refill the slots just read.
    body = re.split(r"cp\.async\.wait_group\s+1;", kernel.asm["ptx"])[1]
    ops = re.findall(r"(?:^|[{;])\s*(?:@%p\d+\s+)?(bar\.sync|ldmatrix[\w.]*|cp\.async\.cg[\w.]*|mma\.sync[\w.]*)",
                     body, re.M)
    assert ops[0] == "bar.sync" and ops[1].startswith("ldmatrix"), ops[:4]
    first_copy = ops.index("cp.async.cg.shared.global")
    first_mma = next(i for i, op in enumerate(ops) if op.startswith("mma"))
    assert ops[0] == "bar.sync" and first_mma >= 3, ops[:first_mma + 1]
    assert all(op.startswith("ldmatrix") for op in ops[1:first_mma]), ops[:first_mma + 1]
    assert ops[first_copy - 1] == "bar.sync" and ops[:first_copy].count(ops[first_mma]) == 64, ops[:first_copy + 1]


def test_tutorial_matmul_runs_on_wgmma_on_hopper():
    """sm_90: the same kernel on warpgroup instructions. 128x128x32 per iteration over one
    warpgroup: two m64n128k16 instructions per 16 of K (M repeats twice), so 4 per
    iteration; the operands arrive as before by cp.async into 3-slot rings (NVMMA
    layouts now, read by the instructions through descriptors: no ldmatrix), and each
    dot's group stays in flight while the next iteration starts (wait for all but one),
    the last one waited for after the loop."""
    kernel = _tutorial_matmul("sm_90")
    ptx = kernel.asm["ptx"]
    counts = _counts(ptx)
    assert counts["wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"] == 4
    assert counts["wgmma.fence.sync.aligned"] == 1 and counts["wgmma.commit_group.sync.aligned"] == 1
    # The rings are filled by cp.async: no proxy fence (only threads' own shared-memory
    # writes of a staged operand need one).
    assert "fence.proxy.async" not in ptx
    assert "mma.sync" not in ptx and "ldmatrix" not in ptx
    assert counts["cp.async.cg.shared.global"] == 24 and counts["cp.async.commit_group"] == 3
    assert kernel.shared == 3 * (128 * 32 + 32 * 128) * 2
    assert kernel.n_spills == 0 and kernel.asm["cubin"][:4] == b"\x7fELF"
    assert ".align 1024" in ptx  # the swizzle works on absolute shared addresses
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx)   # in the loop: the newest stays in flight
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+0;", ptx)   # after it: the last one


def test_pointer_store_epilogue_exchanges_through_stmatrix_on_hopper():
    """The tutorial's epilogue (the fp16 accumulator stored through pointers, 8 columns a
    thread) changes layout through shared memory: on sm_90 the accumulator goes in by
    `stmatrix.x4` and comes out by 16-byte loads (16 of each a thread for 128x128 on four
    warps, where the plain exchange took 32 8-byte stores and 32 8-byte loads);
    tests/unit/test_stmatrix_plan.py checks the places and the banks. sm_80 has no
    stmatrix and keeps the plain exchange."""
    hopper = _counts(_tutorial_matmul("sm_90").asm["ptx"])
    assert hopper["stmatrix.sync.aligned.m8n8.x4.shared.b16"] == 16, hopper
    assert hopper["ld.shared.v4.b32"] == 16 and not any(k.startswith("st.shared") for k in hopper), hopper
    ampere = _counts(_tutorial_matmul("sm_80").asm["ptx"])
    assert not any(k.startswith("stmatrix") for k in ampere) and any(k.startswith("st.shared") for k in ampere)


def test_two_warpgroups_take_the_warp_index_from_lane_0():
    """8 warps: two warpgroups along M, each's A descriptor offset by its warpgroup. The
    warp index is broadcast from lane 0 (shfl.sync.idx) so ptxas keeps the descriptors
    in uniform registers; tid / 32 alone left them in ordinary registers, with an R2UR
    per wgmma instruction in the loop. The broadcast is made once, before the loop:
    ptxas does not move a shuffle out of a loop, and each iteration's first wgmma would
    wait for it."""
    from test_software_pipelining import compile_matmul
    kernel = compile_matmul("sm_90", num_stages=3, block=(128, 128, 32), num_warps=8)
    ptx = kernel.asm["ptx"]
    shuffles = [m.start() for m in re.finditer(r"shfl\.sync\.idx\.b32\s+%r\d+, %r\d+, 0, 31, -1;", ptx)]
    assert len(shuffles) == 1, ptx[-3000:]
    assert shuffles[0] < ptx.index("cp.async.wait_group")  # in the prologue, not in the loop
    assert _counts(ptx)["wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"] == 2
    assert kernel.n_spills == 0


@tilec.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PRECISION: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, input_precision=PRECISION))


@pytest.mark.parametrize("dtype,out,precision,instruction", [
    ("fp16", "fp32", "ieee", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
    ("bf16", "fp32", "ieee", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    ("fp32", "fp32", "tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
    ("i8", "i32", "ieee", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"),
    ("fp32", "fp32", "ieee", None),     # full fp32: the FMA path
    ("fp64", "fp64", "ieee", None),
])
def test_dot_types_choose_their_instruction(dtype, out, precision, instruction):
    signature = {"a_ptr": f"*{dtype}:16", "b_ptr": f"*{dtype}:16", "c_ptr": f"*{out}:16"}
    kernel = tilec.compile(dot_kernel, signature=signature, target="sm_80",
                           constexprs={"M": 64, "N": 64, "K": 64, "PRECISION": precision})
    ptx = kernel.asm["ptx"]
    if instruction is None:
        assert "mma.sync" not in ptx and ("fma.rn" in ptx)
    else:
        assert instruction in ptx and "#tilegpu.mma" in kernel.asm["ttgir"]
    # tf32 operands go to the instruction as fp32 registers (it drops their low bits, as
    # Triton's do): no conversion an element.
    assert "cvt.rna.tf32" not in ptx


def test_tf32_on_the_fma_path_clears_the_low_bits():
    """K below the instruction's: the FMA path reads the operands as the tensor cores
    would, 13 low bits cleared (`and` with 0xFFFFE000), not rounded."""
    kernel = tilec.compile(dot_kernel, signature={"a_ptr": "*fp32:16", "b_ptr": "*fp32:16", "c_ptr": "*fp32:16"},
                           target="sm_80", constexprs={"M": 16, "N": 16, "K": 4, "PRECISION": "tf32"})
    ptx = kernel.asm["ptx"]
    assert "mma.sync" not in ptx and "cvt.rna.tf32" not in ptx
    assert re.search(r"and\.b32\s+%r\d+, %r\d+, -8192;", ptx)


def test_tf32x3_runs_three_tf32_dots_on_tensor_cores():
    """"tf32x3" splits each operand into a tf32 part and the rest and issues three tf32
    products: three times the mma instructions of "tf32", and no FMA-path dot."""
    signature = {"a_ptr": "*fp32:16", "b_ptr": "*fp32:16", "c_ptr": "*fp32:16"}
    count = {}
    for precision in ("tf32", "tf32x3"):
        kernel = tilec.compile(dot_kernel, signature=signature, target="sm_80",
                               constexprs={"M": 64, "N": 64, "K": 32, "PRECISION": precision})
        count[precision] = kernel.asm["ptx"].count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")
        assert "fma.rn.f32" not in kernel.asm["ptx"]
    assert count["tf32"] > 0 and count["tf32x3"] == 3 * count["tf32"]


@pytest.mark.parametrize("precision,dots", [("bf16x3", 3), ("bf16x6", 6)])
def test_bf16_split_precisions_run_bf16_dots_on_tensor_cores(precision, dots):
    """"bf16x3" and "bf16x6" split each fp32 operand into two or three bf16 parts and
    issue three or six bf16 products on tensor cores (a bf16 dot of the same shape takes
    one)."""
    signature = {"a_ptr": "*fp32:16", "b_ptr": "*fp32:16", "c_ptr": "*fp32:16"}
    bf16 = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    one = tilec.compile(dot_kernel, signature={**signature, "a_ptr": "*bf16:16", "b_ptr": "*bf16:16"},
                        target="sm_80", constexprs={"M": 64, "N": 64, "K": 32, "PRECISION": "ieee"})
    split = tilec.compile(dot_kernel, signature=signature, target="sm_80",
                          constexprs={"M": 64, "N": 64, "K": 32, "PRECISION": precision})
    assert one.asm["ptx"].count(bf16) > 0
    assert split.asm["ptx"].count(bf16) == dots * one.asm["ptx"].count(bf16)
    assert "fma.rn.f32" not in split.asm["ptx"] and "tf32" not in split.asm["ptx"]


def test_sm_75_keeps_the_fma_path():
    kernel = tilec.compile(dot_kernel, signature={"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp32:16"},
                           target="sm_75", constexprs={"M": 32, "N": 32, "K": 32, "PRECISION": "ieee"})
    assert "mma.sync" not in kernel.asm["ptx"] and "#tilegpu.mma" not in kernel.asm["ttgir"]


@tilec.jit
def _descriptor_store_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([0, k * BK]), b_desc.load([k * BK, 0]), acc)
    c_desc.store([0, 0], acc.to(tl.float16))


@pytest.mark.parametrize("target, stmatrix", [("sm_90", True), ("sm_80", False)])
def test_accumulator_tiles_reach_shared_memory_by_stmatrix_on_hopper(target, stmatrix):
    """A 16-bit accumulator tile written to shared memory for a TMA store goes through
    `stmatrix.x4` on sm_90 (one instruction per four 8x8 matrices a warp holds, as
    Triton's epilogue; tests/unit/test_stmatrix_plan.py simulates its addresses), and
    ptxas takes it; sm_80 has no stmatrix."""
    kernel = tilec.compile(_descriptor_store_matmul, signature={"a_ptr": "*fp16:16", "b_ptr": "*fp16:16",
                                                                "c_ptr": "*fp16:16", "M": "i32:16", "N": "i32:16",
                                                                "K": "i32:16"},
                           constexprs={"BM": 128, "BN": 128, "BK": 64}, target=target, num_warps=4)
    counts = _counts(kernel.asm["ptx"])
    assert kernel.asm["cubin"]
    if stmatrix:
        # 128x128 halves over 128 threads: 128 a thread, 8 in each x4 instruction.
        assert counts["stmatrix.sync.aligned.m8n8.x4.shared.b16"] == 16, counts
        assert not any(name.startswith("st.shared") for name in counts), counts
    else:
        assert not any(name.startswith("stmatrix") for name in counts)
