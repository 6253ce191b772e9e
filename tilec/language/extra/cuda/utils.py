"""Hardware facts and NVIDIA-specific elementwise helpers of `tl.extra.cuda`, with the
names and parameters of Triton's `triton.language.extra.cuda`.

    smid()                          the SM running this program (int32, read at run time)
    globaltimer()                   the GPU's nanosecond clock (int64, read at run time)
    num_warps(), num_threads()      the launch's warps, and warps * 32 (constexprs)
    exp2_ftz(x)                     2**x, fp32, subnormals flushed to zero (ex2.approx.ftz.f32)
    round_f32_to_tf32(x, rounding)  fp32 rounded to tf32's 10 fraction bits ("rn" or "rna")
    min_nan_xorsign_abs_f32(a, b)   min(|a|, |b|) with the sign of a*b, NaN if either is
    max_nan_xorsign_abs_f32(a, b)   max(|a|, |b|), likewise
    f32_to_e2m1x2(hi, lo)           two fp32 values as fp4 (e2m1) codes in one byte, hi on top
    convert_custom_float8_sm80/_sm70(arg, dst_ty, fp_downcast_rounding=None)
                                    fp8e4b15 <-> fp16/fp32 by Triton's bit recipe

Compiled, the elementwise helpers are the NVVM intrinsics Triton calls (on the GPUs that
have them; others are refused at compile time); interpreted, NumPy versions of the same
rounding (tilec.interpreter.nvvm_numpy).
"""
from __future__ import annotations

import tilec.language as tl  # (still loading when this module is imported; read only inside kernels)

from ...core import TilecSemanticError, _unwrap, builtin, constexpr, current_semantic, library_function


def _sem():
    return current_semantic()


@builtin
def smid():
    """The index of the streaming multiprocessor running this program (%smid), int32."""
    return _sem().special_register("smid")


@builtin
def globaltimer():
    """The GPU's global nanosecond timer (%globaltimer), int64; read anew at each call."""
    return _sem().special_register("globaltimer")


@builtin
def num_warps():
    """The number of warps of each program of the launch (its `num_warps`), a constexpr."""
    return constexpr(_sem().num_warps)


@builtin
def num_threads():
    """The number of threads of each program of the launch (num_warps * 32), a constexpr."""
    return constexpr(_sem().num_warps * 32)


@builtin
def exp2_ftz(x):
    """2**x for fp32 `x` by the approximate instruction, subnormal inputs and results
    flushed to zero (ex2.approx.ftz.f32)."""
    return _sem().nvvm_elementwise("exp2_ftz", "ex2.approx.ftz.f32", [x],
                                   {(tl.float32,): ("llvm.nvvm.ex2.approx.ftz.f32", tl.float32)})


@builtin
def round_f32_to_tf32(x, rounding):
    """fp32 `x` rounded to tf32 (its low 13 bits cleared): to nearest even ("rn",
    cvt.rn.tf32.f32, sm_90+) or to nearest with ties away from zero ("rna", sm_80+)."""
    rounding = _unwrap(rounding)
    if rounding not in ("rn", "rna"):
        raise TilecSemanticError(f'round_f32_to_tf32\'s rounding must be "rn" or "rna", got {rounding!r}')
    bits = _sem().nvvm_elementwise("round_f32_to_tf32", f"cvt.{rounding}.tf32.f32", [x],
                                   {(tl.float32,): (f"llvm.nvvm.f2tf32.{rounding}", tl.int32)},
                                   capability=90 if rounding == "rn" else 80)
    return _sem().cast(bits, tl.float32, bitcast=True)


@builtin
def min_nan_xorsign_abs_f32(a, b):
    """min(|a|, |b|) with the sign bit sign(a) XOR sign(b); NaN when either is NaN
    (min.NaN.xorsign.abs.f32, sm_86+)."""
    return _sem().nvvm_elementwise("min_nan_xorsign_abs_f32", "min.NaN.xorsign.abs.f32", [a, b],
                                   {(tl.float32, tl.float32): ("llvm.nvvm.fmin.nan.xorsign.abs.f", tl.float32)},
                                   capability=86)


@builtin
def max_nan_xorsign_abs_f32(a, b):
    """max(|a|, |b|) with the sign bit sign(a) XOR sign(b); NaN when either is NaN
    (max.NaN.xorsign.abs.f32, sm_86+)."""
    return _sem().nvvm_elementwise("max_nan_xorsign_abs_f32", "max.NaN.xorsign.abs.f32", [a, b],
                                   {(tl.float32, tl.float32): ("llvm.nvvm.fmax.nan.xorsign.abs.f", tl.float32)},
                                   capability=86)


# The GPUs with cvt.rn.satfinite.e2m1x2.f32 (arch-specific: the 'a' chips), as LLVM 22 sees them.
_E2M1_CHIPS = ("sm_100a", "sm_103a", "sm_110a", "sm_120a", "sm_121a")


@builtin
def f32_to_e2m1x2(hi, lo):
    """Two fp32 values rounded to nearest even and saturated to fp4 e2m1 (largest 6.0),
    packed as one byte in a uint16: `hi`'s code in bits 4-7, `lo`'s in bits 0-3
    (cvt.rn.satfinite.e2m1x2.f32, sm_100a and other 'a' Blackwell chips)."""
    return _sem().nvvm_elementwise("f32_to_e2m1x2", "cvt.rn.satfinite.e2m1x2.f32", [hi, lo],
                                   {(tl.float32, tl.float32): ("llvm.nvvm.ff.to.e2m1x2.rn.satfinite", tl.uint16)},
                                   chips=_E2M1_CHIPS)


# ----- fp8e4b15 <-> fp16 by Triton's recipe (what its inline PTX does, here on the bits).
# fp8e4b15 has fp16's exponent bias, so widening places the 7 magnitude bits under fp16's
# sign: bits << 7. Narrowing clamps |x| to 1.75 (0x3F00; NaN and infinities too), shifts
# left by one, adds half of the dropped byte (ties away from zero) and keeps the high byte
# with the sign. Unlike `.to(tl.float8e4b15)`, codes 0x7F/0xFF widen to +-1.875 (not NaN).

@library_function
def _fp8e4b15_to_fp16(x):
    bits = x.to(tl.uint8, bitcast=True).to(tl.uint16)
    return (((bits & 0x80) << 8) | ((bits & 0x7F) << 7)).to(tl.float16, bitcast=True)


@library_function
def _fp16_to_fp8e4b15(x):
    bits = x.to(tl.uint16, bitcast=True)
    magnitude = bits & 0x7FFF
    magnitude = tl.where(magnitude < 0x3F00, magnitude, 0x3F00)
    rounded = magnitude * 2 + 0x80
    byte = ((rounded >> 8) | ((bits >> 8) & 0x80)).to(tl.uint8)
    return byte.to(tl.float8e4b15, bitcast=True)


@library_function
def _convert_custom_float8(arg, dst_ty: tl.constexpr):
    if arg.dtype == tl.float8e4b15:
        widened = _fp8e4b15_to_fp16(arg)
        if dst_ty == tl.float32:
            return widened.to(tl.float32)
        return widened
    else:
        tl.static_assert(arg.dtype == tl.float16 or arg.dtype == tl.float32,
                         "convert_custom_float8 converts fp8e4b15 to fp16/fp32, or fp16/fp32 to fp8e4b15")
        if arg.dtype == tl.float32:
            return _fp16_to_fp8e4b15(arg.to(tl.float16, fp_downcast_rounding="rtz"))
        return _fp16_to_fp8e4b15(arg)


@library_function
def convert_custom_float8_sm80(arg, dst_ty: tl.constexpr, fp_downcast_rounding: tl.constexpr = None):
    """fp8e4b15 `arg` widened to fp16 (or fp32 when `dst_ty` is tl.float32), or an fp16 or
    fp32 `arg` narrowed to fp8e4b15 (fp32 first toward zero to fp16), as Triton's inline
    PTX does; `fp_downcast_rounding` is accepted and ignored, as there."""
    return _convert_custom_float8(arg, dst_ty)


@library_function
def convert_custom_float8_sm70(arg, dst_ty: tl.constexpr, fp_downcast_rounding: tl.constexpr = None):
    """The same conversion as convert_custom_float8_sm80 (Triton's version for GPUs
    without min.f16x2 computes the same values)."""
    return _convert_custom_float8(arg, dst_ty)
