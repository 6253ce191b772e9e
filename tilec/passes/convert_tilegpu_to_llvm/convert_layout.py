"""Lowering of tilegpu.convert_layout, and of tilegpu.extract_slice (a register selection).

Compares the two linear layouts (`register_permutation`):
- equal: nothing to do;
- same lanes and warps, registers permuted: reorder the thread's values;
- otherwise: every thread writes its elements to the op's scratch space in shared
  memory, a barrier, every thread reads the elements its new layout assigns it. Only
  then does the op need scratch space (`convert_layout_scratch_bytes`: every element).

Where the elements sit in the scratch space is chosen per conversion by
`tilec.layout.exchange.choose_exchange`: a linear map from coordinates to offsets under
which both sides move the widest vectors their registers share (up to 16 bytes) and
each phase of a warp's accesses reaches distinct banks, or a (swizzled) row-major
buffer where that costs less. A thread's offsets are its lane/warp part's offset
(computed once) XOR a constant per register, the constant's bits no thread sets added
instead, so they fold into the accesses' immediates. Three cases keep their own route:
a result in an mma operand layout that `ldmatrix` can load, and (sm_90) a 16-bit mma
accumulator that `stmatrix` can write into a layout read 16 bytes at a time, go through
the swizzled row-major buffer (local_memory.write_view / read_view); an exchange too
large for shared memory runs in rounds (the generic exchange of shape.py).
"""
from __future__ import annotations

import math

from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import create_op
from ...dialects.tile import element_type, shape_of
from ...layout.encodings import LANE, REGISTER, WARP
from ...layout.exchange import choose_exchange
from ...layout.linear_layout import LinearLayout
from ...layout.shape_layouts import register_sources
from ...layout.shared import exchange_shared_encoding
from . import ldmatrix
from .context import LoweringContext, LoweringError, layout_of_value, lowers
from .local_memory import View, read_view, write_view
from .shape import exchange, exchange_bytes, row_major, staging_bytes, staging_plan
from .shared_memory import element_bytes, from_shared, scratch_bytes, store_type, to_shared, vector_run


def register_permutation(src_ll: LinearLayout, dst_ll: LinearLayout) -> list[int] | None:
    """For each register of `dst_ll`, the register of `src_ll` holding the same element
    in the same thread, when the conversion moves no element between threads; None when
    it does (then it goes through shared memory)."""
    if src_ll == dst_ll:
        return list(range(src_ll.in_dim_size(REGISTER)))
    plan = register_sources(dst_ll, [src_ll], lambda coords: (0, coords))
    return None if plan is None else [register for _, register in plan]


def slice_registers(src_ll: LinearLayout, dst_ll: LinearLayout, offsets: list[int]) -> list[int] | None:
    """For each register of `dst_ll` (a block of `src_ll`'s tensor at `offsets`, in the
    same layout), the register of `src_ll` holding its element in the same thread; None
    when some thread does not hold its part of the block.

    Coordinates are the register part XOR the thread part; a block's offset is a
    multiple of its power-of-two shape, so when the offset shares no bit with what lanes
    and warps move, the thread part is the same in both and registers map directly."""
    if src_ll.bases(LANE) != dst_ll.bases(LANE) or src_ll.bases(WARP) != dst_ll.bases(WARP):
        return None
    thread_bits = [0] * len(offsets)
    for basis in list(src_ll.bases(LANE)) + list(src_ll.bases(WARP)):
        for d, c in enumerate(basis):
            thread_bits[d] |= c
    if any(o & bits for o, bits in zip(offsets, thread_bits)):
        return None
    index = {src_ll.apply({REGISTER: r}): r for r in reversed(range(src_ll.in_dim_size(REGISTER)))}
    picks = []
    for r in range(dst_ll.in_dim_size(REGISTER)):
        coords = tuple(c + o for c, o in zip(dst_ll.apply({REGISTER: r}), offsets))
        if coords not in index:
            return None
        picks.append(index[coords])
    return picks


@lowers("tilegpu.extract_slice")
def lower_extract_slice(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    picks = slice_registers(ctx.layout(src), ctx.layout(dst), tilegpu.subview_offsets(op))
    if picks is None:
        raise LoweringError(f"extract_slice of a block its threads do not hold: {src.type} -> {dst.type}")
    values = ctx.elements(src)
    ctx.set(dst, [values[r] for r in picks])


@scratch_bytes("tilegpu.convert_layout")
def convert_layout_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    src, dst = op.operands[0], op.results[0]
    if register_permutation(layout_of_value(src), layout_of_value(dst)) is not None:
        return 0
    return exchange_bytes(op, [src])


@lowers("tilegpu.convert_layout")
def lower_convert_layout(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    src_ll, dst_ll = ctx.layout(src), ctx.layout(dst)
    values = ctx.elements(src)
    permutation = register_permutation(src_ll, dst_ll)
    if permutation is not None:
        ctx.set(dst, [values[r] for r in permutation])
        return
    shape = shape_of(src.type)
    per_round, _ = staging_plan([src], ctx.target)
    if per_round < math.prod(shape):
        (result,) = exchange(ctx, [src], [(dst_ll, lambda coords: row_major(ctx, coords, shape))])
        ctx.set(dst, result)
        return
    ctx.reserve_shared(staging_bytes([src]))
    base = ctx.const(ctx.scratch_offset)
    encoding = _ldmatrix_encoding(ctx, src, dst) or _stmatrix_encoding(ctx, src, dst)
    if encoding is not None:
        buffer = ir.RankedTensorType.get(shape, element_type(src.type), tilegpu.encoding_attr(encoding))
        view = View(buffer, (0,) * len(shape))
        write_view(ctx, src, view, base)
        ctx.barrier()
        ctx.set(dst, read_view(ctx, dst, view, base))
        return
    _, owned = ctx.owners(src)
    plan = choose_exchange(src_ll, dst_ll, tuple(shape), element_bytes(src.type), tuple(owned))
    if plan is None:  # extents that are not powers of two: row-major, element by element
        (result,) = exchange(ctx, [src], [(dst_ll, lambda coords: row_major(ctx, coords, shape))])
        ctx.set(dst, result)
        return
    size = element_bytes(src.type)
    _store(ctx, values, owned, _Addresses(ctx, src_ll, plan.offsets, size, base), plan.src.vector)
    ctx.barrier()
    ctx.set(dst, _load(ctx, ctx.element_type(dst.type), _Addresses(ctx, dst_ll, plan.offsets, size, base),
                       plan.dst.vector))


def _ldmatrix_encoding(ctx: LoweringContext, src: ir.Value, dst: ir.Value):
    """The swizzled row-major encoding to exchange through when the result is an mma
    operand that `ldmatrix` can load from it; None otherwise."""
    if not ldmatrix.is_mma_operand(tilegpu.layout_of(dst.type)):
        return None
    shape = shape_of(src.type)
    encoding = exchange_shared_encoding(shape, 8 * element_bytes(src.type))
    if encoding is None:
        return None
    buffer = ir.RankedTensorType.get(shape, element_type(src.type), tilegpu.encoding_attr(encoding))
    plan = ldmatrix.plan_ldmatrix(ctx.layout(dst), encoding, buffer, 8 * element_bytes(src.type), ctx.num_warps)
    return encoding if plan is not None else None


def _stmatrix_encoding(ctx: LoweringContext, src: ir.Value, dst: ir.Value):
    if element_bytes(src.type) != 2 or not ctx.target.at_least(90):
        return None
    return stmatrix_exchange_encoding(ctx.layout(src), ctx.layout(dst), tuple(shape_of(src.type)),
                                      ctx.element_type(dst.type), ctx.num_warps)


def stmatrix_exchange_encoding(src_ll: LinearLayout, dst_ll: LinearLayout, shape: tuple[int, ...], elem_ty,
                               num_warps: int):
    """The swizzled row-major encoding to exchange 16-bit elements through (sm_90) when
    the source is an mma accumulator that `stmatrix` writes into it and the result reads
    it back in 16-byte vectors, 8 lanes at a time in 8 distinct bank groups; None
    otherwise. Both sides then move 16 bytes an instruction, half the instructions of
    the best plain exchange of an accumulator (a thread holds at most two neighbouring
    elements of a row, so its stores move 8 bytes at best): a matmul's epilogue storing
    fp16 through pointers, say, as Triton's (st.shared.v4 and ldmatrix, the mirror)."""
    encoding = exchange_shared_encoding(shape, 16)
    if encoding is None or ldmatrix.plan_stmatrix(src_ll, encoding, shape, 16, num_warps) is None:
        return None
    if vector_run(dst_ll, encoding, list(shape), 2, elem_ty) != 8:
        return None
    # Offsets are linear in the lane bits, so the 8 lanes of each phase of a 16-byte
    # access reach distinct bank groups exactly when lanes 1, 2 and 4 move the
    # 16-byte chunk (element offset bits 3..5) by independent amounts.
    offsets = encoding.offset_layout(list(shape))
    chunks = [offsets.apply({f"dim{d}": c for d, c in enumerate(basis)})[0] >> 3 & 7
              for basis in dst_ll.bases(LANE)[:3]]
    spans = {0}
    for chunk in chunks:
        spans |= {s ^ chunk for s in spans}
    return encoding if len(chunks) == 3 and len(spans) == 8 else None


class _Addresses:
    """Shared-memory addresses of one thread's elements of `layout` in the scratch space
    at i32 byte offset `base`, laid out by `offsets` (coordinates -> element offset).

    offset(register r) = S(thread part) XOR S(register part): the thread part is computed
    once; of each register's constant, the bits some thread's part may set are XORed
    into it (one value per distinct pattern), the others added as an immediate."""

    def __init__(self, ctx: LoweringContext, layout: LinearLayout, offsets: LinearLayout, size: int,
                 base: ir.Value):
        self.ctx, self.layout, self.offsets, self.size = ctx, layout, offsets, size
        terms: list[ir.Value] = []
        for d, (part, _) in enumerate(ctx.thread_coordinates(layout)):
            if part is not None:
                terms += ctx.bit_terms(part, [basis[0] for basis in offsets.bases(f"dim{d}")])
        self.thread = ctx.combine_terms(terms, disjoint=False)
        self.thread_bits = 0  # every offset bit some thread's part may set
        for name in (LANE, WARP):
            for basis in layout.bases(name) if name in layout.in_dims else ():
                self.thread_bits |= self.offset_of(basis)
        self.buffer = ctx.shared_pointer(base)
        self._pointers: dict[int, ir.Value] = {}

    def offset_of(self, coords: tuple[int, ...]) -> int:
        return self.offsets.apply({f"dim{d}": c for d, c in enumerate(coords)})[0]

    def register_offsets(self) -> list[int]:
        """The constant part of each register's offset."""
        return [self.offset_of(coords) for coords in self.ctx.register_coordinates(self.layout)]

    def pointer(self, constant: int) -> ir.Value:
        """The address of the element at this thread's offset XOR `constant`."""
        ctx = self.ctx
        low, high = constant & self.thread_bits, constant & ~self.thread_bits
        pointer = self._pointers.get(low)
        if pointer is None:
            pointer = self.buffer
            if self.thread is not None:  # (without one, thread_bits and so `low` are 0)
                variable = ctx.arith("xori", self.thread, ctx.const(low)) if low else self.thread
                pointer = ctx.shared_pointer(ctx.arith("muli", variable, ctx.const(self.size)), pointer)
            self._pointers[low] = pointer
        return ctx.shared_pointer(ctx.const(high * self.size), pointer) if high else pointer


def _store(ctx: LoweringContext, values: list[ir.Value], registers: list[int], addresses: _Addresses,
           vector: int) -> None:
    """Each thread writes the values of `registers`, `vector` elements per store."""
    offsets = addresses.register_offsets()
    groups: dict[int, list[ir.Value | None]] = {}
    for r in registers:
        groups.setdefault(offsets[r] // vector, [None] * vector)[offsets[r] % vector] = to_shared(ctx, values[r])
    for group, parts in groups.items():
        address = addresses.pointer(group * vector)
        if vector == 1:
            create_op("llvm.store", [], [parts[0], address])
            continue
        vector_type = ir.VectorType.get([vector], parts[0].type)
        packed = create_op("llvm.mlir.undef", [vector_type]).result
        for i, part in enumerate(parts):
            packed = create_op("llvm.insertelement", [vector_type], [packed, part, ctx.const(i)]).result
        create_op("llvm.store", [], [packed, address],
                  attributes={"alignment": ir.IntegerAttr.get(ctx.i64, vector * addresses.size)})


def _load(ctx: LoweringContext, elem_ty: ir.Type, addresses: _Addresses, vector: int) -> list[ir.Value]:
    """Every register of the result, `vector` elements per load (registers holding the
    same element share one)."""
    offsets = addresses.register_offsets()
    kept = store_type(ctx, elem_ty)
    loaded: dict[int, list[ir.Value]] = {}
    values = []
    for offset in offsets:
        group = offset // vector
        if group not in loaded:
            address = addresses.pointer(group * vector)
            if vector == 1:
                loaded[group] = [from_shared(ctx, create_op("llvm.load", [kept], [address]).result, elem_ty)]
            else:
                vector_type = ir.VectorType.get([vector], kept)
                packed = create_op("llvm.load", [vector_type], [address],
                                   attributes={"alignment": ir.IntegerAttr.get(ctx.i64, vector * addresses.size)}).result
                loaded[group] = [from_shared(ctx, create_op("llvm.extractelement", [kept], [packed, ctx.const(i)]).result,
                                             elem_ty) for i in range(vector)]
        values.append(loaded[group][offset % vector])
    return values
