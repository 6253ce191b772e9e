"""The shapes rules of the semantic layer: block shapes: splat, broadcasting, expand_dims,
reshape, permute, join/split, cat, subscripts.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .. import core as tl
from ..core import ConstexprRequired, _unwrap, block_type, tensor
from .common import MAX_TENSOR_NUMEL, SemanticState, _axis_arg, _error


class ShapeRules(SemanticState):
    """Block shapes, broadcasting, reshapes, joins, splits, subscripts."""

    @staticmethod
    def validate_block_shape(shape: Sequence[int]) -> tuple[int, ...]:
        dims = [_unwrap(s) for s in shape]
        for dim in dims:
            if isinstance(dim, tensor):
                raise ConstexprRequired("shape dimensions must be constexpr integers, got a value known only at "
                                        "run time", dim, hint="mark the size tl.constexpr")
            if not isinstance(dim, int) or isinstance(dim, bool):
                raise _error(f"shape dimensions must be constexpr integers, got {dim!r}; mark the size tl.constexpr")
        shape = tuple(dims)
        numel = 1
        for index, dim in enumerate(shape):
            if not tl.is_power_of_2(dim):
                raise _error(f"shape {list(shape)}: every dimension must be a power of 2, and {dim} is not "
                             f"(Triton: Shape element {index} must be a power of 2)")
            numel *= dim
        if numel > MAX_TENSOR_NUMEL:
            raise _error(f"shape {list(shape)} has {numel} elements; a tensor may have at most {MAX_TENSOR_NUMEL}")
        return shape

    def splat(self, x: tensor, shape: Sequence[int]) -> tensor:
        ty = block_type(x.dtype, shape)
        return tensor(self.builder.splat(x.handle, ty), ty)

    def broadcast_to(self, x: tensor, shape: Sequence[int]) -> tensor:
        shape = tuple(int(_unwrap(s)) for s in shape)
        if not x.type.is_block():
            return self.splat(x, shape)
        src = x.type.shape
        if src == shape:
            return x
        if len(src) > len(shape):
            raise _error(f"cannot broadcast a tensor of shape {list(src)} to the smaller rank shape {list(shape)}")
        while len(src) < len(shape):
            x = self.expand_dims(x, 0)
            src = x.type.shape
        for have, want in zip(src, shape):
            if have != want and have != 1:
                raise _error(f"cannot broadcast shape {list(x.type.shape)} to {list(shape)}: "
                             f"dimension of size {have} is neither 1 nor {want}")
        if src == shape:
            return x
        ty = block_type(x.dtype, shape)
        return tensor(self.builder.broadcast(x.handle, ty), ty)

    def broadcast_shapes(self, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
        rank = max(len(a), len(b))
        a = (1,) * (rank - len(a)) + a
        b = (1,) * (rank - len(b)) + b
        out = []
        for x, y in zip(a, b):
            if x != y and 1 not in (x, y):
                raise _error(f"shapes {list(a)} and {list(b)} are incompatible: dimension {x} vs {y}")
            out.append(max(x, y))
        return tuple(out)

    def broadcast_pair(self, lhs: tensor, rhs: tensor) -> tuple[tensor, tensor]:
        lb, rb = lhs.type.is_block(), rhs.type.is_block()
        if not lb and not rb:
            return lhs, rhs
        if lb and not rb:
            return lhs, self.splat(rhs, lhs.type.shape)
        if rb and not lb:
            return self.splat(lhs, rhs.type.shape), rhs
        shape = self.broadcast_shapes(lhs.type.shape, rhs.type.shape)
        return self.broadcast_to(lhs, shape), self.broadcast_to(rhs, shape)

    def expand_dims(self, x: tensor, axis: int) -> tensor:
        axis = _axis_arg(axis, "expand_dims")
        rank = len(x.type.shape) if x.type.is_block() else 0
        if not -(rank + 1) <= axis <= rank:  # a scalar takes axis 0 or -1 only
            what = f"a tensor of rank {rank}" if rank else "a scalar"
            raise _error(f"expand_dims axis {axis} is out of range for {what} "
                         f"(invalid axis {axis}. Expected {-(rank + 1)} <= axis < {rank + 1})")
        if not x.type.is_block():
            return self.splat(x, (1,))
        if not -(rank + 1) <= axis <= rank:  # Triton's words after tilec's
            raise _error(f"expand_dims axis {axis} is out of range for a tensor of rank {rank} "
                         f"(invalid axis {axis}. Expected {-(rank + 1)} <= axis < {rank + 1})")
        if axis < 0:
            axis += rank + 1
        shape = list(x.type.shape)
        shape.insert(axis, 1)
        ty = block_type(x.dtype, shape)
        return tensor(self.builder.expand_dims(x.handle, axis, ty), ty)

    def _block(self, x: Any, what: str) -> tensor:
        x = self.to_tensor(x)
        if not x.type.is_block():
            raise _error(f"{what} needs a tensor, got a scalar of type {x.type}")
        return x

    def reshape(self, x: Any, shape: Sequence[int], can_reorder: bool = False) -> tensor:
        """Row-major reshape (tilec never reorders, whatever can_reorder says)."""
        x = self._block(x, "reshape")
        shape = self.validate_block_shape(tl._unwrap_shape(shape))
        if math.prod(shape) != x.type.numel:
            raise _error(f"cannot reshape a tensor of shape {list(x.type.shape)} ({x.type.numel} elements) "
                         f"to {list(shape)} ({math.prod(shape)} elements)")
        if shape == x.type.shape:
            return x
        ty = block_type(x.dtype, shape)
        return tensor(self.builder.reshape(x.handle, ty), ty)

    def permute(self, x: Any, order: Sequence[int]) -> tensor:
        x = self._block(x, "permute")
        order = [int(_unwrap(d)) for d in order]
        rank = len(x.type.shape)
        if sorted(order) != list(range(rank)):
            raise _error(f"permutation {order} is not a reordering of the dimensions 0..{rank - 1}")
        if order == list(range(rank)):
            return x
        ty = block_type(x.dtype, [x.type.shape[d] for d in order])
        return tensor(self.builder.trans(x.handle, order, ty), ty)

    def trans(self, x: Any, dims: Sequence[int]) -> tensor:
        """permute(x, dims); without dims, the last two dimensions swapped (a transpose of
        each matrix of a batch, as NumPy's `x.mT` and Triton's trans)."""
        x = self._block(x, "trans")
        if not dims:
            rank = len(x.type.shape)
            if rank < 2:
                raise _error(f"trans without dims swaps the last two dimensions; this tensor has shape "
                             f"{list(x.type.shape)}, so there is nothing to transpose")
            dims = tuple(range(rank - 2)) + (rank - 1, rank - 2)
        return self.permute(x, dims)

    def join(self, a: Any, b: Any) -> tensor:
        a, b = self.to_tensor(a), self.to_tensor(b)
        if a.dtype != b.dtype:
            raise _error(f"join needs two tensors of one type, got {a.dtype} and {b.dtype}")
        if not a.type.is_block() and not b.type.is_block():
            a, b = self.splat(a, (1,)), self.splat(b, (1,))
            joined = self.join(a, b)
            return self.reshape(joined, (2,))
        a, b = self.broadcast_pair(a, b)
        ty = block_type(a.dtype, a.type.shape + (2,))
        return tensor(self.builder.join(a.handle, b.handle, ty), ty)

    def split(self, x: Any) -> tuple[tensor, tensor]:
        x = self._block(x, "split")
        if x.type.shape[-1] != 2:
            raise _error(f"split needs a last dimension of size 2, got shape {list(x.type.shape)}")
        if len(x.type.shape) == 1:
            both = self.reshape(x, (1, 2))
            lhs, rhs = self.split(both)
            return self.reshape_to_scalar(lhs), self.reshape_to_scalar(rhs)
        ty = block_type(x.dtype, x.type.shape[:-1])
        lhs, rhs = self.builder.split(x.handle, ty)
        return tensor(lhs, ty), tensor(rhs, ty)

    def reshape_to_scalar(self, x: tensor) -> tensor:
        """The single element of a one-element tensor, as a scalar."""
        return self.reduction([self.reshape(x, (1,))], 0, lambda a, b: [a[0]])[0]

    def cat(self, a: Any, b: Any, dim: Any = 0) -> tensor:
        """`a` then `b` along dimension `dim`, in order (Triton's `can_reorder` is ignored, as
        in Triton 3.9). The two must have one type and one shape: two different powers of 2
        never sum to a power of 2, so sizes that differ along `dim` could not give a legal
        block anyway, and Triton refuses them too."""
        a, b = self._block(a, "cat"), self._block(b, "cat")
        rank = len(a.type.shape)
        if len(b.type.shape) != rank:
            raise _error(f"cat needs two tensors of one rank, got shapes {list(a.type.shape)} and "
                         f"{list(b.type.shape)} (tensors must have the same rank, got {rank} and {len(b.type.shape)})")
        dim = _unwrap(dim)
        if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
            raise _error(f"cat's dim must be a constant from {-rank} to {rank - 1} for tensors of rank {rank}, "
                         f"got {dim!r}")
        dim %= rank
        if a.dtype != b.dtype:
            raise _error(f"cat needs two tensors of one element type, got {a.dtype} and {b.dtype}; convert one "
                         "with .to()")
        if a.type.shape != b.type.shape:
            raise _error(f"cat needs two tensors of one shape, got {list(a.type.shape)} and {list(b.type.shape)} "
                         f"(along dim {dim} too: the sum of two different powers of 2 is not a power of 2)")
        if dim:  # along another dimension: bring it to the front and back
            order = [dim] + [d for d in range(rank) if d != dim]
            inverse = [order.index(d) for d in range(rank)]
            return self.permute(self.cat(self.permute(a, order), self.permute(b, order)), inverse)
        ty = block_type(a.dtype, (a.type.shape[0] + b.type.shape[0],) + a.type.shape[1:])
        self.validate_block_shape(ty.shape)
        return tensor(self.builder.cat(a.handle, b.handle, ty), ty)

    def subscript(self, x: tensor, slices: Any) -> tensor:
        """`x[:, None]`: only full slices and None are allowed."""
        if not isinstance(slices, tuple):
            slices = (slices,)
        # A slice's parts may come as constexprs (`x[None, None:]`: a None start is `:`).
        slices = tuple(slice(_unwrap(s.start), _unwrap(s.stop), _unwrap(s.step)) if isinstance(s, slice)
                       else _unwrap(s) for s in slices)
        out = x
        dim = 0
        for s in slices:
            if s is None:
                # A scalar becomes a block of one element wherever the None stands
                # (`bn[:, None]` of a loaded scalar, vLLM's prefix prefill), as in Triton;
                # `tl.expand_dims(scalar, 1)` stays an error there and here.
                out = self.expand_dims(out, dim) if out.type.is_block() else self.splat(out, (1,))
                dim += 1
            elif isinstance(s, slice) and s.start is None and s.stop is None and s.step is None:
                dim += 1
            else:
                raise _error(f"unsupported tensor index {s!r}: only `:` and `None` are allowed "
                             "(tensors cannot be indexed by value)")
        rank = len(x.type.shape) if x.type.is_block() else 0
        if rank and dim - slices.count(None) > rank:  # a scalar takes any `:` (ptr[None, None, :]), as in Triton
            raise _error(f"too many indices for a tensor of rank {rank}")
        return out
