"""`tl.extra`: vendor libraries callable from kernels (`tilec.language.extra.libdevice`)."""
from . import libdevice  # noqa: F401
from . import cuda  # noqa: F401,E402
