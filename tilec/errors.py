"""Errors tilec raises to users.

Every one derives from `TilecError`, so `except tilec.TilecError` catches whatever tilec
reports about a kernel, a target, the CUDA toolkit or a launch. Most also derive from the
built-in exception that fits (`ValueError` for a bad target, `RuntimeError` for a missing
tool), so code written against those keeps working.

The errors about the user's program (`UserError`: a kernel that does not compile, a
launch with the wrong arguments, a target tilec cannot compile for, a kernel too large
for the GPU, the interpreter's out-of-bounds accesses and failed assertions) carry their
own location, so the Python traceback of tilec's internals adds nothing but noise. The API entry points
(`tilec.compile`, `kernel[grid](...)`, `kernel.warmup`, ...) therefore re-raise them
without the frames below themselves (`hide_internal_frames`): Python then prints the
user's own frames down to the call into tilec, and the message. A `ToolkitError` (a
missing ptxas, a chip the installed ptxas does not know) is trimmed the same way: its
message names the tool and what to do. `TILEC_DEBUG=1` keeps every frame.

A `CompilationError` prints as one error wherever it is printed: by Python itself, by
the `traceback` module (`traceback.format_exc()`, `logging.exception`, Python 3.13's
default hook), by pytest and by IPython/Jupyter. Its `__cause__` is Triton's chain of
located errors for the user's code that asks for it, and nothing for the exception
printers, which read it from Python's library and installed packages (see
`CompilationError.__cause__`).
"""
from __future__ import annotations

import numbers
import os
import site
import sys
import sysconfig
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SourceLocation:
    """A place in a kernel's source: file, 1-based line and column, the line's text.

    `function_line` and `function_col` give the same place as Triton counts it, when
    known: the line within the function (its `def` line is 1) and the 0-based column
    within its dedented source. Triton prints them as `at 2:4:`, and tests written for
    Triton look for that text, so the rendering carries it too.
    """
    filename: str
    lineno: int
    col: int
    source_line: str
    function: str
    function_line: int | None = None
    function_col: int | None = None

    def render(self) -> str:
        line = self.source_line.rstrip("\n")
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        caret = " " * max(self.col - 1 - indent, 0) + "^"
        text = f"{self.filename}:{self.lineno}:{self.col} in {self.function}:\n    {stripped}\n    {caret}"
        if self.function_line is not None and self.function_col is not None:
            text += f"\n    (Triton: at {self.function_line}:{self.function_col}:)"
        return text


class TilecError(Exception):
    """The base of every error tilec raises on purpose."""


_TILEC_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _library_dirs() -> tuple[str, ...]:
    """Python's own library and the folders of installed packages (the environment's, the
    system's -- Debian's dist-packages -- and the user's): code tilec calls, and the code
    that prints exceptions, not the user's."""
    paths = [path for key, path in sysconfig.get_paths().items()
             if key in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        paths += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # an old virtualenv's site module lacks them
        pass
    return tuple(sorted({os.path.abspath(path) + os.sep for path in paths if path}))


_LIBRARY_DIRS = _library_dirs()


def _user_frames(location: SourceLocation | None, call_stack: tuple[SourceLocation, ...]):
    """An error raised inside tilec's own library (tl.sort, tl.rand, ...) is reported at
    the innermost call from the user's code: the user's line, not tilec's internals."""
    if location is None or not os.path.abspath(location.filename).startswith(_TILEC_DIR):
        return location, call_stack
    for i in range(len(call_stack) - 1, -1, -1):
        if not os.path.abspath(call_stack[i].filename).startswith(_TILEC_DIR):
            return call_stack[i], call_stack[:i]
    return location, call_stack


class UserError(TilecError):
    """An error in the user's program (its kernel or its launch), not in tilec: the
    message says where and why, and the traceback stops at the call into tilec."""


# BaseException's own `__cause__` field (CompilationError reads it through a property).
_EXCEPTION_CAUSE = BaseException.__dict__["__cause__"]


def hide_internal_frames(error: BaseException) -> None:
    """Trims `error`'s traceback for an API entry point to re-raise it with a bare
    `raise` (which adds no frame of its own): Python then prints the user's frames down
    to the call into tilec, and
      - for a `UserError` or a `ToolkitError`, nothing below it: the message says where,
        or which tool is missing and what to do;
      - for another exception raised in user code that tilec called back (the
        interpreted kernel's body, a grid function), the frames from that code inward;
      - for anything else (a tilec bug), every frame.
    With TILEC_DEBUG=1 nothing is dropped, and a CompilationError made from another
    exception (a likely tilec bug) shows that one as its cause.

    Python 3.10's bare `raise` re-raises the traceback it caught, whatever `error`'s
    now is: there this function raises the trimmed error itself, which adds two frames
    (the entry point's and this one's) in place of all of tilec's.
    """
    from .config import config
    if config.debug:
        original = getattr(error, "original", None)
        if original is not None and _EXCEPTION_CAUSE.__get__(error) is None:
            _EXCEPTION_CAUSE.__set__(error, original)
        return
    if isinstance(error, (UserError, ToolkitError)):
        error.__traceback__ = None
    else:
        tb = error.__traceback__
        while tb is not None and not _is_user_code(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        if tb is not None:
            error.__traceback__ = tb
    if sys.version_info < (3, 11):
        __tracebackhide__ = True  # noqa: F841 (pytest leaves this frame out of its reports)
        raise error.with_traceback(error.__traceback__)


def _is_user_code(filename: str) -> bool:
    """Whether a frame's file is the user's: not tilec's, not Python's own library or an
    installed package (which tilec calls too), not generated code (`<...>`) other than
    an IPython cell's (`<ipython-input-...>`; Jupyter's cells have files of their own)."""
    if filename.startswith("<"):
        return filename.startswith("<ipython-input-")
    path = os.path.abspath(filename)
    return not path.startswith(_TILEC_DIR) and not any(path.startswith(prefix) for prefix in _LIBRARY_DIRS)


def note_grid_function_error(error: BaseException, grid_function: Any, kernel: str, meta: dict) -> None:
    """Adds to an exception raised by the grid function of a launch (`kernel[grid](...)`
    with `grid = lambda META: ...`) a note naming that function, where it is defined, and
    the scalar values of META it was given: a `cdiv(n, META["BLOCK"])` that divides by
    zero then shows `BLOCK: 0`. The exception keeps its type (code may catch a KeyError);
    tilec's own frames at the end of its traceback (the inside of `tilec.cdiv`) are
    dropped, so that it ends at the user's line. (Python 3.10 prints no notes.)"""
    from .config import config
    code = getattr(grid_function, "__code__", None)
    name = getattr(grid_function, "__name__", type(grid_function).__name__)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    values = ", ".join(f"{key}: {_short_value(value)}" for key, value in meta.items())
    if hasattr(error, "add_note"):
        error.add_note(f"raised by the grid function {name}{where}, called by {kernel}'s launch with "
                       f"META = {{{values}}}")
    if config.debug:
        return
    entries, tb = [], error.__traceback__
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    users = [i for i, entry in enumerate(entries) if _is_user_code(entry.tb_frame.f_code.co_filename)]
    if users and all(os.path.abspath(entry.tb_frame.f_code.co_filename).startswith(_TILEC_DIR)
                     for entry in entries[users[-1] + 1:]):
        entries[users[-1]].tb_next = None


def _short_value(value: Any) -> str:
    """A scalar's repr (a constexpr's value; a NumPy scalar as its number), else the
    type's name (arrays, tensors)."""
    value = getattr(value, "value", value) if type(value).__name__ == "constexpr" else value
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, numbers.Number):
        return str(value)
    return type(value).__name__


def _read_by_library_code() -> bool:
    """Whether the code reading `CompilationError.__cause__` (the caller of its getter) is
    in Python's library or an installed package, not the user's."""
    filename = sys._getframe(2).f_code.co_filename
    if filename.startswith("<"):  # a notebook cell, `python -c`, exec'd text: the user's
        return filename.startswith("<frozen")
    path = os.path.abspath(filename)
    return any(path.startswith(prefix) for prefix in _LIBRARY_DIRS)


class SemanticRuleError(Exception):
    """What a CompilationError made from a broken rule of the language gives as its
    `__cause__`: the sentence alone (Triton's CompilationError keeps the error it was made
    from there, and tests match its text)."""


_TRITON_PHRASE = "(Triton: "


def triton_phrase(message: str) -> str | None:
    """Triton's own words for an error, where tilec's message ends with them as
    `... (Triton: <its words>)`; None for a message that does not."""
    start = message.rfind(_TRITON_PHRASE)
    if start < 0 or not message.endswith(")"):
        return None
    phrase = message[start + len(_TRITON_PHRASE):-1]
    depth = 0
    for char in phrase:  # the closing parenthesis must be the one that opened the phrase
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return None
    return phrase if depth == 0 else None


_FRONTEND_DIR = os.path.join(_TILEC_DIR, "frontend") + os.sep


def _without_frontend_frames(error: BaseException) -> BaseException:
    """`error` with the frames of the AST visitor (and of Python's `ast` module) that
    caught it removed from the front of its traceback: it then starts where the language
    was called, as the cause of Triton's CompilationError does (its tests look for
    `core.py` there, and for no `code_generator.py`). TILEC_DEBUG=1 keeps every frame."""
    from .config import config
    if config.debug:
        return error
    tb = error.__traceback__
    while tb is not None:
        path = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not (path.startswith(_FRONTEND_DIR) or os.path.basename(path) == "ast.py"):
            break
        tb = tb.tb_next
    error.__traceback__ = tb
    return error


class CompilationError(UserError):
    """A kernel could not be compiled: where, and one sentence saying why.

    `location` is where the error happened; `call_stack` lists the call sites that led
    there when it happened inside a called @jit function (outermost first).
    """

    # Whether an error made from no other exception still has a cause (its sentence).
    has_cause = True

    def __init__(self, message: str, location: SourceLocation | None = None,
                 call_stack: tuple[SourceLocation, ...] = ()):
        self.message = message
        self.location, self.call_stack = _user_frames(location, tuple(call_stack))
        super().__init__(self._render())

    @property
    def __cause__(self):
        """The error this one was located from, as Triton's CompilationError keeps it:
          - inside a called @jit function, the same error one call site further in
            (Triton raises one error per call site, each the cause of the next outward);
          - at the failing line, the exception it was made from, its traceback starting
            where the language was called; for a message ending `(Triton: <words>)`, an
            error of Triton's words alone (tests compare its text with Triton's);
          - none for a failed tl.static_assert or a construct the language does not take
            (as Triton's CompileTimeAssertionFailure and UnsupportedLanguageConstruct).

        That chain is for the user's code, which asks for it (Triton's tests do). The
        exception printers -- Python's `traceback` module (format_exc, logging, Python
        3.13's default hook, unittest), pytest's report, IPython and Jupyter -- would print
        each link with tilec's frames: they are told the cause Python itself recorded
        (none; with TILEC_DEBUG=1 the exception the error was made from), as Python's own
        printing in C reads it, so the error prints once, at its location. Those printers
        live in Python's library and installed packages, and no user code does: the reader
        is told apart by its file. No printer offers a hook for this (they follow
        `__cause__` unconditionally), so the reader is the only thing to go by."""
        cause = _EXCEPTION_CAUSE.__get__(self)
        if cause is not None or _read_by_library_code():
            return cause
        if "_cause" not in self.__dict__:
            self.__dict__["_cause"] = self._located_cause()
        return self.__dict__["_cause"]

    @__cause__.setter
    def __cause__(self, value) -> None:
        _EXCEPTION_CAUSE.__set__(self, value)

    def _located_cause(self) -> BaseException | None:
        if self.call_stack:
            inner = type(self)(self.message, self.location, self.call_stack[1:])
            inner.original = getattr(self, "original", None)
            return inner
        original = self.__dict__.get("original")
        if getattr(original, "caused_by_nothing", False) or (original is None and not self.has_cause):
            return None
        phrase = triton_phrase(self.message)
        if phrase is not None:
            cause = SemanticRuleError(phrase)
            return cause.with_traceback(_without_frontend_frames(original).__traceback__) if original else cause
        if original is not None:
            return _without_frontend_frames(original)
        return SemanticRuleError(self.message)  # made from a rule of the language: the sentence alone

    @property
    def error_message(self) -> str:
        """The sentence saying why, without the location (Triton's name for it)."""
        return self.message

    def with_call_site(self, site: SourceLocation) -> "CompilationError":
        error = type(self)(self.message, self.location, (site,) + self.call_stack)
        error.original = getattr(self, "original", None)  # the exception it was made from, if any
        return error

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
        return (type(self), (self.message, self.location, self.call_stack))


class UnsupportedLanguageConstruct(CompilationError):
    """Python the language does not take (a `try`, a nested `def`, `not` of a tuple):
    refused by the frontend itself, so it has no other error as its cause (Triton's class
    of the same name)."""

    has_cause = False


class OutOfResources(UserError):
    """A kernel needs more of a per-block resource (shared memory, registers) than the GPU has."""

    def __init__(self, resource: str, required: int, available: int, kernel: str = "", unit: str = "bytes"):
        self.resource, self.required, self.available, self.kernel, self.unit = resource, required, available, kernel, unit
        where = f" by kernel {kernel}" if kernel else ""
        super().__init__(f"out of resource: {resource}: {required} {unit} required{where}, "
                         f"but the GPU provides {available}. Reduce block sizes, num_warps or num_stages.")

    def __reduce__(self):
        return (OutOfResources, (self.resource, self.required, self.available, self.kernel, self.unit))


def dtype_argument_error(kernel: str, name: str, value: object) -> str:
    """The message for a type (tl.float16) passed to a parameter that is not tl.constexpr."""
    return (f"argument '{name}' of {kernel}() is the type {value!r}, which only a tl.constexpr parameter can take: "
            f"declare it `{name}: tl.constexpr`")


def too_many_arguments(function: str, takes: int, given: int, parameters: list[str],
                       keyword_only: list[str] | None = None) -> str:
    """The message for a call of `function` with `given` positional arguments where it
    takes `takes`, in Python's grammar ("takes 1 argument but 2 were given"): then the
    parameters, or those after `*` that only a keyword can pass."""
    were = "was" if given == 1 else "were"
    if keyword_only:
        noun = "positional argument" if takes == 1 else "positional arguments"
        verb = "is" if len(keyword_only) == 1 else "are"
        return (f"{function}() takes {takes} {noun} but {given} {were} given; {', '.join(keyword_only)} (after `*`) "
                f"{verb} passed by keyword only")
    noun = "argument" if takes == 1 else "arguments"
    return f"{function}() takes {takes} {noun} but {given} {were} given (its parameters: {', '.join(parameters)})"


class UsageError(UserError, TypeError, ValueError):
    """One of tilec's functions was given arguments it cannot take (tilec.compile's
    signature, an unknown target, ...); a TypeError and a ValueError, as LaunchError."""


class InternalError(TilecError, RuntimeError):
    """A tilec bug: the compiler produced invalid IR or a pass failed. Please report it."""


class LaunchError(UserError, TypeError, ValueError):
    """A kernel launch was given arguments it cannot accept (names the argument)."""


class ArgumentOverflowError(LaunchError, OverflowError):
    """An integer argument too large for any of the kernel's integer types (also an
    OverflowError, as Triton raises)."""


class LaunchOptionError(LaunchError, AssertionError):
    """A launch option out of its range, such as num_warps=3 (also an AssertionError, as
    Triton's checks of its options are assertions)."""


class TargetError(UserError, ValueError):
    """A target tilec cannot compile for: malformed ("hopper"), a GPU its LLVM does not
    know, or one older than the oldest it generates code for."""


class ToolkitError(TilecError, RuntimeError):
    """A piece of the CUDA toolkit (ptxas, libdevice) is missing, or ptxas refused the PTX."""


class ToolNotFoundError(ToolkitError):
    """ptxas or libdevice is not installed where tilec looks. The stages that need it are
    left out of a compiled kernel (`CompiledKernel.missing` says why); the stages before
    them are still produced."""
