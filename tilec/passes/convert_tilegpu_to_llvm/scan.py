"""Lowering of tile.scan (inclusive scans with a combiner region, either direction).

Along the scanned axis each thread holds *runs* of consecutive elements (for a blocked
layout, `size_per_thread` of them, repeated every tile). The lowering:

1. scans each run in registers;
2. if other threads hold parts of the axis, publishes every run's total to shared memory
   (one slot per (row, run)), and after a barrier folds the totals of all earlier runs
   (later runs for a reverse scan) into a prefix, which it combines with each element.

Scan order is fixed, so `combine(earlier, later)` is called with its operands in the
order the elements come in the scan, which keeps non-commutative combiners correct.
"""
from __future__ import annotations

import math

from mlir import ir

from ...dialects._mlir import create_op
from ...dialects.tile import shape_of
from ...layout.encodings import LANE, WARP
from .context import LoweringContext, LoweringError, lowers
from .reduce import _bytes, _combine, _from_shared, _store_type, _to_shared


@lowers("tile.scan")
def lower_scan(ctx: LoweringContext, op: ir.Operation) -> None:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    srcs = list(op.operands)
    region = op.regions[0]
    ll = ctx.layout(srcs[0])
    shape = shape_of(srcs[0].type)
    inputs = [ctx.elements(s) for s in srcs]
    coords = ctx.register_coordinates(ll)

    # Registers of each row (same coordinates off the axis), in scan order.
    rows: dict[tuple[int, ...], list[int]] = {}
    for r, c in enumerate(coords):
        rows.setdefault(c[:axis] + c[axis + 1:], []).append(r)
    for regs in rows.values():
        regs.sort(key=lambda r: coords[r][axis], reverse=reverse)

    results: list[list[ir.Value | None]] = [[None] * len(coords) for _ in srcs]
    crosses_threads = any(b[axis] for name in (LANE, WARP) for b in ll.bases(name))
    runs_of_row = {key: _runs(regs, coords, axis) for key, regs in rows.items()}

    # 1. scan each run in registers (the whole row, when no other thread holds part of it)
    for key, runs in runs_of_row.items():
        groups = runs if crosses_threads else [[r for run in runs for r in run]]
        for run in groups:
            acc = None
            for r in run:
                values = [inp[r] for inp in inputs]
                acc = values if acc is None else _combine(ctx, region, acc, values)
                for i, v in enumerate(acc):
                    results[i][r] = v
    if crosses_threads:
        _fold_earlier_runs(ctx, op, ll, shape, axis, reverse, runs_of_row, coords, results, region)
    for i, result in enumerate(op.results):
        ctx.set(result, results[i])


def _runs(regs: list[int], coords, axis: int) -> list[list[int]]:
    """Splits a row's registers (in scan order) into runs of consecutive coordinates."""
    runs: list[list[int]] = []
    for r in regs:
        if runs and abs(coords[r][axis] - coords[runs[-1][-1]][axis]) == 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    return runs


def _fold_earlier_runs(ctx, op, ll, shape, axis, reverse, runs_of_row, coords, results, region) -> None:
    lengths = {len(run) for runs in runs_of_row.values() for run in runs}
    if len(lengths) != 1:
        raise LoweringError("scan over a layout whose runs along the axis differ in length")
    run_length = lengths.pop()
    n_runs = shape[axis] // run_length
    out_shape = list(shape[:axis]) + list(shape[axis + 1:])
    n_rows = math.prod(out_shape) if out_shape else 1
    types = [v.type for v in (results[i][0] for i in range(len(results)))]
    offsets, at = [], 0
    for t in types:
        offsets.append(at)
        at += (n_rows * n_runs * _bytes(ctx, t) + 15) // 16 * 16
    ctx.reserve_shared(at)

    element = ctx.element_coordinates(ll)
    strides = [math.prod(out_shape[d + 1:]) for d in range(len(out_shape))]

    def row_index(r: int) -> ir.Value:
        index = ctx.const(0)
        for k, d in enumerate([d for d in range(len(shape)) if d != axis]):
            term = element[r][d] if strides[k] == 1 else ctx.arith("muli", element[r][d], ctx.const(strides[k]))
            index = ctx.arith("addi", index, term)
        return index

    def slot_address(i: int, slot: ir.Value) -> ir.Value:
        size = _bytes(ctx, types[i])
        return ctx.shared_address(ctx.arith("addi", ctx.const(offsets[i]), ctx.arith("muli", slot, ctx.const(size))))

    # Publish each run's total (its last element in scan order).
    ctx.barrier()
    plan = []
    for runs in runs_of_row.values():
        for run in runs:
            first = min(run, key=lambda r: coords[r][axis])
            run_index = ctx.arith("divui", element[first][axis], ctx.const(run_length))
            base = ctx.arith("muli", row_index(first), ctx.const(n_runs))
            for i in range(len(types)):
                create_op("llvm.store", [], [_to_shared(ctx, results[i][run[-1]]),
                                             slot_address(i, ctx.arith("addi", base, run_index))])
            plan.append((run, run_index, base))
    ctx.barrier()

    # Fold the totals of the runs before this one (after it, for a reverse scan).
    for run, run_index, base in plan:
        if reverse:
            start, stop = ctx.arith("addi", run_index, ctx.const(1)), ctx.const(n_runs)
            has_prefix = ctx.arith("cmpi", run_index, ctx.const(n_runs - 1), result_type=ctx.i1,
                                   attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult
        else:
            start, stop = ctx.const(0), run_index
            has_prefix = ctx.arith("cmpi", run_index, ctx.const(0), result_type=ctx.i1,
                                   attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 8)})  # ugt
        prefix = _fold_slots(ctx, region, types, slot_address, base, start, stop, reverse, n_runs)
        for r in run:
            current = [results[i][r] for i in range(len(types))]
            combined = _combine(ctx, region, prefix, current)
            for i in range(len(types)):
                results[i][r] = ctx.arith("select", has_prefix, combined[i], current[i], result_type=types[i])


def _fold_slots(ctx, region, types, slot_address, base, start, stop, reverse, n_runs) -> list[ir.Value]:
    """Combines the slots [start, stop) of a row in scan order, in an scf.for loop.

    The accumulator starts with the first slot in scan order; when the range is empty the
    caller ignores the result."""
    def load(slot: ir.Value) -> list[ir.Value]:
        return [_from_shared(ctx, create_op("llvm.load", [_store_type(ctx, t)], [slot_address(i, slot)]).result, t)
                for i, t in enumerate(types)]

    # Forward: slots 0, 1, ..., stop-1 (start is 0). Reverse: slots n-1, n-2, ..., start
    # (stop is n). Either way the first slot in scan order seeds the accumulator.
    first_slot = ctx.arith("addi", base, ctx.const(n_runs - 1 if reverse else 0))
    count = ctx.arith("subi", stop, start)
    initial = load(first_slot)
    loop = create_op("scf.for", types, [ctx.const(1), count, ctx.const(1)] + initial, regions=1)
    body = loop.regions[0].blocks.append(ctx.i32, *types)
    with ir.InsertionPoint(body):
        k = body.arguments[0]
        if reverse:
            slot = ctx.arith("subi", ctx.arith("addi", base, ctx.const(n_runs - 1)), k)
        else:
            slot = ctx.arith("addi", ctx.arith("addi", base, start), k)
        acc = _combine(ctx, region, list(body.arguments)[1:], load(slot))
        create_op("scf.yield", [], acc)
    return list(loop.results)
