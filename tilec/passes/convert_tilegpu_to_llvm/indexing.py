"""Lowering of tile.gather and tile.histogram through shared memory.

gather: the source is staged in the op's scratch space (row-major); each thread then reads, for
every index element it holds, the source element whose coordinates are the index
element's with the gathered axis replaced by the index value. The result has the
index's layout.

histogram: the bins are shared-memory counters in the op's scratch space, zeroed by the
whole program; every element is counted once (by its owner, when the layout repeats
elements) with a shared atomic add; then each thread reads the counts its result layout
assigns it.

Both always use their scratch space; the barrier before its first write, where an
earlier access needs one, is tilegpu-insert-barriers'.
"""
from __future__ import annotations

from mlir import ir

from ...dialects._mlir import create_op, int_attr_value, operand_groups
from ...dialects.tile import shape_of
from .context import LoweringContext, lowers
from .debug import scf_if
from .shape import read_staged, row_major, stage, staging_bytes
from .shared_memory import scratch_bytes

BIN_BYTES = 4  # one i32 counter per bin


def _as_i32(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    """An index as i32 (the semantic layer gives 32- or 64-bit values here; narrower
    gather indices are sign-extended)."""
    width = ir.IntegerType(value.type).width
    if width > 32:
        return ctx.arith("trunci", value, result_type=ctx.i32)
    if width < 32:
        return ctx.arith("extsi", value, result_type=ctx.i32)
    return value


@scratch_bytes("tile.gather")
def gather_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    return staging_bytes([op.operands[0]])


@lowers("tile.gather")
def lower_gather(ctx: LoweringContext, op: ir.Operation) -> None:
    src, index = op.operands[0], op.operands[1]
    axis = int_attr_value(op, "axis")
    shape = shape_of(src.type)
    staged = stage(ctx, [src])
    values = []
    for coords, position in zip(ctx.element_coordinates(ctx.layout(index)), ctx.elements(index)):
        coords = list(coords)
        coords[axis] = _as_i32(ctx, position)
        values.append(read_staged(ctx, staged, row_major(ctx, coords, shape)))
    ctx.set(op.results[0], values)


@scratch_bytes("tile.histogram")
def histogram_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    return shape_of(op.results[0].type)[0] * BIN_BYTES


@lowers("tile.histogram")
def lower_histogram(ctx: LoweringContext, op: ir.Operation) -> None:
    (src,), mask_group = operand_groups(op)[:2]
    result = op.results[0]
    bins = shape_of(result.type)[0]
    threads = 32 * ctx.num_warps
    ctx.reserve_shared(bins * BIN_BYTES)
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
                address = ctx.shared_address(ctx.arith("muli", _as_i32(ctx, value), ctx.const(BIN_BYTES)))
                create_op("llvm.atomicrmw", [ctx.i32], [address, one], attributes={
                    "bin_op": ir.IntegerAttr.get(ctx.i64, 1), "ordering": ir.IntegerAttr.get(ctx.i64, 2)})  # add, monotonic
    ctx.barrier()
    counts = []
    for coords in ctx.element_coordinates(ctx.layout(result)):
        address = ctx.shared_address(ctx.arith("muli", coords[0], ctx.const(BIN_BYTES)))
        counts.append(create_op("llvm.load", [ctx.i32], [address]).result)
    ctx.set(result, counts)


def _store_shared(ctx: LoweringContext, slot: ir.Value, value: ir.Value) -> None:
    address = ctx.shared_address(ctx.arith("muli", slot, ctx.const(BIN_BYTES)))
    create_op("llvm.store", [], [value, address])

