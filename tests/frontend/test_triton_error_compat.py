"""Compile errors carry what Triton's carry, so that tests written for Triton's errors
(its test_compile_errors.py) hold for tilec's:

- each location also says where it is as Triton counts it, `at LINE:COL:` (lines from
  the function's `def`, which is 1; columns from 0 in the dedented source);
- inside a called @jit function, `__cause__` is the same error one call site further in
  (Triton raises one error per call site), down to the exception it was made from, whose
  traceback starts in the language (no frames of the AST visitor); a message ending
  `(Triton: <words>)` has an error of Triton's words alone as its cause;
- constructs the frontend refuses itself (`not` of a tuple, a nested `def`) have no cause;
- a kernel reads from outside itself only constants, as in Triton: a global or a
  variable of the enclosing function holding a plain number, string or tuple is refused.
"""
from __future__ import annotations

import math
import pickle
import re
import traceback

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import UnsupportedLanguageConstruct, triton_phrase
from tilec_testing import device_array, to_numpy


def compile_error(kernel, signature=None, constexprs=None) -> tilec.CompilationError:
    with pytest.raises(tilec.CompilationError) as info:
        tilec.compile(kernel, signature=signature or {}, constexprs=constexprs or {}, target="sm_90")
    return info.value


def formatted(error: BaseException) -> str:
    """What Python prints for `error` alone (as Triton's tests format it)."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__, chain=False))


# ----------------------------------------------------------------------------- Triton's positions

@tilec.jit
def adds_a_string():
    0 + "a"


@tilec.jit
def undefined_after_a_comment(x_ptr):
    # a comment, so the failing line is the third of the function
    tl.store(x_ptr, undefined_name)  # noqa: F821


def test_location_says_triton_line_and_column():
    error = compile_error(adds_a_string)
    assert (error.location.function_line, error.location.function_col) == (2, 4)
    lines = str(error).splitlines()
    assert re.fullmatch(rf"at {re.escape(__file__)}:\d+:5 in adds_a_string:", lines[0]), lines[0]
    assert lines[1] == '    0 + "a"' and lines[2] == "    ^"
    assert lines[3] == "    (Triton: at 2:4:)"
    assert lines[-1] == error.message


def test_triton_position_counts_from_the_def_line_past_comments():
    error = compile_error(undefined_after_a_comment, {"x_ptr": "*fp32"})
    assert "(Triton: at 3:20:)" in str(error)  # the name, in `tl.store(x_ptr, undefined_name)`
    assert (error.location.function_line, error.location.function_col) == (3, 20)
    assert "is not defined" in error.message


@tilec.jit
def missing_name():
    xyz  # noqa: F821


@tilec.jit
def calls_missing_name():
    # a comment, so the call is on the third line
    missing_name()


def test_error_in_a_callee_chains_one_error_per_call_site():
    error = compile_error(calls_missing_name)
    text = formatted(error)
    assert "(Triton: at 3:4:)" in text and "(Triton: at 2:4:)" in text
    inner = error.__cause__
    assert isinstance(inner, tilec.CompilationError) and inner.call_stack == ()
    assert inner.location == error.location and inner.message == error.message
    assert "(Triton: at 2:4:)" in formatted(inner) and "(Triton: at 3:4:)" not in formatted(inner)
    assert error.__cause__ is inner  # the same object each time it is read
    assert "code_generator.py" not in formatted(error) + formatted(inner)


@tilec.jit
def returns_two_shapes(n):
    if n == 0:
        return tl.arange(0, 4)
    else:
        return tl.arange(0, 8)


@tilec.jit
def calls_returns_two_shapes(n):
    returns_two_shapes(n)


def test_a_return_of_another_type_is_reported_at_that_return():
    error = compile_error(calls_returns_two_shapes, {"n": "i32"})
    assert "(Triton: at 2:4:)" in str(error)  # the call in the kernel
    assert "(Triton: at 5:8:)" in str(error.__cause__)  # the second `return`
    assert error.location.source_line.strip() == "return tl.arange(0, 8)"
    assert "Return type mismatch" in error.message and "Inconsistent return types" in error.message


# ----------------------------------------------------------------------------- causes

@tilec.jit
def expands_none():
    tl.expand_dims(None, -1)


def test_the_cause_traceback_starts_in_the_language():
    cause = compile_error(expands_none).__cause__
    text = formatted(cause)
    assert "core.py" in text and "builtins.py" in text
    assert "code_generator.py" not in text and "calls.py" not in text


@tilec.jit
def arange_of_six():
    tl.arange(2, 8)


@tilec.jit
def full_of_33():
    tl.full((33,), 0, dtype=tl.int64)


@pytest.mark.parametrize("kernel, phrase", [(arange_of_six, "arange's range must be a power of 2"),
                                            (full_of_33, "Shape element 0 must be a power of 2")])
def test_the_cause_of_a_message_with_triton_words_is_those_words(kernel, phrase):
    error = compile_error(kernel)
    assert str(error.__cause__) == phrase
    assert error.message.endswith(f"(Triton: {phrase})") and len(error.message) > len(phrase) + 12


def test_triton_phrase():
    assert triton_phrase("x must be even (Triton: x must be even)") == "x must be even"
    assert triton_phrase("a (Triton: is not (currently) implemented)") == "is not (currently) implemented"
    assert triton_phrase("no phrase (here)") is None
    assert triton_phrase("an unbalanced (Triton: a) b)") is None
    assert triton_phrase("(Triton: inside) then more") is None


@tilec.jit
def not_of_a_tuple():
    not (0, 0)


@tilec.jit
def not_of_a_tuple_launched(out_ptr):
    t = (1, 2)
    tl.store(out_ptr, not t)


def test_not_of_a_tuple_is_refused_without_a_cause():
    error = compile_error(not_of_a_tuple)
    assert error.__cause__ is None
    assert "(Triton: at 2:4:)" in str(error)
    assert "`not` of a tuple is not supported" in error.message
    assert "is not (currently) implemented on type tuple" in error.message


def test_not_of_a_tuple_is_refused_on_both_backends(backend):
    out = device_array(np.full(1, 7, np.int32), backend)
    with pytest.raises(tilec.CompilationError, match="`not` of a tuple is not supported") as info:
        not_of_a_tuple_launched[(1,)](out)
    assert info.value.__cause__ is None
    assert to_numpy(out)[0] == 7


@tilec.jit
def defines_a_function():
    def helper():
        return 1


def test_unsupported_constructs_have_no_cause_and_pickle():
    error = compile_error(defines_a_function)
    assert isinstance(error, UnsupportedLanguageConstruct) and error.__cause__ is None
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is UnsupportedLanguageConstruct and str(again) == str(error)


# ----------------------------------------------------------------------------- globals

PLAIN_INT = 42
PLAIN_FLOAT = 2.5
PLAIN_TUPLE = (16, 32)
PLAIN_STRING = "relu"
CONSTANT = tl.constexpr(3)
ANNOTATED: tl.constexpr = 5
NOTHING = None


@tilec.jit
def reads_plain_int(out_ptr):
    tl.store(out_ptr, PLAIN_INT)


@tilec.jit
def reads_plain_float(out_ptr):
    tl.store(out_ptr, PLAIN_FLOAT)


@tilec.jit
def reads_plain_tuple(out_ptr):
    tl.store(out_ptr, PLAIN_TUPLE[0])


@tilec.jit
def reads_plain_string(out_ptr):
    if PLAIN_STRING == "relu":
        tl.store(out_ptr, 1)


@pytest.mark.parametrize("kernel, name", [(reads_plain_int, "PLAIN_INT"), (reads_plain_float, "PLAIN_FLOAT"),
                                          (reads_plain_tuple, "PLAIN_TUPLE"), (reads_plain_string, "PLAIN_STRING")])
def test_plain_globals_are_refused(kernel, name):
    error = compile_error(kernel, {"out_ptr": "*fp32"})
    assert f"global variable '{name}'" in error.message and f"`{name} = tl.constexpr(...)`" in error.message
    assert error.message.endswith(f"(Triton: Cannot access global variable {name} from within @jit'ed function)")
    assert error.location.source_line.strip().startswith(("tl.store", "if"))


@pytest.mark.parametrize("kernel", [reads_plain_int, reads_plain_tuple])
def test_plain_globals_are_refused_on_both_backends(backend, kernel):
    out = device_array(np.full(1, -1.0, np.float32), backend)
    with pytest.raises(tilec.CompilationError, match="Cannot access global variable"):
        kernel[(1,)](out)
    assert to_numpy(out)[0] == -1.0


def test_a_captured_plain_variable_is_refused():
    captured = 42

    @tilec.jit
    def kernel(out_ptr):
        tl.store(out_ptr, captured)

    error = compile_error(kernel, {"out_ptr": "*fp32"})
    assert "'captured' (42) is a variable of the function that defines kernel" in error.message
    assert error.message.endswith("(Triton: captured is not defined)")


@tilec.jit
def reads_constant_globals(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = x * CONSTANT + ANNOTATED + math.pi  # a module's attribute is read as it is
    if NOTHING is None:
        y = y + 1
    tl.store(out_ptr + offs, y.to(DTYPE))


DTYPE = tl.float32


def test_constant_globals_are_read(backend, rng):
    x = rng.standard_normal(16).astype(np.float32)
    out = device_array(np.full(16, np.nan, np.float32), backend)
    reads_constant_globals[(1,)](device_array(x, backend), out, BLOCK=16)
    np.testing.assert_allclose(to_numpy(out), x.astype(np.float64) * 3 + 5 + math.pi + 1, rtol=1e-6)


def test_captured_constants_and_functions_are_read(backend, rng):
    factor = tl.constexpr(4)

    @tilec.jit
    def double(v):
        return v * 2

    @tilec.jit
    def kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, double(tl.load(x_ptr + offs)) * factor)

    x = rng.standard_normal(8).astype(np.float32)
    out = device_array(np.full(8, np.nan, np.float32), backend)
    kernel[(1,)](device_array(x, backend), out, BLOCK=8)
    np.testing.assert_allclose(to_numpy(out), x.astype(np.float64) * 8, rtol=1e-6)


@tilec.jit
def global_as_default(out_ptr, value=PLAIN_INT):
    tl.store(out_ptr, value)


def test_a_plain_global_as_a_default_argument_is_read(backend):
    out = device_array(np.full(1, -1, np.int32), backend)
    global_as_default[(1,)](out)
    assert to_numpy(out)[0] == PLAIN_INT
