"""Lowering of tile.atomic_rmw and tile.atomic_cas to PTX `atom.global`.

Each element is updated by exactly one thread: a layout may hold an element in several
threads (replicas), and every replica performing the atomic would apply it several
times. The owner is the replica whose duplicate lane and warp bits are zero (the free
variables of the layout); a scalar atomic is performed by thread 0, and a register
repeating an element its thread already holds reuses that register's result. When the
old values are used and other threads hold replicas (`publishes_old_values`), the owners
publish them through the op's scratch space in shared memory and every replica reads
its copy back.

Float max/min use integer atomics on the bit patterns, chosen by the value's sign bit (a
float with the sign bit clear orders like its signed integer bits, one with it set --
-0.0 included -- inversely like its unsigned bits), as PTX has no float atom.max/min.
"""
from __future__ import annotations

import math

from mlir import ir

from ...dialects._mlir import create_op, is_tensor, operand_groups, str_attr_value
from ...dialects.tile import shape_of
from ...layout.encodings import LANE, REGISTER, WARP
from ..utils import has_uses
from .context import LoweringContext, layout_of_value, lowers
from .shared_memory import element_bytes, from_shared, scratch_bytes, store_type, to_shared
from .shape import row_major

_INT_SUFFIX = {"add": "u", "and": "b", "or": "b", "xor": "b", "xchg": "b", "max": "s", "min": "s",
               "umax": "u", "umin": "u"}
_PTX_OP = {"add": "add", "and": "and", "or": "or", "xor": "xor", "xchg": "exch", "max": "max", "min": "min",
           "umax": "max", "umin": "min"}


def _letter(bits: int) -> str:
    return {16: "h", 32: "r", 64: "l"}[bits]


def _qualifiers(op: ir.Operation) -> str:
    return f".{str_attr_value(op, 'sem')}.{str_attr_value(op, 'scope')}.global"


def _owned_registers(ctx: LoweringContext, ptr: ir.Value) -> tuple[ir.Value | None, list[int]]:
    """(i1: this thread performs the atomics of its elements, None: every thread does;
    for each register, the register whose atomic gives its old value). A register that
    repeats an element the thread already holds takes that register's old value."""
    predicate, registers = ctx.owners(ptr)
    if not is_tensor(ptr.type):
        return predicate, [0]
    layout = ctx.layout(ptr)
    first: dict[tuple[int, ...], int] = {}
    for r in registers:
        first.setdefault(layout.apply({REGISTER: r}), r)
    return predicate, [first[layout.apply({REGISTER: r})] for r in range(layout.in_dim_size(REGISTER))]


def _as_bits(ctx: LoweringContext, value: ir.Value, bits: int) -> ir.Value:
    int_ty = ir.IntegerType.get_signless(bits)
    return value if value.type == int_ty else create_op("llvm.bitcast", [int_ty], [value]).result


def _from_bits(ctx: LoweringContext, value: ir.Value, ty: ir.Type) -> ir.Value:
    return value if value.type == ty else create_op("llvm.bitcast", [ty], [value]).result


def _rmw_asm(kind: str, ty: ir.Type, qualifiers: str) -> str:
    bits = ty.width
    if kind == "fadd":
        suffix = {16: "noftz.f16" if isinstance(ty, ir.F16Type) else "noftz.bf16", 32: "f32", 64: "f64"}[bits]
        return f"mov.b{bits} $0, 0;\n@$3 atom{qualifiers}.add.{suffix} $0, [$1], $2;"
    if kind in ("fmax", "fmin"):
        # The sign bit chooses (as in Triton): a value with it clear (+0.0, +inf, a
        # positive NaN) orders like its signed integer bits, one with it set (-0.0
        # included) inversely like its unsigned bits.
        first, second = ("max", "min") if kind == "fmax" else ("min", "max")
        return ("{ .reg .pred nonneg, a, b;\n"
                f"setp.ge.s{bits} nonneg, $2, 0;\n"
                "and.pred a, nonneg, $3;\n"
                "not.pred b, nonneg;\n"
                "and.pred b, b, $3;\n"
                f"mov.b{bits} $0, 0;\n"
                f"@a atom{qualifiers}.{first}.s{bits} $0, [$1], $2;\n"
                f"@b atom{qualifiers}.{second}.u{bits} $0, [$1], $2;\n"
                "}")
    return f"mov.b{bits} $0, 0;\n@$3 atom{qualifiers}.{_PTX_OP[kind]}.{_INT_SUFFIX[kind]}{bits} $0, [$1], $2;"


def publishes_old_values(op: ir.Operation) -> bool:
    """The old values go through shared memory: they are used, and threads other than
    the owners need them (a scalar atomic is thread 0's; a tensor's elements are
    replicated across lanes or warps)."""
    ptr = op.operands[0]  # both atomics take the pointers first
    if not has_uses(op.results[0]):
        return False
    if not is_tensor(ptr.type):
        return True
    free = layout_of_value(ptr).free_variable_masks()
    return bool(free.get(LANE, 0) or free.get(WARP, 0))


@scratch_bytes("tile.atomic_rmw", "tile.atomic_cas")
def atomic_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    """One slot per element (row-major) when the old values are published."""
    if not publishes_old_values(op):
        return 0
    return math.prod(shape_of(op.operands[0].type)) * element_bytes(op.results[0].type)


@lowers("tile.atomic_rmw")
def lower_atomic_rmw(ctx: LoweringContext, op: ir.Operation) -> None:
    ptr, value, mask = (g[0] if g else None for g in operand_groups(op))
    kind = str_attr_value(op, "kind")
    ty = ctx.element_type(op.results[0].type)
    bits = ty.width
    asm = _rmw_asm(kind, ty, _qualifiers(op))
    letter = _letter(bits)
    value_letter = letter if kind == "fadd" else _letter(bits)
    owner, source = _owned_registers(ctx, ptr)
    ptrs, values = ctx.elements(ptr), ctx.elements(value)
    masks = ctx.elements(mask) if mask is not None else [None] * len(ptrs)
    old: list[ir.Value] = []
    for index, (p, v, m) in enumerate(zip(ptrs, values, masks)):
        if source[index] != index:
            old.append(old[source[index]])
            continue
        pred = _and(ctx, owner, m)
        operand = v if kind == "fadd" else _as_bits(ctx, v, bits)
        result_type = ty if kind == "fadd" else ir.IntegerType.get_signless(bits)
        (r,) = ctx.inline_asm(asm, f"={letter},l,{value_letter},b", [p, operand, pred], [result_type])
        old.append(_from_bits(ctx, r, ty))
    _publish(ctx, op, ptr, owner, old)


@lowers("tile.atomic_cas")
def lower_atomic_cas(ctx: LoweringContext, op: ir.Operation) -> None:
    ptr, cmp, value = op.operands
    ty = ctx.element_type(op.results[0].type)
    bits = ty.width
    letter = _letter(bits)
    asm = f"mov.b{bits} $0, 0;\n@$4 atom{_qualifiers(op)}.cas.b{bits} $0, [$1], $2, $3;"
    owner, source = _owned_registers(ctx, ptr)
    int_ty = ir.IntegerType.get_signless(bits)
    old: list[ir.Value] = []
    for index, (p, c, v) in enumerate(zip(ctx.elements(ptr), ctx.elements(cmp), ctx.elements(value))):
        if source[index] != index:
            old.append(old[source[index]])
            continue
        pred = owner if owner is not None else ctx.const(1, ctx.i1)
        (r,) = ctx.inline_asm(asm, f"={letter},l,{letter},{letter},b",
                              [p, _as_bits(ctx, c, bits), _as_bits(ctx, v, bits), pred], [int_ty])
        old.append(_from_bits(ctx, r, ty))
    _publish(ctx, op, ptr, owner, old)


def _and(ctx: LoweringContext, a: ir.Value | None, b: ir.Value | None) -> ir.Value:
    if a is None and b is None:
        return ctx.const(1, ctx.i1)
    if a is None or b is None:
        return a if b is None else b
    return ctx.arith("andi", a, b)


def _publish(ctx: LoweringContext, op: ir.Operation, ptr: ir.Value, owner: ir.Value | None,
             old: list[ir.Value]) -> None:
    """Gives every replica the old value its owner read (only when the result is used)."""
    result = op.results[0]
    if not publishes_old_values(op):
        ctx.set(result, old if is_tensor(result.type) else old[0])
        return
    assert owner is not None, "an atomic with replicas has an owner predicate"
    elem_ty = old[0].type
    size = element_bytes(result.type)
    if is_tensor(ptr.type):
        shape = shape_of(ptr.type)
        coords = ctx.element_coordinates(ctx.layout(ptr))
        slots = [row_major(ctx, c, shape) for c in coords]
        ctx.reserve_shared(math.prod(shape) * size)
    else:
        slots = [ctx.const(0)]
        ctx.reserve_shared(size)
    for value, slot in zip(old, slots):
        address = ctx.shared_address(ctx.arith("muli", slot, ctx.const(size)))
        stored = to_shared(ctx, value)
        ctx.inline_asm(f"@$2 st.shared.b{stored.type.width} [$0], $1;",
                       f"l,{_letter(max(16, stored.type.width))},b",
                       [address, stored if stored.type.width >= 16 else ctx.arith("extui", stored, result_type=ctx.i16),
                        owner], [])
    ctx.barrier()
    values = []
    for slot in slots:
        address = ctx.shared_address(ctx.arith("muli", slot, ctx.const(size)))
        values.append(from_shared(ctx, create_op("llvm.load", [store_type(ctx, elem_ty)], [address]).result, elem_ty))
    ctx.set(result, values if is_tensor(result.type) else values[0])


