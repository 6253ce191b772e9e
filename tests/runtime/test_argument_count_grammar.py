"""A launch (or a call in a kernel) with too many positional arguments is reported in
Python's grammar: "takes 1 argument but 2 were given", "1 was given"."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import LaunchError, too_many_arguments
from tilec_testing import device_array


def test_the_message():
    assert too_many_arguments("k", 1, 2, ["x"]) == "k() takes 1 argument but 2 were given (its parameters: x)"
    assert too_many_arguments("k", 0, 1, []) == "k() takes 0 arguments but 1 was given (its parameters: )"
    assert too_many_arguments("k", 1, 3, ["x", "B"], ["B"]) == \
        "k() takes 1 positional argument but 3 were given; B (after `*`) is passed by keyword only"
    assert too_many_arguments("k", 2, 3, ["x", "y", "B", "C"], ["B", "C"]).endswith(
        "takes 2 positional arguments but 3 were given; B, C (after `*`) are passed by keyword only")


@tilec.jit
def one_parameter_kernel(x_ptr):
    tl.store(x_ptr, 1.0)


@tilec.jit
def keyword_only_kernel(x_ptr, *, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@tilec.jit
def _one(x):
    return x


@tilec.jit
def calls_with_two_kernel(x_ptr):
    tl.store(x_ptr, _one(1.0, 2.0))


def test_launches_and_calls(backend):
    x = device_array(np.zeros(4, np.float32), backend)
    with pytest.raises(LaunchError, match=r"one_parameter_kernel\(\) takes 1 argument but 2 were given"):
        one_parameter_kernel[(1,)](x, x)
    with pytest.raises(LaunchError, match=r"takes 1 positional argument but 2 were given; BLOCK \(after `\*`\) is "):
        keyword_only_kernel[(1,)](x, 4)
    with pytest.raises(tilec.CompilationError, match=r"_one\(\) takes 1 argument but 2 were given"):
        calls_with_two_kernel[(1,)](x)
