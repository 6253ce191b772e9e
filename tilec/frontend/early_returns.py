"""`return` inside `if` branches, by moving the code after the `if` into the branch that
does not return.

    if row >= n_rows:                   if row >= n_rows:
        return                              pass
    x = tl.load(...)          ->        else:
    tl.store(..., x)                        x = tl.load(...)
                                            tl.store(..., x)

After the move every `return` ends the function; a function returning values then gets
one hidden result name, assigned where each `return` was and returned at the end, so
that the code generator's ordinary `if` (a name defined in both branches flows out)
carries the result:

    if c:                               if c:
        return a          ->                _tilec_result = a
    return b                            else:
                                            _tilec_result = b
                                        return _tilec_result

A function that returns a value on some paths and reaches its end on others (Triton:
its result there is *poison*, an undefined value of the returned type) ends those paths
with `return __tilec_no_result__()`: the code generator gives that path an undefined
value of the type the other paths return when an `if` decided at run time joins them,
and no value (None) when only that path remains; the interpreter gives the same
(undefined_results.py). A bare `return` in a function that returns values elsewhere
returns None.

Each `if` the tail moved into is marked (ENDS_FUNCTION) and is the last statement of its
block, in a block that is itself the last (up to the final `return`): nothing after it runs,
so where its branches join, only the hidden result is live. The code generator joins that
alone; any other name is dead there and may differ in type between the branches (a
pointer argument rebound to a block of pointers on the path that did not return, as in
Triton, where the returning path never reaches the join).

Only `if` statements are rewritten; a `return` inside a loop stays (and is refused by the
code generator). The interpreter runs the rewritten kernel too (interpretable.py).
"""
from __future__ import annotations

import ast
import copy

RESULT_NAME = "_tilec_result"
# Called where a function returning values reaches its end without a `return`.
NO_RESULT_FUNCTION = "__tilec_no_result__"
# The attribute set (True) on each `if` that _move_tails made the end of its function.
ENDS_FUNCTION = "tilec_ends_function"


class _NoResult:
    """The code generator's value of a NO_RESULT_FUNCTION call: no value yet, its type
    taken from the other paths where a run-time `if` joins them (CodeGenerator._runtime_if)."""

    def __repr__(self) -> str:
        return "<no result>"


NO_RESULT = _NoResult()


def rewrite_early_returns(fn: ast.FunctionDef) -> ast.FunctionDef:
    """`fn` with returns inside `if`s moved to the end of the function (in place)."""
    if not any(_branch_returns(stmt) for stmt in fn.body):
        return fn
    body = fn.body
    if any(r.value is not None for r in _tail_returns(body)) and not _always_returns(body):
        end = ast.Return(value=ast.Call(func=ast.Name(id=NO_RESULT_FUNCTION, ctx=ast.Load()), args=[], keywords=[]))
        body = body + [ast.copy_location(end, body[-1])]
    body = _move_tails(body)
    returns = list(_tail_returns(body))
    if any(r.value is not None for r in returns):
        fn.body = _replace_returns(body, _assign_result) + [ast.Return(value=ast.Name(id=RESULT_NAME, ctx=ast.Load()))]
        ast.copy_location(fn.body[-1], returns[-1])
    else:
        fn.body = _replace_returns(body, _no_result)
    ast.fix_missing_locations(fn)
    return fn


def _branch_returns(stmt: ast.stmt) -> bool:
    """Whether `stmt` is an `if` with a `return` in a branch (through nested ifs, not loops)."""
    if not isinstance(stmt, ast.If):
        return False
    return any(isinstance(s, ast.Return) or _branch_returns(s) for s in stmt.body + stmt.orelse)


def _always_returns(stmts: list[ast.stmt]) -> bool:
    """Whether every path through `stmts` ends in a `return`."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            return True
        if isinstance(stmt, ast.If) and _always_returns(stmt.body) and _always_returns(stmt.orelse):
            return True
    return False


def _move_tails(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """`stmts` with the statements after each returning `if` moved into its branches that
    can fall through (copied when both can)."""
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Return):
            return stmts[:i + 1]  # what follows a return never runs
        if _branch_returns(stmt):
            rest = stmts[i + 1:]
            body = stmt.body if _always_returns(stmt.body) else stmt.body + copy.deepcopy(rest)
            orelse = stmt.orelse if _always_returns(stmt.orelse) else stmt.orelse + copy.deepcopy(rest)
            moved = ast.If(test=stmt.test, body=_move_tails(body) or [ast.Pass()], orelse=_move_tails(orelse))
            setattr(moved, ENDS_FUNCTION, True)
            return stmts[:i] + [ast.copy_location(moved, stmt)]
    return stmts


def _tail_returns(stmts: list[ast.stmt]):
    """The returns of `stmts` outside loops (through nested ifs)."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from _tail_returns(stmt.body)
            yield from _tail_returns(stmt.orelse)


def _replace_returns(stmts: list[ast.stmt], replace) -> list[ast.stmt]:
    """`stmts` with each tail `return` (through nested ifs) replaced by `replace(ret)`."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            out.append(ast.copy_location(replace(stmt), stmt))
        elif isinstance(stmt, ast.If):
            stmt.body = _replace_returns(stmt.body, replace) or [ast.Pass()]
            stmt.orelse = _replace_returns(stmt.orelse, replace)
            out.append(stmt)
        else:
            out.append(stmt)
    return out


def _assign_result(ret: ast.Return) -> ast.stmt:
    value = ret.value if ret.value is not None else ast.copy_location(ast.Constant(value=None), ret)
    return ast.Assign(targets=[ast.Name(id=RESULT_NAME, ctx=ast.Store())], value=value)


def _no_result(ret: ast.Return) -> ast.stmt:
    return ast.Pass()
