"""`tl.range(..., flatten=True)`: tile-flatten-loops fuses a persistent kernel's tile loop
with its K loop (passes/flatten_loops.py), and tilegpu-pipeline then streams loads across
tile boundaries. Nothing a program computes may change: programs with no tile, with
uneven numbers of tiles, K = 0 (the inner loop never runs: each tile stores zeros), a
masked K tail, values carried by the outer loop and updated in the epilogue, and a
reduction nest without dots. The pass is on by default (TILEC_FLATTEN_LOOPS=0 turns it
off); these tests turn it on whatever the environment says. Random inputs, outputs
poisoned with NaN, float64 references; compiled for sm_90 as well, where the wgmma
accumulator is reset at run time.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.config import config
from tilec_testing import device_array, to_numpy


@pytest.fixture(autouse=True)
def flatten_on(monkeypatch):
    """The pass is on unless TILEC_FLATTEN_LOOPS=0 (config.flatten_loops): on here."""
    monkeypatch.setattr(config, "flatten_loops", True)


@tilec.jit
def persistent_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                             PROGRAMS: tl.constexpr, STAGES: tl.constexpr, FLATTEN: tl.constexpr = True,
                             WS: tl.constexpr = False):
    """The tile loop computes scalars only (a tile's first row and column, what is left
    of M and N): the pair is flattened (with `flatten=True` or `warp_specialize=True`)."""
    tiles_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, PROGRAMS, flatten=FLATTEN, num_stages=STAGES,
                         warp_specialize=WS):
        row0 = (tile // tiles_n) * BM
        col0 = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            rk = ki * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + (row0 + rows)[:, None] * K + rk[None, :],
                        mask=(rows[:, None] < M - row0) & (rk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + (col0 + cols)[None, :],
                        mask=(rk[:, None] < K) & (cols[None, :] < N - col0), other=0.0)
            acc = tl.dot(a, b, acc)
        rm, rn = row0 + rows, col0 + cols
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilec.jit
def persistent_offsets_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                              PROGRAMS: tl.constexpr, STAGES: tl.constexpr):
    """The tile loop builds the rows' and columns' offset tensors the K loop reads: the
    nest is left as it is (rebuilt every K step, such kernels ran 14-25% slower fused)."""
    tiles_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, PROGRAMS, flatten=True, num_stages=STAGES):
        rm = (tile // tiles_n) * BM + tl.arange(0, BM)
        rn = (tile % tiles_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            rk = ki * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("m, n, k, programs", [
    (128, 96, 160, 3),   # 4x3 tiles over 3 programs, K tail masked
    (64, 64, 64, 7),     # 4 tiles, 7 programs: three run no tile at all
    (96, 128, 0, 2),     # K = 0: no K step; every tile stores zeros
    (160, 32, 32, 4),    # one K step per tile: every step is a first and a last
])
@pytest.mark.parametrize("stages", [1, 3])
@pytest.mark.parametrize("kernel", [persistent_matmul_kernel, persistent_offsets_kernel], ids=["scalars", "offsets"])
def test_persistent_matmul(backend, rng, m, n, k, programs, stages, kernel):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = device_array(np.full((m, n), np.nan, np.float16), backend)
    kernel[(programs,)](device_array(a, backend), device_array(b, backend), c, m, n, k,
                        BM=32, BN=32, BK=32, PROGRAMS=programs, STAGES=stages)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), want, rtol=1e-2, atol=2e-2)


@tilec.jit
def row_sums_kernel(x_ptr, sums_ptr, count_ptr, M, N, PROGRAMS: tl.constexpr, BN: tl.constexpr):
    """Rows of x summed in BN-wide blocks, one row per outer step; the outer loop carries
    how many rows the program did and their total (updated in the epilogue), the inner
    loop a tensor and a scalar that start again at each row."""
    done = 0
    total = 0.0
    for row in tl.range(tl.program_id(0), M, PROGRAMS, flatten=True):
        partial = tl.zeros((BN,), dtype=tl.float32)
        biggest = -float("inf")
        for start in range(0, N, BN):
            cols = start + tl.arange(0, BN)
            x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
            partial += x
            biggest = tl.maximum(biggest, tl.max(tl.where(cols < N, x, -float("inf")), axis=0))
        tl.store(sums_ptr + row * 2, tl.sum(partial, axis=0))
        tl.store(sums_ptr + row * 2 + 1, biggest)
        done += 1
        total += tl.sum(partial, axis=0)
    tl.store(count_ptr + tl.program_id(0) * 2, done.to(tl.float32))
    tl.store(count_ptr + tl.program_id(0) * 2 + 1, total)


@pytest.mark.parametrize("m, n, programs", [(13, 100, 4), (3, 64, 5), (9, 0, 2)])
def test_reduction_nest_with_outer_carried_values(backend, rng, m, n, programs):
    x = rng.standard_normal((m, n)).astype(np.float32)
    sums = device_array(np.full((m, 2), np.nan, np.float32), backend)
    counts = device_array(np.full((programs, 2), np.nan, np.float32), backend)
    row_sums_kernel[(programs,)](device_array(x, backend), sums, counts, m, n, PROGRAMS=programs, BN=32)
    row_total = x.astype(np.float64).sum(axis=1)
    row_max = x.max(axis=1) if n else np.full(m, -np.inf)
    np.testing.assert_allclose(to_numpy(sums)[:, 0], row_total, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(to_numpy(sums)[:, 1], row_max)
    mine = [list(range(p, m, programs)) for p in range(programs)]
    np.testing.assert_array_equal(to_numpy(counts)[:, 0], [len(rows) for rows in mine])
    np.testing.assert_allclose(to_numpy(counts)[:, 1], [row_total[rows].sum() for rows in mine], rtol=1e-5, atol=1e-4)


SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32", "N": "i32:16",
             "K": "i32:16"}


def test_flattened_loop_keeps_wgmma_in_flight_and_resets_it_at_run_time():
    """sm_90: one pipelined loop (its rings made once, before it), the wgmma group left in
    flight across iterations and waited for only inside the epilogue's `if`; the first
    instruction of a tile ignores the accumulator through a run-time predicate."""
    kernel = tilec.compile(persistent_matmul_kernel, signature=SIGNATURE, target="sm_90", num_warps=4,
                           constexprs={"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": 132, "STAGES": 3})
    ttgir, ptx = kernel.asm["ttgir"], kernel.asm["ptx"]
    assert "tilegpu.wgmma_pending = 1" in ttgir
    loop = ttgir[ttgir.index("scf.for %arg"):]
    assert "tilegpu.local_alloc" not in loop.split("scf.yield")[0]  # rings made before the loop
    epilogue = loop[loop.index("scf.if"):]
    assert epilogue.index("tilegpu.wgmma_wait") < epilogue.index("tile.store")
    assert re.search(r"setp\.eq\.b32 p, %r\d+, 0; wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.f16\.f16", ptx)
    assert kernel.n_spills == 0


@pytest.mark.parametrize("flatten, ws, fused", [(False, True, True), (False, False, False)])
def test_warp_specialize_fuses_as_flatten_does(backend, rng, flatten, ws, fused):
    """`warp_specialize=True` on a persistent loop (Triton's tutorial 09 passes
    `flatten=False` with it on Hopper) fuses the loops as `flatten=True` does: tilec's
    way to keep the next tile's loads in flight during this tile's epilogue. The values
    are the same either way."""
    options = dict(signature=SIGNATURE, target="sm_90", num_warps=4,
                   constexprs={"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": 132, "STAGES": 3, "FLATTEN": flatten,
                               "WS": ws})
    kernel = tilec.compile(persistent_matmul_kernel, **options)
    ttgir = kernel.asm["ttgir"]
    first_loop = ttgir[ttgir.index("scf.for"):].split("scf.yield")[0]
    assert ("tilegpu.local_alloc" not in first_loop) == fused  # nested: the rings are made per tile
    # The fused loop still says it was asked to specialise (tile.warp_specialize).
    assert ("tile.warp_specialize" in kernel.asm["ttir"]) == ws
    assert ("tile.warp_specialize" in ttgir) == ws
    m, n, k, programs = 96, 64, 80, 3
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = device_array(np.full((m, n), np.nan, np.float16), backend)
    persistent_matmul_kernel[(programs,)](device_array(a, backend), device_array(b, backend), c, m, n, k, BM=32,
                                          BN=32, BK=32, PROGRAMS=programs, STAGES=3, FLATTEN=flatten, WS=ws)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-2, atol=2e-2)


def test_refills_come_before_the_tile_boundary_ifs():
    """sm_90: in the fused loop the copies that refill the slots the previous wgmma group
    read follow the dot and its barrier directly; the next tile's `if` (its division)
    and the epilogue's come after them, so no branch delays the refill (the nest's
    order). In the SASS of such loops the refill came 33-39 instructions after the
    wgmma wait with the `if` before it, 3 without."""
    kernel = tilec.compile(persistent_matmul_kernel, signature=SIGNATURE, target="sm_90", num_warps=4,
                           constexprs={"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": 132, "STAGES": 3})
    ttgir = kernel.asm["ttgir"]
    loop = ttgir[ttgir.index("scf.for %arg"):]
    body = loop[loop.index('"tile.dot"'):loop.index("scf.yield %")]
    top = [line.strip() for line in body.splitlines() if len(line) - len(line.lstrip()) == 8]
    copies = [i for i, line in enumerate(top) if "async_copy_global_to_local" in line]
    ifs = [i for i, line in enumerate(top) if "scf.if" in line]
    barrier = next(i for i, line in enumerate(top) if "tilegpu.barrier" in line)
    assert copies and ifs and barrier < min(copies), "\n".join(top)
    assert max(copies) < min(ifs), "\n".join(top)


def test_the_switch_leaves_the_nest_and_keys_the_cache(monkeypatch):
    """config.flatten_loops off (TILEC_FLATTEN_LOOPS=0; on by default): the
    loops stay nested (the K loop's rings made per tile, inside the tile loop), under
    another cache key. On, nothing computes a tile's coordinates (divisions) outside the
    `if`s of a tile's last step, and a nest whose tile loop builds the offset tensors
    its K loop reads stays nested."""
    assert "flatten" not in config.codegen_flags()
    options = dict(signature=SIGNATURE, target="sm_90", num_warps=4,
                   constexprs={"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": 132, "STAGES": 3})
    flat = tilec.compile(persistent_matmul_kernel, **options).asm["ttgir"]
    offsets = tilec.compile(persistent_offsets_kernel, **options).asm["ttgir"]
    assert "tile.flatten" in offsets and offsets.count("scf.for") == 2
    assert "tile.flatten" not in flat
    loop = flat[flat.index("scf.for %arg"):flat.index("} else {\n      scf.for")]
    top = [line for line in loop.splitlines()[1:] if len(line) - len(line.lstrip()) == 8]
    assert not any("arith.divsi" in line or "arith.remsi" in line for line in top), "\n".join(top)
    assert "tilegpu.convert_layout" not in loop.split("scf.if")[0]
    monkeypatch.setattr(config, "flatten_loops", False)
    assert "no-flatten" in config.codegen_flags()
    nested = tilec.compile(persistent_matmul_kernel, **options).asm["ttgir"]
    assert nested.count("scf.for") == 2 and "tile.flatten" in nested
    outer = nested[nested.index("scf.for"):]
    assert "tilegpu.local_alloc" in outer  # the rings, per tile
