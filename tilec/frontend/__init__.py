"""Frontend: Python AST -> ttir. `generate_ttir` (frontend/ttir.py) is its one entry point.

Importing the package does not import the MLIR bindings: the runtime takes
`KernelFunction` from here, and a kernel served from the disk cache must not pay for
loading MLIR. `generate_ttir` is imported on first use.
"""
from __future__ import annotations

from typing import Any

from ..specialization import ArgSpec  # re-exported: tilec.frontend.ArgSpec keeps working
from .kernel_function import KernelFunction

__all__ = ["ArgSpec", "KernelFunction", "generate_ttir"]


def __getattr__(name: str) -> Any:
    if name == "generate_ttir":
        from .ttir import generate_ttir
        return generate_ttir
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
