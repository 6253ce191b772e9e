"""Lowering of the shape ops (reshape, trans, join, split, cat) and layout conversions
that are not register permutations: an exchange through shared memory.

Every thread writes the elements it holds at their row-major position in shared memory
(after the elements of earlier sources); after a barrier, every thread reads each
element its result layout assigns it, at the position an index function computes from
the element's coordinates. The same routine serves every op; only the index function
differs.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from mlir import ir

from ...dialects._mlir import create_op
from ...dialects.tile import shape_of, trans_order
from ...layout.linear_layout import LinearLayout
from .context import LoweringContext, lowers
from .shared_memory import byte_size, from_shared, store_type, to_shared

IndexFn = Callable[[list[ir.Value]], ir.Value]


def row_major(ctx: LoweringContext, coords: Sequence[ir.Value], shape: Sequence[int], base: int = 0) -> ir.Value:
    """base + the row-major linear index of `coords` in `shape` (i32)."""
    index = None
    for d, value in enumerate(coords):
        stride = math.prod(shape[d + 1:])
        term = value if stride == 1 else ctx.arith("muli", value, ctx.const(stride))
        index = term if index is None else ctx.arith("addi", index, term)
    if index is None:
        index = ctx.const(0)
    return ctx.arith("addi", index, ctx.const(base)) if base else index


def exchange(ctx: LoweringContext, sources: Sequence[tuple[list[ir.Value], LinearLayout, Sequence[int]]],
             destinations: Sequence[tuple[LinearLayout, IndexFn]]) -> list[list[ir.Value]]:
    """Moves elements between layouts through shared memory (see the module docstring).

    sources: (values, layout, shape) of each input, written one after the other;
    destinations: (layout, index function) of each result. Returns each result's values.
    """
    elem_ty = stage(ctx, sources)
    return [[read_staged(ctx, elem_ty, index_fn(coords)) for coords in ctx.element_coordinates(layout)]
            for layout, index_fn in destinations]


def stage(ctx: LoweringContext, sources: Sequence[tuple[list[ir.Value], LinearLayout, Sequence[int]]]) -> ir.Type:
    """Writes every element of the sources at its row-major position in shared memory
    (one source after the other), between barriers; returns the element type."""
    elem_ty = sources[0][0][0].type
    size = byte_size(ctx, elem_ty)
    total = sum(math.prod(shape) for _, _, shape in sources)
    ctx.reserve_shared(total * size)
    ctx.barrier()  # earlier users of the scratch space are done
    base = 0
    for values, layout, shape in sources:
        for value, coords in zip(values, ctx.element_coordinates(layout)):
            address = ctx.shared_address(ctx.arith("muli", row_major(ctx, coords, shape, base), ctx.const(size)))
            create_op("llvm.store", [], [to_shared(ctx, value), address])
        base += math.prod(shape)
    ctx.barrier()
    return elem_ty


def read_staged(ctx: LoweringContext, elem_ty: ir.Type, index: ir.Value) -> ir.Value:
    """The staged element at linear position `index` (i32)."""
    address = ctx.shared_address(ctx.arith("muli", index, ctx.const(byte_size(ctx, elem_ty))))
    return from_shared(ctx, create_op("llvm.load", [store_type(ctx, elem_ty)], [address]).result, elem_ty)


@lowers("tile.reshape")
def lower_reshape(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    src_ll, dst_ll = ctx.layout(src), ctx.layout(dst)
    shape = shape_of(dst.type)
    if _same_row_major_placement(ctx, src_ll, shape_of(src.type), dst_ll, shape):
        ctx.set(dst, list(ctx.elements(src)))
        return
    (values,) = exchange(ctx, [(ctx.elements(src), src_ll, shape_of(src.type))],
                         [(dst_ll, lambda c: row_major(ctx, c, shape))])
    ctx.set(dst, values)


def _same_row_major_placement(ctx, src_ll: LinearLayout, src_shape, dst_ll: LinearLayout, dst_shape) -> bool:
    """True when each thread already holds, register by register, the elements the
    reshaped layout gives it (both layouts flattened row-major agree)."""
    def flat(ll: LinearLayout, shape) -> LinearLayout:
        names = list(ll.out_dims)
        return ll.transpose_outs(list(reversed(names))).flatten_outs()  # last dim least significant
    try:
        return flat(src_ll, src_shape) == flat(dst_ll, dst_shape)
    except ValueError:
        return False


@lowers("tile.trans")
def lower_trans(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    order = trans_order(op)
    src_shape = shape_of(src.type)

    def index(coords: list[ir.Value]) -> ir.Value:
        src_coords = [None] * len(order)
        for i, d in enumerate(order):
            src_coords[d] = coords[i]
        return row_major(ctx, src_coords, src_shape)

    (values,) = exchange(ctx, [(ctx.elements(src), ctx.layout(src), src_shape)], [(ctx.layout(dst), index)])
    ctx.set(dst, values)


@lowers("tile.join")
def lower_join(ctx: LoweringContext, op: ir.Operation) -> None:
    lhs, rhs, dst = op.operands[0], op.operands[1], op.results[0]
    shape = shape_of(lhs.type)
    n = math.prod(shape)

    def index(coords: list[ir.Value]) -> ir.Value:
        half = ctx.arith("muli", coords[-1], ctx.const(n))
        return ctx.arith("addi", half, row_major(ctx, coords[:-1], shape))

    (values,) = exchange(ctx, [(ctx.elements(lhs), ctx.layout(lhs), shape), (ctx.elements(rhs), ctx.layout(rhs), shape)],
                         [(ctx.layout(dst), index)])
    ctx.set(dst, values)


@lowers("tile.split")
def lower_split(ctx: LoweringContext, op: ir.Operation) -> None:
    src = op.operands[0]
    shape = shape_of(src.type)
    part_shape = shape[:-1]

    def index(half: int) -> IndexFn:
        return lambda coords: ctx.arith("addi", ctx.arith("muli", row_major(ctx, coords, part_shape), ctx.const(2)),
                                        ctx.const(half))

    lhs, rhs = exchange(ctx, [(ctx.elements(src), ctx.layout(src), shape)],
                        [(ctx.layout(op.results[0]), index(0)), (ctx.layout(op.results[1]), index(1))])
    ctx.set(op.results[0], lhs)
    ctx.set(op.results[1], rhs)


@lowers("tile.cat")
def lower_cat(ctx: LoweringContext, op: ir.Operation) -> None:
    lhs, rhs, dst = op.operands[0], op.operands[1], op.results[0]
    shape = shape_of(dst.type)
    (values,) = exchange(ctx, [(ctx.elements(lhs), ctx.layout(lhs), shape_of(lhs.type)),
                               (ctx.elements(rhs), ctx.layout(rhs), shape_of(rhs.type))],
                         [(ctx.layout(dst), lambda c: row_major(ctx, c, shape))])
    ctx.set(dst, values)
