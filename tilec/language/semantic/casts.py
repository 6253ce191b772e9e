"""The casts rules of the semantic layer: type conversions: `x.to(ty)`, bitcasts and the
rounding of narrowing float casts.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any

from .. import core as tl
from ..core import _unwrap, block_type, dtype, tensor
from .common import SemanticState, _error

# Narrowings that fp_downcast_rounding="rtz" (round toward zero) applies to: those with a
# PTX `cvt.rz`, and fp32 -> fp8e5, which Triton also accepts (built on fp16's, see
# `_fp32_to_fp8e5_toward_zero`). PTX's fp8 conversions round to nearest only, so the other
# fp8 formats have none.
_RTZ_CASTS = {(tl.float32, tl.float16), (tl.float32, tl.bfloat16), (tl.float64, tl.float32),
              (tl.float32, tl.float8e5)}


class CastRules(SemanticState):
    """Conversions between types (`x.to(...)`, bitcasts, fp rounding)."""

    def cast(self, x: Any, dst: Any, bitcast: bool = False, fp_downcast_rounding: str | None = None) -> tensor:
        number, dst = _unwrap(x), _unwrap(dst)
        if isinstance(dst, dtype) and dst.is_fp8() and not bitcast and fp_downcast_rounding is None and \
                isinstance(number, (int, float)) and not isinstance(number, bool):
            # A number converted to fp8 is an fp8 constant (rounded as tl.full's are): no
            # conversion instruction, so any target takes it.
            return self.to_tensor(float(number), dst)
        x = self.to_tensor(x)
        if not isinstance(dst, dtype):
            raise _error(f"`to` expects a tl dtype, got {dst!r}")
        if dst.is_block():  # `x.to(block_ptr.type.element_ty)`: the element type, as in Triton
            dst = dst.scalar
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
            raise _error(f"fp_downcast_rounding='rtz' applies to float32 -> float16/bfloat16/float8e5 and "
                         f"float64 -> float32, not {src} -> {dst}")
        if fp_downcast_rounding == "rtz" and dst.is_fp8e5():
            return self._fp32_to_fp8e5_toward_zero(x)  # no fp8 instruction: any target
        hardware_fp8 = any(t.is_fp8e4nv() or t.is_fp8e5() for t in (src, dst))  # the others convert in software
        if hardware_fp8 and self.capability is not None and self.capability < 89:
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

    def _fp32_to_fp8e5_toward_zero(self, x: tensor) -> tensor:
        """fp32 -> fp8e5 rounded toward zero, the way Triton does it on NVIDIA GPUs.

        e5m2 is fp16 cut short: the same sign bit, the same five exponent bits and bias,
        and the two leading fraction bits. Dropping the low byte of an fp16 pattern
        therefore rounds its magnitude toward zero, and after fp32 -> fp16 toward zero
        (`cvt.rz`) the two roundings make one, since fp16 holds every e5m2 value. So
        finite values beyond 57344 become 57344 (fp16 gives 65504, whose high byte is
        0x7B), infinities stay infinite (0x7C00 -> 0x7C), and the interpreter, running
        the same ops, gives the same bits. A NaN becomes 0x7F: its payload might lie in
        the dropped byte alone, which would leave an infinity's pattern.
        """
        half = self.cast(x, tl.float16, fp_downcast_rounding="rtz")
        high_byte = self.cast(self.shr(self.cast(half, tl.uint16, bitcast=True), 8), tl.uint8)
        code = self.where(self.compare("ne", x, x), self.to_tensor(0x7F, tl.uint8), high_byte)
        return self.cast(code, tl.float8e5, bitcast=True)
