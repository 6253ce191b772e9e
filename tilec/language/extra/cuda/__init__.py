"""`tl.extra.cuda`: NVIDIA-specific functions for kernels, with the names of Triton's
`triton.language.extra.cuda`: hardware facts (`smid`, `globaltimer`, `num_warps`,
`num_threads`), grid dependency control (`gdc_wait`, `gdc_launch_dependents`),
elementwise helpers (`exp2_ftz`, `round_f32_to_tf32`, `min_nan_xorsign_abs_f32`,
`max_nan_xorsign_abs_f32`, `f32_to_e2m1x2`), the fp8e4b15 conversions
(`convert_custom_float8_sm80`, `_sm70`), and libdevice
(`from tilec.language.extra.cuda import libdevice`, the same module as
`tilec.language.extra.libdevice`)."""
import sys as _sys

from .. import libdevice  # noqa: F401

# Triton ships it as a submodule too (`from triton.language.extra.cuda.libdevice import rsqrt`,
# the fallback import of several kernel libraries): the same module under that name.
_sys.modules.setdefault(__name__ + ".libdevice", libdevice)
from .gdc import gdc_launch_dependents, gdc_wait
from .utils import (convert_custom_float8_sm70, convert_custom_float8_sm80, exp2_ftz, f32_to_e2m1x2, globaltimer,
                    max_nan_xorsign_abs_f32, min_nan_xorsign_abs_f32, num_threads, num_warps, round_f32_to_tf32, smid)

__all__ = [
    "libdevice", "globaltimer", "num_threads", "num_warps", "smid", "convert_custom_float8_sm70",
    "convert_custom_float8_sm80", "gdc_launch_dependents", "gdc_wait", "min_nan_xorsign_abs_f32",
    "max_nan_xorsign_abs_f32", "f32_to_e2m1x2", "exp2_ftz", "round_f32_to_tf32",
]
