"""The semantic layer: the one place that knows the rules of the language.

Builtins and tensor operators call methods here with user values (tensors, constexprs,
Python scalars). This layer converts them to tensors, applies Triton's type promotion
and broadcasting, checks legality (raising `TilecSemanticError` with one clear sentence;
the frontend adds the source location), and asks the builder to emit the result.
"""
from __future__ import annotations

import contextlib
import math
import numbers
from typing import Any, Callable, Sequence

from ..target import Target
from . import core as tl
from .builder import Builder
from .core import TilecSemanticError, _unwrap, block_type, dtype, tensor
from .core import dtype as dtype_class

MAX_TENSOR_NUMEL = 1 << 20

_INT_RANGES = {
    "int1": (0, 1), "int8": (-(1 << 7), (1 << 7) - 1), "int16": (-(1 << 15), (1 << 15) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
    "uint8": (0, (1 << 8) - 1), "uint16": (0, (1 << 16) - 1), "uint32": (0, (1 << 32) - 1),
    "uint64": (0, (1 << 64) - 1),
}

_CACHE_MODIFIERS = {"load": ("", ".ca", ".cg", ".cv"), "store": ("", ".wb", ".cg", ".cs", ".wt")}
_EVICTION_POLICIES = ("", "evict_normal", "evict_first", "evict_last")


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
            raise _error(f"the {what} axis must be a constexpr int; this one is only known when the kernel runs")
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
        raise _error(f"cannot use / // or % between {a} and {b}, which differ in signedness; "
                     "cast one of them first")
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


# device_print shows at most this many values (tile.print's operand groups).
MAX_PRINT_VALUES = 16

# Narrowings that fp_downcast_rounding="rtz" (round toward zero) applies to.
_RTZ_CASTS = {(tl.float32, tl.float16), (tl.float32, tl.bfloat16), (tl.float64, tl.float32)}


class Semantic:
    """Language rules over a builder; see the module docstring."""

    def __init__(self, builder: Builder, *, debug: bool = False, target: Target | None = None):
        """`debug` turns on device_assert and the overflow checks; `target`, when
        known, lets rules that depend on the GPU fail early and clearly."""
        self.builder = builder
        self.debug = debug
        self.capability = target.capability if target else None
        self._combining = 0  # > 0 while a reduce/scan combine function is being built

    @contextlib.contextmanager
    def _combiner(self):
        """While a combine function is built: no debug checks inside it (a scan may run it
        on lanes whose results are thrown away)."""
        self._combining += 1
        try:
            yield
        finally:
            self._combining -= 1

    # ------------------------------------------------------------------ conversions
    def to_tensor(self, value: Any, ty: dtype | None = None) -> tensor:
        """A tensor for `value`; Python scalars become constants of `ty` (or their own type)."""
        value = _unwrap(value)
        if isinstance(value, tensor):
            return value
        if value is None:
            raise _error("None cannot be used as a value here")
        if isinstance(value, dtype):
            raise _error(f"{value!r} is a type, not a value")
        if isinstance(value, (tuple, list)):
            raise _error(f"a tuple of {len(value)} values cannot be used as one value here; unpack it first "
                         "(e.g. `values, indices = tl.max(x, axis=0, return_indices=True)`)")
        ty = ty if ty is not None else python_scalar_type(value)
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

    # ------------------------------------------------------------------ shapes
    @staticmethod
    def validate_block_shape(shape: Sequence[int]) -> tuple[int, ...]:
        dims = [_unwrap(s) for s in shape]
        for dim in dims:
            if isinstance(dim, tensor) or not isinstance(dim, int) or isinstance(dim, bool):
                what = "a value known only at run time" if isinstance(dim, tensor) else repr(dim)
                raise _error(f"shape dimensions must be constexpr integers, got {what}; mark the size tl.constexpr")
        shape = tuple(dims)
        numel = 1
        for dim in shape:
            if not tl.is_power_of_2(dim):
                raise _error(f"shape {list(shape)}: every dimension must be a power of 2, and {dim} is not")
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
        if not x.type.is_block():
            return self.splat(x, (1,))
        rank = len(x.type.shape)
        if axis < 0:
            axis += rank + 1
        if not 0 <= axis <= rank:
            raise _error(f"expand_dims axis {axis} is out of range for a tensor of rank {rank}")
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
        x = self._block(x, "trans")
        if not dims:
            if len(x.type.shape) != 2:
                raise _error(f"trans without dims transposes a 2-D tensor; this one has shape {list(x.type.shape)}, "
                             "so pass the permutation")
            dims = (1, 0)
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

    def cat(self, a: Any, b: Any) -> tensor:
        a, b = self._block(a, "cat"), self._block(b, "cat")
        if a.dtype != b.dtype or a.type.shape[1:] != b.type.shape[1:]:
            raise _error(f"cat needs tensors of one type whose shapes agree after the first dimension, got "
                         f"{a.type} and {b.type}")
        ty = block_type(a.dtype, (a.type.shape[0] + b.type.shape[0],) + a.type.shape[1:])
        self.validate_block_shape(ty.shape)
        return tensor(self.builder.cat(a.handle, b.handle, ty), ty)

    def subscript(self, x: tensor, slices: Any) -> tensor:
        """`x[:, None]`: only full slices and None are allowed."""
        if not isinstance(slices, tuple):
            slices = (slices,)
        slices = tuple(_unwrap(s) for s in slices)
        out = x
        dim = 0
        for s in slices:
            if s is None:
                out = self.expand_dims(out, dim)
                dim += 1
            elif isinstance(s, slice) and s.start is None and s.stop is None and s.step is None:
                dim += 1
            else:
                raise _error(f"unsupported tensor index {s!r}: only `:` and `None` are allowed "
                             "(tensors cannot be indexed by value)")
        rank = len(x.type.shape) if x.type.is_block() else 0
        if dim - slices.count(None) > rank:
            raise _error(f"too many indices for a tensor of rank {rank}")
        return out

    # ------------------------------------------------------------------ arithmetic
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

    def add(self, lhs: Any, rhs: Any) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs, allow_lhs_ptr=True, allow_rhs_ptr=True)
        if rhs.dtype.is_ptr() and not lhs.dtype.is_ptr():
            lhs, rhs = rhs, lhs
        if lhs.dtype.is_ptr():
            return self.addptr(lhs, rhs)
        if lhs.dtype.is_floating():
            return self._emit_binary("addf", lhs, rhs)
        return self._check_overflow("add", lhs, rhs, self._emit_binary("addi", lhs, rhs))

    def addptr(self, ptr: tensor, offset: tensor) -> tensor:
        if not offset.dtype.is_int():
            raise _error(f"pointer offsets must be integers, got {offset.dtype}")
        ptr, offset = self.broadcast_pair(ptr, offset)
        return tensor(self.builder.addptr(ptr.handle, offset.handle, ptr.type), ptr.type)

    def sub(self, lhs: Any, rhs: Any) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs, allow_lhs_ptr=True)
        if lhs.dtype.is_ptr():
            return self.addptr(lhs, self.minus(rhs))
        if lhs.dtype.is_floating():
            return self._emit_binary("subf", lhs, rhs)
        return self._check_overflow("sub", lhs, rhs, self._emit_binary("subi", lhs, rhs))

    def mul(self, lhs: Any, rhs: Any) -> tensor:
        lhs, rhs = self._binary_operands(lhs, rhs)
        if lhs.dtype.is_floating():
            return self._emit_binary("mulf", lhs, rhs)
        return self._check_overflow("mul", lhs, rhs, self._emit_binary("muli", lhs, rhs))

    def _check_overflow(self, what: str, lhs: tensor, rhs: tensor, result: tensor) -> tensor:
        """In debug mode, a device assert that signed `lhs what rhs` did not wrap (64-bit
        included). Unsigned arithmetic wraps by definition and is not checked."""
        ty = result.dtype
        if not self.debug or self._combining or not ty.is_int_signed() or ty.is_bool():
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
            raise _error(f"bitwise operator `{symbol}` needs integer or boolean operands, got {lhs.dtype}")
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
            condition = self._to_bool(condition)
        x, y = self._same_type_operands(x, y)
        if condition.type.is_block() or x.type.is_block():
            shape = self.broadcast_shapes(condition.type.shape if condition.type.is_block() else (),
                                          x.type.shape if x.type.is_block() else ())
            condition = self.broadcast_to(condition, shape)
            x, y = self.broadcast_to(x, shape), self.broadcast_to(y, shape)
        return tensor(self.builder.select(condition.handle, x.handle, y.handle, x.type), x.type)

    # ------------------------------------------------------------------ gather and histogram
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
        if not isinstance(num_bins, int) or isinstance(num_bins, bool) or num_bins < 1 or num_bins & (num_bins - 1):
            raise _error(f"num_bins must be a constexpr power of two, got {num_bins!r}")
        if _unwrap(mask) is not None:
            mask = self.broadcast_to(self._to_bool(mask), x.type.shape)
        if x.dtype.int_bitwidth < 32:  # the lowering compares 32- or 64-bit values
            x = self.cast(x, tl.int32)
        ty = block_type(tl.int32, (num_bins,))
        return tensor(self.builder.histogram(x.handle, num_bins, mask.handle if _unwrap(mask) is not None else None,
                                             ty), ty)

    # ------------------------------------------------------------------ debugging and hints
    def device_print(self, prefix: Any, args: Sequence[Any], hex: Any = False) -> None:
        prefix = _unwrap(prefix)
        if not isinstance(prefix, str):
            raise _error(f"device_print needs a string prefix first, got {prefix!r}")
        if not prefix.isascii() or not prefix.isprintable():
            raise _error(f"the device_print prefix must be printable ASCII, got {prefix!r}")
        values = [self.to_tensor(a) for a in args]
        for value in values:
            if value.dtype.is_fp8():
                raise _error("device_print cannot show fp8 values; convert with .to(tl.float32) first")
        if len(values) > MAX_PRINT_VALUES:
            raise _error(f"device_print shows at most {MAX_PRINT_VALUES} values at once, got {len(values)}")
        self.builder.device_print(prefix, values, bool(_unwrap(hex)))

    def python_print(self, args: Sequence[Any], kwargs: dict) -> None:
        """Python's `print` in a kernel: device_print, the first argument the prefix when it
        is a string (`print("x =", x)`)."""
        if kwargs:
            raise _error(f"print() in a kernel takes no keyword arguments (got {', '.join(kwargs)}); "
                         "it prints at run time like tl.device_print")
        args = list(args)
        prefix = _unwrap(args.pop(0)) if args and isinstance(_unwrap(args[0]), str) else ""
        if any(isinstance(_unwrap(a), str) for a in args):
            raise _error("print() in a kernel takes one string, first (the prefix), then values")
        self.device_print(prefix, args)

    def device_assert(self, cond: Any, msg: Any = "", mask: Any = None) -> None:
        """Stops the kernel where `cond` is false (and `mask` true); only in debug mode, as
        in Triton: otherwise it costs nothing."""
        msg = _unwrap(msg)
        if not isinstance(msg, str):
            raise _error(f"the device_assert message must be a string, got {msg!r}")
        if not self.debug:
            return
        cond = self._to_bool(cond)
        if _unwrap(mask) is not None:
            cond = self.logical_or(cond, self.logical_not(mask))
        self.builder.device_assert(cond.handle, msg, self.builder.source_location())

    def debug_barrier(self) -> None:
        self.builder.barrier()

    def assume(self, cond: Any) -> None:
        cond = self.to_tensor(cond)
        if not cond.dtype.is_bool():
            raise _error(f"assume needs a boolean condition, got {cond.dtype}")
        self.builder.assume(cond.handle)

    def hint(self, kind: str, x: Any, values: Any) -> tensor:
        """multiple_of / max_contiguous / max_constancy: facts about integer or pointer
        values, one per dimension (a single int applies to every dimension)."""
        x = self.to_tensor(x)
        values = _unwrap(values)
        rank = len(x.type.shape) if x.type.is_block() else 1
        if isinstance(values, (list, tuple)):
            values = [_unwrap(v) for v in values]
        else:
            values = [values] * rank
        if len(values) != rank or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                           for v in values):
            raise _error(f"{kind} needs {rank} positive int(s) (one per dimension), got {values!r}")
        if not (x.dtype.is_int() or x.dtype.is_ptr()):
            raise _error(f"{kind} applies to integer or pointer values, got {x.dtype}")
        return tensor(self.builder.hint(x.handle, kind, values), x.type)

    # ------------------------------------------------------------------ casts
    def cast(self, x: Any, dst: Any, bitcast: bool = False, fp_downcast_rounding: str | None = None) -> tensor:
        x = self.to_tensor(x)
        dst = _unwrap(dst)
        if not isinstance(dst, dtype):
            raise _error(f"`to` expects a tl dtype, got {dst!r}")
        src = x.dtype
        if src == dst:
            return x
        ty = block_type(dst, x.type.shape) if x.type.is_block() else dst
        if bitcast:
            if src.primitive_bitwidth != dst.primitive_bitwidth:
                raise _error(f"cannot bitcast {src} to {dst}: they have different bit widths "
                             f"({src.primitive_bitwidth} and {dst.primitive_bitwidth})")
            return tensor(self.builder.cast("bitcast", x.handle, ty), ty)
        if fp_downcast_rounding not in (None, "rtne", "rtz"):
            raise _error(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {fp_downcast_rounding!r}")
        if fp_downcast_rounding == "rtz" and (src, dst) not in _RTZ_CASTS:
            raise _error(f"fp_downcast_rounding='rtz' applies to float32 -> float16/bfloat16 and float64 -> "
                         f"float32, not {src} -> {dst}")
        if (src.is_fp8() or dst.is_fp8()) and self.capability is not None and self.capability < 89:
            raise _error(f"converting {src} to {dst} needs an sm_89 or newer GPU (the target is "
                         f"sm_{self.capability}); fp8 values can still be loaded, stored and bitcast")
        if (src.is_fp8() and not dst.is_floating()) or (dst.is_fp8() and not src.is_floating()):
            # integers go to and from fp8 through fp32
            return self.cast(self.cast(x, tl.float32), dst)
        if dst.is_bool():
            if src.is_ptr():
                x = self.cast(x, tl.uint64)
            return self.compare("ne", x, 0)
        if src.is_ptr() or dst.is_ptr():
            if src.is_ptr() and dst.is_ptr():
                return tensor(self.builder.cast("bitcast", x.handle, ty), ty)
            if src.is_ptr() and dst.is_int() and dst.int_bitwidth == 64:
                return tensor(self.builder.cast("ptrtoint", x.handle, ty), ty)
            if dst.is_ptr() and src.is_int() and src.int_bitwidth == 64:
                return tensor(self.builder.cast("inttoptr", x.handle, ty), ty)
            raise _error(f"cannot convert {src} to {dst}; pointers convert only to and from 64-bit integers")
        if src.is_int() and dst.is_int():
            if src.int_bitwidth == dst.int_bitwidth:
                return tensor(self.builder.cast("bitcast", x.handle, ty), ty)
            if src.int_bitwidth > dst.int_bitwidth:
                return tensor(self.builder.cast("trunci", x.handle, ty), ty)
            op = "extsi" if src.is_int_signed() else "extui"
            return tensor(self.builder.cast(op, x.handle, ty), ty)
        if src.is_int() and dst.is_floating():
            op = "sitofp" if src.is_int_signed() else "uitofp"
            return tensor(self.builder.cast(op, x.handle, ty), ty)
        if src.is_floating() and dst.is_int():
            op = "fptosi" if dst.is_int_signed() else "fptoui"
            return tensor(self.builder.cast(op, x.handle, ty), ty)
        if src.is_floating() and dst.is_floating():
            if src.is_fp8() and dst.is_fp8():
                return self.cast(self.cast(x, tl.float16), dst)  # no direct conversion between fp8 formats
            if src.primitive_bitwidth < dst.primitive_bitwidth or (src.is_fp16() and dst.is_bf16()) or (src.is_bf16() and dst.is_fp16()):
                if src.primitive_bitwidth == dst.primitive_bitwidth:
                    mid = self.cast(x, tl.float32)
                    return self.cast(mid, dst)
                return tensor(self.builder.cast("extf", x.handle, ty), ty)
            return tensor(self.builder.cast("truncf_rtz" if fp_downcast_rounding == "rtz" else "truncf",
                                            x.handle, ty), ty)
        raise _error(f"cannot convert {src} to {dst}")

    # ------------------------------------------------------------------ program ids and creation
    def program_id(self, axis: Any) -> tensor:
        axis = _axis_arg(axis, "program_id")
        if axis not in (0, 1, 2):
            raise _error(f"program_id axis must be 0, 1 or 2, got {axis}")
        return tensor(self.builder.program_id(axis), tl.int32)

    def num_programs(self, axis: Any) -> tensor:
        axis = _axis_arg(axis, "num_programs")
        if axis not in (0, 1, 2):
            raise _error(f"num_programs axis must be 0, 1 or 2, got {axis}")
        return tensor(self.builder.num_programs(axis), tl.int32)

    def arange(self, start: Any, end: Any) -> tensor:
        start, end = _unwrap(start), _unwrap(end)
        if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
            raise _error("arange's start and end must be constexpr integers "
                         f"(got {type(start).__name__} and {type(end).__name__}); mark them tl.constexpr")
        if end <= start:
            raise _error(f"arange({start}, {end}): end must be greater than start")
        if not (-(1 << 31) <= start and end <= (1 << 31)):
            raise _error(f"arange({start}, {end}) does not fit in int32")
        size = end - start
        if not tl.is_power_of_2(size):
            raise _error(f"arange({start}, {end}) has {size} elements; the number of elements must be a power of 2")
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

    # ------------------------------------------------------------------ math
    def math_unary(self, op: str, x: Any, *, float_only: bool = True) -> tensor:
        x = self.to_tensor(x)
        self._check_arithmetic_type(x.dtype, op)
        if float_only and not x.dtype.is_floating():
            raise _error(f"{op} needs a floating-point operand, got {x.dtype}; cast it with .to(tl.float32)")
        if op == "sqrt_rn" and x.dtype.primitive_bitwidth == 16:
            # fp32 has more than twice the precision: rounding its correctly rounded root
            # again gives the correctly rounded 16-bit root.
            return self.cast(self.math_unary(op, self.cast(x, tl.float32)), x.dtype)
        return tensor(self.builder.unary(op, x.handle, x.type), x.type)

    def umulhi(self, x: Any, y: Any) -> tensor:
        """The high half of the double-width product of two 32- or 64-bit integers, the
        operands read as unsigned."""
        x, y = self._binary_operands(x, y)
        if not (x.dtype.is_int() and x.dtype.int_bitwidth in (32, 64)):
            raise _error(f"umulhi needs 32- or 64-bit integer operands, got {x.dtype}")
        return self._emit_binary("mulhiui", x, y)

    def fma(self, x: Any, y: Any, z: Any) -> tensor:
        x, y = self._binary_operands(x, y)
        x, z = self._binary_operands(x, z)
        x, y = self.broadcast_pair(x, y)
        if not x.dtype.is_floating():
            raise _error(f"fma needs floating-point operands, got {x.dtype}")
        y, z = self.cast(y, x.dtype), self.cast(z, x.dtype)
        return tensor(self.builder.ternary("fma", x.handle, y.handle, z.handle, x.type), x.type)

    def div_rn(self, x: Any, y: Any) -> tensor:
        """x / y rounded to nearest even (IEEE), for fp32 and fp64."""
        x, y = self._binary_operands(x, y, div_or_mod=True)
        if not x.dtype.is_floating() or x.dtype.primitive_bitwidth < 32:
            raise _error(f"div_rn needs fp32 or fp64 operands, got {x.dtype}")
        return self._emit_binary("divf_rn", x, y)

    def fdiv(self, x: Any, y: Any, ieee_rounding: bool = False) -> tensor:
        x, y = self._binary_operands(x, y, div_or_mod=True)
        if not x.dtype.is_floating():
            raise _error(f"fdiv needs floating-point operands, got {x.dtype}")
        if ieee_rounding and x.dtype.primitive_bitwidth >= 32:
            return self._emit_binary("divf_rn", x, y)
        return self._emit_binary("divf", x, y)

    def clamp(self, x: Any, low: Any, high: Any, propagate_nan: bool = False) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_floating():
            raise _error(f"clamp needs a floating-point operand, got {x.dtype}")
        return self.minimum(self.maximum(x, low, propagate_nan), high, propagate_nan)

    def pow(self, x: Any, y: Any) -> tensor:
        x, y = self._binary_operands(x, y)
        if not x.dtype.is_floating():
            raise _error(f"pow needs floating-point operands, got {x.dtype}")
        return self._emit_binary("powf", x, y)

    def inline_asm_elementwise(self, asm: Any, constraints: Any, args: Sequence[Any], dtype: Any, is_pure: Any,
                               pack: Any) -> Any:
        """Inline PTX applied elementwise (see tl.inline_asm_elementwise); a tuple of tensors
        when `dtype` is a sequence of types."""
        asm, constraints, pack, is_pure = _unwrap(asm), _unwrap(constraints), _unwrap(pack), _unwrap(is_pure)
        if not isinstance(asm, str) or not isinstance(constraints, str):
            raise _error("inline_asm_elementwise needs the assembly and the constraints as strings")
        if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1 or pack & (pack - 1):
            raise _error(f"pack must be a power of two, got {pack!r}")
        dtype = _unwrap(dtype)
        several = isinstance(dtype, (tuple, list))
        dtypes = [_unwrap(d) for d in dtype] if several else [dtype]
        if not dtypes or not all(isinstance(d, dtype_class) for d in dtypes):
            raise _error(f"inline_asm_elementwise needs a tl dtype (or a tuple of them) for its results, got {dtype!r}")
        values = [self.to_tensor(a) for a in (_unwrap(args) or [])]
        shape: tuple[int, ...] = ()
        for v in values:
            if v.type.is_block():
                shape = self.broadcast_shapes(shape, v.type.shape) if shape else v.type.shape
        if shape:
            values = [self.broadcast_to(v, shape) for v in values]
        if any(d.is_bool() for d in dtypes):
            raise _error("inline_asm_elementwise cannot give bool results; return an integer and compare it")

        def registers(d: dtype) -> int:  # narrow elements share 32-bit registers (see the lowering)
            bits = 64 if d.is_ptr() else max(8, d.primitive_bitwidth)
            return pack // min(pack, max(1, 32 // bits))

        operands = [c.strip() for c in constraints.split(",") if not c.strip().startswith("~")]
        outputs = sum(registers(d) for d in dtypes)
        expected = outputs + sum(registers(v.dtype) for v in values)
        if len(operands) != expected or not all(c.startswith("=") for c in operands[:outputs]) or \
                any(c.startswith("=") for c in operands[outputs:]):
            raise _error(f"the constraints {constraints!r} do not fit: with pack={pack}, the results "
                         f"({', '.join(map(str, dtypes))}) need {outputs} output register(s) ('=r', ...) and the "
                         f"arguments ({', '.join(str(v.dtype) for v in values) or 'none'}) {expected - outputs} "
                         f"input register(s), {expected} in all; elements narrower than 32 bits share a register")
        if pack > 1 and (not shape or max(shape) < pack):
            raise _error(f"inline_asm_elementwise with pack={pack} needs a block with a dimension of at least "
                         f"{pack} elements, got shape {list(shape)}")
        types = [block_type(d, shape) if shape else d for d in dtypes]
        handles = self.builder.inline_asm(asm, constraints, [v.handle for v in values], types, bool(is_pure), pack)
        results = [tensor(h, t) for h, t in zip(handles, types)]
        return tuple(results) if several else results[0]

    def extern_elementwise(self, args: Sequence[Any], table: dict, is_pure: bool = True) -> tensor:
        """Call an external (libdevice) function chosen by the argument types.

        `table` maps tuples of argument dtypes to (symbol, result dtype). Arguments are
        broadcast together; when their types have no entry, they are promoted to a common
        type (Python scalars adapt to tensors) and looked up again.
        """
        raw = [_unwrap(a) for a in args]
        values = [self.to_tensor(a) for a in raw]
        key = tuple(v.dtype for v in values)
        if key not in table and len(values) > 1:
            common = values[0]
            for other, original in zip(values[1:], raw[1:]):
                common, _ = self._binary_operands(common, original if not isinstance(original, tensor) else other)
            target = common.dtype
            values = [v if isinstance(a, tensor) and v.dtype == target else self.cast(v, target) if isinstance(a, tensor)
                      else self.to_tensor(a, target) for v, a in zip(values, raw)]
            key = tuple(v.dtype for v in values)
        if key not in table:
            choices = ", ".join("(" + ", ".join(str(t) for t in k) + ")" for k in table)
            raise _error(f"no version of this function for argument types ({', '.join(str(t) for t in key)}); "
                         f"available: {choices}")
        symbol, result_dtype = table[key]
        shape = ()
        for v in values:
            if v.type.is_block():
                shape = self.broadcast_shapes(shape, v.type.shape) if shape else v.type.shape
        if shape:
            values = [self.broadcast_to(v, shape) for v in values]
        ty = block_type(result_dtype, shape) if shape else result_dtype
        return tensor(self.builder.extern_elementwise(symbol, [v.handle for v in values], ty, is_pure), ty)

    def abs(self, x: Any) -> tensor:
        x = self.to_tensor(x)
        self._check_arithmetic_type(x.dtype, "abs")
        if x.dtype.is_floating():
            return tensor(self.builder.unary("absf", x.handle, x.type), x.type)
        if x.dtype.is_int_unsigned():
            return x
        return tensor(self.builder.unary("absi", x.handle, x.type), x.type)

    # ------------------------------------------------------------------ memory
    def _check_cache_options(self, what: str, cache_modifier: str, eviction_policy: str) -> tuple[str, str]:
        cache_modifier = _unwrap(cache_modifier) or ""
        eviction_policy = _unwrap(eviction_policy) or ""
        allowed = _CACHE_MODIFIERS[what]
        if cache_modifier not in allowed:
            raise _error(f"{what}'s cache_modifier {cache_modifier!r} is not one of {list(allowed)}")
        if eviction_policy not in _EVICTION_POLICIES:
            raise _error(f"unknown eviction_policy {eviction_policy!r}; expected one of {list(_EVICTION_POLICIES)}")
        if cache_modifier and eviction_policy in ("evict_first", "evict_last"):
            raise _error(f"{what}: cache_modifier {cache_modifier!r} and eviction_policy {eviction_policy!r} cannot "
                         "be combined; a PTX memory access takes a cache operator or an eviction priority, not both")
        return cache_modifier, eviction_policy

    @staticmethod
    def _check_storage_type(ty: dtype, what: str) -> None:
        """Every element type can be loaded and stored (fp8 included)."""

    def _memory_operands(self, ptr: Any, mask: Any, what: str) -> tuple[tensor, tensor | None]:
        ptr = _unwrap(ptr)
        if not isinstance(ptr, tensor) or not ptr.dtype.is_ptr():
            got = ptr.dtype if isinstance(ptr, tensor) else type(ptr).__name__
            raise _error(f"{what} expects a pointer or a tensor of pointers, got {got}")
        mask = _unwrap(mask)
        if mask is None:
            return ptr, None
        mask = self.to_tensor(mask)
        if not mask.dtype.is_bool():
            raise _error(f"{what}'s mask must be boolean (int1), got {mask.dtype}")
        if mask.type.is_block() and not ptr.type.is_block():
            raise _error(f"{what}'s mask is a block of shape {list(mask.type.shape)} but the pointer is a scalar; "
                         "give the pointer that shape too (e.g. ptr + tl.arange(0, N)) or use a scalar mask")
        if ptr.type.is_block():
            if mask.type.is_block() and self.broadcast_shapes(mask.type.shape, ptr.type.shape) != ptr.type.shape:
                raise _error(f"{what}'s mask has shape {list(mask.type.shape)}, which does not broadcast to "
                             f"the pointer shape {list(ptr.type.shape)}")
            mask = self.broadcast_to(mask, ptr.type.shape)
        return ptr, mask

    def load(self, ptr: Any, mask: Any = None, other: Any = None, cache_modifier: str = "",
             eviction_policy: str = "", volatile: bool = False) -> tensor:
        cache_modifier, eviction_policy = self._check_cache_options("load", cache_modifier, eviction_policy)
        if _unwrap(volatile) and (cache_modifier or eviction_policy in ("evict_first", "evict_last")):
            raise _error("a volatile load takes no cache_modifier or eviction_policy (PTX's ld.volatile has neither)")
        ptr, mask = self._memory_operands(ptr, mask, "load")
        self._check_storage_type(ptr.dtype.element_ty, "load")
        elt = ptr.dtype.element_ty
        ty = block_type(elt, ptr.type.shape) if ptr.type.is_block() else elt
        other = _unwrap(other)
        if other is not None:
            if mask is None:
                raise _error("load's `other` needs a `mask`: it is the value of masked-off elements")
            other = self.cast(self.to_tensor(other, elt) if not isinstance(other, tensor) else other, elt)
            if ptr.type.is_block():
                other = self.broadcast_to(other, ptr.type.shape)
            elif other.type.is_block():
                raise _error("load's `other` is a block but the pointer is a scalar")
        handle = self.builder.load(ptr.handle, None if mask is None else mask.handle,
                                   None if other is None else other.handle, ty,
                                   cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                                   volatile=bool(_unwrap(volatile)))
        return tensor(handle, ty)

    def store(self, ptr: Any, value: Any, mask: Any = None, cache_modifier: str = "",
              eviction_policy: str = "") -> None:
        cache_modifier, eviction_policy = self._check_cache_options("store", cache_modifier, eviction_policy)
        ptr, mask = self._memory_operands(ptr, mask, "store")
        self._check_storage_type(ptr.dtype.element_ty, "store")
        value = _unwrap(value)
        elt = ptr.dtype.element_ty
        value = self.to_tensor(value, elt) if not isinstance(value, tensor) else value
        if value.type.is_block() and not ptr.type.is_block():
            raise _error(f"cannot store a block of shape {list(value.type.shape)} through a scalar pointer")
        if ptr.type.is_block():
            value = self.broadcast_to(value, ptr.type.shape)
        value = self.cast(value, elt)
        self.builder.store(ptr.handle, value.handle, None if mask is None else mask.handle,
                           cache_modifier=cache_modifier, eviction_policy=eviction_policy)

    # ------------------------------------------------------------------ matrix product
    def dot(self, a: Any, b: Any, acc: Any = None, input_precision: Any = None, allow_tf32: Any = None,
            out_dtype: Any = None) -> tensor:
        """acc + a @ b for [M, K] x [K, N] (or batched [B, M, K] x [B, K, N]) tensors, every
        dimension at least 16. fp16/bf16/fp8 accumulate in fp32 (or out_dtype), int8 in
        int32, fp32 in fp32 (input_precision tf32 or ieee), fp64 in fp64."""
        a, b = self._block(a, "dot"), self._block(b, "dot")
        if len(a.type.shape) != len(b.type.shape) or len(a.type.shape) not in (2, 3):
            raise _error(f"dot needs two 2-D (or two 3-D, batched) tensors, got shapes {list(a.type.shape)} "
                         f"and {list(b.type.shape)}")
        (*batch_a, m, k), (*batch_b, k2, n) = a.type.shape, b.type.shape
        if k != k2 or batch_a != batch_b:
            raise _error(f"dot shapes do not match: {list(a.type.shape)} @ {list(b.type.shape)}")
        if min(m, n, k) < 16:
            raise _error(f"dot needs every dimension to be at least 16, got M={m}, N={n}, K={k}")
        ta, tb = a.dtype, b.dtype
        if ta != tb:
            if ta.is_fp8() and tb.is_fp8():
                pass
            else:
                raise _error(f"dot operands must have one type, got {ta} and {tb}")
        if ta.is_fp8():  # every fp8 value is exact in fp16, and so is the product sum in fp32
            a, b = self.cast(a, tl.float16), self.cast(b, tl.float16)
        if ta.is_int():
            if not (ta.int_bitwidth == 8 and ta.is_int_signed()):
                raise _error(f"integer dot needs int8 operands, got {ta}")
            default_out = tl.int32
        elif ta.is_fp64():
            default_out = tl.float64
        elif ta.is_floating():
            default_out = tl.float32
        else:
            raise _error(f"dot does not support {ta}")
        precision = _unwrap(input_precision)
        if precision is None:
            tf32 = _unwrap(allow_tf32)
            precision = "tf32" if tf32 is None or tf32 else "ieee"
        if precision not in ("tf32", "tf32x3", "ieee"):
            raise _error(f"input_precision must be 'tf32', 'tf32x3' or 'ieee', got {precision!r}")
        out = _unwrap(out_dtype) or default_out
        shape = tuple(batch_a) + (m, n)
        acc = _unwrap(acc)
        if acc is None:
            acc = self.full(shape, 0, out)
        else:
            acc = self.to_tensor(acc)
            if acc.type.shape != shape:
                raise _error(f"dot accumulator has shape {list(acc.type.shape)}; expected {list(shape)}")
            if _unwrap(out_dtype) is not None and acc.dtype != out:
                raise _error(f"dot accumulator is {acc.dtype} but out_dtype is {out}")
            out = acc.dtype
        allowed = {tl.int32} if ta.is_int() else {tl.float64} if ta.is_fp64() else \
            {tl.float32, tl.float16} if ta.is_fp16() or ta.is_fp8() else {tl.float32}
        if out not in allowed:
            raise _error(f"a dot of {ta} values accumulates in {' or '.join(sorted(str(t) for t in allowed))}, "
                         f"not {out}")
        ty = block_type(out, shape)
        return tensor(self.builder.dot(a.handle, b.handle, acc.handle, precision if ta.is_fp32() else "ieee", ty), ty)

    # ------------------------------------------------------------------ atomics
    _ATOMIC_SEM = {None: "acq_rel", "": "acq_rel", "acq_rel": "acq_rel", "acquire": "acquire",
                   "release": "release", "relaxed": "relaxed"}
    _ATOMIC_SCOPE = {None: "gpu", "": "gpu", "gpu": "gpu", "cta": "cta", "sys": "sys"}

    def _atomic_options(self, sem: Any, scope: Any) -> tuple[str, str]:
        sem, scope = _unwrap(sem), _unwrap(scope)
        if sem not in self._ATOMIC_SEM:
            raise _error(f"atomic sem must be one of 'acq_rel', 'acquire', 'release', 'relaxed', got {sem!r}")
        if scope not in self._ATOMIC_SCOPE:
            raise _error(f"atomic scope must be one of 'gpu', 'cta', 'sys', got {scope!r}")
        return self._ATOMIC_SEM[sem], self._ATOMIC_SCOPE[scope]

    def _atomic_operands(self, ptr: Any, value: Any, mask: Any, what: str) -> tuple[tensor, tensor, tensor | None]:
        ptr, mask = self._memory_operands(ptr, mask, what)
        elt = ptr.dtype.element_ty
        value = self.to_tensor(value, elt) if not isinstance(_unwrap(value), tensor) else _unwrap(value)
        if value.type.is_block() and not ptr.type.is_block():
            ptr = self.broadcast_to(ptr, value.type.shape)
            if mask is not None:
                mask = self.broadcast_to(mask, value.type.shape)
        if ptr.type.is_block():
            value = self.broadcast_to(value, ptr.type.shape)
        return ptr, self.cast(value, elt), mask

    def atomic_rmw(self, kind: str, ptr: Any, value: Any, mask: Any = None, sem: Any = None,
                   scope: Any = None) -> tensor:
        """Atomic read-modify-write; returns the old values. kind: add max min and or xor xchg."""
        sem, scope = self._atomic_options(sem, scope)
        ptr, value, mask = self._atomic_operands(ptr, value, mask, f"atomic_{kind}")
        elt = ptr.dtype.element_ty
        bits = elt.primitive_bitwidth
        if kind == "add":
            if elt.is_floating():
                if elt.is_fp8():
                    raise _error(f"atomic_add does not support {elt}")
                op = "fadd"
            elif bits in (32, 64):
                op = "add"
            else:
                raise _error(f"atomic_add needs 32- or 64-bit integers or floats, got {elt}")
        elif kind in ("max", "min"):
            if elt.is_floating():
                if bits not in (32, 64):
                    raise _error(f"atomic_{kind} supports fp32 and fp64 floats, got {elt}")
                op = "f" + kind
            elif bits in (32, 64):
                op = kind if elt.is_int_signed() else "u" + kind
            else:
                raise _error(f"atomic_{kind} needs 32- or 64-bit integers or floats, got {elt}")
        elif kind in ("and", "or", "xor"):
            if not elt.is_int() or bits not in (32, 64):
                raise _error(f"atomic_{kind} needs 32- or 64-bit integers, got {elt}")
            op = kind
        elif kind == "xchg":
            if bits not in (32, 64):
                raise _error(f"atomic_xchg needs 32- or 64-bit values, got {elt}")
            op = "xchg"
        else:
            raise _error(f"unknown atomic operation {kind!r}")
        ty = value.type
        handle = self.builder.atomic_rmw(op, ptr.handle, value.handle, None if mask is None else mask.handle,
                                         sem, scope, ty)
        return tensor(handle, ty)

    def atomic_cas(self, ptr: Any, cmp: Any, value: Any, sem: Any = None, scope: Any = None) -> tensor:
        """Atomic compare-and-swap: where *ptr == cmp, store value; returns the old values."""
        sem, scope = self._atomic_options(sem, scope)
        ptr, value, _ = self._atomic_operands(ptr, value, None, "atomic_cas")
        elt = ptr.dtype.element_ty
        if elt.primitive_bitwidth not in (16, 32, 64):
            raise _error(f"atomic_cas needs 16-, 32- or 64-bit values, got {elt}")
        cmp = _unwrap(cmp)
        cmp = self.to_tensor(cmp, elt) if not isinstance(cmp, tensor) else self.cast(cmp, elt)
        if ptr.type.is_block():
            cmp = self.broadcast_to(cmp, ptr.type.shape)
        ty = value.type
        return tensor(self.builder.atomic_cas(ptr.handle, cmp.handle, value.handle, sem, scope, ty), ty)

    # ------------------------------------------------------------------ reductions
    def reduction(self, inputs: Sequence[tensor], axis: Any, combine: Callable,
                  keep_dims: bool = False) -> list[tensor]:
        """Reduce `inputs` (same shape) along `axis` with `combine(lhs_list, rhs_list)`."""
        inputs = [self.to_tensor(x) for x in inputs]
        axis = _unwrap(axis)
        keep_dims = bool(_unwrap(keep_dims))
        first = inputs[0]
        if not first.type.is_block():
            raise _error("cannot reduce a scalar; reductions need a tensor")
        for x in inputs:
            if x.dtype.is_ptr():
                raise _error(f"cannot reduce a tensor of pointers ({x.type}); load the values first")
        for x in inputs[1:]:
            if x.type.shape != first.type.shape:
                raise _error(f"all reduced tensors must have the same shape, got {list(first.type.shape)} "
                             f"and {list(x.type.shape)}")
        shape = first.type.shape
        if axis is None:
            # Over every element: reduce the flattened tensor; keep_dims keeps a 1 per dimension.
            flat = [self.reshape(x, (x.type.numel,)) for x in inputs]
            results = self.reduction(flat, 0, combine, False)
            if keep_dims:
                results = [self.reshape(self.splat(r, (1,)), (1,) * len(shape)) for r in results]
            return results
        axis = _axis_arg(axis, "reduction")
        rank = len(shape)
        if not -rank <= axis < rank:
            raise _error(f"reduction axis {axis} is out of range for a tensor of rank {rank}")
        axis %= rank
        out_shape = shape[:axis] + shape[axis + 1:]
        result_types = [block_type(x.dtype, out_shape) if out_shape else x.dtype for x in inputs]
        with self._combiner():
            handles = self.builder.reduce(inputs, axis, combine, result_types)
        results = [tensor(h, t) for h, t in zip(handles, result_types)]
        if keep_dims:
            results = [self.expand_dims(r, axis) for r in results]
        return results

    def scan(self, inputs: Sequence[tensor], axis: Any, combine: Callable, reverse: bool = False) -> list[tensor]:
        """Inclusive scan of `inputs` (same shape) along `axis`: result[i] combines elements
        0..i in order (i..n-1 with `reverse`), with `combine(earlier, later)`."""
        inputs = [self.to_tensor(x) for x in inputs]
        first = inputs[0]
        if not first.type.is_block():
            raise _error("cannot scan a scalar; scans need a tensor")
        for x in inputs:
            if x.dtype.is_ptr():
                raise _error(f"cannot scan a tensor of pointers ({x.type}); load the values first")
        for x in inputs[1:]:
            if x.type.shape != first.type.shape:
                raise _error(f"all scanned tensors must have the same shape, got {list(first.type.shape)} "
                             f"and {list(x.type.shape)}")
        axis = _unwrap(axis)
        if axis is None:
            raise _error("a scan needs an axis")
        rank = len(first.type.shape)
        axis = _axis_arg(axis, "scan")
        if not -rank <= axis < rank:
            raise _error(f"scan axis {axis} is out of range for a tensor of rank {rank}")
        axis %= rank
        result_types = [x.type for x in inputs]
        with self._combiner():
            handles = self.builder.scan(inputs, axis, combine, bool(_unwrap(reverse)), result_types)
        return [tensor(h, t) for h, t in zip(handles, result_types)]

    def _accumulation_type(self, x: tensor, out_dtype: Any) -> tensor:
        out = _unwrap(out_dtype)
        if out is None and x.dtype.is_int() and x.dtype.int_bitwidth < 32:
            out = tl.int32 if x.dtype.is_int_signed() else tl.uint32
        return self.cast(x, out) if out is not None else x

    def _bf16_to_fp32(self, x: Any) -> tensor:
        """Triton computes these reductions and scans of bf16 values in fp32."""
        x = self.to_tensor(x)
        return self.cast(x, tl.float32) if x.dtype.is_bf16() else x

    def cumsum(self, x: Any, axis: Any = 0, reverse: bool = False, out_dtype: Any = None) -> tensor:
        x = self._accumulation_type(self._bf16_to_fp32(x), out_dtype)
        return self.scan([x], axis, lambda a, b: [self.add(a[0], b[0])], reverse)[0]

    def cumprod(self, x: Any, axis: Any = 0, reverse: bool = False, out_dtype: Any = None) -> tensor:
        """As Triton: bf16 in fp32, other types as they are (narrow integers wrap)."""
        x = self._bf16_to_fp32(x)
        if _unwrap(out_dtype) is not None:
            x = self.cast(x, _unwrap(out_dtype))
        return self.scan([x], axis, lambda a, b: [self.mul(a[0], b[0])], reverse)[0]

    def _user_combiner(self, combine_fn: Any) -> Callable[[list[tensor], list[tensor]], list[tensor]]:
        """The combine callback of tl.reduce / tl.associative_scan for a user @jit function
        taking the lhs values then the rhs values: one result per input, each converted
        to its input's type."""
        def combine(a: list[tensor], b: list[tensor]) -> list[tensor]:
            result = tl.call_kernel_function(combine_fn, a + b)
            results = list(result) if isinstance(result, (tuple, list)) else [result]
            if len(results) != len(a):
                name = getattr(combine_fn, "__name__", "the combine function")
                raise _error(f"{name} returned {len(results)} value{'s' if len(results) != 1 else ''} for "
                             f"{len(a)} input{'s' if len(a) != 1 else ''}; a combine function returns one value "
                             "per input")
            return [self.cast(self.to_tensor(r, v.dtype) if not isinstance(r, tensor) else r, v.dtype)
                    for r, v in zip(results, a)]
        return combine

    def associative_scan(self, inputs: Any, axis: Any, combine_fn: Any, reverse: bool = False) -> Any:
        single = not isinstance(inputs, (tuple, list))
        values = [inputs] if single else list(inputs)
        results = self.scan(values, axis, self._user_combiner(combine_fn), reverse)
        return results[0] if single else tl.tuple_value(results)

    def sum(self, x: Any, axis: Any, keep_dims: bool = False, out_dtype: Any = None) -> tensor:
        x = self.to_tensor(x)
        out = _unwrap(out_dtype)
        if out is None:
            if x.dtype.is_int() and x.dtype.int_bitwidth < 32:
                out = tl.int32 if x.dtype.is_int_signed() else tl.uint32
        if out is not None:
            x = self.cast(x, out)
        return self.reduction([x], axis, lambda a, b: [self.add(a[0], b[0])], keep_dims)[0]

    def xor_sum(self, x: Any, axis: Any, keep_dims: bool = False) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise _error(f"xor_sum needs integer values, got {x.dtype}")
        return self.reduction([x], axis, lambda a, b: [self.xor_(a[0], b[0])], keep_dims)[0]

    def _axis_indices(self, x: tensor, axis: int | None) -> tensor:
        """int32 positions along `axis` (flat positions for axis=None), shaped like x."""
        shape = x.type.shape
        if axis is None:
            return self.reshape(self.arange(0, x.type.numel), shape)
        axis %= len(shape)
        index = self.arange(0, shape[axis])
        for d in range(len(shape)):
            if d != axis:
                index = self.expand_dims(index, d)
        return self.broadcast_to(index, shape)

    def arg_reduction(self, x: Any, axis: Any, largest: bool, tie_break_left: bool = True,
                      keep_dims: bool = False) -> tuple[tensor, tensor]:
        """(extreme value, its index) along `axis`: ties go to the lowest index, and a NaN
        wins in both directions, so the first NaN is returned (as NumPy and torch do)."""
        x = self._bf16_to_fp32(x)
        if x.dtype.is_fp8():  # fp8 values compare exactly in fp32
            x = self.cast(x, tl.float32)
        if not x.type.is_block():
            raise _error("argmax/argmin need a tensor")
        axis = _unwrap(axis)
        index = self._axis_indices(x, axis if axis is None else _axis_arg(axis, "argmax/argmin"))
        is_float = x.dtype.is_floating()

        def combine(a: list[tensor], b: list[tensor]) -> list[tensor]:
            (va, ia), (vb, ib) = a, b
            better = self.compare("gt" if largest else "lt", va, vb)
            same = self.compare("eq", va, vb)
            if is_float:
                a_nan, b_nan = self.compare("ne", va, va), self.compare("ne", vb, vb)
                better = self.or_(self.and_(better, self.logical_not(b_nan)),
                                  self.and_(a_nan, self.logical_not(b_nan)))
                same = self.or_(same, self.and_(a_nan, b_nan))
            earlier = self.compare("lt" if tie_break_left else "gt", ia, ib)
            take_a = self.or_(better, self.and_(same, earlier))
            return [self.where(take_a, va, vb), self.where(take_a, ia, ib)]

        value, where = self.reduction([x, index], axis, combine, keep_dims)
        return value, where

    def reduce_with(self, inputs: Any, axis: Any, combine_fn: Any, keep_dims: bool = False) -> Any:
        """`tl.reduce(input, axis, combine_fn)`: a reduction with a user @jit combine function
        taking the lhs values then the rhs values, returning one value or a tuple."""
        single = not isinstance(inputs, (tuple, list))
        values = [inputs] if single else list(inputs)
        results = self.reduction(values, axis, self._user_combiner(combine_fn), keep_dims)
        return results[0] if single else tl.tuple_value(results)

    def _widen_for_extremum(self, x: Any) -> tensor:
        """Triton's max/min (without indices) work on at least 32 bits: narrower floats in
        fp32, narrower integers in int32."""
        x = self._bf16_to_fp32(x)
        if x.dtype.primitive_bitwidth < 32:
            x = self.cast(x, tl.float32 if x.dtype.is_floating() else tl.int32)
        return x

    def max(self, x: Any, axis: Any, keep_dims: bool = False) -> tensor:
        x = self._widen_for_extremum(x)
        return self.reduction([x], axis, lambda a, b: [self.maximum(a[0], b[0])], keep_dims)[0]

    def min(self, x: Any, axis: Any, keep_dims: bool = False) -> tensor:
        x = self._widen_for_extremum(x)
        return self.reduction([x], axis, lambda a, b: [self.minimum(a[0], b[0])], keep_dims)[0]
