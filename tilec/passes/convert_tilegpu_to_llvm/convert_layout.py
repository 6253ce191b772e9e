"""Lowering of tilegpu.convert_layout.

Compares the two linear layouts:
- equal: nothing to do;
- same lanes and warps, registers permuted: reorder the thread's values;
- otherwise: every thread writes its elements to shared memory at their row-major
  position, a barrier, every thread reads the elements its new layout assigns it.
"""
from __future__ import annotations

from mlir import ir

from ...dialects.tile import shape_of
from ...layout.encodings import LANE, WARP
from .context import LoweringContext, lowers
from .shape import exchange, row_major


@lowers("tilegpu.convert_layout")
def lower_convert_layout(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    src_ll, dst_ll = ctx.layout(src), ctx.layout(dst)
    values = ctx.elements(src)
    if src_ll == dst_ll:
        ctx.set(dst, list(values))
        return
    if src_ll.bases(LANE) == dst_ll.bases(LANE) and src_ll.bases(WARP) == dst_ll.bases(WARP):
        index = {c: i for i, c in reversed(list(enumerate(ctx.register_coordinates(src_ll))))}
        wanted = ctx.register_coordinates(dst_ll)
        if all(c in index for c in wanted):
            ctx.set(dst, [values[index[c]] for c in wanted])
            return
    ctx.set(dst, _through_shared_memory(ctx, src_ll, dst_ll, values, shape_of(src.type)))


def _through_shared_memory(ctx: LoweringContext, src_ll, dst_ll, values, shape) -> list[ir.Value]:
    (result,) = exchange(ctx, [(values, src_ll, shape)], [(dst_ll, lambda coords: row_major(ctx, coords, shape))])
    return result
