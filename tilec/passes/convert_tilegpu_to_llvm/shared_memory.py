"""Shared-memory helpers of the lowering: how values are kept there, and addresses.

Values are kept in shared memory in a plain integer or float form: booleans as bytes,
pointers as 64-bit integers, fp8 as the bytes the lowering already holds them in.
"""
from __future__ import annotations

from mlir import ir

from ...dialects._mlir import create_op
from .context import LoweringContext


def store_type(ctx: LoweringContext, ty: ir.Type) -> ir.Type:
    """How a value of per-thread type `ty` is kept in shared memory."""
    if ty == ctx.i1:
        return ctx.i8
    if ty == ctx.ptr_global:
        return ctx.i64
    return ty


def byte_size(ctx: LoweringContext, ty: ir.Type) -> int:
    """Bytes one value of per-thread type `ty` takes in shared memory."""
    return max(1, getattr(store_type(ctx, ty), "width", 64) // 8)


def to_shared(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    """`value` in its shared-memory form (see store_type)."""
    if value.type == ctx.i1:
        return ctx.arith("extui", value, result_type=ctx.i8)
    if value.type == ctx.ptr_global:
        return create_op("llvm.ptrtoint", [ctx.i64], [value]).result
    return value


def from_shared(ctx: LoweringContext, value: ir.Value, ty: ir.Type) -> ir.Value:
    """The per-thread value of type `ty` from its shared-memory form."""
    if ty == ctx.i1:
        return ctx.arith("trunci", value, result_type=ctx.i1)
    if ty == ctx.ptr_global:
        return create_op("llvm.inttoptr", [ctx.ptr_global], [value]).result
    return value


def store(ctx: LoweringContext, value: ir.Value, byte_offset: ir.Value, *, scratch: bool = True) -> None:
    """Writes `value` at `byte_offset` of the scratch space (scratch=False: of the
    kernel's shared memory, for a buffer whose allocated offset is already added)."""
    address = ctx.shared_address(byte_offset) if scratch else ctx.shared_pointer(byte_offset)
    create_op("llvm.store", [], [to_shared(ctx, value), address])


def load(ctx: LoweringContext, ty: ir.Type, byte_offset: ir.Value, *, scratch: bool = True) -> ir.Value:
    """Reads a value of per-thread type `ty` at `byte_offset` of the scratch space
    (scratch=False: of the kernel's shared memory)."""
    address = ctx.shared_address(byte_offset) if scratch else ctx.shared_pointer(byte_offset)
    return from_shared(ctx, create_op("llvm.load", [store_type(ctx, ty)], [address]).result, ty)
