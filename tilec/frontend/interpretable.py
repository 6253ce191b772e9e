"""The kernel the interpreter runs: the frontend's rewritten AST, executed by Python.

The code generator reads a kernel's AST after `loop_exits.py` and `early_returns.py`
have rewritten it; the interpreter runs that same AST as a Python function, with the
syntax whose meaning in a kernel differs from Python's replaced by calls of
`python_rules` (which the code generator calls too):

    3, "s", None        __tilec_rules__.literal(3)  (a constexpr, as compiled)
    a and b             __tilec_rules__.bool_op("and", lazy(lambda: a, lambda: b))
    not a               __tilec_rules__.logical_not(a)
    a < b <= c          __tilec_rules__.compare_chain(a, [("lt", lambda: b), ("le", lambda: c)])
    a + b, x += b       __tilec_rules__.binary("add", a, b), x = __tilec_rules__.binary("add", x, b)
    a if c else b       __tilec_rules__.if_exp(c, lambda: a, lambda: b)
    x.type              __tilec_rules__.type_attribute(x)
    if c: / while c:    if __tilec_rules__.truth(__tilec_rules__.condition(c, "an `if`")):
    for i in it: ...    __tilec_loop_3 = __tilec_rules__.Loop(it)
                        if __tilec_loop_3.runtime:      (for each name the body assigns)
                            try: x = __tilec_rules__.loop_carried(x)
                            except NameError: pass
                        for i in __tilec_loop_3: ...

Line numbers and columns are the kernel file's, so tracebacks and located errors point
at the user's source. The code object is made once per kernel function (and again after
`update_src`).
"""
from __future__ import annotations

import ast
import copy
import itertools
from types import CodeType

from . import python_rules
from .early_returns import NO_RESULT_FUNCTION
from .kernel_function import KernelFunction
from .loop_exits import FLAG_FUNCTION

RULES = "__tilec_rules__"

# What the rewritten code finds in its globals beside the kernel's own.
GLOBALS = {RULES: python_rules, FLAG_FUNCTION: python_rules.flag,
           # A path without `return` gives None, as in Python; the interpreter's launcher
           # replaces it with zeros of the type the compiler gave (undefined_results.py).
           NO_RESULT_FUNCTION: lambda: None}


def interpreted_code(kernel: KernelFunction) -> CodeType:
    """The code object of `kernel`'s function as the interpreter runs it."""
    code = kernel.__dict__.get("_interpreted_code")
    if code is None:
        code = kernel.__dict__["_interpreted_code"] = _compile(kernel)
    return code


def _compile(kernel: KernelFunction) -> CodeType:
    function = copy.deepcopy(kernel.parse())
    function.decorator_list = []
    function = _Rewriter().visit(function)
    module = ast.Module(body=[function], type_ignores=[])
    ast.fix_missing_locations(module)
    for node in ast.walk(module):  # the parsed source was dedented; the file's columns are not
        if hasattr(node, "col_offset"):
            node.col_offset += kernel.indent
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += kernel.indent
    ast.increment_lineno(module, kernel.first_line - 1)
    module_code = compile(module, kernel.filename, "exec", dont_inherit=True)
    code = next(c for c in module_code.co_consts if isinstance(c, CodeType) and c.co_name == function.name)
    return _named_inner_code(code, code.co_name)


def _named_inner_code(code: CodeType, name: str) -> CodeType:
    """`code` with its lambdas (the rewrite's thunks) named like it, so that an error
    inside one reports the kernel function."""
    consts = tuple(_named_inner_code(c, name) if isinstance(c, CodeType) else c for c in code.co_consts)
    renamed = {"co_consts": consts}
    if code.co_name == "<lambda>":
        renamed["co_name"] = name
        if hasattr(code, "co_qualname"):
            renamed["co_qualname"] = name
    return code.replace(**renamed)


def inner_codes(code: CodeType) -> set[CodeType]:
    """`code` and every code object nested in it (its thunks)."""
    codes = {code}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            codes |= inner_codes(const)
    return codes


def _rule(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=ast.Name(id=RULES, ctx=ast.Load()), attr=name, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _thunk(body: ast.expr) -> ast.Lambda:
    no_arguments = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                 defaults=[])
    return ast.Lambda(args=no_arguments, body=body)


class _Rewriter(ast.NodeTransformer):
    def __init__(self):
        self.loops = itertools.count()

    def _located(self, new: ast.AST, old: ast.AST) -> ast.AST:
        return ast.copy_location(new, old)

    def visit_Constant(self, node: ast.Constant):
        """A literal is a constexpr, as the code generator makes it (`x = 3; x.dtype`)."""
        return self._located(_rule("literal", node), node)

    def visit_JoinedStr(self, node: ast.JoinedStr):
        """An f-string's text parts stay strings (only its {expressions} are rewritten)."""
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                value.value = self.visit(value.value)
        return node

    def visit_BoolOp(self, node: ast.BoolOp):
        self.generic_visit(node)
        kind = "and" if isinstance(node.op, ast.And) else "or"
        operands = _rule("lazy", *(self._located(_thunk(value), value) for value in node.values))
        return self._located(_rule("bool_op", ast.Constant(value=kind), self._located(operands, node)), node)

    def visit_BinOp(self, node: ast.BinOp):
        """`a + b` as python_rules.binary computes it (an aggregate's operator methods first)."""
        self.generic_visit(node)
        name = ast.Constant(value=python_rules.BINARY_NAMES[type(node.op)])
        return self._located(_rule("binary", name, node.left, node.right), node)

    def visit_AugAssign(self, node: ast.AugAssign):
        """`x += y` is `x = x + y` (tensors are values, as the code generator has them)."""
        self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            return node  # refused by the code generator before the kernel runs
        current = self._located(ast.Name(id=node.target.id, ctx=ast.Load()), node.target)
        name = ast.Constant(value=python_rules.BINARY_NAMES[type(node.op)])
        value = self._located(_rule("binary", name, current, node.value), node)
        return self._located(ast.Assign(targets=[node.target], value=value), node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return self._located(_rule("logical_not", node.operand), node)
        return node

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        names = [ast.Constant(value=python_rules.COMPARE_NAMES[type(op)]) for op in node.ops]
        links = ast.List(elts=[ast.Tuple(elts=[name, self._located(_thunk(right), right)], ctx=ast.Load())
                               for name, right in zip(names, node.comparators)], ctx=ast.Load())
        return self._located(_rule("compare_chain", node.left, links), node)

    def visit_Attribute(self, node: ast.Attribute):
        """`x.type` reads python_rules.type_attribute (a tuple's is its tl.tuple_type)."""
        self.generic_visit(node)
        if node.attr == "type" and isinstance(node.ctx, ast.Load):
            return self._located(_rule("type_attribute", node.value), node)
        return node

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        return self._located(_rule("if_exp", node.test, self._located(_thunk(node.body), node.body),
                                   self._located(_thunk(node.orelse), node.orelse)), node)

    def _condition(self, test: ast.expr, what: str) -> ast.expr:
        return self._located(_rule("truth", self._located(_rule("condition", test, ast.Constant(value=what)), test)),
                             test)

    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        node.test = self._condition(node.test, "an `if`")
        return node

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        node.test = self._condition(node.test, "a `while`")
        return self._carry(python_rules.assigned_names(node.body), node) + [node]

    def visit_For(self, node: ast.For):
        self.generic_visit(node)
        name = f"__tilec_loop_{next(self.loops)}"
        loop = self._located(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                        value=self._located(_rule("Loop", node.iter), node.iter)), node)
        target = node.target.id if isinstance(node.target, ast.Name) else None
        carried = [n for n in python_rules.assigned_names(node.body) if n != target]
        node.iter = self._located(ast.Name(id=name, ctx=ast.Load()), node.iter)
        statements = [loop]
        if carried:
            runtime = ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr="runtime", ctx=ast.Load())
            statements.append(self._located(ast.If(test=runtime, body=self._carry(carried, node), orelse=[]), node))
        return statements + [node]

    def _carry(self, names: list[str], node: ast.AST) -> list[ast.stmt]:
        """`name = loop_carried(name)` for each name that exists before the loop."""
        statements = []
        for name in names:
            assign = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                value=_rule("loop_carried", ast.Name(id=name, ctx=ast.Load())))
            handler = ast.ExceptHandler(type=ast.Name(id="NameError", ctx=ast.Load()), name=None, body=[ast.Pass()])
            statements.append(self._located(ast.Try(body=[assign], handlers=[handler], orelse=[], finalbody=[]), node))
        return statements


__all__ = ["GLOBALS", "RULES", "inner_codes", "interpreted_code"]
