"""Lowering of tilegpu.convert_layout, and of tilegpu.extract_slice (a register selection).

Compares the two linear layouts (`register_permutation`):
- equal: nothing to do;
- same lanes and warps, registers permuted: reorder the thread's values;
- otherwise: every thread writes its elements to its scratch space in shared memory, a
  barrier, every thread reads the elements its new layout assigns it. Only then does
  the op need scratch space (`convert_layout_scratch_bytes`). The scratch holds the
  tensor row-major with 16-byte chunks swizzled (`exchange_shared_encoding`), written
  and read like an explicit buffer (local_memory.write_view / read_view: vectors where
  both layouts allow, ldmatrix for mma operands); where no swizzle applies or the
  elements exceed shared memory, the generic exchange of shape.py (plain row-major, in
  rounds if need be).
"""
from __future__ import annotations

import math

from mlir import ir

from ...dialects import tilegpu
from ...dialects.tile import element_type, shape_of
from ...layout.encodings import LANE, REGISTER, WARP
from ...layout.linear_layout import LinearLayout
from ...layout.shape_layouts import register_sources
from .context import LoweringContext, LoweringError, layout_of_value, lowers
from ...layout.shared import exchange_shared_encoding
from .local_memory import View, read_view, write_view
from .shape import exchange, exchange_bytes, row_major, staging_bytes, staging_plan
from .shared_memory import element_bytes, scratch_bytes


def register_permutation(src_ll: LinearLayout, dst_ll: LinearLayout) -> list[int] | None:
    """For each register of `dst_ll`, the register of `src_ll` holding the same element
    in the same thread, when the conversion moves no element between threads; None when
    it does (then it goes through shared memory)."""
    if src_ll == dst_ll:
        return list(range(src_ll.in_dim_size(REGISTER)))
    plan = register_sources(dst_ll, [src_ll], lambda coords: (0, coords))
    return None if plan is None else [register for _, register in plan]


def slice_registers(src_ll: LinearLayout, dst_ll: LinearLayout, offsets: list[int]) -> list[int] | None:
    """For each register of `dst_ll` (a block of `src_ll`'s tensor at `offsets`, in the
    same layout), the register of `src_ll` holding its element in the same thread; None
    when some thread does not hold its part of the block.

    Coordinates are the register part XOR the thread part; a block's offset is a
    multiple of its power-of-two shape, so when the offset shares no bit with what lanes
    and warps move, the thread part is the same in both and registers map directly."""
    if src_ll.bases(LANE) != dst_ll.bases(LANE) or src_ll.bases(WARP) != dst_ll.bases(WARP):
        return None
    thread_bits = [0] * len(offsets)
    for basis in list(src_ll.bases(LANE)) + list(src_ll.bases(WARP)):
        for d, c in enumerate(basis):
            thread_bits[d] |= c
    if any(o & bits for o, bits in zip(offsets, thread_bits)):
        return None
    index = {src_ll.apply({REGISTER: r}): r for r in reversed(range(src_ll.in_dim_size(REGISTER)))}
    picks = []
    for r in range(dst_ll.in_dim_size(REGISTER)):
        coords = tuple(c + o for c, o in zip(dst_ll.apply({REGISTER: r}), offsets))
        if coords not in index:
            return None
        picks.append(index[coords])
    return picks


@lowers("tilegpu.extract_slice")
def lower_extract_slice(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    picks = slice_registers(ctx.layout(src), ctx.layout(dst), tilegpu.subview_offsets(op))
    if picks is None:
        raise LoweringError(f"extract_slice of a block its threads do not hold: {src.type} -> {dst.type}")
    values = ctx.elements(src)
    ctx.set(dst, [values[r] for r in picks])


@scratch_bytes("tilegpu.convert_layout")
def convert_layout_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    src, dst = op.operands[0], op.results[0]
    if register_permutation(layout_of_value(src), layout_of_value(dst)) is not None:
        return 0
    return exchange_bytes(op, [src])


@lowers("tilegpu.convert_layout")
def lower_convert_layout(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    src_ll, dst_ll = ctx.layout(src), ctx.layout(dst)
    values = ctx.elements(src)
    permutation = register_permutation(src_ll, dst_ll)
    if permutation is not None:
        ctx.set(dst, [values[r] for r in permutation])
        return
    shape = shape_of(src.type)
    encoding = _staging_encoding(ctx, src)
    if encoding is None:
        (result,) = exchange(ctx, [src], [(dst_ll, lambda coords: row_major(ctx, coords, shape))])
        ctx.set(dst, result)
        return
    ctx.reserve_shared(staging_bytes([src]))
    buffer = ir.RankedTensorType.get(shape, element_type(src.type), tilegpu.encoding_attr(encoding))
    view = View(buffer, (0,) * len(shape))
    base = ctx.const(ctx.scratch_offset)
    write_view(ctx, src, view, base)
    ctx.barrier()
    ctx.set(dst, read_view(ctx, dst, view, base))


def _staging_encoding(ctx: LoweringContext, src: ir.Value):
    """The swizzled layout `src` is exchanged in, or None for the generic exchange (no
    swizzle applies, or the exchange runs in rounds)."""
    shape = shape_of(src.type)
    per_round, _ = staging_plan([src], ctx.target)
    if per_round < math.prod(shape):
        return None
    return exchange_shared_encoding(shape, 8 * element_bytes(src.type))
