"""Python's `min`, `max`, `abs` and `print` inside interpreted kernels, as the compiler reads them.

The compiler maps `min(a, b, ...)` and `max(a, b, ...)` with a tensor among the
arguments to `tl.minimum`/`tl.maximum` (folded left to right), and `abs(x)` of a tensor
to `tl.abs`, and `print(...)` to `tl.device_print`. The interpreter runs the kernel as Python (the
frontend's rewritten AST, frontend/interpretable.py), where those names
would be Python's builtins (which compare with `<` and call `bool()` on a tensor). So
the launcher runs a *copy* of each kernel function whose builtins are the tensor-aware
versions below (a function's builtins come from its globals' `__builtins__`): the
rewritten code, globals copied (with `__builtins__` replaced, `range` being `tl.range`,
and the closure's values added), so a module's own global `min` still wins, as it does
for the compiler. The @jit functions a kernel calls are
reached through its globals and closure, and through modules it reads them from; those
references are replaced by proxies that run copies made the same way, so nested calls
see the same builtins. Non-tensor arguments fall back to Python's builtins.

A copy of a function that returns a value on some paths and reaches its end on others
notes the signature of each call while it runs: the end of such a path gives zeros of
the type the compiler gave that call's result (frontend/undefined_results.py).
"""
from __future__ import annotations

import builtins as _py
import types
from typing import Any, Callable

from ..frontend.interpretable import GLOBALS as INTERPRETER_GLOBALS
from ..frontend.interpretable import inner_codes, interpreted_code
from ..frontend.early_returns import NO_RESULT_FUNCTION
from ..frontend.kernel_function import KernelFunction, kernel_function_of
from ..frontend.undefined_results import NOTHING, call_key, has_paths_without_return, recorded_result, undefined_like
from ..language import builtins as lang
from ..language.core import LibraryFunction, TilecSemanticError, _unwrap, constexpr, current_semantic, tensor


def _fold(name: str, builtin: Callable, combine: str) -> Callable:
    def tensor_aware(*args, **kwargs):
        if any(isinstance(a, tensor) for a in args):
            if kwargs or len(args) < 2:
                raise TilecSemanticError(f"{name}() on tensors takes two or more positional arguments")
            result = args[0]
            for arg in args[1:]:
                result = getattr(lang, combine)(result, arg)  # tl.minimum/tl.maximum's promotion
            return result
        if any(isinstance(a, constexpr) for a in args):
            return builtin(*(_unwrap(a) for a in args), **kwargs)
        return builtin(*args, **kwargs)

    tensor_aware.__name__ = tensor_aware.__qualname__ = name
    tensor_aware.__doc__ = builtin.__doc__
    return tensor_aware


def _abs(x):
    if isinstance(x, tensor):
        return current_semantic().abs(x)
    return _py.abs(_unwrap(x))


def _print(*args, **kwargs):
    """print() in a kernel prints at run time, per element (tl.device_print), as compiled."""
    current_semantic().python_print(args, kwargs)


def _unwrapping(fn):
    """A Python builtin that reads constants: its constexpr arguments (a string literal in a
    kernel is one: `hasattr(x, "dtype")`) unwrapped, as the compiler calls it."""
    def call(*args, **kwargs):
        return fn(*(a if isinstance(a, tensor) else _unwrap(a) for a in args),
                  **{k: v if isinstance(v, tensor) else _unwrap(v) for k, v in kwargs.items()})
    call.__name__ = fn.__name__
    return call


KERNEL_BUILTINS: dict[str, Any] = dict(vars(_py))
KERNEL_BUILTINS.update(min=_fold("min", _py.min, "minimum"), max=_fold("max", _py.max, "maximum"), abs=_abs,
                       print=_print, range=lang.range,  # range: a runtime loop, as compiled
                       hasattr=_unwrapping(_py.hasattr), getattr=_unwrapping(_py.getattr),
                       isinstance=_unwrapping(_py.isinstance))  # `isinstance(BLOCK, int)`: the value's class


# What runs as a patched copy: @jit functions and the language's library functions
# (tl.sort, tl.rand, ...), which the interpreter runs the same way.
DEVICE_FUNCTIONS = (KernelFunction, LibraryFunction)


class _JitCall(KernelFunction):
    """Stands for a @jit (or library) function inside an interpreted kernel: calls its
    patched copy.

    A `KernelFunction` (so `isinstance` checks still hold) whose other attributes are the
    original's.
    """

    def __init__(self, kernel: KernelFunction | LibraryFunction, functions: "KernelFunctions"):  # noqa: D107 - no parsing
        self.__dict__["_kernel"] = kernel
        self.__dict__["_functions"] = functions

    def __call__(self, *args, **kwargs):
        return self._functions.get(self._kernel)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_kernel"], name)

    def __repr__(self) -> str:
        return repr(self._kernel)


class _ModuleView:
    """Stands for a module holding @jit functions: those attributes become `_JitCall`s."""

    def __init__(self, module: types.ModuleType, functions: "KernelFunctions"):
        self.__module = module
        self.__functions = functions

    def __getattr__(self, name: str) -> Any:
        return self.__functions.wrap(getattr(self.__module, name))

    def __repr__(self) -> str:
        return repr(self.__module)


class KernelFunctions:
    """The patched copies of one launch's kernel and the @jit functions it reaches.

    Copies are made on first use and kept for the launch; `codes` maps the code object of
    every kernel function (its thunks included) to the KernelFunction it runs, so that
    error reports find kernel frames and their source lines.
    """

    def __init__(self):
        self._copies: dict[int, Callable] = {}
        self._globals: dict[int, dict] = {}
        self._modules: dict[int, bool] = {}
        self._calls: list[tuple[KernelFunction, Any]] = []  # the running functions with paths without `return`
        self.codes: dict = {}

    def get(self, kernel: KernelFunction | LibraryFunction) -> Callable:
        if isinstance(kernel, _JitCall):
            kernel = kernel._kernel
        copy = self._copies.get(id(kernel))
        if copy is None:
            source = kernel_function_of(kernel)  # a library function's KernelFunction
            fn = source.fn
            code = interpreted_code(source)
            names = self._patched_globals(fn.__globals__)
            if fn.__closure__ is not None:  # the rewritten code reads them as globals
                names = dict(names)
                for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                    names[name] = self._cell(cell).cell_contents if _filled(cell) else None
            copy = types.FunctionType(code, names, fn.__name__, fn.__defaults__)
            copy.__kwdefaults__ = fn.__kwdefaults__
            copy.__qualname__ = fn.__qualname__
            if has_paths_without_return(source):
                copy = self._tracking_calls(copy, source)
            self._copies[id(kernel)] = copy
            self.codes.update(dict.fromkeys(inner_codes(code), source))
        return copy

    def _tracking_calls(self, copy: Callable, source: KernelFunction) -> Callable:
        """`copy` of a function with paths that end without `return`, noting each call's
        signature while it runs, for `_undefined_result` (undefined_results.py)."""
        def call(*args, **kwargs):
            self._calls.append((source, call_key(source, list(args), kwargs)))
            try:
                return copy(*args, **kwargs)
            finally:
                self._calls.pop()
        return call

    def _undefined_result(self) -> Any:
        """The result of a path without `return` (the rewritten code's NO_RESULT_FUNCTION
        call): zeros of the type the compiler gave the call it ends, None without one."""
        source, key = self._calls[-1]
        template = recorded_result(source, key)
        if template is None or template is NOTHING:
            return None
        return undefined_like(template, current_semantic())

    def wrap(self, value: Any) -> Any:
        """`value` as a kernel sees it: @jit functions become proxies, (user) modules
        holding some become views."""
        if isinstance(value, DEVICE_FUNCTIONS):
            return _JitCall(value, self)
        if isinstance(value, types.ModuleType):
            holds = self._modules.get(id(value))
            if holds is None:
                holds = self._modules[id(value)] = _holds_kernels(value)
            if holds:
                return _ModuleView(value, self)
        return value

    def call(self, fn: Any, args: list, kwargs: dict | None = None) -> Any:
        """The interpreter's `tl.call_kernel_function` (a combine function of a reduction or
        a scan called by the semantic layer, a tensor method such as x.sort()): @jit
        functions run as patched copies."""
        fn = _unwrap(fn)  # a @jit function passed as a constexpr argument
        if isinstance(fn, DEVICE_FUNCTIONS):
            return self.get(fn)(*args, **(kwargs or {}))
        return getattr(fn, "fn", fn)(*args, **(kwargs or {}))

    def _cell(self, cell: types.CellType) -> types.CellType:
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell (a name the enclosing function assigns later)
            return types.CellType()
        return types.CellType(self.wrap(contents))

    def _patched_globals(self, original: dict) -> dict:
        patched = self._globals.get(id(original))
        if patched is None:
            patched = {name: self.wrap(value) for name, value in original.items()}
            patched["__builtins__"] = KERNEL_BUILTINS
            patched.update(INTERPRETER_GLOBALS)
            patched[NO_RESULT_FUNCTION] = self._undefined_result
            self._globals[id(original)] = patched
        return patched


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _holds_kernels(module: types.ModuleType) -> bool:
    """True for user modules with @jit functions (never for tilec's own modules)."""
    if module.__name__.split(".")[0] in ("tilec", "numpy", "torch", "builtins", "math"):
        return False
    return any(isinstance(value, DEVICE_FUNCTIONS) for value in list(vars(module).values()))


__all__ = ["DEVICE_FUNCTIONS", "KERNEL_BUILTINS", "KernelFunctions"]
