"""local_load into an mma operand layout with `ldmatrix` (sm_75+: nvvm.ldmatrix).

`ldmatrix.x4` loads four 8x8 matrices of 16-bit elements for a warp: lane 8*i + j
gives the address of row j of matrix i (16 contiguous bytes), and each lane receives,
in its 32-bit register i, the two elements of matrix i that the mma fragment layout
assigns it (`.trans`: the matrix transposed, for operands whose K runs down the
buffer's rows). 8-bit and tf32 operands are loaded the same way as pairs of bytes or
halves of words (no `.trans`). tilec.layout.shared.ldmatrix_row_* say which tensor
element starts each row; a register layout is loaded this way only when every row of
every warp is 16 contiguous, aligned bytes of the buffer (otherwise: element loads).

Addresses are linear: a row's start is the layout's image of (register, lane, warp)
bits, and the shared layout maps coordinates to offsets linearly, so each lane's offset
is its lane and warp bits' contributions XORed (computed once) XOR a constant for each
group of four registers.
"""
from __future__ import annotations

import functools

from mlir import ir

from ...dialects._mlir import create_op
from ...layout.encodings import LANE, REGISTER, WARP, DotOperandEncoding
from ...layout.linear_layout import LinearLayout
from ...layout.mma import MmaEncoding
from ...layout.shared import SwizzledSharedEncoding, ldmatrix_row_offsets
from .context import LoweringContext


def _shared_layout(rank: int, encoding) -> object:
    """The buffer's shared encoding; a row-major buffer as an unswizzled one."""
    if encoding is not None:
        return encoding
    return SwizzledSharedEncoding(1, 1, 1, tuple(reversed(range(rank))))


def plan_ldmatrix(layout: LinearLayout, encoding, buffer: ir.RankedTensorType, element_bits: int,
                  num_warps: int) -> tuple[bool, int] | None:
    """(trans, matrices per instruction) when `layout` can be loaded with ldmatrix from
    the buffer, else None."""
    return _plan(layout, encoding, tuple(buffer.shape), element_bits, num_warps)


@functools.lru_cache(maxsize=256)
def _plan(layout: LinearLayout, encoding, shape: tuple[int, ...], element_bits: int,
          num_warps: int) -> tuple[bool, int] | None:
    """plan_ldmatrix, once per distinct question (a K-sliced dot asks the same one for
    every slice)."""
    if element_bits not in (8, 16, 32):
        return None
    per_word = 32 // element_bits
    words = layout.in_dim_size(REGISTER) // per_word
    if words == 0:
        return None
    num = 4 if words % 4 == 0 else 2 if words % 2 == 0 else 1
    shared = _shared_layout(len(shape), encoding)
    # Offsets are linear (XOR) in the register, lane and warp bits, so the rows of any
    # group and warp are those of group 0 of warp 0 XOR one constant, itself the XOR of
    # the constants of their single bits: rows stay 16 contiguous aligned bytes exactly
    # when each single bit's constant is a multiple of a row. Checking group 0 of warp 0
    # and each single group bit and warp bit is therefore checking all of them.
    warps = [0] + [1 << b for b in range(num_warps.bit_length() - 1)]
    firsts = [0] + [num << b for b in range((words // num).bit_length() - 1)]
    for trans in ((False, True) if element_bits == 16 else (False,)):
        try:
            for warp in warps:
                for first in (firsts if warp == 0 else [0]):
                    ldmatrix_row_offsets(layout, shared, list(shape), element_bits, list(range(first, first + num)),
                                         trans, warp)
        except ValueError:
            continue
        return trans, num
    return None


def is_mma_operand(encoding) -> bool:
    return isinstance(encoding, DotOperandEncoding) and isinstance(encoding.parent, MmaEncoding)


def address_plan(layout: LinearLayout, encoding, shape: tuple[int, ...], origin: tuple[int, ...],
                 element_bits: int, trans: bool, num: int) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """How each lane finds the row address it passes to an ldmatrix / stmatrix.x{num}, in
    elements of the buffer: the XOR of `lane_components[b]` over the set bits b of its
    lane index, of `warp_components[b]` over those of its warp index, and of the group's
    constant, for each (first 32-bit register, constant) of the register groups. A view
    starting at `origin` (a multiple of its shape) XORs its offset into the constants."""
    offsets = _shared_layout(len(shape), encoding).offset_layout(list(shape))
    start = offsets.apply({f"dim{d}": c for d, c in enumerate(origin)})[0]
    per_word = 32 // element_bits

    def offset_of(inputs: dict) -> int:
        coords = layout.apply(inputs)
        return offsets.apply({f"dim{d}": c for d, c in enumerate(coords)})[0]

    # Which input moves lane bit b of the instruction's lane index (8 * matrix + row).
    if trans:  # row j: register j % 2 of lanes j // 2 + 4c
        row_bits = [{REGISTER: 1}, {LANE: 1}, {LANE: 2}]
    else:      # row j: the elements lanes 4j..4j+3 hold
        row_bits = [{LANE: 4}, {LANE: 8}, {LANE: 16}]
    matrix_bits = [{REGISTER: per_word}, {REGISTER: 2 * per_word}][:num.bit_length() - 1]
    lane_components = [offset_of(bit) for bit in row_bits + matrix_bits]
    warp_components = [offset_of({WARP: 1 << b}) for b in range(len(layout.bases(WARP)))]
    words = layout.in_dim_size(REGISTER) // per_word
    groups = [(first, offset_of({REGISTER: first * per_word}) ^ start) for first in range(0, words, num)]
    return lane_components, warp_components, groups


def _group_addresses(ctx: LoweringContext, layout: LinearLayout, encoding, buffer: ir.RankedTensorType,
                     origin: tuple[int, ...], base: ir.Value, element_bits: int, trans: bool, num: int):
    """(first 32-bit register, shared pointer) of each register group of `layout`: the
    address this lane passes to the group's ldmatrix / stmatrix (address_plan), in the
    buffer at byte offset `base`."""
    lane_components, warp_components, groups = address_plan(layout, encoding, tuple(buffer.shape), origin,
                                                            element_bits, trans, num)
    terms = ctx.bit_terms(ctx.lane, lane_components) + ctx.bit_terms(ctx.warp, warp_components)
    thread = ctx.combine_terms(terms, disjoint=False)
    size = element_bits // 8
    # The buffer's start, then the thread's offset in it (as local_memory.element_offsets). Where a
    # register group's constant shares no bit with the thread's part, XOR is addition and
    # the constant becomes an immediate offset of the instruction.
    thread_bits = 0
    for component in lane_components + warp_components:
        thread_bits |= component
    pointer = ctx.shared_pointer(base)
    thread_pointer = None if thread is None else ctx.shared_pointer(ctx.arith("muli", thread, ctx.const(size)), pointer)
    for first, constant in groups:
        if thread is None:
            address = ctx.shared_pointer(ctx.const(constant * size), pointer)
        elif constant & thread_bits == 0:
            address = ctx.shared_pointer(ctx.const(constant * size), thread_pointer)
        else:
            offset = ctx.arith("muli", ctx.arith("xori", thread, ctx.const(constant)), ctx.const(size))
            address = ctx.shared_pointer(offset, pointer)
        yield first, address


def _matrix_attributes(ctx: LoweringContext, trans: bool, num: int | None = None) -> dict:
    attributes = {
        "layout": ir.Attribute.parse(f"#nvvm.mma_layout<{'col' if trans else 'row'}>"),
        "shape": ir.Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>"),
        "eltType": ir.Attribute.parse("#nvvm.ld_st_matrix_elt_type<b16>"),
    }
    if num is not None:
        attributes["num"] = ir.IntegerAttr.get(ctx.i32, num)
    return attributes


def emit_ldmatrix(ctx: LoweringContext, layout: LinearLayout, encoding, buffer: ir.RankedTensorType,
                  origin: tuple[int, ...], base: ir.Value, elem_ty: ir.Type, element_bits: int, trans: bool,
                  num: int) -> list[ir.Value]:
    """The thread's registers of `layout`, loaded with ldmatrix.x{num} from the buffer at
    byte offset `base`, for a view of it starting at `origin`; plan_ldmatrix said it works."""
    per_word = 32 // element_bits
    result_type = ctx.i32 if num == 1 else ir.Type.parse("!llvm.struct<(" + ", ".join(["i32"] * num) + ")>")
    attributes = _matrix_attributes(ctx, trans, num)
    vector_type = ir.VectorType.get([per_word], elem_ty)
    values: list[ir.Value] = []
    for _, address in _group_addresses(ctx, layout, encoding, buffer, origin, base, element_bits, trans, num):
        loaded = create_op("nvvm.ldmatrix", [result_type], [address], attributes=attributes).result
        for i in range(num):
            word = loaded if num == 1 else create_op("llvm.extractvalue", [ctx.i32], [loaded], attributes={
                "position": ir.DenseI64ArrayAttr.get([i])}).result
            if per_word == 1:
                values.append(create_op("llvm.bitcast", [elem_ty], [word]).result)
                continue
            vector = create_op("llvm.bitcast", [vector_type], [word]).result
            values.extend(create_op("llvm.extractelement", [elem_ty], [vector, ctx.const(e)]).result
                          for e in range(per_word))
    return values


def plan_stmatrix(layout: LinearLayout, encoding, shape: tuple[int, ...], element_bits: int,
                  num_warps: int) -> tuple[bool, int] | None:
    """(trans, matrices per instruction) when `layout`'s 16-bit elements can be written to
    a buffer of `shape` in `encoding` with stmatrix (sm_90), else None. stmatrix's fragments are ldmatrix's
    (lane 8i + j gives the address of row j of matrix i; lane t's register i holds the
    two elements the mma fragment layout assigns it), so the same rows must be 16
    contiguous aligned bytes."""
    if element_bits != 16:
        return None
    return _plan(layout, encoding, tuple(shape), element_bits, num_warps)


def emit_stmatrix(ctx: LoweringContext, layout: LinearLayout, encoding, buffer: ir.RankedTensorType,
                  origin: tuple[int, ...], base: ir.Value, values: list[ir.Value], trans: bool, num: int) -> None:
    """Writes the thread's registers `values` of `layout` (16-bit elements) to the buffer
    at byte offset `base` with stmatrix.x{num}; plan_stmatrix said it works."""
    attributes = _matrix_attributes(ctx, trans)
    pair = ir.VectorType.get([2], values[0].type)
    for first, address in _group_addresses(ctx, layout, encoding, buffer, origin, base, 16, trans, num):
        words = []
        for word in range(first, first + num):
            vector = create_op("llvm.mlir.undef", [pair]).result
            for e in range(2):
                vector = create_op("llvm.insertelement", [pair], [vector, values[2 * word + e], ctx.const(e)]).result
            words.append(create_op("llvm.bitcast", [ctx.i32], [vector]).result)
        create_op("nvvm.stmatrix", [], [address, *words], attributes=attributes)
