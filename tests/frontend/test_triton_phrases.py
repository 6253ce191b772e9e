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
