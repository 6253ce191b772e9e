"""Unit tests of the tensor-core layouts (tilec.layout.mma; pure Python, no IR, no GPU).

One instruction's fragments are checked against tables written here from the PTX ISA's
"Matrix Fragments for mma.m16n8k*" formulas (groupID = lane >> 2, threadID_in_group =
lane % 4). Larger shapes are checked against an independent model of the documented
repetition and warp orders, and by simulating a whole warp-level matmul: every mma of
the lowering's loop gathers its A, B and C fragments through the layouts, and the result
must equal NumPy's product.
"""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from tilec.layout.encodings import LANE, REGISTER, WARP, BlockedEncoding, DotOperandEncoding, SliceEncoding
from tilec.layout.mma import MmaEncoding, mma_v2_instr_k, mma_v2_k_width, mma_warps_per_cta

# ----------------------------------------------------------------------------- PTX ISA tables
# Each returns (row, col) of fragment element i held by `lane`.


def group(lane: int) -> tuple[int, int]:
    return lane >> 2, lane % 4


def ptx_c(i: int, lane: int) -> tuple[int, int]:
    """Accumulator of m16n8k*: c0..c3."""
    g, t = group(lane)
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


def ptx_a_m16n8k16_f16(i: int, lane: int) -> tuple[int, int]:
    g, t = group(lane)
    row = g if i in (0, 1, 4, 5) else g + 8
    col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
    return row, col


def ptx_b_m16n8k16_f16(i: int, lane: int) -> tuple[int, int]:
    g, t = group(lane)
    return t * 2 + (i & 1) + (8 if i >= 2 else 0), g


def ptx_a_m16n8k8_tf32(i: int, lane: int) -> tuple[int, int]:
    g, t = group(lane)
    row = g if i in (0, 2) else g + 8
    col = t if i < 2 else t + 4
    return row, col


def ptx_b_m16n8k8_tf32(i: int, lane: int) -> tuple[int, int]:
    g, t = group(lane)
    return (t if i == 0 else t + 4), g


def ptx_a_m16n8k32_s8(i: int, lane: int) -> tuple[int, int]:
    g, t = group(lane)
    row = g if (i < 4 or 8 <= i < 12) else g + 8
    col = t * 4 + (i & 3) + (16 if i >= 8 else 0)
    return row, col


def ptx_b_m16n8k32_s8(i: int, lane: int) -> tuple[int, int]:
    g, t = group(lane)
    return t * 4 + (i & 3) + (16 if i >= 4 else 0), g


# k_width, instruction K, (A table, A registers), (B table, B registers)
INSTRUCTIONS = {
    "m16n8k16_f16": (2, 16, (ptx_a_m16n8k16_f16, 8), (ptx_b_m16n8k16_f16, 4)),
    "m16n8k8_tf32": (1, 8, (ptx_a_m16n8k8_tf32, 4), (ptx_b_m16n8k8_tf32, 2)),
    "m16n8k32_s8": (4, 32, (ptx_a_m16n8k32_s8, 16), (ptx_b_m16n8k32_s8, 8)),
}


# ----------------------------------------------------------------------------- one instruction


class TestOneInstruction:
    def test_accumulator_equals_ptx_table(self):
        layout = MmaEncoding(2, (1, 1)).to_linear((16, 8))
        assert layout.in_dim_size(REGISTER) == 4
        for i, lane in itertools.product(range(4), range(32)):
            assert layout.apply({REGISTER: i, LANE: lane}) == ptx_c(i, lane), (i, lane)

    @pytest.mark.parametrize("name", list(INSTRUCTIONS))
    def test_operand_a_equals_ptx_table(self, name):
        k_width, k, (table, n_regs), _ = INSTRUCTIONS[name]
        layout = DotOperandEncoding(0, MmaEncoding(2, (1, 1)), k_width).to_linear((16, k))
        assert layout.in_dim_size(REGISTER) == n_regs
        for i, lane in itertools.product(range(n_regs), range(32)):
            assert layout.apply({REGISTER: i, LANE: lane}) == table(i, lane), (name, i, lane)

    @pytest.mark.parametrize("name", list(INSTRUCTIONS))
    def test_operand_b_equals_ptx_table(self, name):
        k_width, k, _, (table, n_regs) = INSTRUCTIONS[name]
        layout = DotOperandEncoding(1, MmaEncoding(2, (1, 1)), k_width).to_linear((k, 8))
        assert layout.in_dim_size(REGISTER) == n_regs
        for i, lane in itertools.product(range(n_regs), range(32)):
            assert layout.apply({REGISTER: i, LANE: lane}) == table(i, lane), (name, i, lane)

    @pytest.mark.parametrize("name", list(INSTRUCTIONS))
    def test_one_instruction_is_a_bijection(self, name):
        k_width, k, _, _ = INSTRUCTIONS[name]
        mma = MmaEncoding(2, (1, 1))
        assert mma.to_linear((16, 8)).is_invertible()
        assert DotOperandEncoding(0, mma, k_width).to_linear((16, k)).is_invertible()
        assert DotOperandEncoding(1, mma, k_width).to_linear((k, 8)).is_invertible()

    def test_k_width_helpers(self):
        assert [mma_v2_k_width(b) for b in (8, 16, 32)] == [4, 2, 1]
        assert [mma_v2_instr_k(w) for w in (1, 2, 4)] == [8, 16, 32]
        with pytest.raises(ValueError):
            mma_v2_k_width(64)
        with pytest.raises(ValueError):
            mma_v2_instr_k(3)


# ----------------------------------------------------------------------------- reference model of repetition


def reps(shape, tile):
    return [max(1, s // t) for s, t in zip(shape, tile)]


def ref_accumulator(enc: MmaEncoding, shape, register: int, lane: int, warp: int) -> tuple[int, ...]:
    """register = c + 4 * (n + REP_N * (m + REP_M * b)); warp = wn + Wn * (wm + Wm * wb)."""
    rank = len(shape)
    wpc = list(enc.warps_per_cta)
    tile = [1] * (rank - 2) + [16 * wpc[-2], 8 * wpc[-1]]
    if rank == 3:
        tile[0] = wpc[0]
    rep = reps(shape, tile)
    c, rest = register % 4, register // 4
    n_rep, rest = rest % rep[-1], rest // rep[-1]
    m_rep, b_rep = rest % rep[-2], rest // rep[-2]
    wn, rest = warp % wpc[-1], warp // wpc[-1]
    wm, wb = rest % wpc[-2], rest // wpc[-2]
    row, col = ptx_c(c, lane)
    m = m_rep * tile[-2] + wm * 16 + row
    n = n_rep * tile[-1] + wn * 8 + col
    coords = (m % shape[-2], n % shape[-1])
    if rank == 3:
        coords = ((b_rep * tile[0] + wb) % shape[0],) + coords
    return coords


def ref_operand(enc: MmaEncoding, op_idx: int, name: str, shape, register: int, lane: int,
                warp: int) -> tuple[int, ...]:
    """A: register = a + A_REGS * (k + REP_K * (m + REP_M * b)), replicated over wn;
    B: register = b + B_REGS * (k + REP_K * (n + REP_N * b)), replicated over wm."""
    k_width, k, (a_table, a_regs), (b_table, b_regs) = INSTRUCTIONS[name]
    rank = len(shape)
    wpc = list(enc.warps_per_cta)
    wn, rest = warp % wpc[-1], warp // wpc[-1]
    wm, wb = rest % wpc[-2], rest // wpc[-2]
    table, n_regs = (a_table, a_regs) if op_idx == 0 else (b_table, b_regs)
    if op_idx == 0:
        tile = [16 * wpc[-2], k]
        other_warp = wm * 16
    else:
        tile = [k, 8 * wpc[-1]]
        other_warp = wn * 8
    batch_tile = wpc[0] if rank == 3 else 1
    i, rest = register % n_regs, register // n_regs
    k_count = reps([shape[-1] if op_idx == 0 else shape[-2]], [k])[0]
    k_rep, rest = rest % k_count, rest // k_count
    mn_count = reps([shape[-2] if op_idx == 0 else shape[-1]], [tile[0] if op_idx == 0 else tile[1]])[0]
    mn_rep, b_rep = rest % mn_count, rest // mn_count
    row, col = table(i, lane)
    if op_idx == 0:
        coords = ((mn_rep * tile[0] + other_warp + row) % shape[-2], (k_rep * k + col) % shape[-1])
    else:
        coords = ((k_rep * k + row) % shape[-2], (mn_rep * tile[1] + other_warp + col) % shape[-1])
    if rank == 3:
        coords = ((b_rep * batch_tile + wb) % shape[0],) + coords
    return coords


def every_input(layout):
    for r, l, w in itertools.product(range(layout.in_dim_size(REGISTER)), range(layout.in_dim_size(LANE)),
                                     range(layout.in_dim_size(WARP))):
        yield r, l, w


ACC_CASES = [
    ((1, 1), (16, 8)), ((1, 1), (64, 32)), ((2, 2), (64, 64)), ((4, 1), (128, 32)), ((1, 4), (32, 128)),
    ((2, 4), (64, 128)), ((4, 2), (128, 64)), ((2, 1, 2), (4, 32, 32)), ((1, 2, 2), (2, 64, 16)),
]


class TestRepetitionAndWarps:
    @pytest.mark.parametrize("warps,shape", ACC_CASES)
    def test_accumulator_matches_model_and_covers_once(self, warps, shape):
        enc = MmaEncoding(2, warps)
        layout = enc.to_linear(shape)
        seen = Counter()
        for r, l, w in every_input(layout):
            got = layout.apply({REGISTER: r, LANE: l, WARP: w})
            assert got == ref_accumulator(enc, shape, r, l, w), (r, l, w)
            seen[got] += 1
        assert len(seen) == np.prod(shape) and set(seen.values()) == {1}
        assert layout.is_invertible()

    @pytest.mark.parametrize("name", list(INSTRUCTIONS))
    @pytest.mark.parametrize("warps,mnk", [
        ((1, 1), (16, 8, 1)), ((2, 2), (64, 32, 2)), ((4, 1), (64, 16, 4)), ((1, 4), (32, 64, 2)),
        ((2, 1, 2), (16, 32, 2)),
    ])
    def test_operands_match_model(self, name, warps, mnk):
        k_width, k, _, _ = INSTRUCTIONS[name]
        enc = MmaEncoding(2, warps)
        m, n, k_reps = mnk
        batch = (2,) if len(warps) == 3 else ()
        for op_idx, shape in ((0, batch + (m, k * k_reps)), (1, batch + (k * k_reps, n))):
            layout = DotOperandEncoding(op_idx, enc, k_width).to_linear(shape)
            for r, l, w in every_input(layout):
                assert layout.apply({REGISTER: r, LANE: l, WARP: w}) == \
                    ref_operand(enc, op_idx, name, shape, r, l, w), (op_idx, r, l, w)

    @pytest.mark.parametrize("warps", [(2, 2), (4, 2), (1, 4), (2, 2, 2)])
    def test_operands_replicated_over_the_other_warps(self, warps):
        enc = MmaEncoding(2, warps)
        wn, wm = warps[-1], warps[-2]
        batch = (2 * warps[0],) if len(warps) == 3 else ()
        a = DotOperandEncoding(0, enc, 2).to_linear(batch + (16 * wm * 2, 32))
        b = DotOperandEncoding(1, enc, 2).to_linear(batch + (32, 8 * wn * 2))
        n_lanes, n_regs_a, n_regs_b = 32, a.in_dim_size(REGISTER), b.in_dim_size(REGISTER)
        for warp in range(enc.num_warps):
            w_n, w_m = warp % wn, (warp // wn) % wm
            same_a = warp - w_n                     # the warp with w_n = 0 and the same w_m
            same_b = warp - w_m * wn                # the warp with w_m = 0 and the same w_n
            for lane in range(n_lanes):
                for r in range(n_regs_a):
                    assert a.apply({REGISTER: r, LANE: lane, WARP: warp}) == \
                        a.apply({REGISTER: r, LANE: lane, WARP: same_a})
                for r in range(n_regs_b):
                    assert b.apply({REGISTER: r, LANE: lane, WARP: warp}) == \
                        b.apply({REGISTER: r, LANE: lane, WARP: same_b})
        # Each element of A is held by exactly wn warps (and of B by wm), once per warp.
        for layout, copies in ((a, wn), (b, wm)):
            counts = Counter(layout.apply({REGISTER: r, LANE: l, WARP: w}) for r, l, w in every_input(layout))
            assert set(counts.values()) == {copies}
            assert len(counts) == np.prod(list(layout.out_dim_sizes.values()))

    @pytest.mark.parametrize("shape,warps,copies", [
        ((8, 8), (1, 1), 1),        # half the instruction's rows: register row+8 dropped
        ((16, 4), (1, 1), 2),       # half its columns: a lane bit becomes a replica
        ((16, 16), (2, 2), 2),      # the warps along M hold copies
        ((32, 8), (1, 4), 4),
    ])
    def test_accumulator_smaller_than_tile_replicates(self, shape, warps, copies):
        layout = MmaEncoding(2, warps).to_linear(shape)
        counts = Counter(layout.apply({REGISTER: r, LANE: l, WARP: w}) for r, l, w in every_input(layout))
        assert len(counts) == np.prod(shape)
        assert set(counts.values()) == {copies}

    def test_operand_smaller_than_instruction_k(self):
        # K = 8 for f16 (instruction K 16): the register bit for k + 8 is dropped.
        layout = DotOperandEncoding(0, MmaEncoding(2, (1, 1)), 2).to_linear((16, 8))
        assert layout.in_dim_size(REGISTER) == 4
        assert layout.is_invertible()


# ----------------------------------------------------------------------------- a simulated matmul


def simulate_dot(enc: MmaEncoding, name: str, m: int, n: int, k_total: int, batch: int | None, seed: int = 0):
    """Runs the lowering's loop over (b, m, n, k) repetitions with the PTX semantics of one
    mma: fragments gathered from the A and B layouts by register offset, results scattered
    through the C layout. Returns (computed, expected)."""
    k_width, k, (a_table, a_regs), (b_table, b_regs) = INSTRUCTIONS[name]
    rng = np.random.default_rng(seed)
    lead = (batch,) if batch else ()
    a_val = rng.integers(-4, 5, size=lead + (m, k_total))
    b_val = rng.integers(-4, 5, size=lead + (k_total, n))
    a_layout = DotOperandEncoding(0, enc, k_width).to_linear(lead + (m, k_total))
    b_layout = DotOperandEncoding(1, enc, k_width).to_linear(lead + (k_total, n))
    c_layout = enc.to_linear(lead + (m, n))
    c_regs = c_layout.in_dim_size(REGISTER)
    reps_mn = c_regs // 4
    k_rep = k_total // k
    wpc = enc.warps_per_cta
    rep_n = max(1, n // (8 * wpc[-1]))
    rep_m = max(1, m // (16 * wpc[-2]))
    rep_b = reps_mn // (rep_n * rep_m)
    out = np.zeros(lead + (m, n), dtype=np.int64)
    written = np.zeros(lead + (m, n), dtype=np.int64)
    for warp in range(enc.num_warps):
        for bt, mi, ni in itertools.product(range(rep_b), range(rep_m), range(rep_n)):
            acc = np.zeros((16, 8), dtype=np.int64)
            for ki in range(k_rep):
                a_tile = np.zeros((16, k), dtype=np.int64)
                b_tile = np.zeros((k, 8), dtype=np.int64)
                a_base = a_regs * (ki + k_rep * (mi + rep_m * bt))
                b_base = b_regs * (ki + k_rep * (ni + rep_n * bt))
                for lane in range(32):
                    for i in range(a_regs):
                        a_tile[a_table(i, lane)] = a_val[a_layout.apply({REGISTER: a_base + i, LANE: lane,
                                                                          WARP: warp})]
                    for i in range(b_regs):
                        b_tile[b_table(i, lane)] = b_val[b_layout.apply({REGISTER: b_base + i, LANE: lane,
                                                                          WARP: warp})]
                acc += a_tile @ b_tile
            c_base = 4 * (ni + rep_n * (mi + rep_m * bt))
            for lane in range(32):
                for i in range(4):
                    where = c_layout.apply({REGISTER: c_base + i, LANE: lane, WARP: warp})
                    out[where] = acc[ptx_c(i, lane)]
                    written[where] += 1
    assert (written == 1).all()
    return out, a_val @ b_val


class TestSimulatedDot:
    @pytest.mark.parametrize("name", list(INSTRUCTIONS))
    @pytest.mark.parametrize("warps,m,n,k_reps,batch", [
        ((1, 1), 16, 8, 1, None),
        ((2, 2), 64, 32, 2, None),
        ((4, 1), 64, 16, 2, None),
        ((1, 2), 32, 32, 2, None),
        ((2, 1, 2), 32, 32, 1, 4),
    ])
    def test_tiles_line_up(self, name, warps, m, n, k_reps, batch):
        k = INSTRUCTIONS[name][1]
        got, expected = simulate_dot(MmaEncoding(2, warps), name, m, n, k * k_reps, batch)
        np.testing.assert_array_equal(got, expected)


# ----------------------------------------------------------------------------- fields, warps heuristic


class TestFields:
    def test_properties(self):
        enc = MmaEncoding(2, (2, 4))
        assert (enc.rank, enc.num_warps, enc.instr_shape, enc.warp_order) == (2, 8, (16, 8), (1, 0))
        assert MmaEncoding(2, [2, 1, 2]).warps_per_cta == (2, 1, 2)

    @pytest.mark.parametrize("args,match", [
        ((4, (4, 1)), "version"),
        ((3, (4, 1)), "instruction shape"),
        ((2, (4,)), "rank"),
        ((2, (1, 1, 1, 1)), "rank"),
        ((2, (3, 1)), "power of two"),
        ((2, (1, 1), (16, 16)), "instruction shape"),
    ])
    def test_rejects(self, args, match):
        with pytest.raises(ValueError, match=match):
            MmaEncoding(*args)

    def test_wrong_rank_shape(self):
        with pytest.raises(ValueError, match="rank"):
            MmaEncoding(2, (1, 1)).to_linear((2, 16, 8))

    def test_operand_k_width_checks(self):
        mma = MmaEncoding(2, (1, 1))
        with pytest.raises(ValueError, match="k_width"):
            DotOperandEncoding(0, mma, 3).to_linear((16, 16))
        with pytest.raises(ValueError, match="k_width"):
            DotOperandEncoding(0, mma).to_linear((16, 16))
        with pytest.raises(ValueError, match="k_width"):
            DotOperandEncoding(0, BlockedEncoding((1, 1), (8, 4), (1, 1), (1, 0)), 2)
        with pytest.raises(ValueError, match="index"):
            DotOperandEncoding(2, mma, 2)

    def test_fma_operand_unchanged(self):
        blocked = BlockedEncoding((1, 1), (8, 4), (2, 2), (1, 0))
        enc = DotOperandEncoding(0, blocked)
        assert enc.k_width == 0 and enc == DotOperandEncoding(0, blocked, 0)
        layout = enc.to_linear((16, 8))
        assert layout.bases(REGISTER) == ((0, 1), (0, 2), (0, 4))

    def test_slice_of_mma(self):
        # A row reduction of an accumulator: each lane keeps its rows (g and g + 8).
        enc = MmaEncoding(2, (2, 2))
        rows = SliceEncoding(1, enc).to_linear((64,))
        parent = enc.to_linear((64, 1))
        for r, l, w in every_input(rows):
            assert rows.apply({REGISTER: r, LANE: l, WARP: w}) == parent.apply({REGISTER: r, LANE: l, WARP: w})[:1]
            assert rows.apply({REGISTER: r, LANE: l, WARP: w})[0] % 8 == l >> 2
        owners = {rows.apply({REGISTER: r, LANE: l, WARP: w}) for r, l, w in every_input(rows)}
        assert owners == {(i,) for i in range(64)}


class TestWarpsPerCta:
    # Rank 2: Triton 3.6's choices (its mma v2 layouts for these tiles on sm_80).
    @pytest.mark.parametrize("shape,num_warps,expected", [
        ((128, 128), 4, (2, 2)),
        ((128, 128), 8, (2, 4)),
        ((128, 64), 4, (2, 2)),
        ((64, 128), 4, (1, 4)),
        ((32, 64), 4, (1, 4)),
        ((64, 32), 4, (2, 2)),
        ((256, 64), 4, (4, 1)),
        ((64, 256), 8, (1, 8)),
        ((16, 128), 4, (1, 4)),
        ((256, 16), 4, (4, 1)),
        ((32, 32), 8, (2, 4)),
        ((16, 16), 4, (1, 4)),       # too small: the extra warps replicate along N
        ((128, 128), 1, (1, 1)),
        ((4, 64, 64), 4, (4, 1, 1)),  # batches first
        ((2, 64, 64), 8, (2, 2, 2)),
    ])
    def test_table(self, shape, num_warps, expected):
        assert mma_warps_per_cta(shape, num_warps) == expected

    @pytest.mark.parametrize("shape", [(16, 8), (64, 64), (256, 32), (32, 256), (8, 128, 128), (1, 16, 16)])
    @pytest.mark.parametrize("num_warps", [1, 2, 4, 8, 16])
    def test_product_is_num_warps(self, shape, num_warps):
        warps = mma_warps_per_cta(shape, num_warps)
        assert len(warps) == len(shape) and int(np.prod(warps)) == num_warps
        MmaEncoding(2, warps).to_linear(shape)

    def test_rejects(self):
        with pytest.raises(ValueError):
            mma_warps_per_cta((64,), 4)
        with pytest.raises(ValueError):
            mma_warps_per_cta((64, 64), 3)


# ----------------------------------------------------------------------------- version 3 (wgmma)


def ptx_wgmma_d(i: int, lane: int, warp: int) -> tuple[int, int]:
    """Accumulator of wgmma.m64nNk*: d_i of `lane` in warp `warp` of the warpgroup (the
    PTX ISA's "Register Fragments" for wgmma D)."""
    g, t = group(lane)
    row = 16 * (warp % 4) + g + 8 * ((i // 2) % 2)
    col = 8 * (i // 4) + 2 * t + (i % 2)
    return row, col


def coords(layout, register: int, lane: int, warp: int) -> tuple[int, ...]:
    return layout.apply({REGISTER: register, LANE: lane, WARP: warp})


@pytest.mark.parametrize("n", [8, 16, 64, 128, 256])
def test_wgmma_accumulator_matches_ptx(n):
    layout = MmaEncoding(3, (4, 1), (64, n)).to_linear((64, n))
    assert layout.in_dim_size(REGISTER) == n // 2
    for warp, lane, i in itertools.product(range(4), range(32), range(n // 2)):
        assert coords(layout, i, lane, warp) == ptx_wgmma_d(i, lane, warp)


def test_wgmma_warpgroups_along_m_then_n_and_repeats():
    # Two warpgroups along M: warps 4..7 hold rows 64..127.
    layout = MmaEncoding(3, (8, 1), (64, 32)).to_linear((128, 32))
    for warp, lane, i in itertools.product(range(8), range(32), range(16)):
        row, col = ptx_wgmma_d(i, lane, warp)
        assert coords(layout, i, lane, warp) == (row + 64 * (warp // 4), col)
    # Two warpgroups along N: warpgroup 1 holds columns 64..127, one instruction each.
    layout = MmaEncoding(3, (4, 2), (64, 64)).to_linear((64, 128))
    for warp, lane, i in itertools.product(range(8), range(32), range(32)):
        row, col = ptx_wgmma_d(i, lane, warp)
        assert coords(layout, i, lane, warp) == (row, col + 64 * (warp // 4))
    # A tile taller than the warpgroups: the instruction repeats along M, its registers
    # contiguous (register = d + N/2 * m).
    layout = MmaEncoding(3, (4, 1), (64, 32)).to_linear((256, 32))
    assert layout.in_dim_size(REGISTER) == 4 * 16
    for m, warp, lane, i in itertools.product(range(4), range(4), range(32), range(16)):
        row, col = ptx_wgmma_d(i, lane, warp)
        assert coords(layout, i + 16 * m, lane, warp) == (row + 64 * m, col)


def test_wgmma_operand_a_from_registers():
    """A of wgmma from registers: mma.sync's m16n8k16 A fragment per warp, warps along M
    in warpgroup order, replicated over the warpgroups along N."""
    mma = MmaEncoding(3, (4, 2), (64, 64))
    layout = DotOperandEncoding(0, mma, 2).to_linear((64, 32))
    for warp, lane, i in itertools.product(range(8), range(32), range(8)):
        row, col = ptx_a_m16n8k16_f16(i, lane)
        assert coords(layout, i, lane, warp) == (row + 16 * (warp % 4), col)          # K tile 0
        assert coords(layout, i + 8, lane, warp) == (row + 16 * (warp % 4), col + 16)  # K tile 1
    with pytest.raises(ValueError, match="operand B from shared memory"):
        DotOperandEncoding(1, mma, 2).to_linear((32, 64))


def test_wgmma_warps_and_instruction_n():
    from tilec.layout.mma import mma_v3_instr_n, mma_v3_warps_per_cta
    assert mma_v3_warps_per_cta((128, 128), 4) == (4, 1)
    assert mma_v3_warps_per_cta((128, 256), 8) == (8, 1)   # two warpgroups along M
    assert mma_v3_warps_per_cta((64, 256), 8) == (4, 2)    # M has one warpgroup's rows: along N
    assert mma_v3_warps_per_cta((64, 64), 2) is None       # no whole warpgroup
    assert mma_v3_instr_n(256, 1) == 256 and mma_v3_instr_n(512, 1) == 256 and mma_v3_instr_n(256, 2) == 128
    assert mma_v3_instr_n(8, 2) is None


@pytest.mark.parametrize("kwargs, message", [
    (dict(version=3, warps_per_cta=(4, 1), instr_shape=(16, 8)), "must be \\[64, N\\]"),
    (dict(version=3, warps_per_cta=(4, 1), instr_shape=(64, 264)), "must be \\[64, N\\]"),
    (dict(version=3, warps_per_cta=(2, 2), instr_shape=(64, 64)), "whole warpgroups"),
    (dict(version=3, warps_per_cta=(1, 4, 1), instr_shape=(64, 64)), "whole warpgroups"),
    (dict(version=4, warps_per_cta=(4, 1)), "not supported"),
])
def test_wgmma_encoding_is_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MmaEncoding(**kwargs)


def test_wgmma_encoding_syntax_round_trip():
    from tilec.layout.syntax import encoding_text, parse_encoding
    mma = MmaEncoding(3, (8, 1), (64, 128))
    text = encoding_text(mma)
    assert "versionMajor = 3" in text and "instrShape = array<i32: 64, 128>" in text
    assert parse_encoding(text) == mma
