"""What every section of the semantic layer shares: its errors, the checks of axis and
dtype arguments, Triton's type promotion and the types of Python constants, and
`SemanticState`, the attributes that `Semantic.__init__` sets and every section reads.
"""
from __future__ import annotations

import numbers
from typing import Any

from .. import core as tl
from ..builder import Builder
from ..core import ConstexprRequired, TilecSemanticError, _unwrap, dtype, tensor

MAX_TENSOR_NUMEL = 1 << 20

_INT_RANGES = {
    "int1": (0, 1), "int8": (-(1 << 7), (1 << 7) - 1), "int16": (-(1 << 15), (1 << 15) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
    "uint8": (0, (1 << 8) - 1), "uint16": (0, (1 << 16) - 1), "uint32": (0, (1 << 32) - 1),
    "uint64": (0, (1 << 64) - 1),
}


def _error(message: str) -> TilecSemanticError:
    return TilecSemanticError(message)


def _axis_arg(axis: Any, what: str) -> int:
    """An axis argument as a Python int, or a clear error (`what`: "reduction", ...)."""
    axis = _unwrap(axis)
    if isinstance(axis, bool) or not isinstance(axis, (int, numbers.Integral)):
        if isinstance(axis, (tuple, list)):
            raise _error(f"the {what} axis must be a single int, got {tuple(_unwrap(a) for a in axis)}; "
                         "reduce one axis at a time")
        if isinstance(axis, tensor):
            raise ConstexprRequired(f"the {what} axis must be a constexpr int; this one is only known when the "
                                    "kernel runs", axis)
        raise _error(f"the {what} axis must be an int, got {axis!r}")
    return int(axis)


def _dtype_arg(ty: Any, what: str) -> dtype:
    """A dtype argument, or a clear error naming the function (`what`)."""
    ty = _unwrap(ty)
    if isinstance(ty, dtype):
        return ty
    if isinstance(ty, str):
        raise _error(f"{what} expects a tl dtype such as tl.float32, got the string {ty!r}")
    raise _error(f"{what} expects a tl dtype such as tl.float32, got {ty!r}")


def integer_promote(a: dtype, b: dtype) -> dtype:
    """C's usual arithmetic conversions between two integer types."""
    if a.is_int_signed() == b.is_int_signed():
        return a if a.int_bitwidth > b.int_bitwidth else b
    unsigned, signed = (a, b) if a.is_int_unsigned() else (b, a)
    return unsigned if unsigned.int_bitwidth >= signed.int_bitwidth else signed


def computation_type(a: dtype, a_is_python: bool, b: dtype, b_is_python: bool, div_or_mod: bool) -> dtype:
    """The type two operands are converted to before an arithmetic operation (Triton's rules).

    A Python scalar whose kind (bool < integer < float) is not above the tensor's takes
    the tensor's type. Otherwise: fp64, then fp32, then fp16 (also with bf16), then
    bf16 win; fp16/bf16 division and modulo happen in fp32 (PTX has no half division);
    integers follow C's usual arithmetic conversions.
    """
    if a_is_python != b_is_python:
        scalar_ty, tensor_ty = (a, b) if a_is_python else (b, a)
        if scalar_ty.kind() <= tensor_ty.kind():
            if div_or_mod and (tensor_ty.is_fp16() or tensor_ty.is_bf16()):
                return tl.float32
            return tensor_ty
    if a.is_fp64() or b.is_fp64():
        return tl.float64
    if a.is_fp32() or b.is_fp32():
        return tl.float32
    if a.is_fp16() or b.is_fp16():
        return tl.float32 if div_or_mod else tl.float16
    if a.is_bf16() or b.is_bf16():
        if div_or_mod or not (a.is_bf16() and b.is_bf16()):
            return tl.float32
        return tl.bfloat16
    if a.is_fp8() and b.is_fp8():
        return a if a == b else tl.float16
    if not (a.is_int() and b.is_int()):
        raise _error(f"unexpected operand types {a} and {b}; convert one of them with .to()")
    if div_or_mod and a.is_int_signed() != b.is_int_signed():
        raise _error(f"cannot use / // or % between {a} and {b}, which differ in signedness; cast one of them "
                     f"first (Cannot use /, //, or % with {a} and {b} because they have different signedness)")
    return integer_promote(a, b)


_FP32_MIN_NORMAL = 2.0 ** -126
_FP32_MAX = (2 - 2.0 ** -23) * 2.0 ** 127


def python_scalar_type(value: Any) -> dtype:
    """The type a Python constant gets on its own (Triton's rules).

    Integers: int32, then uint32, int64, uint64, the first that holds the value. Floats:
    fp32, unless the value is finite, non-zero and outside fp32's normal range (fp64).
    """
    if isinstance(value, bool):
        return tl.int1
    if isinstance(value, numbers.Integral):
        value = int(value)
        if -(1 << 31) <= value < (1 << 31):
            return tl.int32
        if 0 <= value < (1 << 32):
            return tl.uint32
        if -(1 << 63) <= value < (1 << 63):
            return tl.int64
        if 0 <= value < (1 << 64):
            return tl.uint64
        raise _error(f"integer constant {value} does not fit in 64 bits")
    if isinstance(value, numbers.Real):
        magnitude = abs(float(value))
        if magnitude == 0.0 or magnitude != magnitude or magnitude == float("inf") \
                or _FP32_MIN_NORMAL <= magnitude <= _FP32_MAX:
            return tl.float32
        return tl.float64
    if isinstance(value, str):
        raise _error(f"the string {value!r} is a compile-time constant, not a number or a tensor; compare it "
                     "with == on constexprs, or pass a number")
    raise _error(f"cannot use a value of Python type {type(value).__name__} in a kernel")


class SemanticState:
    """The state of a `Semantic` (set by its constructor, in __init__.py), declared once so
    that each section's mixin can read it."""

    builder: Builder
    debug: bool
    target: Any  # the tilec.target.Target compiled for, None when not known (the interpreter)
    capability: int | None  # compute capability (90 for "sm_90"), None when not known
    num_warps: int  # warps per program of the launch being compiled or interpreted
    _combining: int  # > 0 while a reduce/scan combine function is being built

    def warn(self, message: str) -> None:
        """A compile-time UserWarning (once per compilation, not once per interpreted
        program: see Builder.reports_warnings)."""
        if getattr(self.builder, "reports_warnings", True):
            import warnings
            warnings.warn(message, UserWarning, stacklevel=3)
