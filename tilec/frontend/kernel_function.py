"""A @jit function as the frontend sees it: its source, AST, parameters and globals.

`tilec.runtime.jit.JITFunction` extends this with launching and caching; the frontend
only needs what is here, so it never imports the runtime.
"""
from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from typing import Any, Callable

from ..errors import LaunchError, hide_internal_frames
from ..language.core import LibraryFunction, inside_kernel, is_constexpr_annotation
from .early_returns import rewrite_early_returns
from .loop_exits import rewrite_loop_exits


class KernelFunction:
    """Parses a Python function once and describes its parameters."""

    def __init__(self, fn: Callable, *, noinline: bool = False, debug: bool | None = None):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.noinline = noinline
        self.debug = debug
        try:
            lines, self.first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError) as exc:
            raise ValueError(f"@jit needs the source of {fn.__name__}, which is not available: {exc}") from None
        self.filename = inspect.getsourcefile(fn) or "<unknown>"
        self.src_lines = lines
        self.src = textwrap.dedent("".join(lines))
        self.indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
        signature = inspect.signature(fn)
        self.signature = signature
        self.params = list(signature.parameters.values())
        self.arg_names = [p.name for p in self.params]
        self.constexpr_indices = [i for i, p in enumerate(self.params) if is_constexpr_annotation(p.annotation)]
        self.constexprs = set(self.constexpr_indices)
        self.defaults = {p.name: p.default for p in self.params if p.default is not inspect.Parameter.empty}
        self._ast: ast.FunctionDef | None = None
        self._hash: str | None = None

    @property
    def globals(self) -> dict[str, Any]:
        return self.fn.__globals__

    def parse(self) -> ast.FunctionDef:
        """The function's AST (parsed once), `break`/`continue` rewritten into flags and
        returns inside `if`s moved to the end (loop_exits.py, early_returns.py)."""
        if self._ast is None:
            tree = ast.parse(self.src)
            node = tree.body[0]
            if not isinstance(node, ast.FunctionDef):
                raise ValueError(f"@jit expects a function definition, got {type(node).__name__}")
            self._ast = rewrite_early_returns(rewrite_loop_exits(node))
        return self._ast

    def source_line(self, lineno: int) -> str:
        """The text of AST line `lineno` (1-based within the parsed source)."""
        index = lineno - 1
        return self.src_lines[index] if 0 <= index < len(self.src_lines) else ""

    def file_line(self, lineno: int) -> int:
        return self.first_line + lineno - 1

    def closure_values(self) -> dict[str, Any]:
        """Free variables of the function (closures), as the frontend resolves names."""
        fn = self.fn
        if fn.__closure__ is None:
            return {}
        return {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__)}

    def source_hash(self) -> str:
        """Hash of this function's source (callees are added by the runtime's cache key)."""
        if self._hash is None:
            self._hash = hashlib.sha256(self.src.encode()).hexdigest()
        return self._hash

    def __call__(self, *args, **kwargs):
        # Called from inside another kernel by the interpreter; the compiler inlines calls.
        if not inside_kernel():
            try:  # raised and re-raised here so that the traceback ends at the user's call
                raise called_without_grid(self.__name__)
            except LaunchError as error:
                hide_internal_frames(error)
                raise
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"JITFunction({self.__module__}:{self.__qualname__})"


def called_without_grid(name: str) -> LaunchError:
    """The error for a kernel called like a Python function from host code."""
    return LaunchError(f"{name}() is a kernel: launch it on a grid of programs with {name}[grid](...), e.g. "
                       f"{name}[(num_programs,)](...); a @jit function is called directly only from inside "
                       "another kernel")


# The KernelFunction of each library function of the language, made on its first call.
# Library functions are module-level objects, so this never holds more than a few dozen.
_LIBRARY_KERNELS: dict[LibraryFunction, KernelFunction] = {}


def kernel_function_of(value: Any) -> KernelFunction | None:
    """`value` as the frontend compiles it when it is a function written in the language:
    a @jit function is itself; a library function of the language (`tl.sort`, marked in
    the language layer, which cannot import this one) gets a KernelFunction, made once.
    None for anything else."""
    if isinstance(value, KernelFunction):
        return value
    if isinstance(value, LibraryFunction):
        kernel = _LIBRARY_KERNELS.get(value)
        if kernel is None:
            kernel = _LIBRARY_KERNELS.setdefault(value, KernelFunction(value.fn))
        return kernel
    return None
