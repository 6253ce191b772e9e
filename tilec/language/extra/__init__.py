"""`tl.extra`: vendor libraries callable from kernels (`tilec.language.extra.libdevice`)."""
from . import libdevice  # noqa: F401
