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
from ..layout.encodings import default_blocked
from . import register_pass
from ..target import Target
from .axis_info import AxisInfoAnalysis
from .bounded_runs import bounded_width
from .pipeline import may_stream
from .utils import functions


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
        for op in memory_ops:
            ptr = op.operands[0]
            if not is_tensor(ptr.type):
                continue
            layout = coalesced_layout(ptr, analysis, num_warps, _mask_of(op), bounded=may_stream(op, target))
            current = tilegpu.layout_of(ptr.type)
            if layout == current:
                continue
            with ir.InsertionPoint(op), op.location:
                for i, operand in enumerate(op.operands):
                    if is_tensor(operand.type):
                        op.operands[i] = tilegpu.convert_layout(operand, layout)
            if op.name in ("tile.load", "tile.atomic_rmw"):
                _relayout_result(op, layout)


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
