"""NVIDIA's libdevice math library, with the functions of Triton's
`triton.language.extra.libdevice` (CUDA):

    from tilec.language.extra import libdevice

    y = libdevice.erfinv(x)             # fp32 -> __nv_erfinvf, fp64 -> __nv_erfinv
    z = libdevice.pow(x, 3)             # (fp32, int32) -> __nv_powif
    n = libdevice.popc(bits)            # int32 -> __nv_popc, int64 -> __nv_popcll

Dispatch. Each function takes positional arguments (`arg0`, `arg1`, ... as in Triton; the
docstrings call them x, y, z, w) and hands `tl.extern_elementwise` a table from tuples of
argument dtypes to (libdevice symbol, result dtype), e.g. for `sin`

    {(fp32,): ("__nv_sinf", fp32), (fp64,): ("__nv_sin", fp64)}

The arguments broadcast together; when their dtypes have no entry they are promoted to a
common type and looked up again, so `pow(x, 2.0)` finds (fp32, fp32) and `atan2(x, 1)` works.
Other types (fp16, bf16, int8, ...) must be converted first, as in Triton. Compiled, every
element becomes a call of the symbol, linked from libdevice.10.bc; in the interpreter,
`tilec.interpreter.libdevice_numpy.NUMPY_IMPLEMENTATIONS` maps each symbol to a NumPy
function with the same semantics (this module only declares the functions).

Every entry was checked against the declarations in libdevice.10.bc: each symbol exists and
takes and returns the types listed (int32 and uint32 both pass as i32, int64 and uint64 as
i64). Beyond Triton's list: the unsigned variants of clz, popc, ffs, brev and byte_perm, and
fabs, fmin, fmax, min, max, umulhi, mul64hi, umul64hi, umul24, uhadd, urhadd, usad and
fast_tanhf. Unlike Triton, unsigned results are typed unsigned: float2uint_*, double2uint_*
and float_as_uint return uint32, float2ull_* and double2ull_* uint64 (Triton says int32 and
int64 for the same bits); isnan and isinf return libdevice's int32 1 or 0, like signbit,
finitef and isfinited (Triton converts those two to int1; both work as tl.where conditions).
Not offered: the libdevice functions that write through pointers (frexp, modf, remquo,
sincos, sincospi, nan, norm, rnorm), the fp16 helpers float2half_rn and half2float, and
fmaf_ieee_* (the same as fma_r* without flushing subnormals).
"""
from __future__ import annotations

from .. import builtins as _tl
from ..core import builtin
from ..core import float32 as fp32
from ..core import float64 as fp64
from ..core import int32 as i32
from ..core import int64 as i64
from ..core import uint32 as u32
from ..core import uint64 as u64

# tl.extern_elementwise's library arguments: the backend always links its own libdevice
# (tilec.backend.toolkit.libdevice_path()), so the path stays empty, as in Triton.
_LIB_NAME, _LIB_PATH = "libdevice", ""


def _call(args: list, table: dict):
    return _tl.extern_elementwise(_LIB_NAME, _LIB_PATH, args, table, is_pure=True)


# ----------------------------------------------------------------------------- integer functions


@builtin
def clz(arg0):
    """The number of leading zero bits (counting from the most significant bit)."""
    return _call([arg0], {
        (i32,): ("__nv_clz", i32), (u32,): ("__nv_clz", i32), (i64,): ("__nv_clzll", i32),
        (u64,): ("__nv_clzll", i32),
    })


@builtin
def popc(arg0):
    """The number of bits set."""
    return _call([arg0], {
        (i32,): ("__nv_popc", i32), (u32,): ("__nv_popc", i32), (i64,): ("__nv_popcll", i32),
        (u64,): ("__nv_popcll", i32),
    })


@builtin
def ffs(arg0):
    """The 1-based position of the least significant bit set; 0 for 0."""
    return _call([arg0], {
        (i32,): ("__nv_ffs", i32), (u32,): ("__nv_ffs", i32), (i64,): ("__nv_ffsll", i32),
        (u64,): ("__nv_ffsll", i32),
    })


@builtin
def brev(arg0):
    """The bits in reverse order."""
    return _call([arg0], {
        (i32,): ("__nv_brev", i32), (u32,): ("__nv_brev", u32), (i64,): ("__nv_brevll", i64),
        (u64,): ("__nv_brevll", u64),
    })


@builtin
def byte_perm(arg0, arg1, arg2):
    """Bytes of {y, x} picked by the nibbles of s: byte n of the result is byte (s >> 4n) & 7."""
    return _call([arg0, arg1, arg2], {
        (i32, i32, i32): ("__nv_byte_perm", i32), (u32, u32, u32): ("__nv_byte_perm", u32),
    })


@builtin
def mulhi(arg0, arg1):
    """The most significant half of the double-width product (signed or unsigned by type)."""
    return _call([arg0, arg1], {
        (i32, i32): ("__nv_mulhi", i32), (u32, u32): ("__nv_umulhi", u32), (i64, i64): ("__nv_mul64hi", i64),
        (u64, u64): ("__nv_umul64hi", u64),
    })


@builtin
def umulhi(arg0, arg1):
    """The most significant 32 bits of the unsigned 64-bit product."""
    return _call([arg0, arg1], {(u32, u32): ("__nv_umulhi", u32), (i32, i32): ("__nv_umulhi", i32)})


@builtin
def mul64hi(arg0, arg1):
    """The most significant 64 bits of the 128-bit product."""
    return _call([arg0, arg1], {(i64, i64): ("__nv_mul64hi", i64), (u64, u64): ("__nv_umul64hi", u64)})


@builtin
def umul64hi(arg0, arg1):
    """The most significant 64 bits of the unsigned 128-bit product."""
    return _call([arg0, arg1], {(u64, u64): ("__nv_umul64hi", u64), (i64, i64): ("__nv_umul64hi", i64)})


@builtin
def mul24(arg0, arg1):
    """The low 32 bits of the product of the low 24 bits of x and y (sign-extended when signed)."""
    return _call([arg0, arg1], {(i32, i32): ("__nv_mul24", i32), (u32, u32): ("__nv_umul24", u32)})


@builtin
def umul24(arg0, arg1):
    """The low 32 bits of the product of the low 24 bits of x and y, unsigned."""
    return _call([arg0, arg1], {(u32, u32): ("__nv_umul24", u32), (i32, i32): ("__nv_umul24", i32)})


@builtin
def hadd(arg0, arg1):
    """(x + y) >> 1 without overflow (rounds down)."""
    return _call([arg0, arg1], {(i32, i32): ("__nv_hadd", i32), (u32, u32): ("__nv_uhadd", u32)})


@builtin
def uhadd(arg0, arg1):
    """(x + y) >> 1 of unsigned values without overflow."""
    return _call([arg0, arg1], {(u32, u32): ("__nv_uhadd", u32)})


@builtin
def rhadd(arg0, arg1):
    """(x + y + 1) >> 1 without overflow (rounds up)."""
    return _call([arg0, arg1], {(i32, i32): ("__nv_rhadd", i32), (u32, u32): ("__nv_urhadd", u32)})


@builtin
def urhadd(arg0, arg1):
    """(x + y + 1) >> 1 of unsigned values without overflow."""
    return _call([arg0, arg1], {(u32, u32): ("__nv_urhadd", u32)})


@builtin
def sad(arg0, arg1, arg2):
    """|x - y| + z."""
    return _call([arg0, arg1, arg2], {
        (i32, i32, u32): ("__nv_sad", i32), (i32, i32, i32): ("__nv_sad", i32),
        (u32, u32, u32): ("__nv_usad", u32),
    })


@builtin
def usad(arg0, arg1, arg2):
    """|x - y| + z of unsigned values."""
    return _call([arg0, arg1, arg2], {(u32, u32, u32): ("__nv_usad", u32)})


@builtin
def abs(arg0):
    """|x| (integers wrap: abs(INT_MIN) is INT_MIN)."""
    return _call([arg0], {
        (i32,): ("__nv_abs", i32), (i64,): ("__nv_llabs", i64), (fp32,): ("__nv_fabsf", fp32),
        (fp64,): ("__nv_fabs", fp64),
    })


@builtin
def min(arg0, arg1):
    """The smaller of x and y (floats: a NaN operand is ignored)."""
    return _call([arg0, arg1], {
        (i32, i32): ("__nv_min", i32), (u32, u32): ("__nv_umin", u32), (i64, i64): ("__nv_llmin", i64),
        (u64, u64): ("__nv_ullmin", u64), (fp32, fp32): ("__nv_fminf", fp32), (fp64, fp64): ("__nv_fmin", fp64),
    })


@builtin
def max(arg0, arg1):
    """The larger of x and y (floats: a NaN operand is ignored)."""
    return _call([arg0, arg1], {
        (i32, i32): ("__nv_max", i32), (u32, u32): ("__nv_umax", u32), (i64, i64): ("__nv_llmax", i64),
        (u64, u64): ("__nv_ullmax", u64), (fp32, fp32): ("__nv_fmaxf", fp32), (fp64, fp64): ("__nv_fmax", fp64),
    })


# ----------------------------------------------------------------------------- float rounding and sign


@builtin
def fabs(arg0):
    """|x|."""
    return _call([arg0], {(fp32,): ("__nv_fabsf", fp32), (fp64,): ("__nv_fabs", fp64)})


@builtin
def floor(arg0):
    """The largest integer not greater than x."""
    return _call([arg0], {(fp32,): ("__nv_floorf", fp32), (fp64,): ("__nv_floor", fp64)})


@builtin
def ceil(arg0):
    """The smallest integer not less than x."""
    return _call([arg0], {(fp32,): ("__nv_ceilf", fp32), (fp64,): ("__nv_ceil", fp64)})


@builtin
def trunc(arg0):
    """x rounded toward zero."""
    return _call([arg0], {(fp32,): ("__nv_truncf", fp32), (fp64,): ("__nv_trunc", fp64)})


@builtin
def round(arg0):
    """x rounded to the nearest integer, halfway cases away from zero."""
    return _call([arg0], {(fp32,): ("__nv_roundf", fp32), (fp64,): ("__nv_round", fp64)})


@builtin
def rint(arg0):
    """x rounded to the nearest integer, halfway cases to even."""
    return _call([arg0], {(fp32,): ("__nv_rintf", fp32), (fp64,): ("__nv_rint", fp64)})


@builtin
def nearbyint(arg0):
    """x rounded to the nearest integer, halfway cases to even."""
    return _call([arg0], {(fp32,): ("__nv_nearbyintf", fp32), (fp64,): ("__nv_nearbyint", fp64)})


@builtin
def llrint(arg0):
    """x rounded to the nearest integer (halfway cases to even), as int64."""
    return _call([arg0], {(fp32,): ("__nv_llrintf", i64), (fp64,): ("__nv_llrint", i64)})


@builtin
def llround(arg0):
    """x rounded to the nearest integer (halfway cases away from zero), as int64."""
    return _call([arg0], {(fp32,): ("__nv_llroundf", i64), (fp64,): ("__nv_llround", i64)})


@builtin
def copysign(arg0, arg1):
    """|x| with the sign of y."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_copysignf", fp32), (fp64, fp64): ("__nv_copysign", fp64)})


@builtin
def fmin(arg0, arg1):
    """The smaller of x and y; a NaN operand is ignored."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fminf", fp32), (fp64, fp64): ("__nv_fmin", fp64)})


@builtin
def fmax(arg0, arg1):
    """The larger of x and y; a NaN operand is ignored."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fmaxf", fp32), (fp64, fp64): ("__nv_fmax", fp64)})


@builtin
def fdim(arg0, arg1):
    """x - y if x > y, else +0."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fdimf", fp32), (fp64, fp64): ("__nv_fdim", fp64)})


@builtin
def fmod(arg0, arg1):
    """x - n * y with n = trunc(x / y), exactly (the sign of x)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fmodf", fp32), (fp64, fp64): ("__nv_fmod", fp64)})


@builtin
def remainder(arg0, arg1):
    """x - n * y with n = x / y rounded to the nearest integer (halfway to even), exactly."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_remainderf", fp32), (fp64, fp64): ("__nv_remainder", fp64)})


@builtin
def nextafter(arg0, arg1):
    """The next representable value after x in the direction of y."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_nextafterf", fp32), (fp64, fp64): ("__nv_nextafter", fp64)})


@builtin
def ldexp(arg0, arg1):
    """x * 2 ** n."""
    return _call([arg0, arg1], {(fp32, i32): ("__nv_ldexpf", fp32), (fp64, i32): ("__nv_ldexp", fp64)})


@builtin
def scalbn(arg0, arg1):
    """x * 2 ** n."""
    return _call([arg0, arg1], {(fp32, i32): ("__nv_scalbnf", fp32), (fp64, i32): ("__nv_scalbn", fp64)})


@builtin
def ilogb(arg0):
    """The unbiased exponent of x, as int32."""
    return _call([arg0], {(fp32,): ("__nv_ilogbf", i32), (fp64,): ("__nv_ilogb", i32)})


@builtin
def logb(arg0):
    """The unbiased exponent of x, as a float."""
    return _call([arg0], {(fp32,): ("__nv_logbf", fp32), (fp64,): ("__nv_logb", fp64)})


@builtin
def saturatef(arg0):
    """x clamped to [0, 1] (NaN gives 0)."""
    return _call([arg0], {(fp32,): ("__nv_saturatef", fp32)})


@builtin
def fma(arg0, arg1, arg2):
    """x * y + z with a single rounding."""
    return _call([arg0, arg1, arg2], {
        (fp32, fp32, fp32): ("__nv_fmaf", fp32), (fp64, fp64, fp64): ("__nv_fma", fp64),
    })


# ----------------------------------------------------------------------------- classification
# int32 results, 1 or 0, as libdevice returns them (Triton converts isnan and isinf to int1).


@builtin
def isnan(arg0):
    """1 where x is a NaN, else 0."""
    return _call([arg0], {(fp32,): ("__nv_isnanf", i32), (fp64,): ("__nv_isnand", i32)})


@builtin
def isinf(arg0):
    """1 where x is +-inf, else 0."""
    return _call([arg0], {(fp32,): ("__nv_isinff", i32), (fp64,): ("__nv_isinfd", i32)})


@builtin
def signbit(arg0):
    """1 where the sign bit of x is set (-0.0 and negative NaNs included), else 0."""
    return _call([arg0], {(fp32,): ("__nv_signbitf", i32), (fp64,): ("__nv_signbitd", i32)})


@builtin
def finitef(arg0):
    """1 where the fp32 x is finite, else 0."""
    return _call([arg0], {(fp32,): ("__nv_finitef", i32)})


@builtin
def isfinited(arg0):
    """1 where the fp64 x is finite, else 0."""
    return _call([arg0], {(fp64,): ("__nv_isfinited", i32)})


# ----------------------------------------------------------------------------- powers, roots and exponentials


@builtin
def sqrt(arg0):
    """The square root of x."""
    return _call([arg0], {(fp32,): ("__nv_sqrtf", fp32), (fp64,): ("__nv_sqrt", fp64)})


@builtin
def rsqrt(arg0):
    """1 / sqrt(x)."""
    return _call([arg0], {(fp32,): ("__nv_rsqrtf", fp32), (fp64,): ("__nv_rsqrt", fp64)})


@builtin
def cbrt(arg0):
    """The cube root of x."""
    return _call([arg0], {(fp32,): ("__nv_cbrtf", fp32), (fp64,): ("__nv_cbrt", fp64)})


@builtin
def rcbrt(arg0):
    """1 / cbrt(x)."""
    return _call([arg0], {(fp32,): ("__nv_rcbrtf", fp32), (fp64,): ("__nv_rcbrt", fp64)})


@builtin
def hypot(arg0, arg1):
    """sqrt(x * x + y * y) without undue overflow or underflow."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_hypotf", fp32), (fp64, fp64): ("__nv_hypot", fp64)})


@builtin
def rhypot(arg0, arg1):
    """1 / hypot(x, y)."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_rhypotf", fp32), (fp64, fp64): ("__nv_rhypot", fp64)})


@builtin
def norm3d(arg0, arg1, arg2):
    """sqrt(a * a + b * b + c * c) without undue overflow or underflow."""
    return _call([arg0, arg1, arg2], {
        (fp32, fp32, fp32): ("__nv_norm3df", fp32), (fp64, fp64, fp64): ("__nv_norm3d", fp64),
    })


@builtin
def rnorm3d(arg0, arg1, arg2):
    """1 / norm3d(a, b, c)."""
    return _call([arg0, arg1, arg2], {
        (fp32, fp32, fp32): ("__nv_rnorm3df", fp32), (fp64, fp64, fp64): ("__nv_rnorm3d", fp64),
    })


@builtin
def norm4d(arg0, arg1, arg2, arg3):
    """sqrt(a * a + b * b + c * c + d * d) without undue overflow or underflow."""
    return _call([arg0, arg1, arg2, arg3], {
        (fp32, fp32, fp32, fp32): ("__nv_norm4df", fp32), (fp64, fp64, fp64, fp64): ("__nv_norm4d", fp64),
    })


@builtin
def rnorm4d(arg0, arg1, arg2, arg3):
    """1 / norm4d(a, b, c, d)."""
    return _call([arg0, arg1, arg2, arg3], {
        (fp32, fp32, fp32, fp32): ("__nv_rnorm4df", fp32), (fp64, fp64, fp64, fp64): ("__nv_rnorm4d", fp64),
    })


@builtin
def pow(arg0, arg1):
    """x ** y (an int32 y uses libdevice's powi)."""
    return _call([arg0, arg1], {
        (fp32, i32): ("__nv_powif", fp32), (fp64, i32): ("__nv_powi", fp64), (fp32, fp32): ("__nv_powf", fp32),
        (fp64, fp64): ("__nv_pow", fp64),
    })


@builtin
def exp(arg0):
    """e ** x."""
    return _call([arg0], {(fp32,): ("__nv_expf", fp32), (fp64,): ("__nv_exp", fp64)})


@builtin
def exp2(arg0):
    """2 ** x."""
    return _call([arg0], {(fp32,): ("__nv_exp2f", fp32), (fp64,): ("__nv_exp2", fp64)})


@builtin
def exp10(arg0):
    """10 ** x."""
    return _call([arg0], {(fp32,): ("__nv_exp10f", fp32), (fp64,): ("__nv_exp10", fp64)})


@builtin
def expm1(arg0):
    """e ** x - 1, accurate near 0."""
    return _call([arg0], {(fp32,): ("__nv_expm1f", fp32), (fp64,): ("__nv_expm1", fp64)})


@builtin
def log(arg0):
    """The natural logarithm of x."""
    return _call([arg0], {(fp32,): ("__nv_logf", fp32), (fp64,): ("__nv_log", fp64)})


@builtin
def log2(arg0):
    """The base-2 logarithm of x."""
    return _call([arg0], {(fp32,): ("__nv_log2f", fp32), (fp64,): ("__nv_log2", fp64)})


@builtin
def log10(arg0):
    """The base-10 logarithm of x."""
    return _call([arg0], {(fp32,): ("__nv_log10f", fp32), (fp64,): ("__nv_log10", fp64)})


@builtin
def log1p(arg0):
    """log(1 + x), accurate near 0."""
    return _call([arg0], {(fp32,): ("__nv_log1pf", fp32), (fp64,): ("__nv_log1p", fp64)})


# ----------------------------------------------------------------------------- trigonometry


@builtin
def sin(arg0):
    """The sine of x (radians)."""
    return _call([arg0], {(fp32,): ("__nv_sinf", fp32), (fp64,): ("__nv_sin", fp64)})


@builtin
def cos(arg0):
    """The cosine of x (radians)."""
    return _call([arg0], {(fp32,): ("__nv_cosf", fp32), (fp64,): ("__nv_cos", fp64)})


@builtin
def tan(arg0):
    """The tangent of x (radians)."""
    return _call([arg0], {(fp32,): ("__nv_tanf", fp32), (fp64,): ("__nv_tan", fp64)})


@builtin
def sinpi(arg0):
    """sin(pi * x), with pi * x exact."""
    return _call([arg0], {(fp32,): ("__nv_sinpif", fp32), (fp64,): ("__nv_sinpi", fp64)})


@builtin
def cospi(arg0):
    """cos(pi * x), with pi * x exact."""
    return _call([arg0], {(fp32,): ("__nv_cospif", fp32), (fp64,): ("__nv_cospi", fp64)})


@builtin
def asin(arg0):
    """The arc sine of x, in [-pi/2, pi/2]."""
    return _call([arg0], {(fp32,): ("__nv_asinf", fp32), (fp64,): ("__nv_asin", fp64)})


@builtin
def acos(arg0):
    """The arc cosine of x, in [0, pi]."""
    return _call([arg0], {(fp32,): ("__nv_acosf", fp32), (fp64,): ("__nv_acos", fp64)})


@builtin
def atan(arg0):
    """The arc tangent of x, in [-pi/2, pi/2]."""
    return _call([arg0], {(fp32,): ("__nv_atanf", fp32), (fp64,): ("__nv_atan", fp64)})


@builtin
def atan2(arg0, arg1):
    """atan2(y, x): the angle of the point (x, y), in [-pi, pi]."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_atan2f", fp32), (fp64, fp64): ("__nv_atan2", fp64)})


@builtin
def sinh(arg0):
    """The hyperbolic sine of x."""
    return _call([arg0], {(fp32,): ("__nv_sinhf", fp32), (fp64,): ("__nv_sinh", fp64)})


@builtin
def cosh(arg0):
    """The hyperbolic cosine of x."""
    return _call([arg0], {(fp32,): ("__nv_coshf", fp32), (fp64,): ("__nv_cosh", fp64)})


@builtin
def tanh(arg0):
    """The hyperbolic tangent of x."""
    return _call([arg0], {(fp32,): ("__nv_tanhf", fp32), (fp64,): ("__nv_tanh", fp64)})


@builtin
def asinh(arg0):
    """The inverse hyperbolic sine of x."""
    return _call([arg0], {(fp32,): ("__nv_asinhf", fp32), (fp64,): ("__nv_asinh", fp64)})


@builtin
def acosh(arg0):
    """The inverse hyperbolic cosine of x (x >= 1)."""
    return _call([arg0], {(fp32,): ("__nv_acoshf", fp32), (fp64,): ("__nv_acosh", fp64)})


@builtin
def atanh(arg0):
    """The inverse hyperbolic tangent of x (|x| < 1)."""
    return _call([arg0], {(fp32,): ("__nv_atanhf", fp32), (fp64,): ("__nv_atanh", fp64)})


# ----------------------------------------------------------------------------- special functions


@builtin
def erf(arg0):
    """The error function."""
    return _call([arg0], {(fp32,): ("__nv_erff", fp32), (fp64,): ("__nv_erf", fp64)})


@builtin
def erfc(arg0):
    """1 - erf(x), accurate for large x."""
    return _call([arg0], {(fp32,): ("__nv_erfcf", fp32), (fp64,): ("__nv_erfc", fp64)})


@builtin
def erfcx(arg0):
    """The scaled complementary error function exp(x * x) * erfc(x)."""
    return _call([arg0], {(fp32,): ("__nv_erfcxf", fp32), (fp64,): ("__nv_erfcx", fp64)})


@builtin
def erfinv(arg0):
    """The inverse error function (x in (-1, 1))."""
    return _call([arg0], {(fp32,): ("__nv_erfinvf", fp32), (fp64,): ("__nv_erfinv", fp64)})


@builtin
def erfcinv(arg0):
    """The inverse complementary error function (x in (0, 2))."""
    return _call([arg0], {(fp32,): ("__nv_erfcinvf", fp32), (fp64,): ("__nv_erfcinv", fp64)})


@builtin
def normcdf(arg0):
    """The standard normal cumulative distribution function."""
    return _call([arg0], {(fp32,): ("__nv_normcdff", fp32), (fp64,): ("__nv_normcdf", fp64)})


@builtin
def normcdfinv(arg0):
    """The inverse of normcdf (x in (0, 1))."""
    return _call([arg0], {(fp32,): ("__nv_normcdfinvf", fp32), (fp64,): ("__nv_normcdfinv", fp64)})


@builtin
def lgamma(arg0):
    """log |Gamma(x)|."""
    return _call([arg0], {(fp32,): ("__nv_lgammaf", fp32), (fp64,): ("__nv_lgamma", fp64)})


@builtin
def tgamma(arg0):
    """The gamma function."""
    return _call([arg0], {(fp32,): ("__nv_tgammaf", fp32), (fp64,): ("__nv_tgamma", fp64)})


@builtin
def j0(arg0):
    """The Bessel function of the first kind of order 0."""
    return _call([arg0], {(fp32,): ("__nv_j0f", fp32), (fp64,): ("__nv_j0", fp64)})


@builtin
def j1(arg0):
    """The Bessel function of the first kind of order 1."""
    return _call([arg0], {(fp32,): ("__nv_j1f", fp32), (fp64,): ("__nv_j1", fp64)})


@builtin
def jn(arg0, arg1):
    """The Bessel function of the first kind of order n (an int32): jn(n, x)."""
    return _call([arg0, arg1], {(i32, fp32): ("__nv_jnf", fp32), (i32, fp64): ("__nv_jn", fp64)})


@builtin
def y0(arg0):
    """The Bessel function of the second kind of order 0 (x > 0)."""
    return _call([arg0], {(fp32,): ("__nv_y0f", fp32), (fp64,): ("__nv_y0", fp64)})


@builtin
def y1(arg0):
    """The Bessel function of the second kind of order 1 (x > 0)."""
    return _call([arg0], {(fp32,): ("__nv_y1f", fp32), (fp64,): ("__nv_y1", fp64)})


@builtin
def yn(arg0, arg1):
    """The Bessel function of the second kind of order n (an int32): yn(n, x)."""
    return _call([arg0, arg1], {(i32, fp32): ("__nv_ynf", fp32), (i32, fp64): ("__nv_yn", fp64)})


@builtin
def cyl_bessel_i0(arg0):
    """The modified Bessel function of the first kind of order 0."""
    return _call([arg0], {(fp32,): ("__nv_cyl_bessel_i0f", fp32), (fp64,): ("__nv_cyl_bessel_i0", fp64)})


@builtin
def cyl_bessel_i1(arg0):
    """The modified Bessel function of the first kind of order 1."""
    return _call([arg0], {(fp32,): ("__nv_cyl_bessel_i1f", fp32), (fp64,): ("__nv_cyl_bessel_i1", fp64)})


# ----------------------------------------------------------------------------- fast approximations
# fp32 only: the hardware's approximate instructions (sin.approx, ex2.approx, lg2.approx, ...).


@builtin
def fast_sinf(arg0):
    """Approximate sine."""
    return _call([arg0], {(fp32,): ("__nv_fast_sinf", fp32)})


@builtin
def fast_cosf(arg0):
    """Approximate cosine."""
    return _call([arg0], {(fp32,): ("__nv_fast_cosf", fp32)})


@builtin
def fast_tanf(arg0):
    """Approximate tangent."""
    return _call([arg0], {(fp32,): ("__nv_fast_tanf", fp32)})


@builtin
def fast_tanhf(arg0):
    """Approximate hyperbolic tangent."""
    return _call([arg0], {(fp32,): ("__nv_fast_tanhf", fp32)})


@builtin
def fast_expf(arg0):
    """Approximate e ** x."""
    return _call([arg0], {(fp32,): ("__nv_fast_expf", fp32)})


@builtin
def fast_exp10f(arg0):
    """Approximate 10 ** x."""
    return _call([arg0], {(fp32,): ("__nv_fast_exp10f", fp32)})


@builtin
def fast_logf(arg0):
    """Approximate natural logarithm."""
    return _call([arg0], {(fp32,): ("__nv_fast_logf", fp32)})


@builtin
def fast_log2f(arg0):
    """Approximate base-2 logarithm."""
    return _call([arg0], {(fp32,): ("__nv_fast_log2f", fp32)})


@builtin
def fast_log10f(arg0):
    """Approximate base-10 logarithm."""
    return _call([arg0], {(fp32,): ("__nv_fast_log10f", fp32)})


@builtin
def fast_powf(arg0, arg1):
    """Approximate x ** y."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fast_powf", fp32)})


@builtin
def fast_dividef(arg0, arg1):
    """Approximate x / y."""
    return _call([arg0, arg1], {(fp32, fp32): ("__nv_fast_fdividef", fp32)})


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
