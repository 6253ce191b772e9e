"""The arithmetic rules of the semantic layer: binary and unary operators, comparisons,
minimum/maximum and where, with Triton's promotion of the operand types.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any

from .. import core as tl
from ..core import _unwrap, block_type, dtype, tensor
from .common import SemanticState, _error, computation_type, python_scalar_type


class ArithmeticRules(SemanticState):
    """Binary and unary operators, comparisons, min/max and where, with Triton's promotion."""

    def _binary_operands(self, lhs: Any, rhs: Any, *, allow_lhs_ptr: bool = False,
                         allow_rhs_ptr: bool = False, div_or_mod: bool = False,
                         arithmetic: bool = True) -> tuple[tensor, tensor]:
        lhs, rhs = _unwrap(lhs), _unwrap(rhs)
        lhs_py = not isinstance(lhs, tensor)
        rhs_py = not isinstance(rhs, tensor)
        lhs_t = self.to_tensor(lhs) if lhs_py else lhs
        rhs_t = self.to_tensor(rhs) if rhs_py else rhs
        lty, rty = lhs_t.dtype, rhs_t.dtype
        if lty.is_ptr() and not allow_lhs_ptr:
            raise _error(f"unsupported operand type {lty} on the left of this operator")
        if rty.is_ptr() and not allow_rhs_ptr:
            raise _error(f"unsupported operand type {rty} on the right of this operator")
        if lty.is_ptr() and rty.is_ptr():
            raise _error(f"cannot combine two pointers ({lty} and {rty}) with this operator")
        if arithmetic and not lty.is_ptr() and not rty.is_ptr():
            ret = computation_type(lty, lhs_py, rty, rhs_py, div_or_mod)
            lhs_t = self._convert_operand(lhs, lhs_t, lhs_py, ret)
            rhs_t = self._convert_operand(rhs, rhs_t, rhs_py, ret)
        return self.broadcast_pair(lhs_t, rhs_t)

    def _convert_operand(self, raw: Any, value: tensor, is_python: bool, ty: dtype) -> tensor:
        if is_python:
            if ty.is_int_unsigned() and not isinstance(raw, bool) and raw < 0:
                raise _error(f"cannot combine the negative constant {raw} with an unsigned {ty} value; "
                             "cast one of them explicitly")
            if ty.is_int() and isinstance(raw, float):
                return self.cast(value, ty)
            return self.to_tensor(raw, ty)
        return self.cast(value, ty)

    @staticmethod
    def _check_arithmetic_type(ty: dtype, what: str) -> None:
        if ty.is_fp8():
            raise _error(f"{what} on {ty} values is not supported: fp8 is a storage type; convert with "
                         ".to(tl.float16) or .to(tl.float32) first")

    def _emit_binary(self, op: str, lhs: tensor, rhs: tensor, ty: dtype | None = None) -> tensor:
        self._check_arithmetic_type(lhs.dtype, "arithmetic")
        ty = ty or lhs.type
        return tensor(self.builder.binary(op, lhs.handle, rhs.handle, ty), ty)

    def add(self, lhs: Any, rhs: Any, sanitize_overflow: bool = True) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs, allow_lhs_ptr=True, allow_rhs_ptr=True)
        if rhs.dtype.is_ptr() and not lhs.dtype.is_ptr():
            lhs, rhs = rhs, lhs
        if lhs.dtype.is_ptr():
            return self.addptr(lhs, rhs)
        if lhs.dtype.is_floating():
            return self._emit_binary("addf", lhs, rhs)
        return self._check_overflow("add", lhs, rhs, self._emit_binary("addi", lhs, rhs), sanitize_overflow)

    def addptr(self, ptr: tensor, offset: tensor) -> tensor:
        if not offset.dtype.is_int():
            raise _error(f"pointer offsets must be integers, got {offset.dtype}")
        ptr, offset = self.broadcast_pair(ptr, offset)
        return tensor(self.builder.addptr(ptr.handle, offset.handle, ptr.type), ptr.type)

    def sub(self, lhs: Any, rhs: Any, sanitize_overflow: bool = True) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs, allow_lhs_ptr=True)
        if lhs.dtype.is_ptr():
            return self.addptr(lhs, self.minus(rhs))
        if lhs.dtype.is_floating():
            return self._emit_binary("subf", lhs, rhs)
        return self._check_overflow("sub", lhs, rhs, self._emit_binary("subi", lhs, rhs), sanitize_overflow)

    def mul(self, lhs: Any, rhs: Any, sanitize_overflow: bool = True) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs)
        if lhs.dtype.is_floating():
            return self._emit_binary("mulf", lhs, rhs)
        return self._check_overflow("mul", lhs, rhs, self._emit_binary("muli", lhs, rhs), sanitize_overflow)

    def _check_overflow(self, what: str, lhs: tensor, rhs: tensor, result: tensor, sanitize: bool = True) -> tensor:
        """In debug mode, a device assert that signed `lhs what rhs` did not wrap (64-bit
        included), unless `sanitize` is False (tl.add(..., sanitize_overflow=False)).
        Unsigned arithmetic wraps by definition and is not checked."""
        ty = result.dtype
        if not sanitize or not self.debug or self._combining or not ty.is_int_signed() or ty.is_bool():
            return result
        if what == "add":  # the sum's sign differs from both operands' signs
            wrapped = self.compare("lt", self.and_(self.xor_(lhs, result), self.xor_(rhs, result)), 0)
        elif what == "sub":  # the operands' signs differ and the result's differs from lhs's
            wrapped = self.compare("lt", self.and_(self.xor_(lhs, rhs), self.xor_(lhs, result)), 0)
        elif ty.int_bitwidth < 64:
            exact = self.mul_unchecked(self.cast(lhs, tl.int64), self.cast(rhs, tl.int64))
            wrapped = self.compare("ne", exact, self.cast(result, tl.int64))
        else:  # 64 bits: the product divided back must give rhs (and -1 * INT64_MIN wraps)
            zero = self.compare("eq", lhs, 0)
            divisor = self.where(zero, self.to_tensor(1, ty), lhs)
            back = self._emit_binary("divsi", result, divisor)
            wrapped = self.logical_and(self.logical_not(zero), self.compare("ne", back, rhs))
            minus_one_min = self.logical_and(self.compare("eq", lhs, -1), self.compare("eq", rhs, -(1 << 63)))
            wrapped = self.logical_or(wrapped, minus_one_min)
        self.device_assert(self.logical_not(wrapped), f"{ty} overflow in {what}")
        return result

    def mul_unchecked(self, lhs: tensor, rhs: tensor) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs)
        return self._emit_binary("muli", lhs, rhs)

    def truediv(self, lhs: Any, rhs: Any) -> tensor:
        """`/` always divides in floating point: integers become fp32, and fp16/bf16
        operands divide in fp32 (as in Triton; PTX has no half-precision division)."""
        lhs, rhs = self._binary_operands(lhs, rhs, div_or_mod=True)
        lty, rty = lhs.dtype, rhs.dtype
        if lty.is_int() and rty.is_int():
            lhs, rhs = self.cast(lhs, tl.float32), self.cast(rhs, tl.float32)
        elif not (lty.is_floating() and rty.is_floating()):
            raise _error(f"unsupported operand types for /: {lty} and {rty}")
        return self._emit_binary("divf", lhs, rhs)

    def floordiv(self, lhs: Any, rhs: Any) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs, div_or_mod=True)
        if not lhs.dtype.is_int():
            raise _error(f"`//` needs integer operands, got {lhs.dtype}; use `/` and tl.floor for floats")
        return self._emit_binary("divsi" if lhs.dtype.is_int_signed() else "divui", lhs, rhs)

    def mod(self, lhs: Any, rhs: Any) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs, div_or_mod=True)
        if lhs.dtype.is_floating():
            return self._emit_binary("remf", lhs, rhs)
        return self._emit_binary("remsi" if lhs.dtype.is_int_signed() else "remui", lhs, rhs)

    def _bitwise_operands(self, lhs: Any, rhs: Any, symbol: str) -> tuple[tensor, tensor]:
        lhs, rhs = self._binary_operands(lhs, rhs)
        if not lhs.dtype.is_int():
            raise _error(f"bitwise operator `{symbol}` needs integer or boolean operands, got {lhs.dtype} "
                         f"(invalid operands of type {lhs.dtype} and {rhs.dtype})")  # Triton's words
        return lhs, rhs

    def and_(self, lhs: Any, rhs: Any) -> tensor:
        return self._emit_binary("andi", *self._bitwise_operands(lhs, rhs, "&"))

    def or_(self, lhs: Any, rhs: Any) -> tensor:
        return self._emit_binary("ori", *self._bitwise_operands(lhs, rhs, "|"))

    def xor_(self, lhs: Any, rhs: Any) -> tensor:
        return self._emit_binary("xori", *self._bitwise_operands(lhs, rhs, "^"))

    def shl(self, lhs: Any, rhs: Any) -> tensor:
        return self._emit_binary("shli", *self._bitwise_operands(lhs, rhs, "<<"))

    def shr(self, lhs: Any, rhs: Any, signed_from: Any = None) -> tensor:
        """`>>`: arithmetic when the operand named by `signed_from` (the left one by
        default) is a signed integer *before* promotion, as in Triton: `int32 >> uint32`
        promotes both to uint32 yet still shifts in copies of the sign bit."""
        source = _unwrap(lhs if signed_from is None else signed_from)
        source_type = source.dtype if isinstance(source, tensor) else python_scalar_type(source)
        arithmetic = source_type.is_int_signed()
        lhs, rhs = self._bitwise_operands(lhs, rhs, ">>")
        return self._emit_binary("shrsi" if arithmetic else "shrui", lhs, rhs)

    def minus(self, x: Any) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_ptr():
            raise _error(f"cannot negate a pointer ({x.dtype})")
        self._check_arithmetic_type(x.dtype, "negation")
        if x.dtype.is_floating():
            return tensor(self.builder.unary("negf", x.handle, x.type), x.type)
        return self.sub(self.zeros_like_scalar(x), x)

    def zeros_like_scalar(self, x: tensor) -> tensor:
        zero = self.to_tensor(0, x.dtype)
        return self.splat(zero, x.type.shape) if x.type.is_block() else zero

    def invert(self, x: Any) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise _error(f"`~` needs an integer or boolean operand, got {x.dtype}")
        ones = self.to_tensor(1 if x.dtype.is_bool() else -1 if x.dtype.is_int_signed()
                              else (1 << x.dtype.int_bitwidth) - 1, x.dtype)
        return self.xor_(x, ones)

    def logical_and(self, lhs: Any, rhs: Any) -> tensor:
        return self.and_(self._to_bool(lhs), self._to_bool(rhs))

    def logical_or(self, lhs: Any, rhs: Any) -> tensor:
        return self.or_(self._to_bool(lhs), self._to_bool(rhs))

    def logical_not(self, x: Any) -> tensor:
        return self.xor_(self._to_bool(x), self.to_tensor(True))

    def _to_bool(self, x: Any) -> tensor:
        x = self.to_tensor(x)
        return x if x.dtype.is_bool() else self.compare("ne", x, 0)

    def compare(self, kind: str, lhs: Any, rhs: Any) -> tensor:
        """kind is one of lt le gt ge eq ne."""
        lhs, rhs = self._same_type_operands(lhs, rhs)
        ty = block_type(tl.int1, lhs.type.shape) if lhs.type.is_block() else tl.int1
        scalar = lhs.dtype
        self._check_arithmetic_type(scalar, "comparison")
        if scalar.is_floating():
            pred = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}[kind]
            return tensor(self.builder.compare(pred, lhs.handle, rhs.handle, True, ty), ty)
        if scalar.is_ptr():
            lhs, rhs = self.cast(lhs, tl.uint64), self.cast(rhs, tl.uint64)
            scalar = tl.uint64
        if kind in ("eq", "ne"):
            pred = kind
        else:
            pred = ("s" if scalar.is_int_signed() else "u") + kind
        return tensor(self.builder.compare(pred, lhs.handle, rhs.handle, False, ty), ty)

    def _same_type_operands(self, lhs: Any, rhs: Any) -> tuple[tensor, tensor]:
        """Operands of compare/where: promoted numbers, or two pointers of one type."""
        lhs, rhs = _unwrap(lhs), _unwrap(rhs)
        lptr = isinstance(lhs, tensor) and lhs.dtype.is_ptr()
        rptr = isinstance(rhs, tensor) and rhs.dtype.is_ptr()
        if not (lptr or rptr):
            return self._binary_operands(lhs, rhs)
        if not (lptr and rptr) or lhs.dtype != rhs.dtype:
            raise _error(f"cannot combine {getattr(lhs, 'dtype', lhs)} with {getattr(rhs, 'dtype', rhs)}: "
                         "pointers go only with pointers of the same type")
        return self.broadcast_pair(lhs, rhs)

    def maximum(self, x: Any, y: Any, propagate_nan: bool = False) -> tensor:
        x, y = self._binary_operands(x, y)
        ty = x.dtype
        if ty.is_floating():
            return self._emit_binary("maximumf" if propagate_nan else "maxnumf", x, y)
        return self._emit_binary("maxsi" if ty.is_int_signed() else "maxui", x, y)

    def minimum(self, x: Any, y: Any, propagate_nan: bool = False) -> tensor:
        x, y = self._binary_operands(x, y)
        ty = x.dtype
        if ty.is_floating():
            return self._emit_binary("minimumf" if propagate_nan else "minnumf", x, y)
        return self._emit_binary("minsi" if ty.is_int_signed() else "minui", x, y)

    def where(self, condition: Any, x: Any, y: Any) -> tensor:
        condition = self.to_tensor(condition)
        if not condition.dtype.is_bool():
            # As Triton: accepted (true where non-zero), but deprecated there.
            self.warn(f"tl.where with a non-boolean condition is deprecated and will error out in a future triton "
                      f"release. Got {condition.dtype}; compare it (`cond != 0`) to get a boolean")
            condition = self._to_bool(condition)
        x, y = self._same_type_operands(x, y)
        if condition.type.is_block() or x.type.is_block():
            shape = self.broadcast_shapes(condition.type.shape if condition.type.is_block() else (),
                                          x.type.shape if x.type.is_block() else ())
            condition = self.broadcast_to(condition, shape)
            x, y = self.broadcast_to(x, shape), self.broadcast_to(y, shape)
        return tensor(self.builder.select(condition.handle, x.handle, y.handle, x.type), x.type)
