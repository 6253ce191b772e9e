"""The math rules of the semantic layer: math functions, fma, division with IEEE rounding,
inline assembly and libdevice calls.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import core as tl
from ..core import _unwrap, block_type, tensor
from ..core import dtype as dtype_class
from .common import SemanticState, _error


# The float types Triton's math functions take (the lists of its `_check_dtype`): it
# refuses fp16 and bf16, which GPUs have no instructions for, so that the user converts
# explicitly. tilec takes fp64 for sqrt_rn as well. tan and trunc are tilec's own and
# take every float type (16-bit ones computed in fp32).
_TRITON_MATH_DTYPES = {
    **{op: ("fp32", "fp64") for op in ("exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "rsqrt", "erf",
                                       "floor", "ceil")},
    "sqrt_rn": ("fp32",),
}


class MathRules(SemanticState):
    """Math functions, inline assembly and libdevice calls."""

    def math_function(self, op: str, x: Any) -> tensor:
        """`tl.exp(x)` and the other math functions as a kernel calls them: the operand
        types of Triton's functions (16-bit floats refused), then `math_unary`."""
        x = self.to_tensor(x)
        triton_dtypes = _TRITON_MATH_DTYPES.get(op)
        if triton_dtypes and x.dtype in (tl.float16, tl.bfloat16):
            names = " or ".join(triton_dtypes + (("fp64",) if op == "sqrt_rn" else ()))
            raise _error(f"{op} takes {names} values, not {x.dtype}; convert with .to(tl.float32) first "
                         f"(Expected dtype {list(triton_dtypes)} but got {x.dtype})")
        return self.math_unary(op, x)

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

    def fdiv(self, x: Any, y: Any, ieee_rounding: bool = False, approx: bool = False) -> tensor:
        """x / y, promoted as `/` (fp16/bf16 divide in fp32): the hardware's full-range
        division for fp32 by default (`div.full.f32`, as `/`), IEEE's with `ieee_rounding`
        (`div.rn`), the fast approximation with `approx` (`div.approx.f32`, fp32 only)."""
        x, y = self._binary_operands(x, y, div_or_mod=True)
        if not x.dtype.is_floating():
            raise _error(f"fdiv needs floating-point operands, got {x.dtype}")
        if approx:
            if ieee_rounding:
                raise _error("fdiv cannot be both approximate and IEEE-rounded: pass approx=True or "
                             "ieee_rounding=True, not both")
            if x.dtype != tl.float32:
                raise _error(f"fdiv with approx=True divides fp32 values (div.approx.f32), got {x.dtype}")
            return self._emit_binary("divf_approx", x, y)
        if ieee_rounding and x.dtype.primitive_bitwidth >= 32:
            return self._emit_binary("divf_rn", x, y)
        return self._emit_binary("divf", x, y)

    def clamp(self, x: Any, low: Any, high: Any, propagate_nan: bool = False) -> tensor:
        """minimum(maximum(x, low), high), promoted as they are: floats (NaN handled by
        `propagate_nan`) and, as since Triton 3.9, integers (compared as signed or unsigned
        by their type; `propagate_nan` means nothing for them)."""
        x = self.to_tensor(x)
        if not (x.dtype.is_floating() or x.dtype.is_int()) or x.dtype.is_bool():
            raise _error(f"clamp needs a number (a float or an integer), got {x.dtype}")
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
        if x.dtype.is_fp8():  # the sign bit cleared (an fnuz NaN, 0x80, stays NaN), as in Triton
            bits = self.cast(x, tl.uint8, bitcast=True)
            cleared = self.and_(bits, 0x7F)
            if x.dtype.is_fp8e4b8() or x.dtype.is_fp8e5b16():
                cleared = self.where(self.compare("eq", bits, 0x80), bits, cleared)
            return self.cast(cleared, x.dtype, bitcast=True)
        self._check_arithmetic_type(x.dtype, "abs")
        if x.dtype.is_floating():
            return tensor(self.builder.unary("absf", x.handle, x.type), x.type)
        if x.dtype.is_int_unsigned():
            return x
        return tensor(self.builder.unary("absi", x.handle, x.type), x.type)
