"""tile-carry-pointer-bases: a loop that advances a block of pointers by one scalar
carries the scalar base instead, and rebuilds the block from it every iteration.

    a_ptrs = a_ptr + rows[:, None] * lda + cols[None, :]     # before the loop
    for k in range(...):
        a = tl.load(a_ptrs, ...)
        a_ptrs += BLOCK_K

carries a_ptrs, a 64-bit pointer per element (2 registers each: 64 of them for a
128x64 block of 2-byte loads over 256 threads), and adds BLOCK_K to every one every
iteration. The block is the splat of a scalar base moved by offsets that do not change
in the loop, and adding one scalar to every element commutes with those moves, so

    base = a_ptr
    for k in range(...):
        a_ptrs = (base + rows[:, None] * lda) + cols[None, :]   # the same ops, in the loop
        a = tl.load(a_ptrs, ...)
        base += BLOCK_K

computes the same addresses (pointer arithmetic is 64-bit modular either way, every
offset sign-extended and scaled on its own as before): the loop carries one scalar,
and what stays live across iterations are the offsets (an int32 per row and per
column, or per element). The addresses are one multiply-add per element from there,
as the increment was. tilegpu-pipeline then carries the scalar for the iterations it
issues ahead as well.

Only where it pays: a block of at least 32 pointers per thread (the block's elements
over the program's threads, over the elements one aligned access of at most 16 bytes
covers, as tilegpu-coalesce will lay it out). There the pointers alone take 64 or more
registers a thread (2-byte loads from addresses of unknown alignment: the grouped GEMM
over pointer tables spilled 652 bytes, 372 carrying its bases). A block of 16-byte
vectors (8 pointers a thread in a 128x64 fp16 tile over 4 warps) keeps its pointers:
rebuilding it took 12% more instructions per iteration of the corpus's matmul for 16
registers it did not need.

Rewritten when the loop carries a pointer block `P` whose initial value is such a
chain (a `tile.splat` of a scalar pointer, then `tile.addptr` by offsets, `tile.broadcast`
and `tile.expand_dims`, all before the loop) and whose yielded value is
`tile.addptr(P, s)` with `s` a splat of a scalar or a constant splat. Loops whose
carried values have hints (`tl.multiple_of` on a carried value) are left alone: the
hints name carried values by position.
"""
from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith

from ..dialects import tile
from ..dialects._mlir import block_ops, is_tensor
from . import register_pass
from .axis_info import AxisInfoAnalysis
from .utils import clone_reading, defining_op as _owner, functions, walk_postorder

_CHAIN_OPS = ("tile.addptr", "tile.broadcast", "tile.expand_dims")
# Pointers a thread holds of a block, from which carrying its base pays.
MIN_POINTERS_PER_THREAD = 32


def _pointers_per_thread(block: ir.Value, analysis: AxisInfoAnalysis, num_warps: int) -> float:
    """About how many addresses of `block` a thread keeps: its elements per thread over
    the elements one aligned access (at most 16 bytes) covers."""
    shape = tile.shape_of(block.type)
    info = analysis.get(block)
    fastest = max(range(len(shape)), key=lambda d: (info.contiguity[d], d))
    size = max(1, tile.memory_bits(tile.pointee_type(tile.element_type(block.type))) // 8)
    vector = max(1, min(info.contiguity[fastest], max(1, info.divisibility[fastest] // size), 16 // size))
    return math.prod(shape) / (32 * num_warps) / vector


def _chain(value: ir.Value) -> tuple[ir.Value, list[ir.Operation]] | None:
    """(the scalar base, the ops from its splat to `value`, splat first) when `value` is
    a splat of a scalar pointer moved by addptr, broadcast and expand_dims only."""
    ops: list[ir.Operation] = []
    while True:
        op = _owner(value)
        if op is None:
            return None
        if op.name == "tile.splat":
            if is_tensor(op.operands[0].type):
                return None
            ops.append(op)
            return op.operands[0], ops[::-1]
        if op.name not in _CHAIN_OPS:
            return None
        ops.append(op)
        value = op.operands[0]


def _scalar_step(yielded: ir.Value, arg: ir.Value) -> ir.Value | ir.Operation | None:
    """The scalar `s` of a yielded `tile.addptr(arg, splat(s))`; for a constant splat,
    the constant op to make the scalar from; else None."""
    op = _owner(yielded)
    if op is None or op.name != "tile.addptr" or op.operands[0] != arg:
        return None
    step = _owner(op.operands[1])
    if step is None:
        return None
    if step.name == "tile.splat" and not is_tensor(step.operands[0].type):
        return step.operands[0]
    if step.name == "arith.constant":
        value = step.attributes["value"]
        if isinstance(value, ir.DenseElementsAttr) and value.is_splat:
            return step
    return None


def _rebuild(chain: list[ir.Operation], base: ir.Value) -> tuple[ir.Value, ir.Operation]:
    """The chain's ops cloned at the insertion point on `base` instead of its base:
    (the last value, the splat of `base`)."""
    mapping = {chain[0].operands[0]: base}
    splat = clone_reading(chain[0], mapping)
    for op in chain[1:]:
        clone_reading(op, mapping)
    return mapping[chain[-1].results[0]], splat


def _redirect(value: ir.Value, new: ir.Value, keep: ir.Operation) -> None:
    """Every use of `value` but `keep`'s reads `new` instead."""
    for use in list(value.uses):
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if user != keep:
            user.operands[use.operand_number] = new


def _carry_bases(loop: ir.Operation, analysis: AxisInfoAnalysis, num_warps: int) -> bool:
    if any("_arg" in loop.attributes[i].name for i in range(len(loop.attributes))):
        return False  # hints on carried values name them by position
    body = loop.regions[0].blocks[0]
    terminator = block_ops(body)[-1]
    changed = False
    for index, (arg, init, result) in enumerate(zip(list(body.arguments)[1:], list(loop.operands)[3:],
                                                      loop.results)):
        if not is_tensor(arg.type) or not tile.is_ptr_type(tile.element_type(arg.type)):
            continue
        found = _chain(init)
        step = _scalar_step(terminator.operands[index], arg)
        if found is None or step is None or _pointers_per_thread(arg, analysis, num_warps) < MIN_POINTERS_PER_THREAD:
            continue
        base, chain = found
        if isinstance(step, ir.Operation):  # a constant splat: its element
            value = ir.DenseElementsAttr(step.attributes["value"]).get_splat_value()
            with ir.InsertionPoint(terminator), loop.location:
                step = arith.ConstantOp(value.type, value).result
        loop.operands[3 + index] = base
        arg.set_type(base.type)
        result.set_type(base.type)
        with ir.InsertionPoint.at_block_begin(body), loop.location:
            inside, splat = _rebuild(chain, arg)
        _redirect(arg, inside, splat)
        with ir.InsertionPoint(terminator), loop.location:
            terminator.operands[index] = tile.addptr(arg, step)
        with ir.InsertionPoint.after(loop), loop.location:
            outside, splat = _rebuild(chain, result)
        _redirect(result, outside, splat)
        changed = True
    return changed


@register_pass("tile-carry-pointer-bases", "Carry the scalar base of a pointer block a loop advances by a scalar",
               **{"num-warps": 4})
def carry_pointer_bases(module_op: ir.Operation, num_warps: int = 4) -> None:
    for fn in functions(module_op):
        analysis = AxisInfoAnalysis(fn)  # of the IR as it was: the rewrite changes no address
        for op in [op for op in walk_postorder(fn) if op.name == "scf.for"]:
            _carry_bases(op, analysis, num_warps)
