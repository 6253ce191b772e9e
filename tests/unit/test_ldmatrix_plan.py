"""plan_ldmatrix checks only group 0 of warp 0 and each single group bit and warp bit
(offsets are linear over GF(2), so that decides every group of every warp). Here it must
agree with checking every group of every warp, on the operand layouts and buffers the
tensor-core path produces (swizzled for ldmatrix, and plain row-major either way round)."""
import itertools

import pytest

from tilec.layout.encodings import REGISTER, DotOperandEncoding
from tilec.layout.mma import MmaEncoding, mma_v2_k_width, mma_warps_per_cta
from tilec.layout.shared import SwizzledSharedEncoding, ldmatrix_row_offsets, mma_operand_shared_encoding
from tilec.passes.convert_tilegpu_to_llvm import ldmatrix


def _every_group_of_every_warp(layout, shared, shape, bits, num_warps):
    per_word = 32 // bits
    words = layout.in_dim_size(REGISTER) // per_word
    if words == 0:
        return None
    num = 4 if words % 4 == 0 else 2 if words % 2 == 0 else 1
    for trans in ((False, True) if bits == 16 else (False,)):
        try:
            for warp in range(num_warps):
                for first in range(0, words, num):
                    ldmatrix_row_offsets(layout, shared, list(shape), bits, list(range(first, first + num)), trans,
                                         warp)
        except ValueError:
            continue
        return trans, num
    return None


@pytest.mark.parametrize("bits", [16, 32, 8])
@pytest.mark.parametrize("num_warps", [4, 8])
def test_reduced_check_agrees_with_the_exhaustive_one(bits, num_warps):
    k_width = mma_v2_k_width(bits)
    loadable = 0
    for m, n, k in ((16, 64, 32), (64, 16, 64), (128, 64, 32), (64, 128, 64)):
        mma = MmaEncoding(2, mma_warps_per_cta([m, n], num_warps))
        for op_idx, shape in ((0, (m, k)), (1, (k, n))):
            operand = DotOperandEncoding(op_idx, mma, k_width)
            layout = operand.to_linear(shape)
            for order in ((1, 0), (0, 1)):
                for shared in (mma_operand_shared_encoding(operand, list(shape), order, bits),
                               SwizzledSharedEncoding(1, 1, 1, order)):
                    expected = _every_group_of_every_warp(layout, shared, shape, bits, num_warps)
                    assert ldmatrix._plan(layout, shared, tuple(shape), bits, num_warps) == expected, \
                        (op_idx, shape, order, shared)
                    loadable += expected is not None
    assert loadable  # the cases include layouts ldmatrix can load, not only refusals
