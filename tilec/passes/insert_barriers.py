"""tilegpu-insert-barriers: a barrier wherever threads could race on a shared buffer.

Threads of a program see each other's shared-memory writes only after a barrier. This
pass follows program order with the set of accesses made since the last barrier (byte
ranges of the buffers tilegpu-allocate-shared-memory placed, each read or written), and
puts a `tilegpu.barrier` before any op whose access overlaps a pending one where either
writes: read-after-write, write-after-read and write-after-write.

- local_store and an initialised local_alloc write their buffer; local_load reads it, and
  so does a dot whose operand is a buffer (wgmma).
- An op with scratch space (`tilegpu.offset` from tilegpu-allocate-shared-memory on a
  reduction, conversion, ...) writes and then reads its bytes: it waits for every
  earlier access of those bytes, and leaves both its writes and its reads pending, so
  the next writer of those bytes waits for its reads. The barriers inside such an op
  (between its own writes and reads, between its rounds) are its rule's.
- async_copy_global_to_local writes at issue (so it waits for earlier readers of those
  bytes), but its data lands later: the write stays *in flight*, untouched by barriers,
  counting the commit groups closed after it, until an `async_wait {num}` leaves at
  most `num` younger groups outstanding (a copy in no group yet counts as both landed
  and in flight); from there it is an ordinary pending write, so
  the first read after the wait that overlaps it gets a barrier (cp.async's data is
  visible to other threads after the wait and a barrier).
- A buffer of a ring selected by a constant index is that buffer's bytes; by a runtime
  index, the whole ring's, except for a `memdesc_index` carrying SLOT_ATTR
  (tilegpu-pipeline's): its slot is (c + offset) % S, where c is a counter of the
  innermost enclosing scf.for, 0 in its first iteration and +1 (mod S) each iteration.
  Such accesses are compared by offset (two offsets of one loop: the same slot iff
  equal); across the back edge every offset of that loop drops by one (iteration i's
  slot c + k is iteration i+1's slot c + k - 1); on entry, an access to constant slot k
  of such a ring becomes offset k (c = 0); on exit, they widen to the whole ring.
  So a pipelined loop gets one barrier per iteration, before its first read.
- A wgmma dot reads its shared operands asynchronously: the reads of one left in flight
  (`tilegpu.wgmma_pending`, tilegpu-pipeline's) are not ended by barriers, only by the
  next wgmma dot (which waits for every group but its own) or a `tilegpu.wgmma_wait
  {0}`; from there they are ordinary pending reads, so the next writer of those bytes
  gets a barrier after the wait, once every warpgroup's reads are done (two warpgroups
  wait each for their own groups).
- Loops: the state at the head of the body is the state before the loop joined with the
  state at the end of the body (the next iteration), grown to a fixed point before any
  barrier is placed; `if`: both branches start from the same state and join after.
  Where the body would get fewer barriers if the accesses before the loop were ordered
  (a buffer staged before the loop and read in it: attention's Q), one barrier goes
  before the loop instead, run once rather than every iteration.
- Other ops holding regions (a reduction's combiner, lowered inline once per combine
  step): the op's own accesses come first, then its regions run like a loop body.
- An access to bytes that a committed copy may still be writing is an error: no barrier
  can order it, so the pass that issued the copy misplaced it or its wait.
- tl.debug_barrier, the barriers placed here, `tilegpu.bulk_store_wait` and a TMA store
  marked DEFERRED_ATTR (each a barrier after a wait) end every pending access (not the
  writes still in flight).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from mlir import ir

from ..dialects import tilegpu
from ..dialects._mlir import block_ops, int_attr_value, operand_groups
from . import register_pass
from .allocate_shared_memory import OFFSET_ATTR, num_warps_or_default
from .convert_tilegpu_to_llvm.shared_memory import DEFERRED_ATTR, scratch_size
from .pipeline import SLOT_ATTR, WGMMA_PENDING_ATTR
from .utils import functions

# Commit groups counted after an in-flight copy: more than any wait's `num` seen in
# practice; a copy with this many is complete at every wait.
_MAX_GROUPS = 16


@dataclass(frozen=True)
class Slot:
    """A ring buffer chosen by a loop's slot counter: (counter + offset) % count."""
    loop: ir.Operation
    offset: int
    count: int


@dataclass(frozen=True)
class Access:
    start: int
    end: int      # exclusive (the whole ring for a counter-indexed slot)
    write: bool
    slot: Slot | None = None
    in_flight: int | None = None  # an async copy not yet waited for: commit groups closed since
    wgmma: bool = False  # a read by a wgmma group that may still be running

    def conflicts(self, other: "Access") -> bool:
        if self.in_flight is not None or other.in_flight is not None:
            return False  # a barrier cannot order a copy still landing
        if not (self.write or other.write):
            return False
        return self._same_bytes(other)

    def races(self, other: "Access") -> bool:
        """Whether one of the two is a copy still landing in bytes the other touches: no
        barrier can order that, so the pass that made the copy placed it wrongly."""
        return (self.in_flight is not None) != (other.in_flight is not None) and self._same_bytes(other)

    def _same_bytes(self, other: "Access") -> bool:
        if not (self.start < other.end and other.start < self.end):
            return False
        if self.slot is not None and other.slot is not None and self.slot.loop == other.slot.loop \
                and (self.start, self.end) == (other.start, other.end):
            return self.slot.offset == other.slot.offset
        return True


State = frozenset  # of Access


def _op_of(value: ir.Value) -> ir.Operation:
    return value.owner.operation if hasattr(value.owner, "operation") else value.owner


def _access(memdesc: ir.Value, write: bool) -> Access:
    """An access to the bytes a memory descriptor may touch."""
    size = tilegpu.memdesc_bytes(memdesc.type)
    if not isinstance(memdesc, ir.OpResult):
        raise ValueError(f"a shared buffer that is not a local_alloc or a view of one: {memdesc}")
    op = _op_of(memdesc)
    if op.name == "tilegpu.local_alloc":
        offset = int_attr_value(op, OFFSET_ATTR)
        return Access(offset, offset + size, write)
    if op.name == "tilegpu.memdesc_index":
        ring = _access(op.operands[0], write)
        index = _constant(op.operands[1])
        if index is not None:
            return Access(ring.start + index * size, ring.start + (index + 1) * size, write)
        loop = _enclosing_loop(op)
        if SLOT_ATTR in op.attributes and loop is not None:
            count = (ring.end - ring.start) // size
            return replace(ring, slot=Slot(loop, int_attr_value(op, SLOT_ATTR) % count, count))
        return ring
    if op.name == "tilegpu.memdesc_subview":  # a block of its buffer: that buffer's bytes
        return _access(op.operands[0], write)
    raise ValueError(f"a shared buffer made by {op.name}, which is not a local_alloc or a view")


def _enclosing_loop(op: ir.Operation) -> ir.Operation | None:
    parent = op.parent
    while parent is not None and parent.name not in ("scf.for", "func.func"):
        parent = parent.parent
    return parent if parent is not None and parent.name == "scf.for" else None


def _constant(value: ir.Value) -> int | None:
    if isinstance(value, ir.OpResult):
        op = _op_of(value)
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
        return [_access(op.results[0], True)] if len(op.operands) else []
    if name == "tilegpu.local_store":
        return [_access(op.operands[1], True)]
    if name == "tilegpu.local_load":
        return [_access(op.operands[0], False)]
    if name == "tilegpu.async_copy_global_to_local":
        return [_access(operand_groups(op)[1][0], True)]
    if name == "tile.dot":  # wgmma reads its operands from shared buffers
        running = int_attr_value(op, WGMMA_PENDING_ATTR, 0) > 0
        return [replace(_access(v, False), wgmma=running) for v in op.operands if tilegpu.is_memdesc(v.type)]
    return []


def _slot_rings(loop: ir.Operation) -> dict[tuple[int, int], int]:
    """(start, end) -> slot count of the rings the loop's body indexes by its counter."""
    rings = {}
    for region in loop.regions:
        for block in region.blocks:
            for op in block_ops(block):
                if op.name == "tilegpu.memdesc_index" and SLOT_ATTR in op.attributes:
                    access = _access(op.results[0], False)
                    if access.slot is not None and access.slot.loop == loop:
                        rings[(access.start, access.end)] = access.slot.count
    return rings


def _enter(state: State, loop: ir.Operation, rings: dict[tuple[int, int], int]) -> State:
    """On entry the counter is 0: constant slot k of a counter-indexed ring is offset k."""
    entered = set()
    for access in state:
        for (start, end), count in rings.items():
            size = (end - start) // count
            if access.slot is None and start <= access.start and access.end <= end \
                    and access.end - access.start == size and (access.start - start) % size == 0:
                access = replace(access, start=start, end=end, slot=Slot(loop, (access.start - start) // size, count))
                break
        entered.add(access)
    return State(entered)


def _next_iteration(state: State, loop: ir.Operation) -> State:
    return State(replace(a, slot=replace(a.slot, offset=(a.slot.offset - 1) % a.slot.count))
                 if a.slot is not None and a.slot.loop == loop else a for a in state)


def _leave(state: State, loop: ir.Operation) -> State:
    return State(replace(a, slot=None) if a.slot is not None and a.slot.loop == loop else a for a in state)


class _Placer:
    def __init__(self, num_warps: int, insert: bool):
        self.num_warps = num_warps
        self.insert = insert  # False: only compute states (the loop fixed point)
        self.placed = 0  # barriers placed (or, probing, that would be), each counted once

    def block(self, block: ir.Block, state: State) -> State:
        for op in block_ops(block):
            state = self.op(op, state)
        return state

    def op(self, op: ir.Operation, state: State) -> State:
        name = op.name
        if name in ("tilegpu.barrier", "tile.barrier", "tilegpu.bulk_store_wait"):
            return _in_flight(state)
        if name in ("scf.for", "scf.while"):
            return self.loop(op, state)
        if name == "tilegpu.warp_specialize":
            # Its region runs in another warp than what follows, and reaches shared memory
            # only through TMA copies and mbarriers, which order themselves.
            return state
        if name == "scf.if":
            after = [self.block(region.blocks[0], state) for region in op.regions if len(region.blocks)]
            if len(after) == 1:  # no else: the branch may not run
                after.append(state)
            return State().union(*after)
        if name == "tilegpu.async_commit_group":
            return State(replace(a, in_flight=min(a.in_flight + 1, _MAX_GROUPS)) if a.in_flight is not None else a
                         for a in state)
        if name == "tilegpu.async_wait":
            num = int_attr_value(op, "num")
            landed = {replace(a, in_flight=None) for a in state if a.in_flight is not None
                      and (a.in_flight > num or a.in_flight == 0)}
            # A copy in no group yet may or may not have landed: both.
            return State(a for a in state if a.in_flight is None or a.in_flight <= num).union(landed)
        if (name == "tile.dot" and any(tilegpu.is_memdesc(v.type) for v in op.operands)) or \
                (name == "tilegpu.wgmma_wait" and int_attr_value(op, "pendings") == 0):
            # Every wgmma group but the dot's own is done (the dot waits for them), or all are.
            state = State(replace(a, wgmma=False) if a.wgmma else a for a in state)
        if DEFERRED_ATTR in op.attributes:  # a TMA store whose rule starts with a barrier (after its wait)
            state = _in_flight(state)
        touched = accesses(op, self.num_warps)
        if self.insert and any(a.races(p) for a in touched for p in state if p.in_flight):
            raise ValueError(f"{name} touches shared memory that an asynchronous copy may still be writing "
                             "(no wait for that copy's group before it)")
        if any(a.conflicts(p) for a in touched for p in state):
            self._barrier_before(op)
            state = _in_flight(state)
        if name == "tilegpu.async_copy_global_to_local":
            touched = [replace(a, in_flight=0) for a in touched]
        state = state.union(touched)
        if any(len(region.blocks) for region in op.regions):  # a combiner: run any number of times
            state = self.loop(op, state, hoist=False)
        return state

    def _barrier_before(self, op: ir.Operation) -> None:
        self.placed += 1
        if self.insert:
            with ir.InsertionPoint(op), op.location:
                tilegpu.barrier()

    def loop(self, op: ir.Operation, state: State, hoist: bool = True) -> State:
        # scf.while: before, after; scf.for and combiners: the body
        bodies = [region.blocks[0] for region in op.regions if len(region.blocks)]
        rings = _slot_rings(op)
        head = self._head(op, bodies, _enter(state, op, rings))
        cleared = _in_flight(state)
        if hoist and cleared != state:
            # Where a barrier in the body would order the body only after what came
            # before the loop (attention's first wgmma after Q was staged), one before the
            # loop does, run once instead of every iteration.
            cleared_head = self._head(op, bodies, _enter(cleared, op, rings))
            if self._count(bodies, cleared_head) < self._count(bodies, head):
                self._barrier_before(op)
                state, head = cleared, cleared_head
        end = head
        for body in bodies:
            end = self.block(body, end)
        return state.union(_leave(end, op))

    def _head(self, op: ir.Operation, bodies: list[ir.Block], entry: State) -> State:
        """The state at the head of the body: `entry` joined with every later iteration's."""
        head = entry
        probe = _Placer(self.num_warps, insert=False)
        for _ in range(64):  # the head only grows, over a finite set of accesses
            end = head
            for body in bodies:
                end = probe.block(body, end)
            grown = head.union(_next_iteration(end, op))
            if grown == head:
                break
            head = grown
        return head

    def _count(self, bodies: list[ir.Block], head: State) -> int:
        """The barriers the body would get from `head` (each placed once)."""
        probe = _Placer(self.num_warps, insert=False)
        for body in bodies:
            head = probe.block(body, head)
        return probe.placed


def _in_flight(state: State) -> State:
    """What a barrier leaves pending: the copies still landing, the reads of wgmma groups
    still running."""
    return State(a for a in state if a.in_flight is not None or a.wgmma)


def insert_barriers(fn: ir.Operation, num_warps: int) -> None:
    _Placer(num_warps, insert=True).block(fn.regions[0].blocks[0], State())


@register_pass("tilegpu-insert-barriers", "Place barriers between conflicting shared-memory accesses")
def insert_barriers_pass(module_op: ir.Operation) -> None:
    num_warps = num_warps_or_default(module_op)
    for fn in functions(module_op):
        insert_barriers(fn, num_warps)
