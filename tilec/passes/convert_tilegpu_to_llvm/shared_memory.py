"""Shared-memory helpers of the lowering: how values are kept there, addresses, and how
much scratch space each op's lowering needs.

Values are kept in shared memory in a plain integer or float form: booleans as bytes,
pointers as 64-bit integers, fp8 as the bytes the lowering already holds them in.

**Scratch space.** Rules that exchange values between threads (cross-warp reductions,
scans, layout conversions, shape ops, gather, histogram, the FMA dot, atomics publishing
old values) use a region of shared memory private to the op. Its size is a function of
the ttgir op alone, registered beside the op's rule with `@scratch_bytes("tile.reduce")`;
tilegpu-allocate-shared-memory asks `scratch_size(op)` and places a buffer live only at
that op (its offset is the op's `tilegpu.offset`), and tilegpu-insert-barriers treats
the op as writing and reading those bytes. The rule then addresses its region with
`ctx.shared_address(local offset)` after `ctx.reserve_shared(n)`, which fails if `n`
exceeds what was allocated. A size function must answer 0 exactly when its rule will not
touch shared memory; each shares with its rule the pure function (of layouts and types)
that decides.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Sequence

from mlir import ir

from ...dialects._mlir import create_op
from ...dialects.tile import element_type, is_ptr_type
from ...layout.encodings import LANE, REGISTER, WARP
from ...layout.linear_layout import LinearLayout

if TYPE_CHECKING:  # the context imports this module: only its type is needed here
    from .context import LoweringContext

# On a local_alloc, its buffer's offset; on an op with scratch space, that space's offset.
OFFSET_ATTR = "tilegpu.offset"
# On the module: the bytes of shared memory the kernel needs (the allocator's high-water mark).
SHARED_ATTR = "tilegpu.shared"
# On a TMA store whose buffer the allocator kept its own over its loop: it waits for the
# read-out of its block only before writing the block again (and after the loop).
DEFERRED_ATTR = "tilegpu.deferred_read_wait"

ScratchFn = Callable[[ir.Operation, int], int]  # (the ttgir op, num_warps) -> bytes
SCRATCH_RULES: dict[str, ScratchFn] = {}


def scratch_bytes(*names: str) -> Callable[[ScratchFn], ScratchFn]:
    """Registers the scratch size function of the named ops (beside their lowering rule)."""

    def register(fn: ScratchFn) -> ScratchFn:
        for name in names:
            if name in SCRATCH_RULES:
                raise ValueError(f"two scratch size functions for {name}")
            SCRATCH_RULES[name] = fn
        return fn

    return register


def scratch_size(op: ir.Operation, num_warps: int) -> int:
    """Bytes of scratch space the lowering of `op` uses (0 for ops that use none)."""
    fn = SCRATCH_RULES.get(op.name)
    return fn(op, num_warps) if fn is not None else 0


def element_bytes(ty: ir.Type) -> int:
    """Bytes one element of the ttgir type `ty` (a tensor's element, or a scalar) takes in
    shared memory: what `byte_size` gives for the lowered element type."""
    elem = element_type(ty)
    if is_ptr_type(elem):
        return 8
    return max(1, elem.width // 8)


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


def row_slot_arrays(shape: Sequence[int], axis: int, slots_per_row: int,
                    sizes: Sequence[int]) -> tuple[list[int], int]:
    """Scratch arrays for a reduction's or scan's partial values across warps: one per
    operand (bytes per element `sizes[i]`), `slots_per_row` slots for each position off
    `axis` (a row), each array 16-byte aligned. Returns their offsets and the total bytes."""
    rows = math.prod(list(shape[:axis]) + list(shape[axis + 1:]))
    offsets, at = [], 0
    for size in sizes:
        offsets.append(at)
        at += (rows * slots_per_row * size + 15) // 16 * 16
    return offsets, at


def vector_run(layout: LinearLayout, encoding, shape: list[int], size: int, elem_ty: ir.Type) -> int:
    """How many consecutive registers sit at consecutive, aligned offsets of the buffer
    (up to 16 bytes), so that one vector access moves them; 1 for booleans and pointers
    (kept in another form in shared memory)."""
    if isinstance(elem_ty, ir.IntegerType) and elem_ty.width == 1 or not hasattr(elem_ty, "width"):
        return 1

    def offset(coords: tuple[int, ...]) -> int:
        if encoding is None:
            return sum(c * math.prod(shape[d + 1:]) for d, c in enumerate(coords))
        return encoding.offset_layout(shape).apply({f"dim{d}": c for d, c in enumerate(coords)})[0]

    registers = layout.bases(REGISTER)
    run = 1
    while run * size < 16 and run.bit_length() - 1 < len(registers) and offset(registers[run.bit_length() - 1]) == run:
        run *= 2
    # Every other basis must keep runs aligned: its offset a multiple of the run.
    others = list(registers[run.bit_length() - 1:]) + list(layout.bases(LANE)) + list(layout.bases(WARP))
    while run > 1 and any(offset(b) % run for b in others):
        run //= 2
    return run
