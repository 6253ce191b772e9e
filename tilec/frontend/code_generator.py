"""The AST visitor: walks a @jit function's Python AST and drives the semantic layer.

It owns what the language builtins cannot see: names and scopes, constexpr folding,
structured control flow (static and runtime `if`, `for` loops with loop-carried
values), calls (in calls.py: @jit functions are inlined), and turning every failure into
a `CompilationError` that points at the offending source.
"""
from __future__ import annotations

import ast
import builtins as py
import collections.abc
import operator
import reprlib
import types
from typing import Any, Callable, Sequence

from mlir import ir

from ..dialects.tile import FLATTEN_ATTR, WARP_SPECIALIZE_ATTR
from ..errors import CompilationError, SourceLocation, UnsupportedLanguageConstruct
from ..language import builtins as lang
from ..language import core as tl
from ..language.aggregates import UserAggregate
from ..language.block_pointer import BlockPointer
from ..language.core import (ConstexprRequired, TilecSemanticError, _unwrap, constexpr, is_builtin,
                              is_constexpr_annotation, tensor)
from ..language.semantic import Semantic, computation_type, python_scalar_type
from .calls import _ALLOWED_PYTHON_BUILTINS, CallRules, _sanitize
from . import python_rules as rules
from .python_rules import assigned_names as _assigned_names
from .ir_builder import IRBuilder
from .kernel_function import KernelFunction
from .early_returns import ENDS_FUNCTION, NO_RESULT, RESULT_NAME
from .loop_exits import BREAK_FLAG_ATTRIBUTE
from .undefined_results import undefined_like

_BINARY_OPERATORS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}

_OPERATOR_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
}



_UNSUPPORTED_STATEMENTS = {
    ast.Try: "try/except is not supported in kernels",
    ast.With: "`with` is not supported in kernels",
    ast.ClassDef: "classes cannot be defined inside kernels",
    ast.FunctionDef: "functions cannot be defined inside kernels; define a separate @tilec.jit function (Triton: "
                     "nested function definitions are not allowed inside a @triton.jit kernel)",
    ast.AsyncFunctionDef: "async functions cannot be defined inside kernels",
    ast.Raise: "`raise` is not supported in kernels; use tl.static_assert for compile-time checks",
    ast.Global: "`global` is not supported in kernels",
    ast.Nonlocal: "`nonlocal` is not supported in kernels",
    ast.Delete: "`del` is not supported in kernels",
    ast.Import: "imports are not allowed inside kernels; import at module level",
    ast.ImportFrom: "imports are not allowed inside kernels; import at module level",
}

_UNSUPPORTED_EXPRESSIONS = {
    ast.Lambda: "lambda functions are not supported in kernels; use a @tilec.jit function",
    ast.Yield: "`yield` is not supported in kernels",
    ast.YieldFrom: "`yield from` is not supported in kernels",
    ast.Await: "`await` is not supported in kernels",
    ast.SetComp: "set comprehensions are not supported in kernels",
    ast.DictComp: "dict comprehensions are not supported in kernels",
    ast.GeneratorExp: "generator expressions are not supported in kernels",
    ast.Set: "sets are not supported in kernels",
    ast.Dict: "dicts are not supported in kernels",
    ast.NamedExpr: "the walrus operator `:=` is not supported in kernels",
}


def _is_defined(scope: dict, name: str) -> bool:
    """Whether `name` holds a value in `scope` (not absent, not an _Undefined marker)."""
    return name in scope and not isinstance(scope[name], _Undefined)


class _Mismatch(Exception):
    """Two paths give a name values that cannot be made one type (CodeGenerator._join)."""


def _plain_tuple(value: tuple) -> bool:
    return type(value) in (tuple, tl.tuple_value, tl.list_value)


def _same_tuple(template: tuple, items: list) -> tuple:
    """`items` in a tuple of `template`'s kind (a namedtuple stays one)."""
    if hasattr(template, "_fields"):
        return type(template)(*items)
    return type(template)(items) if isinstance(template, (tl.tuple_value, tl.list_value)) else tuple(items)


class _Undefined:
    """A name that exists in some control-flow path only; using it is an error."""

    def __init__(self, reason: str):
        self.reason = reason


def _flatten(value: Any) -> tuple[list[tensor], Any]:
    """The tensors inside `value` and its structure (leaf types and static parts).

    Two values with equal structures can be exchanged in control flow: their tensors
    correspond one to one and have the same types.
    """
    if isinstance(value, tensor):
        return [value], ("tensor", value.type)
    if isinstance(value, tl.aggregate):
        leaves, parts = [], []
        for field in value.tilec_fields():
            child_leaves, child_structure = _flatten(field)
            leaves.extend(child_leaves)
            parts.append(child_structure)
        return leaves, (type(value).__name__, tuple(parts))
    if isinstance(value, tuple):
        leaves, parts = [], []
        for item in value:
            child_leaves, child_structure = _flatten(item)
            leaves.extend(child_leaves)
            parts.append(child_structure)
        return leaves, ("tuple", tuple(parts))
    raw = _unwrap(value)
    try:
        hash(raw)
        return [], ("static", type(raw).__name__, raw)
    except TypeError:
        return [], ("static", type(raw).__name__, id(raw))


def _rebuild(template: Any, leaves: Any) -> Any:
    """`template` with its tensors replaced, in order, by those of the iterator `leaves`."""
    if isinstance(template, tensor):
        return next(leaves)
    if isinstance(template, tl.aggregate):
        return template.tilec_replace([_rebuild(field, leaves) for field in template.tilec_fields()])
    if isinstance(template, tuple):
        return _same_tuple(template, [_rebuild(item, leaves) for item in template])
    return template


def _describe(structure: Any) -> str:
    if structure[0] == "tensor":
        return str(structure[1])
    if structure[0] == "static":
        return repr(structure[2])
    return f"{structure[0]}(" + ", ".join(_describe(p) for p in structure[1]) + ")"


class CodeGenerator(CallRules, ast.NodeVisitor):
    """Generates ttir for one function body (a kernel, or an inlined @jit callee)."""

    def __init__(self, fn: KernelFunction, builder: IRBuilder, semantic: Semantic, scope: dict[str, Any], *,
                 is_kernel: bool, depth: int = 0, active_calls: tuple = ()):
        self.fn = fn
        self.active_calls = active_calls or ((fn, None),)  # (function, call_key) of each call being inlined
        self.current_call: ast.AST = fn.parse()
        self.builder = builder
        self.semantic = semantic
        self.scope = scope
        self.is_kernel = is_kernel
        self.depth = depth
        self.return_value: Any = None
        self.has_returned = False
        self.control_depth = 0
        self.loop_depth = 0
        self._closure = fn.closure_values()

    # ------------------------------------------------------------------ errors and locations
    def location(self, node: ast.AST) -> SourceLocation:
        return self.fn.location(node)

    def error(self, node: ast.AST, message: str) -> CompilationError:
        return CompilationError(message, self.location(node))

    def rule(self, node: ast.AST, fn: Callable, *args: Any) -> Any:
        """`fn(*args)`, one of python_rules' (shared with the interpreter), its errors
        located at `node`."""
        try:
            return fn(*args)
        except ConstexprRequired:
            raise
        except TilecSemanticError as exc:
            err = self.error(node, str(exc))
            err.original = exc
            raise err from None

    def visit(self, node: ast.AST) -> Any:
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return super().visit(node)
        loc = ir.Location.file(self.fn.filename, self.fn.file_line(lineno), node.col_offset + 1 + self.fn.indent)
        try:
            with loc:
                return super().visit(node)
        except CompilationError:
            raise
        except ConstexprRequired as exc:
            err = self.error(node, self.needs_constexpr(exc.message, exc.value, exc.hint))
            err.original = exc  # its __cause__
            raise err from None
        except TilecSemanticError as exc:
            err = self.error(node, str(exc))
            err.original = exc
            raise err from None
        except RecursionError:
            raise self.error(node, "the kernel nests too deeply to compile") from None
        except Exception as exc:  # any other failure still points at the source
            err = self.error(node, f"{type(exc).__name__}: {exc}")
            err.original = exc
            raise err from None

    def needs_constexpr(self, message: str, value: Any, hint: str = "mark it tl.constexpr") -> str:
        """`message` about a run-time `value` where a compile-time one is needed, ending
        with how to fix it: when `value` is still what a parameter of this function
        received (not tl.constexpr), declare that parameter tl.constexpr; else `hint`."""
        names = [(name, index in self.fn.constexprs) for index, name in enumerate(self.fn.arg_names)
                 if value is not None and self.scope.get(name) is value]
        if not names:
            return f"{message}; {hint}"
        name, annotated = names[0]
        if annotated:  # only a called function's parameter can be (see CallRules.call_jit)
            return (f"{message}; '{name}' is annotated tl.constexpr in {self.fn.__name__}, but the caller passed a "
                    "value known only at run time (the annotation of a called @jit function's parameter does not "
                    "make its argument constant): pass a compile-time value")
        return (f"{message}; '{name}' is a parameter of {self.fn.__name__} without tl.constexpr: declare it "
                f"`{name}: tl.constexpr`")

    def generic_visit(self, node: ast.AST) -> Any:
        message = _UNSUPPORTED_STATEMENTS.get(type(node)) or _UNSUPPORTED_EXPRESSIONS.get(type(node))
        raise UnsupportedLanguageConstruct(message or f"unsupported syntax in a kernel: {type(node).__name__}",
                                           self.location(node))

    # ------------------------------------------------------------------ names
    def lookup(self, name: str, node: ast.AST) -> Any:
        if name in self.scope:
            value = self.scope[name]
            if isinstance(value, _Undefined):
                raise self.error(node, f"name '{name}' is not defined here: {value.reason}")
            return value
        if name in self._closure:
            return self._outside_value(name, self._closure[name], node, captured=True)
        if name in self.fn.globals:
            return self._outside_value(name, self.fn.globals[name], node, captured=False)
        builtin = getattr(py, name, None)
        if builtin is not None and builtin in _ALLOWED_PYTHON_BUILTINS:
            return builtin
        if builtin is not None:
            raise self.error(node, f"the Python builtin '{name}' cannot be used in a kernel")
        raise self.error(node, f"name '{name}' is not defined")

    def _outside_value(self, name: str, value: Any, node: ast.AST, *, captured: bool) -> Any:
        """A name the function reads from outside itself: a global of its module, or a
        variable of the function it was defined in (`captured`). As in Triton, only what
        is fixed when the kernel is compiled: tl.constexpr values (also a global annotated
        `NAME: tl.constexpr = ...`), None, dtypes, modules, @jit and language functions;
        classes and other callables are checked when called. A plain number, string or
        tuple is refused: the kernel would go on using the value it had when compiled."""
        if isinstance(value, (constexpr, KernelFunction, tl.dtype, types.ModuleType)) or is_builtin(value):
            return value
        if isinstance(value, type) or callable(value):
            return value  # classes and functions are checked when called
        if value is None:
            return constexpr(None)
        annotations = {} if captured else self.fn.globals.get("__annotations__", {})
        if is_constexpr_annotation(annotations.get(name)):  # `BLOCK: tl.constexpr = 128`
            return constexpr(value)
        shown = reprlib.repr(value)
        if captured:
            raise self.error(node, f"'{name}' ({shown}) is a variable of the function that defines "
                                   f"{self.fn.__name__}, and a kernel reads from outside itself only constants: it "
                                   f"would go on using the value it had when compiled; pass it as an argument, or make "
                                   f"it `{name} = tl.constexpr(...)` (Triton: {name} is not defined)")
        triton = f"(Triton: Cannot access global variable {name} from within @jit'ed function)"
        if isinstance(value, list):
            items = shown[1:-1] + "," * (len(value) == 1)
            raise self.error(node, f"global '{name}' of type list cannot be used in a kernel: a kernel reads "
                                   "globals once, when it is compiled, so they must be constants; make it a tuple "
                                   f"wrapped in tl.constexpr: `{name} = tl.constexpr(({items}))` {triton}")
        if isinstance(value, (bool, int, float, str, tuple)):
            raise self.error(node, f"global variable '{name}' ({shown}) is not a constant, so a kernel cannot read "
                                   "it: it would go on using the value it had when compiled; make it one with "
                                   f"`{name} = tl.constexpr(...)` or `{name}: tl.constexpr = ...`, or pass it as an "
                                   f"argument {triton}")
        raise self.error(node, f"global '{name}' of type {type(value).__name__} cannot be used in a kernel; "
                               f"only constants (tl.constexpr), @jit functions and modules can {triton}")

    def set_name(self, name: str, value: Any) -> None:
        self.scope[name] = _sanitize(value)

    # ------------------------------------------------------------------ statements
    def visit_block(self, statements: Sequence[ast.stmt]) -> None:
        for stmt in statements:
            if self.has_returned:
                break
            self.visit(stmt)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node is not self.fn.parse():
            raise UnsupportedLanguageConstruct(_UNSUPPORTED_STATEMENTS[ast.FunctionDef], self.location(node))
        self.visit_block(node.body)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # docstring
        self.visit(node.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return None
        value = self.visit(node.value)
        annotation = self.visit(node.annotation) if not isinstance(node.annotation, ast.Constant) else node.annotation.value
        if (tl.is_constexpr_annotation(_unwrap(annotation)) or _unwrap(annotation) is constexpr) and \
                not isinstance(value, tensor):
            # A value known only at run time stays one, as in Triton (FlagGems' sort writes
            # `CTA_TILE_N: tl.constexpr = TILE_N * tiles_n_per_cta` and only computes with
            # it); where a constant is needed, that use says so and where the value came from.
            value = constexpr(value)
        self.assign(node.target, value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "augmented assignment only works on plain names in kernels "
                                   "(tensors are immutable; item assignment is not supported)")
        current = self.lookup(node.target.id, node.target)
        value = self.binary(node.op, current, self.visit(node.value), node)
        self.set_name(node.target.id, value)

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.set_name(target.id, value)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            items = _unwrap(value)
            names = len(target.elts)
            starred = next((elt for elt in target.elts if isinstance(elt, ast.Starred)), None)
            if starred is not None:
                raise self.error(starred, "starred assignment targets are not supported in kernels: unpack every "
                                          "value into a name of its own, or index the tuple (`rest = t[1:]`)")
            if isinstance(items, tensor) or not isinstance(items, (tuple, list)):
                what = "tensor" if isinstance(items, tensor) else type(items).__name__
                raise self.error(target, f"cannot unpack a {what} into {names} names (Triton: cannot unpack "
                                         "non-iterable value); only a tuple unpacks")
            if len(items) > names:
                raise self.error(target, f"cannot unpack {len(items)} values into {names} names (too many values to "
                                         f"unpack (expected {names}))")
            if len(items) < names:
                raise self.error(target, f"cannot unpack {len(items)} values into {names} names (not enough values "
                                         f"to unpack (expected {names}, got {len(items)}))")
            for elt, item in zip(target.elts, items):
                self.assign(elt, item)
            return
        if isinstance(target, ast.Subscript):
            base = self.scope.get(target.value.id) if isinstance(target.value, ast.Name) else None
            if isinstance(_unwrap(base), tuple):
                what, item = ("list", "[x]") if isinstance(_unwrap(base), tl.list_value) else ("tuple", "(x,)")
                raise self.error(target, f"item assignment is not supported: a {what} in a kernel is constant; "
                                         f"make a new one instead, e.g. `t = t[:i] + {item} + t[i + 1:]` (Triton: "
                                         "__setitem__ is not supported in triton)")
            raise self.error(target, "item assignment is not supported: tensors are immutable in kernels; build a "
                                     "new tensor with tl.where (Triton: __setitem__ is not supported in triton)")
        if isinstance(target, ast.Attribute):
            raise self.error(target, "attribute assignment is not supported in kernels; an aggregate is immutable: "
                                     "make a changed copy with tl.aggregate_replace(value, field=...) (Triton: "
                                     "Attribute assignment is not supported in triton)")
        raise self.error(target, f"cannot assign to {type(target).__name__}")

    def visit_Return(self, node: ast.Return) -> None:
        if self.loop_depth:
            raise self.error(node, "`return` inside a loop is not supported; leave the loop with `break` and return "
                                   "after it (Triton: Cannot have `return` statements inside `while` or `for` "
                                   "statements in triton)")
        if self.control_depth:
            # early_returns.py moved every other return to the end of the function
            raise self.error(node, "this `return` gives a value, but another path reaches the end of the "
                                   "function without one; return a value on every path")
        value = self.visit(node.value) if node.value is not None else None
        if value is NO_RESULT:  # every path taken ends without a `return` (early_returns.py)
            value = None
        if self.is_kernel and _unwrap(value) is not None:
            raise self.error(node, "a kernel cannot return a value; store results through a pointer")
        self.return_value = value
        self.has_returned = True

    def visit_Assert(self, node: ast.Assert) -> None:
        test = self.visit(node.test)
        message = _unwrap(self.visit(node.msg)) if node.msg is not None else ""
        if isinstance(test, tensor):
            self.semantic.device_assert(test, message)
            return
        if not _unwrap(test):
            raise self.error(node, f"assertion failed: {message}" if message else "assertion failed")

    # ------------------------------------------------------------------ if
    def visit_If(self, node: ast.If) -> None:
        cond = self.rule(node.test, rules.condition, self.visit(node.test), "an `if`")
        if not isinstance(cond, tensor):
            self.visit_block(node.body if _unwrap(cond) else node.orelse)
            return
        self._runtime_if(node, cond)

    def _runtime_if(self, node: ast.If, cond: tensor) -> None:
        before = dict(self.scope)
        draft = self.builder.create_if(cond.handle, [])
        then_block = draft.regions[0].blocks[0]
        else_block = draft.regions[1].blocks[0]
        self.control_depth += 1
        try:
            self.scope = dict(before)
            with ir.InsertionPoint(then_block):
                self.visit_block(node.body)
            then_scope = self.scope
            self.scope = dict(before)
            with ir.InsertionPoint(else_block):
                self.visit_block(node.orelse)
            else_scope = self.scope
        finally:
            self.control_depth -= 1

        merged = dict(before)
        yielded: list[tuple[str, Any, list[tensor], list[tensor]]] = []  # name, template, then / else tensors
        ends_function = getattr(node, ENDS_FUNCTION, False)  # only the result is live after it
        for name in dict.fromkeys(list(then_scope) + list(else_scope)):
            if ends_function and name != RESULT_NAME:
                continue  # dead: the function's remaining code ran in the branches
            in_then, in_else = name in then_scope, name in else_scope
            if not (in_then and in_else):
                merged[name] = _Undefined("it is assigned in only one branch of an `if` above")
                continue
            tv, ev = then_scope[name], else_scope[name]
            if tv is ev:
                merged[name] = tv
                continue
            if isinstance(tv, _Undefined) or isinstance(ev, _Undefined):
                merged[name] = tv if isinstance(tv, _Undefined) else ev
                continue
            if tv is NO_RESULT or ev is NO_RESULT:  # a path of a function that returns no value (poison)
                with ir.InsertionPoint(then_block if tv is NO_RESULT else else_block):
                    tv, ev = (undefined_like(ev, self.semantic), ev) if tv is NO_RESULT \
                        else (tv, undefined_like(tv, self.semantic))
            try:
                tv, ev = self._join(tv, ev, name, node, then_block, else_block)
            except _Mismatch:
                raise self.error(self._mismatch_site(node, name), self._mismatch(name, tv, ev)) from None
            then_leaves, then_structure = _flatten(tv)
            else_leaves, else_structure = _flatten(ev)
            if then_structure != else_structure:
                raise self.error(self._mismatch_site(node, name), self._mismatch(name, tv, ev))
            if then_leaves:
                yielded.append((name, tv, then_leaves, else_leaves))
            else:
                merged[name] = tv

        then_values = [leaf for _, _, leaves, _ in yielded for leaf in leaves]
        else_values = [leaf for _, _, _, leaves in yielded for leaf in leaves]
        with ir.InsertionPoint(then_block):
            self.builder.scf_yield([v.handle for v in then_values])
        with ir.InsertionPoint(else_block):
            self.builder.scf_yield([v.handle for v in else_values])
        if yielded:
            final = self._rebuild_if(draft, [v.handle.type for v in then_values])
            results = iter(tensor(result, v.type) for result, v in zip(final.results, then_values))
            for name, template, _, _ in yielded:
                merged[name] = _rebuild(template, results)
        self.scope = merged

    def _join(self, tv: Any, ev: Any, name: str, node: ast.AST, then_block: ir.Block, else_block: ir.Block,
              in_aggregate: bool = False) -> tuple[Any, Any]:
        """The values of `name` at the end of a run-time `if`'s two branches, made of one
        type: equal constants stay, a constant number meeting a tensor or another number
        becomes a tensor (`_promote`; not in an aggregate, whose constant fields are part
        of its type), tuples and aggregates join item by item. Raises _Mismatch where they
        cannot be made one type."""
        if tv is ev:
            return tv, ev
        if isinstance(tv, tuple) and isinstance(ev, tuple):
            if len(tv) != len(ev) or type(tv) is not type(ev) and not (_plain_tuple(tv) and _plain_tuple(ev)):
                raise _Mismatch()
            pairs = [self._join(a, b, name, node, then_block, else_block, in_aggregate) for a, b in zip(tv, ev)]
            return _same_tuple(tv, [a for a, _ in pairs]), _same_tuple(ev, [b for _, b in pairs])
        if isinstance(tv, tl.aggregate) or isinstance(ev, tl.aggregate):
            if type(tv) is not type(ev):
                raise _Mismatch()
            pairs = [self._join(a, b, name, node, then_block, else_block, in_aggregate=True)
                     for a, b in zip(tv.tilec_fields(), ev.tilec_fields())]
            return tv.tilec_replace([a for a, _ in pairs]), ev.tilec_replace([b for _, b in pairs])
        numbers = (bool, int, float)
        if not isinstance(tv, tensor) and not isinstance(ev, tensor):
            if isinstance(tv, constexpr) and isinstance(ev, constexpr) and tv.value == ev.value:
                return tv, tv
            if in_aggregate or not (isinstance(_unwrap(tv), numbers) and isinstance(_unwrap(ev), numbers)):
                raise _Mismatch()  # strings, None, functions: equal on both paths or refused
        elif isinstance(tv, tensor) and isinstance(ev, tensor):
            if tv.type != ev.type:
                raise _Mismatch()
            return tv, ev
        elif in_aggregate or not isinstance(_unwrap(tv if not isinstance(tv, tensor) else ev), numbers):
            raise _Mismatch()  # None (or another constant) meeting a tensor
        with ir.InsertionPoint(then_block):
            promoted_then = self._promote(tv, ev, name, node)
        with ir.InsertionPoint(else_block):
            promoted_else = self._promote(ev, tv if not isinstance(tv, tensor) and not isinstance(ev, tensor)
                                          else promoted_then, name, node)
        if promoted_then.type != promoted_else.type:
            raise _Mismatch()
        return promoted_then, promoted_else

    @staticmethod
    def _mismatch_site(node: ast.If, name: str) -> ast.AST:
        """Where to report that `name` has two types after the `if` at `node`: for the
        function's result, a `return` of the `else` path (each `return` became an
        assignment of RESULT_NAME, early_returns.py; the least nested one), whose type
        disagrees with the `then` path's, as Triton reports the `return` that disagrees;
        else the `if` itself."""
        if name == RESULT_NAME:
            for statement in node.orelse:
                for inner in ast.walk(statement):
                    if isinstance(inner, ast.Assign) and any(
                            isinstance(t, ast.Name) and t.id == RESULT_NAME for t in inner.targets):
                        return inner
        return node

    def _mismatch(self, name: str, first: Any, second: Any) -> str:
        """Why `name` cannot hold `first` on one path and `second` on the other."""
        a, b = (_describe(_flatten(v)[1]) for v in (first, second))
        if name == RESULT_NAME:
            return (f"Return type mismatch: {self.fn.__name__}() returns {a} on one path and {b} on another; every "
                    "`return` must give the same type (numbers become tensors to meet a tensor) (Triton: Inconsistent "
                    "return types)")
        return (f"'{name}' is {a} in the `if` branch but {b} in the `else` branch; both branches of an `if` whose "
                f"condition is known only at run time must give it the same type (Triton: Mismatched type for {name} "
                "between the then and else blocks)")

    def _promote(self, value: Any, other: Any, name: str, node: ast.AST) -> tensor:
        """A constexpr value that meets a tensor (or another constant) at a control-flow join.

        It takes the other side's type when it converts without loss; two constants take
        their common type (1 and 2.5 -> fp32). A float constant never becomes an integer.
        """
        if isinstance(value, tensor):
            return value
        raw = _unwrap(value)
        if isinstance(other, tensor):
            ty = other.type
        else:
            ty = computation_type(python_scalar_type(raw), False, python_scalar_type(_unwrap(other)), False, False)
        scalar = ty.scalar
        if isinstance(raw, float) and not scalar.is_floating():
            shown = f"the result of {self.fn.__name__}()" if name == RESULT_NAME else f"'{name}'"
            mismatch = "Return type mismatch: " if name == RESULT_NAME else ""
            raise self.error(node, f"{mismatch}{shown} is {ty} on one path but the float constant {raw} on another; "
                                   "give both the same type")
        if ty.is_block():
            return self.semantic.full(ty.shape, raw, scalar)
        return self.semantic.to_tensor(raw, scalar)

    def _rebuild_if(self, draft: ir.Operation, result_types: list[ir.Type]) -> ir.Operation:
        """scf.if needs its result types up front: move the draft's bodies into a new op."""
        with ir.InsertionPoint(draft):
            final = self.builder.create_if(draft.operands[0], result_types)
        for old_region, new_region in zip(draft.regions, final.regions):
            old_block, new_block = old_region.blocks[0], new_region.blocks[0]
            ops = [op.operation for op in old_block.operations]
            anchor = None
            for op in ops:
                if anchor is None:
                    op.detach_from_parent()
                    new_block.append(op)
                else:
                    op.move_after(anchor)
                anchor = op
        draft.erase()
        return final

    # ------------------------------------------------------------------ for
    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.error(node, "`for ... else` is not supported in kernels")
        iterable = self.visit(node.iter)
        try:
            loop = rules.Loop(iterable)
        except ConstexprRequired as exc:
            raise self.error(node.iter, self.needs_constexpr(exc.message, exc.value, exc.hint)) from None
        except TilecSemanticError as exc:
            raise self.error(node.iter, str(exc)) from None
        if loop.runtime:
            self._runtime_for(node, loop.iterable)
        else:
            self._unrolled_for(node, list(loop))

    def _unrolled_for(self, node: ast.For, values: list[Any]) -> None:
        for value in values:
            self.assign(node.target, value)
            self.visit_block(node.body)

    def _carried_yields(self, carried: list, node: ast.AST) -> list[ir.Value]:
        """The handles a loop body yields for its carried names (each keeps its type)."""
        yields = []
        for name, init_value, structure, _ in carried:
            value = self.scope[name]
            if isinstance(value, constexpr) and isinstance(init_value, tensor):
                value = self._promote(value, init_value, name, node)
            leaves, end_structure = _flatten(value)
            if end_structure != structure:
                raise self.error(node, f"loop-carried variable '{name}' is {_describe(structure)} before the "
                                       f"loop but {_describe(end_structure)} at the end of its body; it must "
                                       "keep one type (initialise it with the right type, e.g. "
                                       "tl.zeros(..., dtype))")
            yields.extend(leaf.handle for leaf in leaves)
        return yields

    def _scope_after_loop(self, node: ast.AST, before: dict, assigned, carried: list, inits: list,
                          results) -> dict[str, Any]:
        """The scope after a runtime loop: carried names take the loop's results; names
        first assigned in the body are undefined (the body may not run); a constant
        reassigned in the body without being carried is an error."""
        after = dict(before)
        carried_names = {name for name, _, _, _ in carried}
        for name in assigned:
            if not _is_defined(before, name):
                after[name] = _Undefined("it is first assigned inside a loop body above")
            elif name not in carried_names and self.scope.get(name) is not before.get(name):
                raise self.error(node, f"'{name}' holds a constant ({before[name]!r}) before the loop and is "
                                       "reassigned inside it; make it a tensor before the loop")
        values = iter(tensor(result, init.type) for result, init in zip(results, inits))
        for name, value, _, _ in carried:
            after[name] = _rebuild(value, values)
        return after

    def _runtime_for(self, node: ast.For, loop: lang.range) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable of a runtime loop must be a single name")
        sem = self.semantic
        bounds = [_unwrap(loop.start), _unwrap(loop.end), _unwrap(loop.step)]
        step_value = bounds[2]
        if isinstance(step_value, int) and step_value == 0:
            raise self.error(node.iter, "range() step must not be zero")
        negative = isinstance(step_value, int) and step_value < 0
        if negative:
            # Iterate k = 0 .. cdiv(start - end, -step) and compute i = start + k * step.
            start, end = bounds[0], bounds[1]
            count = sem.floordiv(sem.add(sem.sub(start, end), -step_value - 1), -step_value) \
                if isinstance(start, tensor) or isinstance(end, tensor) else max(0, -((end - start) // -step_value))
            bounds = [0, count, 1]
        tensors = [sem.to_tensor(b) for b in bounds]
        for t, what in zip(tensors, ("start", "end", "step")):
            if t.type.is_block() or not t.dtype.is_int():
                raise self.error(node.iter, f"range {what} must be an integer scalar, got {t.type}")
        iv_type = tl.int64 if any(t.dtype.int_bitwidth == 64 for t in tensors) else tl.int32
        tensors = [sem.cast(t, iv_type) for t in tensors]
        flag = getattr(node, BREAK_FLAG_ATTRIBUTE, None)
        if flag is not None:
            origin = None
            if negative:  # i = start + k * step, k counting up
                start = _unwrap(loop.start)
                origin = (sem.cast(start, iv_type) if isinstance(start, tensor) else sem.to_tensor(start, iv_type),
                          step_value)
            self._for_as_while(node, tensors, flag, origin)
            return

        assigned = _assigned_names(node.body)
        carried: list[tuple[str, Any, Any, int]] = []  # name, value before, structure, number of tensors
        inits: list[tensor] = []
        for name in assigned:
            if name == node.target.id or name not in self.scope:
                continue
            value = self.scope[name]
            if isinstance(value, _Undefined):
                continue
            value = rules.loop_carried(value)
            leaves, structure = _flatten(value)
            if not leaves:
                continue  # constants stay constant; reassigning them is checked below
            carried.append((name, value, structure, len(leaves)))
            inits.extend(leaves)

        for_op = self.builder.create_for(tensors[0].handle, tensors[1].handle, tensors[2].handle,
                                         [t.handle for t in inits])
        if loop.num_stages is not None:
            for_op.attributes["tile.num_stages"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32),
                                                                      int(loop.num_stages))
        if getattr(loop, "flatten", False) or getattr(loop, "warp_specialize", False):
            for_op.attributes[FLATTEN_ATTR] = ir.UnitAttr.get()
        if getattr(loop, "warp_specialize", False):
            for_op.attributes[WARP_SPECIALIZE_ATTR] = ir.UnitAttr.get()
        body = for_op.regions[0].blocks[0]
        before = dict(self.scope)
        self.scope = dict(before)
        args = iter(tensor(arg, init.type) for arg, init in zip(list(body.arguments)[1:], inits))
        for name, value, _, _ in carried:
            self.scope[name] = _rebuild(value, args)
        iv = tensor(body.arguments[0], iv_type)
        self.control_depth += 1
        self.loop_depth += 1
        try:
            with ir.InsertionPoint(body):
                if negative:
                    iv = sem.add(sem.cast(_unwrap(loop.start), iv_type) if isinstance(_unwrap(loop.start), tensor)
                                 else sem.to_tensor(_unwrap(loop.start), iv_type), sem.mul(iv, step_value))
                self.scope[node.target.id] = iv
                self.visit_block(node.body)
                self.builder.scf_yield(self._carried_yields(carried, node))
        finally:
            self.control_depth -= 1
            self.loop_depth -= 1

        after = self._scope_after_loop(node, before, assigned, carried, inits, for_op.results)
        after[node.target.id] = _Undefined("it is the variable of a loop above") \
            if node.target.id not in before else before[node.target.id]
        self.scope = after

    def _for_as_while(self, node: ast.For, bounds: list[tensor], flag: str,
                      origin: tuple[tensor, int] | None = None) -> None:
        """A runtime `for` containing `break` (see loop_exits.py) as a while loop that
        stops as soon as the break flag is set:

            iv = start
            while iv < end and not flag:
                i = iv                  (i = origin + iv * step for a negative step:
                iv = iv + step           then iv counts the iterations up from 0)
                <body>
        """
        names = [f"_tilec_{what}_{id(node)}" for what in ("iv", "end", "step", "origin")]
        for name, bound in zip(names, bounds + ([origin[0]] if origin else [])):
            self.scope[name] = bound
        iv, end, step = (ast.Name(id=n, ctx=ast.Load()) for n in names[:3])
        test = ast.BoolOp(op=ast.And(), values=[
            ast.Compare(left=iv, ops=[ast.Lt()], comparators=[end]),
            ast.UnaryOp(op=ast.Not(), operand=ast.Name(id=flag, ctx=ast.Load()))])
        value: ast.expr = ast.Name(id=names[0], ctx=ast.Load())
        if origin is not None:
            value = ast.BinOp(left=ast.Name(id=names[3], ctx=ast.Load()), op=ast.Add(),
                              right=ast.BinOp(left=value, op=ast.Mult(), right=ast.Constant(value=origin[1])))
        body = [ast.Assign(targets=[node.target], value=value),
                ast.Assign(targets=[ast.Name(id=names[0], ctx=ast.Store())],
                           value=ast.BinOp(left=ast.Name(id=names[0], ctx=ast.Load()), op=ast.Add(), right=step))]
        guarded = node.body[0]  # `if not flag: <body>`: the while test checks the flag instead
        loop = ast.While(test=test, body=body + guarded.body, orelse=[])
        for new in ast.walk(loop):
            if not hasattr(new, "lineno") and isinstance(new, (ast.stmt, ast.expr)):
                ast.copy_location(new, node)
        target = node.target.id
        defined_before = target in self.scope
        self.visit_While(loop)
        for name in names:
            self.scope.pop(name, None)
        if not defined_before:
            self.scope[target] = _Undefined("it is the variable of a loop above")

    # ------------------------------------------------------------------ while
    def visit_While(self, node: ast.While) -> None:
        """`while cond:` as scf.while; names assigned in the body and defined before are carried."""
        if node.orelse:
            raise self.error(node, "`while ... else` is not supported in kernels")
        sem = self.semantic
        assigned = _assigned_names(node.body)
        carried: list[tuple[str, Any, Any, int]] = []
        inits: list[tensor] = []
        for name in assigned:
            value = self.scope.get(name)
            if value is None or isinstance(value, _Undefined):
                continue
            value = rules.loop_carried(value)
            leaves, structure = _flatten(value)
            if leaves:
                carried.append((name, value, structure, len(leaves)))
                inits.extend(leaves)
        loop, before_block, after_block = self.builder.create_while([t.handle for t in inits])
        outer = dict(self.scope)

        def bind(block: ir.Block) -> None:
            self.scope = dict(outer)
            args = iter(tensor(arg, init.type) for arg, init in zip(block.arguments, inits))
            for name, value, _, _ in carried:
                self.scope[name] = _rebuild(value, args)

        self.control_depth += 1
        self.loop_depth += 1
        try:
            bind(before_block)
            with ir.InsertionPoint(before_block):
                cond = self.rule(node.test, rules.condition, self.visit(node.test), "a `while`")
                if not isinstance(cond, tensor):
                    if _unwrap(cond):
                        raise self.error(node.test, "this `while` condition is always true and the body has no "
                                                    "`break`: the loop would never end")
                    cond = sem.to_tensor(False)
                self.builder.scf_condition(cond.handle, [a for a in before_block.arguments])
            bind(after_block)
            with ir.InsertionPoint(after_block):
                self.visit_block(node.body)
                self.builder.scf_yield(self._carried_yields(carried, node))
        finally:
            self.control_depth -= 1
            self.loop_depth -= 1
        after = self._scope_after_loop(node, outer, assigned, carried, inits, loop.results)
        self.scope = after

    # ------------------------------------------------------------------ expressions
    def visit_Constant(self, node: ast.Constant) -> Any:
        return constexpr(node.value)

    def visit_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def visit_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self._visit_elements(node.elts))

    def visit_List(self, node: ast.List) -> tuple:
        return tl.list_value(self._visit_elements(node.elts))  # a tuple, as in Triton

    def visit_ListComp(self, node: ast.ListComp) -> tuple:
        """`[f(v) for v in values if c(v)]` over a tuple, list or range known when compiling
        (as Triton): unrolled, each item computed in turn; the result is a constant list."""
        saved = dict(self.scope)
        items: list[Any] = []

        def run(generators: list[ast.comprehension]) -> None:
            if not generators:
                items.append(self.visit(node.elt))
                return
            first, rest = generators[0], generators[1:]
            if first.is_async:
                raise self.error(first, "async comprehensions are not supported in kernels")
            iterable = _unwrap(self.visit(first.iter))
            if isinstance(iterable, collections.abc.Iterator):  # zip(...), enumerate(...), reversed(...)
                iterable = tuple(iterable)
            bounds = [_unwrap(getattr(iterable, name, None)) for name in ("start", "end", "step")]
            if all(isinstance(b, int) for b in bounds):  # range() / tl.static_range with constant bounds
                iterable = range(*bounds)
            if isinstance(iterable, tensor) or not isinstance(iterable, (tuple, list, range)):
                raise self.error(first.iter, "a list comprehension in a kernel iterates over a tuple, list or range "
                                             f"known when compiling, not a {type(iterable).__name__}")
            for item in iterable:
                self.assign(first.target, item)
                conditions = [_unwrap(self.visit(test)) for test in first.ifs]
                if any(isinstance(c, tensor) for c in conditions):
                    raise self.error(first, "a list comprehension's `if` must be known when compiling")
                if all(conditions):
                    run(rest)

        try:
            run(list(node.generators))
        finally:
            self.scope = saved  # the comprehension's names do not leak, as in Python 3
        return tl.list_value(items)

    def _visit_elements(self, elts: Sequence[ast.expr]) -> list[Any]:
        values = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                values.extend(_unwrap(self.visit(elt.value)))
            else:
                values.append(self.visit(elt))
        return values

    def binary(self, op: ast.operator, lhs: Any, rhs: Any, node: ast.AST) -> Any:
        if isinstance(op, ast.MatMult) and not isinstance(lhs, UserAggregate) and not isinstance(rhs, UserAggregate):
            raise self.error(node, "`@` (matrix multiplication, tl.dot) is not supported yet")
        if isinstance(lhs, UserAggregate) or isinstance(rhs, UserAggregate):  # its operator methods
            self.current_call = node  # where a @jit method it calls is called from
            return _sanitize(self.rule(node, rules.aggregate_operator, rules.BINARY_NAMES[type(op)], lhs, rhs))
        fn = _BINARY_OPERATORS[type(op)]
        if not isinstance(lhs, tensor) and not isinstance(rhs, tensor):  # folded now, in Python
            try:
                return _sanitize(fn(lhs, rhs))
            except TypeError:
                if isinstance(lhs, BlockPointer) or isinstance(rhs, BlockPointer):
                    raise self.error(node, f"`{_OPERATOR_SYMBOLS[type(op)]}` does not apply to a block pointer; move "
                                           "it with tl.advance(pointer, offsets)") from None
                raise self.error(node, f"`{_OPERATOR_SYMBOLS[type(op)]}` cannot combine the constants "
                                       f"{_unwrap(lhs)!r} and {_unwrap(rhs)!r}") from None
        if isinstance(lhs, tensor) or isinstance(rhs, tensor):
            if not isinstance(lhs, tensor):
                lhs = _unwrap(lhs)
            if not isinstance(rhs, tensor):
                rhs = _unwrap(rhs)
        return _sanitize(fn(lhs, rhs))

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return self.binary(node.op, self.visit(node.left), self.visit(node.right), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return self.rule(node, rules.logical_not, operand)
        if isinstance(node.op, ast.USub):
            return _sanitize(-operand if isinstance(operand, (tensor, constexpr)) else -operand)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Invert):
            return _sanitize(~operand)
        raise self.error(node, f"unsupported unary operator {type(node.op).__name__}")

    def visit_Compare(self, node: ast.Compare) -> Any:
        left = self.visit(node.left)

        def operand(comparator: ast.expr) -> Any:
            value = self.visit(comparator)
            self.current_call = node  # where an aggregate's @jit comparison method is called from
            return value

        links = [(rules.COMPARE_NAMES[type(op)], lambda comparator=comparator: operand(comparator))
                 for op, comparator in zip(node.ops, node.comparators)]
        return self.rule(node, rules.compare_chain, left, links)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        kind = "and" if isinstance(node.op, ast.And) else "or"
        return self.rule(node, rules.bool_op, kind, (self.visit(value) for value in node.values))

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        """`a if c else b`: only the chosen side runs (scf.if) for a scalar condition;
        a tensor condition selects elementwise (tl.where, both sides evaluated)."""
        test = self.visit(node.test)
        if isinstance(test, tensor) and test.type.is_block() and test.type.numel > 1:
            return self.semantic.where(test, self.visit(node.body), self.visit(node.orelse))
        test = self.rule(node.test, rules.condition, test, "a conditional expression's")
        if not isinstance(test, tensor):
            return self.visit(node.body if _unwrap(test) else node.orelse)
        draft = self.builder.create_if(test.handle, [])
        then_block, else_block = draft.regions[0].blocks[0], draft.regions[1].blocks[0]
        self.control_depth += 1
        try:
            with ir.InsertionPoint(then_block):
                then_value = self.visit(node.body)
            with ir.InsertionPoint(else_block):
                else_value = self.visit(node.orelse)
        finally:
            self.control_depth -= 1
        if _unwrap(then_value) is None and _unwrap(else_value) is None:
            # Both sides are calls for their effects (`tl.store(...) if c else tl.store(...)`):
            # an scf.if without results, and the expression is None.
            for block in (then_block, else_block):
                with ir.InsertionPoint(block):
                    self.builder.scf_yield([])
            self._rebuild_if(draft, [])
            return None
        with ir.InsertionPoint(then_block):
            promoted_then = self._promote(then_value, else_value, "the conditional expression", node)
        with ir.InsertionPoint(else_block):
            promoted_else = self._promote(else_value, then_value if isinstance(then_value, constexpr)
                                          else promoted_then, "the conditional expression", node)
        if promoted_then.type != promoted_else.type:
            raise self.error(node, f"the two sides of this conditional expression have different types "
                                   f"({promoted_then.type} and {promoted_else.type}) (Triton: Ternary expression with "
                                   "dynamic condition has inconsistent types)")
        with ir.InsertionPoint(then_block):
            self.builder.scf_yield([promoted_then.handle])
        with ir.InsertionPoint(else_block):
            self.builder.scf_yield([promoted_else.handle])
        final = self._rebuild_if(draft, [promoted_then.handle.type])
        return tensor(final.results[0], promoted_then.type)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = self.visit(node.value)
        target = base if isinstance(base, tensor) else _unwrap(base)
        if node.attr == "type" and isinstance(base, tuple):  # a tuple's is its tl.tuple_type
            return self.rule(node, rules.type_attribute, base)
        try:
            try:
                value = getattr(target, node.attr)
            except AttributeError:
                if isinstance(target, (bool, int, float)) and not isinstance(base, constexpr):
                    base = constexpr(target)  # a number has a tensor's methods (`acc = 0; acc.to(...)`)
                if not isinstance(base, constexpr):
                    raise
                value = getattr(base, node.attr)  # the constexpr's own (a number's dtype, its methods)
        except AttributeError:
            if isinstance(target, tl.list_value):
                raise self.error(node, f"a list in a kernel is a constant tuple (as in Triton), so it has no "
                                       f"'{node.attr}'; make a new list instead, e.g. `values = values + [x]` in a "
                                       "tl.static_range loop") from None
            what = "tensor" if isinstance(target, tensor) else type(target).__name__
            if hasattr(target, "__name__"):
                what = target.__name__
            raise self.error(node, f"'{what}' has no attribute '{node.attr}'") from None
        return _sanitize(value) if not callable(value) or isinstance(value, tl.dtype) else value

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        base = self.visit(node.value)
        index = self._visit_index(node.slice)
        if isinstance(base, tensor):
            return base[index]
        base = _unwrap(base)
        if isinstance(base, (KernelFunction, tl.LibraryFunction)):
            raise self.error(node, f"a kernel cannot launch another kernel ({base.__name__}[grid](...)); call the "
                                   f"@jit function directly: {base.__name__}(...)")
        if isinstance(index, tensor):
            raise self.error(node.slice, self.needs_constexpr("a tuple can only be indexed by a compile-time constant",
                                                              index))
        index = _unwrap(index)
        if isinstance(base, tuple) and isinstance(index, int) and not -len(base) <= index < len(base):
            what = "list" if isinstance(base, tl.list_value) else "tuple"
            raise self.error(node.slice, f"index {index} is out of range for a {what} of {len(base)} "
                                         f"value{'s' if len(base) != 1 else ''}")
        self.current_call = node  # where an aggregate's @jit __getitem__ is called from
        return _sanitize(base[index])

    def _visit_index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            parts = [None if p is None else _unwrap(self.visit(p)) for p in (node.lower, node.upper, node.step)]
            return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self._visit_index(elt) for elt in node.elts)
        value = self.visit(node)
        return value if isinstance(value, tensor) else _unwrap(value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> constexpr:
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                item = self.visit(value.value)
                if isinstance(item, tensor):
                    raise self.error(value.value, "an f-string can only format compile-time constants, and this "
                                                  "value is only known when the kernel runs; print its value with "
                                                  "tl.device_print(\"x\", x), its type with tl.static_print(x)")
                fmt = _unwrap(self.visit(value.format_spec)) if value.format_spec is not None else ""
                parts.append(format(_unwrap(item), fmt))
        return constexpr("".join(parts))

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        return self.visit(node.value)

    def visit_Starred(self, node: ast.Starred) -> Any:
        raise self.error(node, "starred expressions are only allowed in calls and tuple literals")

    # ------------------------------------------------------------------ calls
