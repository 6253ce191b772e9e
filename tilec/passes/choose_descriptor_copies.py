"""tile-choose-descriptor-copies: TMA or pointers, for each host descriptor load and store.

The language emits a host tensor descriptor's 2-D loads and stores on sm_90 as
`tile.descriptor_load` / `tile.descriptor_store`, which copy through the tensor map
(TMA), each with a `fallback` region doing the same with pointers (language/
block_pointer.py). This pass keeps one of the two:

- TMA when the offset along the last dimension is a multiple of 16 bytes (axis info;
  the hardware faults on other starting columns), with the fallback region emptied;
- otherwise the pointer form: the region's ops are moved before the op, which is erased.

Two more take the pointer form, as measured faster (H100, the persistent descriptor
matmul of benchmarks/bench_descriptor_matmul.py):
- a load inside a loop whose value reaches a `tl.dot` that will not run on wgmma
  (`tma-loops` off: wgmma off or a target other than sm_90; or a dot whose accumulator
  is not fp32/int32): tilegpu-pipeline streams TMA copies only into wgmma's operand
  rings, and a TMA load it does not stream is issued and waited for in the same
  iteration (0.14x as fast as cp.async rings);
- a store inside a loop (a persistent kernel's epilogue): the TMA store waits for its
  copy before the loop goes on, 0.8x as fast as the threads' own stores.

A TMA store after which the kernel touches no memory is marked LAST_ACCESS_ATTR: it
waits only until the block has been read.
"""
from __future__ import annotations

from mlir import ir

from ..dialects import tile
from ..dialects._mlir import create_op, operand_groups, walk_ops
from . import register_pass
from .axis_info import AxisInfoAnalysis
from ..dialects.op_facts import reads_memory
from .utils import dots_reached, functions, is_pure

_OPS = ("tile.descriptor_load", "tile.descriptor_store")


def _element_bytes(op: ir.Operation) -> int:
    value = op.results[0] if op.name == "tile.descriptor_load" else operand_groups(op)[1][0]
    return tile.memory_bits(ir.RankedTensorType(value.type).element_type) // 8


def _inner_offset_aligned(op: ir.Operation, analysis: AxisInfoAnalysis) -> bool:
    offsets = operand_groups(op)[-1]
    divisibility = analysis.get(offsets[-1]).divisibility[0]
    return divisibility * _element_bytes(op) % 16 == 0


def _in_loop(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name in ("scf.for", "scf.while"):
            return True
        parent = parent.parent
    return False


def _wgmma_accumulator(dot: ir.Operation) -> bool:
    return str(ir.RankedTensorType(dot.operands[2].type).element_type) in ("f32", "i32")


def use_tma(op: ir.Operation, analysis: AxisInfoAnalysis, tma_loops: bool) -> bool:
    if not _inner_offset_aligned(op, analysis):
        return False
    if op.name == "tile.descriptor_store":
        return not _in_loop(op)
    dots = dots_reached(op.results[0])
    return not (_in_loop(op) and dots and not (tma_loops and all(_wgmma_accumulator(d) for d in dots)))


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


# On a descriptor store no memory access follows (the kernel's epilogue): its lowering
# waits only until TMA has read the block, not until the writes land (kernel completion
# makes them visible).
LAST_ACCESS_ATTR = "tile.last_access"


def _last_access(op: ir.Operation) -> bool:
    """Whether nothing after `op` touches memory: it sits in the function's body (not in a
    loop or branch) and every later op there is pure."""
    if op.parent is None or op.parent.name != "func.func":
        return False
    later = False
    for other in op.block.operations:
        other = other.operation
        if other == op:
            later = True
        elif later and other.name != "func.return" and not (is_pure(other) and not reads_memory(other)):
            return False
    return True


@register_pass("tile-choose-descriptor-copies", "Keep the TMA copy or the pointer form of each descriptor access",
               **{"tma-loops": 0})
def choose_descriptor_copies(module_op: ir.Operation, tma_loops: int = 0) -> None:
    for fn in functions(module_op):
        ops = [op for op in walk_ops(fn) if op.name in _OPS]
        if not ops:
            continue
        analysis = AxisInfoAnalysis(fn)
        for op in ops:
            if use_tma(op, analysis, bool(tma_loops)):
                _drop_fallback(op)
                if op.name == "tile.descriptor_store" and _last_access(op):
                    op.attributes[LAST_ACCESS_ATTR] = ir.UnitAttr.get()
            else:
                _inline_fallback(op)
