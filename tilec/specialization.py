"""How one kernel parameter is compiled: `ArgSpec`, shared by the frontend, the compile
driver and the runtime (which computes it from launch arguments).

It lives apart from all three so that each can import it without importing the others;
it imports nothing heavy (the dtype is only named in annotations).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .language.core import dtype


@dataclass(frozen=True)
class ArgSpec:
    """How one kernel parameter is compiled.

    `constant` arguments (tl.constexpr parameters, and integers specialised to 1) are
    folded into the code; the others become function arguments of type `ty`, with
    `divisibility` (16 or 1: bytes for pointers, units for integers) for axis info.
    """
    name: str
    ty: dtype | None = None
    constant: Any = None
    is_constant: bool = False
    divisibility: int = 1

    def key(self) -> tuple:
        if self.is_constant:
            return (self.name, "c", repr(self.constant))
        return (self.name, str(self.ty), self.divisibility)
