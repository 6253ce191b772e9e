"""libdevice's integer, float, classification, power, trigonometric, special and fast
functions.

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


__all__ = sorted(name for name, value in globals().items()
                 if not name.startswith("_") and getattr(value, "__tilec_builtin__", False))
