"""The next tile's prologue issued before this tile's epilogue (passes/overlap_prologue.py,
TILEC_OVERLAP_PROLOGUE=1, off by default until it has run on a GPU): a loop nest whose
inner loop tilegpu-pipeline streams through cp.async rings gets its rings allocated
once, the first run's prologue before the outer loop, and each next run's right after
the inner loop's last dots, guarded by the next iteration existing. Checked on the IR
and with ptxas (tilegpu-insert-barriers refuses any access to a slot still landing); what
the kernels compute is the GPU tests' business."""
import re

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec.config import config

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm, BM: tl.constexpr,
                      BN: tl.constexpr, BK: tl.constexpr, PROGRAMS: tl.constexpr, FLATTEN: tl.constexpr = True):
    """A [M, K] row-major times B^T given as [N, K] row-major, tiles walked PROGRAMS apart."""
    num_n = tl.cdiv(N, BN)
    for tile_id in tl.range(tl.program_id(0), tl.cdiv(M, BM) * num_n, PROGRAMS, flatten=FLATTEN):
        offs_m = (tile_id // num_n) * BM + tl.arange(0, BM)
        offs_n = (tile_id % num_n) * BN + tl.arange(0, BN)
        rows = tl.max_contiguous(tl.multiple_of(tl.where(offs_m < M, offs_m, 0), BM), BM)
        cols = tl.max_contiguous(tl.multiple_of(tl.where(offs_n < N, offs_n, 0), BN), BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            offs_k = ki * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + rows[:, None] * stride_am + offs_k[None, :], mask=offs_k[None, :] < K, other=0.0)
            b = tl.load(b_ptr + cols[None, :] * stride_bn + offs_k[:, None], mask=offs_k[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        c = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
        tl.store(c, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tilec.jit
def carried_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm, BM: tl.constexpr,
                 BN: tl.constexpr, BK: tl.constexpr, PROGRAMS: tl.constexpr):
    """The tile's row comes from a value the tile loop carries: the next tile's addresses
    are known only at the end of the body."""
    num_n = tl.cdiv(N, BN)
    row = tl.program_id(0) // num_n * BM
    for tile_id in tl.range(tl.program_id(0), tl.cdiv(M, BM) * num_n, PROGRAMS):
        offs_m = row + tl.arange(0, BM)
        offs_n = (tile_id % num_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            offs_k = ki * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :])
            b = tl.load(b_ptr + offs_n[None, :] * stride_bn + offs_k[:, None])
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16))
        row = (tile_id + PROGRAMS) // num_n * BM


@tilec.jit
def two_k_loops(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm, BM: tl.constexpr,
                BN: tl.constexpr, BK: tl.constexpr, PROGRAMS: tl.constexpr):
    """Two pipelined loops a tile: each one's copies would land among the other's."""
    num_n = tl.cdiv(N, BN)
    for tile_id in tl.range(tl.program_id(0), tl.cdiv(M, BM) * num_n, PROGRAMS):
        offs_m = (tile_id // num_n) * BM + tl.arange(0, BM)
        offs_n = (tile_id % num_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            offs_k = ki * BK + tl.arange(0, BK)
            acc = tl.dot(tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]),
                         tl.load(b_ptr + offs_n[None, :] * stride_bn + offs_k[:, None]), acc)
        for ki in range(tl.cdiv(K, BK)):
            offs_k = ki * BK + tl.arange(0, BK)
            acc = tl.dot(tl.load(b_ptr + offs_m[:, None] * stride_am + offs_k[None, :]),
                         tl.load(a_ptr + offs_n[None, :] * stride_bn + offs_k[:, None]), acc)
        tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16))


SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32", "N": "i32", "K": "i32:16",
             "stride_am": "i32:16", "stride_bn": "i32:16", "stride_cm": "i32:16"}


def _compile(monkeypatch, kernel, on, target="sm_90", num_warps=4, num_stages=3, **constexprs):
    monkeypatch.setattr(config, "overlap_prologue", on)
    return tilec.compile(kernel, signature=SIGNATURE, constexprs={"PROGRAMS": 132, **constexprs}, target=target,
                         num_warps=num_warps, num_stages=num_stages)


def _outer_loop(ttgir: str) -> tuple[str, str, str]:
    """What comes before the tile loop, its body, and what follows it (by indentation)."""
    lines = ttgir.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("    scf.for"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("    }"))
    return "\n".join(lines[:start]), "\n".join(lines[start:end]), "\n".join(lines[end:])


@pytest.mark.parametrize("target,num_warps,num_stages", [("sm_90", 4, 3), ("sm_90", 8, 4), ("sm_90", 4, 2),
                                                          ("sm_80", 4, 3)])
def test_the_next_tiles_copies_go_before_the_epilogue(monkeypatch, target, num_warps, num_stages):
    kernel = _compile(monkeypatch, persistent_matmul, True, target, num_warps, num_stages, BM=128, BN=128, BK=64)
    before, body, after = _outer_loop(kernel.asm["ttgir"])
    ahead = num_stages - 1  # the prologue's iterations, two copies each
    # The rings once, the first tile's prologue under `if lb < ub`.
    assert before.count('"tilegpu.local_alloc"() ') == 2 and "scf.if" in before
    assert before.count("tilegpu.async_copy_global_to_local") == 2 * ahead
    assert before.count("tilegpu.async_commit_group") == ahead
    # In the tile loop: the K loop's own copies, then the next tile's, after the wait for
    # the last dots (wgmma) or the drain, before the epilogue's store.
    inner_end = body.index("\n      }")
    next_tile = body[inner_end:]
    wait = "tilegpu.wgmma_wait" if target == "sm_90" else '"tilegpu.async_wait"() {num = 0'
    assert wait in next_tile and next_tile.index(wait) < next_tile.index("scf.if") < next_tile.index("tile.store")
    assert next_tile.count("tilegpu.async_copy_global_to_local") == 2 * ahead
    assert "local_alloc\"() " not in body and "local_dealloc" not in body
    assert after.index('"tilegpu.async_wait"() {num = 0') < after.index("tilegpu.local_dealloc")
    assert kernel.asm["cubin"]  # ptxas took it; insert-barriers found no access to a landing slot
    ptx = kernel.asm["ptx"]
    assert len(re.findall(r"cp\.async\.cg", ptx)) > 0


def test_off_by_default_and_off_changes_nothing(monkeypatch):
    assert not type(config)().overlap_prologue
    off = _compile(monkeypatch, persistent_matmul, False, BM=128, BN=128, BK=64)
    before, _, _ = _outer_loop(off.asm["ttgir"])
    assert "async_copy" not in before


@pytest.mark.parametrize("kernel", [carried_tile, two_k_loops])
def test_left_alone_where_the_next_copies_cannot_move(monkeypatch, kernel):
    on = _compile(monkeypatch, kernel, True, BM=128, BN=128, BK=64)
    off = _compile(monkeypatch, kernel, False, BM=128, BN=128, BK=64)
    assert on.asm["ttgir"] == off.asm["ttgir"]


def test_left_alone_where_the_rings_and_the_epilogue_do_not_fit_together(monkeypatch):
    # 128x256 tiles, 4 stages: 192 KiB of rings; the epilogue's exchange buffer used to
    # share their bytes (227 KiB on sm_90).
    on = _compile(monkeypatch, persistent_matmul, True, num_warps=8, num_stages=4, BM=128, BN=256, BK=64)
    off = _compile(monkeypatch, persistent_matmul, False, num_warps=8, num_stages=4, BM=128, BN=256, BK=64)
    assert on.asm["ttgir"] == off.asm["ttgir"]
    three = _compile(monkeypatch, persistent_matmul, True, num_warps=8, num_stages=3, BM=128, BN=256, BK=64)
    assert "async_copy" in _outer_loop(three.asm["ttgir"])[0]
    assert three.metadata.shared <= 232448


def test_an_unmarked_loop_keeps_its_blocks_an_sm(monkeypatch):
    """Without flatten=True the loop may run beside other blocks: 128x128 tiles at 3
    stages (96 KiB of rings, two blocks an SM) would need 128 KiB with the epilogue's
    buffer apart (one block), and are left alone; 64x64 tiles keep four blocks and are
    rewritten."""
    big = dict(BM=128, BN=128, BK=64, FLATTEN=False)
    on = _compile(monkeypatch, persistent_matmul, True, **big)
    assert on.asm["ttgir"] == _compile(monkeypatch, persistent_matmul, False, **big).asm["ttgir"]
    small = _compile(monkeypatch, persistent_matmul, True, BM=64, BN=64, BK=64, FLATTEN=False)
    assert "async_copy" in _outer_loop(small.asm["ttgir"])[0]
