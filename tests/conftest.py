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
    """'interpreter' or 'gpu'; sets tilec's config accordingly for the test."""
    monkeypatch.setattr(config, "interpret", request.param == "interpreter")
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    return request.param


@pytest.fixture
def fresh_cache(monkeypatch, tmp_path):
    """An empty on-disk kernel cache for the test."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
