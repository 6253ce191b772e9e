"""The creation rules of the semantic layer: program ids, and tensors made from nothing:
arange, full.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

import math
from typing import Any

from .. import core as tl
from ..core import ConstexprRequired, _unwrap, block_type, tensor
from .common import SemanticState, _axis_arg, _dtype_arg, _error


class CreationRules(SemanticState):
    """Program ids and tensors made from nothing: arange, full."""

    def program_id(self, axis: Any) -> tensor:
        axis = _axis_arg(axis, "program_id")
        if axis not in (0, 1, 2):
            raise _error(f"program_id axis must be 0, 1, or 2 but got {axis}")
        return tensor(self.builder.program_id(axis), tl.int32)

    def num_programs(self, axis: Any) -> tensor:
        axis = _axis_arg(axis, "num_programs")
        if axis not in (0, 1, 2):
            raise _error(f"num_programs axis must be 0, 1, or 2 but got {axis}")
        return tensor(self.builder.num_programs(axis), tl.int32)

    def arange(self, start: Any, end: Any) -> tensor:
        start, end = _unwrap(start), _unwrap(end)
        for bound, which in ((start, "start"), (end, "end")):
            if isinstance(bound, tensor):
                raise ConstexprRequired(f"arange's start and end must be constexpr integers, and its {which} is "
                                        "only known when the kernel runs", bound)
        if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
            raise _error("arange's start and end must be constexpr integers "
                         f"(got {type(start).__name__} and {type(end).__name__}); mark them tl.constexpr")
        if end <= start:
            raise _error(f"arange({start}, {end}): end must be greater than start")
        if not (-(1 << 31) <= start and end <= (1 << 31)):
            raise _error(f"arange({start}, {end}) does not fit in int32")
        size = end - start
        if not tl.is_power_of_2(size):
            raise _error(f"arange({start}, {end}) has {size} elements; the number of elements must be a power of 2 "
                         "(Triton: arange's range must be a power of 2)")
        self.validate_block_shape([size])
        ty = block_type(tl.int32, [size])
        return tensor(self.builder.make_range(start, end, ty), ty)

    def full(self, shape: Any, value: Any, ty: Any, what: str = "full") -> tensor:
        shape = self.validate_block_shape(tl._unwrap_shape(shape))
        ty = _dtype_arg(ty, what)
        value = _unwrap(value)
        if isinstance(value, tensor):
            if value.type.is_block():
                raise _error(f"{what}'s value must be a scalar, got a block of shape {list(value.type.shape)}")
            scalar = self.cast(value, ty)
        elif isinstance(value, float) and not ty.is_floating():
            if not (math.isfinite(value) and value == int(value)):
                raise _error(f"{what}: the value {value!r} is not an integer, so it cannot fill a {ty} block")
            scalar = self.to_tensor(int(value), ty)
        else:
            scalar = self.to_tensor(value, ty)
        if not shape:
            return scalar
        return self.splat(scalar, shape)
