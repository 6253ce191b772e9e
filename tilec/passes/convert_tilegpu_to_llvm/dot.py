"""Lowering of tile.dot with fused multiply-adds (the CUDA-core path).

Both operands are written to the op's scratch space in shared memory, row-major, from
whatever layout they have (a K-slice at a time when the whole operands would take more
than CHUNK_BYTES: each element outside the slice is written to a dummy slot; a barrier
between slices, as each overwrites what the last was read from; the one before the
first, where an earlier access needs it, is tilegpu-insert-barriers'). Then a loop over
the slice's k keeps only the accumulators live: at each step a thread loads A[m, k] for the rows m of
its result elements and B[k, n] for their columns n, and updates every accumulator with
one fused multiply-add (fp16/bf16 widened to fp32, int8 to int32; fp32 operands rounded
to tf32 first when input_precision is tf32, the default, as the tensor cores would read
them). A half-precision accumulator is rounded once per 16 products, as an mma
instruction rounds it, not after each. The tensor-core paths (mma.sync, wgmma) come with their own encodings.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import create_op, int_attr_value, str_attr_value
from ...dialects.tile import shape_of
from ...layout.mma import MmaEncoding
from .context import LoweringContext, lowers
from .shared_memory import element_bytes, from_shared, scratch_bytes, store_type, to_shared
from .shape import row_major


# Shared memory one K-chunk of both operands may take: beyond it, K is processed in chunks
# (the default dynamic shared memory, so any legal shape fits and occupancy is kept).
CHUNK_BYTES = 48 * 1024


@dataclass(frozen=True)
class FmaStaging:
    """How the FMA path stages its operands in its scratch space."""
    chunk: int            # the K elements staged at a time
    a_chunk: list[int]    # the shapes of the staged slices
    b_chunk: list[int]
    b_base: int           # the element where B's slice starts (after A's)
    dummy: int            # the byte where elements outside the slice are written
    scratch_bytes: int


# On an FMA dot: the bytes its staged K-slice may take instead of CHUNK_BYTES, set by
# tilegpu-allocate-shared-memory when the kernel's buffers would not fit otherwise.
CHUNK_BYTES_ATTR = "tilegpu.fma_chunk_bytes"


def fma_staging(a_shape: Sequence[int], b_shape: Sequence[int], size: int,
                limit: int = CHUNK_BYTES) -> FmaStaging:
    """The K-slice of the operands (of `size` bytes per element) staged at a time: the
    largest power-of-two part of K whose slices fit `limit` bytes."""
    k_size = a_shape[-1]
    batch = math.prod(a_shape[:-2])
    m_size, n_size = a_shape[-2], b_shape[-1]
    chunk = k_size
    while chunk > 1 and batch * (m_size + n_size) * chunk * size > limit:
        chunk //= 2
    a_chunk = list(a_shape[:-1]) + [chunk]
    b_chunk = list(b_shape[:-2]) + [chunk, n_size]
    b_base = math.prod(a_chunk)
    dummy = (b_base + math.prod(b_chunk)) * size
    return FmaStaging(chunk, a_chunk, b_chunk, b_base, dummy, dummy + (size if chunk < k_size else 0))


@scratch_bytes("tile.dot")
def fma_dot_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    """The FMA path's staging; a tensor-core dot (mma result) works in registers."""
    if isinstance(tilegpu.layout_of(op.results[0].type), MmaEncoding):
        return 0
    return fma_staging_of(op).scratch_bytes


def fma_staging_of(op: ir.Operation) -> FmaStaging:
    """How this FMA dot stages its operands: within CHUNK_BYTES, or the smaller limit
    tilegpu-allocate-shared-memory set on it (CHUNK_BYTES_ATTR)."""
    a, b = op.operands[0], op.operands[1]
    limit = int_attr_value(op, CHUNK_BYTES_ATTR, CHUNK_BYTES) if CHUNK_BYTES_ATTR in op.attributes else CHUNK_BYTES
    return fma_staging(shape_of(a.type), shape_of(b.type), element_bytes(a.type), limit)


@lowers("tile.dot")
def lower_dot(ctx: LoweringContext, op: ir.Operation) -> None:
    result_layout = tilegpu.layout_of(op.results[0].type)
    if isinstance(result_layout, MmaEncoding) and result_layout.version == 3:
        from .dot_wgmma import lower_dot_wgmma
        lower_dot_wgmma(ctx, op)
        return
    if isinstance(result_layout, MmaEncoding):
        from .dot_mma import lower_dot_mma
        lower_dot_mma(ctx, op)
        return
    a, b, acc = op.operands
    a_shape, b_shape = shape_of(a.type), shape_of(b.type)
    k_size = a_shape[-1]
    a_ty = ctx.element_type(a.type)
    size = element_bytes(a.type)
    n_size = b_shape[-1]
    staging = fma_staging_of(op)
    chunk, a_chunk, b_chunk = staging.chunk, staging.a_chunk, staging.b_chunk
    b_base, dummy = staging.b_base, staging.dummy
    ctx.reserve_shared(staging.scratch_bytes)

    # The rows and columns this thread's result elements need (element offsets at k = 0).
    acc_coords = ctx.element_coordinates(ctx.layout(acc))
    reg_coords = ctx.register_coordinates(ctx.layout(acc))
    row_of: dict[tuple, ir.Value] = {}
    col_of: dict[tuple, ir.Value] = {}
    for coords, key in zip(acc_coords, reg_coords):
        *bidx, m, n = coords
        batch_key, m_key, n_key = key[:-2], key[-2], key[-1]
        if (batch_key, m_key) not in row_of:
            row_of[(batch_key, m_key)] = row_major(ctx, list(bidx) + [m, ctx.const(0)], a_chunk)
        if (batch_key, n_key) not in col_of:
            col_of[(batch_key, n_key)] = row_major(ctx, list(bidx) + [ctx.const(0), n], b_chunk, b_base)

    # fp32 is truncated to tf32 first when the dot's precision is tf32 (what the tensor
    # cores read of an fp32 register).
    tf32 = a_ty == ctx.f32 and str_attr_value(op, "input_precision") == "tf32"
    a_values = [truncate_to_tf32(ctx, v) if tf32 else v for v in ctx.elements(a)]
    b_values = [truncate_to_tf32(ctx, v) if tf32 else v for v in ctx.elements(b)]
    a_coords = ctx.element_coordinates(ctx.layout(a))
    b_coords = ctx.element_coordinates(ctx.layout(b))
    totals = list(ctx.elements(acc))
    for start in range(0, k_size, chunk):
        # 1. this K-slice of both operands to shared memory, row-major (after the last
        #    slice's readers are done)
        if start:
            ctx.barrier()
        for values, coords_list, shape, k_dim, base in ((a_values, a_coords, a_chunk, -1, 0),
                                                        (b_values, b_coords, b_chunk, -2, b_base)):
            for v, coords in zip(values, coords_list):
                coords = list(coords)
                offset = _chunk_offset(ctx, coords, k_dim, start, chunk, k_size, shape, base, size, dummy)
                create_op("llvm.store", [], [to_shared(ctx, v), ctx.shared_address(offset)])
        ctx.barrier()
        # 2. the k loop over the slice, carrying the accumulators
        totals = _accumulate(ctx, acc, a_ty, size, chunk, n_size, row_of, col_of, reg_coords, totals)
    ctx.set(op.results[0], totals)


def _chunk_offset(ctx: LoweringContext, coords: list[ir.Value], k_dim: int, start: int, chunk: int, k_size: int,
                  shape: list[int], base: int, size: int, dummy: int) -> ir.Value:
    """The byte offset an operand element is staged at for the K-slice [start,
    start + chunk): its place in the slice, or the dummy slot when it is outside."""
    if chunk == k_size:
        return ctx.arith("muli", row_major(ctx, coords, shape, base), ctx.const(size))
    k = coords[k_dim]
    local = ctx.arith("subi", k, ctx.const(start))
    inside = ctx.arith("cmpi", local, ctx.const(chunk), result_type=ctx.i1,
                       attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult: start <= k < start + chunk
    coords[k_dim] = ctx.arith("andi", local, ctx.const(chunk - 1))  # in range where it matters
    offset = ctx.arith("muli", row_major(ctx, coords, shape, base), ctx.const(size))
    return ctx.arith("select", inside, offset, ctx.const(dummy), result_type=ctx.i32)


# The k depth of one tensor-core instruction (mma m16n8k16): a half-precision accumulator
# is rounded once per this many products there, so the FMA path rounds it as often.
INSTRUCTION_K = 16


def _accumulate(ctx: LoweringContext, acc: ir.Value, a_ty: ir.Type, size: int, k_size: int, n_size: int,
                row_of: dict, col_of: dict, reg_coords: list, totals: list[ir.Value]) -> list[ir.Value]:
    """acc[m, n] += sum over the staged k of A[m, k] * B[k, n], one fused multiply-add per
    accumulator and k (fp16/bf16 widened to the accumulator's type, int8 to int32).

    A half-precision accumulator is not rounded after every product: as a tensor-core
    instruction does, each block of INSTRUCTION_K products is summed in fp32 and added
    to the accumulator with one rounding."""
    out_ty = ctx.element_type(acc.type)
    if not isinstance(out_ty, (ir.F16Type, ir.BF16Type)):
        return _fma_loop(ctx, a_ty, size, ctx.const(0), k_size, n_size, row_of, col_of, reg_coords, totals)
    block = min(INSTRUCTION_K, k_size)
    loop = create_op("scf.for", [out_ty] * len(totals), [ctx.const(0), ctx.const(k_size), ctx.const(block)] + totals,
                     regions=1)
    body = loop.regions[0].blocks.append(ctx.i32, *[out_ty] * len(totals))
    with ir.InsertionPoint(body):
        zeros = [ctx.const(0.0, ctx.f32)] * len(totals)
        sums = _fma_loop(ctx, a_ty, size, body.arguments[0], block, n_size, row_of, col_of, reg_coords, zeros)
        updated = [ctx.arith("truncf", ctx.arith("addf", ctx.arith("extf", total, result_type=ctx.f32), partial),
                             result_type=out_ty)
                   for total, partial in zip(list(body.arguments)[1:], sums)]
        create_op("scf.yield", [], updated)
    return list(loop.results)


def _fma_loop(ctx: LoweringContext, a_ty: ir.Type, size: int, first: ir.Value, count: int, n_size: int,
              row_of: dict, col_of: dict, reg_coords: list, totals: list[ir.Value]) -> list[ir.Value]:
    """totals[m, n] += A[m, k] * B[k, n] for k in [first, first + count), in the totals' type."""
    out_ty = totals[0].type
    is_int = isinstance(out_ty, ir.IntegerType)
    end = ctx.arith("addi", first, ctx.const(count))
    loop = create_op("scf.for", [out_ty] * len(totals), [first, end, ctx.const(1)] + totals, regions=1)
    body = loop.regions[0].blocks.append(ctx.i32, *[out_ty] * len(totals))
    with ir.InsertionPoint(body):
        k = body.arguments[0]
        k_row = ctx.arith("muli", k, ctx.const(n_size))  # B's offset of row k

        def load(index: ir.Value) -> ir.Value:
            address = ctx.shared_address(ctx.arith("muli", index, ctx.const(size)))
            value = from_shared(ctx, create_op("llvm.load", [store_type(ctx, a_ty)], [address]).result, a_ty)
            if value.type != out_ty:
                value = ctx.arith("extsi" if is_int else "extf", value, result_type=out_ty)
            return value

        a_vals = {key: load(ctx.arith("addi", row_of[key], k)) for key in row_of}
        b_vals = {key: load(ctx.arith("addi", col_of[key], k_row)) for key in col_of}
        updated = []
        for key, total in zip(reg_coords, list(body.arguments)[1:]):
            x, y = a_vals[(key[:-2], key[-2])], b_vals[(key[:-2], key[-1])]
            if is_int:
                updated.append(ctx.arith("addi", total, ctx.arith("muli", x, y)))
            else:
                updated.append(create_op("math.fma", [out_ty], [x, y, total]).result)
        create_op("scf.yield", [], updated)
    return list(loop.results)


def truncate_to_tf32(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    """fp32 cut to tf32's 10 mantissa bits (its 13 low bits cleared): what mma.sync and
    wgmma read of an fp32 register holding a .tf32 operand."""
    bits = create_op("llvm.bitcast", [ctx.i32], [value]).result
    kept = create_op("llvm.and", [ctx.i32], [bits, ctx.const(-(1 << 13))]).result
    return create_op("llvm.bitcast", [ctx.f32], [kept]).result
