"""Lowering of tile.dot with fused multiply-adds (the CUDA-core path).

Both operands are written once to shared memory, row-major, from whatever layout they
have. Then a loop over k keeps only the accumulators live: at each step a thread loads
A[m, k] for the rows m of its result elements and B[k, n] for their columns n, and
updates every accumulator with one fused multiply-add (fp16/bf16 widened to fp32, int8
to int32; fp32 operands rounded to tf32 first when input_precision is tf32, the default,
as the tensor cores would read them). The tensor-core paths (mma.sync, wgmma) come with their own encodings.
"""
from __future__ import annotations

import math

from mlir import ir

from ...dialects._mlir import create_op, str_attr_value
from ...dialects.tile import shape_of
from .context import LoweringContext, lowers
from .reduce import _bytes, _from_shared, _store_type, _to_shared
from .shape import row_major


@lowers("tile.dot")
def lower_dot(ctx: LoweringContext, op: ir.Operation) -> None:
    a, b, acc = op.operands
    a_shape, b_shape = shape_of(a.type), shape_of(b.type)
    k_size = a_shape[-1]
    n_size = b_shape[-1]
    a_ty = ctx.element_type(a.type)
    size = _bytes(ctx, a_ty)
    b_base = math.prod(a_shape)
    ctx.reserve_shared((b_base + math.prod(b_shape)) * size)

    # 1. both operands to shared memory, row-major (fp32 rounded to tf32 first when the
    #    dot's precision is tf32: what the tensor cores would read)
    tf32 = a_ty == ctx.f32 and str_attr_value(op, "input_precision") == "tf32"
    ctx.barrier()
    for value, shape, base in ((a, a_shape, 0), (b, b_shape, b_base)):
        for v, coords in zip(ctx.elements(value), ctx.element_coordinates(ctx.layout(value))):
            if tf32:
                v = _round_to_tf32(ctx, v)
            address = ctx.shared_address(ctx.arith("muli", row_major(ctx, coords, shape, base), ctx.const(size)))
            create_op("llvm.store", [], [_to_shared(ctx, v), address])
    ctx.barrier()

    # 2. the rows and columns this thread's result elements need (element offsets at k = 0)
    acc_coords = ctx.element_coordinates(ctx.layout(acc))
    row_of: dict[tuple, ir.Value] = {}
    col_of: dict[tuple, ir.Value] = {}
    reg_coords = ctx.register_coordinates(ctx.layout(acc))
    for coords, key in zip(acc_coords, reg_coords):
        *bidx, m, n = coords
        batch_key, m_key, n_key = key[:-2], key[-2], key[-1]
        if (batch_key, m_key) not in row_of:
            row_of[(batch_key, m_key)] = row_major(ctx, list(bidx) + [m, ctx.const(0)], a_shape)
        if (batch_key, n_key) not in col_of:
            col_of[(batch_key, n_key)] = row_major(ctx, list(bidx) + [ctx.const(0), n], b_shape, b_base)
    rows, cols = list(row_of), list(col_of)

    # 3. the k loop, carrying the accumulators
    out_ty = ctx.element_type(acc.type)
    is_int = isinstance(out_ty, ir.IntegerType)
    inits = list(ctx.elements(acc))
    loop = create_op("scf.for", [out_ty] * len(inits), [ctx.const(0), ctx.const(k_size), ctx.const(1)] + inits,
                     regions=1)
    body = loop.regions[0].blocks.append(ctx.i32, *[out_ty] * len(inits))
    with ir.InsertionPoint(body):
        k = body.arguments[0]
        k_row = ctx.arith("muli", k, ctx.const(n_size))  # B's offset of row k

        def load(index: ir.Value) -> ir.Value:
            address = ctx.shared_address(ctx.arith("muli", index, ctx.const(size)))
            value = _from_shared(ctx, create_op("llvm.load", [_store_type(ctx, a_ty)], [address]).result, a_ty)
            if value.type != out_ty:
                value = ctx.arith("extsi" if is_int else "extf", value, result_type=out_ty)
            return value

        a_vals = {key: load(ctx.arith("addi", row_of[key], k)) for key in rows}
        b_vals = {key: load(ctx.arith("addi", col_of[key], k_row)) for key in cols}
        updated = []
        for key, total in zip(reg_coords, list(body.arguments)[1:]):
            x, y = a_vals[(key[:-2], key[-2])], b_vals[(key[:-2], key[-1])]
            if is_int:
                updated.append(ctx.arith("addi", total, ctx.arith("muli", x, y)))
            else:
                updated.append(create_op("math.fma", [out_ty], [x, y, total]).result)
        create_op("scf.yield", [], updated)
    ctx.set(op.results[0], list(loop.results))


def _round_to_tf32(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    """fp32 rounded to tf32's 10 mantissa bits, to nearest with ties away from zero."""
    (bits,) = ctx.inline_asm("cvt.rna.tf32.f32 $0, $1;", "=r,f", [value], [ctx.i32], side_effects=False)
    return create_op("llvm.bitcast", [ctx.f32], [bits]).result
