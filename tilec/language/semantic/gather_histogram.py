"""The gather and histogram rules of the semantic layer: tl.gather and tl.histogram.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any

from .. import core as tl
from ..core import ConstexprRequired, _unwrap, block_type, tensor
from .common import SemanticState, _error


class GatherHistogramRules(SemanticState):
    """tl.gather and tl.histogram."""

    def gather(self, src: Any, index: Any, axis: Any) -> tensor:
        src, index = self._block(src, "gather"), self._block(index, "gather")
        rank = len(src.type.shape)
        axis = _unwrap(axis)
        if not isinstance(axis, int) or not -rank <= axis < rank:
            raise _error(f"gather axis must be an int in [{-rank}, {rank}), got {axis!r}")
        axis %= rank
        if not index.dtype.is_int() or index.dtype.is_bool():
            raise _error(f"gather needs an integer index, got {index.dtype}")
        if len(index.type.shape) != rank:
            raise _error(f"gather needs a source and an index of one rank, got {list(src.type.shape)} and "
                         f"{list(index.type.shape)}")
        for d in range(rank):
            if d != axis and src.type.shape[d] != index.type.shape[d]:
                raise _error(f"the index's dimension {d} ({index.type.shape[d]}) must equal the source's "
                             f"({src.type.shape[d]}); only axis {axis} may differ")
        if index.dtype.int_bitwidth < 32:  # the lowering reads 32- or 64-bit indices
            index = self.cast(index, tl.int32)
        if self.debug:
            n = src.type.shape[axis]
            inside = self.compare("lt", index, n)
            if index.dtype.is_int_signed():
                inside = self.logical_and(self.compare("ge", index, 0), inside)
            self.device_assert(inside, f"gather index out of range [0, {n})")
        ty = block_type(src.dtype, index.type.shape)
        return tensor(self.builder.gather(src.handle, index.handle, axis, ty), ty)

    def histogram(self, x: Any, num_bins: Any, mask: Any = None) -> tensor:
        x = self._block(x, "histogram")
        num_bins = _unwrap(num_bins)
        if len(x.type.shape) != 1:
            raise _error(f"histogram needs a 1-D tensor, got shape {list(x.type.shape)}")
        if not x.dtype.is_int() or x.dtype.is_bool():
            raise _error(f"histogram needs integer values, got {x.dtype}")
        if isinstance(num_bins, tensor):
            raise ConstexprRequired("num_bins must be a constexpr power of two; this one is only known when the "
                                    "kernel runs", num_bins)
        if not isinstance(num_bins, int) or isinstance(num_bins, bool) or num_bins < 1 or num_bins & (num_bins - 1):
            raise _error(f"num_bins must be a constexpr power of two, got {num_bins!r}")
        if _unwrap(mask) is not None:
            mask = self.broadcast_to(self._to_bool(mask), x.type.shape)
        if x.dtype.int_bitwidth < 32:  # the lowering compares 32- or 64-bit values
            x = self.cast(x, tl.int32)
        ty = block_type(tl.int32, (num_bins,))
        return tensor(self.builder.histogram(x.handle, num_bins, mask.handle if _unwrap(mask) is not None else None,
                                             ty), ty)
