"""Warp specialisation of TMA + wgmma loops (tilegpu-pipeline, "warp specialisation";
TILEC_WARP_SPECIALIZE=1, off by default until it has run on a GPU): a loop marked
`tl.range(..., warp_specialize=True)` gets a producer warpgroup whose one warp issues
its copies, each after waiting for the slot's `empty` mbarrier, while the consumers'
loop waits on `full` and frees each slot after the wgmma that read it (one arrival a
warp). Checked on the PTX and with ptxas; the kernels' values are the GPU tests' and
the interpreter's business (warp specialisation changes nothing they compute)."""
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
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      GROUP: tl.constexpr, PROGRAMS: tl.constexpr, WS: tl.constexpr):
    start = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    in_group = GROUP * num_n
    tile_c = start - PROGRAMS  # the epilogue's own count of tiles, carried (as tutorial 09's)
    for tile_id in tl.range(start, num_m * num_n, PROGRAMS, warp_specialize=WS):
        first_m = tile_id // in_group * GROUP
        group_m = min(num_m - first_m, GROUP)
        pid_m = first_m + tile_id % group_m
        pid_n = tile_id % in_group // group_m
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BM, ki * BK])
            b = b_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        tile_c += PROGRAMS
        first_c = tile_c // in_group * GROUP
        group_c = min(num_m - first_c, GROUP)
        c_desc.store([(first_c + tile_c % group_c) * BM, (tile_c % in_group // group_c) * BN], acc.to(tl.float16))


@tilec.jit
def k_loop_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in tl.range(0, tl.cdiv(K, BK), warp_specialize=True):
        acc = tl.dot(a_desc.load([pid_m * BM, ki * BK]), b_desc.load([pid_n * BN, ki * BK]).T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@tilec.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, ROWS, N_CTX, sm_scale, D: tl.constexpr, BM: tl.constexpr,
                  BN: tl.constexpr):
    """softmax(q k^T * sm_scale) v over (batch x heads) blocks of N_CTX rows stacked in ROWS."""
    start_m = tl.program_id(0)
    first = tl.program_id(1) * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[ROWS, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[ROWS, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[ROWS, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[ROWS, D], strides=[D, 1], block_shape=[BM, D])
    q = q_desc.load([first + start_m * BM, 0])
    m_i = tl.full([BM], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    scale = sm_scale * 1.44269504
    for start_n in tl.range(0, N_CTX, BN, warp_specialize=True):
        qk = tl.dot(q, k_desc.load([first + start_n, 0]).T)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * scale)
        p = tl.math.exp2(qk * scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.float16), v_desc.load([first + start_n, 0]), acc * alpha[:, None])
        m_i = m_ij
    o_desc.store([first + start_m * BM, 0], (acc / l_i[:, None]).to(tl.float16))


@tilec.jit
def attention_causal(q_ptr, k_ptr, v_ptr, o_ptr, ROWS, N_CTX, sm_scale, D: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr):
    """attention_fwd with a causal mask in two marked loops, as Triton's tutorial 06 splits
    it: the blocks left of the diagonal unmasked, then the diagonal's, masked."""
    start_m = tl.program_id(0)
    first = tl.program_id(1) * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[ROWS, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[ROWS, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[ROWS, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[ROWS, D], strides=[D, 1], block_shape=[BM, D])
    q = q_desc.load([first + start_m * BM, 0])
    rows = start_m * BM + tl.arange(0, BM)
    m_i = tl.full([BM], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    scale = sm_scale * 1.44269504
    for start_n in tl.range(0, start_m * BM, BN, warp_specialize=True):
        qk = tl.dot(q, k_desc.load([first + start_n, 0]).T) * scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.float16), v_desc.load([first + start_n, 0]), acc * alpha[:, None])
        m_i = m_ij
    for start_n in tl.range(start_m * BM, (start_m + 1) * BM, BN, warp_specialize=True):
        qk = tl.dot(q, k_desc.load([first + start_n, 0]).T) * scale
        qk = tl.where(rows[:, None] >= start_n + tl.arange(0, BN)[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.float16), v_desc.load([first + start_n, 0]), acc * alpha[:, None])
        m_i = m_ij
    o_desc.store([first + start_m * BM, 0], (acc / l_i[:, None]).to(tl.float16))


@tilec.jit
def pointer_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32", "N": "i32", "K": "i32:16"}


def _compile(monkeypatch, kernel, num_warps, on=True, **constexprs):
    monkeypatch.setattr(config, "warp_specialize", on)
    signature = {name: SIGNATURE[name] for name in kernel.arg_names if name in SIGNATURE}
    return tilec.compile(kernel, signature=signature, constexprs=constexprs, target="sm_90", num_warps=num_warps)


def _split(ttgir: str) -> tuple[str, str]:
    """The warp_specialize op's region (the producer) and what follows it (the consumers)."""
    start = ttgir.index('"tilegpu.warp_specialize"')
    end = ttgir.index("gpu.yield", start)
    return ttgir[start:end], ttgir[end:]


def _counts(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx))


@pytest.mark.parametrize("num_warps", [4, 8])
@pytest.mark.parametrize("which", ["persistent", "k_loop"])
def test_a_producer_warpgroup_issues_the_copies(monkeypatch, which, num_warps):
    if which == "persistent":
        kernel = _compile(monkeypatch, persistent_matmul, num_warps, BM=128, BN=128, BK=64, GROUP=8, PROGRAMS=132,
                          WS=True)
    else:
        kernel = _compile(monkeypatch, k_loop_matmul, num_warps, BM=128, BN=128, BK=64)
    ttgir, ptx = kernel.asm["ttgir"], kernel.asm["ptx"]
    region, rest = _split(ttgir)
    # The producer: its loop waits on `empty`, then copies (two TMA loads a step).
    assert "scf.for" in region and region.count("tilegpu.tma_copy_global_to_local") == 2
    assert region.count("tilegpu.wait_barrier") == 1 and "tile.dot" not in region
    # The consumers: no copy, a wait on each load's `full` barrier, one arrival on `empty`.
    assert "tilegpu.tma_copy_global_to_local" not in rest and rest.count("tilegpu.arrive_barrier") == 1
    assert rest.count("tilegpu.wait_barrier") == 2 and '"tilegpu.barrier"' not in rest.split("scf.yield")[0]
    assert kernel.metadata.producer_warps == 4
    assert f".maxntid {32 * (num_warps + 4)}" in ptx
    assert _counts(ptx, rf"mbarrier\.init\.shared::cta\.b64 \[%r\d+\], {num_warps};") == 3  # `empty`, one a slot
    assert _counts(ptx, r"bar\.sync\s+0;") == 1  # the barriers' initialisation, before the split
    assert _counts(ptx, rf"bar\.sync\s+1, {32 * num_warps};") >= 1 and "exit;" in ptx
    if num_warps == 8:  # registers move from the producers to the consumers
        assert ".maxnreg 168" in ptx and "setmaxnreg.dec.sync.aligned.u32 \t40;" in ptx
        assert "setmaxnreg.inc.sync.aligned.u32 \t232;" in ptx
    else:
        assert "setmaxnreg" not in ptx and ".maxnreg" not in ptx
    assert kernel.asm["cubin"][:4] == b"\x7fELF" and kernel.n_spills == 0


@pytest.mark.parametrize("num_warps", [4, 8])
def test_attention_forward_specialises(monkeypatch, num_warps):
    """Attention's loop (two dots, K and V tiles by TMA, p from registers): one producer
    loop copies both, the consumers free both slots once p @ v's group of the previous
    iteration is done."""
    monkeypatch.setattr(config, "warp_specialize", True)
    kernel = tilec.compile(attention_fwd, signature={"q_ptr": "*fp16:16", "k_ptr": "*fp16:16", "v_ptr": "*fp16:16",
                                                     "o_ptr": "*fp16:16", "ROWS": "i32", "N_CTX": "i32:16",
                                                     "sm_scale": "fp32"},
                           constexprs={"D": 64, "BM": 128, "BN": 64}, target="sm_90", num_warps=num_warps)
    ttgir = kernel.asm["ttgir"]
    region, rest = _split(ttgir)
    assert region.count("tilegpu.tma_copy_global_to_local") == 2 and "tile.dot" not in region
    assert rest.count("tilegpu.arrive_barrier") == 1 and rest.count('"tile.dot"') == 2
    assert kernel.metadata.producer_warps == 4 and kernel.asm["cubin"][:4] == b"\x7fELF"


@pytest.mark.parametrize("bn,warps", [(256, 8), (128, 4)])
def test_a_tile_too_big_for_one_warpgroup_gets_two(monkeypatch, bn, warps):
    """num_warps=4 with a 128 x bn fp32 accumulator: 256 registers a thread at bn=256,
    which spilled (0.15x Triton on an H200); the tile's rows then go to two consumer
    warpgroups (eight warps, as Triton's data partitioning gives its consumers), and the
    metadata says so. A 128x128 tile stays on four."""
    kernel = _compile(monkeypatch, persistent_matmul, 4, BM=128, BN=bn, BK=64, GROUP=8, PROGRAMS=132, WS=True)
    ptx = kernel.asm["ptx"]
    assert kernel.metadata.num_warps == warps and kernel.metadata.producer_warps == 4
    assert f".maxntid {32 * (warps + 4)}" in ptx and kernel.n_spills == 0
    unmarked = _compile(monkeypatch, persistent_matmul, 4, BM=128, BN=bn, BK=64, GROUP=8, PROGRAMS=132, WS=False)
    assert unmarked.metadata.num_warps == 4  # only a specialised loop changes the warps


@pytest.mark.parametrize("on", [False, True])
def test_attention_loops_wait_for_q_before_they_start(monkeypatch, on):
    """Q, staged before the loop and read by every iteration's first wgmma, is ordered
    by one barrier before the loop (tilegpu-insert-barriers), not one each iteration:
    the plain loop keeps only its refill barrier, the consumers' loop none."""
    from tilec_testing import ptx_loops
    monkeypatch.setattr(config, "warp_specialize", on)
    kernel = tilec.compile(attention_fwd, signature={"q_ptr": "*fp16:16", "k_ptr": "*fp16:16", "v_ptr": "*fp16:16",
                                                     "o_ptr": "*fp16:16", "ROWS": "i32", "N_CTX": "i32:16",
                                                     "sm_scale": "fp32"},
                           constexprs={"D": 128, "BM": 128, "BN": 128}, target="sm_90", num_warps=8)
    loops = [body for body in ptx_loops(kernel.asm["ptx"]) if "wgmma.mma_async" in body]
    assert len(loops) == 1
    assert _counts(loops[0], r"bar\.sync") == (0 if on else 1)


@pytest.mark.parametrize("num_warps", [4, 8])
def test_of_two_marked_loops_the_first_specialises(monkeypatch, num_warps):
    """A causal attention's two marked loops: the first in program order (the blocks left
    of the diagonal, most of the work) gets the producer; the diagonal's loop after it
    runs pipelined on the consumers alone, which synchronise by their named barrier."""
    monkeypatch.setattr(config, "warp_specialize", True)
    kernel = tilec.compile(attention_causal, signature={"q_ptr": "*fp16:16", "k_ptr": "*fp16:16", "v_ptr": "*fp16:16",
                                                        "o_ptr": "*fp16:16", "ROWS": "i32", "N_CTX": "i32:16",
                                                        "sm_scale": "fp32"},
                           constexprs={"D": 64, "BM": 128, "BN": 64}, target="sm_90", num_warps=num_warps)
    ttgir, ptx = kernel.asm["ttgir"], kernel.asm["ptx"]
    assert ttgir.count('"tilegpu.warp_specialize"') == 1
    assert '"tile.dot"' not in ttgir[:ttgir.index('"tilegpu.warp_specialize"')]  # no loop before the split
    after = ptx[ptx.index("setmaxnreg.inc") if "setmaxnreg.inc" in ptx else ptx.index("bar.sync \t1,"):]
    assert re.search(r"bar\.sync\s+0;", after) is None  # the producers have left: no whole-block barrier
    assert kernel.metadata.producer_warps == 4 and kernel.n_spills == 0


def test_off_by_default_and_without_the_mark(monkeypatch):
    """The switch off (the default), or the loop not marked: the pipeline as before."""
    off = _compile(monkeypatch, persistent_matmul, 8, on=False, BM=128, BN=128, BK=64, GROUP=8, PROGRAMS=132, WS=True)
    unmarked = _compile(monkeypatch, persistent_matmul, 8, BM=128, BN=128, BK=64, GROUP=8, PROGRAMS=132, WS=False)
    for kernel in (off, unmarked):
        assert "tilegpu.warp_specialize" not in kernel.asm["ttgir"] and kernel.metadata.producer_warps == 0
        assert ".maxntid 256" in kernel.asm["ptx"] and "setmaxnreg" not in kernel.asm["ptx"]


def test_pointer_loops_are_left_as_they_were(monkeypatch):
    """Loads through pointers (cp.async rings) are not specialised yet: the loop is
    pipelined as without the mark."""
    kernel = _compile(monkeypatch, pointer_matmul, 4, BM=64, BN=64, BK=32)
    assert "tilegpu.warp_specialize" not in kernel.asm["ttgir"] and "cp.async" in kernel.asm["ptx"]
