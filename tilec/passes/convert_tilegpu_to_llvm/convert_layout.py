"""Lowering of tilegpu.convert_layout.

Compares the two linear layouts:
- equal: nothing to do;
- same lanes and warps, registers permuted: reorder the thread's values;
- otherwise: every thread writes its elements to shared memory at their row-major
  position, a barrier, every thread reads the elements its new layout assigns it.
"""
from __future__ import annotations

import math

from mlir import ir

from ...dialects._mlir import create_op
from ...dialects.tile import shape_of
from ...layout.encodings import LANE, WARP
from .context import LoweringContext, lowers
from .reduce import _bytes, _from_shared, _store_type, _to_shared


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
    elem_ty = values[0].type
    size = _bytes(ctx, elem_ty)
    ctx.reserve_shared(math.prod(shape) * size)
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]

    def addresses(ll) -> list[ir.Value]:
        out = []
        for coord in ctx.element_coordinates(ll):
            index = ctx.const(0)
            for value, stride in zip(coord, strides):
                index = ctx.arith("addi", index, value if stride == 1 else ctx.arith("muli", value, ctx.const(stride)))
            out.append(ctx.shared_address(ctx.arith("muli", index, ctx.const(size))))
        return out

    ctx.barrier()
    for value, address in zip(values, addresses(src_ll)):
        create_op("llvm.store", [], [_to_shared(ctx, value), address])
    ctx.barrier()
    loaded = [create_op("llvm.load", [_store_type(ctx, elem_ty)], [address]).result for address in addresses(dst_ll)]
    return [_from_shared(ctx, v, elem_ty) for v in loaded]


