"""tilegpu-coalesce: chooses a memory-friendly layout for every load and store, and for
the fp32 atomic adds that go several at a time (sm_90's vector atomics; one at a time, a
thread's consecutive elements would split a warp's accesses over more instructions).

For a tensor of pointers, axis info says along which dimension addresses are
contiguous. The pass orders dimensions by contiguity (most contiguous first) and lets
each thread own up to 16 bytes of consecutive elements along that dimension (no more
than the pointers' alignment allows one vector access to cover), with the
lanes of a warp covering consecutive chunks: each warp then touches whole cache lines
and each thread can use one vector instruction per chunk (the lowering decides the
actual width from alignment and mask facts).

A host descriptor's load (`tile.descriptor_load`, a TMA copy into a row-major,
swizzled block in shared memory that the threads then read) has no pointers: each
thread takes up to 16 bytes of a row, the block's contiguous dimension, so that it
reads the block with vector loads (with one element each, the q block of an attention
kernel took 64 16-bit loads and 64 16-bit stores per thread on its way into the dot's
buffer, where 8 and 8 of 16 bytes do).

A mask that may change at any element along the contiguous dimension (`offs_k < K`,
K of unknown divisibility) caps a thread's run at one element, since every access would
be split anyway; not for a load tilegpu-pipeline may stream through cp.async
(`pipeline.may_stream`) whose mask is bounded along the run (bounded_runs.py): its
copies cut a run at the bound whole.

When the chosen layout differs from the current one, the operands are converted to it
and the loaded value converted back; tilegpu-remove-layout-conversions then removes
the conversions that are not needed.
"""
from __future__ import annotations

import math

from mlir import ir

from ..dialects import tilegpu
from ..dialects._mlir import walk_ops, is_tensor
from ..dialects.tile import element_type, load_operands, memory_bits, pointee_type, shape_of, store_operands
from ..layout.encodings import BlockedEncoding, default_blocked
from . import register_pass
from ..target import Target
from .axis_info import AxisInfoAnalysis
from .bounded_runs import bounded_width
from .pipeline import may_stream
from .utils import functions, is_elementwise


def _element_bits(ptr_type: ir.Type) -> int:
    return memory_bits(pointee_type(element_type(ptr_type)))


def _runs_layout(shape: list[int], num_warps: int, element_bits: int, order: list[int], limit: int):
    """A blocked layout in `order` whose threads own runs of consecutive elements along
    `order[0]`: as long as one 16-byte access, no longer than `limit`, the dimension or a
    thread's share of the tensor, rounded down to a power of 2."""
    per_thread = max(1, math.prod(shape) // (32 * num_warps))
    fastest = order[0]
    vec = min(limit, 128 // element_bits, per_thread, shape[fastest])
    vec = 1 << (max(1, vec).bit_length() - 1)
    size_per_thread = [1] * len(shape)
    size_per_thread[fastest] = vec
    return default_blocked(shape, num_warps, size_per_thread, order)


def coalesced_layout(ptr: ir.Value, analysis: AxisInfoAnalysis, num_warps: int, mask: ir.Value | None = None,
                     bounded: bool = False):
    shape = list(shape_of(ptr.type))
    info = analysis.get(ptr)
    order = sorted(range(len(shape)), key=lambda d: (-info.contiguity[d], -d))
    # A thread owns as many consecutive elements as one aligned vector access can cover:
    # more would only spread each warp-wide scalar access over more cache lines. A mask
    # that may change from one element to the next (`cols < n` with n of unknown
    # divisibility) splits every access into scalar ones whatever the pointers allow;
    # not so for a load tilegpu-pipeline copies with cp.async (`bounded`) when the mask
    # is bounded along the run: the copies' source size cuts the run at the bound.
    bits = _element_bits(ptr.type)
    aligned = max(1, info.divisibility[order[0]] // (bits // 8))
    limit = min(info.contiguity[order[0]], aligned)
    if mask is not None and is_tensor(mask.type):
        run = analysis.get(mask).constancy[order[0]]
        if bounded:
            run = max(run, bounded_width(mask, order[0], analysis))
        limit = min(limit, run)
    return _runs_layout(shape, num_warps, bits, order, limit)


def descriptor_block_layout(ty: ir.Type, num_warps: int):
    """The layout of a descriptor load's block: rows split into 16-byte runs (no longer
    than a row, nor than a thread's share of the block), lanes along the row first."""
    shape = list(shape_of(ty))
    return _runs_layout(shape, num_warps, memory_bits(element_type(ty)), list(reversed(range(len(shape)))),
                        shape[-1])


def _relayout_result(op: ir.Operation, layout) -> None:
    """`op`'s result in `layout`, converted back to its layout for its users."""
    result = op.results[0]
    old_type = result.type
    current = tilegpu.layout_of(old_type)
    result.set_type(tilegpu.with_layout(old_type, layout))
    with ir.InsertionPoint.after(op), op.location:
        back = tilegpu.convert_layout(result, current)
    result.replace_all_uses_except(back, back.owner.operation)


@register_pass("tilegpu-coalesce", "Choose coalesced, vectorisable layouts for loads and stores")
def coalesce(module_op: ir.Operation) -> None:
    num_warps = tilegpu.num_warps_of(module_op)
    target = Target.parse(tilegpu.target_of(module_op)) if tilegpu.TARGET_ATTR in module_op.attributes else None
    for fn in functions(module_op):
        for op in [op for op in walk_ops(fn) if op.name == "tile.descriptor_load"]:
            layout = descriptor_block_layout(op.results[0].type, num_warps)
            if layout != tilegpu.layout_of(op.results[0].type):
                _relayout_result(op, layout)
        analysis = AxisInfoAnalysis(fn)
        memory_ops = [op for op in walk_ops(fn) if op.name in ("tile.load", "tile.store")
                      or (op.name == "tile.atomic_rmw" and _vector_atomic(op, target))]
        chosen = {op: coalesced_layout(op.operands[0], analysis, num_warps, _mask_of(op),
                                       bounded=may_stream(op, target))
                  for op in memory_ops if is_tensor(op.operands[0].type)}
        _longest_shared_run(chosen, num_warps)
        for op, layout in chosen.items():
            ptr = op.operands[0]
            layout = _scanned_repeats_in_registers(layout, list(shape_of(ptr.type)), _scan_axes(op))
            current = tilegpu.layout_of(ptr.type)
            if layout == current:
                continue
            with ir.InsertionPoint(op), op.location:
                for i, operand in enumerate(op.operands):
                    if is_tensor(operand.type):
                        op.operands[i] = tilegpu.convert_layout(operand, layout)
            if op.name in ("tile.load", "tile.atomic_rmw"):
                _relayout_result(op, layout)


def _longest_shared_run(chosen: dict, num_warps: int) -> None:
    """Gives the loads of one shape and order the longest run any load or store of
    that shape and order chose (as Triton's coalescing does), so that they share a
    layout: a bf16 row loaded 8 elements (16 bytes) a thread and stored as fp8 16 a
    thread took a conversion through shared memory between the two; with 16 a thread
    the load is two 16-byte accesses and the store one, and no conversion. Stores keep
    their own runs, as Triton's do: a store longer than one vector write leaves gaps in
    each warp-wide write (an int8 row dequantized to fp32 and stored 16 a thread, 4
    vector writes 64 bytes apart per lane, ran at 0.73x Triton on an H200 against 1.00x
    with its own run of 4). Atomics keep their own runs too."""
    groups: dict = {}
    for op, layout in chosen.items():
        if op.name in ("tile.load", "tile.store") and isinstance(layout, BlockedEncoding):
            key = (tuple(shape_of(op.operands[0].type)), layout.order)
            groups.setdefault(key, []).append(op)
    for (shape, order), ops in groups.items():
        run = max(chosen[op].size_per_thread[order[0]] for op in ops)
        for op in ops:
            if op.name == "tile.load" and chosen[op].size_per_thread[order[0]] < run:
                size_per_thread = [1] * len(shape)
                size_per_thread[order[0]] = run
                chosen[op] = default_blocked(list(shape), num_warps, size_per_thread, order)


def _scan_axes(op: ir.Operation) -> set[int]:
    """The axes of the scans that read what a load loads, or that produce what a store
    stores, through elementwise ops and layout conversions."""
    def passes_through(other: ir.Operation) -> bool:
        return other.name == "tilegpu.convert_layout" or is_elementwise(other)

    axes: set[int] = set()
    if op.name == "tile.load":
        pending = [op.results[0]]
        while pending:
            for use in pending.pop().uses:
                user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
                if user.name == "tile.scan":
                    axes.add(ir.IntegerAttr(user.attributes["axis"]).value)
                elif passes_through(user):
                    pending.extend(user.results)
    elif op.name == "tile.store":
        pending = [store_operands(op)[1]]
        while pending:
            value = pending.pop()
            if not isinstance(value, ir.OpResult):
                continue
            owner = value.owner.operation if hasattr(value.owner, "operation") else value.owner
            if owner.name == "tile.scan":
                axes.add(ir.IntegerAttr(owner.attributes["axis"]).value)
            elif passes_through(owner):
                pending.extend(owner.operands)
    return axes


def _scanned_repeats_in_registers(layout, shape: list[int], axes: set[int]):
    """`layout` with a thread's repeats along each scanned axis other than the fastest
    moved into its registers (sizePerThread), so that a thread holds consecutive
    elements along the scan.

    A blocked layout repeats its tile along a dimension that has more elements than its
    registers, lanes and warps cover: a thread of a 64x32 fp32 strip in [1, 4] x [4, 8]
    lanes x [4, 1] warps holds rows r, r + 16, r + 32 and r + 48. Scanned down the rows,
    each of those is a separate run: a shuffle scan for every element and 16 partial
    totals a column through shared memory. With sizePerThread [4, 4] the thread holds
    rows 4r..4r+3, scanned in registers, and the lanes and warps combine one total a
    column each. A warp's load or store of one register row still covers whole 128-byte
    lines (4 rows x 32 columns), as before."""
    if not axes or not isinstance(layout, BlockedEncoding):
        return layout
    size = list(layout.size_per_thread)
    for d in axes:
        if d == layout.order[0]:  # along the fastest dimension a thread already holds a run
            continue
        covered = size[d] * layout.threads_per_warp[d] * layout.warps_per_cta[d]
        if shape[d] > covered and shape[d] % covered == 0:
            size[d] *= shape[d] // covered
    if size == list(layout.size_per_thread):
        return layout
    return BlockedEncoding(tuple(size), layout.threads_per_warp, layout.warps_per_cta, layout.order)


def _mask_of(op: ir.Operation) -> ir.Value | None:
    """The mask of a load, a store or a vector atomic add (ptr, value, mask)."""
    if op.name == "tile.load":
        return load_operands(op)[1]
    return store_operands(op)[2]


def _vector_atomic(op: ir.Operation, target: Target | None) -> bool:
    """An atomic read-modify-write the lowering issues several elements at a time."""
    from .convert_tilegpu_to_llvm.atomic import vector_fadd
    from ..dialects._mlir import str_attr_value
    return (target is not None and is_tensor(op.results[0].type)
            and vector_fadd(str_attr_value(op, "kind"), element_type(op.results[0].type), target))
