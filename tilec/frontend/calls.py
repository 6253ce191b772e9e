"""Calls in a kernel, for the AST visitor (`CallRules`, a mixin of `CodeGenerator`).

A call is one of: a @jit function (or a library function of the language), inlined by
a new generator over its body; a builtin of the language, a tensor method or `tl.range`;
one of the Python builtins a kernel may use, on compile-time values (or as noted); a
method of a compile-time constant, run now. Anything else is an error that says what
the callee is (a plain Python function, another library's function, a class). A call
whose arguments do not fit says so as Python would, with the name the kernel wrote and
the parameter a misspelled keyword probably meant.
"""
from __future__ import annotations

import ast
import builtins as py
import difflib
import inspect
import math
import re
import sys
import types
from typing import Any

from .. import language as tl_package
from ..errors import CompilationError, too_many_arguments
from ..language import builtins as lang
from ..language import core as tl
from ..language.aggregates import BoundJitMethod, UserAggregate, is_user_aggregate_class
from ..language.compile_time import ConstexprFunction, constexpr_type, tuple_type
from ..language.core import _unwrap, constexpr, is_builtin, tensor
from .kernel_function import KernelFunction, kernel_function_of
from .early_returns import NO_RESULT, NO_RESULT_FUNCTION
from .loop_exits import FLAG_FUNCTION
from .undefined_results import call_key, has_paths_without_return, record_result

# Python builtins a kernel may call (on compile-time values, or as noted).
_ALLOWED_PYTHON_BUILTINS = {
    py.range, py.len, py.int, py.float, py.bool, py.abs, py.isinstance, py.getattr, py.hasattr,
    py.tuple, py.list, py.zip, py.enumerate, py.reversed, py.min, py.max, py.print, py.type, py.str,
    py.sorted, py.any, py.all, py.sum, py.divmod, py.round, py.pow,
}

MAX_CALL_DEPTH = 64


def is_namedtuple_class(value: Any) -> bool:
    """A `typing.NamedTuple` or `collections.namedtuple` class: a kernel may build one."""
    return isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")


def _sanitize(value: Any) -> Any:
    """Plain Python constants become constexprs; everything else is kept."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return constexpr(value)
    if isinstance(value, tl.dtype):
        return constexpr(value)
    return value


# Keywords that other array libraries use for a parameter of the language.
_KEYWORD_SYNONYMS = {"dim": "axis", "keepdim": "keep_dims", "keepdims": "keep_dims"}


def _binding_problem(fn: Any, args: list[Any], kwargs: dict[str, Any], message: str, spelled: str) -> str | None:
    """Python's `message` about a call of `fn` whose arguments do not fit its parameters,
    naming the function as the kernel spelled it, with the parameter a misspelled keyword
    probably meant; None when the arguments fit (the TypeError came from inside)."""
    try:
        signature = inspect.signature(fn)
        signature.bind(*args, **kwargs)
        return None
    except ValueError:
        return None  # no signature to compare with
    except TypeError:
        pass
    text = re.sub(r"^[\w.]+\(\) ", f"{spelled}() ", message)
    unexpected = re.search(r"unexpected keyword argument '(\w+)'", message)
    if unexpected:
        names = [name for name in signature.parameters if name != "self" and not name.startswith("_")]
        keyword = unexpected.group(1)
        close = _KEYWORD_SYNONYMS[keyword] if _KEYWORD_SYNONYMS.get(keyword) in names else _closest(keyword, names)
        text += f"; did you mean '{close}'?" if close else f"; its parameters: {', '.join(names)}"
    return text


def _closest(keyword: str, names: list[str]) -> str | None:
    """The parameter a misspelled keyword most likely meant (case aside), if any."""
    lowered = {name.lower(): name for name in names}
    close = difflib.get_close_matches(keyword.lower(), list(lowered), n=1)
    return lowered[close[0]] if close else None


def _arguments_problem(name: str, signature: inspect.Signature, args: list[Any], kwargs: dict[str, Any],
                       error: TypeError) -> str:
    """Why a call of the @jit function `name` does not bind (`error`, from
    `signature.bind`), said as a launch of a kernel says it."""
    params = list(signature.parameters.values())
    kinds = {p.kind for p in params}
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(positional) and inspect.Parameter.VAR_POSITIONAL not in kinds:
        keyword_only = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        return too_many_arguments(name, len(positional), len(args), [p.name for p in params], keyword_only)
    given = set(positional[:len(args)])
    for keyword in kwargs:
        if keyword in given:
            return f"{name}() got multiple values for argument '{keyword}'"
        if keyword not in signature.parameters and inspect.Parameter.VAR_KEYWORD not in kinds:
            close = _closest(keyword, [p.name for p in params])
            hint = f"; did you mean '{close}'?" if close else f"; its parameters: {', '.join(p.name for p in params)}"
            return f"{name}() got an unexpected keyword argument '{keyword}'{hint}"
    missing = [f"'{p.name}'" for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               and p.name not in given and p.name not in kwargs]
    if missing:
        names = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
        return f"{name}() is missing {'argument' if len(missing) == 1 else 'arguments'} {names}"
    return f"bad arguments for {name}(): {error}"


class CallRules:
    """The calls of `CodeGenerator` (whose state and helpers they use: `scope`, `fn`,
    `semantic`, `error`, ...)."""

    def visit_Call(self, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Name) and node.func.id == FLAG_FUNCTION:  # see loop_exits.py
            return self.semantic.to_tensor(bool(node.args[0].value))
        if isinstance(node.func, ast.Name) and node.func.id == NO_RESULT_FUNCTION:  # see early_returns.py
            return NO_RESULT
        callee = self.visit(node.func)
        fn = _unwrap(callee)
        if isinstance(callee, constexpr) and isinstance(fn, types.FunctionType) and kernel_function_of(fn) is None \
                and not is_builtin(fn) and not (fn.__module__ or "").startswith("tilec"):
            # `@tl.constexpr def acc_type(dt): ...` (FlagGems): a function kept as a
            # constant runs now, on compile-time values, as a constexpr_function (Triton's
            # constexpr.__call__ unwraps the arguments and calls it).
            fn = ConstexprFunction(fn)
        args = self._visit_elements(node.args)
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                mapping = _unwrap(self.visit(keyword.value))
                if not isinstance(mapping, dict):
                    raise self.error(keyword, "** needs a compile-time dict")
                kwargs.update(mapping)
            else:
                kwargs[keyword.arg] = self.visit(keyword.value)
        self.current_call = node  # where a builtin calling back into @jit code was called
        return self.call(fn, args, kwargs, node)

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        callee = kernel_function_of(fn)
        if callee is not None:
            return self.call_jit(callee, args, kwargs, node)
        if isinstance(fn, ConstexprFunction):  # runs now, on compile-time values (tilec.cdiv, ...)
            return self.call_language(fn, args, kwargs, node)
        if isinstance(fn, BoundJitMethod):  # `window.load(ptr)`: the aggregate is `self`
            return self.call_jit(kernel_function_of(fn.__func__), [fn.__self__, *args], kwargs, node)
        if is_user_aggregate_class(fn):
            try:
                return fn(*args, **kwargs)
            except (TypeError, AttributeError) as exc:
                raise self.error(node, str(exc)) from None
        if is_namedtuple_class(fn):  # a tuple whose items also have names, as a host namedtuple argument
            try:
                return fn(*args, **kwargs)
            except TypeError as exc:  # "Point.__new__() missing 1 required positional argument: 'y'"
                raise self.error(node, re.sub(r"^[\w.]*__new__\(\)", f"{fn.__name__}()", str(exc))) from None
        if fn is py.range:
            fn = lang.range
        if isinstance(fn, type) and issubclass(fn, lang.range):
            return self.call_language(fn, args, kwargs, node)
        if is_builtin(fn):
            return _sanitize(self.call_language(fn, args, kwargs, node))
        if fn in _ALLOWED_PYTHON_BUILTINS:
            return self.call_python_builtin(fn, args, kwargs, node)
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, UserAggregate):  # a plain method of an aggregate runs now, on the kernel's values
            return _sanitize(self.call_language(fn, args, kwargs, node))
        if isinstance(owner, (tensor, tl.dtype, constexpr, lang.range)):
            return _sanitize(self.call_language(fn, args, kwargs, node))
        if isinstance(owner, (bool, int, float, str, tuple)) and not any(
                isinstance(a, tensor) for a in [*args, *kwargs.values()]):
            # A method of a compile-time constant (`ACTIVATION.startswith("gelu")`) runs now.
            return _sanitize(fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()}))
        if fn is constexpr or fn is constexpr_type:
            if len(args) != 1 or kwargs or isinstance(args[0], tensor):
                raise self.error(node, f"tl.{fn.__name__}(value) takes one compile-time value")
            return constexpr(_unwrap(args[0])) if fn is constexpr else constexpr(constexpr_type(args[0]))
        if fn is tuple_type:  # `c.type == tl.tuple_type([tl.int32, tl.int32])`
            if any(isinstance(a, tensor) for a in [*args, *kwargs.values()]):
                raise self.error(node, "tl.tuple_type(types, fields=None) takes types known when compiling")
            return constexpr(self.call_language(fn, args, kwargs, node))
        if isinstance(fn, tl.dtype):
            raise self.error(node, f"{fn!r} is a type, not a function: use `x.to({fn!r})` to convert a value")
        if isinstance(fn, type) and issubclass(fn, tl.dtype):
            return fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
        name = getattr(fn, "__name__", repr(fn))
        library = self._module_of_call(node.func)
        if library is math and not any(isinstance(a, tensor) for a in [*args, *kwargs.values()]):
            # `math.log2(math.e)`, `math.ceil(N / 3)`: folded now, as Triton does
            return self.call_python_builtin(fn, args, kwargs, node)
        if library is not None:  # np.exp, math.sqrt, torch.relu: another library's function
            ours = getattr(tl_package, name, None)
            if is_builtin(ours) or isinstance(ours, tl.LibraryFunction):
                instead = f"use tl.{name}"
            elif isinstance(ours, tl.dtype):
                instead = f"convert with x.to(tl.{name})"
            else:
                instead = "a kernel calls only tl functions, @tilec.jit functions and a few Python builtins"
            raise self.error(node, f"'{ast.unparse(node.func)}' is a function of {library.__name__}, which cannot run "
                                   f"in a kernel; {instead}")
        if isinstance(fn, type):
            raise self.error(node, f"'{ast.unparse(node.func)}' is a class, and a kernel cannot make Python objects; "
                                   "it computes with tensors and compile-time constants")
        if not callable(fn):  # `x(4)` with a tensor x, `3(4)`
            what = f"a tensor ({fn.type})" if isinstance(fn, tensor) else f"a value of type {type(fn).__name__}"
            raise self.error(node.func, f"'{ast.unparse(node.func)}' is {what}, not a function: it cannot be called")
        raise self.error(node, f"'{name}' is a plain Python function and cannot be called from a kernel; "
                               "decorate it with @tilec.jit (or use a tl builtin)")

    def _module_of_call(self, func: ast.expr) -> Any:
        """The module (not the language's) that `func`, a dotted name such as `np.exp`,
        is read from; None for anything else."""
        base = func
        while isinstance(base, ast.Attribute):
            base = base.value
        if base is func or not isinstance(base, ast.Name) or base.id in self.scope:
            return None
        value = next((namespace[base.id] for namespace in (self._closure, self.fn.globals) if base.id in namespace),
                     None)
        if not isinstance(value, types.ModuleType) or value.__name__.startswith("tilec"):
            return None
        return sys.modules.get(value.__name__.partition(".")[0], value)

    def call_language(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """Calls a function of the language (a builtin, a tensor method, tl.range). Arguments
        that do not fit its parameters are reported with the name as the kernel wrote it
        (`tl.load() got an unexpected keyword argument 'msk'; did you mean 'mask'?`)."""
        try:
            return fn(*args, **kwargs)
        except TypeError as exc:
            problem = _binding_problem(fn, args, kwargs, str(exc), ast.unparse(node.func))
            if problem is None:
                raise  # raised inside the function: the general report
            raise self.error(node, problem) from None

    def call_python_builtin(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        if fn in (py.min, py.max) and any(isinstance(a, tensor) for a in args):
            if kwargs or len(args) < 2:
                raise self.error(node, f"{fn.__name__}() on tensors takes two or more positional arguments")
            combine = lang.minimum if fn is py.min else lang.maximum  # Triton's meaning of min/max
            result = args[0]
            for arg in args[1:]:
                result = combine(result, arg)
            return result
        if fn is py.print:
            self.semantic.python_print(args, kwargs)
            return None
        if fn is py.isinstance:
            value, classes = args[0], _unwrap(args[1])
            return constexpr(isinstance(value if isinstance(value, tensor) else _unwrap(value), classes))
        if fn in (py.len,) and args and isinstance(args[0], tensor):
            if not args[0].type.is_block():
                raise self.error(node, f"len() needs a block or a tuple, and this is a scalar ({args[0].type})")
            return constexpr(args[0].type.shape[0])
        if any(isinstance(a, tensor) for a in args) and fn in (py.int, py.float, py.bool, py.abs):
            if fn is py.abs:
                return self.semantic.abs(args[0])
            raise self.error(node, self.needs_constexpr(f"{fn.__name__}() needs a compile-time value",
                                                        args[0], "convert tensors with .to(...)"))
        raw_args = [a if isinstance(a, tensor) else _unwrap(a) for a in args]
        raw_kwargs = {k: v if isinstance(v, tensor) else _unwrap(v) for k, v in kwargs.items()}
        return _sanitize(fn(*raw_args, **raw_kwargs))

    def call_jit(self, callee: KernelFunction, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        # Calls are inlined: a function may call itself with other constants or argument
        # types (a recursion on a constexpr that a static `if` ends, as Triton allows),
        # but a call that repeats an active one exactly would inline forever.
        key = call_key(callee, args, kwargs)
        if any(active is callee and (key is None or active_key in (None, key))
               for active, active_key in self.active_calls):
            raise self.error(node, f"{callee.__name__}() calls itself (directly or through other functions) with the "
                                   "same argument types and constants; recursion is not supported in kernels "
                                   "unless a constexpr argument or an argument's type changes")
        if self.depth >= MAX_CALL_DEPTH:
            raise self.error(node, f"calls nest more than {MAX_CALL_DEPTH} deep")
        try:
            bound = callee.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(node, _arguments_problem(callee.__name__, callee.signature, args, kwargs, exc)) from None
        bound.apply_defaults()
        # A called function's `tl.constexpr` annotation is a hint, as in Triton: a value known
        # only at run time is passed as it is, and the body refuses it where it needs a
        # constant (CodeGenerator.needs_constexpr names the annotated parameter then).
        scope = {name: _sanitize(value) for name, value in bound.arguments.items()}
        generator = type(self)(callee, self.builder, self.semantic, scope, is_kernel=False, depth=self.depth + 1,
                                  active_calls=self.active_calls + ((callee, key),))
        try:
            with tl.activate_caller(generator.call_from_language):
                generator.visit(callee.parse())
        except CompilationError as exc:
            raise exc.with_call_site(self.location(node)) from None
        if has_paths_without_return(callee):  # for the interpreter (undefined_results.py)
            record_result(callee, call_key(callee, args, kwargs), generator.return_value)
        return generator.return_value

    def call_from_language(self, fn: Any, args: list[Any], kwargs: dict[str, Any] | None = None) -> Any:
        """Calls a @jit function on behalf of a builtin (a reduction's combine function, a
        tensor method such as x.sort())."""
        callee = kernel_function_of(fn)
        if callee is None:
            return fn(*args, **(kwargs or {}))
        return self.call_jit(callee, args, dict(kwargs or {}), self.current_call)
