"""`tl.extra.cuda`: where Triton code also finds libdevice
(`from triton.language.extra.cuda import libdevice` becomes
`from tilec.language.extra.cuda import libdevice`); the same module as
`tilec.language.extra.libdevice`."""
from .. import libdevice  # noqa: F401
