"""Every example is also a test: each runs its own checks on each backend."""
from __future__ import annotations

import importlib.util
import os

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["vector_add", "softmax"])
def test_example(backend, name, capsys):
    load(name).main()
    assert f"{name.replace('_', ' ')}: OK" in capsys.readouterr().out
