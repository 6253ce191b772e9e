"""Part of tilegpu-pipeline: a pipelined loop's prologue for the next run of it, issued
while the enclosing loop's body finishes this one (a persistent matmul's next tile's
first K tiles in flight while this tile's epilogue stores).

A loop nest whose inner loop tilegpu-pipeline streamed through cp.async rings reads

    for t in range(lb, ub, st):
        A(t)                                 # pure: tile coordinates, addresses
        rings = local_alloc ...
        P(t)                                 # prologue: copies of K steps 0 .. S-2, commits
        r = for k ...                        # the pipelined loop
        async_wait 0; local_dealloc rings; wgmma_wait 0 (wgmma)
        E(t, r)                              # epilogue
so every tile waits for its first copies after the previous tile's epilogue: a load's
latency, and the issue of S-1 iterations' copies, between the last dot of one tile and
the first of the next. This rewrite moves P ahead by one iteration of the outer loop:

    rings = local_alloc ...
    if lb < ub: P(lb)
    for t in range(lb, ub, st):
        A(t)                                 # what the inner loop and E still read
        r = for k ...
        async_wait 0; wgmma_wait 0
        if t + st < ub: P(t + st)            # slots 0 .. S-2: no dot reads them any more
        E(t, r)
    async_wait 0; local_dealloc rings

P(t + st) is the prologue's backward slice cloned with the induction variable advanced
(A's ops stay for their other readers; what only the old copies read is erased). The
inner loop then finds its S-1 groups committed, as before, and the epilogue's stores
overlap the copies. tilegpu-insert-barriers puts the barrier between the last dots'
reads of the slots (ended by the wgmma_wait) and the new copies.

Nested loops keep their address arithmetic: unlike tile-flatten-loops, which fuses the
loops and rebuilds a pointer kernel's tile offsets every K step (14-25% slower on an
H200), this keeps the K loop as it was and moves only the copies.

Rewritten only when:
- the inner loop is directly in the outer loop's body, its copies are cp.async only (a
  TMA ring's mbarrier phases restart per run), and nothing else in the outer loop issues,
  commits or waits for copies;
- the rings are used only by the prologue, the inner loop and their deallocs;
- the prologue's slice is pure, region-free, reads no memory and no value the outer loop
  carries (the next tile's values would be the yield's, made after the epilogue);
- for wgmma dots, a `wgmma_wait {0}` follows the inner loop in the outer body (the new
  copies go after it);
- the rings, now live over the whole outer loop instead of sharing bytes with the
  epilogue's scratch (a conversion's exchange buffer), still fit the target's shared
  memory along with everything else (128x256 tiles at 4 stages do not: they keep the
  old form); and, for an outer loop not marked `flatten=True`, leave room for as many
  blocks an SM as before (a loop so marked is a persistent kernel's tile loop, one block
  an SM, which Triton fuses, keeping the same buffers live together).
The outer loop's induction variable plus one step is assumed not to overflow (as the
pipeline assumes for its own copies), and the epilogue's stores not to write what the
next iteration's copies read (a tile's output over the next tile's inputs): the copies now
read before those stores, as a flattened loop's (Triton's, tile-flatten-loops') do.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..dialects import tilegpu
from ..dialects._mlir import block_ops, int_attr_value
from ..dialects.op_facts import is_pure, reads_memory
from ..dialects.tile import FLATTEN_ATTR
from .allocate_shared_memory import assign_offsets, collect_buffers
from .utils import clone_reading, erase_dead_ops, walk_postorder
from .utils import defining_op as _owner
from .utils import user_of as _user

_COPY, _COMMIT, _WAIT = "tilegpu.async_copy_global_to_local", "tilegpu.async_commit_group", "tilegpu.async_wait"
# Ops that start, group or wait for asynchronous copies (cp.async and TMA).
_ASYNC = (_COPY, _COMMIT, _WAIT, "tilegpu.tma_copy_global_to_local", "tilegpu.wait_barrier",
          "tilegpu.init_barriers", "tilegpu.inval_barriers")


def overlap_next_prologue(inner: ir.Operation, rings: list[ir.Value], wgmma: bool, num_warps: int,
                          capacity: int | None) -> bool:
    """Issues the prologue of the pipelined loop `inner` (streaming into `rings`) for the
    enclosing loop's next iteration, see the header; whether it did."""
    outer = inner.parent
    if outer is None or outer.name != "scf.for" or "unsignedCmp" in outer.attributes:
        return False
    body = outer.regions[0].blocks[0]
    if inner.block != body:
        return False
    ops = block_ops(body)
    at = ops.index(inner)
    allocs = [_owner(ring) for ring in rings]
    if any(alloc is None or alloc.block != body or ops.index(alloc) > at for alloc in allocs):
        return False
    prologue = [op for op in ops[:at] if op.name in (_COPY, _COMMIT)]
    deallocs = [op for op in ops[at + 1:] if op.name == "tilegpu.local_dealloc" and op.operands[0] in rings]
    if not prologue or len(deallocs) != len(rings):
        return False
    anchor = _resume_point(ops[at + 1:], wgmma)
    if anchor is None or not _copies_only_here(outer, inner, prologue, ops[at + 1:]):
        return False
    if not _rings_used_only_by(rings, inner, prologue, deallocs):
        return False
    slice_ = _slice(prologue, body)
    if slice_ is None:
        return False
    fn = outer
    while fn.name != "func.func":
        fn = fn.parent
    if capacity is not None and not _fits(fn, outer, allocs, num_warps, capacity):
        return False
    _rewrite(outer, allocs, deallocs, slice_, prologue, anchor)
    return True


# The shared memory the system keeps for each block on an SM, beside the block's own.
_RESERVED_PER_BLOCK = 1024


def _fits(fn: ir.Operation, outer: ir.Operation, allocs: list[ir.Operation], num_warps: int, capacity: int) -> bool:
    """Whether the rings, live over the whole outer loop, still fit the target's shared
    memory beside the function's other buffers; and, for a loop not marked
    `flatten=True`, leave room for as many blocks an SM as before. (A persistent kernel's
    tile loop, marked so, runs one block an SM: Triton fuses such loops and keeps the
    same buffers live together.)"""
    before = assign_offsets(collect_buffers(fn, num_warps))
    after = assign_offsets(collect_buffers(fn, num_warps, {alloc: outer for alloc in allocs}))
    if after > capacity:
        return False
    per_sm = capacity + _RESERVED_PER_BLOCK
    blocks = lambda size: per_sm // (size + _RESERVED_PER_BLOCK)  # noqa: E731
    return FLATTEN_ATTR in outer.attributes or blocks(after) >= blocks(before)


def _resume_point(after: list[ir.Operation], wgmma: bool) -> ir.Operation | None:
    """The op after which the next iteration's copies go: the wait for the inner loop's
    last dots (wgmma), else the drain's async_wait."""
    if wgmma:
        waits = [op for op in after if op.name == "tilegpu.wgmma_wait" and int_attr_value(op, "pendings", 0) == 0]
        return waits[0] if waits else None
    return after[0] if after and after[0].name == _WAIT else None


def _copies_only_here(outer: ir.Operation, inner: ir.Operation, prologue: list[ir.Operation],
                      after: list[ir.Operation]) -> bool:
    """Nothing in `outer` starts, groups or waits for copies but the prologue, the inner
    loop and the drain's async_wait right after it."""
    inner_ops = set(walk_postorder(inner))
    allowed = set(prologue) | ({after[0]} if after and after[0].name == _WAIT else set())
    return all(op in inner_ops or op in allowed for op in walk_postorder(outer) if op.name in _ASYNC)


def _rings_used_only_by(rings: list[ir.Value], inner: ir.Operation, prologue: list[ir.Operation],
                        deallocs: list[ir.Operation]) -> bool:
    inner_ops = set(walk_postorder(inner))
    allowed = set(prologue) | set(deallocs)
    for ring in rings:
        for use in ring.uses:
            user = _user(use)
            if user in inner_ops or user in allowed:
                continue
            # a slot view the prologue copies into
            if user.name != "tilegpu.memdesc_index" or user.block != prologue[0].block or \
                    any(_user(u) not in allowed for u in user.results[0].uses):
                return False
    return True


def _slice(prologue: list[ir.Operation], body: ir.Block) -> list[ir.Operation] | None:
    """The prologue's ops and the body ops they need, in program order; None when one of
    those is impure, holds regions, reads memory or reads a value the loop carries."""
    needed: set[ir.Operation] = set(prologue)
    pending = [value for op in prologue for value in op.operands]
    while pending:
        value = pending.pop()
        if isinstance(value, ir.BlockArgument):
            if value.owner == body and value.arg_number != 0:
                return None  # carried by the outer loop
            continue
        op = _owner(value)
        if op is None or op.block != body or op in needed:
            continue
        if op.regions or not is_pure(op) or reads_memory(op):
            return None
        needed.add(op)
        pending.extend(op.operands)
    return [op for op in block_ops(body) if op in needed and op.name != "tilegpu.local_alloc"]


def _rewrite(outer: ir.Operation, allocs: list[ir.Operation], deallocs: list[ir.Operation],
             slice_: list[ir.Operation], prologue: list[ir.Operation], anchor: ir.Operation) -> None:
    lower, upper, step = list(outer.operands)[:3]
    iv = outer.regions[0].blocks[0].arguments[0]
    for alloc in allocs:
        alloc.move_before(outer)
    with ir.InsertionPoint(outer), outer.location:
        _issue_if(arith.cmpi(arith.CmpIPredicate.slt, lower, upper), slice_, {iv: lower})
    with ir.InsertionPoint.after(anchor), anchor.location:
        following = arith.addi(iv, step)
        _issue_if(arith.cmpi(arith.CmpIPredicate.slt, following, upper), slice_, {iv: following})
    after_loop = ir.InsertionPoint.after(outer)
    with after_loop, outer.location:
        tilegpu.async_wait(0)
    for dealloc in deallocs:
        dealloc.detach_from_parent()
        after_loop.insert(dealloc)
    for op in reversed(prologue):
        op.erase()
    erase_dead_ops(outer)


def _issue_if(condition: ir.Value, slice_: list[ir.Operation], mapping: dict[ir.Value, ir.Value]) -> None:
    """The slice cloned under `if condition`, reading `mapping`'s values."""
    guard = scf.IfOp(condition)
    with ir.InsertionPoint(guard.then_block):
        mapping = dict(mapping)
        for op in slice_:
            clone_reading(op, mapping)
        scf.YieldOp([])
