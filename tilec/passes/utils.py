"""Small helpers shared by tilec's passes: op classification, walking, dead-code removal."""
from __future__ import annotations

from typing import Iterator

from mlir import ir

# Ops without side effects besides producing results.
_PURE_TILE_OPS = {
    "tile.get_program_id", "tile.get_num_programs", "tile.make_range", "tile.splat", "tile.broadcast",
    "tile.expand_dims", "tile.addptr", "tile.ptr_to_int", "tile.int_to_ptr", "tile.bitcast", "tile.reduce",
    "tile.scan", "tile.dot", "tile.reshape", "tile.trans", "tile.join", "tile.split", "tile.cat",
    "tile.gather", "tile.histogram", "tilegpu.convert_layout",
}

# Ops whose `pure` attribute says whether they have side effects.
_MAYBE_PURE_TILE_OPS = {"tile.extern_elementwise", "tile.inline_asm"}

# Elementwise ops: results take the layout of their tensor operands.
_ELEMENTWISE_TILE_OPS = {"tile.addptr", "tile.ptr_to_int", "tile.int_to_ptr", "tile.bitcast"}


def is_pure(op: ir.Operation) -> bool:
    """True when removing `op` (if its results are unused) changes nothing."""
    name = op.name
    if name in _PURE_TILE_OPS:
        return True
    if name in _MAYBE_PURE_TILE_OPS:
        return ir.BoolAttr(op.attributes["pure"]).value
    if name == "tile.load":
        return not ir.BoolAttr(op.attributes["volatile"]).value if "volatile" in op.attributes else True
    return name.startswith("arith.") or name.startswith("math.")


def is_elementwise(op: ir.Operation) -> bool:
    name = op.name
    if name in _ELEMENTWISE_TILE_OPS:
        return True
    if name in _MAYBE_PURE_TILE_OPS:
        # Only pure ones (elementwise ops may be recomputed elsewhere), and inline asm only
        # one element at a time (a packed one needs its layout kept: see convert-tile-to-tilegpu).
        return is_pure(op) and (name != "tile.inline_asm" or ir.IntegerAttr(op.attributes["pack"]).value == 1)
    return (name.startswith("arith.") and name != "arith.constant") or name.startswith("math.")


def functions(module_op: ir.Operation) -> Iterator[ir.Operation]:
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            yield op.operation


def walk_postorder(op: ir.Operation) -> list[ir.Operation]:
    """Every op nested in `op`, children before parents, in reverse program order."""
    out: list[ir.Operation] = []

    def visit(holder: ir.Operation) -> None:
        for region in holder.regions:
            for block in region.blocks:
                for child in reversed(list(block.operations)):
                    child = child.operation
                    visit(child)
                    out.append(child)

    visit(op)
    return out


def has_uses(value: ir.Value) -> bool:
    for _ in value.uses:
        return True
    return False


def erase_dead_ops(root: ir.Operation) -> int:
    """Erases pure ops whose results are unused, to a fixed point; returns how many."""
    erased = 0
    changed = True
    while changed:
        changed = False
        for op in walk_postorder(root):
            if op.results and is_pure(op) and not any(has_uses(r) for r in op.results):
                op.erase()
                erased += 1
                changed = True
    return erased
