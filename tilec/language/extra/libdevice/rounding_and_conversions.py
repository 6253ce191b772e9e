"""libdevice's arithmetic with explicit rounding modes, and its conversions and bit casts.

Part of `tilec.language.extra.libdevice` (see __init__.py for how the functions dispatch).
"""
from __future__ import annotations

from ...core import builtin
from ...core import float32 as fp32
from ...core import float64 as fp64
from ...core import int32 as i32
from ...core import int64 as i64
from ...core import uint32 as u32
from ...core import uint64 as u64
from .dispatch import _call


# ----------------------------------------------------------------------------- explicit rounding modes


@builtin
def add_rn(arg0, arg1):
    """x + y, rounded to nearest even."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fadd_rn", fp32), (fp64, fp64): ("__nv_dadd_rn", fp64)})


@builtin
def add_rz(arg0, arg1):
    """x + y, rounded toward zero."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fadd_rz", fp32), (fp64, fp64): ("__nv_dadd_rz", fp64)})


@builtin
def add_rd(arg0, arg1):
    """x + y, rounded down (toward -inf)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fadd_rd", fp32), (fp64, fp64): ("__nv_dadd_rd", fp64)})


@builtin
def add_ru(arg0, arg1):
    """x + y, rounded up (toward +inf)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fadd_ru", fp32), (fp64, fp64): ("__nv_dadd_ru", fp64)})


@builtin
def sub_rn(arg0, arg1):
    """x - y, rounded to nearest even."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fsub_rn", fp32), (fp64, fp64): ("__nv_dsub_rn", fp64)})


@builtin
def sub_rz(arg0, arg1):
    """x - y, rounded toward zero."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fsub_rz", fp32), (fp64, fp64): ("__nv_dsub_rz", fp64)})


@builtin
def sub_rd(arg0, arg1):
    """x - y, rounded down (toward -inf)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fsub_rd", fp32), (fp64, fp64): ("__nv_dsub_rd", fp64)})


@builtin
def sub_ru(arg0, arg1):
    """x - y, rounded up (toward +inf)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fsub_ru", fp32), (fp64, fp64): ("__nv_dsub_ru", fp64)})


@builtin
def mul_rn(arg0, arg1):
    """x * y, rounded to nearest even."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fmul_rn", fp32), (fp64, fp64): ("__nv_dmul_rn", fp64)})


@builtin
def mul_rz(arg0, arg1):
    """x * y, rounded toward zero."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fmul_rz", fp32), (fp64, fp64): ("__nv_dmul_rz", fp64)})


@builtin
def mul_rd(arg0, arg1):
    """x * y, rounded down (toward -inf)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fmul_rd", fp32), (fp64, fp64): ("__nv_dmul_rd", fp64)})


@builtin
def mul_ru(arg0, arg1):
    """x * y, rounded up (toward +inf)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fmul_ru", fp32), (fp64, fp64): ("__nv_dmul_ru", fp64)})


@builtin
def div_rn(arg0, arg1):
    """x / y, rounded to nearest even."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fdiv_rn", fp32), (fp64, fp64): ("__nv_ddiv_rn", fp64)})


@builtin
def div_rz(arg0, arg1):
    """x / y, rounded toward zero."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fdiv_rz", fp32), (fp64, fp64): ("__nv_ddiv_rz", fp64)})


@builtin
def div_rd(arg0, arg1):
    """x / y, rounded down (toward -inf)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fdiv_rd", fp32), (fp64, fp64): ("__nv_ddiv_rd", fp64)})


@builtin
def div_ru(arg0, arg1):
    """x / y, rounded up (toward +inf)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fdiv_ru", fp32), (fp64, fp64): ("__nv_ddiv_ru", fp64)})


@builtin
def rcp_rn(arg0):
    """1 / x, rounded to nearest even."""
    return _call([arg0], {(fp32,): ("__nv_frcp_rn", fp32), (fp64,): ("__nv_drcp_rn", fp64)})


@builtin
def rcp_rz(arg0):
    """1 / x, rounded toward zero."""
    return _call([arg0], {(fp32,): ("__nv_frcp_rz", fp32), (fp64,): ("__nv_drcp_rz", fp64)})


@builtin
def rcp_rd(arg0):
    """1 / x, rounded down (toward -inf)."""
    return _call([arg0], {(fp32,): ("__nv_frcp_rd", fp32), (fp64,): ("__nv_drcp_rd", fp64)})


@builtin
def rcp_ru(arg0):
    """1 / x, rounded up (toward +inf)."""
    return _call([arg0], {(fp32,): ("__nv_frcp_ru", fp32), (fp64,): ("__nv_drcp_ru", fp64)})


@builtin
def sqrt_rn(arg0):
    """sqrt(x), rounded to nearest even."""
    return _call([arg0], {(fp32,): ("__nv_fsqrt_rn", fp32), (fp64,): ("__nv_dsqrt_rn", fp64)})


@builtin
def sqrt_rz(arg0):
    """sqrt(x), rounded toward zero."""
    return _call([arg0], {(fp32,): ("__nv_fsqrt_rz", fp32), (fp64,): ("__nv_dsqrt_rz", fp64)})


@builtin
def sqrt_rd(arg0):
    """sqrt(x), rounded down (toward -inf)."""
    return _call([arg0], {(fp32,): ("__nv_fsqrt_rd", fp32), (fp64,): ("__nv_dsqrt_rd", fp64)})


@builtin
def sqrt_ru(arg0):
    """sqrt(x), rounded up (toward +inf)."""
    return _call([arg0], {(fp32,): ("__nv_fsqrt_ru", fp32), (fp64,): ("__nv_dsqrt_ru", fp64)})


@builtin
def fma_rn(arg0, arg1, arg2):
    """x * y + z (one rounding), rounded to nearest even."""
    return _call([arg0, arg1, arg2], {
        (fp32, fp32, fp32): ("__nv_fmaf_rn", fp32), (fp64, fp64, fp64): ("__nv_fma_rn", fp64),
    })


@builtin
def fma_rz(arg0, arg1, arg2):
    """x * y + z (one rounding), rounded toward zero."""
    return _call([arg0, arg1, arg2], {
        (fp32, fp32, fp32): ("__nv_fmaf_rz", fp32), (fp64, fp64, fp64): ("__nv_fma_rz", fp64),
    })


@builtin
def fma_rd(arg0, arg1, arg2):
    """x * y + z (one rounding), rounded down (toward -inf)."""
    return _call([arg0, arg1, arg2], {
        (fp32, fp32, fp32): ("__nv_fmaf_rd", fp32), (fp64, fp64, fp64): ("__nv_fma_rd", fp64),
    })


@builtin
def fma_ru(arg0, arg1, arg2):
    """x * y + z (one rounding), rounded up (toward +inf)."""
    return _call([arg0, arg1, arg2], {
        (fp32, fp32, fp32): ("__nv_fmaf_ru", fp32), (fp64, fp64, fp64): ("__nv_fma_ru", fp64),
    })


@builtin
def rsqrt_rn(arg0):
    """1 / sqrt(x), rounded to nearest even."""
    return _call([arg0], {(fp32,): ("__nv_frsqrt_rn", fp32)})


@builtin
def rcp64h(arg0):
    """Approximate 1 / x from the high 32 bits of x (about 20 bits of accuracy)."""
    return _call([arg0], {(fp64,): ("__nv_rcp64h", fp64)})


# ----------------------------------------------------------------------------- conversions and bit casts


@builtin
def double2float_rn(arg0):
    """x converted to fp32, rounded to nearest even."""
    return _call([arg0], {(fp64,): ("__nv_double2float_rn", fp32)})


@builtin
def double2float_rz(arg0):
    """x converted to fp32, rounded toward zero."""
    return _call([arg0], {(fp64,): ("__nv_double2float_rz", fp32)})


@builtin
def double2float_rd(arg0):
    """x converted to fp32, rounded down (toward -inf)."""
    return _call([arg0], {(fp64,): ("__nv_double2float_rd", fp32)})


@builtin
def double2float_ru(arg0):
    """x converted to fp32, rounded up (toward +inf)."""
    return _call([arg0], {(fp64,): ("__nv_double2float_ru", fp32)})


@builtin
def double2int_rn(arg0):
    """x rounded to nearest even to int32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2int_rn", i32)})


@builtin
def double2int_rz(arg0):
    """x rounded toward zero to int32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2int_rz", i32)})


@builtin
def double2int_rd(arg0):
    """x rounded down (toward -inf) to int32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2int_rd", i32)})


@builtin
def double2int_ru(arg0):
    """x rounded up (toward +inf) to int32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2int_ru", i32)})


@builtin
def double2uint_rn(arg0):
    """x rounded to nearest even to uint32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2uint_rn", u32)})


@builtin
def double2uint_rz(arg0):
    """x rounded toward zero to uint32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2uint_rz", u32)})


@builtin
def double2uint_rd(arg0):
    """x rounded down (toward -inf) to uint32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2uint_rd", u32)})


@builtin
def double2uint_ru(arg0):
    """x rounded up (toward +inf) to uint32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2uint_ru", u32)})


@builtin
def double2ll_rn(arg0):
    """x rounded to nearest even to int64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2ll_rn", i64)})


@builtin
def double2ll_rz(arg0):
    """x rounded toward zero to int64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2ll_rz", i64)})


@builtin
def double2ll_rd(arg0):
    """x rounded down (toward -inf) to int64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2ll_rd", i64)})


@builtin
def double2ll_ru(arg0):
    """x rounded up (toward +inf) to int64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2ll_ru", i64)})


@builtin
def double2ull_rn(arg0):
    """x rounded to nearest even to uint64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2ull_rn", u64)})


@builtin
def double2ull_rz(arg0):
    """x rounded toward zero to uint64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2ull_rz", u64)})


@builtin
def double2ull_rd(arg0):
    """x rounded down (toward -inf) to uint64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2ull_rd", u64)})


@builtin
def double2ull_ru(arg0):
    """x rounded up (toward +inf) to uint64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp64,): ("__nv_double2ull_ru", u64)})


@builtin
def float2int_rn(arg0):
    """x rounded to nearest even to int32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2int_rn", i32)})


@builtin
def float2int_rz(arg0):
    """x rounded toward zero to int32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2int_rz", i32)})


@builtin
def float2int_rd(arg0):
    """x rounded down (toward -inf) to int32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2int_rd", i32)})


@builtin
def float2int_ru(arg0):
    """x rounded up (toward +inf) to int32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2int_ru", i32)})


@builtin
def float2uint_rn(arg0):
    """x rounded to nearest even to uint32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2uint_rn", u32)})


@builtin
def float2uint_rz(arg0):
    """x rounded toward zero to uint32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2uint_rz", u32)})


@builtin
def float2uint_rd(arg0):
    """x rounded down (toward -inf) to uint32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2uint_rd", u32)})


@builtin
def float2uint_ru(arg0):
    """x rounded up (toward +inf) to uint32 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2uint_ru", u32)})


@builtin
def float2ll_rn(arg0):
    """x rounded to nearest even to int64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2ll_rn", i64)})


@builtin
def float2ll_rz(arg0):
    """x rounded toward zero to int64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2ll_rz", i64)})


@builtin
def float2ll_rd(arg0):
    """x rounded down (toward -inf) to int64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2ll_rd", i64)})


@builtin
def float2ll_ru(arg0):
    """x rounded up (toward +inf) to int64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2ll_ru", i64)})


@builtin
def float2ull_rn(arg0):
    """x rounded to nearest even to uint64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2ull_rn", u64)})


@builtin
def float2ull_rz(arg0):
    """x rounded toward zero to uint64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2ull_rz", u64)})


@builtin
def float2ull_rd(arg0):
    """x rounded down (toward -inf) to uint64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2ull_rd", u64)})


@builtin
def float2ull_ru(arg0):
    """x rounded up (toward +inf) to uint64 (saturating; NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_float2ull_ru", u64)})


@builtin
def int2double_rn(arg0):
    """x converted to fp64, rounded to nearest even."""
    return _call([arg0], {(i32,): ("__nv_int2double_rn", fp64)})


@builtin
def uint2double_rn(arg0):
    """x converted to fp64, rounded to nearest even."""
    return _call([arg0], {(u32,): ("__nv_uint2double_rn", fp64)})


@builtin
def int2float_rn(arg0):
    """x converted to fp32, rounded to nearest even."""
    return _call([arg0], {(i32,): ("__nv_int2float_rn", fp32)})


@builtin
def int2float_rz(arg0):
    """x converted to fp32, rounded toward zero."""
    return _call([arg0], {(i32,): ("__nv_int2float_rz", fp32)})


@builtin
def int2float_rd(arg0):
    """x converted to fp32, rounded down (toward -inf)."""
    return _call([arg0], {(i32,): ("__nv_int2float_rd", fp32)})


@builtin
def int2float_ru(arg0):
    """x converted to fp32, rounded up (toward +inf)."""
    return _call([arg0], {(i32,): ("__nv_int2float_ru", fp32)})


@builtin
def uint2float_rn(arg0):
    """x converted to fp32, rounded to nearest even."""
    return _call([arg0], {(u32,): ("__nv_uint2float_rn", fp32)})


@builtin
def uint2float_rz(arg0):
    """x converted to fp32, rounded toward zero."""
    return _call([arg0], {(u32,): ("__nv_uint2float_rz", fp32)})


@builtin
def uint2float_rd(arg0):
    """x converted to fp32, rounded down (toward -inf)."""
    return _call([arg0], {(u32,): ("__nv_uint2float_rd", fp32)})


@builtin
def uint2float_ru(arg0):
    """x converted to fp32, rounded up (toward +inf)."""
    return _call([arg0], {(u32,): ("__nv_uint2float_ru", fp32)})


@builtin
def ll2float_rn(arg0):
    """x converted to fp32, rounded to nearest even."""
    return _call([arg0], {(i64,): ("__nv_ll2float_rn", fp32)})


@builtin
def ll2float_rz(arg0):
    """x converted to fp32, rounded toward zero."""
    return _call([arg0], {(i64,): ("__nv_ll2float_rz", fp32)})


@builtin
def ll2float_rd(arg0):
    """x converted to fp32, rounded down (toward -inf)."""
    return _call([arg0], {(i64,): ("__nv_ll2float_rd", fp32)})


@builtin
def ll2float_ru(arg0):
    """x converted to fp32, rounded up (toward +inf)."""
    return _call([arg0], {(i64,): ("__nv_ll2float_ru", fp32)})


@builtin
def ull2float_rn(arg0):
    """x converted to fp32, rounded to nearest even."""
    return _call([arg0], {(u64,): ("__nv_ull2float_rn", fp32)})


@builtin
def ull2float_rz(arg0):
    """x converted to fp32, rounded toward zero."""
    return _call([arg0], {(u64,): ("__nv_ull2float_rz", fp32)})


@builtin
def ull2float_rd(arg0):
    """x converted to fp32, rounded down (toward -inf)."""
    return _call([arg0], {(u64,): ("__nv_ull2float_rd", fp32)})


@builtin
def ull2float_ru(arg0):
    """x converted to fp32, rounded up (toward +inf)."""
    return _call([arg0], {(u64,): ("__nv_ull2float_ru", fp32)})


@builtin
def ll2double_rn(arg0):
    """x converted to fp64, rounded to nearest even."""
    return _call([arg0], {(i64,): ("__nv_ll2double_rn", fp64)})


@builtin
def ll2double_rz(arg0):
    """x converted to fp64, rounded toward zero."""
    return _call([arg0], {(i64,): ("__nv_ll2double_rz", fp64)})


@builtin
def ll2double_rd(arg0):
    """x converted to fp64, rounded down (toward -inf)."""
    return _call([arg0], {(i64,): ("__nv_ll2double_rd", fp64)})


@builtin
def ll2double_ru(arg0):
    """x converted to fp64, rounded up (toward +inf)."""
    return _call([arg0], {(i64,): ("__nv_ll2double_ru", fp64)})


@builtin
def ull2double_rn(arg0):
    """x converted to fp64, rounded to nearest even."""
    return _call([arg0], {(u64,): ("__nv_ull2double_rn", fp64)})


@builtin
def ull2double_rz(arg0):
    """x converted to fp64, rounded toward zero."""
    return _call([arg0], {(u64,): ("__nv_ull2double_rz", fp64)})


@builtin
def ull2double_rd(arg0):
    """x converted to fp64, rounded down (toward -inf)."""
    return _call([arg0], {(u64,): ("__nv_ull2double_rd", fp64)})


@builtin
def ull2double_ru(arg0):
    """x converted to fp64, rounded up (toward +inf)."""
    return _call([arg0], {(u64,): ("__nv_ull2double_ru", fp64)})


@builtin
def hiloint2double(arg0, arg1):
    """The fp64 whose high 32 bits are hi and low 32 bits are lo: hiloint2double(hi, lo)."""
    return _call([arg0, arg1], {(i32, i32): ("__nv_hiloint2double", fp64)})


@builtin
def double2hiint(arg0):
    """The high 32 bits of the fp64 x."""
    return _call([arg0], {(fp64,): ("__nv_double2hiint", i32)})


@builtin
def double2loint(arg0):
    """The low 32 bits of the fp64 x."""
    return _call([arg0], {(fp64,): ("__nv_double2loint", i32)})


@builtin
def int_as_float(arg0):
    """The bits of the int32 x as an fp32."""
    return _call([arg0], {(i32,): ("__nv_int_as_float", fp32)})


@builtin
def float_as_int(arg0):
    """The bits of the fp32 x as an int32."""
    return _call([arg0], {(fp32,): ("__nv_float_as_int", i32)})


@builtin
def uint_as_float(arg0):
    """The bits of the uint32 x as an fp32."""
    return _call([arg0], {(u32,): ("__nv_uint_as_float", fp32)})


@builtin
def float_as_uint(arg0):
    """The bits of the fp32 x as a uint32."""
    return _call([arg0], {(fp32,): ("__nv_float_as_uint", u32)})


@builtin
def longlong_as_double(arg0):
    """The bits of the int64 x as an fp64."""
    return _call([arg0], {(i64,): ("__nv_longlong_as_double", fp64)})


@builtin
def double_as_longlong(arg0):
    """The bits of the fp64 x as an int64."""
    return _call([arg0], {(fp64,): ("__nv_double_as_longlong", i64)})


__all__ = sorted(name for name, value in globals().items()
                 if not name.startswith("_") and getattr(value, "__tilec_builtin__", False))
