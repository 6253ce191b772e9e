"""`tl.math`: the math functions under their `triton.language.math` names."""
from .builtins import (abs, cdiv, ceil, clamp, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log,  # noqa: F401
                       log2, maximum, minimum, rsqrt, sigmoid, sin, sqrt, sqrt_rn, tan, trunc, umulhi)
