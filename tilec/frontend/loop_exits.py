"""`break` and `continue` in kernel loops, by rewriting the kernel's AST into flags.

Structured loops (scf.for, scf.while) have no early exits, so before code generation
each loop whose own body (not a nested loop's) holds `break` or `continue` is rewritten:

    for i in range(n):                  brk = <False>
        a()                             for i in range(n):
        if c:                               if not brk:
            break              ->               a()
        b()                                     if c:
                                                    brk = <True>
                                                if not brk:
                                                    b()

- `break` sets a flag carried by the loop; a `while` loop also tests it (`while cond
  and not brk`), so it stops at once. A runtime `for` loop becomes such a while loop
  in the code generator (which knows the bounds' types); an unrolled one
  (tl.static_range) keeps its remaining copies, guarded.
- `continue` sets a flag cleared at the top of every iteration.
- Every statement after one that may set a flag is guarded by `if not flag`.

<False>/<True> are calls to `FLAG_FUNCTION`, which the code generator turns into int1
scalars (a plain `False` would be a compile-time constant, and could not change at run
time). The interpreter runs the rewritten kernel too (interpretable.py).
"""
from __future__ import annotations

import ast
import itertools

FLAG_FUNCTION = "__tilec_flag__"
BREAK_FLAG_ATTRIBUTE = "tilec_break_flag"


def rewrite_loop_exits(fn: ast.FunctionDef) -> ast.FunctionDef:
    """`fn` with break/continue replaced by flags (in place; returns `fn`)."""
    _Rewriter().visit(fn)
    ast.fix_missing_locations(fn)
    return fn


class _Rewriter(ast.NodeTransformer):
    def __init__(self):
        self.numbers = itertools.count()

    def visit_For(self, node: ast.For):
        self.generic_visit(node)  # inner loops first: their exits are theirs
        return self._rewrite(node)

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        return self._rewrite(node)

    def _rewrite(self, loop: ast.For | ast.While):
        uses_break, uses_continue = _exits(loop.body)
        if not (uses_break or uses_continue):
            return loop
        number = next(self.numbers)
        flags = _Flags(f"_tilec_break_{number}" if uses_break else None,
                       f"_tilec_continue_{number}" if uses_continue else None, loop)
        body, _ = _guard(loop.body, flags)
        if flags.cont:
            body.insert(0, flags.set(flags.cont, False))
        before: list[ast.stmt] = []
        if flags.brk:
            before.append(flags.set(flags.brk, False))
            if isinstance(loop, ast.While):
                loop.test = ast.copy_location(ast.BoolOp(op=ast.And(), values=[loop.test, flags.clear(flags.brk)]),
                                              loop.test)
            else:
                # The code generator turns a runtime `for` with this mark into a while
                # loop that stops at once (BREAK_FLAG_ATTRIBUTE: the flag's name); an
                # unrolled one keeps the guard.
                setattr(loop, BREAK_FLAG_ATTRIBUTE, flags.brk)
                body = [ast.copy_location(ast.If(test=flags.clear(flags.brk), body=body, orelse=[]), loop)]
        loop.body = body
        return before + [loop]


class _Flags:
    def __init__(self, brk: str | None, cont: str | None, where: ast.AST):
        self.brk, self.cont, self.where = brk, cont, where

    def set(self, name: str, value: bool, where: ast.AST | None = None) -> ast.stmt:
        call = ast.Call(func=ast.Name(id=FLAG_FUNCTION, ctx=ast.Load()), args=[ast.Constant(value=value)], keywords=[])
        return ast.copy_location(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=call),
                                 where or self.where)

    def clear(self, *names: str) -> ast.expr:
        """`not (a or b)`: no flag is set."""
        loads = [ast.Name(id=n, ctx=ast.Load()) for n in names if n]
        either = loads[0] if len(loads) == 1 else ast.BoolOp(op=ast.Or(), values=loads)
        return ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=either), self.where)


def _guard(stmts: list[ast.stmt], flags: _Flags) -> tuple[list[ast.stmt], bool]:
    """The statements with this loop's exits turned into flag assignments and the rest
    guarded; also whether they may set a flag."""
    out: list[ast.stmt] = []
    for index, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Break):
            out.append(flags.set(flags.brk, True, stmt))
            return out, True  # what follows is unreachable
        if isinstance(stmt, ast.Continue):
            out.append(flags.set(flags.cont, True, stmt))
            return out, True
        if isinstance(stmt, ast.If) and any(_exits([stmt])):
            body, _ = _guard(stmt.body, flags)
            orelse, _ = _guard(stmt.orelse, flags)
            out.append(ast.copy_location(ast.If(test=stmt.test, body=body or [ast.Pass()], orelse=orelse), stmt))
            rest, _ = _guard(stmts[index + 1:], flags)
            if rest:
                out.append(ast.copy_location(ast.If(test=flags.clear(flags.brk, flags.cont), body=rest, orelse=[]),
                                             stmts[index + 1]))
            return out, True
        out.append(stmt)
    return out, False


def _exits(stmts: list[ast.stmt]) -> tuple[bool, bool]:
    """Whether the statements break or continue the loop they are in (nested loops'
    own exits excluded)."""
    found_break = found_continue = False
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Break):
            found_break = True
        elif isinstance(node, ast.Continue):
            found_continue = True
        elif not isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return found_break, found_continue
