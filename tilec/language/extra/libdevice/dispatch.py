"""How every libdevice function calls `tl.extern_elementwise` (see __init__.py)."""
from __future__ import annotations

from ... import builtins as _tl

# tl.extern_elementwise's library arguments: the backend always links its own libdevice
# (tilec.backend.toolkit.libdevice_path()), so the path stays empty, as in Triton.
_LIB_NAME, _LIB_PATH = "libdevice", ""


def _call(args: list, table: dict):
    return _tl.extern_elementwise(_LIB_NAME, _LIB_PATH, args, table, is_pure=True)
