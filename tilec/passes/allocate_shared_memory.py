"""tilegpu-allocate-shared-memory: gives every shared-memory buffer an offset.

Two kinds of buffers:

- each `tilegpu.local_alloc`, of `memdesc_bytes` bytes, live from its definition to its
  last use (uses through `memdesc_index` views count; a use inside a loop the buffer was
  defined outside of keeps it live to the end of that loop, since the next iteration
  uses it again);
- the scratch space of every op whose lowering exchanges values through shared memory
  (cross-warp reductions, scans, layout conversions, shape ops, gather, histogram, the
  FMA dot, atomics publishing old values), of the size its scratch size function gives
  (`convert_tilegpu_to_llvm/shared_memory.py`, registered beside each rule), live only
  at that op. An op holding regions (a reduction's combiner) keeps its scratch live over
  the ops nested in it, since its rule lowers them between its own accesses.

A TMA store that waits only until its block is read out of shared memory (tile-choose-
descriptor-copies' READ_WAIT_ATTR) and sits in a loop need not wait at all: its buffer is
made live over its whole nearest loop, so nothing else in the loop shares its bytes, and
the store is marked DEFERRED_ATTR: it waits for the previous read-out just before it
writes the block again, and a `tilegpu.bulk_store_wait` after the loop waits for the last
one. The read-out then runs on under the next iteration's work (a persistent matmul's
next tile) instead of stalling the program. Where the longer lives do not fit in the
target's shared memory, the function's stores wait in place as before.

Two buffers live at the same time never overlap; others may share bytes (a scratch op
inside a loop thus never overlaps a ring live across the loop, while consecutive
reductions may share bytes: tilegpu-insert-barriers orders them). Offsets are chosen
first-fit, largest buffers first, aligned to ALIGNMENT (enough for any swizzle pattern
and for 16-byte vector accesses).

When the buffers exceed the target's shared memory and the function has FMA dots (whose
scratch stages a K-slice of both operands), their slices are halved (`tilegpu.fma_chunk_bytes`
on the dot) until everything fits or no slice can shrink: an fp64 matmul's pipelining
rings then leave room for its staging.

The result is the `tilegpu.offset` attribute of each local_alloc and scratch op, and the
module attribute `tilegpu.shared`: the kernel's shared-memory bytes (the high-water mark
over its functions).
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..dialects import tilegpu
from ..dialects._mlir import block_ops, i32_attr, walk_ops
from . import register_pass
from .choose_descriptor_copies import READ_WAIT_ATTR
# The scratch sizes are registered beside the lowering rules; importing the registry loads them.
from .convert_tilegpu_to_llvm.shared_memory import DEFERRED_ATTR, OFFSET_ATTR, SHARED_ATTR, scratch_size
from .utils import enclosing_loop, functions

ALIGNMENT = 128


@dataclass
class Buffer:
    op: ir.Operation  # its local_alloc, or the op whose scratch space it is
    size: int
    start: int        # program points (pre-order numbers) where it is live
    end: int
    offset: int = -1
    alignment: int = ALIGNMENT

    def overlaps_in_time(self, other: "Buffer") -> bool:
        return self.start <= other.end and other.start <= self.end


class _ProgramPoints:
    """Pre-order numbers of every op of a function; `last[op]` is the largest number
    of an op nested in `op` (itself when it has no regions)."""

    def __init__(self, fn: ir.Operation):
        self.number: dict[ir.Operation, int] = {}
        self.last: dict[ir.Operation, int] = {}
        for op in walk_ops(fn):
            self.number[op] = len(self.number)
        for op in reversed(list(self.number)):
            nested = [self.last[child.operation] for region in op.regions for block in region.blocks
                      for child in block.operations]
            self.last[op] = max([self.number[op]] + nested)


def _ancestor_in(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    """`op` itself or the op enclosing it that sits directly in `block`."""
    current = op
    while current is not None and current.name != "func.func":
        if current.block == block:
            return current
        current = current.parent
    return None


def _users(value: ir.Value) -> list[ir.Operation]:
    """Every op using `value`, directly or through memdesc_index/memdesc_subview views of it."""
    found, pending = [], [value]
    while pending:
        for use in list(pending.pop().uses):
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            found.append(user)
            if user.name in ("tilegpu.memdesc_index", "tilegpu.memdesc_subview"):
                pending.append(user.results[0])
    return found


def _read_out_loop(op: ir.Operation) -> ir.Operation | None:
    """The nearest loop around `op` when it is a TMA store that waits only for its block's
    read-out, so that the wait may move to the store's next execution."""
    if op.name != "tile.descriptor_store" or READ_WAIT_ATTR not in op.attributes:
        return None
    return enclosing_loop(op)


def collect_buffers(fn: ir.Operation, num_warps: int,
                    deferred: dict[ir.Operation, ir.Operation] | None = None) -> list[Buffer]:
    """The function's buffers and when each is live; an op in `deferred` keeps its buffer
    live over the op it maps to at least (a TMA store's scratch over its loop; a ring that
    tilegpu-pipeline's overlap_prologue would keep over its outer loop)."""
    points = _ProgramPoints(fn)
    buffers = []
    for op in points.number:
        if op.name != "tilegpu.local_alloc":
            size = scratch_size(op, num_warps)
            if size:
                holder = (deferred or {}).get(op, op)
                buffers.append(Buffer(op, size, points.number[holder], points.last[holder], alignment=_alignment(op)))
            continue
        start = end = points.number[op]
        if op in (deferred or {}):
            start, end = min(start, points.number[deferred[op]]), points.last[deferred[op]]
        for user in _users(op.results[0]):
            # The op at the definition's level that holds this use: a loop or an if
            # using the buffer anywhere inside keeps it live to its end.
            holder = _ancestor_in(user, op.block)
            end = max(end, points.last[holder] if holder is not None else points.number[user])
        buffers.append(Buffer(op, tilegpu.memdesc_bytes(op.results[0].type), start, end, alignment=_alignment(op)))
    return buffers


def assign_offsets(buffers: list[Buffer]) -> int:
    """First-fit offsets, largest buffers first; returns the bytes used (the end of the
    last byte placed: alignment applies to where buffers start, not to the total)."""
    placed: list[Buffer] = []
    for buffer in sorted(buffers, key=lambda b: (-b.size, b.start)):
        offset = 0
        for other in sorted((b for b in placed if b.overlaps_in_time(buffer)), key=lambda b: b.offset):
            if _align(offset, buffer.alignment) + buffer.size <= other.offset:
                break
            offset = max(offset, other.offset + other.size)
        buffer.offset = _align(offset, buffer.alignment)
        placed.append(buffer)
    return max((b.offset + b.size for b in placed), default=0)


def _align(n: int, alignment: int = ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment


# NVMMA (wgmma) buffers start at a multiple of their swizzle's repeat, 8 rows of 128
# bytes: the hardware applies the swizzle to absolute shared addresses.
NVMMA_ALIGNMENT = 1024


def _alignment(op: ir.Operation) -> int:
    if op.name in ("tile.descriptor_load", "tile.descriptor_store"):  # a TMA block, NVMMA-swizzled
        return NVMMA_ALIGNMENT
    if op.name == "tilegpu.local_alloc":
        encoding = tilegpu.memdesc_tensor(op.results[0].type).encoding
        if encoding is not None and "nvmma_shared" in str(encoding):
            return NVMMA_ALIGNMENT
    return ALIGNMENT


def num_warps_or_default(module_op: ir.Operation) -> int:
    """The module's warps per program; 4 (the launch default) in a module without the
    attribute, as hand-written tests of these passes may be."""
    if tilegpu.NUM_WARPS_ATTR in module_op.attributes:
        return tilegpu.num_warps_of(module_op)
    return 4


@register_pass("tilegpu-allocate-shared-memory",
               "Give every shared-memory buffer and every op's scratch space an offset")
def allocate_shared_memory(module_op: ir.Operation) -> None:
    num_warps = num_warps_or_default(module_op)
    capacity = _capacity(module_op)
    used = 0
    for fn in functions(module_op):
        for op in walk_ops(fn):  # decided anew (this pass may run again on its own output)
            if DEFERRED_ATTR in op.attributes:
                del op.attributes[DEFERRED_ATTR]
        deferred = {op: loop for op in walk_ops(fn) if (loop := _read_out_loop(op)) is not None}
        buffers = collect_buffers(fn, num_warps, deferred)
        size = assign_offsets(buffers)
        if capacity is not None and size > capacity and deferred:
            deferred = {}  # the stores' buffers do not fit live over their loops: they wait in place
            buffers = collect_buffers(fn, num_warps)
            size = assign_offsets(buffers)
        # Over the target's shared memory: FMA dots stage their operands in smaller
        # K-slices (a barrier more per slice), halving until the buffers fit or no
        # slice can shrink (the compile driver then reports what is needed).
        while capacity is not None and size > capacity and _shrink_fma_staging(fn, num_warps):
            buffers = collect_buffers(fn, num_warps)
            size = assign_offsets(buffers)
        used = max(used, size)
        for buffer in buffers:
            buffer.op.attributes[OFFSET_ATTR] = i32_attr(buffer.offset)
        _defer_read_waits(deferred)
    module_op.attributes[SHARED_ATTR] = i32_attr(used)


def _defer_read_waits(deferred: dict[ir.Operation, ir.Operation]) -> None:
    """Marks the stores of `deferred` and puts one tilegpu.bulk_store_wait after each of
    their loops (once: a loop already followed by one keeps it)."""
    loops = []
    for store, loop in deferred.items():
        store.attributes[DEFERRED_ATTR] = ir.UnitAttr.get()
        if all(loop != seen for seen in loops):
            loops.append(loop)
    for loop in loops:
        ops = block_ops(loop.block)
        following = ops[[i for i, op in enumerate(ops) if op == loop][0] + 1]
        if following.name != "tilegpu.bulk_store_wait":
            with ir.InsertionPoint(following), loop.location:
                tilegpu.bulk_store_wait()


def _capacity(module_op: ir.Operation) -> int | None:
    """The shared memory a block of the module's target may use (None without a target)."""
    if tilegpu.TARGET_ATTR not in module_op.attributes:
        return None
    from ..target import Target
    return Target.parse(tilegpu.target_of(module_op)).max_shared_bytes


def _shrink_fma_staging(fn: ir.Operation, num_warps: int) -> bool:
    """Halves the staging limit of every FMA dot that stages more than one K element at a
    time; whether one changed."""
    from .convert_tilegpu_to_llvm.dot import CHUNK_BYTES, CHUNK_BYTES_ATTR, fma_staging_of
    changed = False
    for op in walk_ops(fn):
        if op.name != "tile.dot" or not scratch_size(op, num_warps) or fma_staging_of(op).chunk <= 1:
            continue
        limit = ir.IntegerAttr(op.attributes[CHUNK_BYTES_ATTR]).value if CHUNK_BYTES_ATTR in op.attributes \
            else CHUNK_BYTES
        op.attributes[CHUNK_BYTES_ATTR] = i32_attr(limit // 2)
        changed = True
    return changed
