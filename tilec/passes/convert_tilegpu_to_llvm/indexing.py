"""Lowering of tile.gather and tile.histogram through shared memory.

gather: the source is staged in shared memory (row-major); each thread then reads, for
every index element it holds, the source element whose coordinates are the index
element's with the gathered axis replaced by the index value. The result has the
index's layout.

histogram: the bins are shared-memory counters, zeroed by the whole program; every
element is counted once (by its owner, when the layout repeats elements) with a shared
atomic add; then each thread reads the counts its result layout assigns it.
"""
from __future__ import annotations

from mlir import ir

from ...dialects._mlir import create_op, int_attr_value, operand_groups
from ...dialects.tile import shape_of
from .context import LoweringContext, lowers
from .debug import scf_if
from .shape import read_staged, row_major, stage


def _as_i32(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    """An index as i32 (the semantic layer gives 32- or 64-bit values here; narrower
    gather indices are sign-extended)."""
    width = ir.IntegerType(value.type).width
    if width > 32:
        return ctx.arith("trunci", value, result_type=ctx.i32)
    if width < 32:
        return ctx.arith("extsi", value, result_type=ctx.i32)
    return value


@lowers("tile.gather")
def lower_gather(ctx: LoweringContext, op: ir.Operation) -> None:
    src, index = op.operands[0], op.operands[1]
    axis = int_attr_value(op, "axis")
    shape = shape_of(src.type)
    elem_ty = stage(ctx, [(ctx.elements(src), ctx.layout(src), shape)])
    values = []
    for coords, position in zip(ctx.element_coordinates(ctx.layout(index)), ctx.elements(index)):
        coords = list(coords)
        coords[axis] = _as_i32(ctx, position)
        values.append(read_staged(ctx, elem_ty, row_major(ctx, coords, shape)))
    ctx.set(op.results[0], values)


@lowers("tile.histogram")
def lower_histogram(ctx: LoweringContext, op: ir.Operation) -> None:
    (src,), mask_group = operand_groups(op)[:2]
    result = op.results[0]
    bins = shape_of(result.type)[0]
    threads = 32 * ctx.num_warps
    ctx.reserve_shared(bins * 4)
    ctx.barrier()  # earlier users of the scratch space are done
    for first in range(0, bins, threads):
        slot = ctx.arith("addi", ctx.tid, ctx.const(first))
        inside = ctx.arith("cmpi", slot, ctx.const(bins), result_type=ctx.i1,
                           attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)}) if first + threads > bins else None  # ult
        with scf_if(ctx, inside):
            _store_shared(ctx, slot, ctx.const(0))
    ctx.barrier()
    predicate, registers = ctx.owners(src)
    values = ctx.elements(src)
    masks = ctx.elements(mask_group[0]) if mask_group else None
    one = ctx.const(1)
    with scf_if(ctx, predicate):
        for r in registers:
            # The semantic layer widened the values to 32 or 64 bits: one unsigned
            # comparison tests 0 <= value < bins (negative values wrap to huge ones).
            value = values[r]
            counted = ctx.arith("cmpi", value, ctx.const(bins, value.type), result_type=ctx.i1,
                                attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult
            if masks is not None:
                counted = ctx.arith("andi", counted, masks[r])
            with scf_if(ctx, counted):
                address = ctx.shared_address(ctx.arith("muli", _as_i32(ctx, value), ctx.const(4)))
                create_op("llvm.atomicrmw", [ctx.i32], [address, one], attributes={
                    "bin_op": ir.IntegerAttr.get(ctx.i64, 1), "ordering": ir.IntegerAttr.get(ctx.i64, 2)})  # add, monotonic
    ctx.barrier()
    counts = []
    for coords in ctx.element_coordinates(ctx.layout(result)):
        address = ctx.shared_address(ctx.arith("muli", coords[0], ctx.const(4)))
        counts.append(create_op("llvm.load", [ctx.i32], [address]).result)
    ctx.set(result, counts)


def _store_shared(ctx: LoweringContext, slot: ir.Value, value: ir.Value) -> None:
    address = ctx.shared_address(ctx.arith("muli", slot, ctx.const(4)))
    create_op("llvm.store", [], [value, address])

