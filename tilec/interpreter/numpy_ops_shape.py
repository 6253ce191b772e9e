"""Shape operations and scans of the interpreter's builder (a mixin of `NumpyBuilder`).

Handles are never mutated, so reshapes and transposes may return views.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..language.core import TilecSemanticError, block_type, dtype, tensor
from .memory import MemoryFault
from .numpy_common import as_array, check_combined, numpy_dtype


class ShapeOps:
    """reshape trans join split cat gather histogram scan."""

    def reshape(self, x: np.ndarray, ty: block_type) -> np.ndarray:
        return np.reshape(np.asarray(x), ty.shape)  # row-major, as the builder documents

    def trans(self, x: np.ndarray, order: Sequence[int], ty: block_type) -> np.ndarray:
        return np.transpose(np.asarray(x), tuple(int(o) for o in order))

    def join(self, a: np.ndarray, b: np.ndarray, ty: block_type) -> np.ndarray:
        return np.stack([np.asarray(a), np.asarray(b)], axis=-1)

    def split(self, x: np.ndarray, ty: block_type) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(x)
        if x.ndim == 0 or x.shape[-1] != 2:
            raise TilecSemanticError(f"split needs a last dimension of size 2, got shape {list(x.shape)}")
        return np.array(x[..., 0]), np.array(x[..., 1])

    def cat(self, a: np.ndarray, b: np.ndarray, ty: block_type) -> np.ndarray:
        return np.concatenate([np.asarray(a), np.asarray(b)], axis=0)

    def gather(self, src: np.ndarray, index: np.ndarray, axis: int, ty: block_type) -> np.ndarray:
        """numpy.take_along_axis; an index outside the source is reported like a bad access
        (the GPU would read an unrelated value)."""
        src, index = np.asarray(src), np.asarray(index)
        length = src.shape[axis]
        wide = index.astype(np.int64) if index.dtype != np.uint64 else index
        bad = (wide < 0) | (wide >= length) if index.dtype != np.uint64 else wide >= np.uint64(length)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            lane = first[0] if len(first) == 1 else first
            raise MemoryFault("gather", f"{int(bad.sum())} of {bad.size} indices are outside the source; the first "
                              f"is {int(index[first])} at lane {lane}, but axis {axis} of the source has "
                              f"{length} elements", None, None)
        return np.take_along_axis(src, wide.astype(np.intp), axis=axis)

    def histogram(self, x: np.ndarray, num_bins: int, mask: np.ndarray | None, ty: block_type) -> np.ndarray:
        values = np.asarray(x).reshape(-1)
        if mask is not None:
            values = values[np.broadcast_to(np.asarray(mask), np.shape(x)).reshape(-1)]
        if values.dtype == np.uint64:
            values = values[values < np.uint64(num_bins)].astype(np.int64)
        else:
            values = values.astype(np.int64)
            values = values[(values >= 0) & (values < num_bins)]
        counts = np.bincount(values, minlength=num_bins)[:num_bins]
        return counts.astype(numpy_dtype(ty))

    # -- scans
    def scan(self, inputs: Sequence[tensor], axis: int, combine: Callable, reverse: bool,
             result_types: Sequence[dtype]) -> list[np.ndarray]:
        """Inclusive scan (Hillis and Steele): log2(n) rounds of `combine` on whole blocks.

        Round k combines every element with the partial result 2**k places before it, the
        earlier one as the left operand (so associative, non-commutative combines work).
        The operands keep the block's shape (the elements that have nothing 2**k places
        before combine with a wrapped-around value, and keep their old value), so the
        combine function sees the same power-of-2 shapes as in the compiled kernel.
        A reverse scan is a scan of the flipped blocks, flipped back: element i combines
        the result of element i + 1 (left) with its own value (right).
        """
        values = [np.asarray(x.handle) for x in inputs]
        types = [x.type for x in inputs]
        if not types[0].is_block():
            raise TilecSemanticError("cannot scan a scalar; scans need a tensor")
        if reverse:
            values = [np.flip(v, axis) for v in values]
        length = values[0].shape[axis]
        positions = np.arange(length).reshape([length if d == axis else 1 for d in range(values[0].ndim)])
        step = 1
        while step < length:
            lhs = [tensor(np.roll(v, step, axis=axis), t) for v, t in zip(values, types)]
            rhs = [tensor(v, t) for v, t in zip(values, types)]
            combined = list(combine(lhs, rhs))
            check_combined(combined, lhs, "scan")
            keep = positions < step
            values = [np.where(keep, v, np.asarray(c.handle)) for v, c in zip(values, combined)]
            step *= 2
        if reverse:
            values = [np.flip(v, axis) for v in values]
        return [np.array(as_array(v, numpy_dtype(rt))) for v, rt in zip(values, result_types)]


__all__ = ["ShapeOps"]

