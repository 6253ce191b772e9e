"""`triton.runtime.errors`' names under tilec.runtime.errors (and OutOfResources,
InterpreterError under tilec.runtime, as Triton has them): programs import them to catch
a config that cannot run, a ptxas failure or an interpreter error."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec import errors
from tilec.runtime import InterpreterError as RuntimeInterpreterError
from tilec.runtime import OutOfResources as RuntimeOutOfResources
from tilec.runtime.errors import AutotunerError, InterpreterError, OutOfResources, PTXASError, TritonError


def test_the_names_are_the_errors_tilec_raises():
    assert OutOfResources is errors.OutOfResources is RuntimeOutOfResources
    assert PTXASError is errors.ToolkitError and AutotunerError is errors.LaunchError
    assert InterpreterError is RuntimeInterpreterError
    for error in (OutOfResources, PTXASError, AutotunerError, InterpreterError):
        assert issubclass(error, TritonError)


@tilec.jit
def _read_past(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets * 1000))


def test_an_out_of_bounds_load_in_the_interpreter_is_an_interpreter_error(monkeypatch):
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    with pytest.raises(InterpreterError, match="out-of-bounds"):
        _read_past[(1,)](x, out, BLOCK=16)
