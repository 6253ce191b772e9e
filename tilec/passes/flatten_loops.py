"""tile-flatten-loops: fuse a loop marked `tl.range(..., flatten=True)` with its one inner
loop, so that the tile loop of a persistent kernel and its K loop become one loop.

    for t in range(lb, ub, st):              # flatten=True
        P(t)                                 # pure: tile coordinates, acc = zeros
        r = for k in range(klb, kub, kst) iter_args(x = init):
            B(t, k, x)
        E(t, r)                              # epilogue: stores
becomes, where the inner loop runs at least once,

    s0 = S(lb)                               # the first tile's scalars
    for i in range(n_outer * n_inner) iter_args(o, x, s = s0, t = lb, k = klb):
        R(s)                                 # the rest of P, from the carried scalars
        x' = k == klb ? init : x             # a select per carried value
        y = B(s, k, x')
        last = k + kst >= kub
        o' = if last { E(s, y); yield o_next } else { yield o }
        s' = if last { yield S(t + st) } else { yield s }
        yield o', y, s', last ? t + st : t, last ? klb : k + kst

P splits three ways. S: the scalars computed from the tile alone (its row and column,
with their divisions), computed once per tile and carried; the next tile's `if` is pure,
so tilegpu-pipeline clones it for the steps it issues ahead. The ops only the epilogue
reads move into the epilogue's `if`. R, the rest (constants, `tl.zeros`, what follows
the outer loop's carried values, a tile's tensors the epilogue reads), runs every step:
tensors are rebuilt from the carried scalars in the layouts their readers want, where
a carried tensor would keep one layout and be converted every step.

Once there is one loop, tilegpu-pipeline streams its loads across tile boundaries: the
next tile's first K tiles are in flight while this one's epilogue stores, and the rings
are made and released once, not per tile. A dot accumulator reset by the select
(the `acc = tl.zeros(...)` of P) costs nothing on wgmma: the first instruction of a tile
ignores the accumulator at run time (dot_wgmma.py), and the group may stay in flight
across iterations (tilegpu-pipeline waits for it inside E only).

Flattened only when: the body holds exactly one scf.for, at its top level; the ops
before it are pure and region-free, and none that depends on the tile makes a tensor
the inner loop reads (a pointer kernel's row and column offsets: rebuilt every step,
such kernels ran 14-25% slower fused than nested on an H200); the inner loop's bounds
are defined outside the outer loop.

Where the inner loop runs no iteration at all (K = 0), the program runs the outer loop
with the inner one's initial values instead (an scf.if picks the form at run time).

On by default (config.flatten_loops; TILEC_FLATTEN_LOOPS=0 keeps the nest). On an H200
beside Triton 3.6, once tilegpu-pipeline issued a fused loop's refills right after its
dot and before the next-tile `if`, the fused descriptor-persistent matmuls ran at
1.02-1.04x Triton at K = 1024 (nested 0.96-0.99x), 0.95-1.03x at 8192^3 (nested
0.98-1.02x), and tutorial 09's at 8192x8192x512 0.99-1.01x (nested 0.90-0.94x).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..dialects import tile
from ..dialects._mlir import block_ops, is_tensor, tensor_type
from ..dialects.op_facts import is_pure, reads_memory
from ..dialects.tile import FLATTEN_ATTR, WARP_SPECIALIZE_ATTR
from . import register_pass
from .utils import clone_reading, functions, walk_postorder
from .utils import user_of as _user


def _inner_loop(outer: ir.Operation) -> ir.Operation | None:
    """The one scf.for at the top of `outer`'s body, when the body can be flattened."""
    ops = block_ops(outer.regions[0].blocks[0])
    loops = [op for op in ops if op.name == "scf.for"]
    if len(loops) != 1:
        return None
    inner = loops[0]
    if any(op.name == "scf.for" for op in walk_postorder(inner) if op != inner):
        return None  # a deeper nest: only the innermost pair is fused
    prologue = ops[:ops.index(inner)]
    for op in prologue:
        if op.regions or not is_pure(op) or reads_memory(op):
            return None
    body = outer.regions[0].blocks[0]
    inner_ops = set(walk_postorder(inner))
    for op in _tile_ops(prologue, body.arguments[0], list(body.arguments)[1:]):
        if any(is_tensor(r.type) and any(_user(use) in inner_ops for use in r.uses) for r in op.results):
            return None  # a pointer kernel's tile offsets: measured slower fused (below)
    for bound in list(inner.operands)[:3]:
        if _defined_inside(bound, outer):
            return None
    return inner


def _defined_inside(value: ir.Value, op: ir.Operation) -> bool:
    owner = value.owner.operation if isinstance(value, ir.OpResult) else value.owner.owner
    while owner is not None:
        if owner == op:
            return True
        owner = owner.parent
    return False


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
    for_epilogue = _read_only_by(prologue, epilogue)
    # Scalars only: a tile's tensors (its rows' offsets) are rebuilt every step from the
    # carried scalars, in the layouts their readers want, instead of being carried in one
    # layout and converted through shared memory every step.
    carried_ops = [op for op in _tile_ops(prologue, body.arguments[0], list(body.arguments)[1:])
                   if op not in for_epilogue and not any(is_tensor(r.type) for r in op.results)]
    carried_values = _read_outside(carried_ops)
    carried_ops = [op for op in prologue if op in set(carried_ops + _read_only_by(prologue, carried_ops))]
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
        if WARP_SPECIALIZE_ATTR in plain.attributes:  # no inner loop left to specialise
            plain.attributes.__delitem__(WARP_SPECIALIZE_ATTR)
        plain_inner = next(op for op in block_ops(plain.regions[0].blocks[0]) if op.name == "scf.for")
        for result, init in zip(plain_inner.results, list(plain_inner.operands)[3:]):
            result.replace_all_uses_with(init)
        plain_inner.erase()
        scf.YieldOp(list(plain.results))

    with ir.InsertionPoint(choice.then_block), outer.location:
        # The first tile's values, computed before the loop (the prologue at t = lb).
        first_tile = {body.arguments[0]: lb, **dict(zip(list(body.arguments)[1:], outer_inits))}
        for op in prologue:
            clone_reading(op, first_tile)
        inits = [first_tile.get(init, init) for init in inner_inits]
        zero, one = arith.ConstantOp(i64, 0).result, arith.ConstantOp(i64, 1).result
        flat = scf.ForOp(zero, total, one, outer_inits + inits + [first_tile[v] for v in carried_values] + [lb, klb])
        for index in range(len(outer.attributes)):  # tile.num_stages and the like
            attribute = outer.attributes[index]
            if attribute.name != FLATTEN_ATTR:
                flat.operation.attributes[attribute.name] = attribute.attr
        scf.YieldOp(list(flat.results)[:len(result_types)])
    flat_body = flat.regions[0].blocks[0]
    args = list(flat_body.arguments)[1:]
    outer_args = args[:len(outer_inits)]
    inner_args = args[len(outer_inits):len(outer_inits) + len(inner_inits)]
    tile_args = args[len(outer_inits) + len(inner_inits):-2]
    t, k = args[-2], args[-1]

    # The outer body's values become the flat loop's; the tile's values, its carried ones.
    body.arguments[0].replace_all_uses_with(t)
    for old, new in zip(list(body.arguments)[1:], outer_args):
        old.replace_all_uses_with(new)
    carried_set = set(carried_ops)
    for value, arg in zip(carried_values, tile_args):
        for use in list(value.uses):
            if _user(use) not in carried_set:
                _user(use).operands[use.operand_number] = arg
    for op in prologue:
        op.detach_from_parent()
        flat_body.append(op)
    in_body = dict(zip(carried_values, tile_args))
    with ir.InsertionPoint(flat_body), inner.location:
        first = arith.cmpi(arith.CmpIPredicate.eq, k, klb)
        fresh = [_select(first, in_body.get(init, init), carried) for init, carried in zip(inner_inits, inner_args)]
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
    _sink_into(for_epilogue, tail)
    # The next tile's values, computed once, on a tile's last step: a pure `if` that
    # tilegpu-pipeline clones for the steps it issues ahead.
    with ir.InsertionPoint(flat_body), outer.location:
        upcoming = scf.IfOp(last, [v.type for v in carried_values], has_else=True)
    with ir.InsertionPoint(upcoming.then_block), outer.location:
        t_ahead = arith.addi(t, st)
    for op in carried_ops:
        op.detach_from_parent()
        upcoming.then_block.append(op)
        for index, operand in enumerate(op.operands):
            if operand == t:
                op.operands[index] = t_ahead
    with ir.InsertionPoint(upcoming.then_block), outer.location:
        scf.YieldOp(carried_values)
    with ir.InsertionPoint(upcoming.else_block), outer.location:
        scf.YieldOp(tile_args)
    with ir.InsertionPoint(flat_body), outer.location:
        t_next = arith.select(last, arith.addi(t, st), t)
        k_wrapped = arith.select(last, klb, k_next)
        scf.YieldOp(list(tail.results) + inner_yielded + list(upcoming.results) + [t_next, k_wrapped])

    for result, value in zip(outer.results, choice.results):
        result.replace_all_uses_with(value)
    outer.erase()
    return True


def _user_of_result(value: ir.Value) -> ir.Operation:
    return value.owner.operation if hasattr(value.owner, "operation") else value.owner


def _tile_ops(prologue: list[ir.Operation], iv: ir.Value, carried: list[ir.Value]) -> list[ir.Operation]:
    """The prologue's ops that depend on the tile (the outer induction variable) and not
    on the outer loop's carried values, in order: a function of the tile alone, so the
    next tile's values can be computed ahead. The others are the same for every tile
    (constants, sizes) or follow the carried values (computed every step, as before)."""
    on_tile: set[ir.Operation] = set()
    on_carried: set[ir.Operation] = set()
    for op in prologue:
        sources = [_user_of_result(v) for v in op.operands if isinstance(v, ir.OpResult)]
        if any(v in carried for v in op.operands) or any(s in on_carried for s in sources):
            on_carried.add(op)
        elif any(v == iv for v in op.operands) or any(s in on_tile for s in sources):
            on_tile.add(op)
    return [op for op in prologue if op in on_tile]


def _read_only_by(ops: list[ir.Operation], readers: list[ir.Operation]) -> list[ir.Operation]:
    """Those of `ops` read by `readers` (ops nested in them included) and nothing else,
    directly or through each other; last first."""
    inside = set(readers)
    for op in readers:
        inside.update(walk_postorder(op))
    chosen: list[ir.Operation] = []
    for op in reversed(ops):
        if op in inside:
            continue
        users = [_user(use) for result in op.results for use in result.uses]
        if users and all(user in inside for user in users):
            chosen.append(op)
            inside.add(op)
    return chosen


def _read_outside(ops: list[ir.Operation]) -> list[ir.Value]:
    """The results of `ops` that something besides `ops` reads."""
    own = set(ops)
    return [result for op in ops for result in op.results
            if any(_user(use) not in own for use in result.uses)]


def _sink_into(ops: list[ir.Operation], tail: ir.Operation) -> None:
    """Moves the tile's ops that only the epilogue reads (the store's row and column
    offsets and masks) into its `if`, so they run once per tile, not every K step."""
    then_block = tail.regions[0].blocks[0]
    for op in ops:  # last first: each goes before those already moved
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
