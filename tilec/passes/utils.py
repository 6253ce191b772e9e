"""Small helpers shared by tilec's passes: walking, dead-code removal, and the op facts they ask."""
from __future__ import annotations

import math
from typing import Iterator

from mlir import ir

from ..dialects import op_facts

# Which ops are pure or elementwise is recorded beside each op (dialects/op_facts.py).
is_pure = op_facts.is_pure
is_elementwise = op_facts.is_elementwise


def functions(module_op: ir.Operation) -> Iterator[ir.Operation]:
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            yield op.operation


def enclosing_loop(op: ir.Operation) -> ir.Operation | None:
    """The nearest scf.for or scf.while around `op` in its function, or None."""
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name in ("scf.for", "scf.while"):
            return parent
        parent = parent.parent
    return None


def walk_postorder(op: ir.Operation) -> list[ir.Operation]:
    """Every op nested in `op`, children before parents, in reverse program order."""
    out: list[ir.Operation] = []

    def visit(holder: ir.Operation) -> None:
        for region in holder.regions:
            for block in region.blocks:
                for child in reversed(list(block.operations)):
                    child = child.operation
                    if len(child.regions):
                        visit(child)
                    out.append(child)

    visit(op)
    return out


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The op whose result `value` is; None for a block argument."""
    if not isinstance(value, ir.OpResult):
        return None
    owner = value.owner
    return owner.operation if hasattr(owner, "operation") else owner


def user_of(use: ir.OpOperand) -> ir.Operation:
    """The op holding the use."""
    owner = use.owner
    return owner.operation if hasattr(owner, "operation") else owner


def clone_reading(op: ir.Operation, mapping: dict[ir.Value, ir.Value]) -> ir.Operation:
    """Clones `op` at the insertion point, its operands and those of the ops nested in
    it read through `mapping` (an if's branches read outer values too); records the
    clone's results in `mapping` in place of `op`'s and returns the clone."""
    clone = op.clone()
    for index, operand in enumerate(op.operands):
        if operand in mapping:
            clone.operands[index] = mapping[operand]
    for nested in walk_postorder(clone):
        for index, operand in enumerate(nested.operands):
            if operand in mapping:
                nested.operands[index] = mapping[operand]
    for old, new in zip(op.results, clone.results):
        mapping[old] = new
    return clone


def has_uses(value: ir.Value) -> bool:
    for _ in value.uses:
        return True
    return False


def erase_dead_ops(root: ir.Operation) -> int:
    """Erases pure ops whose results are unused; returns how many.

    One walk reaches the fixed point: it visits every use before the definition it uses
    (reverse program order, nested ops before their parent, and a value is defined
    before its uses), so a chain of dead ops is gone by the time its head is seen."""
    erased = 0
    for op in walk_postorder(root):
        if op.results and not any(has_uses(r) for r in op.results) and is_pure(op):
            op.erase()
            erased += 1
    return erased


def dots_reached(value: ir.Value, operands: tuple[int, ...] = (0, 1, 2)) -> list[ir.Operation]:
    """The tile.dot ops `value` reaches, as one of their `operands`, through any ops but a
    loop's yield and condition (attention's qk -> softmax -> p @ v; a loaded operand
    through its conversions)."""
    pending, seen, found = [value], set(), []
    while pending:
        for use in list(pending.pop().uses):
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if user.name == "tile.dot":
                if use.operand_number in operands:
                    found.append(user)
            elif user not in seen and user.name not in ("scf.yield", "scf.condition"):
                seen.add(user)
                pending.extend(user.results)
    return found


def fresh_accumulator(value: ir.Value) -> tuple[ir.Value, ir.Value] | None:
    """(carried, reset) when `value` is `select(reset, 0, carried)` with a scalar condition
    (splat over the tile): an accumulator that starts again from zero where `reset` holds,
    as tile-flatten-loops makes of a persistent kernel's `acc = tl.zeros(...)`. A wgmma
    dot takes `carried` and ignores it at run time (dot_wgmma.py); otherwise None."""
    if not isinstance(value, ir.OpResult):
        return None
    op = value.owner.operation if hasattr(value.owner, "operation") else value.owner
    if op.name != "arith.select" or not is_zero_constant(op.operands[1], either_sign=True):
        return None
    condition = op.operands[0]
    if isinstance(condition.type, ir.RankedTensorType):
        splat = condition.owner.operation if isinstance(condition, ir.OpResult) else None
        if splat is None or splat.name != "tile.splat":
            return None
        condition = splat.operands[0]
    return op.operands[2], condition


def is_zero_constant(value: ir.Value, either_sign: bool = False) -> bool:
    """Whether `value` is a constant 0 (a scalar, or a splat or dense splat tensor, maybe
    converted to another layout; an fp8 constant is its bits): +0 only for floats
    unless `either_sign` (what cp.async writes for masked-off elements is +0; adding
    -0 changes nothing either)."""
    owner = value.owner
    if not isinstance(value, ir.OpResult):
        return False
    op = owner.operation if hasattr(owner, "operation") else owner
    if op.name in ("tile.splat", "tilegpu.convert_layout") or (
            op.name == "tile.bitcast" and isinstance(op.operands[0].type, ir.IntegerType)):
        return is_zero_constant(op.operands[0], either_sign)
    if op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    if isinstance(value.type, ir.RankedTensorType):
        dense = ir.DenseElementsAttr(attr)
        if not dense.is_splat:
            return False
        attr = dense.get_splat_value()
    if isinstance(attr.type, ir.FloatType):
        number = ir.FloatAttr(attr).value
        return number == 0.0 and (either_sign or math.copysign(1.0, number) > 0)
    if isinstance(attr.type, ir.IntegerType):
        return ir.IntegerAttr(attr).value == 0
    return False
