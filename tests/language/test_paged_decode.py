"""Paged-KV decode attention, on both backends: one query token per sequence against a
key/value cache stored in pages scattered through memory, found through a block table
(vLLM's layout), the group of query heads that shares a key/value head computed at
once (grouped-query attention: a dot of M = 16 padded rows).

What the compiler has to get right here (tilegpu-pipeline, tilegpu-accelerate-matmul):
- the key and value tiles' addresses come from the block table, loaded in the same
  iteration: the pipeline loads the table entries of the next iterations ahead, with
  the copies, predicated on those iterations existing (lengths not a multiple of the
  tile, of one token, a loop of one iteration);
- the keys feed the dot transposed (`tl.trans(k)`): their ring is read through a
  transposed view;
- M = 16 with 4 warps: the warps split N, so the row maxima and sums cross warps, and
  p goes to the second dot through shared memory.

The codegen test checks, without a GPU, that the loop streams its tiles with cp.async
(no synchronous 16-byte loads of K or V left) and that the warps do not duplicate
each other's mma work. Inputs are random, outputs poisoned with NaN before the launch,
references in float64.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def paged_decode_kernel(Q, K_cache, V_cache, Table, Lens, Out, sm_scale,
                        stride_kblk, stride_kpage, stride_kh, stride_bt,
                        GROUP: tl.constexpr, BLOCK_H: tl.constexpr, D: tl.constexpr, BLOCK_N: tl.constexpr,
                        PAGE: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    heads_total = tl.num_programs(1) * GROUP
    rows = tl.arange(0, BLOCK_H)
    heads = kv_head * GROUP + rows
    row_ok = rows < GROUP
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, BLOCK_N)
    n = tl.load(Lens + seq)
    q_rows = (seq * heads_total + heads)[:, None] * D
    q = tl.load(Q + q_rows + offs_d[None, :], mask=row_ok[:, None], other=0.0)
    m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, D], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start in range(0, n, BLOCK_N):
        tokens = start + offs_n
        valid = tokens < n
        block = tl.load(Table + seq * stride_bt + tokens // PAGE, mask=valid, other=0)
        row = block.to(tl.int64) * stride_kblk + (tokens % PAGE) * stride_kpage + kv_head * stride_kh
        k = tl.load(K_cache + row[:, None] + offs_d[None, :], mask=valid[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        qk = tl.where(valid[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V_cache + row[:, None] + offs_d[None, :], mask=valid[:, None], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_ij
    tl.store(Out + q_rows + offs_d[None, :], acc / l_i[:, None], mask=row_ok[:, None])


def _inputs(rng, lens, kv_heads, group, dim, page):
    """Query, caches (blocks, page, kv_heads, dim) whose pages are handed out in random
    order (a few to no one), the block table and the lengths."""
    pages = [(n + page - 1) // page for n in lens]
    total = sum(pages) + 3
    order = rng.permutation(total).astype(np.int32)
    table = np.zeros((len(lens), max(pages)), dtype=np.int32)
    used = 0
    for s, count in enumerate(pages):
        table[s, :count] = order[used:used + count]
        used += count
    q = rng.standard_normal((len(lens), kv_heads * group, dim)).astype(np.float16)
    k = rng.standard_normal((total, page, kv_heads, dim)).astype(np.float16)
    v = rng.standard_normal((total, page, kv_heads, dim)).astype(np.float16)
    return q, k, v, table, np.array(lens, dtype=np.int32)


def _reference(q, k, v, table, lens, group, scale):
    page = k.shape[1]
    out = np.empty(q.shape, dtype=np.float64)
    for s, n in enumerate(lens):
        tokens = np.arange(n)
        keys = k[table[s, tokens // page], tokens % page].astype(np.float64)    # (n, kv_heads, dim)
        values = v[table[s, tokens // page], tokens % page].astype(np.float64)
        keys, values = np.repeat(keys, group, axis=1), np.repeat(values, group, axis=1)
        scores = np.einsum("hd,nhd->hn", q[s].astype(np.float64), keys) * scale
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        out[s] = np.einsum("hn,nhd->hd", weights, values)
    return out


@pytest.mark.parametrize("page, num_stages", [(16, 2), (8, 3)])
def test_paged_decode(backend, rng, page, num_stages):
    kv_heads, group, dim, block_n = 2, 4, 64, 32
    lens = [150, 37, 1, 96, 32]   # a partial last tile, one token, whole tiles
    q, k, v, table, lens_array = _inputs(rng, lens, kv_heads, group, dim, page)
    scale = 1.0 / float(np.sqrt(dim))
    out = np.full(q.shape, np.nan, dtype=np.float32)
    args = [device_array(a, backend) for a in (q, k, v, table, lens_array, out)]
    paged_decode_kernel[(len(lens), kv_heads)](
        *args, scale, k.strides[0] // 2, k.strides[1] // 2, k.strides[2] // 2, table.shape[1],
        GROUP=group, BLOCK_H=16, D=dim, BLOCK_N=block_n, PAGE=page, num_warps=4, num_stages=num_stages)
    expected = _reference(q, k, v, table, lens, group, scale)
    np.testing.assert_allclose(to_numpy(args[-1]), expected, rtol=1e-2, atol=5e-3)


# ------------------------------------------------------------------------------- codegen

try:
    from tilec.backend import toolkit
    toolkit.ptxas_path()
    _HAS_PTXAS = True
except Exception:  # pragma: no cover - CI machines have the CUDA toolkit
    _HAS_PTXAS = False

SIGNATURE = {"Q": "*fp16:16", "K_cache": "*fp16:16", "V_cache": "*fp16:16", "Table": "*i32:16", "Lens": "*i32:16",
             "Out": "*fp32:16", "sm_scale": "fp32", "stride_kblk": "i32:16", "stride_kpage": "i32:16",
             "stride_kh": "i32:16", "stride_bt": "i32"}


@pytest.mark.skipif(not _HAS_PTXAS, reason="ptxas is not available")
@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_paged_decode_streams_its_tiles(target):
    kernel = tilec.compile(paged_decode_kernel, signature=SIGNATURE, target=target, num_warps=4, num_stages=2,
                           constexprs={"GROUP": 4, "BLOCK_H": 16, "D": 64, "BLOCK_N": 32, "PAGE": 16})
    ptx, ttgir = kernel.asm["ptx"], kernel.asm["ttgir"]
    # K and V come by 16-byte cp.async into rings, the table entries ahead with them;
    # the only 16-byte global load left is q's, before the loop.
    assert re.search(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16", ptx)
    assert len(re.findall(r"ld\.global(?:\.\w+)*\.v4", ptx)) == 1
    # The keys' ring is read through a transposed view, not loaded and staged again.
    assert "tile.trans" not in ttgir
    # One 16-row mma tile, 4 warps along N: q @ k.T (16 x 32, K = 64) is 4 m16n8k16 per
    # warp, p @ v (16 x 64, K = 32) another 4. All warps along M would give each warp a
    # copy of the 16 rows and 4x the instructions (32).
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k16", ptx)) == 8
    assert "warpsPerCTA = array<i32: 1, 4>" in ttgir
