"""Lowering of the explicit shared-memory ops: buffers, loads and stores, async copies.

A memory descriptor lowers to one i32: the byte offset of its buffer in the kernel's
shared memory (`tilegpu.offset` from tilegpu-allocate-shared-memory, plus the index of
a ring's buffer times the buffer's size). An element's place in a buffer comes from the
buffer's shared encoding (`element_offset`); without one the buffer is row-major.

local_store / local_load: each thread writes (reads) the elements its layout holds.
async_copy_global_to_local: each thread issues `cp.async` for its elements, in runs of
up to 16 bytes that are contiguous and aligned both in global memory (axis info) and in
the buffer, with the source size set to 0 where the mask is off (cp.async then writes
zeros). Completion is async_commit_group / async_wait (`cp.async.commit_group`,
`cp.async.wait_group N`); other threads see the data after a barrier.
"""
from __future__ import annotations

import math
from typing import Sequence

from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import create_op, int_attr_value, operand_groups
from ...layout.encodings import REGISTER
from ..allocate_shared_memory import OFFSET_ATTR
from .context import LoweringContext, LoweringError, lowers
from .memory import vector_width
from .shape import row_major
from .shared_memory import byte_size, load, store


def element_offset(ctx: LoweringContext, buffer: ir.RankedTensorType, coords: Sequence[ir.Value]) -> ir.Value:
    """The element offset (in elements, i32) of the element at `coords` in a buffer."""
    if buffer.encoding is not None:
        raise LoweringError(f"shared encoding {buffer.encoding} is not supported yet")
    return row_major(ctx, coords, list(buffer.shape))


def _element_bytes(ctx: LoweringContext, buffer: ir.RankedTensorType) -> int:
    return byte_size(ctx, ctx.element_type(ir.RankedTensorType.get(list(buffer.shape), buffer.element_type)))


def _write(ctx: LoweringContext, value: ir.Value, memdesc: ir.Value) -> None:
    buffer = tilegpu.memdesc_tensor(memdesc.type)
    size = _element_bytes(ctx, buffer)
    base = ctx.lowered(memdesc)
    owner, registers = ctx.owners(value)
    if owner is not None:
        raise LoweringError("storing to shared memory from a layout that repeats elements across threads")
    values = ctx.elements(value)
    for r, coords in zip(range(len(values)), ctx.element_coordinates(ctx.layout(value))):
        if r not in registers:
            continue
        offset = ctx.arith("muli", element_offset(ctx, buffer, coords), ctx.const(size))
        store(ctx, values[r], ctx.arith("addi", base, offset))


@lowers("tilegpu.local_alloc")
def lower_local_alloc(ctx: LoweringContext, op: ir.Operation) -> None:
    if OFFSET_ATTR not in op.attributes:
        raise LoweringError("a local_alloc without an offset: run tilegpu-allocate-shared-memory first")
    ctx.set(op.results[0], ctx.const(int_attr_value(op, OFFSET_ATTR)))
    if len(op.operands):
        _write(ctx, op.operands[0], op.results[0])


@lowers("tilegpu.local_dealloc")
def lower_local_dealloc(ctx: LoweringContext, op: ir.Operation) -> None:
    """Nothing to do: offsets are static, and liveness already reused the bytes."""


@lowers("tilegpu.memdesc_index")
def lower_memdesc_index(ctx: LoweringContext, op: ir.Operation) -> None:
    ring, index = op.operands
    one = tilegpu.memdesc_tensor(op.results[0].type)
    stride = math.prod(one.shape) * _element_bytes(ctx, one)
    ctx.set(op.results[0], ctx.arith("addi", ctx.lowered(ring), ctx.arith("muli", ctx.lowered(index), ctx.const(stride))))


@lowers("tilegpu.local_store")
def lower_local_store(ctx: LoweringContext, op: ir.Operation) -> None:
    _write(ctx, op.operands[0], op.operands[1])


@lowers("tilegpu.local_load")
def lower_local_load(ctx: LoweringContext, op: ir.Operation) -> None:
    memdesc, result = op.operands[0], op.results[0]
    buffer = tilegpu.memdesc_tensor(memdesc.type)
    size = _element_bytes(ctx, buffer)
    elem_ty = ctx.element_type(result.type)
    base = ctx.lowered(memdesc)
    values = []
    for coords in ctx.element_coordinates(ctx.layout(result)):
        offset = ctx.arith("muli", element_offset(ctx, buffer, coords), ctx.const(size))
        values.append(load(ctx, elem_ty, ctx.arith("addi", base, offset)))
    ctx.set(result, values)


@lowers("tilegpu.async_copy_global_to_local")
def lower_async_copy(ctx: LoweringContext, op: ir.Operation) -> None:
    (src,), (memdesc,), mask_group = operand_groups(op)
    mask = mask_group[0] if mask_group else None
    buffer = tilegpu.memdesc_tensor(memdesc.type)
    size = _element_bytes(ctx, buffer)
    layout = ctx.layout(src)
    vec = _copy_width(ctx, src, mask, buffer, size)
    owner, registers = ctx.owners(src)
    if owner is not None:
        raise LoweringError("async copy from a layout that repeats elements across threads")
    pointers = ctx.elements(src)
    masks = ctx.elements(mask) if mask is not None else None
    base = ctx.lowered(memdesc)
    coords = ctx.element_coordinates(layout)
    nbytes = vec * size
    for start in range(0, len(pointers), vec):
        if start not in registers:
            continue
        offset = ctx.arith("muli", element_offset(ctx, buffer, coords[start]), ctx.const(size))
        address = create_op("llvm.ptrtoint", [ctx.i32], [ctx.shared_pointer(ctx.arith("addi", base, offset))]).result
        # .cg (L2 only) exists for 16-byte copies; smaller ones cache in L1 too.
        cache = ".cg" if nbytes == 16 else ".ca"
        if masks is None:
            ctx.inline_asm(f"cp.async{cache}.shared.global [$0], [$1], {nbytes};", "r,l",
                           [address, pointers[start]], [])
        else:
            source_size = ctx.arith("select", masks[start], ctx.const(nbytes), ctx.const(0), result_type=ctx.i32)
            ctx.inline_asm(f"cp.async{cache}.shared.global [$0], [$1], {nbytes}, $2;", "r,l,r",
                           [address, pointers[start], source_size], [])


def _copy_width(ctx: LoweringContext, src: ir.Value, mask: ir.Value | None, buffer: ir.RankedTensorType,
                size: int) -> int:
    """Elements per cp.async (4, 8 or 16 bytes): a run contiguous and aligned in global
    memory, under one mask value, and contiguous in the buffer (row-major: along its
    last dimension)."""
    vec = vector_width(ctx, src, mask, size)
    regs = ctx.layout(src).bases(REGISTER)
    rank = len(buffer.shape)
    if vec > 1 and (not regs or regs[0] != tuple(1 if d == rank - 1 else 0 for d in range(rank))):
        vec = 1  # the run goes along another dimension: not contiguous in a row-major buffer
    if vec * size < 4:
        raise LoweringError(f"cp.async copies 4, 8 or 16 bytes; this copy can only move {vec * size} at a time")
    return min(vec, 16 // size)


@lowers("tilegpu.async_commit_group")
def lower_async_commit_group(ctx: LoweringContext, op: ir.Operation) -> None:
    create_op("nvvm.cp.async.commit.group", [])


@lowers("tilegpu.async_wait")
def lower_async_wait(ctx: LoweringContext, op: ir.Operation) -> None:
    create_op("nvvm.cp.async.wait.group", [], attributes={"n": ir.IntegerAttr.get(ctx.i32, int_attr_value(op, "num"))})


@lowers("tilegpu.barrier")
def lower_barrier(ctx: LoweringContext, op: ir.Operation) -> None:
    ctx.barrier()
