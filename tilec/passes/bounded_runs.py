"""Masks bounded along a run: `uniform & (index < bound)`, copied a whole run at a time.

A load's mask is usually an `&` of bounds, one per dimension (`offs_m[:, None] < M`,
`offs_k[None, :] < K`, or a descriptor's `0 <= index < shape` per dimension). Along the
dimension its pointers are contiguous in, a bound not known to be a multiple of the
vector width (a K read from memory, a descriptor's shape) makes the mask change inside
a vector: axis info gives it constancy 1, and the load moves one element at a time
(cp.async, which copies 4 bytes at least, then refuses 16-bit elements).

Yet such a mask keeps a leading part of every aligned run: the elements whose index is
below the bound. cp.async copies exactly that with its source size (the bytes read; the
rest of the 16 written are zeros), so the run stays one 16-byte copy, as TMA bounds a
descriptor's blocks in hardware.

A mask is *bounded* over aligned runs of `width` elements along `dim` when it is an
`arith.andi` tree (through `tile.broadcast`s: a bound made for a row and broadcast over
the block) of factors that are each
- uniform: constant over every run (axis-info constancy >= width), or
- a bound: `index < bound` (`arith.cmpi slt`, or `bound > index`: sgt), with `index`
  contiguous over the runs and `bound` constant over them; the elements of a run below
  the bound are then a prefix of it.
Each factor must have the mask's layout (no conversion inside the tree).

`materialize` builds, at the insertion point, the uniform factors' `&` and the limit
`bound - index` (the smallest over several bounds): the number of elements from each
one on that are still below the bound, which is what
tilegpu.async_copy_global_to_local's `limit` operand takes. The subtraction is done in
64 bits (`2^31 - 1 - (-1)` does not fit 32); it runs once per distinct index, a row of
the block.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from ..dialects import tile, tilegpu
from ..dialects._mlir import is_tensor, tensor_type
from .axis_info import AxisInfoAnalysis
from .utils import defining_op as _owner

# arith.cmpi predicates: `index < bound` with the index on the left (slt) or right (sgt).
_CMPI_SLT, _CMPI_SGT = 2, 4


@dataclass(frozen=True)
class Bound:
    """A factor `index < bound` of a bounded mask."""
    index: ir.Value
    bound: ir.Value


@dataclass(frozen=True)
class BoundedMask:
    """A mask split into its uniform factors and its bounds, for runs of `width`
    elements along `dim`."""
    mask: ir.Value
    dim: int
    width: int
    uniform: tuple[ir.Value, ...]
    bounds: tuple[Bound, ...]


def _factors(mask: ir.Value) -> list[ir.Value] | None:
    """The leaves of the `andi` tree (through broadcasts) computing `mask`, each of the
    mask's layout; None when a leaf has another."""
    layout = tilegpu.layout_of(mask.type)
    leaves, pending = [], [mask]
    while pending:
        value = pending.pop()
        op = _owner(value)
        if op is not None and op.name in ("arith.andi", "tile.broadcast"):
            pending.extend(op.operands)
            continue
        if not is_tensor(value.type) or tilegpu.layout_of(value.type) != layout:
            return None
        leaves.append(value)
    return leaves


def _power_of_2_floor(value: int) -> int:
    return 1 << (max(1, value).bit_length() - 1)


def _uniform_run(leaf: ir.Value, dim: int, analysis: AxisInfoAnalysis) -> int:
    """How long the aligned runs along `dim` are over which `leaf` is constant."""
    shape = tensor_type(leaf.type).shape
    if shape[dim] == 1:  # broadcast along dim
        return 1 << 30
    return analysis.get(leaf).constancy[dim]


def _as_bound(leaf: ir.Value) -> Bound | None:
    op = _owner(leaf)
    if op is None or op.name != "arith.cmpi":
        return None
    predicate = ir.IntegerAttr(op.attributes["predicate"]).value
    if predicate == _CMPI_SLT:
        return Bound(op.operands[0], op.operands[1])
    if predicate == _CMPI_SGT:
        return Bound(op.operands[1], op.operands[0])
    return None


def _bound_run(bound: Bound, dim: int, analysis: AxisInfoAnalysis) -> int:
    """How long the aligned runs along `dim` are over which `bound` keeps a prefix."""
    if tensor_type(bound.index.type).shape[dim] == 1:
        return 1 << 30
    return min(analysis.get(bound.index).contiguity[dim], analysis.get(bound.bound).constancy[dim])


def bounded_width(mask: ir.Value, dim: int, analysis: AxisInfoAnalysis) -> int:
    """The widest power-of-2 run along `dim` over which `mask` is bounded (1: none wider
    than one element)."""
    leaves = _factors(mask)
    if leaves is None:
        return 1
    width = 1 << 30
    for leaf in leaves:
        run = _uniform_run(leaf, dim, analysis)
        bound = _as_bound(leaf)
        if bound is not None:
            run = max(run, _bound_run(bound, dim, analysis))
        width = min(width, run)
    return _power_of_2_floor(min(width, tensor_type(mask.type).shape[dim]))


def split(mask: ir.Value, dim: int, width: int, analysis: AxisInfoAnalysis) -> BoundedMask | None:
    """`mask` as a bounded mask over runs of `width` along `dim`, or None where it is not
    one. A factor constant over the runs counts as uniform even when it is a bound."""
    leaves = _factors(mask)
    if leaves is None:
        return None
    uniform, bounds = [], []
    for leaf in leaves:
        if _uniform_run(leaf, dim, analysis) >= width:
            uniform.append(leaf)
            continue
        bound = _as_bound(leaf)
        if bound is None or _bound_run(bound, dim, analysis) < width:
            return None
        bounds.append(bound)
    return BoundedMask(mask, dim, width, tuple(uniform), tuple(bounds))


def materialize(bounded: BoundedMask) -> tuple[ir.Value | None, ir.Value | None]:
    """(the uniform factors' `&`, or None if there are none; the limit, or None if there
    are no bounds), built at the insertion point in the mask's shape and layout."""
    mask_type = tensor_type(bounded.mask.type)

    def full(value: ir.Value) -> ir.Value:
        ty = tensor_type(value.type)
        if list(ty.shape) == list(mask_type.shape):
            return value
        return tile.broadcast(value, ir.RankedTensorType.get(list(mask_type.shape), ty.element_type, ty.encoding))

    uniform = None
    for leaf in bounded.uniform:
        uniform = full(leaf) if uniform is None else arith.andi(uniform, full(leaf))
    def wide(value: ir.Value) -> ir.Value:
        ty = tensor_type(value.type)
        if ty.element_type.width >= 64:
            return value
        return arith.extsi(ir.RankedTensorType.get(list(ty.shape), ir.IntegerType.get_signless(64), ty.encoding),
                           value)

    limit = None
    for bound in bounded.bounds:
        left = full(arith.subi(wide(bound.bound), wide(bound.index)))
        limit = left if limit is None else arith.minsi(limit, left)
    return uniform, limit
