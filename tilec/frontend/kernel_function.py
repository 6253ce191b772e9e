"""A @jit function as the frontend sees it: its source, AST, parameters and globals.

`tilec.runtime.jit.JITFunction` extends this with launching and caching; the frontend
only needs what is here, so it never imports the runtime.
"""
from __future__ import annotations

import ast
import hashlib
import inspect
import linecache
import re
import textwrap
import types
from typing import Any, Callable

from ..errors import LaunchError, SourceLocation, hide_internal_frames
from ..language.core import (LibraryFunction, call_kernel_function, inside_kernel, is_const_annotation,
                              is_constexpr_annotation, scalar_annotation_type)
from .early_returns import rewrite_early_returns
from .loop_exits import rewrite_loop_exits


class KernelFunction:
    """Parses a Python function once and describes its parameters."""

    # How the language layer, which cannot import this one, recognises @jit functions
    # (a @jit method of an aggregate, language/aggregates.py).
    __tilec_jit__ = True

    def __init__(self, fn: Callable, *, noinline: bool = False, debug: bool | None = None,
                 src: str | None = None):
        self.noinline = noinline
        self.debug = debug
        self._set_function(fn, *source_of(fn, src))

    def _set_function(self, fn: Callable, lines: list[str], first_line: int, filename: str) -> None:
        """Takes `fn` and the source it was compiled from (`lines` from `first_line` of
        `filename`), and forgets whatever was derived from an earlier source."""
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.first_line = first_line
        self.filename = filename
        self.src_lines = lines
        self.__dict__["src"] = textwrap.dedent("".join(lines))  # (JITFunction makes `src` a property)
        self.indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
        signature = inspect.signature(fn)
        self.signature = signature
        self.params = list(signature.parameters.values())
        self.arg_names = [p.name for p in self.params]
        self.constexpr_indices = [i for i, p in enumerate(self.params) if is_constexpr_annotation(p.annotation)]
        self.constexprs = set(self.constexpr_indices)
        self.const_params = {p.name for p in self.params if is_const_annotation(p.annotation)}
        # Scalar parameters annotated with a dtype (`val: tl.float16`): passed as that type.
        self.annotated_types = {p.name: ty for p in self.params
                                if (ty := scalar_annotation_type(p.annotation)) is not None}
        self.defaults = {p.name: p.default for p in self.params if p.default is not inspect.Parameter.empty}
        self._ast: ast.FunctionDef | None = None
        self._hash: str | None = None
        self.__dict__.pop("_interpreted_code", None)  # interpretable.py's, made from the old source

    def update_src(self, new_src: str) -> None:
        """Replaces the kernel's source with `new_src`, a definition of a function of the
        same name (decorators are ignored). Both backends run the new source from then on,
        and compiled kernels are keyed by it; the names it reads resolve in the original
        function's globals (and its closure's values). Triton's `_unsafe_update_src`."""
        global _updates
        _updates += 1
        filename = f"<source of {self.__name__}, update {_updates}>"
        fn = function_from_source(new_src, self.fn, filename)
        lines = textwrap.dedent(new_src).splitlines(keepends=True)
        linecache.cache[filename] = (len(new_src), None, lines, filename)  # for tracebacks
        self._set_function(fn, lines, 1, filename)
        self._source_changed()

    _unsafe_update_src = update_src  # Triton's name

    def _source_changed(self) -> None:
        """Hook for the runtime: drop what was compiled from the old source."""

    @property
    def globals(self) -> dict[str, Any]:
        return self.fn.__globals__

    def parse(self) -> ast.FunctionDef:
        """The function's AST (parsed once), `break`/`continue` rewritten into flags and
        returns inside `if`s moved to the end (loop_exits.py, early_returns.py)."""
        if self._ast is None:
            tree = ast.parse(self.__dict__["src"])  # decorators included: line numbers count from them
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

    def location(self, node: ast.AST) -> SourceLocation:
        """Where `node` (of this function's parsed source) is: the file's line and 1-based
        column, the line's text, and the place as Triton counts it (lines from the `def`
        line, which is 1; columns from 0, in the dedented source)."""
        lineno = getattr(node, "lineno", 1)
        col_offset = getattr(node, "col_offset", 0)
        try:
            def_line = self.parse().lineno
        except (SyntaxError, ValueError):
            def_line = 1
        return SourceLocation(self.filename, self.file_line(lineno), col_offset + 1 + self.indent,
                              self.source_line(lineno), self.__name__,
                              function_line=lineno - def_line + 1, function_col=col_offset)

    def closure_values(self) -> dict[str, Any]:
        """Free variables of the function (closures), as the frontend resolves names."""
        fn = self.fn
        if fn.__closure__ is None:
            return {}
        return {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__)
                if _filled(cell)}

    def source_hash(self) -> str:
        """Hash of this function's source (callees are added by the runtime's cache key)."""
        if self._hash is None:
            # From the `def` line: decorators do not change what is compiled, and a source
            # put back through `src` (which starts there, as Triton's) hashes the same.
            self._hash = hashlib.sha256(definition_source(self.__dict__["src"]).encode()).hexdigest()
        return self._hash

    def __call__(self, *args, **kwargs):
        # Called from inside another kernel by the interpreter (the compiler inlines calls),
        # when the kernel reached this function other than through its globals: a @jit
        # method read from an aggregate's class, a field of a tuple argument. It runs as
        # the kernel's own calls do (the interpreter's copy of it, interpretable.py).
        if not inside_kernel():
            try:  # raised and re-raised here so that the traceback ends at the user's call
                raise called_without_grid(self.__name__)
            except LaunchError as error:
                hide_internal_frames(error)
                raise
        return call_kernel_function(self, args, kwargs)

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


# ----------------------------------------------------------------------------- finding the source


def source_of(fn: Callable, src: str | None = None) -> tuple[list[str], int, str]:
    """The source lines of `fn`, the line of the file they start at, and the file's name.

    From, in order: `src` (given by the caller), the file or the `linecache` entry of the
    function's code object (`inspect`: files, notebooks, and REPLs that record what was
    typed), and a string holding the function's definition in a frame of the code that
    is defining it, such as the source given to `exec()`. A string is taken only if
    compiling it gives the function's own bytecode."""
    code = getattr(fn, "__code__", None)
    filename = code.co_filename if code is not None else "<unknown>"
    if src is not None:
        return textwrap.dedent(src).splitlines(keepends=True), 1, filename
    try:
        lines, first_line = inspect.getsourcelines(fn)
        return lines, first_line, inspect.getsourcefile(fn) or filename
    except (OSError, TypeError) as exc:
        reason = exc
    found = _source_from_defining_frames(fn) if code is not None else None
    if found is not None:
        return found[0], found[1], filename
    raise ValueError(f"@jit needs the source of {fn.__name__}, which is not available ({reason}): pass it as "
                     f"@tilec.jit(src=...), or give exec() a file name that linecache knows") from None


# How many frames up from the decorator to look for the string that defined the function.
_FRAMES_SEARCHED = 24


def _source_from_defining_frames(fn: Callable) -> tuple[list[str], int] | None:
    code = fn.__code__
    frame = inspect.currentframe()
    seen: set[int] = set()
    try:
        for _ in range(_FRAMES_SEARCHED):
            if frame is None:
                break
            # strings in the frame's variables, its module's, and its code's own constants
            values = [*frame.f_locals.values(), *frame.f_globals.values(), *frame.f_code.co_consts]
            for value in values:
                if isinstance(value, str) and id(value) not in seen and f"def {code.co_name}" in value:
                    seen.add(id(value))
                    lines = _lines_defining(value, code)
                    if lines is not None:
                        return lines
            frame = frame.f_back
    finally:
        del frame
    return None


def _lines_defining(text: str, code) -> tuple[list[str], int] | None:
    """The lines of `text` that define the function compiled to `code` (same name, first
    line and bytecode), and the line they start at; None if `text` does not define it."""
    try:
        module = compile(text, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    stack = [module]
    while stack:
        candidate = stack.pop()
        if (candidate.co_name == code.co_name and candidate.co_firstlineno == code.co_firstlineno
                and candidate.co_code == code.co_code):
            break
        stack.extend(c for c in candidate.co_consts if hasattr(c, "co_code"))
    else:
        return None
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first == code.co_firstlineno:
                lines = text.splitlines(keepends=True)[first - 1:node.end_lineno]
                return lines, first
    return None


def _filled(cell) -> bool:
    """Whether a closure cell holds a value (a variable assigned after the definition
    has an empty cell until then)."""
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


# Source updates so far (each gets a file name of its own for tracebacks).
_updates = 0


def definition_source(source: str) -> str:
    """`source` from its `def` line on (without the decorators above it)."""
    definition = re.search(r"^def\s+\w+\s*\(", source, re.MULTILINE)
    return source[definition.start():] if definition else source


def function_from_source(src: str, like: Callable, filename: str) -> Callable:
    """The Python function `src` defines, without its decorators, reading names from the
    globals of `like` and from its closure's cells.

    The new function shares `like`'s cells, not their values: a kernel defined inside a
    function may name a variable of that function assigned after the definition (Triton's
    tests define a kernel, patch its source, then assign the arrays it once named), and
    such a cell is still empty when the source is replaced. So the source is compiled
    nested in a function that declares the free variables, and the function it defines
    is rebuilt around the original cells of those it reads."""
    tree = ast.parse(textwrap.dedent(src))
    defs = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if len(defs) != 1:
        raise ValueError(f"the new source of {like.__name__} must define one function, found {len(defs)}")
    defs[0].decorator_list = []
    cells = dict(zip(like.__code__.co_freevars, like.__closure__ or ()))
    if cells:
        tree = _nested_in_closure(tree, sorted(cells))
    namespace: dict[str, Any] = {}
    exec(compile(tree, filename, "exec"), like.__globals__, namespace)  # evaluates annotations and defaults
    new = namespace["__tilec_closure__"]() if cells else namespace[defs[0].name]
    closure = tuple(cells[name] for name in new.__code__.co_freevars) or None
    made = types.FunctionType(new.__code__, like.__globals__, new.__name__, new.__defaults__, closure)
    made.__annotations__ = new.__annotations__
    made.__kwdefaults__ = new.__kwdefaults__
    made.__module__ = like.__module__
    made.__qualname__ = like.__qualname__
    return made


def _nested_in_closure(tree: ast.Module, free_names: list[str]) -> ast.Module:
    """`def __tilec_closure__(): <free names> = None; <the definition>; return it`, the
    definition keeping its line numbers (tracebacks point into the new source)."""
    definition = tree.body[-1] if isinstance(tree.body[-1], ast.FunctionDef) else \
        next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    body: list[ast.stmt] = [ast.Assign(targets=[ast.Name(name, ast.Store()) for name in free_names],
                                       value=ast.Constant(None))]
    body += tree.body
    body.append(ast.Return(ast.Name(definition.name, ast.Load())))
    outer = ast.FunctionDef(name="__tilec_closure__", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                                         kw_defaults=[], defaults=[]),
                            body=body, decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12 and newer
        outer.type_params = []
    module = ast.Module(body=[outer], type_ignores=[])
    return ast.fix_missing_locations(module)
