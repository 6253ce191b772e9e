"""Lowering of tile.print, tile.assert, tile.assume and tile.barrier.

print: one `vprintf` (the CUDA runtime's device printf) per element, as

    pid (0, 0, 0) idx ( 3, 12) x: 1.5

the index right-aligned to the width of its dimension, the prefix as the semantic layer
made it (Triton's: ending in ": "), "(operand k) " before the value when several tensors
are printed; the interpreter prints the same lines. An element
held by several threads (a replicated layout) is printed once, by its owner. Floats
print as %.9g (%.17g for fp64): enough digits to read back the exact value.

assert: a thread owning a false element (an element held by several threads is checked
by its owner alone, a scalar by thread 0) prints which program and element failed (the
first it holds), then calls `__assertfail` (CUDA's device assert: message, file, line,
function), which stops the kernel; the launch then fails with "device-side assert
triggered".
"""
from __future__ import annotations

import contextlib
import re

from mlir import ir

from ...dialects._mlir import bool_attr_value, create_op, is_tensor, str_attr_value
from ...dialects.tile import element_type, shape_of
from .context import LoweringContext, lowers

@lowers("tile.barrier")
def lower_barrier(ctx: LoweringContext, op: ir.Operation) -> None:
    ctx.barrier()


@lowers("tile.assume")
def lower_assume(ctx: LoweringContext, op: ir.Operation) -> None:
    for condition in ctx.elements(op.operands[0]):
        create_op("llvm.intr.assume", [], [condition], attributes={"op_bundle_sizes": ir.DenseI32ArrayAttr.get([])})


@contextlib.contextmanager
def scf_if(ctx: LoweringContext, condition: ir.Value | None):
    """`with scf_if(ctx, c):` emits its body under scf.if c (unconditionally for None)."""
    if condition is None:
        yield
        return
    op = create_op("scf.if", [], [condition], regions=2)
    with ir.InsertionPoint(op.regions[0].blocks.append()):
        yield
        create_op("scf.yield", [])


# ----------------------------------------------------------------------------- printf


def _printf(ctx: LoweringContext, fmt: str, values: list[ir.Value]) -> None:
    """vprintf(fmt, &{values...}): the values (already promoted as C varargs are) are
    packed into a stack buffer, one per element type list, reused by every call."""
    fmt_ptr = ctx.string_constant(fmt)
    if not values:
        buffer = create_op("llvm.mlir.zero", [ctx.ptr_generic]).result
    else:
        struct = ir.Type.parse("!llvm.struct<(" + ", ".join(str(v.type) for v in values) + ")>")
        buffer = _stack_buffer(ctx, struct)
        for index, value in enumerate(values):
            slot = create_op("llvm.getelementptr", [ctx.ptr_generic], [buffer], attributes={
                "rawConstantIndices": ir.DenseI32ArrayAttr.get([0, index]),
                "elem_type": ir.TypeAttr.get(struct)}).result
            create_op("llvm.store", [], [value, slot], attributes={"ordering": ir.IntegerAttr.get(ctx.i64, 0)})
    ctx.call("vprintf", [fmt_ptr, buffer], ctx.i32)


def _stack_buffer(ctx: LoweringContext, struct: ir.Type) -> ir.Value:
    cache = ctx.stack_buffers
    key = str(struct)
    if key not in cache:
        with ir.InsertionPoint(ctx.prologue_anchor):
            one = create_op("llvm.mlir.constant", [ctx.i32], attributes={"value": ir.IntegerAttr.get(ctx.i32, 1)})
            cache[key] = create_op("llvm.alloca", [ctx.ptr_generic], [one.result], attributes={
                "elem_type": ir.TypeAttr.get(struct), "alignment": ir.IntegerAttr.get(ctx.i64, 8)}).result
    return cache[key]


def _printable(ctx: LoweringContext, value: ir.Value, ty: ir.Type, signed: bool, hex: bool) -> tuple[ir.Value, str]:
    """`value` (of tile element type `ty`) promoted for printf, with its conversion."""
    if str(ty).startswith("!tile.ptr"):
        return create_op("llvm.ptrtoint", [ctx.i64], [value]).result, "0x%llx"
    if str(ty) in _FLOAT_WIDTH:
        width = _FLOAT_WIDTH[str(ty)]
        if hex:
            bits = create_op("llvm.bitcast", [ir.IntegerType.get_signless(width)], [value]).result
            return _printable(ctx, bits, ir.IntegerType.get_signless(width), False, True)
        if width < 32:
            value = ctx.arith("extf", value, result_type=ctx.f32)
        if width < 64:
            value = ctx.arith("extf", value, result_type=ir.F64Type.get())
        return value, "%.17g" if width == 64 else "%.9g"
    width = ir.IntegerType(ty).width
    if hex:
        if width < 32:
            value = ctx.arith("extui", value, result_type=ctx.i32)
        return value, f"0x%0{max(width // 4, 2)}{'ll' if width == 64 else ''}x"
    if width < 32:
        value = ctx.arith("extsi" if signed and width > 1 else "extui", value, result_type=ctx.i32)
    conversion = "d" if signed and width > 1 else "u"
    return value, ("%ll" + conversion) if width == 64 else "%" + conversion


_FLOAT_WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def _pid(ctx: LoweringContext) -> list[ir.Value]:
    return [create_op(f"nvvm.read.ptx.sreg.ctaid.{axis}", [ctx.i32]).result for axis in "xyz"]


def _index_format(shape: tuple[int, ...]) -> str:
    return ", ".join(f"%{len(str(max(n - 1, 0)))}u" for n in shape)


@lowers("tile.print")
def lower_print(ctx: LoweringContext, op: ir.Operation) -> None:
    prefix = str_attr_value(op, "prefix").replace("%", "%%")  # as semantic.device_print made it
    hex = bool_attr_value(op, "hex")
    signs = list(ir.DenseI32ArrayAttr(op.attributes["is_signed"]))
    operands = list(op.operands)
    pid = _pid(ctx)
    if not operands:  # a message alone: once per program
        with scf_if(ctx, ctx.equals(ctx.tid, 0)):
            _printf(ctx, f"pid (%u, %u, %u){prefix.rstrip()}\n", pid)
        return
    for number, value in enumerate(operands):
        ty = element_type(value.type)
        shape = shape_of(value.type) if is_tensor(value.type) else ()
        operand = f"(operand {number}) " if len(operands) > 1 else ""
        predicate, registers = ctx.owners(value)
        elements = ctx.elements(value)
        coordinates = ctx.element_coordinates(ctx.layout(value)) if shape else None
        with scf_if(ctx, predicate):
            for r in registers:
                shown, conversion = _printable(ctx, elements[r], ty, bool(signs[number]), hex)
                fmt = f"pid (%u, %u, %u) idx ({_index_format(shape)}){prefix}{operand}{conversion}\n"
                _printf(ctx, fmt, pid + (coordinates[r] if shape else []) + [shown])


# ----------------------------------------------------------------------------- assert


def _source(op: ir.Operation) -> tuple[str, int]:
    found = re.search(r'"([^"]+)":(\d+)', str(op.location))
    return (found.group(1), int(found.group(2))) if found else ("<unknown>", 0)


@lowers("tile.assert")
def lower_assert(ctx: LoweringContext, op: ir.Operation) -> None:
    condition = op.operands[0]
    message = str_attr_value(op, "message")
    kernel = ir.StringAttr(ctx.func_op.attributes["sym_name"]).value
    file, line = _source(op)
    # Only an element's owner checks it (a scalar: thread 0), so a failure held by
    # several threads is reported once.
    owner, registers = ctx.owners(condition)
    conditions = [ctx.elements(condition)[r] for r in registers]
    true = ctx.const(1, ctx.i1)
    failing = [ctx.arith("xori", c, true) for c in conditions]
    any_failing = failing[0]
    for f in failing[1:]:
        any_failing = ctx.arith("ori", any_failing, f)
    if owner is not None:
        any_failing = ctx.arith("andi", any_failing, owner)
    shape = shape_of(condition.type) if is_tensor(condition.type) else ()
    with scf_if(ctx, any_failing):
        where: list[ir.Value] = []
        if shape:
            everywhere = ctx.element_coordinates(ctx.layout(condition))
            coordinates = [everywhere[r] for r in registers]
            where = coordinates[-1]
            for f, coordinate in reversed(list(zip(failing, coordinates))[:-1]):
                where = [ctx.arith("select", f, c, w, result_type=ctx.i32) for c, w in zip(coordinate, where)]
        index = f" idx ({_index_format(shape)})" if shape else ""
        text = message.replace("%", "%%")
        _printf(ctx, f"device assertion failed in kernel `{kernel}` at {file}:{line}: pid (%u, %u, %u){index}: "
                     f"{text}\n", _pid(ctx) + where)
        ctx.call("__assertfail", [ctx.string_constant(message), ctx.string_constant(file), ctx.const(line),
                                  ctx.string_constant(kernel), ctx.const(1, ctx.i64)], None)
