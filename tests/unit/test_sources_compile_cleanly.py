"""Every Python source of the package, the benchmarks and the examples compiles without
warnings: an invalid escape sequence in a docstring (`'\\['` in the corpus runner's usage
text) printed a SyntaxWarning in front of every corpus log."""
from __future__ import annotations

import pathlib
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = sorted(p for folder in ("tilec", "benchmarks", "examples") for p in (ROOT / folder).rglob("*.py")
                 if ".triton-tutorials" not in p.parts)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_compiles_without_warnings(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
