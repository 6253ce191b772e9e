"""Pipeline rings read into registers hold num_stages - 1 slots, as Triton's do.

A dot whose operands reach it in registers (mma.sync, and FMA dots) reads a ring slot
with local_loads; once those reads end, the slot can take the copy for iteration
i + S - 1, so S - 1 slots keep S - 1 tiles in flight (tilegpu-pipeline's header).
A config that fits Triton's shared memory then fits tilec's: vLLM's tuned H100 MoE
config, 16x128x128 at num_stages=4 with fp32 activations, needs 3 x (16x128 + 128x128)
floats = 221,184 bytes on both (it was four slots, 294,912, over sm_90's 232,448).
wgmma reads its slots asynchronously, so its rings keep S slots (as Triton's do).

The values are checked on both backends over K extents shorter than the pipeline (the
prologue's copies of iterations that do not exist) and longer (the slot counter wraps),
with outputs poisoned past the result.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec_testing import device_array, to_numpy

POISON = -5555.0


@tilec.jit
def skinny_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C[M, N] = A[M, K] @ B[K, N] with M up to BM (a decode step's few rows), fp32 out."""
    rm = tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


_NUMPY = {"fp16": np.float16, "fp32": np.float32}
# fp32 operands go through tf32 on tensor cores: 10-bit mantissas.
_TOLERANCE = {"fp16": 2e-3, "fp32": 4e-3}


@pytest.mark.parametrize("num_stages", [2, 3, 4, 5])
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("k", [40, 200, 1000])
def test_skinny_matmul_values(backend, rng, num_stages, dtype, k):
    m, n, bm, bn, bk = 11, 96, 16, 64, 32
    a = rng.uniform(-1.0, 1.0, (m, k)).astype(_NUMPY[dtype])
    b = rng.uniform(-1.0, 1.0, (k, n)).astype(_NUMPY[dtype])
    c = np.full((bm, 128), POISON, dtype=np.float32)
    a_dev, b_dev, c_dev = (device_array(x, backend) for x in (a, b, c))
    skinny_matmul[(2,)](a_dev, b_dev, c_dev, m, n, k, k, n, 128, BM=bm, BN=bn, BK=bk, num_stages=num_stages)
    got = to_numpy(c_dev)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got[:m, :n], want, rtol=_TOLERANCE[dtype], atol=_TOLERANCE[dtype] * np.sqrt(k))
    outside = np.ones(got.shape, bool)
    outside[:m, :n] = False
    assert (got[outside] == np.float32(POISON)).all(), "written past the result"


# ----------------------------------------------------------------------------- codegen

def _compile(dtype: str, block: tuple[int, int, int], num_stages: int, target: str = "sm_90"):
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
        pytest.skip("ptxas is not available")
    bm, bn, bk = block
    pointer = f"*{dtype}:16"
    signature = {"a_ptr": pointer, "b_ptr": pointer, "c_ptr": "*fp32:16", "M": "i32", "N": "i32:16", "K": "i32:16",
                 "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}
    return tilec.compile(skinny_matmul, signature=signature, target=target, num_warps=4, num_stages=num_stages,
                         constexprs={"BM": bm, "BN": bn, "BK": bk})


def _rings(ttgir: str) -> list[str]:
    return re.findall(r'"tilegpu.local_alloc"\(\)[^\n]*-> !tilegpu.memdesc<tensor<(\d+x\d+x\d+)x', ttgir)


def test_the_vllm_moe_config_fits_as_on_triton():
    """16x128x128, num_stages=4, fp32: three slots of each operand (Triton 3.6 reports
    221,184 bytes of shared memory for this kernel)."""
    kernel = _compile("fp32", (16, 128, 128), 4)
    assert sorted(_rings(kernel.asm["ttgir"])) == ["3x128x128", "3x16x128"]
    assert kernel.shared == 3 * (16 * 128 + 128 * 128) * 4


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
@pytest.mark.parametrize("num_stages", [2, 3, 4])
def test_register_rings_hold_one_slot_less_than_the_stages(target, num_stages):
    kernel = _compile("fp16", (16, 64, 64), num_stages, target)
    assert sorted(_rings(kernel.asm["ttgir"])) == [f"{num_stages - 1}x16x64", f"{num_stages - 1}x64x64"]
    assert kernel.shared == (num_stages - 1) * (16 * 64 + 64 * 64) * 2


def test_copies_follow_every_read_of_the_slot_they_refill():
    """In the loop: the wait, a barrier, the reads of the slot (ldmatrix, a K slice at a
    time at the dots), then a barrier and the copies into that same slot."""
    ptx = _compile("fp16", (16, 64, 64), 3).asm["ptx"]
    loop = ptx.split("cp.async.wait_group 	1;", 1)[1].split("cp.async.wait_group 	0;")[0]
    reads = [m.start() for m in re.finditer(r"ldmatrix", loop)]
    copies = [m.start() for m in re.finditer(r"cp\.async\.cg", loop)]
    barriers = [m.start() for m in re.finditer(r"bar\.sync", loop)]
    assert reads and copies and len(barriers) == 2
    assert barriers[0] < reads[0] and max(reads) < barriers[1] < min(copies)


def test_wgmma_rings_keep_num_stages_slots():
    kernel = _compile("fp16", (64, 64, 64), 3)
    assert "wgmma.mma_async" in kernel.asm["ptx"]
    assert sorted(_rings(kernel.asm["ttgir"])) == ["3x64x64", "3x64x64"]


@tilec.jit
def attention_rows(q_ptr, k_ptr, v_ptr, o_ptr, N, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """softmax(q k^T) v for BM query rows, V's load right after q @ k (where the
    pipeline refills K's ring)."""
    rm, rn, rd = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    k_ptrs = k_ptr + rn[None, :] * D + rd[:, None]
    v_ptrs = v_ptr + rn[:, None] * D + rd[None, :]
    m_i = tl.full([BM], -float("inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for _ in range(0, N, BN):
        qk = tl.dot(q, tl.load(k_ptrs))
        v = tl.load(v_ptrs)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
        k_ptrs += BN * D
        v_ptrs += BN * D
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc / l_i[:, None])


@pytest.mark.parametrize("num_stages", [2, 3])
def test_attention_rows_values(backend, rng, num_stages):
    bm, bn, d, n = 16, 32, 64, 160
    q = rng.uniform(-1.0, 1.0, (bm, d)).astype(np.float16)
    k = rng.uniform(-1.0, 1.0, (n, d)).astype(np.float16)
    v = rng.uniform(-1.0, 1.0, (n, d)).astype(np.float16)
    out = np.full((bm, d), POISON, dtype=np.float32)
    q_dev, k_dev, v_dev, o_dev = (device_array(x, backend) for x in (q, k, v, out))
    attention_rows[(1,)](q_dev, k_dev, v_dev, o_dev, n, BM=bm, BN=bn, D=d, num_stages=num_stages)
    scores = q.astype(np.float64) @ k.astype(np.float64).T
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    want = (weights / weights.sum(axis=1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(to_numpy(o_dev), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_each_ring_is_refilled_after_its_own_dot(target):
    """K's ring right after q @ k (before the softmax's reductions), V's after p @ v; one
    slot each at num_stages=2."""
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
        pytest.skip("ptxas is not available")
    kernel = tilec.compile(attention_rows, signature={"q_ptr": "*fp16:16", "k_ptr": "*fp16:16", "v_ptr": "*fp16:16",
                                                      "o_ptr": "*fp32:16", "N": "i32:16"},
                           constexprs={"BM": 16, "BN": 32, "D": 64}, target=target, num_stages=2)
    assert sorted(_rings(kernel.asm["ttgir"])) == ["1x32x64", "1x64x32"]
    body = kernel.asm["ttgir"].split("scf.for", 1)[1].split("scf.yield", 1)[0]
    order = re.findall(r'"(tile\.dot|tile\.reduce|tilegpu\.async_copy_global_to_local|tilegpu\.async_commit_group)"',
                       body)
    first_copy = order.index("tilegpu.async_copy_global_to_local")
    assert "tile.reduce" not in order[:first_copy] and "tile.reduce" in order[first_copy:]
    assert order[-2:] == ["tilegpu.async_copy_global_to_local", "tilegpu.async_commit_group"]
    assert order.count("tilegpu.async_commit_group") == 1


# ----------------------------------------------------------------------------- tiles at addresses read from a table

@tilec.jit
def gathered_matmul(a_ptr, b_ptr, idx_ptr, c_ptr, n_blocks, K, N: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = sum over i of A[:, blk] @ B[blk, :] with blk = idx[i] (a block-sparse layout,
    as vLLM's blocksparse attention reads its K and V blocks)."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(n_blocks):
        kb = tl.load(idx_ptr + i)
        a = tl.load(a_ptr + rm[:, None] * K + (kb * BK + rk)[None, :])
        b = tl.load(b_ptr + (kb * BK + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.parametrize("num_stages", [2, 3, 4])
@pytest.mark.parametrize("n_blocks", [1, 2, 7])
def test_tiles_at_addresses_read_from_a_table(backend, rng, num_stages, n_blocks):
    bm, bn, bk, k_blocks = 16, 32, 32, 6
    a = rng.uniform(-1.0, 1.0, (bm, k_blocks * bk)).astype(np.float16)
    b = rng.uniform(-1.0, 1.0, (k_blocks * bk, bn)).astype(np.float16)
    idx = rng.integers(0, k_blocks, n_blocks).astype(np.int32)  # repeats and any order
    c = device_array(np.full((bm, bn), POISON, np.float32), backend)
    gathered_matmul[(1,)](device_array(a, backend), device_array(b, backend), device_array(idx, backend), c,
                          n_blocks, k_blocks * bk, N=bn, BM=bm, BN=bn, BK=bk, num_stages=num_stages)
    want = sum(a[:, j * bk:(j + 1) * bk].astype(np.float64) @ b[j * bk:(j + 1) * bk].astype(np.float64) for j in idx)
    np.testing.assert_allclose(to_numpy(c), want, rtol=2e-3, atol=2e-3 * np.sqrt(n_blocks * bk))


@pytest.mark.parametrize("target, slots", [("sm_80", 1), ("sm_90", 2)])
@pytest.mark.parametrize("num_stages", [3, 4])
def test_table_read_tiles_are_copied_one_iteration_ahead(target, slots, num_stages):
    """As in Triton 3.6: one slot per ring read into registers, two for wgmma, whatever
    num_stages; vLLM's blocksparse fp32 prefill (Triton: 163,848 bytes) then fits on
    sm_90 (it needed 245,760 and raised OutOfResources). The table entries are loaded an
    iteration before the copies that read them (tilegpu-pipeline's header)."""
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
        pytest.skip("ptxas is not available")
    signature = {"a_ptr": "*fp32:16", "b_ptr": "*fp32:16", "idx_ptr": "*i32:16", "c_ptr": "*fp32:16",
                 "n_blocks": "i32", "K": "i32:16"}
    kernel = tilec.compile(gathered_matmul, signature=signature, target=target, num_warps=4, num_stages=num_stages,
                           constexprs={"N": 128, "BM": 64, "BN": 128, "BK": 64})
    ttgir = kernel.asm["ttgir"]
    assert sorted(_rings(ttgir)) == [f"{slots}x64x128", f"{slots}x64x64"]
    assert kernel.shared == slots * (64 * 64 + 64 * 128) * 4
    loop = ttgir.split("scf.for", 1)[1]
    body, after_copies = loop.split('"tilegpu.async_commit_group"', 1)
    assert '"tile.load"' not in body  # the entries the copies read came from the last iteration
    assert after_copies.split("scf.yield", 1)[0].count('"tile.load"') == 1  # those of the next one
