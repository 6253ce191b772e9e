"""Shared test fixtures.

Language tests take the `backend` fixture: each runs once in the interpreter (always)
and once compiled on the GPU (marked `gpu`, skipped where no GPU answers). Use
`tilec_testing.device_array`/`to_numpy` to move data to and from the backend under test.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import tilec
from tilec.config import config
from tilec.runtime.jit import JITFunction, pop_warmup


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    try:
        import torch
        return bool(torch.cuda.is_available())
    except Exception:
        return False




def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu") is not None and not gpu_available():
        pytest.skip("needs an NVIDIA GPU (and torch with CUDA)")


@pytest.fixture(params=["interpreter", pytest.param("gpu", marks=pytest.mark.gpu)])
def backend(request, monkeypatch, tmp_path):
    """'interpreter' or 'gpu'; sets tilec's config accordingly for the test.

    In the interpreter, every launch is also compiled (not run) for the same argument
    types, so CI — which has no GPU — still takes every test kernel through the whole
    compiler down to a cubin.
    """
    monkeypatch.setattr(config, "interpret", request.param == "interpreter")
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    if request.param == "interpreter" and _ptxas_available():
        monkeypatch.setattr(JITFunction, "run", _run_and_compile)
    return request.param


_original_run = JITFunction.run


def _run_and_compile(self, *args, grid, **kwargs):
    if pop_warmup(kwargs, self.arg_names):  # Triton's run(..., warmup=True): compiles only
        return self.warmup(*args, grid=grid, **kwargs)
    result = _original_run(self, *args, grid=grid, **kwargs)
    options, values = self._split_call(args, dict(kwargs))
    typed = [_as_type(value, index in self.constexprs) for index, value in enumerate(values)]
    options.pop("stream", None)
    keyword_only = {p.name: t for p, t in zip(self.params, typed) if p.kind is p.KEYWORD_ONLY}
    with _compile_mode():
        self.warmup(*typed[:len(typed) - len(keyword_only)], grid=grid, **keyword_only, **options)
    return result


def _as_type(value, is_constexpr: bool):
    """An array argument as its pointer type ("*fp32:16"); other arguments unchanged."""
    if is_constexpr:
        return value
    if isinstance(value, str):
        return tilec.language.constexpr(value)  # warmup reads bare strings as types
    from tilec.runtime.specialize import dtype_of_array
    dtype = dtype_of_array(value)
    if dtype is None:
        return value
    address = value.ctypes.data if hasattr(value, "ctypes") else value.data_ptr()
    return f"*{tilec.language.core.signature_name(dtype)}{':16' if address % 16 == 0 else ''}"


class _compile_mode:
    def __enter__(self):
        self.saved = config.interpret
        config.interpret = False

    def __exit__(self, *exc):
        config.interpret = self.saved


@functools.lru_cache(maxsize=None)
def _ptxas_available() -> bool:
    from tilec.backend import toolkit
    try:
        toolkit.ptxas_path()
        return True
    except toolkit.ToolkitError:
        return False


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory):
    """Each test session (each xdist worker) compiles into a disk cache of its own: a
    kernel cached by an earlier run, or by the user, must not turn a test's compilation
    into a hit. Tests that need an empty one take `fresh_cache`."""
    saved = config.cache_dir
    config.cache_dir = str(tmp_path_factory.mktemp("tilec-cache"))
    yield
    config.cache_dir = saved


@pytest.fixture
def fresh_cache(monkeypatch, tmp_path):
    """An empty on-disk kernel cache for the test."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
