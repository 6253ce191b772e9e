"""Lowering of the atomics: tile.atomic_rmw and tile.atomic_cas to PTX `atom.global`,
tile.atomic_load and tile.atomic_store to `ld`/`st` with a memory order and scope
(`ld.acquire.gpu.global.b32`), tile.atomic_poll to a spin loop in one thread per element.

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
-0.0 included -- inversely like its unsigned bits), as PTX has no float atom.max/min;
fp16 and bf16 max/min, which have no 16-bit integer atom either, are compare-and-swap
loops ordering the bits the same way. On sm_90, fp32 adds of consecutive elements a
thread holds (aligned, under one mask value) go 2 or 4 at a time (`atom.add.v4.f32`).

Atomic loads, stores and polls follow the same ownership rule, and order the rest of
the program with barriers, as CUTLASS's semaphores do: a release store comes after a
barrier (every thread's earlier writes precede it), an acquire load or a poll is
followed by one (every thread's later accesses follow it; publishing the values through
shared memory already has one). A poll's owner spins with relaxed loads (and reads
%globaltimer for the timeout, measured from the op's start for all its elements),
then an acquire poll fences (`fence.acq_rel.<scope>`) once it matched.
"""
from __future__ import annotations

import math

from mlir import ir

from ...dialects._mlir import create_op, is_tensor, operand_groups, str_attr_value
from ...dialects.tile import element_type, pointee_type, shape_of
from ...layout.encodings import LANE, REGISTER, WARP
from ..utils import has_uses
from .context import LoweringContext, layout_of_value, lowers, memory_type
from .shared_memory import element_bytes, from_shared, scratch_bytes, store_type, to_shared
from .shape import row_major

_INT_SUFFIX = {"add": "u", "and": "b", "or": "b", "xor": "b", "xchg": "b", "max": "s", "min": "s",
               "umax": "u", "umin": "u"}
_PTX_OP = {"add": "add", "and": "and", "or": "or", "xor": "xor", "xchg": "exch", "max": "max", "min": "min",
           "umax": "max", "umin": "min"}


def _letter(bits: int) -> str:
    return {16: "h", 32: "r", 64: "l"}[bits]


def _qualifiers(op: ir.Operation) -> str:
    """The state space, scope and memory order, in the order Triton prints them (ptxas
    takes them in any order), so PTX searched for Triton's text reads the same."""
    return f".global.{str_attr_value(op, 'scope')}.{str_attr_value(op, 'sem')}"


def _cas_qualifiers(op: ir.Operation) -> str:
    """As `_qualifiers`, for atom.cas, which Triton prints memory order first."""
    return f".global.{str_attr_value(op, 'sem')}.{str_attr_value(op, 'scope')}"


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
    if kind in ("fmax", "fmin") and bits == 16:
        return _half_max_min_asm(kind, qualifiers)
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


def _half_max_min_asm(kind: str, qualifiers: str) -> str:
    """fp16/bf16 max/min, which no atom instruction does: a compare-and-swap loop on the
    16 bits, ordering by them as the 32-bit form does (the value's sign bit chooses the
    signed or the inverse unsigned order)."""
    first, second = ("max", "min") if kind == "fmax" else ("min", "max")
    return ("{ .reg .pred nonneg, again;\n"
            ".reg .b16 old, by_signed, by_unsigned, want, seen;\n"
            "mov.b16 old, 0;\n"
            "@!$3 bra done;\n"
            "setp.ge.s16 nonneg, $2, 0;\n"
            "ld.relaxed.gpu.global.b16 old, [$1];\n"
            "retry:\n"
            f"{first}.s16 by_signed, old, $2;\n"
            f"{second}.u16 by_unsigned, old, $2;\n"
            "selp.b16 want, by_signed, by_unsigned, nonneg;\n"
            f"atom{qualifiers}.cas.b16 seen, [$1], old, want;\n"
            "setp.ne.b16 again, seen, old;\n"
            "mov.b16 old, seen;\n"
            "@again bra retry;\n"
            "done:\n"
            "mov.b16 $0, old;\n"
            "}")


def publishes_old_values(op: ir.Operation) -> bool:
    """The old values go through shared memory: they are used, and threads other than
    the owners need them (a scalar atomic is thread 0's; a tensor's elements are
    replicated across lanes or warps)."""
    ptr = op.operands[0]  # every atomic takes the pointers first
    if not has_uses(op.results[0]):
        return False
    if op.name == "tile.atomic_poll" and len(op.operands) < 3:
        return False  # without a timeout, a poll returns only once every element matched: all true
    if not is_tensor(ptr.type):
        return True
    free = layout_of_value(ptr).free_variable_masks()
    return bool(free.get(LANE, 0) or free.get(WARP, 0))


@scratch_bytes("tile.atomic_rmw", "tile.atomic_cas", "tile.atomic_load", "tile.atomic_poll")
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
    vec = _fadd_vector_width(ctx, op, kind, ty, ptr, mask)
    old: list[ir.Value] = []
    for index, (p, v, m) in enumerate(zip(ptrs, values, masks)):
        if source[index] != index:
            old.append(old[source[index]])
            continue
        if vec > 1:
            if index % vec == 0:  # a run of `vec` registers, one instruction (its owner owns the run)
                old += _vector_fadd(ctx, op, vec, p, values[index:index + vec], _and(ctx, owner, m))
            continue
        pred = _and(ctx, owner, m)
        operand = v if kind == "fadd" else _as_bits(ctx, v, bits)
        result_type = ty if kind == "fadd" else ir.IntegerType.get_signless(bits)
        (r,) = ctx.inline_asm(asm, f"={letter},l,{value_letter},b", [p, operand, pred], [result_type])
        old.append(_from_bits(ctx, r, ty))
    _publish(ctx, op, ptr, owner, old)


def vector_fadd(kind: str, ty: ir.Type, target) -> bool:
    """Whether atomics of this kind and element type go several at a time on `target`."""
    from ...target import VECTOR_ATOMICS_PTX_VERSION
    return (kind == "fadd" and isinstance(ty, ir.F32Type) and target.at_least(90)
            and target.ptx_version >= VECTOR_ATOMICS_PTX_VERSION)


def _fadd_vector_width(ctx: LoweringContext, op: ir.Operation, kind: str, ty: ir.Type, ptr: ir.Value,
                       mask: ir.Value | None) -> int:
    """How many consecutive fp32 registers one `atom.add.v2/.v4.f32` updates (sm_90 has
    vector atomics for fp32; Triton's split-K epilogue is made of them), else 1."""
    if not (vector_fadd(kind, ty, ctx.target) and is_tensor(ptr.type)):
        return 1
    from .memory import vector_width
    return min(4, vector_width(ctx, ptr, mask, 4))


def _vector_fadd(ctx: LoweringContext, op: ir.Operation, vec: int, ptr: ir.Value, values: list[ir.Value],
                 predicate: ir.Value) -> list[ir.Value]:
    """One vector atomic add of `values` at `ptr` (`vec` consecutive fp32); the old values."""
    olds = ", ".join(f"${i}" for i in range(vec))
    adds = ", ".join(f"${vec + 1 + i}" for i in range(vec))
    asm = ("{ " + "".join(f"mov.b32 ${i}, 0; " for i in range(vec))
           + f"@${2 * vec + 1} atom{_qualifiers(op)}.add.v{vec}.f32 {{{olds}}}, [${vec}], {{{adds}}}; }}")
    constraints = ",".join(["=f"] * vec + ["l"] + ["f"] * vec + ["b"])
    return list(ctx.inline_asm(asm, constraints, [ptr, *values, predicate], [values[0].type] * vec))


@lowers("tile.atomic_cas")
def lower_atomic_cas(ctx: LoweringContext, op: ir.Operation) -> None:
    ptr, cmp, value = op.operands
    ty = ctx.element_type(op.results[0].type)
    bits = ty.width
    letter = _letter(bits)
    asm = f"mov.b{bits} $0, 0;\n@$4 atom{_cas_qualifiers(op)}.cas.b{bits} $0, [$1], $2, $3;"
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


# ----------------------------------------------------------------------------- loads, stores, polls


def _access_qualifiers(op: ir.Operation) -> str:
    return f".{str_attr_value(op, 'sem')}.{str_attr_value(op, 'scope')}.global"


@lowers("tile.atomic_load")
def lower_atomic_load(ctx: LoweringContext, op: ir.Operation) -> None:
    ptr, mask = (g[0] if g else None for g in operand_groups(op))
    mem_type, kind = memory_type(ptr.type)  # bools and fp8 are bytes, pointers 64-bit integers
    bits = mem_type.width
    register = max(16, bits)
    reg_ty = ir.IntegerType.get_signless(register)
    asm = f"mov.b{register} $0, 0;\n@$2 ld{_access_qualifiers(op)}.b{bits} $0, [$1];"
    owner, source = _owned_registers(ctx, ptr)
    masks = ctx.elements(mask) if mask is not None else [None] * len(ctx.elements(ptr))
    result_ty = ctx.element_type(op.results[0].type)
    values: list[ir.Value] = []
    for index, (p, m) in enumerate(zip(ctx.elements(ptr), masks)):
        if source[index] != index:
            values.append(values[source[index]])
            continue
        (word,) = ctx.inline_asm(asm, f"=&{_letter(register)},l,b", [p, _and(ctx, owner, m)], [reg_ty])
        values.append(_loaded_value(ctx, word, mem_type, kind, result_ty))
    if str_attr_value(op, "sem") == "acquire" and not publishes_old_values(op):
        ctx.barrier()  # the other threads' later accesses come after the owners' acquire
    _publish(ctx, op, ptr, owner, values)


def _loaded_value(ctx: LoweringContext, word: ir.Value, mem_type: ir.Type, kind: str, ty: ir.Type) -> ir.Value:
    """The per-thread value of type `ty` from the register an ld wrote (zero-extended)."""
    if word.type.width != mem_type.width:
        word = ctx.arith("trunci", word, result_type=ir.IntegerType.get_signless(mem_type.width))
    if kind == "bool":
        return ctx.arith("cmpi", word, ctx.const(0, word.type), result_type=ctx.i1,
                         attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 1)})  # ne
    if kind == "ptr":
        return create_op("llvm.inttoptr", [ctx.ptr_global], [word]).result
    return _from_bits(ctx, word, ty)


@lowers("tile.atomic_store")
def lower_atomic_store(ctx: LoweringContext, op: ir.Operation) -> None:
    ptr, value, mask = (g[0] if g else None for g in operand_groups(op))
    mem_type, kind = memory_type(ptr.type)
    bits = mem_type.width
    register = max(16, bits)
    asm = f"@$2 st{_access_qualifiers(op)}.b{bits} [$0], $1;"
    if str_attr_value(op, "sem") == "release":
        ctx.barrier()  # every thread's earlier writes come before the owners' release
    owner, registers = ctx.owners(ptr)
    ptrs, values = ctx.elements(ptr), ctx.elements(value)
    masks = ctx.elements(mask) if mask is not None else [None] * len(ptrs)
    for index in registers:
        word = values[index]
        if kind == "bool":
            word = ctx.arith("extui", word, result_type=ctx.i8)
        elif kind == "ptr":
            word = create_op("llvm.ptrtoint", [ctx.i64], [word]).result
        word = _as_bits(ctx, word, bits)
        if register != bits:
            word = ctx.arith("extui", word, result_type=ir.IntegerType.get_signless(register))
        ctx.inline_asm(asm, f"l,{_letter(register)},b", [ptrs[index], word, _and(ctx, owner, masks[index])], [])


def _poll_asm(bits: int, scope: str, acquire: bool, timed: bool) -> str:
    """One element's poll: $0 (out) 1 once *$1 == $2, 0 if `timed` and $5 nanoseconds
    passed since $3 (a %globaltimer reading) first; only where the predicate $4 holds."""
    lines = ["{",
             ".reg .pred matched;",
             f".reg .b{bits} value;",
             ".reg .b64 elapsed;" if timed else "",
             "mov.u32 $0, 0;",
             "@!$4 bra done;",
             "poll:",
             f"ld.relaxed.{scope}.global.b{bits} value, [$1];",
             f"setp.eq.b{bits} matched, value, $2;",
             "@matched bra found;"]
    if timed:
        lines += ["mov.u64 elapsed, %globaltimer;",
                  "sub.u64 elapsed, elapsed, $3;",
                  "setp.lt.u64 matched, elapsed, $5;",
                  "@matched bra poll;",
                  "bra done;"]
    else:
        lines += ["bra poll;"]
    lines += ["found:",
              f"fence.acq_rel.{scope};" if acquire else "",
              "mov.u32 $0, 1;",
              "done:",
              "}"]
    return "\n".join(line for line in lines if line)


@lowers("tile.atomic_poll")
def lower_atomic_poll(ctx: LoweringContext, op: ir.Operation) -> None:
    ptr, expected, timeout = (g[0] if g else None for g in operand_groups(op))
    bits = pointee_type(element_type(ptr.type)).width
    scope = str_attr_value(op, "scope")
    asm = _poll_asm(bits, scope, str_attr_value(op, "sem") == "acquire", timeout is not None)
    owner, source = _owned_registers(ctx, ptr)
    predicate = owner if owner is not None else ctx.const(1, ctx.i1)
    if timeout is not None:  # one start for every element: the timeout bounds the whole op
        (start,) = ctx.inline_asm("mov.u64 $0, %globaltimer;", "=l", [], [ctx.i64])
        limit = ctx.lowered(timeout)
    else:
        start = limit = ctx.const(0, ctx.i64)
    letter = _letter(bits)
    matched: list[ir.Value] = []
    for index, (p, e) in enumerate(zip(ctx.elements(ptr), ctx.elements(expected))):
        if source[index] != index:
            matched.append(matched[source[index]])
            continue
        (flag,) = ctx.inline_asm(asm, f"=&r,l,{letter},l,b,l", [p, e, start, predicate, limit], [ctx.i32])
        matched.append(ctx.arith("cmpi", flag, ctx.const(0), result_type=ctx.i1,
                                 attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 1)}))  # ne
    if timeout is None:
        # Nobody leaves the loop unmatched: the result is all true, and the barrier makes
        # every thread wait for the polls (and see what the acquire made visible).
        ctx.barrier()
        true = ctx.const(1, ctx.i1)
        result = op.results[0]
        ctx.set(result, [true] * len(matched) if is_tensor(result.type) else true)
        return
    if not publishes_old_values(op):
        ctx.barrier()
    _publish(ctx, op, ptr, owner, matched)
