"""tile-combine: folds an addition of a product into the product's accumulator.

`acc += tl.dot(a, b)` reaches ttir as a dot with a zero accumulator whose result is
added to `acc`:

    %p = tile.dot %a, %b, %zero          %s = tile.dot %a, %b, %acc
    %s = arith.addf %acc, %p       ->

Tensor cores add into their accumulator for free, and the software pipeliner and the
wgmma lowering keep a dot's accumulator in flight across a loop's iterations only when
it is the dot's own operand: left as an addition, the product needs registers of its
own (a second accumulator-sized tile) and its dot waits for completion every
iteration. So this pass rewrites the addition into the dot, as Triton's combiner does,
when the product has no other use and the sum has the product's type. The sum's
rounding changes as for any reassociation of the dot's additions (the accumulator is
added inside the dot instead of after it).
"""
from __future__ import annotations

from mlir import ir

from ..dialects import tile
from . import register_pass
from .utils import functions, is_zero_constant, walk_postorder

_ADDITIONS = ("arith.addf", "arith.addi")


@register_pass("tile-combine", "Fold `acc + dot(a, b, 0)` into `dot(a, b, acc)`")
def tile_combine(module_op: ir.Operation) -> None:
    for func in functions(module_op):
        additions = [op for op in walk_postorder(func) if op.name in _ADDITIONS]  # before any op is erased
        for add in additions:
            _fold_into_dot(add)


def _fold_into_dot(add: ir.Operation) -> None:
    for index in (0, 1):
        product, other = add.operands[index], add.operands[1 - index]
        dot = _single_use_dot(product, add)
        if dot is None or other.type != product.type or not is_zero_constant(dot.operands[2], either_sign=True):
            continue
        with ir.InsertionPoint(add), add.location:
            folded = tile.dot(dot.operands[0], dot.operands[1], other,
                              ir.StringAttr(dot.attributes["input_precision"]).value,
                              tile.dot_max_num_imprecise_acc(dot))
        add.results[0].replace_all_uses_with(folded)
        add.erase()
        dot.erase()
        return


def _single_use_dot(value: ir.Value, user: ir.Operation) -> ir.Operation | None:
    """The tile.dot defining `value`, when `user` is its only use."""
    if not isinstance(value, ir.OpResult):
        return None
    owner = value.owner.operation if hasattr(value.owner, "operation") else value.owner
    if owner.name != "tile.dot":
        return None
    uses = list(value.uses)  # `p + p` is two uses: not folded
    if len(uses) != 1:
        return None
    use_owner = uses[0].owner.operation if hasattr(uses[0].owner, "operation") else uses[0].owner
    return owner if use_owner == user else None
