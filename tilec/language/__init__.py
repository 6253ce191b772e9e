"""tilec.language: the tile language, with the names and semantics of `triton.language`.

    import tilec.language as tl
"""
from . import math
from .builtins import (PropagateNan, abs, add, arange, argmax, argmin, broadcast, broadcast_to, cat, cdiv, ceil, clamp,
                       cos, div_rn,
                       erf, exp, exp2, expand_dims, extern_elementwise, fdiv, floor, fma, full, full_like,
                       interleave, join, load, log, log2, max, maximum, min, minimum, num_programs, permute,
                       program_id, range, ravel, reshape, rsqrt, sigmoid, sin, split, sqrt, sqrt_rn,
                       static_assert, static_print, static_range, store, sum, tan, trans, trunc, umulhi, view,
                       where, xor_sum, zeros, zeros_like)
from .builtins import associative_scan, cumprod, cumsum, dot, dot_scaled, reduce  # noqa: E402
from .builtins import (assume, debug_barrier, device_assert, device_print, max_constancy,  # noqa: E402
                       max_contiguous, multiple_of)
from .builtins import cast, condition, gather, histogram, inline_asm_elementwise, to_tensor  # noqa: E402
from .builtins import item, map_elementwise, mul, squeeze, sub, tuple, unsqueeze  # noqa: E402
from .builtins import (atomic_add, atomic_and, atomic_cas, atomic_load, atomic_max, atomic_min,  # noqa: E402
                       atomic_or, atomic_poll, atomic_store, atomic_xchg, atomic_xor)
from .core import (bfloat16, block_type, builtin, const, constexpr, dtype, float8e4b8, float8e4b15, float8e4nv,
                   float8e5, float8e5b16, float16, float32, float64, int1, int8, int16, int32, int64, pointer_type,
                   tensor, uint8, uint16, uint32, uint64, void)

from .compile_time import constexpr_function, constexpr_type, tuple_type  # noqa: E402
from .aggregates import aggregate_class as _aggregate, aggregate_replace  # noqa: E402
from . import core as _core  # noqa: E402

_core._aggregate = _aggregate  # Triton's spelling of the decorator: tl.core._aggregate (also tilec.aggregate)

from . import extra  # noqa: E402,F401
from .block_pointer import *  # noqa: E402,F401,F403
from .random import *  # noqa: E402,F401,F403
from .standard import *  # noqa: E402,F401,F403

def str_to_ty(name: str, c=None) -> dtype:
    """The dtype a type's short name names: "fp32", "i8", "*fp16" (a pointer), as in
    signatures (Triton's spelling of `core.dtype_from_signature`)."""
    from .core import dtype_from_signature
    return dtype_from_signature(name)


# Short names Triton also accepts.
float8e4m3fn = float8e4nv
float8e5m2 = float8e5
pi32_t = pointer_type(int32)

__all__ = [name for name in dir() if not name.startswith("_")]
