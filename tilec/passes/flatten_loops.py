"""tile-flatten-loops: fuse a loop marked `tl.range(..., flatten=True)` with its one inner
loop, so that the tile loop of a persistent kernel and its K loop become one loop.

    for t in range(lb, ub, st):              # flatten=True
        P(t)                                 # pure: tile coordinates, acc = zeros
        r = for k in range(klb, kub, kst) iter_args(x = init):
            B(t, k, x)
        E(t, r)                              # epilogue: stores
becomes, where the inner loop runs at least once,

    for i in range(n_outer * n_inner) iter_args(o, x, t = lb, k = klb):
        P(t)
        x' = k == klb ? init : x             # a select per carried value
        y = B(t, k, x')
        last = k + kst >= kub
        o' = if last { E(t, y); yield o_next } else { yield o }
        yield o', y, last ? t + st : t, last ? klb : k + kst

Once there is one loop, tilegpu-pipeline streams its loads across tile boundaries: the
next tile's first K tiles are in flight while this one's epilogue stores, and the rings
are made and released once, not per tile. A dot accumulator reset by the select (the
`acc = tl.zeros(...)` of P) costs nothing on wgmma: the first instruction of a tile
ignores the accumulator at run time (dot_wgmma.py), and the group may stay in flight
across iterations (tilegpu-pipeline waits for it inside E only).

Flattened only when: the body holds exactly one scf.for, at its top level; the ops
before it are pure and region-free (those the inner body reads are computed every
iteration; those only the epilogue reads move into its `if`), and no tensor they make is
read by the inner body (a pointer kernel's row and column offsets: rebuilding them every
K step costs more than the flattening gains; such a nest stays as it is); the inner
loop's bounds are defined outside the outer loop; its carried values are scalars or
tensors of numbers (the placeholder a first iteration overwrites must be buildable).
Where the inner loop runs no iteration at all (K = 0), the program runs the outer loop
with the inner one's initial values instead (an scf.if picks the form at run time).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..dialects import tile
from ..dialects._mlir import block_ops, is_tensor, tensor_type
from ..dialects.op_facts import is_pure, reads_memory
from ..dialects.tile import FLATTEN_ATTR
from . import register_pass
from .utils import functions, walk_postorder


def _inner_loop(outer: ir.Operation) -> ir.Operation | None:
    """The one scf.for at the top of `outer`'s body, when the body can be flattened."""
    ops = block_ops(outer.regions[0].blocks[0])
    loops = [op for op in ops if op.name == "scf.for"]
    if len(loops) != 1:
        return None
    inner = loops[0]
    if any(op.name == "scf.for" for op in walk_postorder(inner) if op != inner):
        return None  # a deeper nest: only the innermost pair is fused
    inner_ops = set(walk_postorder(inner)) - {inner}
    for op in ops[:ops.index(inner)]:
        if op.regions or not is_pure(op) or reads_memory(op):
            return None
        if any(is_tensor(r.type) and _used_by(r, inner_ops) for r in op.results):
            return None  # a tile's tensors (its rows' addresses) would be rebuilt every K step
    for bound in list(inner.operands)[:3]:
        if _defined_inside(bound, outer):
            return None
    for arg in list(inner.regions[0].blocks[0].arguments)[1:]:
        if not _has_placeholder(arg.type):
            return None
    return inner


def _used_by(value: ir.Value, ops: set) -> bool:
    for use in value.uses:
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if user in ops:
            return True
    return False


def _defined_inside(value: ir.Value, op: ir.Operation) -> bool:
    owner = value.owner.operation if isinstance(value, ir.OpResult) else value.owner.owner
    while owner is not None:
        if owner == op:
            return True
        owner = owner.parent
    return False


def _number_type(ty: ir.Type) -> bool:
    return isinstance(ty, (ir.IntegerType, ir.FloatType))


def _has_placeholder(ty: ir.Type) -> bool:
    return _number_type(tensor_type(ty).element_type if is_tensor(ty) else ty)


def _placeholder(ty: ir.Type) -> ir.Value:
    """A value of type `ty` (zero) for a carried value the first iteration overwrites."""
    scalar = tensor_type(ty).element_type if is_tensor(ty) else ty
    zero = arith.ConstantOp(scalar, 0.0 if isinstance(scalar, ir.FloatType) else 0).result
    return tile.splat(zero, ty) if is_tensor(ty) else zero


def _select(condition: ir.Value, if_true: ir.Value, if_false: ir.Value) -> ir.Value:
    if is_tensor(if_true.type):
        ty = tensor_type(if_true.type)
        condition = tile.splat(condition, ir.RankedTensorType.get(list(ty.shape), condition.type, ty.encoding))
    return arith.select(condition, if_true, if_false)


def _trip_count(lower: ir.Value, upper: ir.Value, step: ir.Value) -> ir.Value:
    """max(upper - lower, 0) ceil-divided by the (positive) step, in i64."""
    i64 = ir.IntegerType.get_signless(64)
    lower, upper, step = (v if v.type == i64 else arith.extsi(i64, v) for v in (lower, upper, step))
    span = arith.maxsi(arith.subi(upper, lower), arith.ConstantOp(i64, 0).result)
    one = arith.ConstantOp(i64, 1).result
    return arith.divsi(arith.addi(span, arith.subi(step, one)), step)


def flatten(outer: ir.Operation) -> bool:
    inner = _inner_loop(outer)
    if inner is None:
        return False
    body = outer.regions[0].blocks[0]
    inner_body = inner.regions[0].blocks[0]
    ops = block_ops(body)
    prologue, epilogue, outer_yield = ops[:ops.index(inner)], ops[ops.index(inner) + 1:-1], ops[-1]
    lb, ub, st = list(outer.operands)[:3]
    klb, kub, kst = list(inner.operands)[:3]
    outer_inits, inner_inits = list(outer.operands)[3:], list(inner.operands)[3:]
    result_types = [r.type for r in outer.results]
    i64 = ir.IntegerType.get_signless(64)

    with ir.InsertionPoint(outer), outer.location:
        n_inner = _trip_count(klb, kub, kst)
        total = arith.muli(_trip_count(lb, ub, st), n_inner)
        runs = arith.cmpi(arith.CmpIPredicate.sgt, n_inner, arith.ConstantOp(i64, 0).result)
        choice = scf.IfOp(runs, result_types, has_else=True)

    # Where the inner loop runs no iteration: the outer loop with its results as inits.
    with ir.InsertionPoint(choice.else_block), outer.location:
        plain = outer.clone()
        plain.attributes.__delitem__(FLATTEN_ATTR)
        plain_inner = next(op for op in block_ops(plain.regions[0].blocks[0]) if op.name == "scf.for")
        for result, init in zip(plain_inner.results, list(plain_inner.operands)[3:]):
            result.replace_all_uses_with(init)
        plain_inner.erase()
        scf.YieldOp(list(plain.results))

    with ir.InsertionPoint(choice.then_block), outer.location:
        placeholders = [init if not _defined_inside(init, outer) else _placeholder(init.type) for init in inner_inits]
        zero, one = arith.ConstantOp(i64, 0).result, arith.ConstantOp(i64, 1).result
        flat = scf.ForOp(zero, total, one, outer_inits + placeholders + [lb, klb])
        for index in range(len(outer.attributes)):  # tile.num_stages and the like
            attribute = outer.attributes[index]
            if attribute.name != FLATTEN_ATTR:
                flat.operation.attributes[attribute.name] = attribute.attr
        scf.YieldOp(list(flat.results)[:len(result_types)])
    flat_body = flat.regions[0].blocks[0]
    args = list(flat_body.arguments)[1:]
    outer_args, inner_args = args[:len(outer_inits)], args[len(outer_inits):len(outer_inits) + len(inner_inits)]
    t, k = args[-2], args[-1]

    # The outer body's values become the flat loop's.
    body.arguments[0].replace_all_uses_with(t)
    for old, new in zip(list(body.arguments)[1:], outer_args):
        old.replace_all_uses_with(new)
    for op in prologue:
        op.detach_from_parent()
        flat_body.append(op)
    with ir.InsertionPoint(flat_body), inner.location:
        first = arith.cmpi(arith.CmpIPredicate.eq, k, klb)
        fresh = [_select(first, init, carried) for init, carried in zip(inner_inits, inner_args)]
    inner_body.arguments[0].replace_all_uses_with(k)
    for old, new in zip(list(inner_body.arguments)[1:], fresh):
        old.replace_all_uses_with(new)
    inner_ops = block_ops(inner_body)
    for op in inner_ops[:-1]:
        op.detach_from_parent()
        flat_body.append(op)
    inner_yielded = list(inner_ops[-1].operands)
    for result, value in zip(inner.results, inner_yielded):
        result.replace_all_uses_with(value)

    with ir.InsertionPoint(flat_body), outer.location:
        k_next = arith.addi(k, kst)
        last = arith.cmpi(arith.CmpIPredicate.sge, k_next, kub)
        tail = scf.IfOp(last, result_types, has_else=True)
    for op in epilogue:
        op.detach_from_parent()
        tail.then_block.append(op)
    with ir.InsertionPoint(tail.then_block), outer.location:
        scf.YieldOp(list(outer_yield.operands))
    with ir.InsertionPoint(tail.else_block), outer.location:
        scf.YieldOp(outer_args)
    _sink_into(prologue, tail)
    with ir.InsertionPoint(flat_body), outer.location:
        t_next = arith.select(last, arith.addi(t, st), t)
        k_wrapped = arith.select(last, klb, k_next)
        scf.YieldOp(list(tail.results) + inner_yielded + [t_next, k_wrapped])

    for result, value in zip(outer.results, choice.results):
        result.replace_all_uses_with(value)
    outer.erase()
    return True


def _sink_into(prologue: list[ir.Operation], tail: ir.Operation) -> None:
    """Moves the outer body's ops that only the epilogue reads (the store's row and column
    offsets and masks) into its `if`, so they run once per tile, not every K step."""
    then_block = tail.regions[0].blocks[0]
    for op in reversed(prologue):
        users = [use.owner.operation if hasattr(use.owner, "operation") else use.owner
                 for result in op.results for use in result.uses]
        if not users or not all(_inside(user, tail) for user in users):
            continue
        op.move_before(block_ops(then_block)[0])


def _inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    current = op.parent
    while current is not None:
        if current == ancestor:
            return True
        current = current.parent
    return False


@register_pass("tile-flatten-loops", "Fuse a tl.range(..., flatten=True) loop with its inner loop")
def flatten_loops(module_op: ir.Operation) -> None:
    for fn in functions(module_op):
        for op in [op for op in walk_postorder(fn) if op.name == "scf.for" and FLATTEN_ATTR in op.attributes]:
            flatten(op)
