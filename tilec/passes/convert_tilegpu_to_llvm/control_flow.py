"""Lowering of scf.for, scf.if and func.return: tensors are flattened to their elements.

A loop-carried tensor of k elements per thread becomes k loop-carried scalars; an
`if` yielding a tensor yields its elements. The bodies are lowered in place into the
new ops' blocks.
"""
from __future__ import annotations

from mlir import ir

from ...dialects._mlir import block_ops, create_op, is_tensor
from .context import LoweringContext, lower_block, lowers


def _flatten(ctx: LoweringContext, values) -> list[ir.Value]:
    out = []
    for v in values:
        out.extend(ctx.elements(v))
    return out


def _counts(ctx: LoweringContext, values) -> list[int]:
    return [ctx.num_registers(v) if is_tensor(v.type) else 1 for v in values]


def _unflatten(ctx: LoweringContext, originals, flat, counts) -> None:
    at = 0
    for value, count in zip(originals, counts):
        chunk = list(flat[at:at + count])
        ctx.set(value, chunk if is_tensor(value.type) else chunk[0])
        at += count


@lowers("scf.for")
def lower_for(ctx: LoweringContext, op: ir.Operation) -> None:
    operands = list(op.operands)
    lower, upper, step = (ctx.lowered(v) for v in operands[:3])
    inits = operands[3:]
    counts = _counts(ctx, inits)
    flat_inits = _flatten(ctx, inits)
    attrs = {name: op.attributes[name] for name in op.attributes}
    new = create_op("scf.for", [v.type for v in flat_inits], [lower, upper, step] + flat_inits,
                    attributes=attrs, regions=1)
    old_body = op.regions[0].blocks[0]
    body = new.regions[0].blocks.append(lower.type, *[v.type for v in flat_inits])
    ctx.set(old_body.arguments[0], body.arguments[0])
    _unflatten(ctx, list(old_body.arguments)[1:], list(body.arguments)[1:], counts)
    lower_block(ctx, old_body, body)
    terminator = block_ops(old_body)[-1]
    with ir.InsertionPoint(body):
        create_op("scf.yield", [], _flatten(ctx, terminator.operands))
    _unflatten(ctx, list(op.results), list(new.results), counts)


@lowers("scf.while")
def lower_while(ctx: LoweringContext, op: ir.Operation) -> None:
    """The `before` block takes the inits' elements; the `after` block and the results
    take those of the values scf.condition forwards (fewer than the inits when
    canonicalisation dropped one only the condition reads)."""
    inits = list(op.operands)
    counts = _counts(ctx, inits)
    flat_inits = _flatten(ctx, inits)
    results = list(op.results)
    result_counts = _counts(ctx, results)
    result_types = []
    for value, count in zip(results, result_counts):
        result_types.extend([ctx.element_type(value.type)] * count)
    new = create_op("scf.while", result_types, flat_inits, regions=2)
    old_before, old_after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    before = new.regions[0].blocks.append(*[v.type for v in flat_inits])
    after = new.regions[1].blocks.append(*result_types)
    _unflatten(ctx, list(old_before.arguments), list(before.arguments), counts)
    lower_block(ctx, old_before, before)
    condition = block_ops(old_before)[-1]
    with ir.InsertionPoint(before):
        create_op("scf.condition", [], [ctx.lowered(condition.operands[0])] + _flatten(ctx, list(condition.operands)[1:]))
    _unflatten(ctx, list(old_after.arguments), list(after.arguments), result_counts)
    lower_block(ctx, old_after, after)
    with ir.InsertionPoint(after):
        create_op("scf.yield", [], _flatten(ctx, block_ops(old_after)[-1].operands))
    _unflatten(ctx, results, list(new.results), result_counts)


@lowers("scf.if")
def lower_if(ctx: LoweringContext, op: ir.Operation) -> None:
    results = list(op.results)
    then_block = op.regions[0].blocks[0]
    then_yield = block_ops(then_block)[-1]
    counts = _counts(ctx, then_yield.operands) if results else []
    result_types = []
    for value, count in zip(results, counts):
        result_types.extend([ctx.element_type(value.type)] * count)
    new = create_op("scf.if", result_types, [ctx.lowered(op.operands[0])], regions=2)
    for old_region, new_region in zip(op.regions, new.regions):
        if not len(old_region.blocks):
            continue
        old_block = old_region.blocks[0]
        block = new_region.blocks.append()
        lower_block(ctx, old_block, block)
        with ir.InsertionPoint(block):
            create_op("scf.yield", [], _flatten(ctx, block_ops(old_block)[-1].operands))
    if results:
        _unflatten(ctx, results, list(new.results), counts)


@lowers("func.return")
def lower_return(ctx: LoweringContext, op: ir.Operation) -> None:
    create_op("llvm.return", [], [])
