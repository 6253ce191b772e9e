"""Every test here runs kernels in the interpreter, whatever TILEC_INTERPRET says."""
import pytest

from tilec.config import config


@pytest.fixture(autouse=True)
def interpret(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "interpret", True)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))


@pytest.fixture
def sem():
    """A semantic layer over a NumpyBuilder with no memory, active for the test."""
    import numpy as np

    from tilec.interpreter import Memory, NumpyBuilder
    from tilec.language.core import activate_semantic
    from tilec.language.semantic import Semantic

    semantic = Semantic(NumpyBuilder(Memory({}), (1, 1, 1), "test_kernel"))
    with activate_semantic(semantic), np.errstate(all="ignore"):
        yield semantic
