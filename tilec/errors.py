"""Errors tilec raises to users.

Every one derives from `TilecError`, so `except tilec.TilecError` catches whatever tilec
reports about a kernel, a target, the CUDA toolkit or a launch. Most also derive from the
built-in exception that fits (`ValueError` for a bad target, `RuntimeError` for a missing
tool), so code written against those keeps working.
"""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A place in a kernel's source: file, 1-based line and column, the line's text."""
    filename: str
    lineno: int
    col: int
    source_line: str
    function: str

    def render(self) -> str:
        line = self.source_line.rstrip("\n")
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        caret = " " * max(self.col - 1 - indent, 0) + "^"
        return f"{self.filename}:{self.lineno}:{self.col} in {self.function}:\n    {stripped}\n    {caret}"


class TilecError(Exception):
    """The base of every error tilec raises on purpose."""


_TILEC_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_frames(location: SourceLocation | None, call_stack: tuple[SourceLocation, ...]):
    """An error raised inside tilec's own library (tl.sort, tl.rand, ...) is reported at
    the innermost call from the user's code: the user's line, not tilec's internals."""
    if location is None or not os.path.abspath(location.filename).startswith(_TILEC_DIR):
        return location, call_stack
    for i in range(len(call_stack) - 1, -1, -1):
        if not os.path.abspath(call_stack[i].filename).startswith(_TILEC_DIR):
            return call_stack[i], call_stack[:i]
    return location, call_stack


class CompilationError(TilecError):
    """A kernel could not be compiled: where, and one sentence saying why.

    `location` is where the error happened; `call_stack` lists the call sites that led
    there when it happened inside a called @jit function (outermost first).
    """

    def __init__(self, message: str, location: SourceLocation | None = None,
                 call_stack: tuple[SourceLocation, ...] = ()):
        self.message = message
        self.location, self.call_stack = _user_frames(location, tuple(call_stack))
        super().__init__(self._render())

    def with_call_site(self, site: SourceLocation) -> "CompilationError":
        return CompilationError(self.message, self.location, (site,) + self.call_stack)

    def _render(self) -> str:
        if self.location is None:
            return self.message
        parts = []
        for site in self.call_stack:
            parts.append("called from " + site.render())
        parts.append("at " + self.location.render())
        parts.append(self.message)
        return "\n".join(parts)

    def __reduce__(self):
        return (CompilationError, (self.message, self.location, self.call_stack))


class OutOfResources(TilecError):
    """A kernel needs more of a per-block resource (shared memory, registers) than the GPU has."""

    def __init__(self, resource: str, required: int, available: int, kernel: str = "", unit: str = "bytes"):
        self.resource, self.required, self.available, self.kernel, self.unit = resource, required, available, kernel, unit
        where = f" by kernel {kernel}" if kernel else ""
        super().__init__(f"out of resource: {resource}: {required} {unit} required{where}, "
                         f"but the GPU provides {available}. Reduce block sizes, num_warps or num_stages.")

    def __reduce__(self):
        return (OutOfResources, (self.resource, self.required, self.available, self.kernel, self.unit))


class InternalError(TilecError, RuntimeError):
    """A tilec bug: the compiler produced invalid IR or a pass failed. Please report it."""


class LaunchError(TilecError, TypeError, ValueError):
    """A kernel launch was given arguments it cannot accept (names the argument)."""


class TargetError(TilecError, ValueError):
    """A target tilec cannot compile for: malformed ("hopper"), a GPU its LLVM does not
    know, or one older than the oldest it generates code for."""


class ToolkitError(TilecError, RuntimeError):
    """A piece of the CUDA toolkit (ptxas, libdevice) is missing, or ptxas refused the PTX."""


class ToolNotFoundError(ToolkitError):
    """ptxas or libdevice is not installed where tilec looks. The stages that need it are
    left out of a compiled kernel (`CompiledKernel.missing` says why); the stages before
    them are still produced."""
