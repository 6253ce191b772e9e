"""tile-combine: folds an addition of a product into the product's accumulator, and
splits a pointer offset into its loop-invariant and varying parts.

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

Second, in a loop, a block of pointers `ptr + (inv + var)` (Triton's tutorial 09:
`a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)`, written inside
the K loop) becomes `(ptr + inv) + var` when `ptr` and `inv` do not change in the loop
and `var` does (a scalar pointer is left alone: one add either way):

    %o = arith.addi %inv, %var               %q = tile.addptr %ptr, %inv
    %p = tile.addptr %ptr, %o          ->    %p = tile.addptr %q, %var

The invariant block of pointers is then computed once, before the loop (LLVM hoists it),
and each iteration adds only the varying offsets: per element one 64-bit add instead of
a 32-bit add, a widening multiply and a 64-bit add. The addresses are the same unless
`inv + var` wraps around 32 bits, where the split form gives the address the program
meant (Triton wraps the sum first). `ptr + inv + var`, the form the compiler already did
well on, is what the corpus's persistent matmul writes. 64-bit offsets need no widening,
so there the split only saves the 64-bit add per element, and only where the pointer is
the sum's one use: a sum that something else also reads (a second pointer, `x_ptr +
offs` and `out_ptr + offs`; a mask) is computed anyway, and the split would only add an
invariant block of pointers per pointer to the registers (a column scan kept 7 more,
which cost an H200 a second wave of its blocks), so it stays whole.
"""
from __future__ import annotations

from mlir import ir

from ..dialects import tile
from . import register_pass
from .utils import defining_op as _owner, enclosing_loop, functions, is_pure, is_zero_constant, walk_postorder

_ADDITIONS = ("arith.addf", "arith.addi")


@register_pass("tile-combine", "Fold `acc + dot(a, b, 0)` into `dot(a, b, acc)`; split `ptr + (inv + var)` in loops")
def tile_combine(module_op: ir.Operation) -> None:
    for func in functions(module_op):
        additions = [op for op in walk_postorder(func) if op.name in _ADDITIONS]  # before any op is erased
        for add in additions:
            _fold_into_dot(add)
        for op in [op for op in walk_postorder(func) if op.name == "tile.addptr"]:
            _split_invariant_offset(op)


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


def _invariant(value: ir.Value, loop: ir.Operation, depth: int = 8) -> bool:
    """Whether `value` is the same in every iteration of `loop`: defined outside it, or
    by a pure region-free op directly in its body whose operands all are."""
    owner = _owner(value)
    if owner is None:  # a block argument: the loop's own are not; an enclosing block's are
        block = value.owner
        return block.owner.operation != loop if hasattr(block.owner, "operation") else block.owner != loop
    if owner.parent != loop:
        current = owner.parent
        while current is not None:  # defined in the loop, deeper: varies as far as we know
            if current == loop:
                return False
            current = current.parent
        return True
    if depth == 0 or owner.regions or not is_pure(owner):
        return False
    return all(_invariant(operand, loop, depth - 1) for operand in owner.operands)


def _element_bits(ty: ir.Type) -> int:
    return ir.IntegerType(ir.RankedTensorType(ty).element_type).width



def _split_invariant_offset(op: ir.Operation) -> None:
    loop = enclosing_loop(op)
    if loop is None or not isinstance(op.results[0].type, ir.RankedTensorType):
        return  # a scalar pointer costs one add either way
    pointer, offset = op.operands
    add = _owner(offset)
    if add is None or add.name != "arith.addi" or not _invariant(pointer, loop):
        return
    left, right = add.operands
    if left.type != offset.type or right.type != offset.type:
        return
    if _element_bits(offset.type) == 64 and len(list(add.results[0].uses)) > 1:
        return  # a 64-bit sum needed anyway: see the header
    fixed = [_invariant(v, loop) for v in (left, right)]
    if fixed[0] == fixed[1]:
        return  # both invariant (hoisted whole) or both varying: nothing to split
    inv, var = (left, right) if fixed[0] else (right, left)
    with ir.InsertionPoint(op), op.location:
        base = tile.addptr(pointer, inv)
        split = tile.addptr(base, var)
    op.results[0].replace_all_uses_with(split)
    op.erase()
    if not list(add.results[0].uses):
        add.erase()
