"""Every test here runs kernels in the interpreter, whatever TILEC_INTERPRET says."""
import pytest

from tilec.config import config


@pytest.fixture(autouse=True)
def interpret(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "interpret", True)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
