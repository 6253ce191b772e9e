"""Lowering of the explicit shared-memory ops: buffers, loads and stores, async copies.

A memory descriptor lowers to one i32: the byte offset of its buffer in the kernel's
shared memory (`tilegpu.offset` from tilegpu-allocate-shared-memory, plus the index of
a ring's buffer times the buffer's size). An element's place in a buffer comes from the
buffer's shared encoding (`element_offset`); without one the buffer is row-major.

local_store / local_load: each thread writes (reads) the elements its layout holds.
async_copy_global_to_local: each thread issues `cp.async` for its elements, in runs of
up to 16 bytes that are contiguous and aligned both in global memory (axis info) and in
the buffer, with the ignore-src predicate set where the mask is off (cp.async then
writes zeros), and each copy guarded by the op's `pred` where it has one (false: no copy,
no write). Completion is async_commit_group / async_wait (`cp.async.commit_group`,
`cp.async.wait_group N`); other threads see the data after a barrier.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import block_ops, create_op, int_attr_value, operand_groups
from ...dialects.op_facts import is_pure
from ...layout.encodings import LANE, REGISTER, WARP
from ...layout.linear_layout import LinearLayout
from ...layout.shared import NVMMASharedEncoding
from . import ldmatrix
from .context import LoweringContext, LoweringError, lowers
from .memory import load_width, vector_width
from .shape import row_major
from .shared_memory import OFFSET_ATTR, byte_size, from_shared, store_type, to_shared, vector_run


@dataclass(frozen=True)
class View:
    """Where a memory descriptor's elements live: the buffer it views (a local_alloc or
    a ring's slot: its shape and encoding decide offsets) and the view's origin in it
    (non-zero for a memdesc_subview: one K slice of a dot operand, say)."""
    buffer: ir.RankedTensorType
    origin: tuple[int, ...]

    @property
    def encoding(self):
        return tilegpu.parse_encoding(str(self.buffer.encoding)) if self.buffer.encoding is not None else None


def view_of(memdesc: ir.Value) -> View:
    origin = None
    while isinstance(memdesc, ir.OpResult):
        op = memdesc.owner.operation if hasattr(memdesc.owner, "operation") else memdesc.owner
        if op.name != "tilegpu.memdesc_subview":
            break
        offsets = tilegpu.subview_offsets(op)
        origin = offsets if origin is None else [a + b for a, b in zip(origin, offsets)]
        memdesc = op.operands[0]
    buffer = tilegpu.memdesc_tensor(memdesc.type)
    return View(buffer, tuple(origin) if origin is not None else (0,) * buffer.rank)


def element_offsets(ctx: LoweringContext, layout: LinearLayout, view: View) -> list[tuple[ir.Value | None, int]]:
    """For each register of a thread holding `layout`, the offset (in elements) of its
    element in the viewed buffer, as (variable, constant): an i32 value (None: 0) plus a
    constant. Registers with equal variable parts share one value object, so a caller
    computes each distinct base address once and adds the constants (which PTX folds
    into the accesses' immediate offsets).

    A shared encoding is linear over GF(2) from coordinates to offsets, and a thread's
    coordinates are its lane/warp part XOR its register part (see thread_coordinates),
    so each offset is the thread part's offset (computed once) XOR a constant. Only the
    constant's bits that some thread's part may also set need the XOR; the others are
    added: `(thread ^ low) + high`. With a 128-byte swizzle there are at most 8
    distinct `low`s. A view's origin is a multiple of its shape, so adding it is XORing
    it too."""
    shape = list(view.buffer.shape)
    if view.encoding is None:  # row-major: linear in +
        start = sum(o * math.prod(shape[d + 1:]) for d, o in enumerate(view.origin))
        return [(row_major(ctx, coords, shape), start) for coords in ctx.element_coordinates(layout)]
    offsets = view.encoding.offset_layout(shape)

    def offset_of(coords) -> int:
        return offsets.apply({f"dim{d}": c for d, c in enumerate(coords)})[0]

    start = offset_of(view.origin)
    terms: list[ir.Value] = []
    for d, (part, _) in enumerate(ctx.thread_coordinates(layout)):
        if part is not None:
            terms += ctx.bit_terms(part, [basis[0] for basis in offsets.bases(f"dim{d}")])
    thread = ctx.combine_terms(terms, disjoint=False)
    thread_bits = 0  # every bit a thread's part may set
    for basis in list(layout.bases(LANE)) + list(layout.bases(WARP)):
        thread_bits |= offset_of(basis)
    variables: dict[int, ir.Value | None] = {0: thread}
    parts = []
    for coords in ctx.register_coordinates(layout):
        constant = offset_of(coords) ^ start
        if thread is None:
            parts.append((None, constant))
            continue
        low = constant & thread_bits
        if low not in variables:
            variables[low] = ctx.arith("xori", thread, ctx.const(low))
        parts.append((variables[low], constant & ~thread_bits))
    return parts


def thread_addresses(ctx: LoweringContext, parts: list[tuple[ir.Value | None, int]], size: int,
                     base: ir.Value) -> list[ir.Value]:
    """The i32 shared-memory address of each (variable, constant) offset of
    `element_offsets` in a buffer at i32 address `base`, `size` bytes an element:
    base + variable * size (once per distinct variable) + constant * size. Adding the
    buffer first keeps the loop-invariant part from being hoisted with the constant,
    which would cost a register per distinct constant."""
    bases: dict[int, ir.Value] = {}
    addresses = []
    for variable, constant in parts:
        key = id(variable)
        if key not in bases:
            bases[key] = base if variable is None else \
                ctx.arith("addi", base, ctx.arith("muli", variable, ctx.const(size)))
        address = bases[key]
        addresses.append(ctx.arith("addi", address, ctx.const(constant * size)) if constant else address)
    return addresses


def _element_bytes(ctx: LoweringContext, buffer: ir.RankedTensorType) -> int:
    return byte_size(ctx, ctx.element_type(ir.RankedTensorType.get(list(buffer.shape), buffer.element_type)))


def _write(ctx: LoweringContext, op: ir.Operation, value: ir.Value, memdesc: ir.Value) -> None:
    view = view_of(memdesc)
    write_view(ctx, value, view, ctx.lowered(memdesc))
    if isinstance(view.encoding, NVMMASharedEncoding) and not _fenced_by_next_write(op):
        # The buffer is for wgmma, which reads through the async proxy: each thread
        # orders its (generic) writes before those reads; a barrier then orders the
        # threads (tilegpu-insert-barriers). Buffers filled by cp.async or TMA need no
        # fence (as in Triton), so the dots in a pipelined loop have none.
        create_op("nvvm.fence.proxy", [], attributes={"kind": ir.Attribute.parse("#nvvm.proxy_kind<async.shared>"),
                                                      "space": ir.Attribute.parse("#nvvm.shared_space<cta>")})


def _fenced_by_next_write(op: ir.Operation) -> bool:
    """Whether the fence of a later write of a wgmma buffer in `op`'s block covers `op`'s
    writes too: a thread's fence.proxy.async orders all its earlier writes, so when only
    views and pure ops that read no buffer (global loads included) come in between, one
    fence, the last, does for both: A and B loaded and staged in one iteration (strides
    that rule out cp.async) have one fence before their dot, as in Triton, not two."""
    ops = block_ops(op.block)
    for later in ops[ops.index(op) + 1:]:
        if later.name in ("tilegpu.memdesc_index", "tilegpu.memdesc_subview"):
            continue
        written = _written_buffer(later)
        if written is not None:
            return isinstance(view_of(written).encoding, NVMMASharedEncoding)
        if not is_pure(later) or len(later.regions) or any(tilegpu.is_memdesc(v.type) for v in later.operands):
            return False  # a dot reading the buffer, a barrier, a store, ...
    return False


def _written_buffer(op: ir.Operation) -> ir.Value | None:
    """The buffer an initialised local_alloc or a local_store writes, else None."""
    if op.name == "tilegpu.local_alloc" and len(op.operands) == 1:
        return op.results[0]
    if op.name == "tilegpu.local_store":
        return op.operands[1]
    return None


def write_view(ctx: LoweringContext, value: ir.Value, view: View, base: ir.Value) -> None:
    """Each thread writes the elements of `value` it holds to the buffer `view` at shared
    byte offset `base` (an i32): with stmatrix where it applies (16-bit elements on sm_90,
    every row of the instruction's matrices 16 contiguous bytes of the buffer: an mma
    accumulator into an NVMMA layout, for a TMA store or a wgmma operand), else in
    vectors where the layouts allow."""
    size = _element_bytes(ctx, view.buffer)
    # Replicas write the same values to the same places: harmless, and no predicate.
    _, registers = ctx.owners(value)
    values = ctx.elements(value)
    layout = ctx.layout(value)
    if size == 2 and ctx.target.at_least(90):
        plan = ldmatrix.plan_stmatrix(layout, view.encoding, tuple(view.buffer.shape), 16, ctx.num_warps)
        if plan is not None:
            ldmatrix.emit_stmatrix(ctx, layout, view.encoding, view.buffer, view.origin, base,
                                   [to_shared(ctx, v) for v in values], *plan)
            return
    parts = element_offsets(ctx, layout, view)
    elem_ty = values[0].type
    run = vector_run(layout, view.encoding, list(view.buffer.shape), size, elem_ty)
    owned = set(registers)
    for start in _store_order(parts, run, load_width(ctx, value)):
        if start not in owned:
            continue
        address = _element_pointer(ctx, base, parts[start], size)
        # A vector even of one element (as Triton's): LLVM then takes a byte or a half
        # out of its loaded word (a prmt) next to the store, not next to the load, so
        # only the loaded words stay live until the stores, not every element.
        elements = [to_shared(ctx, v) for v in values[start:start + run]]
        vector_type = ir.VectorType.get([run], elements[0].type)
        vector = create_op("llvm.mlir.undef", [vector_type]).result
        for i, element in enumerate(elements):
            vector = create_op("llvm.insertelement", [vector_type], [vector, element, ctx.const(i)]).result
        create_op("llvm.store", [], [vector, address],
                  attributes={"alignment": ir.IntegerAttr.get(ctx.i64, run * size)})


def _store_order(parts: list[tuple[ir.Value | None, int]], run: int, loaded: int) -> list[int]:
    """The first registers of the runs of `run` registers, in the order to store them.

    ptxas places the global loads of stored values by the order of the stores. In
    register order, the stores of each loaded vector form one block (16 byte stores
    per `ld.global.v4` when an int8 tile is transposed); ptxas then lets each load's
    registers die before the next load, reuses them for it, and waits for the loads
    one after another. So the runs are grouped by base (the variable part of
    `element_offsets`; registers whose offsets a swizzle XORs with the thread's share
    one), as Triton orders its stores, which keeps one base live at a time; and where
    the value comes straight from global loads of `loaded` registers each, a group
    goes round the loaded vectors (the first byte of each, then the second...), so all
    of them stay live to the end and ptxas issues every load at once."""
    groups: dict[int, list[int]] = {}
    for start in range(0, len(parts), run):
        groups.setdefault(id(parts[start][0]), []).append(start)
    if loaded > run:
        for group in groups.values():
            group.sort(key=lambda start: (start % loaded, start // loaded))
    return [start for group in groups.values() for start in group]


def _element_pointer(ctx: LoweringContext, base: ir.Value, part: tuple[ir.Value | None, int], size: int) -> ir.Value:
    """The shared-memory pointer of an element at offset `part` (see element_offsets) of
    the buffer at byte `base`: the buffer, then the thread's variable offset, then the
    constant (a GEP LLVM folds into the access's immediate). In that order on purpose:
    in a loop the buffer moves every iteration (a ring's slot) while the thread's
    offset does not, so each access costs one add."""
    variable, constant = part
    pointer = ctx.shared_pointer(base)
    if variable is not None:
        pointer = ctx.shared_pointer(ctx.arith("muli", variable, ctx.const(size)), pointer)
    return ctx.shared_pointer(ctx.const(constant * size), pointer) if constant else pointer


@lowers("tilegpu.local_alloc")
def lower_local_alloc(ctx: LoweringContext, op: ir.Operation) -> None:
    if OFFSET_ATTR not in op.attributes:
        raise LoweringError("a local_alloc without an offset: run tilegpu-allocate-shared-memory first")
    ctx.set(op.results[0], ctx.const(int_attr_value(op, OFFSET_ATTR)))
    if len(op.operands):
        _write(ctx, op, op.operands[0], op.results[0])


@lowers("tilegpu.local_dealloc")
def lower_local_dealloc(ctx: LoweringContext, op: ir.Operation) -> None:
    """Nothing to do: offsets are static, and liveness already reused the bytes."""


@lowers("tilegpu.memdesc_index")
def lower_memdesc_index(ctx: LoweringContext, op: ir.Operation) -> None:
    ring, index = op.operands
    one = tilegpu.memdesc_tensor(op.results[0].type)
    stride = math.prod(one.shape) * _element_bytes(ctx, one)
    ctx.set(op.results[0], ctx.arith("addi", ctx.lowered(ring), ctx.arith("muli", ctx.lowered(index), ctx.const(stride))))


@lowers("tilegpu.memdesc_subview")
def lower_memdesc_subview(ctx: LoweringContext, op: ir.Operation) -> None:
    """The same buffer: accesses through the view add its origin (view_of)."""
    ctx.set(op.results[0], ctx.lowered(op.operands[0]))


@lowers("tilegpu.local_store")
def lower_local_store(ctx: LoweringContext, op: ir.Operation) -> None:
    _write(ctx, op, op.operands[0], op.operands[1])


@lowers("tilegpu.local_load")
def lower_local_load(ctx: LoweringContext, op: ir.Operation) -> None:
    memdesc, result = op.operands[0], op.results[0]
    ctx.set(result, read_view(ctx, result, view_of(memdesc), ctx.lowered(memdesc)))


def read_view(ctx: LoweringContext, result: ir.Value, view: View, base: ir.Value) -> list[ir.Value]:
    """The elements of `result` (in its layout) each thread reads from the buffer `view`
    at shared byte offset `base` (an i32): ldmatrix for mma operands where it applies,
    else vectors where the layouts allow."""
    buffer, encoding = view.buffer, view.encoding
    size = _element_bytes(ctx, buffer)
    elem_ty = ctx.element_type(result.type)
    layout = ctx.layout(result)
    if ldmatrix.is_mma_operand(tilegpu.layout_of(result.type)):
        plan = ldmatrix.plan_ldmatrix(layout, encoding, buffer, 8 * size, ctx.num_warps)
        if plan is not None:
            return ldmatrix.emit_ldmatrix(ctx, layout, encoding, buffer, view.origin, base, elem_ty, 8 * size, *plan)
    parts = element_offsets(ctx, layout, view)
    run = vector_run(layout, encoding, list(buffer.shape), size, elem_ty)
    values: list[ir.Value] = []
    for start in range(0, len(parts), run):
        address = _element_pointer(ctx, base, parts[start], size)
        if run == 1:
            loaded = create_op("llvm.load", [store_type(ctx, elem_ty)], [address]).result
            values.append(from_shared(ctx, loaded, elem_ty))
            continue
        vector_type = ir.VectorType.get([run], elem_ty)
        vector = create_op("llvm.load", [vector_type], [address],
                           attributes={"alignment": ir.IntegerAttr.get(ctx.i64, run * size)}).result
        values.extend(create_op("llvm.extractelement", [elem_ty], [vector, ctx.const(i)]).result for i in range(run))
    return values


@lowers("tilegpu.async_copy_global_to_local")
def lower_async_copy(ctx: LoweringContext, op: ir.Operation) -> None:
    (src,), (memdesc,), mask_group, limit_group, pred_group = operand_groups(op)
    mask = mask_group[0] if mask_group else None
    pred = ctx.lowered(pred_group[0]) if pred_group else None
    view = view_of(memdesc)
    buffer = view.buffer
    size = _element_bytes(ctx, buffer)
    layout = ctx.layout(src)
    # The pipeliner's width (decided on the loop's own load) where it set one.
    vec = int_attr_value(op, "vec") if "vec" in op.attributes else copy_width(ctx, src, mask, buffer, size)
    owner, registers = ctx.owners(src)
    if owner is not None:
        raise LoweringError("async copy from a layout that repeats elements across threads")
    pointers = ctx.elements(src)
    masks = ctx.elements(mask) if mask is not None else None
    limits = ctx.elements(limit_group[0]) if limit_group else None
    base = ctx.lowered(memdesc)
    nbytes = vec * size
    # Per slot: the slot's address plus each distinct thread offset, then constants.
    addresses = thread_addresses(ctx, element_offsets(ctx, layout, view), size, ctx.shared_address32(base))
    for start in range(0, len(pointers), vec):
        if start not in registers:
            continue
        address = addresses[start]
        # .cg (L2 only) exists for 16-byte copies; smaller ones cache in L1 too.
        cache = ".cg" if nbytes == 16 else ".ca"
        if limits is not None:
            # The run's leading elements below the bound, read; the rest zero-filled.
            size_bytes = _source_bytes(ctx, limits[start], masks[start] if masks is not None else None, vec, size)
            _issue_copy(ctx, pred, f"cp.async{cache}.shared.global [$0], [$1], {nbytes}, $2;", "r,l,r",
                        [address, pointers[start], size_bytes])
        elif masks is None:
            _issue_copy(ctx, pred, f"cp.async{cache}.shared.global [$0], [$1], {nbytes};", "r,l",
                        [address, pointers[start]])
        else:
            # A masked-off element is zero-filled through the ignore-src predicate: the mask
            # stays a predicate (a source size of 0 or N went compare, select, select and
            # compare again, per distinct mask and iteration).
            _issue_copy(ctx, pred, f"cp.async{cache}.shared.global [$0], [$1], {nbytes}, ignore;", "r,l,b",
                        [address, pointers[start], masks[start]], prefix="not.pred ignore, $2;")


def _issue_copy(ctx: LoweringContext, pred: ir.Value | None, copy: str, constraints: str,
                operands: list[ir.Value], prefix: str = "") -> None:
    """One cp.async (`copy`, reading `operands`), after `prefix` (which may set the
    predicate `ignore`), under the op's predicate `pred` where it has one: `@p cp.async`,
    so a false one copies and writes nothing."""
    if pred is not None:
        copy = f"@${len(operands)} {copy}"
        constraints += ",b"
        operands = operands + [pred]
    if prefix:
        copy = f"{{ .reg .pred ignore; {prefix} {copy} }}"
    ctx.inline_asm(copy, constraints, operands, [])


def _source_bytes(ctx: LoweringContext, limit: ir.Value, mask: ir.Value | None, vec: int, size: int) -> ir.Value:
    """cp.async's source size (i32) for a run of `vec` elements whose first has `limit`
    elements left below its bound: min(max(limit, 0), vec) elements, none where `mask`
    is off."""
    ty = limit.type
    count = ctx.arith("minsi", ctx.arith("maxsi", limit, ctx.const(0, ty)), ctx.const(vec, ty))
    if ty != ctx.i32:  # 0 .. vec: any width holds it
        widen = ir.IntegerType(ty).width < 32
        count = ctx.arith("extsi" if widen else "trunci", count, result_type=ctx.i32)
    nbytes = ctx.arith("muli", count, ctx.const(size))
    if mask is None:
        return nbytes
    return ctx.arith("select", mask, nbytes, ctx.const(0), result_type=ctx.i32)


def copy_width(ctx: LoweringContext, src: ir.Value, mask: ir.Value | None, buffer: ir.RankedTensorType,
                size: int) -> int:
    """Elements per cp.async (4, 8 or 16 bytes): a run contiguous and aligned in global
    memory, under one mask value, and at consecutive offsets of the buffer. Reads only
    `ctx.layout` and `ctx.axis_info`, so tilegpu-pipeline asks it too, before it makes
    a copy the lowering would refuse."""
    vec = vector_width(ctx, src, mask, size)
    regs = ctx.layout(src).bases(REGISTER)  # a run's register bits: run *= 2 per bit
    shape = list(buffer.shape)
    encoding = tilegpu.parse_encoding(str(buffer.encoding)) if buffer.encoding is not None else None
    run = 1
    while run < vec and run.bit_length() - 1 < len(regs):
        coords = regs[run.bit_length() - 1]
        if encoding is None:  # row-major
            moved = sum(c * math.prod(shape[d + 1:]) for d, c in enumerate(coords))
        else:
            moved = encoding.offset_layout(shape).apply({f"dim{d}": c for d, c in enumerate(coords)})[0]
        if moved != run:  # this register bit does not step to the next offset
            break
        run *= 2
    vec = min(vec, run)
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
