"""tile-choose-descriptor-copies: TMA or pointers, for each host descriptor load and store.

The language emits a host tensor descriptor's 2-D loads and stores on sm_90 as
`tile.descriptor_load` / `tile.descriptor_store`, which copy through the tensor map
(TMA), each with a `fallback` region doing the same with pointers (language/
block_pointer.py). This pass keeps one of the two:

- TMA when the offset along the last dimension is a multiple of 16 bytes (axis info;
  the hardware faults on other starting columns), with the fallback region emptied;
- otherwise the pointer form: the region's ops are moved before the op, which is erased.

A TMA store is asynchronous: the threads go on once the hardware has read the block
out of shared memory (`cp.async.bulk.wait_group.read`, which frees the buffer) and its
writes land later. It is marked READ_WAIT_ATTR, and waits only that long, unless an
access that may follow it could see its writes out of order: a load or store (pointer
or TMA) whose pointers may derive from the same kernel parameter (or from one this
pass cannot trace), any atomic (another program may be waiting on it for the data),
or an inline asm with effects. Those wait for the writes to land (`wait_group`). A
later TMA store of the same tensor is not such an access (as in Triton, whose TMA
stores all wait for `.read` only).

Two more take the pointer form, as measured faster (H100, the persistent descriptor
matmul of benchmarks/bench_descriptor_matmul.py):
- a load inside a loop whose value reaches a `tl.dot` that will not run on wgmma
  (`tma-loops` off: wgmma off or a target other than sm_90; or a dot whose accumulator
  is not fp32/int32): tilegpu-pipeline streams TMA copies only into wgmma's operand
  rings, and a TMA load it does not stream is issued and waited for in the same
  iteration (0.14x as fast as cp.async rings);
- a store inside a loop that would wait for its writes: 0.8x as fast as the threads'
  own stores (one that waits for `.read` only is a TMA store: the persistent matmul's
  epilogue).
"""
from __future__ import annotations

from mlir import ir

from ..dialects import tile
from ..dialects._mlir import block_ops, create_op, operand_groups, walk_ops
from . import register_pass
from .axis_info import AxisInfoAnalysis
from .utils import dots_reached, enclosing_loop, functions, is_pure

_OPS = ("tile.descriptor_load", "tile.descriptor_store")


def _element_bytes(op: ir.Operation) -> int:
    value = op.results[0] if op.name == "tile.descriptor_load" else operand_groups(op)[1][0]
    return tile.memory_bits(ir.RankedTensorType(value.type).element_type) // 8


def _inner_offset_aligned(op: ir.Operation, analysis: AxisInfoAnalysis) -> bool:
    offsets = operand_groups(op)[-1]
    divisibility = analysis.get(offsets[-1]).divisibility[0]
    return divisibility * _element_bytes(op) % 16 == 0


def _wgmma_accumulator(dot: ir.Operation) -> bool:
    return str(ir.RankedTensorType(dot.operands[2].type).element_type) in ("f32", "i32")


def use_tma(op: ir.Operation, analysis: AxisInfoAnalysis, tma_loops: bool, read_wait: bool = False) -> bool:
    """Whether `op` stays a TMA copy (`read_wait`: a store that need not wait for its writes)."""
    if not _inner_offset_aligned(op, analysis):
        return False
    if op.name == "tile.descriptor_store":
        return read_wait or enclosing_loop(op) is None
    dots = dots_reached(op.results[0])
    in_loop = enclosing_loop(op) is not None
    return not (in_loop and dots and not (tma_loops and all(_wgmma_accumulator(d) for d in dots)))


# ----------------------------------------------------------------------------- store waits
# A TMA store marked so waits until its block has been read out of shared memory, not
# until its writes land (see the module's docstring).
READ_WAIT_ATTR = "tile.wait_for_read"

# Ops through whose results a pointer keeps the parameters it derives from.
_POINTER_PASSES = {"tile.addptr": (0,), "tile.splat": (0,), "tile.broadcast": (0,), "tile.expand_dims": (0,),
                   "tile.reshape": (0,), "tile.trans": (0,), "tilegpu.convert_layout": (0,),
                   "arith.select": (1, 2)}


def _roots(value: ir.Value, seen: set | None = None) -> frozenset | None:
    """The kernel parameters the pointers `value` holds derive from, or None when that
    cannot be told (a pointer made from an integer or loaded from memory)."""
    seen = set() if seen is None else seen
    key = _value_key(value)
    if key in seen:
        return frozenset()
    seen.add(key)
    owner = value.owner
    if isinstance(owner, ir.Block):
        holder = owner.owner
        if holder is None:
            return None
        holder = holder.operation if hasattr(holder, "operation") else holder
        position = ir.BlockArgument(value).arg_number
        if holder.name == "func.func":
            return frozenset([key])
        if holder.name == "scf.for" and position > 0:  # an iteration argument: its start, and what is yielded
            terminator = block_ops(owner)[-1]
            return _union([_roots(holder.operands[2 + position], seen),
                           _roots(terminator.operands[position - 1], seen)])
        return None
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name in _POINTER_PASSES:
        return _union([_roots(op.operands[i], seen) for i in _POINTER_PASSES[op.name]])
    index = list(op.results).index(value) if op.name in ("scf.for", "scf.if") else None
    if op.name == "scf.for":
        terminator = block_ops(op.regions[0].blocks[0])[-1]
        return _union([_roots(op.operands[3 + index], seen), _roots(terminator.operands[index], seen)])
    if op.name == "scf.if":
        return _union([_roots(block_ops(region.blocks[0])[-1].operands[index], seen) for region in op.regions])
    return None


def _value_key(value: ir.Value):
    owner = value.owner
    if isinstance(owner, ir.Block):
        return ("arg", owner, ir.BlockArgument(value).arg_number)
    return ("result", owner.operation if hasattr(owner, "operation") else owner, ir.OpResult(value).result_number)


def _union(parts: list) -> frozenset | None:
    if any(p is None for p in parts):
        return None
    return frozenset().union(*parts)


def _access_roots(op: ir.Operation, descriptor_roots: dict) -> frozenset | None:
    """The roots of the memory `op` touches; an empty set for ops that touch none."""
    if op.name in ("tile.load", "tile.store"):
        return _roots(op.operands[0])
    if op.name in _OPS:
        return descriptor_roots.get(op)
    if op.name.startswith("tile.atomic") or (op.name == "tile.inline_asm" and not is_pure(op)):
        return None
    return frozenset()


def _fallback_roots(op: ir.Operation) -> frozenset | None:
    """What a descriptor op's pointer form (its fallback region) accesses."""
    return _union([_access_roots(inner, {}) for inner in walk_ops(op)])


def _may_follow(op: ir.Operation) -> list[ir.Operation]:
    """The ops that may run after `op`: those after it and after each op holding it, in
    their blocks, and every op of a loop holding it (the next iteration). A descriptor
    op stands for its fallback region."""
    found, node = [], op
    while node.name != "func.func":
        ops = block_ops(node.block)
        for later in ops[ops.index(node) + 1:]:
            found += [later, *_accesses_in(later)]
        node = node.parent
        if node.name in ("scf.for", "scf.while"):
            found += list(_accesses_in(node))
    return found


def _accesses_in(op: ir.Operation):
    """The ops nested in `op`, descriptor ops' fallback regions left out."""
    if op.name in _OPS:
        return
    for region in op.regions:
        for block in region.blocks:
            for inner in block_ops(block):
                yield inner
                yield from _accesses_in(inner)


def _waits_for_read_only(store: ir.Operation, descriptor_roots: dict) -> bool:
    written = descriptor_roots.get(store)
    if written is None:
        return False
    for other in _may_follow(store):
        if other.name == "tile.descriptor_store":
            continue
        touched = _access_roots(other, descriptor_roots)
        if touched is None or touched & written:
            return False
    return True


def _drop_fallback(op: ir.Operation) -> None:
    """Empties the fallback region, but for a `gpu.yield` of nothing (a block needs a terminator)."""
    block = op.regions[0].blocks[0]
    children = [child.operation for child in block.operations]
    with ir.InsertionPoint(children[-1]), op.location:
        create_op("gpu.yield", [], [])
    for child in reversed(children):
        child.erase()


def _inline_fallback(op: ir.Operation) -> None:
    block = op.regions[0].blocks[0]
    children = [child.operation for child in block.operations]
    terminator = children[-1]
    for child in children[:-1]:
        child.move_before(op)
    for result, value in zip(op.results, terminator.operands):
        result.replace_all_uses_with(value)
    op.erase()


@register_pass("tile-choose-descriptor-copies", "Keep the TMA copy or the pointer form of each descriptor access",
               **{"tma-loops": 0})
def choose_descriptor_copies(module_op: ir.Operation, tma_loops: int = 0) -> None:
    for fn in functions(module_op):
        ops = [op for op in walk_ops(fn) if op.name in _OPS]
        if not ops:
            continue
        analysis = AxisInfoAnalysis(fn)
        # Read before any region is emptied or inlined (the moved ops keep their values).
        descriptor_roots = {op: _fallback_roots(op) for op in ops}
        read_wait = {op: op.name == "tile.descriptor_store" and _waits_for_read_only(op, descriptor_roots)
                     for op in ops}
        for op in ops:
            if use_tma(op, analysis, bool(tma_loops), read_wait[op]):
                _drop_fallback(op)
                if read_wait[op]:
                    op.attributes[READ_WAIT_ATTR] = ir.UnitAttr.get()
            else:
                _inline_fallback(op)
