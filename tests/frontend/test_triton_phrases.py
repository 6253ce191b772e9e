"""Where tilec refuses what Triton refuses, its message also carries Triton's key phrase
(users search for it, and tests written for Triton match it), and the located
CompilationError keeps the error it was made from as `__cause__`, as Triton's does."""
from __future__ import annotations

import pytest

import tilec
import tilec.language as tl


@tilec.jit
def bitwise_kernel(x_ptr, y_ptr, OP: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    if OP == "&":
        z = x & x
    elif OP == "|":
        z = x | 1
    elif OP == "^":
        z = x ^ x
    else:
        z = x << 1
    tl.store(y_ptr + tl.arange(0, 8), z)


@tilec.jit
def division_kernel(x_ptr, u_ptr, y_ptr, OP: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    u = tl.load(u_ptr + tl.arange(0, 8))
    if OP == "/":
        z = x / u
    elif OP == "//":
        z = x // u
    else:
        z = x % u
    tl.store(y_ptr + tl.arange(0, 8), z.to(tl.float32))


def compile_error(kernel, signature, constexprs) -> tilec.CompilationError:
    with pytest.raises(tilec.CompilationError) as info:
        tilec.compile(kernel, signature=signature, constexprs=constexprs)
    return info.value


@pytest.mark.parametrize("op", ["&", "|", "^", "<<"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "fp64"])
def test_bitwise_operators_on_floats(op, dtype):
    error = compile_error(bitwise_kernel, {"x_ptr": f"*{dtype}:16", "y_ptr": f"*{dtype}:16"}, {"OP": op})
    assert "invalid operands of type" in error.message
    assert "needs integer or boolean operands" in error.message  # tilec's own sentence beside it
    assert "invalid operands of type" in str(error.__cause__)


@pytest.mark.parametrize("op", ["/", "//", "%"])
@pytest.mark.parametrize("signed,unsigned", [("i32", "u32"), ("i64", "u16"), ("i8", "u64")])
def test_division_of_mixed_signedness(op, signed, unsigned):
    error = compile_error(division_kernel, {"x_ptr": f"*{signed}:16", "u_ptr": f"*{unsigned}:16",
                                            "y_ptr": "*fp32:16"}, {"OP": op})
    assert "because they have different signedness" in error.message
    assert "Cannot use /, //, or % with" in error.message
    assert error.__cause__ is not None and str(error.__cause__) == error.message


def test_the_cause_is_there_on_both_backends(monkeypatch):
    import numpy as np
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    with pytest.raises(tilec.CompilationError) as info:
        bitwise_kernel[(1,)](np.ones(8, np.float32), np.zeros(8, np.float32), OP="&")
    assert "invalid operands of type" in str(info.value.__cause__)


# ----------------------------------------------------------------------------- the frontend's phrases


@tilec.jit
def _returns_two_types(x, flag):
    if flag > 0:
        return x
    return x.to(tl.int32)


@tilec.jit
def frontend_phrase_kernel(x_ptr, n, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    if CASE == "return type":
        x = _returns_two_types(x, n)
    elif CASE == "return in loop":
        for i in range(n):
            return
    elif CASE == "block condition":
        if x > 0:
            x = x + 1
    elif CASE == "item assignment":
        x[0] = 1.0
    elif CASE == "attribute assignment":
        x.dtype = tl.float16
    elif CASE == "unpack too many":
        a, b = (1, 2, 3)
    elif CASE == "unpack too few":
        a, b, c = (1, 2)
    elif CASE == "unpack non-iterable":
        a, b = 5
    elif CASE == "starred target":
        a, *b = (1, 2, 3)
    tl.store(x_ptr + tl.arange(0, 8), x)


@tilec.jit
def nested_def_kernel(x_ptr):
    def helper(v):
        return v
    tl.store(x_ptr, helper(1.0))


@pytest.mark.parametrize("case, phrase", [
    ("return type", "Return type mismatch"),
    ("return in loop", "Cannot have `return` statements inside `while` or `for` statements in triton"),
    ("block condition", "Boolean value of Tensor with more than one value is ambiguous"),
    ("item assignment", "__setitem__ is not supported in triton"),
    ("attribute assignment", "Attribute assignment is not supported in triton"),
    ("unpack too many", "too many values to unpack (expected 2)"),
    ("unpack too few", "not enough values to unpack (expected 3, got 2)"),
    ("unpack non-iterable", "cannot unpack non-iterable value"),
    ("starred target", "starred assignment targets are not supported"),
])
def test_frontend_errors_carry_tritons_phrase(case, phrase):
    error = compile_error(frontend_phrase_kernel, {"x_ptr": "*fp32:16", "n": "i32"}, {"CASE": case})
    assert phrase in error.message


def test_nested_function_definitions():
    error = compile_error(nested_def_kernel, {"x_ptr": "*fp32:16"}, {})
    assert "nested function definitions are not allowed inside a @triton.jit kernel" in error.message
    assert "define a separate @tilec.jit function" in error.message


def test_aggregate_errors_carry_tritons_phrases():
    @tilec.aggregate
    class State:
        x: tl.constexpr

    state = State(1)
    with pytest.raises(AttributeError, match="cannot assign to field 'x' on immutable aggregate State"):
        state.x = 2
    with pytest.raises(TypeError, match="has no field 'z'"):
        tl.aggregate_replace(state, z=3)
    with pytest.raises(TypeError, match="expects an aggregate instance"):
        tl.aggregate_replace((1, 2), x=3)
    with pytest.raises(TypeError, match="Aggregates can only inherit from other aggregates"):
        @tilec.aggregate
        class Child(dict):
            y: tl.constexpr
