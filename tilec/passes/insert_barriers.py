"""tilegpu-insert-barriers: a barrier wherever threads could race on a shared buffer.

Threads of a program see each other's shared-memory writes only after a barrier. This
pass follows program order with the set of accesses made since the last barrier (byte
ranges of the buffers tilegpu-allocate-shared-memory placed, each read or written), and
puts a `tilegpu.barrier` before any op whose access overlaps a pending one where either
writes: read-after-write, write-after-read and write-after-write.

- local_store and an initialised local_alloc write their buffer; local_load reads it;
- an op with scratch space (`tilegpu.offset` from tilegpu-allocate-shared-memory on a
  reduction, conversion, ...) writes and then reads its bytes: it waits for every
  earlier access of those bytes, and leaves both its writes and its reads pending, so
  the next writer of those bytes waits for its reads. The barriers inside such an op
  (between its own writes and reads, between its rounds) are its rule's;
  async_copy_global_to_local writes at issue (so it waits for earlier readers of those
  bytes); its data is visible to other threads only after async_wait and a barrier, and
  the read that follows the wait conflicts with the copy's pending write, so it gets one.
- A buffer of a ring selected by a constant index is that buffer's bytes; by a runtime
  index, the whole ring's.
- Loops: the state at the head of the body is the state before the loop joined with the
  state at the end of the body (the next iteration), computed to a fixed point before
  any barrier is placed; `if`: both branches start from the same state and join after.
- Other ops holding regions (a reduction's combiner, lowered inline once per combine
  step): the op's own accesses come first, then its regions run like a loop body.
- tl.debug_barrier and the barriers placed here end every pending access.
"""
from __future__ import annotations

from dataclasses import dataclass
from mlir import ir

from ..dialects import tilegpu
from ..dialects._mlir import block_ops, int_attr_value, operand_groups
from . import register_pass
from .allocate_shared_memory import OFFSET_ATTR, num_warps_or_default
from .convert_tilegpu_to_llvm.shared_memory import scratch_size
from .utils import functions


@dataclass(frozen=True)
class Access:
    start: int
    end: int      # exclusive
    write: bool

    def conflicts(self, other: "Access") -> bool:
        return (self.write or other.write) and self.start < other.end and other.start < self.end


State = frozenset  # of Access


def _byte_range(memdesc: ir.Value) -> tuple[int, int]:
    """The bytes a memory descriptor may touch."""
    size = tilegpu.memdesc_bytes(memdesc.type)
    if not isinstance(memdesc, ir.OpResult):
        raise ValueError(f"a shared buffer that is not a local_alloc or a view of one: {memdesc}")
    op = memdesc.owner.operation if hasattr(memdesc.owner, "operation") else memdesc.owner
    if op.name == "tilegpu.local_alloc":
        offset = int_attr_value(op, OFFSET_ATTR)
        return offset, offset + size
    if op.name == "tilegpu.memdesc_index":
        ring_start, ring_end = _byte_range(op.operands[0])
        index = _constant(op.operands[1])
        if index is None:
            return ring_start, ring_end
        return ring_start + index * size, ring_start + (index + 1) * size
    raise ValueError(f"a shared buffer made by {op.name}, which is not a local_alloc or a view")


def _constant(value: ir.Value) -> int | None:
    if isinstance(value, ir.OpResult):
        op = value.owner.operation if hasattr(value.owner, "operation") else value.owner
        if op.name == "arith.constant":
            return ir.IntegerAttr(op.attributes["value"]).value
    return None


def accesses(op: ir.Operation, num_warps: int) -> list[Access]:
    """The shared-buffer accesses of one op (not of ops nested in it)."""
    name = op.name
    if name != "tilegpu.local_alloc" and OFFSET_ATTR in op.attributes:  # scratch space
        start = int_attr_value(op, OFFSET_ATTR)
        end = start + scratch_size(op, num_warps)
        return [Access(start, end, True), Access(start, end, False)]
    if name == "tilegpu.local_alloc":
        return [Access(*_byte_range(op.results[0]), True)] if len(op.operands) else []
    if name == "tilegpu.local_store":
        return [Access(*_byte_range(op.operands[1]), True)]
    if name == "tilegpu.local_load":
        return [Access(*_byte_range(op.operands[0]), False)]
    if name == "tilegpu.async_copy_global_to_local":
        return [Access(*_byte_range(operand_groups(op)[1][0]), True)]
    return []


class _Placer:
    def __init__(self, num_warps: int, insert: bool):
        self.num_warps = num_warps
        self.insert = insert  # False: only compute states (the loop fixed point)

    def block(self, block: ir.Block, state: State) -> State:
        for op in block_ops(block):
            state = self.op(op, state)
        return state

    def op(self, op: ir.Operation, state: State) -> State:
        name = op.name
        if name in ("tilegpu.barrier", "tile.barrier"):
            return State()
        if name in ("scf.for", "scf.while"):
            return self.loop(op, state)
        if name == "scf.if":
            after = [self.block(region.blocks[0], state) for region in op.regions if len(region.blocks)]
            if len(after) == 1:  # no else: the branch may not run
                after.append(state)
            return State().union(*after)
        touched = accesses(op, self.num_warps)
        if any(a.conflicts(p) for a in touched for p in state):
            if self.insert:
                with ir.InsertionPoint(op), op.location:
                    tilegpu.barrier()
            state = State()
        state = state.union(touched)
        if any(len(region.blocks) for region in op.regions):  # a combiner: run any number of times
            state = self.loop(op, state)
        return state

    def loop(self, op: ir.Operation, state: State) -> State:
        # scf.while: before, after; scf.for and combiners: the body
        bodies = [region.blocks[0] for region in op.regions if len(region.blocks)]
        head = state
        probe = _Placer(self.num_warps, insert=False)
        for _ in range(16):  # states only grow, over a finite set of accesses
            end = head
            for body in bodies:
                end = probe.block(body, end)
            joined = state.union(end)
            if joined == head:
                break
            head = joined
        end = head
        for body in bodies:
            end = self.block(body, end)
        return state.union(end)


def insert_barriers(fn: ir.Operation, num_warps: int) -> None:
    _Placer(num_warps, insert=True).block(fn.regions[0].blocks[0], State())


@register_pass("tilegpu-insert-barriers", "Place barriers between conflicting shared-memory accesses")
def insert_barriers_pass(module_op: ir.Operation) -> None:
    num_warps = num_warps_or_default(module_op)
    for fn in functions(module_op):
        insert_barriers(fn, num_warps)
