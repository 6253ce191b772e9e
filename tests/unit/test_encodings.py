"""Unit tests of tilec.layout.encodings (pure Python, no IR, no GPU).

Ownership ("which (register, lane, warp) holds which element") is checked against an
independent model of Triton's blocked layout written here (mixed-radix thread ids,
size_per_thread chunks, tile repetition in registers, replication where the tensor is
smaller than the tile), and against the worked examples of seed 001 (Triton's inline
layout documentation).
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict

import pytest

from tilec.layout.encodings import (
    LANE,
    REGISTER,
    THREADS_PER_WARP,
    WARP,
    BlockedEncoding,
    SliceEncoding,
    default_blocked,
    dim_names,
    to_linear,
)
from tilec.layout.linear_layout import LinearLayout

# ----------------------------------------------------------------------------- helpers


def all_inputs(layout: LinearLayout):
    dims = layout.in_dims
    for values in itertools.product(*[range(layout.in_dim_size(d)) for d in dims]):
        yield dict(zip(dims, values))


def owners(layout: LinearLayout) -> dict[tuple[int, ...], set[tuple[int, int, int]]]:
    """element -> {(register, lane, warp)} by enumerating every input."""
    result: dict[tuple[int, ...], set] = defaultdict(set)
    for a in all_inputs(layout):
        result[layout.apply(a)].add((a.get(REGISTER, 0), a.get(LANE, 0), a.get(WARP, 0)))
    return dict(result)


def thread_owners(layout: LinearLayout) -> dict[tuple[int, ...], set[tuple[int, int]]]:
    return {e: {(l, w) for _, l, w in s} for e, s in owners(layout).items()}


def elements(shape):
    return set(itertools.product(*[range(s) for s in shape]))


def mixed_radix(digits, radices) -> int:
    value, scale = 0, 1
    for d, r in zip(digits, radices):
        value += d * scale
        scale *= r
    return value


def ref_blocked_owners(enc: BlockedEncoding, shape) -> dict[tuple[int, ...], set[tuple[int, int, int]]]:
    """Independent model of a blocked layout over `shape`.

    Along dim d a tile covers spt*tpw*wpc elements: position p = s + spt*(t + tpw*w).
    A larger tensor repeats the tile (repeat k, a register bit above the spt bits); a
    smaller one wraps (element p mod shape), registers past the end are not kept.
    Ids are mixed radix over `order` (fastest dim least significant): registers count
    the spt index first and the repeat index above it.
    """
    rank = len(shape)
    per_dim = []
    spt_eff, reps = [], []
    for d in range(rank):
        spt, tpw, wpc = enc.size_per_thread[d], enc.threads_per_warp[d], enc.warps_per_cta[d]
        tile = spt * tpw * wpc
        spt_eff.append(min(spt, shape[d]))
        reps.append(max(1, shape[d] // tile))
        options = defaultdict(list)
        for k, w, t, s in itertools.product(range(reps[-1]), range(wpc), range(tpw), range(spt_eff[-1])):
            p = s + spt * (t + tpw * w) + k * tile
            options[p % shape[d]].append((s, t, w, k))
        per_dim.append(options)
    order = list(enc.order)
    result = {}
    for elem in elements(shape):
        own = set()
        for combo in itertools.product(*[per_dim[d][elem[d]] for d in range(rank)]):
            s = [combo[d][0] for d in order]
            t = [combo[d][1] for d in order]
            w = [combo[d][2] for d in order]
            k = [combo[d][3] for d in order]
            reg = mixed_radix(s + k, [spt_eff[d] for d in order] + [reps[d] for d in order])
            lane = mixed_radix(t, [enc.threads_per_warp[d] for d in order])
            warp = mixed_radix(w, [enc.warps_per_cta[d] for d in order])
            own.add((reg, lane, warp))
        result[elem] = own
    return result


def tile_of(enc: BlockedEncoding):
    return tuple(enc.size_per_thread[d] * enc.threads_per_warp[d] * enc.warps_per_cta[d] for d in range(enc.rank))


# ----------------------------------------------------------------------------- BlockedEncoding basics


class TestBlockedEncodingFields:
    def test_properties(self):
        enc = BlockedEncoding((2, 2), (8, 4), (1, 2), (1, 0))
        assert enc.rank == 2
        assert enc.num_warps == 2

    @pytest.mark.parametrize("fields", [
        ((1,), (32, 1), (4, 1), (1, 0)),
        ((1, 1), (32,), (4, 1), (1, 0)),
        ((1, 1), (32, 1), (4,), (1, 0)),
        ((1, 1), (32, 1), (4, 1), (0,)),
    ])
    def test_rank_mismatch(self, fields):
        with pytest.raises(ValueError, match="rank"):
            BlockedEncoding(*fields)

    @pytest.mark.parametrize("order", [(0, 0), (1, 2), (2, 0)])
    def test_order_must_be_permutation(self, order):
        with pytest.raises(ValueError, match="permutation"):
            BlockedEncoding((1, 1), (32, 1), (4, 1), order)

    def test_to_linear_rejects_wrong_rank(self):
        enc = BlockedEncoding((1, 1), (32, 1), (4, 1), (1, 0))
        with pytest.raises(ValueError):
            enc.to_linear((64,))
        with pytest.raises(ValueError):
            enc.to_linear((4, 4, 4))

    def test_hashable_and_value_equal(self):
        a = BlockedEncoding((1,), (32,), (4,), (0,))
        b = BlockedEncoding((1,), (32,), (4,), (0,))
        assert a == b and hash(a) == hash(b)
        assert a != BlockedEncoding((2,), (32,), (4,), (0,))

    def test_dim_names(self):
        assert dim_names(0) == []
        assert dim_names(3) == ["dim0", "dim1", "dim2"]

    def test_to_linear_function_matches_method(self):
        enc = BlockedEncoding((2,), (32,), (2,), (0,))
        assert to_linear(enc, [256]) == enc.to_linear((256,))


# ----------------------------------------------------------------------------- default_blocked


DEFAULT_CASES = [
    # (shape, num_warps, spt, order) -> (spt, tpw, wpc, order); derived by hand from the rule
    # "lanes then warps fill each dim (fastest first) as far as it has room; the slowest dim
    # takes the rest".
    (([1024], 4, [4], None), ((4,), (32,), (4,), (0,))),
    (([1024], 8, None, None), ((1,), (32,), (8,), (0,))),
    (([256], 2, None, None), ((1,), (32,), (2,), (0,))),
    (([16], 4, None, None), ((1,), (32,), (4,), (0,))),
    (([4], 1, [8], None), ((8,), (32,), (1,), (0,))),
    (([64, 64], 4, None, [1, 0]), ((1, 1), (1, 32), (2, 2), (1, 0))),
    (([64, 64], 4, None, None), ((1, 1), (1, 32), (2, 2), (1, 0))),   # default order is row-major
    (([64, 64], 4, [1, 4], [1, 0]), ((1, 4), (2, 16), (4, 1), (1, 0))),
    (([64, 64], 4, None, [0, 1]), ((1, 1), (32, 1), (2, 2), (0, 1))),
    (([128, 4], 4, None, [0, 1]), ((1, 1), (32, 1), (4, 1), (0, 1))),
    (([128, 4], 4, None, [1, 0]), ((1, 1), (8, 4), (4, 1), (1, 0))),
    (([2, 8], 4, None, [1, 0]), ((1, 1), (4, 8), (4, 1), (1, 0))),
    (([1, 1], 8, None, None), ((1, 1), (32, 1), (8, 1), (1, 0))),
    (([16, 256], 8, [1, 4], [1, 0]), ((1, 4), (1, 32), (4, 2), (1, 0))),
    (([8, 8, 8], 4, None, None), ((1, 1, 1), (1, 4, 8), (2, 2, 1), (2, 1, 0))),
    (([4, 2, 64], 2, None, [2, 0, 1]), ((1, 1, 1), (1, 1, 32), (1, 1, 2), (2, 0, 1))),
]


class TestDefaultBlocked:
    @pytest.mark.parametrize("args,expected", DEFAULT_CASES)
    def test_fields(self, args, expected):
        enc = default_blocked(*args)
        assert (enc.size_per_thread, enc.threads_per_warp, enc.warps_per_cta, enc.order) == expected

    def test_threads_per_warp_parameter(self):
        enc = default_blocked([256], 4, threads_per_warp=64)
        assert enc.threads_per_warp == (64,) and enc.warps_per_cta == (4,)
        ll = enc.to_linear((256,))
        assert ll.in_dim_size(LANE) == 64
        assert ll.is_invertible()

    @pytest.mark.parametrize("rank", [1, 2, 3])
    @pytest.mark.parametrize("num_warps", [1, 2, 4, 8])
    def test_invariants_sweep(self, rank, num_warps):
        sizes = {1: [1, 2, 8, 32, 128, 1024, 4096], 2: [1, 2, 8, 32, 128], 3: [1, 4, 32]}[rank]
        for shape in itertools.product(sizes, repeat=rank):
            if math.prod(shape) > 1 << 14:
                continue
            for order in itertools.permutations(range(rank)):
                for spt in itertools.product((1, 4), repeat=rank):
                    enc = default_blocked(shape, num_warps, spt, order)
                    assert enc.size_per_thread == spt and enc.order == order
                    assert math.prod(enc.threads_per_warp) == THREADS_PER_WARP
                    assert enc.num_warps == num_warps
                    ll = enc.to_linear(shape)
                    assert ll.in_dims == (REGISTER, LANE, WARP)
                    assert ll.in_dim_size(LANE) == THREADS_PER_WARP
                    assert ll.in_dim_size(WARP) == num_warps
                    assert ll.out_dim_sizes == dict(zip(dim_names(rank), shape))
                    # Never drops an element.
                    assert ll.is_surjective(), (shape, num_warps, spt, order, enc)
                    tile = tile_of(enc)
                    if all(t <= s for t, s in zip(tile, shape)):
                        assert ll.is_injective(), (shape, enc)
                        assert ll.in_dim_size(REGISTER) * THREADS_PER_WARP * num_warps == math.prod(shape)
                    if math.prod(shape) < THREADS_PER_WARP * num_warps:
                        assert not ll.is_injective(), (shape, enc)  # must replicate

    @pytest.mark.parametrize("shape,num_warps,spt,order", [
        ([1], 4, None, None), ([2], 4, None, None), ([16], 4, None, None), ([8], 1, [4], None),
        ([2, 8], 4, None, [1, 0]), ([4, 2], 2, None, [0, 1]), ([1, 16], 4, [1, 2], [1, 0]),
        ([2, 2, 2], 2, None, None),
    ])
    def test_tiny_shapes_replicate_every_element(self, shape, num_warps, spt, order):
        enc = default_blocked(shape, num_warps, spt, order)
        ll = enc.to_linear(shape)
        own = owners(ll)
        assert set(own) == elements(shape)
        # A linear map's fibres all have the same size: every element has the same number of
        # copies, and every (register, lane, warp) holds a real element.
        copies = ll.total_in_size() // math.prod(shape)
        assert copies > 1
        assert all(len(v) == copies for v in own.values())


# ----------------------------------------------------------------------------- BlockedEncoding.to_linear


OWNERSHIP_CASES = [
    # encoding fields, shape
    (((1,), (32,), (4,), (0,)), (128,)),        # exact fit
    (((4,), (32,), (4,), (0,)), (1024,)),       # repeats twice in registers
    (((4,), (32,), (4,), (0,)), (64,)),         # smaller: warps and half the lanes replicate
    (((4,), (32,), (1,), (0,)), (2,)),          # smaller than one thread's chunk: registers drop
    (((2, 2), (8, 4), (1, 2), (1, 0)), (16, 16)),
    (((2, 2), (8, 4), (1, 2), (1, 0)), (32, 32)),
    (((2, 2), (8, 4), (1, 2), (1, 0)), (4, 64)),
    (((2, 2), (8, 4), (1, 2), (0, 1)), (16, 16)),
    (((1, 4), (4, 8), (2, 2), (1, 0)), (8, 64)),
    (((1, 4), (4, 8), (2, 2), (1, 0)), (32, 16)),
    (((4, 1), (16, 2), (1, 4), (0, 1)), (64, 8)),
    (((1, 1), (1, 32), (4, 1), (1, 0)), (2, 8)),
    (((1, 2, 2), (2, 4, 4), (2, 1, 2), (2, 1, 0)), (4, 8, 16)),
    (((1, 2, 2), (2, 4, 4), (2, 1, 2), (0, 2, 1)), (2, 16, 4)),
]


class TestBlockedToLinear:
    @pytest.mark.parametrize("fields,shape", OWNERSHIP_CASES)
    def test_ownership_matches_model(self, fields, shape):
        enc = BlockedEncoding(*fields)
        ll = enc.to_linear(shape)
        assert ll.out_dims == tuple(dim_names(len(shape)))
        got = owners(ll)
        assert set(got) == elements(shape)  # surjective: every element has an owner
        assert got == ref_blocked_owners(enc, shape)

    @pytest.mark.parametrize("fields,shape", OWNERSHIP_CASES)
    def test_injective_iff_no_replication(self, fields, shape):
        enc = BlockedEncoding(*fields)
        ll = enc.to_linear(shape)
        own = owners(ll)
        assert ll.is_surjective()
        assert ll.is_injective() == all(len(v) == 1 for v in own.values())

    @pytest.mark.parametrize("fields", [
        ((1,), (32,), (4,), (0,)), ((8,), (32,), (2,), (0,)),
        ((2, 2), (8, 4), (1, 2), (1, 0)), ((1, 4), (4, 8), (4, 1), (0, 1)),
        ((2, 1, 2), (2, 4, 4), (1, 2, 2), (1, 2, 0)),
    ])
    def test_exact_tile_is_bijective(self, fields):
        enc = BlockedEncoding(*fields)
        ll = enc.to_linear(tile_of(enc))
        assert ll.is_invertible()
        assert ll.in_dim_size(REGISTER) == math.prod(enc.size_per_thread)
        assert ll.free_variable_masks() == {REGISTER: 0, LANE: 0, WARP: 0}

    @pytest.mark.parametrize("fields,shape", [
        (((4,), (32,), (4,), (0,)), (1024,)),
        (((4,), (32,), (4,), (0,)), (512,)),
        (((8,), (32,), (1,), (0,)), (256,)),
        (((2, 4), (8, 4), (2, 2), (1, 0)), (64, 64)),
        (((4, 2), (4, 8), (2, 2), (0, 1)), (64, 64)),
        (((1, 1, 4), (2, 4, 4), (1, 2, 2), (2, 1, 0)), (4, 16, 32)),
    ])
    def test_size_per_thread_elements_are_contiguous_along_fastest_dim(self, fields, shape):
        enc = BlockedEncoding(*fields)
        ll = enc.to_linear(shape)
        fast = enc.order[0]
        vec = enc.size_per_thread[fast]
        for lane, warp in itertools.product(range(ll.in_dim_size(LANE)), range(ll.in_dim_size(WARP))):
            for base_reg in range(0, ll.in_dim_size(REGISTER), vec):
                elems = [ll.apply({REGISTER: base_reg + j, LANE: lane, WARP: warp}) for j in range(vec)]
                first = elems[0]
                assert first[fast] % vec == 0  # aligned chunk
                for j, e in enumerate(elems):
                    expect = list(first)
                    expect[fast] += j
                    assert e == tuple(expect)

    def test_larger_than_tile_repeats_in_registers(self):
        # [1024] with 4 elements per thread, 32 lanes, 4 warps: tile 512, repeated twice.
        enc = default_blocked([1024], 4, [4])
        ll = enc.to_linear((1024,))
        assert ll.in_dim_size(REGISTER) == 8
        assert ll.bases(REGISTER) == ((1,), (2,), (512,))
        assert ll.bases(LANE) == tuple((4 << i,) for i in range(5))
        assert ll.bases(WARP) == ((128,), (256,))
        for i in range(1024):
            assert ll.apply({REGISTER: i % 4 + 4 * (i // 512), LANE: (i // 4) % 32, WARP: (i // 128) % 4}) == (i,)
        assert ll.is_invertible()

    def test_larger_than_tile_2d_repeats_in_order(self):
        enc = BlockedEncoding((1, 1), (4, 8), (1, 1), (1, 0))  # tile 4 x 8
        ll = enc.to_linear((8, 32))
        # Repeats along the fastest dim (1) first, then dim 0.
        assert ll.bases(REGISTER) == ((0, 8), (0, 16), (4, 0))
        for r, c in elements((8, 32)):
            reg = (c // 8) + 4 * (r // 4)
            lane = (c % 8) + 8 * (r % 4)
            assert ll.apply({REGISTER: reg, LANE: lane}) == (r, c)

    def test_smaller_than_tile_replicates_lanes_and_warps(self):
        ll = default_blocked([16], 4).to_linear((16,))
        assert ll.in_dim_size(REGISTER) == 1
        assert ll.bases(LANE) == ((1,), (2,), (4,), (8,), (0,))
        assert ll.bases(WARP) == ((0,), (0,))
        assert ll.free_variable_masks() == {REGISTER: 0, LANE: 0b10000, WARP: 0b11}
        own = thread_owners(ll)
        for i in range(16):
            assert own[(i,)] == {(i, w) for w in range(4)} | {(i + 16, w) for w in range(4)}

    def test_smaller_than_size_per_thread_drops_registers(self):
        enc = BlockedEncoding((8,), (32,), (2,), (0,))
        ll = enc.to_linear((2,))
        assert ll.bases(REGISTER) == ((1,),)  # registers 2..7 would hold nothing: not stored
        assert all(v == (0,) for v in ll.bases(LANE) + ll.bases(WARP))
        assert owners(ll) == {(0,): {(0, l, w) for l in range(32) for w in range(2)},
                              (1,): {(1, l, w) for l in range(32) for w in range(2)}}

    def test_2d_partial_replication(self):
        # [2, 8] with 4 warps: lanes 0..7 along dim1, lane bit 3 along dim0, lane bit 4 and warps replicate.
        enc = default_blocked([2, 8], 4, order=[1, 0])
        ll = enc.to_linear((2, 8))
        assert ll.free_variable_masks() == {REGISTER: 0, LANE: 0b10000, WARP: 0b11}
        own = thread_owners(ll)
        for r, c in elements((2, 8)):
            lanes = {c + 8 * r, c + 8 * r + 16}
            assert own[(r, c)] == {(l, w) for l in lanes for w in range(4)}

    def test_shape_may_be_a_list(self):
        enc = BlockedEncoding((2,), (32,), (4,), (0,))
        assert enc.to_linear([256]) == enc.to_linear((256,))
        assert enc.to_linear([256]).out_dim_sizes == {"dim0": 256}


# ----------------------------------------------------------------------------- seed 001 worked examples


def seed_thread_id(r: int, c: int) -> int:
    """Seed 001, examples 1-2: sizePerThread {2,2}, threadsPerWarp {8,4}, warpsPerCTA {1,2},
    row-major; the 16x16 picture repeats over larger tensors."""
    r, c = r % 16, c % 16
    return 32 * (c // 8) + 4 * (r // 2) + (c % 8) // 2


SEED_ROWS_16x16 = {
    0: [0, 0, 1, 1, 2, 2, 3, 3, 32, 32, 33, 33, 34, 34, 35, 35],
    1: [0, 0, 1, 1, 2, 2, 3, 3, 32, 32, 33, 33, 34, 34, 35, 35],
    2: [4, 4, 5, 5, 6, 6, 7, 7, 36, 36, 37, 37, 38, 38, 39, 39],
    3: [4, 4, 5, 5, 6, 6, 7, 7, 36, 36, 37, 37, 38, 38, 39, 39],
    14: [28, 28, 29, 29, 30, 30, 31, 31, 60, 60, 61, 61, 62, 62, 63, 63],
    15: [28, 28, 29, 29, 30, 30, 31, 31, 60, 60, 61, 61, 62, 62, 63, 63],
}


class TestSeedExamples:
    enc = BlockedEncoding((2, 2), (8, 4), (1, 2), (1, 0))

    def test_example_1_rows_as_drawn(self):
        own = thread_owners(self.enc.to_linear((16, 16)))
        for r, row in SEED_ROWS_16x16.items():
            got = []
            for c in range(16):
                (lane, warp), = own[(r, c)]  # exactly one owner
                got.append(lane + THREADS_PER_WARP * warp)
            assert got == row

    def test_example_1_every_element(self):
        ll = self.enc.to_linear((16, 16))
        assert ll.is_invertible()
        own = owners(ll)
        for (r, c), threads in own.items():
            assert {l + 32 * w for _, l, w in threads} == {seed_thread_id(r, c)}
        # Each thread owns a 2x2 square: 4 registers.
        assert ll.in_dim_size(REGISTER) == 4
        per_thread = defaultdict(set)
        for (r, c), threads in own.items():
            for _, l, w in threads:
                per_thread[l + 32 * w].add((r, c))
        for tid, elems in per_thread.items():
            r0, c0 = min(elems)
            assert elems == {(r0 + i, c0 + j) for i in range(2) for j in range(2)}

    def test_example_2_tile_repeats_over_32x32(self):
        ll = self.enc.to_linear((32, 32))
        assert ll.is_injective() and ll.is_surjective()
        assert ll.in_dim_size(REGISTER) == 16  # 2x2 per tile, 2x2 tiles
        own = owners(ll)
        for (r, c), threads in own.items():
            assert {l + 32 * w for _, l, w in threads} == {seed_thread_id(r, c)}
        # Thread 33 owns the same 2x2 square in each of the four 16x16 tiles.
        assert {e for e, ts in own.items() if any(l + 32 * w == 33 for _, l, w in ts)} == {
            (r + 16 * i, c + 16 * j) for r in (0, 1) for c in (10, 11) for i in (0, 1) for j in (0, 1)}

    def test_shape_order_linear_id_4x4(self):
        # "shape = [4, 4], order = [0, 1] -> [0 4 8 12; 1 5 9 13; 2 6 10 14; 3 7 11 15]"
        expected = [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
        # As warps: one thread per warp, 4x4 warps, dim 0 fastest.
        ll = BlockedEncoding((1, 1), (1, 1), (4, 4), (0, 1)).to_linear((4, 4))
        own = thread_owners(ll)
        assert [[next(iter(own[(r, c)]))[1] for c in range(4)] for r in range(4)] == expected
        # As lanes of one 32-lane warp over [4, 8]: the first four columns are the picture.
        ll = default_blocked([4, 8], 1, order=[0, 1]).to_linear((4, 8))
        own = thread_owners(ll)
        assert [[next(iter(own[(r, c)]))[0] for c in range(4)] for r in range(4)] == expected


# ----------------------------------------------------------------------------- SliceEncoding


SLICE_PARENTS = [
    BlockedEncoding((1, 1), (1, 32), (4, 1), (1, 0)),
    BlockedEncoding((2, 2), (8, 4), (1, 2), (1, 0)),
    BlockedEncoding((1, 4), (4, 8), (2, 2), (0, 1)),
    BlockedEncoding((4, 1), (32, 1), (1, 2), (0, 1)),
    BlockedEncoding((1, 2, 2), (2, 4, 4), (2, 1, 2), (2, 1, 0)),
    BlockedEncoding((2, 1, 1), (4, 4, 2), (1, 2, 2), (0, 2, 1)),
]


def slice_cases():
    for parent in SLICE_PARENTS:
        for dim in range(parent.rank):
            for sizes in itertools.product((2, 16, 64), repeat=parent.rank - 1):
                yield parent, dim, sizes


class TestSliceEncoding:
    def test_properties(self):
        parent = SLICE_PARENTS[4]
        s = SliceEncoding(1, parent)
        assert s.rank == 2
        assert s.num_warps == 4
        assert s.parent_shape((8, 16)) == (8, 1, 16)
        assert SliceEncoding(0, parent).parent_shape([8, 16]) == (1, 8, 16)
        assert SliceEncoding(2, parent).parent_shape([8, 16]) == (8, 16, 1)

    @pytest.mark.parametrize("parent,dim,shape", list(slice_cases()))
    def test_matches_projected_parent(self, parent, dim, shape):
        s = SliceEncoding(dim, parent)
        ll = s.to_linear(shape)
        pshape = list(shape)
        pshape.insert(dim, 1)
        pll = parent.to_linear(pshape)
        assert ll.out_dim_sizes == dict(zip(dim_names(len(shape)), shape))
        for d in (REGISTER, LANE, WARP):
            assert ll.in_dim_size(d) == pll.in_dim_size(d)
        for a in all_inputs(pll):
            full = pll.apply(a)
            assert full[dim] == 0
            assert ll.apply(a) == full[:dim] + full[dim + 1:]
        assert ll.is_surjective()

    @pytest.mark.parametrize("parent,dim,shape", [c for c in slice_cases() if max(c[2]) <= 16])
    def test_reduction_partners(self, parent, dim, shape):
        """The threads owning slice element x are exactly the threads that, in the parent
        layout of the full tensor, own some element whose other coordinates are x (the
        threads a reduction along `dim` combines)."""
        full_shape = list(shape)
        full_shape.insert(dim, 8)
        full = thread_owners(parent.to_linear(full_shape))
        expected = defaultdict(set)
        for elem, threads in full.items():
            expected[elem[:dim] + elem[dim + 1:]] |= threads
        assert thread_owners(SliceEncoding(dim, parent).to_linear(shape)) == dict(expected)

    def test_slice_row_layout_example(self):
        # Seed example parent, reduced along dim 1: rows are held by the 4 lanes (and 2 warps)
        # of a row of threads, 2 registers per thread (the 2 rows of its 2x2 square).
        s = SliceEncoding(1, BlockedEncoding((2, 2), (8, 4), (1, 2), (1, 0)))
        ll = s.to_linear((16,))
        assert ll.in_dim_size(REGISTER) == 2
        own = owners(ll)
        for r in range(16):
            assert own[(r,)] == {(r % 2, 4 * (r // 2) + j, w) for j in range(4) for w in range(2)}

    def test_nested_slice(self):
        parent = BlockedEncoding((1, 2, 2), (2, 4, 4), (2, 1, 2), (2, 1, 0))
        inner = SliceEncoding(1, parent)            # rank 2: parent dims (0, 2)
        outer = SliceEncoding(0, inner)             # rank 1: parent dim 2
        assert outer.rank == 1 and outer.num_warps == 4
        ll = outer.to_linear((32,))
        pll = parent.to_linear((1, 1, 32))
        assert ll.in_dim_size(REGISTER) == pll.in_dim_size(REGISTER)
        for a in all_inputs(pll):
            assert ll.apply(a) == (pll.apply(a)[2],)
        assert ll.is_surjective()

    def test_slice_to_scalar(self):
        s = SliceEncoding(0, BlockedEncoding((4,), (32,), (4,), (0,)))
        assert s.rank == 0
        ll = s.to_linear(())
        assert ll.out_dims == ()
        assert ll.in_dim_size(REGISTER) == 1
        assert ll.apply({LANE: 5, WARP: 3}) == ()

    def test_slice_of_default_blocked_never_drops_elements(self):
        for shape in ([1, 64], [64, 1], [4, 4], [128, 32], [2, 1024]):
            parent = default_blocked(shape, 4, order=[1, 0])
            for dim in (0, 1):
                kept = [shape[1 - dim]]
                ll = SliceEncoding(dim, parent).to_linear(kept)
                assert set(owners(ll)) == elements(kept)


# ----------------------------------------------------------------------------- conversions


CONVERSION_ENCODINGS = [
    BlockedEncoding((1, 1), (1, 32), (4, 1), (1, 0)),
    BlockedEncoding((1, 4), (4, 8), (2, 2), (1, 0)),
    BlockedEncoding((2, 2), (8, 4), (1, 4), (0, 1)),
    BlockedEncoding((4, 1), (32, 1), (1, 4), (0, 1)),
]


@pytest.mark.parametrize("src,dst", list(itertools.product(CONVERSION_ENCODINGS, repeat=2)))
@pytest.mark.parametrize("shape", [(16, 32), (4, 8), (64, 16)])
def test_layout_conversion_between_blocked_encodings(src, dst, shape):
    """invert_and_compose expresses src's (register, lane, warp) in terms of dst's: the
    element dst holds at X(a) is the element src holds at a."""
    a_ll, b_ll = src.to_linear(shape), dst.to_linear(shape)
    x = a_ll.invert_and_compose(b_ll)
    assert x.in_dims == a_ll.in_dims and x.out_dims == b_ll.in_dims
    for a in all_inputs(a_ll):
        assert b_ll.apply(dict(zip(x.out_dims, x.apply(a)))) == a_ll.apply(a)


@pytest.mark.parametrize("block, bits, swizzle, box", [
    ([64, 64], 16, 128, [64, 64]),      # 128-byte rows: one swizzle column
    ([64, 128], 16, 128, [64, 64]),     # two columns of 64 rows: the swizzle phases agree
    ([2, 32], 32, 128, [2, 32]),        # one column, however few rows
    ([1, 1024], 8, 0, [1, 16]),         # several columns of one row: TMA's address-based
    ([4, 512], 16, 0, [4, 8]),          # swizzle would disagree with the layout's
    ([8, 1024], 8, 128, [8, 128]),
])
def test_tma_box_swizzles_only_where_the_phases_agree(block, bits, swizzle, box):
    from tilec.layout.shared import tma_box
    encoding, got = tma_box(block, bits)
    assert (encoding.swizzle_bytes, got) == (swizzle, box)


@pytest.mark.parametrize("block, bits, tma", [([1, 1024], 8, False), ([4, 256], 16, False), ([2, 16], 32, True),
                                              ([8, 1024], 8, True), ([1, 32], 32, True), ([3 * 8, 128], 16, True)])
def test_thin_blocks_over_several_columns_keep_pointers(block, bits, tma):
    """Each TMA copy lands 128-byte aligned: rows x 128 bytes per column block."""
    from tilec.layout.shared import tma_copies
    assert tma_copies(2, bits, "zero", block) == tma
