"""What Python syntax means in a kernel, written once for both backends.

The code generator calls these rules while it walks a kernel's AST; the interpreter runs
the same AST (`interpretable.py` rewrites the syntax below into calls of these rules) on
NumPy. So `a and b`, `not x`, `a < b < c`, `x if c else y`, the truth of an `if` or
`while` condition, which values a runtime loop carries and what its variable is, are
decided here only:

- `and`/`or` short-circuit on compile-time values (Python's meaning) and are elementwise
  logical operations on tensors, blocks included; `not` likewise;
- a chained comparison is the `and` of its links, every operand evaluated once, left to
  right, a link false when compiling ending it;
- a binary operator or comparison with an aggregate operand (language/aggregates.py)
  calls the aggregate's operator method first (`x + v` is `v.__radd__(x)`);
- a condition (`if`, `while`, a conditional expression's test) is a compile-time value,
  or a scalar (a one-element block is its element) compared with 0; a pointer has no
  truth value;
- `x.type` of a tuple is the `tl.tuple_type` of its items;
- a runtime loop (`range`, `tl.range`, `while`) carries the names its body assigns that
  exist before it, a Python number among them as a tensor of its natural type (so
  `acc = 2147483000; for ...: acc += 400` wraps as int32 on both backends), and its
  variable is a tensor of the bounds' type (int64 if a bound is 64-bit, else int32);
  `tl.static_range` and tuples are unrolled, their values constant.

Rules raise `TilecSemanticError`; the code generator adds the source location, the
interpreter finds it from the traceback.
"""
from __future__ import annotations

import ast
import collections.abc
import operator
from typing import Any, Callable, Iterator, Sequence

from ..language import builtins as lang
from ..language.aggregates import UserAggregate
from ..language.compile_time import type_of
from ..language import core as tl
from ..language.core import ConstexprRequired, TilecSemanticError, _unwrap, constexpr, current_semantic, tensor

COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne,
}
IDENTITY_TESTS = {"is": "is", "is_not": "is not", "in": "in", "not_in": "not in"}

# Each comparison operator of Python's AST by its name above.
COMPARE_NAMES = {
    ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne",
    ast.Is: "is", ast.IsNot: "is_not", ast.In: "in", ast.NotIn: "not_in",
}


# Each binary operator of Python's AST by name, and the methods and symbol of each name
# (an aggregate's operator methods, language/aggregates.py, are looked up by these).
BINARY_NAMES = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv", ast.Mod: "mod",
    ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "and", ast.BitOr: "or",
    ast.BitXor: "xor", ast.MatMult: "matmul",
}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^", "matmul": "@",
            "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_REFLECTED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def binary(op: str, lhs: Any, rhs: Any) -> Any:
    """`lhs <op> rhs` (`op` a name of BINARY_NAMES) as the interpreter computes it:
    Python's operator, except that an aggregate operand's methods come first
    (`aggregate_operator`)."""
    if isinstance(lhs, UserAggregate) or isinstance(rhs, UserAggregate):
        return aggregate_operator(op, lhs, rhs)
    return _OPERATORS[op](lhs, rhs)


_OPERATORS = {name: getattr(operator, f"{name}_" if name in ("and", "or") else name) for name in BINARY_NAMES.values()}


def aggregate_operator(op: str, lhs: Any, rhs: Any) -> Any:
    """`lhs <op> rhs` with an aggregate operand, as Triton decides it: the aggregate's
    method first (`__add__` of the left one, else `__radd__` of the right one), then a
    tensor's, then a constant's; a method returning NotImplemented passes the turn."""
    forward = f"__{op}__"
    reflected = f"__{_REFLECTED[op]}__" if op in _REFLECTED else f"__r{op}__"

    def rank(value: Any) -> int:
        return 2 if isinstance(value, UserAggregate) else 1 if isinstance(value, tensor) else 0

    highest = max(rank(lhs), rank(rhs))
    candidates = [(lhs, forward, rhs), (rhs, reflected, lhs)]
    if rank(lhs) == rank(rhs) and type(lhs) is not type(rhs) and isinstance(rhs, type(lhs)):
        candidates.reverse()  # a subclass's reflected method first, as in Python
    for owner, name, other in candidates:
        method = getattr(owner, name, None) if rank(owner) == highest else None
        if method is None:
            continue
        result = method(other)
        if result is not NotImplemented:
            return result
    names = [type(_unwrap(v)).__name__ for v in (lhs, rhs)]
    raise TilecSemanticError(f"unsupported operand type(s) for {_SYMBOLS[op]}: '{names[0]}' and '{names[1]}': an "
                             f"aggregate takes part in `{_SYMBOLS[op]}` through its {forward} or {reflected} method")


def assigned_names(statements: Sequence[ast.stmt]) -> list[str]:
    """Names a block of statements may assign (including inside nested blocks)."""
    names: list[str] = []

    def add_target(target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            if target.id not in names:
                names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add_target(elt)

    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    add_target(target)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                add_target(node.target)
            elif isinstance(node, ast.For):
                add_target(node.target)
    return names


def pointer_truth(value: Any) -> Any:
    """A pointer's truth, where a condition or `and`/`or`/`not` reads one: whether it is
    not null (`ptr != 0` on its address, as Triton compiles `if bias_ptr:`); other
    values as they are."""
    if isinstance(value, tensor) and value.dtype.is_ptr():
        sem = current_semantic()
        return sem.compare("ne", sem.cast(value, tl.int64), 0)
    return value


class UnsupportedOperand(TilecSemanticError):
    """A Python operator the language does not apply to a value of this kind (`not` of a
    tuple): refused by the frontend itself, so its CompilationError has no cause, as
    Triton's UnsupportedLanguageConstruct."""

    caused_by_nothing = True


def logical_not(value: Any) -> Any:
    """`not value`. Not of a tuple is refused, as in Triton: a tuple in a kernel is a shape
    or a group of values, and its Python truth (not empty) is rarely what was meant."""
    if isinstance(value, tensor):
        return pointer_truth(value).logical_not()
    if isinstance(_unwrap(value), tuple):
        raise UnsupportedOperand("`not` of a tuple is not supported; to test whether it is empty, compare its length "
                                 "(`len(t) == 0`) (Triton: AST unary operator '__not__' is not (currently) "
                                 "implemented on type tuple)")
    return constexpr(not _unwrap(value))


def _logical(lhs: Any, rhs: Any, kind: str) -> Any:
    if isinstance(lhs, tensor) or isinstance(rhs, tensor):
        lhs, rhs = pointer_truth(lhs), pointer_truth(rhs)
        sem = current_semantic()
        return sem.logical_and(lhs, rhs) if kind == "and" else sem.logical_or(lhs, rhs)
    return constexpr(_unwrap(lhs) and _unwrap(rhs)) if kind == "and" else constexpr(_unwrap(lhs) or _unwrap(rhs))


def bool_op(kind: str, operands: Iterator[Any]) -> Any:
    """`a and b and ...` / `a or b or ...`; `operands` yields each operand when asked, so a
    compile-time value that decides the result leaves the rest unevaluated."""
    result = None
    for value in operands:
        if not isinstance(value, tensor):
            truth = bool(_unwrap(value))
            if (kind == "and" and not truth) or (kind == "or" and truth):
                if result is None or not isinstance(result, tensor):
                    return value  # Python's short-circuit on compile-time values
                return constexpr(truth)
            if result is None:
                result = value
                continue
        result = value if result is None else _logical(result, value, kind)
    return result


def compare(op: str, left: Any, right: Any) -> Any:
    """One link of a comparison: `<`, `<=`, ..., `is`, `is not`, `in`, `not in`."""
    if op in IDENTITY_TESTS:
        lv, rv = _unwrap(left), _unwrap(right)
        if isinstance(left, tensor) or isinstance(right, tensor):
            symbol = IDENTITY_TESTS[op]
            if op in ("in", "not_in") or (lv is not None and rv is not None):
                raise TilecSemanticError(f"`{symbol}` needs compile-time operands, not tensors"
                                         + ("; only `x is None` and `x is not None` may test a tensor"
                                            if symbol.startswith("is") else ""))
            # `x_ptr is not None`: a None argument is a constant, so a tensor is never None (as in Triton)
        value = {"is": lambda: lv is rv, "is_not": lambda: lv is not rv,
                 "in": lambda: lv in rv, "not_in": lambda: lv not in rv}[op]()
        return constexpr(value)
    fn = COMPARISONS[op]
    if isinstance(left, UserAggregate) or isinstance(right, UserAggregate):
        return aggregate_operator(op, left, right)
    if isinstance(left, tensor) or isinstance(right, tensor):
        return fn(left if isinstance(left, tensor) else _unwrap(left),
                  right if isinstance(right, tensor) else _unwrap(right))
    return constexpr(fn(_sequence_items(_unwrap(left)), _sequence_items(_unwrap(right))))


def _sequence_items(value: Any) -> Any:
    """A list or tuple as a plain tuple of its unwrapped items, so that lists, tuples and
    tl.tuple compare item by item (`desc.block_shape == [M_BLOCK, N_BLOCK]`, as in Triton)."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return tuple(_sequence_items(_unwrap(item)) for item in value)
    return value


def compare_chain(left: Any, links: Sequence[tuple[str, Callable[[], Any]]]) -> Any:
    """`left op1 b op2 c ...`: the `and` of every link (elementwise on tensors: `0 <= x < n`
    is `(0 <= x) & (x < n)`). Each operand is computed once, when its link is reached
    (`links` pairs each operator with a thunk computing its right operand), and a link
    false when compiling ends the chain, its later operands not computed, as in Python
    and Triton."""
    result = None
    for op, right_operand in links:
        right = right_operand()
        step = compare(op, left, right)
        if not isinstance(step, tensor) and not _unwrap(step):
            return step
        result = step if result is None or not isinstance(result, tensor) else _logical(result, step, "and")
        left = right
    return result


def condition(value: Any, what: str) -> Any:
    """`value` as the condition of `what` ("an `if`", "a `while`", "a conditional
    expression's"): a constexpr, or an int1 scalar tensor."""
    if not isinstance(value, tensor):
        return value if isinstance(value, constexpr) else constexpr(value)
    if value.type.is_block() and value.type.numel == 1:  # a one-element block is its element (as Triton)
        value = current_semantic().reshape_to_scalar(value)
    if value.type.is_block():
        if what == "a `while`":
            raise TilecSemanticError("a `while` condition must be a scalar, not a block; reduce the block to one "
                                     "value first (e.g. `tl.max(x, axis=0) > 0`)")
        raise TilecSemanticError(f"{what} condition must be a scalar; for tensors use tl.where (Triton: Boolean value "
                                 "of Tensor with more than one value is ambiguous)")
    value = pointer_truth(value)
    return value if value.dtype.is_bool() else current_semantic().compare("ne", value, 0)


def loop_carried(value: Any) -> Any:
    """The value a runtime loop carries for a name bound to `value` before it: a Python
    number (or constexpr number) becomes a tensor of its natural type."""
    if isinstance(value, constexpr) and isinstance(value.value, (bool, int, float)):
        return current_semantic().to_tensor(value)
    if isinstance(value, (bool, int, float)):
        return current_semantic().to_tensor(value)
    return value


def type_attribute(value: Any) -> Any:
    """`value.type`: the value's own attribute (a tensor's type, a constant's, a
    namedtuple's field named `type`), and for a tuple, which has none, the
    `tl.tuple_type` of its items (as Triton's tuples have one)."""
    if isinstance(value, tuple) and "type" not in getattr(value, "_fields", ()):
        return type_of(value)
    return value.type


class Loop:
    """What a `for` statement iterates over: `runtime` loops carry values (`loop_carried`)."""

    def __init__(self, iterable: Any):
        iterable = _unwrap(iterable)
        if isinstance(iterable, collections.abc.Iterator):  # zip(...), enumerate(...): unrolled, as a tuple
            iterable = tuple(iterable)
        self.iterable = iterable
        if isinstance(iterable, lang.static_range):
            bounds = [_unwrap(iterable.start), _unwrap(iterable.end), _unwrap(iterable.step)]
            runtime = [b for b in bounds if isinstance(b, tensor)]
            if runtime:
                raise ConstexprRequired("tl.static_range bounds must be constexpr integers, and this one is only "
                                        "known when the kernel runs", runtime[0],
                                        "use range() for a loop over run-time bounds")
            if any(not isinstance(b, int) for b in bounds):
                raise TilecSemanticError("tl.static_range bounds must be constexpr integers")
            if _unwrap(iterable.step) == 0:
                raise TilecSemanticError("tl.static_range step must not be zero")
            self.runtime = False
        elif isinstance(iterable, lang.range):
            self.runtime = True
        elif isinstance(iterable, (tuple, list)):
            self.runtime = False
        else:
            raise TilecSemanticError("a kernel can loop over range(...), tl.range(...), tl.static_range(...) or a "
                                     f"constant tuple, not over {type(iterable).__name__}")

    def __iter__(self) -> Iterator[Any]:
        iterable = self.iterable
        if isinstance(iterable, lang.static_range):
            return iter([constexpr(i) for i in range(*(_unwrap(b) for b in (iterable.start, iterable.end,
                                                                              iterable.step)))])
        if isinstance(iterable, (tuple, list)):
            return iter(list(iterable))
        return self._runtime_values()

    def _runtime_values(self) -> Iterator[tensor]:
        """The loop variable's values as the compiled loop has them: scalars of the
        bounds' integer type."""
        sem = current_semantic()
        loop = self.iterable
        bounds = [sem.to_tensor(_unwrap(b)) for b in (loop.start, loop.end, loop.step)]
        for t, what in zip(bounds, ("start", "end", "step")):
            if t.type.is_block() or not t.dtype.is_int():
                raise TilecSemanticError(f"range {what} must be an integer scalar, got {t.type}")
        iv_type = tl.int64 if any(t.dtype.int_bitwidth == 64 for t in bounds) else tl.int32
        start, end, step = (int(sem.cast(t, iv_type)) for t in bounds)
        if step == 0:
            raise TilecSemanticError("range() step must not be zero")
        for value in range(start, end, step):
            yield sem.to_tensor(value, iv_type)


def truth(value: Any) -> bool:
    """The Python truth of a condition (the interpreter's side of `condition`)."""
    if isinstance(value, tensor):
        return current_semantic().to_python_bool(value)
    return bool(_unwrap(value))


def flag(value: bool) -> tensor:
    """A `break`/`continue` flag of loop_exits.py: an int1 scalar that can change at run time."""
    return current_semantic().to_tensor(bool(value))


# ----------------------------------------------------------------------------- the interpreter's side


def literal(value: Any) -> constexpr:
    """A literal of the kernel's source, as the code generator reads it."""
    return constexpr(value)


def lazy(*thunks: Callable[[], Any]) -> Iterator[Any]:
    """The operands of `and`/`or`, each computed when `bool_op` asks for it."""
    for thunk in thunks:
        yield thunk()


def if_exp(test: Any, then: Callable[[], Any], otherwise: Callable[[], Any]) -> Any:
    """`then() if test else otherwise()`: elementwise (tl.where, both sides computed) for a
    block test, else only the chosen side (the code generator's scf.if)."""
    if isinstance(test, tensor) and test.type.is_block() and test.type.numel > 1:
        return current_semantic().where(test, then(), otherwise())
    return then() if truth(condition(test, "a conditional expression's")) else otherwise()
