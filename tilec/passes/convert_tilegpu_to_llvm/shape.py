"""Lowering of the shape ops (reshape, trans, join, split, cat) and layout conversions
that are not register permutations.

A shape op whose result layout lets every thread find its elements in its own registers
(the layouts `tilec.layout.shape_layouts` infers) is a renumbering of registers. Any
other goes through shared memory, an exchange:

Every thread writes the elements it holds at their row-major position in the op's
scratch space (after the elements of earlier sources; a run of registers at
consecutive, aligned positions as one vector store); after a barrier, every thread
reads each element its result layout assigns it, at the position an index function
computes from the element's coordinates. The same routine serves every op; only the
index function differs. The scratch space is every source element (`staging_bytes`).

When the elements do not fit in the GPU's shared memory, the exchange runs in rounds
(`staging_plan`): round r stages the positions [r·P, (r+1)·P) — each thread stores every
element, those outside the round into a spare slot past the round's space — and every
thread reads the elements of its result that fall in the round, keeping the others from
earlier rounds.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from mlir import ir

from dataclasses import dataclass

from ...dialects import tilegpu
from ...dialects._mlir import create_op
from ...dialects.tile import shape_of, trans_order
from ...layout.linear_layout import LinearLayout
from ...layout.shape_layouts import register_sources, source_map
from ...target import Target
from .context import LoweringContext, layout_of_value, lowers
from .shared_memory import element_bytes, from_shared, scratch_bytes, store_type, to_shared, vector_run

IndexFn = Callable[[list[ir.Value]], ir.Value]


@dataclass(frozen=True)
class Staged:
    """Elements staged row-major in the op's scratch space by `stage`."""
    elem_type: ir.Type  # per-thread type of one element
    elem_bytes: int


def staging_bytes(sources: Sequence[ir.Value]) -> int:
    """Scratch bytes `stage` takes for these ttgir values: all their elements."""
    return sum(math.prod(shape_of(v.type)) for v in sources) * element_bytes(sources[0].type)


# Room past a round's positions for the elements a thread writes outside the round: one
# store of the widest vector (16 bytes).
_SPARE_BYTES = 16


def staging_plan(sources: Sequence[ir.Value], target: Target | None) -> tuple[int, int]:
    """(positions per round, scratch bytes) of an exchange of `sources`. One round holds
    every element when they fit in the target's shared memory; otherwise a round is the
    largest power of two of elements in half of it (leaving room for other buffers)."""
    elements = sum(math.prod(shape_of(v.type)) for v in sources)
    size = element_bytes(sources[0].type)
    if target is None or elements * size <= target.max_shared_bytes:
        return elements, elements * size
    per_round = 1 << ((target.max_shared_bytes // 2 // size).bit_length() - 1)
    return per_round, per_round * size + _SPARE_BYTES


def exchange_bytes(op: ir.Operation, sources: Sequence[ir.Value]) -> int:
    """The scratch size function's answer for an op that exchanges `sources`."""
    return staging_plan(sources, _module_target(op))[1]


def _module_target(op: ir.Operation) -> Target | None:
    module = op
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None or tilegpu.TARGET_ATTR not in module.attributes:
        return None
    return Target.parse(tilegpu.target_of(module))


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


def exchange(ctx: LoweringContext, sources: Sequence[ir.Value],
             destinations: Sequence[tuple[LinearLayout, IndexFn]]) -> list[list[ir.Value]]:
    """Moves elements between layouts through shared memory (see the module docstring).

    sources: the ttgir values, written one after the other; destinations: (layout,
    index function) of each result. Returns each result's values.
    """
    per_round, nbytes = staging_plan(sources, ctx.target)
    if per_round < sum(math.prod(shape_of(v.type)) for v in sources):
        return _exchange_in_rounds(ctx, sources, destinations, per_round, nbytes)
    staged = stage(ctx, sources)
    return [[read_staged(ctx, staged, index_fn(coords)) for coords in ctx.element_coordinates(layout)]
            for layout, index_fn in destinations]


def _exchange_in_rounds(ctx: LoweringContext, sources: Sequence[ir.Value],
                        destinations: Sequence[tuple[LinearLayout, IndexFn]], per_round: int,
                        nbytes: int) -> list[list[ir.Value]]:
    """`exchange` through `per_round` positions of shared memory at a time (see the
    module docstring)."""
    ctx.reserve_shared(nbytes)
    staged = Staged(ctx.element_type(sources[0].type), element_bytes(sources[0].type))
    writes = list(_staged_writes(ctx, sources, staged))
    reads = [[index_fn(coords) for coords in ctx.element_coordinates(layout)] for layout, index_fn in destinations]
    results: list[list[ir.Value | None]] = [[None] * len(indices) for indices in reads]
    total = sum(math.prod(shape_of(v.type)) for v in sources)
    spare = ctx.const(per_round)

    def in_round(position: ir.Value, start: int) -> tuple[ir.Value, ir.Value]:
        """(position - start, whether it is in the round starting at `start`)."""
        local = ctx.arith("subi", position, ctx.const(start)) if start else position
        inside = ctx.arith("cmpi", local, ctx.const(per_round), result_type=ctx.i1,
                           attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult
        return local, inside

    for start in range(0, total, per_round):
        if start:
            ctx.barrier()  # every read of the previous round is done
        for position, values in writes:
            local, inside = in_round(position, start)
            _store_run(ctx, staged, ctx.arith("select", inside, local, spare, result_type=ctx.i32), values)
        ctx.barrier()
        for indices, result in zip(reads, results):
            for i, index in enumerate(indices):
                local, inside = in_round(index, start)
                value = read_staged(ctx, staged, ctx.arith("select", inside, local, ctx.const(0), result_type=ctx.i32))
                result[i] = value if result[i] is None else \
                    ctx.arith("select", inside, value, result[i], result_type=value.type)
    return results


def stage(ctx: LoweringContext, sources: Sequence[ir.Value]) -> Staged:
    """Writes every element of the ttgir values `sources` at its row-major position in
    the op's scratch space (one source after the other), followed by a barrier (the
    one before, where earlier accesses need it, is tilegpu-insert-barriers')."""
    staged = Staged(ctx.element_type(sources[0].type), element_bytes(sources[0].type))
    ctx.reserve_shared(staging_bytes(sources))
    for position, values in _staged_writes(ctx, sources, staged):
        _store_run(ctx, staged, position, values)
    ctx.barrier()
    return staged


def _staged_writes(ctx: LoweringContext, sources: Sequence[ir.Value], staged: Staged):
    """(row-major position, values) of each store that stages `sources`: registers at
    consecutive, aligned positions go out together as one vector store (an mma
    accumulator's pairs, a blocked layout's runs)."""
    base = 0
    for source in sources:
        shape = shape_of(source.type)
        layout = ctx.layout(source)
        values, all_coords = ctx.elements(source), ctx.element_coordinates(layout)
        run = vector_run(layout, None, list(shape), staged.elem_bytes, staged.elem_type)
        if base % run:
            run = 1
        for start in range(0, len(values), run):
            yield row_major(ctx, all_coords[start], shape, base), values[start:start + run]
        base += math.prod(shape)


def _store_run(ctx: LoweringContext, staged: Staged, position: ir.Value, values: Sequence[ir.Value]) -> None:
    """Stores `values` at consecutive staged positions from `position` (i32)."""
    offset = ctx.arith("muli", position, ctx.const(staged.elem_bytes))
    if len(values) == 1:
        create_op("llvm.store", [], [to_shared(ctx, values[0]), ctx.shared_address(offset)])
        return
    vector_type = ir.VectorType.get([len(values)], staged.elem_type)
    vector = create_op("llvm.mlir.undef", [vector_type]).result
    for i, value in enumerate(values):
        vector = create_op("llvm.insertelement", [vector_type], [vector, value, ctx.const(i)]).result
    create_op("llvm.store", [], [vector, ctx.shared_address(offset)],
              attributes={"alignment": ir.IntegerAttr.get(ctx.i64, len(values) * staged.elem_bytes)})


def read_staged(ctx: LoweringContext, staged: Staged, index: ir.Value) -> ir.Value:
    """The staged element at linear position `index` (i32)."""
    address = ctx.shared_address(ctx.arith("muli", index, ctx.const(staged.elem_bytes)))
    return from_shared(ctx, create_op("llvm.load", [store_type(ctx, staged.elem_type)], [address]).result,
                       staged.elem_type)


def in_registers(ctx: LoweringContext, op: ir.Operation, order: Sequence[int] = ()) -> bool:
    """Lowers shape op `op` as a renumbering of registers when its results' layouts allow
    it (see the module docstring); False, emitting nothing, otherwise."""
    operand_shape, result_shape = shape_of(op.operands[0].type), shape_of(op.results[0].type)
    operands = [ctx.layout(v) for v in op.operands]
    plans = []
    for index, result in enumerate(op.results):
        source = source_map(op.name, operand_shape, result_shape, order, index)
        plan = register_sources(ctx.layout(result), operands, source)
        if plan is None:
            return False
        plans.append(plan)
    values = [ctx.elements(v) for v in op.operands]
    for result, plan in zip(op.results, plans):
        ctx.set(result, [values[operand][register] for operand, register in plan])
    return True


def _needs_exchange(op: ir.Operation, order: Sequence[int] = ()) -> bool:
    """The scratch size function's side of `in_registers`."""
    operand_shape, result_shape = shape_of(op.operands[0].type), shape_of(op.results[0].type)
    operands = [layout_of_value(v) for v in op.operands]
    return any(register_sources(layout_of_value(result), operands,
                                source_map(op.name, operand_shape, result_shape, order, index)) is None
               for index, result in enumerate(op.results))


@lowers("tile.reshape")
def lower_reshape(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    if in_registers(ctx, op):
        return
    shape = shape_of(dst.type)
    (values,) = exchange(ctx, [src], [(ctx.layout(dst), lambda c: row_major(ctx, c, shape))])
    ctx.set(dst, values)


@scratch_bytes("tile.reshape", "tile.trans", "tile.join", "tile.split")
def shape_op_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    """None when the op renumbers registers; otherwise reshape, trans and split stage
    their operand, join both operands."""
    order = trans_order(op) if op.name == "tile.trans" else ()
    return exchange_bytes(op, list(op.operands)) if _needs_exchange(op, order) else 0


@scratch_bytes("tile.cat")
def cat_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    return exchange_bytes(op, list(op.operands))


@lowers("tile.trans")
def lower_trans(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    order = trans_order(op)
    if in_registers(ctx, op, order):
        return
    src_shape = shape_of(src.type)

    def index(coords: list[ir.Value]) -> ir.Value:
        src_coords = [None] * len(order)
        for i, d in enumerate(order):
            src_coords[d] = coords[i]
        return row_major(ctx, src_coords, src_shape)

    (values,) = exchange(ctx, [src], [(ctx.layout(dst), index)])
    ctx.set(dst, values)


@lowers("tile.join")
def lower_join(ctx: LoweringContext, op: ir.Operation) -> None:
    if in_registers(ctx, op):
        return
    lhs, rhs, dst = op.operands[0], op.operands[1], op.results[0]
    shape = shape_of(lhs.type)
    n = math.prod(shape)

    def index(coords: list[ir.Value]) -> ir.Value:
        half = ctx.arith("muli", coords[-1], ctx.const(n))
        return ctx.arith("addi", half, row_major(ctx, coords[:-1], shape))

    (values,) = exchange(ctx, [lhs, rhs], [(ctx.layout(dst), index)])
    ctx.set(dst, values)


@lowers("tile.split")
def lower_split(ctx: LoweringContext, op: ir.Operation) -> None:
    if in_registers(ctx, op):
        return
    src = op.operands[0]
    shape = shape_of(src.type)
    part_shape = shape[:-1]

    def index(half: int) -> IndexFn:
        return lambda coords: ctx.arith("addi", ctx.arith("muli", row_major(ctx, coords, part_shape), ctx.const(2)),
                                        ctx.const(half))

    lhs, rhs = exchange(ctx, [src], [(ctx.layout(op.results[0]), index(0)), (ctx.layout(op.results[1]), index(1))])
    ctx.set(op.results[0], lhs)
    ctx.set(op.results[1], rhs)


@lowers("tile.cat")
def lower_cat(ctx: LoweringContext, op: ir.Operation) -> None:
    lhs, rhs, dst = op.operands[0], op.operands[1], op.results[0]
    shape = shape_of(dst.type)
    (values,) = exchange(ctx, [lhs, rhs], [(ctx.layout(dst), lambda c: row_major(ctx, c, shape))])
    ctx.set(dst, values)
