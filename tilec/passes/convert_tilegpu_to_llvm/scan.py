"""Lowering of tile.scan (inclusive scans with a combiner region, either direction).

Along the scanned axis each thread holds *runs* of consecutive elements (for a blocked
layout, `size_per_thread` of them, repeated every tile). The lowering:

1. scans each run in registers;
2. if other threads hold parts of the axis: for layouts that tile the axis as a blocked
   layout does (runs, then lanes, then warps, then repeats), a shuffle scan of the run
   totals over the lanes (a run of one element takes it as its value), then the
   (repeat, warp) totals through shared memory folded in order
   (`_scan_across_threads`); for any other layout, every run's total goes to
   shared memory (one slot per (row, run)), and after a barrier each run folds the
   totals of all earlier runs (later runs for a reverse scan) into a prefix
   (`_fold_earlier_runs`, quadratic in the number of runs).

The slots are slot-major (slot k of every row together, see `_Slots`): the threads of a
warp touch one slot of consecutive rows at a time, without bank conflicts.

Which of these applies is decided from the layout alone (`plan_scan`), so the scratch
size (`scan_scratch_bytes`: the slots of step 2, none for a scan within a warp's single
tile) and the lowering agree. The barrier before the first write to the slots, where an
earlier access needs one, is tilegpu-insert-barriers'.

Scan order is fixed, so `combine(earlier, later)` is called with its operands in the
order the elements come in the scan, which keeps non-commutative combiners correct.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from mlir import ir

from ...dialects._mlir import create_op
from ...dialects.tile import shape_of
from ...layout.encodings import LANE, REGISTER, WARP
from ...layout.linear_layout import LinearLayout
from .context import LoweringContext, LoweringError, layout_of_value, lowers
from .debug import scf_if
from .reduce import _combine, shuffle
from .shared_memory import element_bytes, from_shared, row_slot_arrays, scratch_bytes, store_type, to_shared


@dataclass(frozen=True)
class BlockedAxis:
    """A layout that tiles the scanned axis as a blocked layout does: runs of
    `run_length` in registers, then the lanes `lane_bits`, then the warps `warp_bits`,
    then `tiles` repeats."""
    run_length: int
    lane_bits: list[int]
    warp_bits: list[int]
    tiles: int


@dataclass(frozen=True)
class ScanPlan:
    """How a scan over a layout is lowered, decided from the layout alone."""
    coords: list[tuple[int, ...]]                      # each register's coordinates
    runs_of_row: dict[tuple[int, ...], list[list[int]]]  # per row, its runs of registers in scan order
    crosses_threads: bool       # other threads hold parts of a row
    blocked: BlockedAxis | None  # the fast cross-thread phase applies (else: fold every run)
    run_length: int | None      # when folding: the runs' common length (None: they differ)
    slots_per_row: int          # shared-memory slots per row (0: no shared memory)


def plan_scan(ll: LinearLayout, shape: Sequence[int], axis: int, reverse: bool) -> ScanPlan:
    coords = [ll.apply({REGISTER: r}) for r in range(ll.in_dim_size(REGISTER))]
    # Registers of each row (same coordinates off the axis), in scan order.
    rows: dict[tuple[int, ...], list[int]] = {}
    for r, c in enumerate(coords):
        rows.setdefault(c[:axis] + c[axis + 1:], []).append(r)
    for regs in rows.values():
        regs.sort(key=lambda r: coords[r][axis], reverse=reverse)
    runs_of_row = {key: _runs(regs, coords, axis) for key, regs in rows.items()}
    crosses_threads = any(b[axis] for name in (LANE, WARP) for b in ll.bases(name))
    if not crosses_threads:
        return ScanPlan(coords, runs_of_row, False, None, None, 0)
    blocked = _blocked_axis(ll, shape, axis, runs_of_row, coords)
    if blocked is not None:
        slots = blocked.tiles * (1 << len(blocked.warp_bits))
        return ScanPlan(coords, runs_of_row, True, blocked, None, slots if slots > 1 else 0)
    lengths = {len(run) for runs in runs_of_row.values() for run in runs}
    if len(lengths) != 1:  # the lowering reports it
        return ScanPlan(coords, runs_of_row, True, None, None, 0)
    run_length = lengths.pop()
    return ScanPlan(coords, runs_of_row, True, None, run_length, shape[axis] // run_length)


@scratch_bytes("tile.scan")
def scan_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    srcs = list(op.operands)
    shape = shape_of(srcs[0].type)
    plan = plan_scan(layout_of_value(srcs[0]), shape, axis, reverse)
    if not plan.slots_per_row:
        return 0
    return row_slot_arrays(shape, axis, plan.slots_per_row, [element_bytes(s.type) for s in srcs])[1]


@lowers("tile.scan")
def lower_scan(ctx: LoweringContext, op: ir.Operation) -> None:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    srcs = list(op.operands)
    region = op.regions[0]
    ll = ctx.layout(srcs[0])
    shape = shape_of(srcs[0].type)
    inputs = [ctx.elements(s) for s in srcs]
    plan = plan_scan(ll, shape, axis, reverse)
    coords, runs_of_row = plan.coords, plan.runs_of_row
    sizes = [element_bytes(s.type) for s in srcs]

    results: list[list[ir.Value | None]] = [[None] * len(coords) for _ in srcs]

    # 1. scan each run in registers (the whole row, when no other thread holds part of it)
    for key, runs in runs_of_row.items():
        groups = runs if plan.crosses_threads else [[r for run in runs for r in run]]
        for run in groups:
            acc = None
            for r in run:
                values = [inp[r] for inp in inputs]
                acc = values if acc is None else _combine(ctx, region, acc, values)
                for i, v in enumerate(acc):
                    results[i][r] = v
    if plan.blocked is not None:
        _scan_across_threads(ctx, ll, shape, axis, reverse, plan, results, region, sizes)
    elif plan.crosses_threads:
        _fold_earlier_runs(ctx, ll, shape, axis, reverse, plan, results, region, sizes)
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


@dataclass(frozen=True)
class SlotIndex:
    """An element of a slot array, as a part computed at run time plus a constant, and
    how far apart one row's consecutive slots are (`stride`: the number of rows). The
    constant goes into the address as an immediate offset, so the slots of one thread
    share one base address (one register pair, hoisted out of loops) instead of one
    address each."""
    dynamic: ir.Value
    constant: int = 0
    stride: int = 1

    def plus(self, ctx: LoweringContext, slots: ir.Value | int) -> SlotIndex:
        """The same row, `slots` slots further."""
        if isinstance(slots, int):
            return SlotIndex(self.dynamic, self.constant + slots * self.stride, self.stride)
        step = slots if self.stride == 1 else ctx.arith("muli", slots, ctx.const(self.stride))
        return SlotIndex(ctx.arith("addi", self.dynamic, step), self.constant, self.stride)


class _Slots:
    """Shared-memory slots for a scan's partial totals: `per_row` of them for each row
    (each position off the scanned axis), one array per scanned value.

    An array is slot-major: slot k of every row, then slot k + 1 of every row. The
    threads of a warp reach the same slot of different rows at the same time (the last
    lane along the axis storing its total, every lane loading the totals before its
    own), and their rows are mostly consecutive, so they touch consecutive words: no
    bank conflicts, and a thread's registers along a row dimension join into one vector
    access. Row-major (a row's slots together) put those threads `per_row` words apart,
    a multiple of the bank count for 8 or more slots: a 64x32 cumsum down the rows
    (16 slots a row) had 8-way conflicts on every slot store and load."""

    def __init__(self, ctx: LoweringContext, ll, shape, axis: int, types: list[ir.Type], sizes: list[int],
                 per_row: int):
        self.ctx, self.types, self.sizes = ctx, types, sizes
        out_shape = list(shape[:axis]) + list(shape[axis + 1:])
        self.rows = math.prod(out_shape)
        self.offsets, total = row_slot_arrays(shape, axis, per_row, sizes)
        ctx.reserve_shared(total)
        self.element = ctx.element_coordinates(ll)
        self.thread = ctx.thread_coordinates(ll)
        self.registers = ctx.register_coordinates(ll)
        self.strides = [math.prod(out_shape[d + 1:]) for d in range(len(out_shape))]
        self.others = [d for d in range(len(shape)) if d != axis]

    def row_base(self, r: int) -> SlotIndex:
        """Slot 0 of the row register `r`'s element belongs to: the thread's part of the
        row index at run time, the register's part as a constant (where the two occupy
        different bits, so that they add)."""
        ctx = self.ctx
        index, constant = ctx.const(0), 0
        for k, d in enumerate(self.others):
            part, disjoint = self.thread[d]
            if part is None or disjoint:
                constant += self.registers[r][d] * self.strides[k]
                coordinate = part
            else:
                coordinate = self.element[r][d]
            if coordinate is not None:
                term = coordinate if self.strides[k] == 1 else \
                    ctx.arith("muli", coordinate, ctx.const(self.strides[k]))
                index = ctx.arith("addi", index, term)
        return SlotIndex(index, constant, self.rows)

    def address(self, i: int, slot: SlotIndex) -> ir.Value:
        ctx = self.ctx
        base = ctx.shared_address(ctx.arith("addi", ctx.const(self.offsets[i]),
                                            ctx.arith("muli", slot.dynamic, ctx.const(self.sizes[i]))))
        if not slot.constant:
            return base
        return ctx.shared_pointer(ctx.const(slot.constant * self.sizes[i]), base=base)

    def store(self, slot: SlotIndex, values: list[ir.Value]) -> None:
        for i, value in enumerate(values):
            create_op("llvm.store", [], [to_shared(self.ctx, value), self.address(i, slot)])

    def load(self, slot: SlotIndex) -> list[ir.Value]:
        return [from_shared(self.ctx, create_op("llvm.load", [store_type(self.ctx, t)], [self.address(i, slot)]).result,
                             t) for i, t in enumerate(self.types)]


def _axis_bits(bases, axis: int, first: int) -> list[int] | None:
    """The input bits (of lanes or warps) that move along `axis`, in axis order, when
    they move by first, 2*first, 4*first, ... and along nothing else; None otherwise."""
    moving = []
    for bit, basis in enumerate(bases):
        if basis[axis]:
            if any(v for d, v in enumerate(basis) if d != axis):
                return None
            moving.append((basis[axis], bit))
    moving.sort()
    if [v for v, _ in moving] != [first << k for k in range(len(moving))]:
        return None
    return [bit for _, bit in moving]


def _index_from_bits(ctx: LoweringContext, source: ir.Value, bits: list[int]) -> ir.Value:
    """sum_k ((source >> bits[k]) & 1) << k: a thread's position along the axis, in units."""
    index = ctx.const(0)
    for k, bit in enumerate(bits):
        part = ctx.arith("andi", ctx.arith("shrui", source, ctx.const(bit)), ctx.const(1))
        index = ctx.arith("ori", index, ctx.arith("shli", part, ctx.const(k)) if k else part)
    return index


def _blocked_axis(ll, shape, axis, runs_of_row, coords) -> BlockedAxis | None:
    """The layout's runs, lanes and warps along the axis when it tiles the axis as a
    blocked layout does; None otherwise."""
    lengths = {len(run) for runs in runs_of_row.values() for run in runs}
    if len(lengths) != 1:
        return None
    run_length = lengths.pop()
    lane_bits = _axis_bits(ll.bases(LANE), axis, run_length)
    if lane_bits is None:
        return None
    lanes = 1 << len(lane_bits)
    warp_bits = _axis_bits(ll.bases(WARP), axis, run_length * lanes)
    if warp_bits is None:
        return None
    warps = 1 << len(warp_bits)
    tile = run_length * lanes * warps
    # Each run must start a repeat: its registers' own positions (lanes and warps at 0).
    if shape[axis] % tile or any(min(coords[r][axis] for r in run) % tile
                                 for runs in runs_of_row.values() for run in runs):
        return None
    return BlockedAxis(run_length, lane_bits, warp_bits, shape[axis] // tile)


def _scan_across_threads(ctx, ll, shape, axis, reverse, scan: ScanPlan, results, region, sizes) -> None:
    """The fast cross-thread phase, for layouts that tile the axis as a blocked layout
    does (runs of R in registers, then lanes, then warps, then repeats): a shuffle scan of
    the run totals over the lanes (log2 of the lanes steps), then the warps' and repeats'
    totals through shared memory, folded in order."""
    blocked, runs_of_row, coords = scan.blocked, scan.runs_of_row, scan.coords
    lane_bits, warp_bits, tiles = blocked.lane_bits, blocked.warp_bits, blocked.tiles
    lanes, warps = 1 << len(lane_bits), 1 << len(warp_bits)
    tile = blocked.run_length * lanes * warps
    types = [results[i][0].type for i in range(len(results))]
    lane_index = _index_from_bits(ctx, ctx.lane, lane_bits)
    warp_index = _index_from_bits(ctx, ctx.warp, warp_bits)
    # In scan order, "earlier" lanes and warps have lower indices (higher when reversed).
    lane_rank = ctx.arith("subi", ctx.const(lanes - 1), lane_index) if reverse else lane_index
    warp_rank = ctx.arith("subi", ctx.const(warps - 1), warp_index) if reverse else warp_index

    def uge(x: ir.Value, value: int) -> ir.Value:
        return ctx.arith("cmpi", x, ctx.const(value), result_type=ctx.i1,
                         attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 9)})  # uge

    def select(condition: ir.Value, a: list[ir.Value], b: list[ir.Value]) -> list[ir.Value]:
        return [ctx.arith("select", condition, x, y, result_type=t) for x, y, t in zip(a, b, types)]

    contiguous = lane_bits == list(range(lane_bits[0], lane_bits[0] + len(lane_bits))) if lane_bits else True

    def earlier_lane(values: list[ir.Value], step: int) -> list[ir.Value]:
        """The values of the lane `step` places earlier along the axis (for lanes at
        least `step` places along it; what others get is not used)."""
        if contiguous:  # the axis' lane bits are adjacent: a fixed lane distance
            delta = step << lane_bits[0]
            source = ctx.arith("addi" if reverse else "subi", ctx.lane, ctx.const(delta))
        else:  # this lane's other bits, and the axis bits of the earlier position
            earlier = ctx.arith("subi", lane_index, ctx.const(-step if reverse else step))
            source = ctx.arith("andi", ctx.lane, ctx.const(31 & ~sum(1 << bit for bit in lane_bits)))
            for k, bit in enumerate(lane_bits):
                part = ctx.arith("andi", ctx.arith("shrui", earlier, ctx.const(k)), ctx.const(1))
                source = ctx.arith("ori", source, ctx.arith("shli", part, ctx.const(bit)) if bit else part)
        return [shuffle(ctx, v, source, "idx") for v in values]

    # 1. per run: the inclusive scan of the run totals over the lanes, and this lane's
    #    exclusive prefix (the total of the earlier lanes' runs)
    plan = []
    for key, runs in runs_of_row.items():
        for run in runs:
            total = [results[i][run[-1]] for i in range(len(types))]
            for k in range(len(lane_bits)):
                other = earlier_lane(total, 1 << k)
                total = select(uge(lane_rank, 1 << k), _combine(ctx, region, other, total), total)
            if len(run) == 1 and lanes > 1:
                # A run of one element: the lanes' inclusive scan is its value so far,
                # and no shuffle for the earlier lanes' total is needed.
                for i in range(len(types)):
                    results[i][run[0]] = total[i]
                lane_prefix = None
            else:
                lane_prefix = earlier_lane(total, 1) if lanes > 1 else None
            position = min(coords[r][axis] for r in run) // tile
            plan.append((key, run, total, lane_prefix, tiles - 1 - position if reverse else position))

    # 2. the totals of each (repeat, warp) through shared memory, folded in scan order
    slots_per_row = scan.slots_per_row
    if slots_per_row:
        slots = _Slots(ctx, ll, shape, axis, types, sizes, slots_per_row)
        last_lane = ctx.equals(lane_rank, lanes - 1)
        bases = {id(run): slots.row_base(run[0]) for _, run, _, _, _ in plan}
        with scf_if(ctx, last_lane):  # one branch around every store of the thread
            for key, run, total, _, rank in plan:
                slots.store(bases[id(run)].plus(ctx, warp_rank).plus(ctx, rank * warps), total)
        ctx.barrier()

    # 3. every element: (earlier repeats and warps) + (earlier lanes) + its run's scan
    for key, run, total, lane_prefix, rank in plan:
        prefix, has_prefix = None, None
        if slots_per_row:
            base = bases[id(run)]
            for slot_rank in range(rank * warps + warps):
                loaded = slots.load(base.plus(ctx, slot_rank))
                if slot_rank < rank * warps:  # an earlier repeat: always before this thread
                    prefix = loaded if prefix is None else _combine(ctx, region, prefix, loaded)
                    has_prefix = ctx.const(1, ctx.i1)
                else:  # this repeat's warp slot_rank - rank * warps: before this warp or not
                    before = ctx.arith("cmpi", ctx.const(slot_rank - rank * warps), warp_rank, result_type=ctx.i1,
                                       attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult
                    if prefix is None:
                        prefix, has_prefix = loaded, before
                    else:
                        prefix = select(before, _combine(ctx, region, prefix, loaded), prefix)
                        has_prefix = ctx.arith("ori", has_prefix, before)
        if lane_prefix is not None:
            has_lane = uge(lane_rank, 1)
            if prefix is None:
                prefix, has_prefix = lane_prefix, has_lane
            else:
                joined = select(has_prefix, _combine(ctx, region, prefix, lane_prefix), lane_prefix)
                prefix = select(has_lane, joined, prefix)
                has_prefix = ctx.arith("ori", has_prefix, has_lane)
        if prefix is None:
            continue
        for r in run:
            current = [results[i][r] for i in range(len(types))]
            combined = select(has_prefix, _combine(ctx, region, prefix, current), current)
            for i in range(len(types)):
                results[i][r] = combined[i]


def _fold_earlier_runs(ctx, ll, shape, axis, reverse, scan: ScanPlan, results, region, sizes) -> None:
    if scan.run_length is None:
        raise LoweringError("scan over a layout whose runs along the axis differ in length")
    run_length, n_runs = scan.run_length, scan.slots_per_row
    runs_of_row, coords = scan.runs_of_row, scan.coords
    types = [v.type for v in (results[i][0] for i in range(len(results)))]
    slots = _Slots(ctx, ll, shape, axis, types, sizes, n_runs)

    # Publish each run's total (its last element in scan order).
    plan = []
    for runs in runs_of_row.values():
        for run in runs:
            first = min(run, key=lambda r: coords[r][axis])
            run_index = ctx.arith("divui", slots.element[first][axis], ctx.const(run_length))
            base = slots.row_base(first)
            slots.store(base.plus(ctx, run_index), [results[i][run[-1]] for i in range(len(types))])
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
        prefix = _fold_slots(ctx, region, types, slots, base, start, stop, reverse, n_runs)
        for r in run:
            current = [results[i][r] for i in range(len(types))]
            combined = _combine(ctx, region, prefix, current)
            for i in range(len(types)):
                results[i][r] = ctx.arith("select", has_prefix, combined[i], current[i], result_type=types[i])


def _fold_slots(ctx, region, types, slots: _Slots, base: SlotIndex, start, stop, reverse, n_runs) -> list[ir.Value]:
    """Combines the slots [start, stop) of a row in scan order, in an scf.for loop.

    The accumulator starts with the first slot in scan order; when the range is empty the
    caller ignores the result."""
    load = slots.load

    # Forward: slots 0, 1, ..., stop-1 (start is 0). Reverse: slots n-1, n-2, ..., start
    # (stop is n). Either way the first slot in scan order seeds the accumulator.
    first_slot = base.plus(ctx, n_runs - 1 if reverse else 0)
    count = ctx.arith("subi", stop, start)
    initial = load(first_slot)
    loop = create_op("scf.for", types, [ctx.const(1), count, ctx.const(1)] + initial, regions=1)
    body = loop.regions[0].blocks.append(ctx.i32, *types)
    with ir.InsertionPoint(body):
        k = body.arguments[0]
        if reverse:
            slot = base.plus(ctx, ctx.arith("subi", ctx.const(0), k)).plus(ctx, n_runs - 1)
        else:
            slot = base.plus(ctx, ctx.arith("addi", start, k))
        acc = _combine(ctx, region, list(body.arguments)[1:], load(slot))
        create_op("scf.yield", [], acc)
    return list(loop.results)
