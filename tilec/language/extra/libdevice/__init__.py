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

# The functions, in two modules by family (one would be ~1,400 lines).
from .functions import *  # noqa: F401,F403
from .rounding_and_conversions import *  # noqa: F401,F403
from .functions import __all__ as _functions
from .rounding_and_conversions import __all__ as _rounding_and_conversions

__all__ = sorted(_functions + _rounding_and_conversions)
