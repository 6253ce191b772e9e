"""Codegen, without a GPU, of an int8 matmul whose B is N-contiguous on sm_90 (the corpus
case `matmul int8 [64x8192x8192]`, 0.56x Triton before).

wgmma reads 8-bit operands only K-major, so each thread loads its rows of B with
`ld.global.v4` into registers and transposes them into the ring with byte stores
(`st.shared.b8`, bytes taken out of the loaded words by `prmt`). ptxas places the global
loads by the order of those stores: when the stores of each loaded vector formed one
block (register order), it let each load's registers die before the next load, reused
them and issued the four loads one after another, a memory latency each, every
iteration. The stores are grouped by address base instead (as Triton orders them),
which spreads every load's bytes over the whole sequence, and each byte is extracted
right at its store, so the loaded words are all that stays live."""
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
def int8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _ptx(block_m: int, block_n: int, block_k: int, num_warps: int, num_stages: int) -> str:
    signature = {"a_ptr": "*i8:16", "b_ptr": "*i8:16", "c_ptr": "*i32:16", "M": "i32", "N": "i32:16",
                 "K": "i32:16", "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}
    kernel = tilec.compile(int8_matmul, signature=signature, target="sm_90", num_warps=num_warps,
                           num_stages=num_stages, constexprs={"stride_ak": 1, "stride_bn": 1, "BLOCK_M": block_m,
                                                              "BLOCK_N": block_n, "BLOCK_K": block_k})
    return kernel.asm["ptx"]


def _transposing_stores(ptx: str) -> tuple[list[list[str]], list[tuple[int, str, str]]]:
    """The registers of each `ld.global.v4.b32` (the loads of B, in the main loop), and
    the instructions from the first of them to the fence before the dot: (index,
    opcode, text) per instruction."""
    start = ptx.index("ld.global.v4.b32")
    code = ptx[start:ptx.index("fence.proxy.async", start)]
    loads = [re.findall(r"%r\d+", regs) for regs in re.findall(r"ld\.global\.v4\.b32\s*\{([^}]*)\}", code)]
    lines = [line.strip() for line in code.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("//", ".loc", "@"))]
    return loads, [(i, line.split()[0], line) for i, line in enumerate(lines)]


# The corpus case's tiles (the stores' addresses on two bases: a swizzle XORs bit 0 of a
# byte's index into its offset) and a wider tile whose stores all share one base.
@pytest.mark.parametrize("config", [(64, 64, 128, 4, 4), (128, 256, 64, 8, 3)])
def test_int8_b_transpose_keeps_all_loads_in_flight(config):
    block_n, block_k, num_warps = config[1], config[2], config[3]
    ptx = _ptx(*config)
    assert "wgmma.mma_async.sync.aligned.m64n" in ptx and ".s32.s8.s8" in ptx
    loads, body = _transposing_stores(ptx)
    assert len(loads) == block_k * block_n // (16 * 32 * num_warps) > 1
    word_of = {reg: n for n, regs in enumerate(loads) for reg in regs}
    extracted = {}  # prmt result -> (its load, where)
    uses: dict[int, list[int]] = {n: [] for n in range(len(loads))}  # the stores of each load's bytes
    distances = []  # from each prmt to the store of its byte
    for i, opcode, line in body:
        if opcode.startswith("prmt"):
            dst, src = re.findall(r"%r\d+", line)[:2]
            extracted[dst] = (word_of[src], i)
        elif opcode.startswith("st.shared.b8"):
            value = re.findall(r"%r\d+", line.split(",")[-1])[0]
            load, at = (word_of[value], i - 1) if value in word_of else extracted.pop(value)
            uses[load].append(i)
            distances.append(i - at)
    assert not extracted
    assert all(len(stores) == 16 for stores in uses.values())
    # Every loaded vector has a byte stored before the last byte of any other: no load's
    # registers can be reused for another, so ptxas issues them all at once.
    assert max(stores[0] for stores in uses.values()) < min(stores[-1] for stores in uses.values())
    # Each byte is taken out of its word just before its store: only the words stay live.
    assert set(distances) == {1}
