"""Conversions between fp8 formats and wider floats.

fp8 values live in registers and memory as their bytes (i8): LLVM has no fp8 types.

- fp8e4nv and fp8e5 (`f8E4M3FN`, `f8E5M2`) convert with PTX's instructions (sm_89 and
  newer): `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` (to nearest even, saturating) and
  `cvt.rn.f16x2.{e4m3,e5m2}x2` (exact). The instructions work on pairs; the value goes in
  the low half.
- fp8e4b15, fp8e4b8 and fp8e5b16 have no instructions: they are converted with integer
  arithmetic on any target, with the same rules (exact widening; narrowing to nearest
  even, saturating at the largest finite value, NaN to NaN). Their MLIR types are
  `f8E4M3B11FNUZ` (standing for fp8e4b15, whose bias is 15 rather than 11: only these
  rules read it), `f8E4M3FNUZ` and `f8E5M2FNUZ`. NaN signs are not kept: NaN becomes
  0x7F (fp8e4b15) or 0x80, and those become the positive quiet NaN. The frontend refuses
  the two fnuz formats (AMD's) when compiling, as Triton does for NVIDIA GPUs, so only
  hand-written IR brings them here.

fp32 -> fp8e5 toward zero (fp_downcast_rounding="rtz") is not a tile.fp_to_fp: the
semantic layer builds it from fp16's `cvt.rz` and integer operations (casts.py).

Values from fp64 are first rounded to fp32 *to odd* (`cvt.rz` and an odd last bit when
inexact), so that the one rounding to fp8 that follows is the correct one.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects._mlir import create_op, is_tensor
from ...dialects.tile import element_type
from .context import LoweringContext, LoweringError, is_fp8

_HARDWARE = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


@dataclass(frozen=True)
class SoftwareFormat:
    """An fp8 format converted with integer arithmetic: 1 sign bit, 7 - `mantissa` exponent
    bits and `mantissa` fraction bits; exponent 0 holds the subnormals."""
    mantissa: int
    bias: int
    max_code: int  # the largest finite magnitude's code
    fnuz: bool  # NaN is 0x80 and there is no negative zero; else NaN is 0x7F/0xFF


SOFTWARE_FORMATS = {
    "f8E4M3B11FNUZ": SoftwareFormat(mantissa=3, bias=15, max_code=0x7E, fnuz=False),  # fp8e4b15
    "f8E4M3FNUZ": SoftwareFormat(mantissa=3, bias=8, max_code=0x7F, fnuz=True),  # fp8e4b8
    "f8E5M2FNUZ": SoftwareFormat(mantissa=2, bias=16, max_code=0x7F, fnuz=True),  # fp8e5b16
}


def lower_fp8(ctx: LoweringContext, op: ir.Operation, per_element) -> None:
    """tile.fp_to_fp: an fp8 value to a wider float, or a wider float to fp8."""
    src_ty = element_type(op.operands[0].type)
    dst_ty = element_type(op.results[0].type)
    narrowing = is_fp8(dst_ty)
    if narrowing == is_fp8(src_ty):
        raise LoweringError(f"tile.fp_to_fp converts to or from fp8, not {src_ty} to {dst_ty}")
    fp8_ty = dst_ty if narrowing else src_ty
    software = SOFTWARE_FORMATS.get(str(fp8_ty))
    if software is None and not ctx.target.at_least(89):
        raise LoweringError(f"fp8 conversions need sm_89 or newer; the target is {ctx.target}")
    if narrowing:
        def narrow(operands):
            x = _to_f32(ctx, operands[0])
            if software is not None:
                return [_encode(ctx, software, x)]
            (pair,) = ctx.inline_asm(f"cvt.rn.satfinite.{_HARDWARE[str(dst_ty)]}x2.f32 $0, $1, $2;", "=h,f,f",
                                     [ctx.const(0.0, ctx.f32), x], [ctx.i16], side_effects=False)
            return [ctx.arith("trunci", pair, result_type=ctx.i8)]

        per_element(ctx, op, narrow)
        return
    if software is None and _widen_pairs(ctx, op):
        return

    def widen(operands):  # arith.extf: exact
        if software is not None:
            wide = _decode(ctx, software, operands[0])
        else:
            pair = ctx.arith("extui", operands[0], result_type=ctx.i16)
            (halves,) = ctx.inline_asm(f"cvt.rn.f16x2.{_HARDWARE[str(src_ty)]}x2 $0, $1;", "=r,h", [pair], [ctx.i32],
                                       side_effects=False)
            half = create_op("llvm.bitcast", [ir.F16Type.get()],
                             [ctx.arith("trunci", halves, result_type=ctx.i16)]).result
            if dst_ty == ir.F16Type.get():
                return [half]
            wide = ctx.arith("extf", half, result_type=ctx.f32)
        if dst_ty == ctx.f32:
            return [wide]
        # exact: fp16 and bf16 hold every value of these formats
        return [ctx.arith("extf" if isinstance(dst_ty, ir.F64Type) else "truncf", wide, result_type=dst_ty)]

    per_element(ctx, op, widen)


def _widen_pairs(ctx: LoweringContext, op: ir.Operation) -> bool:
    """e4m3 / e5m2 -> a wider float, two registers at a time: the bytes of registers 2i
    and 2i+1 go into one `cvt.rn.f16x2` (its 16-bit source holds both), as Triton does.
    Converting one element per instruction wasted half of each and took every byte apart
    first (a prmt and a cvt.u16 a byte): an fp8 dot operand widened in mma.sync's
    fragment registers (accelerate_fp8_mma), whose register pairs are adjacent bytes of
    one ldmatrix register, so cost three instructions an element. Returns False (nothing
    lowered) where the op is not a tensor with an even number of registers."""
    src, result = op.operands[0], op.results[0]
    if not is_tensor(result.type):
        return False
    n = ctx.num_registers(result)
    elements = ctx.elements(src)
    if n % 2 or len(elements) != n:
        return False
    src_ty, dst_ty = element_type(src.type), ctx.element_type(result.type)
    half = ir.F16Type.get()
    byte_pair, half_pair = ir.VectorType.get([2], ctx.i8), ir.VectorType.get([2], half)
    widened = []
    for lo, hi in zip(elements[0::2], elements[1::2]):
        vector = create_op("llvm.mlir.undef", [byte_pair]).result
        vector = create_op("llvm.insertelement", [byte_pair], [vector, lo, ctx.const(0)]).result
        vector = create_op("llvm.insertelement", [byte_pair], [vector, hi, ctx.const(1)]).result
        bits = create_op("llvm.bitcast", [ctx.i16], [vector]).result
        (halves,) = ctx.inline_asm(f"cvt.rn.f16x2.{_HARDWARE[str(src_ty)]}x2 $0, $1;", "=r,h", [bits], [ctx.i32],
                                   side_effects=False)
        pair = create_op("llvm.bitcast", [half_pair], [halves]).result
        for i in range(2):
            value = create_op("llvm.extractelement", [half], [pair, ctx.const(i)]).result
            if dst_ty != half:  # exact: f32, f64 and bf16 hold every f16 value of these formats
                value = ctx.arith("extf", value, result_type=ctx.f32)
                if dst_ty != ctx.f32:
                    value = ctx.arith("extf" if isinstance(dst_ty, ir.F64Type) else "truncf", value,
                                      result_type=dst_ty)
            widened.append(value)
    ctx.set(result, widened)
    return True


def _to_f32(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    """x as fp32: exact from fp16/bf16, rounded to odd from fp64."""
    if x.type == ctx.f32:
        return x
    if not isinstance(x.type, ir.F64Type):
        return ctx.arith("extf", x, result_type=ctx.f32)
    (toward_zero,) = ctx.inline_asm("cvt.rz.f32.f64 $0, $1;", "=f,d", [x], [ctx.f32], side_effects=False)
    back = ctx.arith("extf", toward_zero, result_type=x.type)
    inexact = ctx.arith("cmpf", back, x, result_type=ctx.i1, attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 13)})  # une
    bits = ctx.arith("bitcast", toward_zero, result_type=ctx.i32)
    odd = ctx.arith("select", inexact, ctx.arith("ori", bits, ctx.const(1)), bits, result_type=ctx.i32)
    return ctx.arith("bitcast", odd, result_type=ctx.f32)


def _decode(ctx: LoweringContext, fmt: SoftwareFormat, byte: ir.Value) -> ir.Value:
    """The fp8 bits `byte` (i8) as an exact fp32 value."""
    i32, m = ctx.i32, fmt.mantissa
    u = ctx.arith("extui", byte, result_type=i32)
    magnitude = ctx.arith("andi", u, ctx.const(0x7F))
    # Normal numbers: the exponent and fraction move up into fp32's fields, rebiased.
    normal = ctx.arith("addi", ctx.arith("shli", magnitude, ctx.const(23 - m)), ctx.const((127 - fmt.bias) << 23))
    # Subnormals (exponent 0): the fraction times 2**(1 - bias - m), exactly.
    subnormal = ctx.arith("mulf", ctx.arith("uitofp", magnitude, result_type=ctx.f32),
                          ctx.const(2.0 ** (1 - fmt.bias - m), ctx.f32))
    is_subnormal = ctx.arith("cmpi", magnitude, ctx.const(1 << m), result_type=ctx.i1,
                             attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult
    bits = ctx.arith("select", is_subnormal, ctx.arith("bitcast", subnormal, result_type=i32), normal, result_type=i32)
    sign = ctx.arith("shli", ctx.arith("andi", u, ctx.const(0x80)), ctx.const(24))
    bits = ctx.arith("ori", bits, sign)
    nan_code, nan_of = (0x80, u) if fmt.fnuz else (0x7F, magnitude)
    is_nan = _eq(ctx, nan_of, nan_code)
    bits = ctx.arith("select", is_nan, ctx.const(0x7FC00000), bits, result_type=i32)
    return ctx.arith("bitcast", bits, result_type=ctx.f32)


def _encode(ctx: LoweringContext, fmt: SoftwareFormat, x: ir.Value) -> ir.Value:
    """fp32 `x` as fp8 bits (i8): to nearest even, saturating; NaN to NaN."""
    i32, m = ctx.i32, fmt.mantissa
    drop = 23 - m
    bits = ctx.arith("bitcast", x, result_type=i32)
    sign = ctx.arith("andi", ctx.arith("shrui", bits, ctx.const(24)), ctx.const(0x80))
    magnitude = ctx.arith("andi", bits, ctx.const(0x7FFFFFFF))
    # Normal range: round the fp32 pattern to nearest even at the fp8 spacing, then rebias.
    # (A carry out of the fraction moves to the next exponent, as it should.)
    lsb = ctx.arith("andi", ctx.arith("shrui", magnitude, ctx.const(drop)), ctx.const(1))
    rounded = ctx.arith("addi", ctx.arith("addi", magnitude, ctx.const((1 << (drop - 1)) - 1)), lsb)
    normal = ctx.arith("subi", ctx.arith("shrui", rounded, ctx.const(drop)), ctx.const((127 - fmt.bias) << m))
    # Below the smallest normal: the count of subnormal steps, rounded to nearest even
    # (2**m is the smallest normal's code, which a carry reaches correctly).
    absolute = ctx.arith("bitcast", magnitude, result_type=ctx.f32)
    steps = ctx.arith("mulf", absolute, ctx.const(2.0 ** (fmt.bias - 1 + m), ctx.f32))
    (subnormal,) = ctx.inline_asm("cvt.rni.u32.f32 $0, $1;", "=r,f", [steps], [i32], side_effects=False)
    is_subnormal = ctx.arith("cmpi", magnitude, ctx.const((128 - fmt.bias) << 23), result_type=ctx.i1,
                             attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult
    code = ctx.arith("select", is_subnormal, subnormal, normal, result_type=i32)
    code = ctx.arith("minui", code, ctx.const(fmt.max_code))  # saturate (infinities too)
    if fmt.fnuz:  # no negative zero
        signed = ctx.arith("select", _eq(ctx, code, 0), code, ctx.arith("ori", code, sign), result_type=i32)
    else:
        signed = ctx.arith("ori", code, sign)
    nan = ctx.const(0x80 if fmt.fnuz else 0x7F)  # whatever the NaN's sign
    is_nan = ctx.arith("cmpi", magnitude, ctx.const(0x7F800000), result_type=ctx.i1,
                       attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 8)})  # ugt
    result = ctx.arith("select", is_nan, nan, signed, result_type=i32)
    return ctx.arith("trunci", result, result_type=ctx.i8)


def _eq(ctx: LoweringContext, x: ir.Value, value: int) -> ir.Value:
    return ctx.arith("cmpi", x, ctx.const(value), result_type=ctx.i1, attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 0)})
