"""`tl.math`: the math functions under their `triton.language.math` names."""
from .builtins import abs, ceil, cos, erf, exp, exp2, floor, log, log2, rsqrt, sin, sqrt  # noqa: F401  (re-exported)
