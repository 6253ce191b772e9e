"""tile-narrow-float: an fp16 or bf16 sum taken in fp32 and rounded back is taken in fp16 or bf16.

    %s = arith.addf (arith.extf %x), (arith.extf %y) : f32
    %t = arith.truncf %s : f32 to f16                        ->   %t = arith.addf %x, %y : f16

The bits are the same: fp32 carries more than twice the significand bits of fp16 or
bf16 plus one, so rounding the exact sum or difference of two such numbers first to
fp32 and then to the narrow type gives the one rounding to the narrow type (double
rounding is innocuous there; LLVM's InstCombine makes this rewrite on scalars). tilec
lowers an fp32 -> fp16 tile two registers at a time (one vector fptrunc, see
convert_tilegpu_to_llvm/elementwise.py), which hides the sum from LLVM, so the rewrite
is made here, on tiles: the narrow sum then takes one add.f16x2 per two elements
instead of two conversions up, two fp32 adds and one conversion down, as in Triton's
code.

The truncation also moves into an `scf.if` whose result only it reads, when the value
each branch yields narrows without a rounding of its own (an extf of the narrow type,
or such a sum): tutorial 05's backward keeps its partial `db` in fp32 across
`if count == 0: ... else: partial_db += tl.load(DB)` and stores it as fp16, inside the
lock every program waits for.
"""
from __future__ import annotations

from mlir import ir

from . import register_pass
from .utils import functions, walk_postorder

_NARROWABLE = ("arith.addf", "arith.subf")


@register_pass("tile-narrow-float", "Take fp16/bf16 sums computed in fp32 and rounded back in fp16/bf16")
def tile_narrow_float(module_op: ir.Operation) -> None:
    for func in functions(module_op):
        truncations = [op for op in walk_postorder(func)
                       if op.name == "arith.truncf" and "roundingmode" not in op.attributes]
        for truncf in truncations:
            _narrow(truncf)


def _narrow(truncf: ir.Operation) -> None:
    wide, narrow_type = truncf.operands[0], truncf.results[0].type
    if not _exact_narrowing(wide.type, narrow_type):
        return
    op = _defining_op(wide)
    if op is not None and op.name == "scf.if":
        _narrow_if_result(op, wide, truncf)
        return
    plan = _narrowing_plan(wide, narrow_type, allow_uses=1)
    if plan is None or plan[0] == "extf":  # truncf(extf x) is canonicalize's
        return
    with ir.InsertionPoint(truncf), truncf.location:
        narrowed = _apply(plan, narrow_type)
    truncf.results[0].replace_all_uses_with(narrowed)
    truncf.erase()


def _narrow_if_result(if_op: ir.Operation, result: ir.OpResult, truncf: ir.Operation) -> None:
    """Moves `truncf` of `if_op`'s `result` into each branch, when it is the result's only
    use and every branch's value narrows exactly."""
    if len(list(result.uses)) != 1 or len(if_op.regions) != 2 or not len(if_op.regions[1].blocks):
        return
    narrow_type = truncf.results[0].type
    index = result.result_number
    yields = [region.blocks[0].operations[len(region.blocks[0].operations) - 1].operation
              for region in if_op.regions]
    plans = [_narrowing_plan(y.operands[index], narrow_type, allow_uses=1) for y in yields]
    if any(plan is None for plan in plans):
        return
    for y, plan in zip(yields, plans):
        with ir.InsertionPoint(y), y.location:
            y.operands[index] = _apply(plan, narrow_type)
    result.set_type(narrow_type)
    truncf.results[0].replace_all_uses_with(result)
    truncf.erase()


def _narrowing_plan(value: ir.Value, narrow_type: ir.Type, allow_uses: int) -> tuple | None:
    """How `value` (wide) is computed exactly in `narrow_type`: ("extf", x) when it is
    x widened, (op, x, y) when it is the sum or difference of two such widened values
    and has at most `allow_uses` uses (the one being narrowed); None otherwise."""
    op = _defining_op(value)
    if op is None:
        return None
    if op.name == "arith.extf" and op.operands[0].type == narrow_type:
        return ("extf", op.operands[0])
    if op.name in _NARROWABLE and len(list(value.uses)) <= allow_uses:
        sources = [_defining_op(operand) for operand in op.operands]
        if all(s is not None and s.name == "arith.extf" and s.operands[0].type == narrow_type for s in sources):
            return (op, sources[0].operands[0], sources[1].operands[0])
    return None


def _apply(plan: tuple, narrow_type: ir.Type) -> ir.Value:
    if plan[0] == "extf":
        return plan[1]
    wide_op, x, y = plan
    attributes = {name: wide_op.attributes[name] for name in wide_op.attributes}
    return ir.Operation.create(wide_op.name, results=[narrow_type], operands=[x, y], attributes=attributes).result


def _exact_narrowing(wide: ir.Type, narrow: ir.Type) -> bool:
    """fp32 to fp16 or bf16, scalars or tensors of the same shape."""
    if isinstance(wide, ir.RankedTensorType) != isinstance(narrow, ir.RankedTensorType):
        return False
    if isinstance(wide, ir.RankedTensorType):
        if wide.shape != narrow.shape:
            return False
        wide, narrow = wide.element_type, narrow.element_type
    return isinstance(wide, ir.F32Type) and isinstance(narrow, (ir.F16Type, ir.BF16Type))


def _defining_op(value: ir.Value) -> ir.Operation | None:
    if not isinstance(value, ir.OpResult):
        return None
    owner = value.owner
    return owner.operation if hasattr(owner, "operation") else owner
