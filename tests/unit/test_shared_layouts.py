"""Unit tests of the shared-memory layouts (tilec.layout.shared; pure Python, no GPU).

Offsets are checked against the swizzle formula evaluated here on integers, NVMMA
layouts also against the hardware's address-bit formulation (bits [4, 7) of the byte
address XORed with the bits above 128 bytes). `ldmatrix` is simulated from the PTX ISA's
description (lane 8i + j addresses row j of matrix i; without .trans thread t receives
row t // 4, 4-byte column t % 4; with .trans element (2 (t % 4) + e, t // 4)), and every
8-lane phase must touch 8 distinct 16-byte bank groups.
"""
from __future__ import annotations

import itertools

import pytest

from tilec.layout.encodings import LANE, REGISTER, WARP, BlockedEncoding, DotOperandEncoding
from tilec.layout.linear_layout import LinearLayout
from tilec.layout.mma import MmaEncoding
from tilec.layout.shared import (
    OFFSET,
    NVMMASharedEncoding,
    SwizzledSharedEncoding,
    bank_group,
    exchange_shared_encoding,
    ldmatrix_row_coordinates,
    ldmatrix_row_offsets,
    mma_operand_shared_encoding,
)


def coordinates(shape):
    return itertools.product(*[range(s) for s in shape])


def offset_of(layout: LinearLayout, coords) -> int:
    """coords -> offset through an inverse layout."""
    return layout.apply(dict(zip(layout.in_dims, coords)))[0]


def mixed_radix(digits, radices) -> int:
    value, scale = 0, 1
    for d, r in zip(digits, radices):
        value += d * scale
        scale *= r
    return value


def ref_swizzled_offset(shape, order, vec, per_phase, max_phase, coords) -> int:
    """The documented formula, rows as wide as the tensor."""
    c, cols = coords[order[0]], shape[order[0]]
    if len(order) == 1:
        return c
    r = coords[order[1]]
    chunks = max(1, cols // vec)
    column = (((c // vec) ^ ((r // per_phase) % max_phase)) % chunks) * vec + c % vec
    rest = [coords[d] for d in order[1:]]
    return column + cols * mixed_radix(rest, [shape[d] for d in order[1:]])


# ----------------------------------------------------------------------------- SwizzledSharedEncoding


SWIZZLES = [(1, 1, 1), (8, 1, 8), (8, 2, 4), (4, 4, 2), (16, 1, 8), (2, 1, 4), (4, 1, 8)]
SHAPES_ORDERS = [((16, 64), (1, 0)), ((64, 16), (1, 0)), ((32, 32), (0, 1)), ((8, 8), (1, 0)),
                 ((4, 16, 32), (2, 1, 0)), ((4, 16, 32), (1, 2, 0)), ((8, 4, 16), (2, 0, 1)), ((64,), (0,))]


class TestSwizzledShared:
    @pytest.mark.parametrize("vec,per_phase,max_phase", SWIZZLES)
    @pytest.mark.parametrize("shape,order", SHAPES_ORDERS)
    def test_matches_formula_and_is_bijective(self, vec, per_phase, max_phase, shape, order):
        enc = SwizzledSharedEncoding(vec, per_phase, max_phase, order)
        layout = enc.to_linear(shape)
        assert layout.in_dims == (OFFSET,) and layout.is_invertible()
        inverse = enc.offset_layout(shape)
        seen = set()
        for coords in coordinates(shape):
            expected = ref_swizzled_offset(shape, order, vec, per_phase, max_phase, coords)
            assert offset_of(inverse, coords) == expected, coords
            assert layout.apply({OFFSET: expected}) == coords
            seen.add(expected)
        assert seen == set(range(len(seen))) and len(seen) == layout.total_out_size()

    def test_unswizzled_is_row_major_in_order(self):
        layout = SwizzledSharedEncoding(1, 1, 1, (0, 1)).to_linear((4, 8))
        assert layout.apply({OFFSET: 5}) == (1, 1)      # dim0 fastest
        assert layout.bases(OFFSET) == ((1, 0), (2, 0), (0, 1), (0, 2), (0, 4))

    def test_vectors_stay_contiguous(self):
        enc = SwizzledSharedEncoding(8, 1, 8, (1, 0))
        inverse = enc.offset_layout((64, 64))
        for r, c0 in itertools.product(range(64), range(0, 64, 8)):
            first = offset_of(inverse, (r, c0))
            assert first % 8 == 0
            assert [offset_of(inverse, (r, c0 + i)) for i in range(8)] == list(range(first, first + 8))

    @pytest.mark.parametrize("args,match", [
        ((3, 1, 1, (1, 0)), "power of two"),
        ((8, 0, 1, (1, 0)), "power of two"),
        ((8, 1, 8, (1, 1)), "permutation"),
    ])
    def test_rejects(self, args, match):
        with pytest.raises(ValueError, match=match):
            SwizzledSharedEncoding(*args)

    def test_rejects_wrong_rank(self):
        with pytest.raises(ValueError, match="rank"):
            SwizzledSharedEncoding(8, 1, 8, (1, 0)).to_linear((4, 8, 8))


# ----------------------------------------------------------------------------- NVMMASharedEncoding


def hardware_byte_address(swizzle_bytes: int, logical: int) -> int:
    """Swizzle modes as address bits: bits [4, 4 + log2(swizzle / 16)) ^= bits from 7 up."""
    if swizzle_bytes == 0:
        return logical
    mask = swizzle_bytes // 16 - 1
    return logical ^ (((logical >> 7) & mask) << 4)


def brief_chunk(swizzle_bytes: int, row: int, chunk: int) -> int:
    """The per-mode rules: 128B chunk ^= row % 8; 64B ^= (row // 2) % 4; 32B ^= (row // 4) % 2."""
    return {128: chunk ^ (row % 8), 64: chunk ^ ((row // 2) % 4), 32: chunk ^ ((row // 4) % 2), 0: chunk}[swizzle_bytes]


class TestNVMMAShared:
    @pytest.mark.parametrize("swizzle", [32, 64, 128])
    @pytest.mark.parametrize("bits", [8, 16, 32])
    @pytest.mark.parametrize("transposed", [False, True])
    def test_one_swizzle_row_matches_hardware(self, swizzle, bits, transposed):
        enc = NVMMASharedEncoding(swizzle, bits, transposed)
        cols = swizzle * 8 // bits
        rows = 32
        shape = (cols, rows) if transposed else (rows, cols)
        inverse = enc.offset_layout(shape)
        assert enc.to_linear(shape).is_invertible()
        for r, c in itertools.product(range(rows), range(cols)):
            coords = (c, r) if transposed else (r, c)
            byte = offset_of(inverse, coords) * bits // 8
            logical = r * swizzle + c * bits // 8
            assert byte == hardware_byte_address(swizzle, logical), (r, c)
            chunk_elems = 128 // bits
            assert byte == r * swizzle + brief_chunk(swizzle, r, c // chunk_elems) * 16 + (c % chunk_elems) * bits // 8

    def test_wide_tensor_continues_after_all_rows(self):
        enc = NVMMASharedEncoding(128, 16)
        inverse = enc.offset_layout((16, 128))
        for r, c in coordinates((16, 128)):
            block, cc = divmod(c, 64)
            expected = block * 16 * 64 + r * 64 + ((cc // 8) ^ (r % 8)) * 8 + cc % 8
            assert offset_of(inverse, (r, c)) == expected

    def test_no_swizzle_is_core_matrices(self):
        # 8 rows x 16 bytes core matrices, each 128 contiguous bytes, stacked along rows.
        enc = NVMMASharedEncoding(0, 16)
        inverse = enc.offset_layout((16, 32))
        for r, c in coordinates((16, 32)):
            assert offset_of(inverse, (r, c)) == (c // 8) * 16 * 8 + r * 8 + c % 8

    def test_batched(self):
        enc = NVMMASharedEncoding(64, 16)
        inverse = enc.offset_layout((2, 8, 32))
        for b, r, c in coordinates((2, 8, 32)):
            assert offset_of(inverse, (b, r, c)) == b * 256 + r * 32 + ((c // 8) ^ ((r // 2) % 4)) * 8 + c % 8
        assert enc.order(3) == (2, 1, 0) and NVMMASharedEncoding(64, 16, True).order(3) == (1, 2, 0)

    def test_parameters(self):
        enc = NVMMASharedEncoding(64, 16)
        assert (enc.vec, enc.per_phase, enc.max_phase, enc.row_elements) == (8, 2, 4, 32)
        enc = NVMMASharedEncoding(0, 8)
        assert (enc.vec, enc.per_phase, enc.max_phase, enc.row_elements) == (16, 1, 1, 16)

    def test_rejects(self):
        with pytest.raises(ValueError, match="swizzle_bytes"):
            NVMMASharedEncoding(16, 16)
        with pytest.raises(ValueError, match="element_bits"):
            NVMMASharedEncoding(128, 4)
        with pytest.raises(ValueError, match="narrower"):
            NVMMASharedEncoding(128, 16).to_linear((64, 32))
        with pytest.raises(ValueError, match="rank"):
            NVMMASharedEncoding(128, 16).to_linear((64,))


# ----------------------------------------------------------------------------- choosing an operand layout


def operand(op_idx: int, bits: int, warps=(2, 2)) -> DotOperandEncoding:
    return DotOperandEncoding(op_idx, MmaEncoding(2, warps), {16: 2, 32: 1, 8: 4}[bits])


class TestChooseOperandLayout:
    @pytest.mark.parametrize("op_idx,bits,shape,order,expected", [
        (0, 16, (64, 64), (1, 0), (8, 1, 8)),     # 128-byte rows
        (0, 16, (64, 128), (1, 0), (8, 1, 8)),    # 256-byte rows
        (0, 16, (64, 32), (1, 0), (8, 2, 4)),     # 64-byte rows: two rows share a line
        (0, 16, (64, 16), (1, 0), (8, 4, 2)),     # 32-byte rows
        (0, 16, (64, 8), (1, 0), (8, 8, 1)),      # one chunk per row: nothing to XOR
        (1, 16, (32, 64), (1, 0), (8, 1, 8)),
        (1, 16, (32, 64), (0, 1), (8, 2, 4)),
        (0, 32, (64, 32), (1, 0), (4, 1, 8)),
        (0, 32, (64, 16), (1, 0), (4, 2, 4)),
        (0, 8, (64, 64), (1, 0), (16, 2, 4)),
        (0, 8, (64, 128), (1, 0), (16, 1, 8)),
        (0, 16, (2, 64, 64), (2, 1, 0), (8, 1, 8)),
    ])
    def test_parameters(self, op_idx, bits, shape, order, expected):
        enc = mma_operand_shared_encoding(operand(op_idx, bits, (2, 2) if len(shape) == 2 else (1, 2, 2)),
                                          shape, order, bits)
        assert (enc.vec, enc.per_phase, enc.max_phase, enc.order) == expected + (order,)

    def test_equals_nvmma_128b_for_128_byte_rows(self):
        chosen = mma_operand_shared_encoding(operand(0, 16), (64, 64), (1, 0), 16)
        assert chosen.to_linear((64, 64)) == NVMMASharedEncoding(128, 16).to_linear((64, 64))

    def test_rejects(self):
        with pytest.raises(ValueError, match="mma parent"):
            mma_operand_shared_encoding(DotOperandEncoding(0, BlockedEncoding((1, 1), (8, 4), (1, 1), (1, 0))),
                                        (16, 16), (1, 0), 16)
        with pytest.raises(ValueError, match="k_width"):
            mma_operand_shared_encoding(operand(0, 16), (64, 64), (1, 0), 8)
        with pytest.raises(ValueError, match="order"):
            mma_operand_shared_encoding(operand(0, 16), (64, 64), (1,), 16)


# ----------------------------------------------------------------------------- ldmatrix from the chosen layout


def simulate_ldmatrix(shared: LinearLayout, row_offsets, bits: int, trans: bool):
    """What each thread receives: {(matrix, lane, element in its 32-bit word): coords}."""
    per_word = 32 // bits
    received = {}
    for i in range(len(row_offsets) // 8):
        for t in range(32):
            for e in range(per_word):
                if trans:
                    at = row_offsets[8 * i + 2 * (t % 4) + e] + t // 4
                else:
                    at = row_offsets[8 * i + t // 4] + (t % 4) * per_word + e
                received[i, t, e] = shared.apply({OFFSET: at})
    return received


# (name, op_idx, element bits, operand shape, shared order, trans)
LDMATRIX_CASES = [
    ("f16 A K-major", 0, 16, (64, 64), (1, 0), False),
    ("f16 A M-major", 0, 16, (64, 64), (0, 1), True),
    ("f16 A K-major 64B rows", 0, 16, (64, 32), (1, 0), False),
    ("f16 A K-major 32B rows", 0, 16, (64, 16), (1, 0), False),
    ("f16 A M-major 64B rows", 0, 16, (32, 32), (0, 1), True),
    ("f16 A K-major 256B rows", 0, 16, (32, 128), (1, 0), False),
    ("f16 B K-major", 1, 16, (64, 64), (0, 1), False),
    ("f16 B N-major", 1, 16, (64, 64), (1, 0), True),
    ("f16 B N-major 32B rows", 1, 16, (32, 16), (1, 0), True),
    ("f16 B K-major 64B rows", 1, 16, (32, 64), (0, 1), False),
    ("tf32 A K-major", 0, 32, (64, 32), (1, 0), False),
    ("tf32 A K-major 64B rows", 0, 32, (64, 16), (1, 0), False),
    ("tf32 B K-major", 1, 32, (32, 64), (0, 1), False),
    ("tf32 B K-major 32B rows", 1, 32, (8, 64), (0, 1), False),
    ("int8 A K-major", 0, 8, (64, 64), (1, 0), False),
    ("int8 A K-major 128B rows", 0, 8, (64, 128), (1, 0), False),
    ("int8 B K-major", 1, 8, (64, 64), (0, 1), False),
    ("int8 B K-major 32B rows", 1, 8, (32, 64), (0, 1), False),
]


def x4_word_groups(layout: LinearLayout, bits: int):
    words = layout.in_dim_size(REGISTER) // (32 // bits)
    return [list(range(w, w + 4)) for w in range(0, words, 4)]


class TestLdmatrix:
    @pytest.mark.parametrize("case", LDMATRIX_CASES, ids=[c[0] for c in LDMATRIX_CASES])
    def test_conflict_free_and_delivers_the_operand_layout(self, case):
        _, op_idx, bits, shape, order, trans = case
        dot = operand(op_idx, bits)
        layout = dot.to_linear(shape)
        shared_enc = mma_operand_shared_encoding(dot, shape, order, bits)
        shared = shared_enc.to_linear(shape)
        per_word = 32 // bits
        groups = x4_word_groups(layout, bits)
        assert groups
        for warp, words in itertools.product(range(layout.in_dim_size(WARP)), groups):
            offsets = ldmatrix_row_offsets(layout, shared_enc, shape, bits, words, trans, warp)
            assert len(offsets) == 32
            for i in range(4):
                phase = offsets[8 * i: 8 * i + 8]
                assert all(o * bits // 8 % 16 == 0 for o in phase)
                assert sorted(bank_group(o, bits) for o in phase) == list(range(8)), (warp, words, i, phase)
            received = simulate_ldmatrix(shared, offsets, bits, trans)
            for (i, t, e), coords in received.items():
                assert coords == layout.apply({REGISTER: words[i] * per_word + e, LANE: t, WARP: warp})

    def test_row_coordinates(self):
        layout = operand(0, 16).to_linear((32, 16))
        rows = ldmatrix_row_coordinates(layout, 16, [0, 1, 2, 3], trans=False)
        # a0a1: rows 0-7 at k 0; a2a3: rows 8-15; a4a5: rows 0-7 at k 8; a6a7: rows 8-15 at k 8.
        assert rows == [(j, 0) for j in range(8)] + [(8 + j, 0) for j in range(8)] + \
            [(j, 8) for j in range(8)] + [(8 + j, 8) for j in range(8)]
        rows_t = ldmatrix_row_coordinates(layout, 16, [0], trans=True)
        assert rows_t == [(0, j) for j in range(8)]

    def test_unswizzled_layout_has_conflicts(self):
        # The negative control: 128-byte rows, no swizzle, all 8 rows in one bank group.
        dot = operand(0, 16)
        layout = dot.to_linear((64, 64))
        plain = SwizzledSharedEncoding(8, 1, 1, (1, 0))
        offsets = ldmatrix_row_offsets(layout, plain, (64, 64), 16, [0, 1, 2, 3], False)
        assert len({bank_group(o, 16) for o in offsets[:8]}) == 1

    def test_rejects_layout_ldmatrix_cannot_read(self):
        # vec 2 breaks each 16-byte row into pieces.
        dot = operand(0, 16)
        layout = dot.to_linear((64, 64))
        with pytest.raises(ValueError, match="contiguous"):
            ldmatrix_row_offsets(layout, SwizzledSharedEncoding(2, 1, 8, (1, 0)), (64, 64), 16, [0, 1, 2, 3], False)
        with pytest.raises(ValueError, match="16-bit"):
            ldmatrix_row_coordinates(operand(0, 32).to_linear((64, 32)), 32, [0], trans=True)
        with pytest.raises(ValueError, match="1, 2 or 4"):
            ldmatrix_row_coordinates(layout, 16, [0, 1, 2], trans=False)

    def test_nvmma_layout_is_conflict_free_too(self):
        dot = operand(1, 16)
        layout = dot.to_linear((64, 128))
        enc = NVMMASharedEncoding(128, 16)            # B N-major, 128 columns: two swizzle blocks
        for words in x4_word_groups(layout, 16):
            offsets = ldmatrix_row_offsets(layout, enc, (64, 128), 16, words, True)
            for i in range(4):
                assert sorted(bank_group(o, 16) for o in offsets[8 * i: 8 * i + 8]) == list(range(8))


# ----------------------------------------------------------------------------- layout-conversion staging


class TestExchangeSharedEncoding:
    """`exchange_shared_encoding`: the scratch layout of a convert_layout through shared
    memory. The wgmma accumulator of a 128x256 fp16 tile (8 warps) is written as 4-byte
    pairs: each such store of a warp must hit 32 distinct banks."""

    @staticmethod
    def banks_per_store(layout: LinearLayout, encoding, shape, element_bits: int, run: int):
        """For each warp and each run of `run` registers: the 4-byte banks its 32 lanes
        write (one entry per lane)."""
        offsets = encoding.offset_layout(shape) if encoding is not None else None
        for warp in range(layout.in_dim_size(WARP)):
            for reg in range(0, layout.in_dim_size(REGISTER), run):
                banks = []
                for lane in range(32):
                    coords = layout.apply({REGISTER: reg, LANE: lane, WARP: warp})
                    if offsets is None:
                        offset = coords[0] * shape[1] + coords[1]
                    else:
                        offset = offset_of(offsets, coords)
                    banks.append(offset * element_bits // 8 // 4 % 32)
                yield banks

    def test_accumulator_stores_are_conflict_free(self):
        shape = (128, 256)
        acc = MmaEncoding(3, (8, 1), (64, 256)).to_linear(shape)
        enc = exchange_shared_encoding(shape, 16)
        assert enc == SwizzledSharedEncoding(8, 1, 8, (1, 0))
        stores = list(self.banks_per_store(acc, enc, shape, 16, 2))
        assert stores and all(sorted(banks) == list(range(32)) for banks in stores)
        # The negative control: plain row-major, 8 rows of 512 bytes share their banks.
        plain = list(self.banks_per_store(acc, None, shape, 16, 2))
        assert all(len(set(banks)) == 4 for banks in plain)

    @pytest.mark.parametrize("cols, bits", [(64, 16), (32, 32), (128, 8), (16, 16)])
    def test_short_rows_spread_over_phases(self, cols, bits):
        # An 8x8-lane column access (8 consecutive rows at one 16-byte chunk) reaches
        # 8 distinct bank groups whenever rows span 32 bytes or more.
        shape = (64, cols)
        enc = exchange_shared_encoding(shape, bits)
        offsets = enc.offset_layout(shape)
        vec = 128 // bits
        for chunk in range(cols // vec):
            groups = {bank_group(offset_of(offsets, (row, chunk * vec)), bits) for row in range(8)}
            assert len(groups) == 8, (cols, bits, chunk, groups)

    @pytest.mark.parametrize("shape, bits", [((256,), 16), ((64, 8), 16), ((48, 64), 16), ((64, 2), 64),
                                             ((64, 64), 1)])
    def test_no_swizzle(self, shape, bits):
        # rank 1, rows under 32 bytes, extents that are not powers of two, sub-byte elements
        assert exchange_shared_encoding(shape, bits) is None

    def test_rank3_swizzles_the_last_two_dims(self):
        enc = exchange_shared_encoding((2, 32, 64), 16)
        assert enc == SwizzledSharedEncoding(8, 1, 8, (2, 1, 0))
        offsets = enc.offset_layout((2, 32, 64))
        seen = {offset_of(offsets, c) for c in coordinates((2, 32, 64))}
        assert seen == set(range(2 * 32 * 64))
