"""The conversions rules of the semantic layer: Python values (numbers, constexprs) to
tensors, and scalar tensors back to Python values.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any

from ..core import _unwrap, dtype, list_value, tensor
from .common import SemanticState, _INT_RANGES, _error, python_scalar_type


class ConversionRules(SemanticState):
    """Python values to tensors and back."""

    def to_tensor(self, value: Any, ty: dtype | None = None) -> tensor:
        """A tensor for `value`; Python scalars become constants of `ty` (or their own type)."""
        value = _unwrap(value)
        if isinstance(value, tensor):
            return value
        if value is None:
            raise _error("None cannot be used as a value here")
        if isinstance(value, dtype):
            raise _error(f"{value!r} is a type, not a value")
        if isinstance(value, (list, list_value)):
            raise _error(f"a list of {len(value)} values cannot be used as a tensor: a list in a kernel is a constant "
                         "tuple (for shapes and unrolled loops); build a block with tl.arange, tl.full or tl.where")
        if isinstance(value, tuple):
            raise _error(f"a tuple of {len(value)} values cannot be used as one value here; unpack it first "
                         f"(`{', '.join('abcdefgh'[:min(len(value), 8)])}{', ...' if len(value) > 8 else ''} = ...`)")
        if ty is None or not isinstance(value, (bool, int, float)):
            own = python_scalar_type(value)  # a string or another non-number fails here, named
            ty = ty if ty is not None else own
        if isinstance(value, float) and not ty.is_floating():
            raise _error(f"the float constant {value} cannot become {ty} without losing its value; "
                         "convert explicitly")
        self._check_fits(value, ty)
        return tensor(self.builder.constant(self._python_value(value, ty), ty), ty)

    @staticmethod
    def _python_value(value: Any, ty: dtype):
        if ty.is_floating():
            return float(value)
        if ty.is_bool():
            return bool(value)
        return int(value)

    @staticmethod
    def _check_fits(value: Any, ty: dtype) -> None:
        if ty.is_int() and not isinstance(value, float):
            lo, hi = _INT_RANGES[ty.name]
            if not lo <= int(value) <= hi:
                raise _error(f"constant {value} is out of range for {ty}")

    def to_python_bool(self, x: tensor) -> bool:
        return bool(self.builder.to_python(x.handle))

    def to_python_int(self, x: tensor) -> int:
        if not x.dtype.is_int():
            raise _error(f"cannot use a {x.dtype} value as an integer")
        return int(self.builder.to_python(x.handle))

    def to_python_float(self, x: tensor) -> float:
        return float(self.builder.to_python(x.handle))
