"""Imports flow one way: the language layer imports nothing from the layers above it, and
the layout algebra (with its text form and its drawings) nothing from the IR.

`import tilec` (the package's __init__) imports the runtime on purpose: it is the public
surface (`tilec.jit`, `tilec.compile`). So the check runs in a fresh interpreter where the
`tilec` package is registered without running its __init__, and then imports the
language alone.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

_HIGHER_LAYERS = ("tilec.runtime", "tilec.frontend", "tilec.backend", "tilec.passes", "tilec.dialects",
                  "tilec.interpreter")

_SCRIPT = textwrap.dedent("""
    import importlib, importlib.util, json, sys, types
    spec = importlib.util.find_spec("tilec")
    package = types.ModuleType("tilec")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["tilec"] = package
    importlib.import_module(sys.argv[1])
    print(json.dumps(sorted(name for name in sys.modules if name.startswith(("tilec.", "mlir")))))
""")


@pytest.mark.parametrize("module", ["tilec.language", "tilec.language.semantic", "tilec.language.extra.libdevice"])
def test_the_language_imports_no_higher_layer(module: str) -> None:
    result = subprocess.run([sys.executable, "-c", _SCRIPT, module], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert module in loaded
    higher = [name for name in loaded if name.startswith(_HIGHER_LAYERS)]
    assert higher == [], f"importing {module} imported {higher}"


@pytest.mark.parametrize("module", ["tilec.layout.syntax", "tilec.layout.drawing"])
def test_the_layouts_need_no_ir(module: str) -> None:
    """Layouts, their text and their pictures are plain Python: no MLIR, no compiler."""
    result = subprocess.run([sys.executable, "-c", _SCRIPT, module], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert module in loaded
    higher = [name for name in loaded if name.startswith(_HIGHER_LAYERS + ("tilec.language", "mlir"))]
    assert higher == [], f"importing {module} imported {higher}"
