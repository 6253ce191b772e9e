"""Unit tests of `slice_registers` (the lowering of tilegpu.extract_slice; pure Python, no
IR, no GPU).

extract_slice takes a block of a register tensor in the same layout, and lowers to a
plain selection of the source's registers: for each register of the block's layout, the
source register that holds the same element *in the same thread*. That is only possible
when every thread already holds its part of the block; otherwise `slice_registers` must
say None (the lowering then refuses, instead of silently reading another element).

Every answer is checked against the layouts themselves (`LinearLayout.apply`), for every
lane and warp, not against a table of expected register numbers.
"""
from __future__ import annotations

import itertools

import pytest

from tilec.layout.encodings import LANE, REGISTER, WARP, BlockedEncoding, DotOperandEncoding
from tilec.layout.linear_layout import LinearLayout
from tilec.layout.mma import MmaEncoding, mma_v2_instr_k
from tilec.passes.convert_tilegpu_to_llvm.convert_layout import slice_registers


def assert_picks_hold_the_block(src: LinearLayout, dst: LinearLayout, offsets: list[int], picks: list[int]) -> None:
    """In every thread, source register picks[r] holds the element at dst's coordinate of
    register r shifted by `offsets`: the selection reads exactly the block, in order."""
    assert len(picks) == dst.in_dim_size(REGISTER)
    for lane, warp in itertools.product(range(src.in_dim_size(LANE)), range(src.in_dim_size(WARP))):
        for r, pick in enumerate(picks):
            want = tuple(c + o for c, o in zip(dst.apply({REGISTER: r, LANE: lane, WARP: warp}), offsets))
            assert src.apply({REGISTER: pick, LANE: lane, WARP: warp}) == want, (lane, warp, r, pick)


def test_k_slices_of_attention_p_operand():
    # Attention's p as the A operand of p @ v: [128, 64] fp16 in #dot_op<{opIdx = 0,
    # parent = #mma (warps [4, 1]), kWidth = 2}>, sliced into [128, 16] blocks (one
    # m16n8k16's depth) as tilegpu-optimize-dot-operands does.
    a = DotOperandEncoding(0, MmaEncoding(2, (4, 1)), 2)
    src, dst = a.to_linear((128, 64)), a.to_linear((128, 16))
    picks = slice_registers(src, dst, [0, 16])
    assert isinstance(picks, list)
    assert_picks_hold_the_block(src, dst, [0, 16], picks)

    # The four K slices together pick each source register exactly once: slicing
    # neither loses nor duplicates any of p's registers.
    every = [slice_registers(src, dst, [0, k]) for k in (0, 16, 32, 48)]
    for k, chosen in zip((0, 16, 32, 48), every):
        assert chosen is not None
        assert_picks_hold_the_block(src, dst, [0, k], chosen)
    assert sorted(itertools.chain.from_iterable(every)) == list(range(src.in_dim_size(REGISTER)))


@pytest.mark.parametrize("k_width", [1, 2, 4])  # tf32, 16-bit, 8-bit operands
@pytest.mark.parametrize("warps", [(4, 1), (2, 2), (8, 1)])
@pytest.mark.parametrize("op_idx", [0, 1])
def test_every_k_slice_of_an_mma_operand_is_a_register_selection(op_idx, warps, k_width):
    # Tensor-core operands keep the whole K in each thread's registers (lanes and warps
    # split M or N only), so every instruction-deep K slice is held by its threads.
    operand = DotOperandEncoding(op_idx, MmaEncoding(2, warps), k_width)
    depth = mma_v2_instr_k(k_width)
    whole = (128, 64) if op_idx == 0 else (64, 64)
    part = (128, depth) if op_idx == 0 else (depth, 64)
    src, dst = operand.to_linear(whole), operand.to_linear(part)
    for k in range(0, 64, depth):
        offsets = [0, k] if op_idx == 0 else [k, 0]
        picks = slice_registers(src, dst, offsets)
        assert picks is not None, offsets
        assert_picks_hold_the_block(src, dst, offsets, picks)


def test_blocked_rows_held_in_registers():
    # Rows 16, 32 and 64 of a [128, 64] tensor in this blocked layout are register bits
    # (4 lanes x 4 warps cover 16 rows): the lower half is a register selection too.
    blocked = BlockedEncoding((1, 8), (4, 8), (4, 1), (1, 0))
    src, dst = blocked.to_linear((128, 64)), blocked.to_linear((64, 64))
    picks = slice_registers(src, dst, [64, 0])
    assert picks is not None
    assert_picks_hold_the_block(src, dst, [64, 0], picks)


def test_block_held_by_other_lanes_is_refused():
    # The same blocked layout spreads 64 columns over 8 lanes of 8 elements each: the
    # columns [16, 32) are held only by the lanes l with l % 8 in (2, 3), not by every
    # thread, so no register selection gives each thread its part of a [128, 16] block.
    blocked = BlockedEncoding((1, 8), (4, 8), (4, 1), (1, 0))
    src, dst = blocked.to_linear((128, 64)), blocked.to_linear((128, 16))
    assert slice_registers(src, dst, [0, 16]) is None
    assert slice_registers(src, dst, [0, 0]) is None  # even at the origin: lanes 1.. hold other columns


def test_block_held_by_another_warp_is_refused():
    # An mma accumulator with warps [1, 4] gives each warp 16 of the 64 columns:
    # columns [16, 32) are warp 1's alone.
    acc = MmaEncoding(2, (1, 4))
    assert slice_registers(acc.to_linear((128, 64)), acc.to_linear((128, 16)), [0, 16]) is None


def test_offset_on_a_thread_bit_is_refused():
    # Same lanes and warps in both layouts, but an (unaligned) offset of 4 rows, which
    # is what warp 1 adds in this layout: the rows are in another warp, so None
    # rather than registers of the wrong rows. (The verifier rejects such offsets;
    # slice_registers must not answer wrongly either way.)
    blocked = BlockedEncoding((1, 8), (4, 8), (4, 1), (1, 0))
    src, dst = blocked.to_linear((128, 64)), blocked.to_linear((64, 64))
    assert src.bases(LANE) == dst.bases(LANE) and src.bases(WARP) == dst.bases(WARP)
    assert slice_registers(src, dst, [4, 0]) is None
