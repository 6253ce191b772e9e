"""What a newcomer tripped on (issue 26), outside the command line (tests/unit/test_cli.py
has those): an `assert`'s message as written, environment flags and targets that are
refused rather than misread, `import tilec` without the drawing code, a PNG font with
lower case, and a clear error where the launcher extension is missing."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.config import Config
from tilec.interpreter import DeviceAssertionError
from tilec.layout import _raster
from tilec.runtime import kernel as kernel_module

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- assert messages


@tilec.jit
def positive_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    assert x > 0, "x must be positive"
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


@tilec.jit
def static_kernel(x_ptr, BLOCK: tl.constexpr):
    assert BLOCK >= 64, "BLOCK must be at least 64"
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


def test_interpreter_assert_message_is_the_string_written(monkeypatch):
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    x = np.random.default_rng(26).uniform(0.5, 2.0, 200).astype(np.float32)
    x[150] = -x[150]
    with pytest.raises(DeviceAssertionError) as failed:
        positive_kernel[(2,)](x, np.full(200, np.nan, np.float32), 200, BLOCK=128, debug=True)
    assert failed.value.message == "x must be positive"
    assert str(failed.value).endswith("program id (1, 0, 0) (element 22, one of 1 failing): x must be positive")
    assert "constexpr" not in str(failed.value)


def _ptx_strings(ptx: str) -> list[str]:
    """The text of every byte-array global of a PTX file (printf formats, assert messages)."""
    return [bytes(int(b) for b in body.split(",")).rstrip(b"\0").decode()
            for body in re.findall(r"\.global \.align 1 \.b8 \w+\[\d+\] = \{([\d, ]+)\};", ptx)]


def test_compiled_assert_message_is_the_string_written():
    compiled = tilec.compile(positive_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
                             constexprs={"BLOCK": 128}, debug=True, target="sm_90")
    strings = _ptx_strings(compiled.asm["ptx"])
    assert any(s.startswith("device assertion failed in kernel `positive_kernel`") and
               s.endswith(": x must be positive\n") for s in strings), strings
    assert not any("constexpr" in s for s in strings)


@pytest.mark.parametrize("interpret", [True, False])
def test_compile_time_assert_message_is_the_string_written(monkeypatch, interpret):
    monkeypatch.setattr(tilec.config.config, "interpret", interpret)
    with pytest.raises(tilec.CompilationError) as failed:
        if interpret:
            static_kernel[(1,)](np.zeros(32, np.float32), BLOCK=32)
        else:
            tilec.compile(static_kernel, signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 32}, target="sm_90")
    assert str(failed.value).endswith("assertion failed: BLOCK must be at least 64")
    assert "constexpr" not in str(failed.value)


# ----------------------------------------------------------------------------- settings refused visibly


@pytest.mark.parametrize("text,value", [("1", True), ("true", True), ("Yes", True), (" on ", True),
                                        ("0", False), ("false", False), ("NO", False), ("off", False), ("", False)])
def test_yes_no_variables_take_their_words(monkeypatch, recwarn, text, value):
    monkeypatch.setenv("TILEC_INTERPRET", text)
    monkeypatch.setenv("TILEC_WGMMA", text)
    config = Config.from_env()
    assert config.interpret is value
    assert config.wgmma is (value if text else True)  # unset or empty: the default, on
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("name,default", [("TILEC_INTERPRET", False), ("TILEC_DEBUG", False), ("TILEC_TMA", True)])
@pytest.mark.parametrize("text", ["2", "maybe"])
def test_other_values_warn_naming_the_variable(monkeypatch, name, default, text):
    monkeypatch.setenv(name, text)
    with pytest.warns(RuntimeWarning, match=rf"tilec: ignoring {name}='{text}': expected 1/true/yes/on or "
                                            rf"0/false/no/off; {name} stays {'on' if default else 'off'}"):
        config = Config.from_env()
    field = {"TILEC_INTERPRET": "interpret", "TILEC_DEBUG": "debug", "TILEC_TMA": "tma"}[name]
    assert getattr(config, field) is default


def test_interpret_2_warns_at_import():
    """As a user meets it: the warning is printed when tilec is imported."""
    done = subprocess.run([sys.executable, "-c", "import tilec; print(tilec.config.config.interpret)"],
                          env=dict(os.environ, TILEC_INTERPRET="2"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "False\n"
    assert "RuntimeWarning: tilec: ignoring TILEC_INTERPRET='2'" in done.stderr


@pytest.mark.parametrize("target", ["", "  "])
def test_compile_refuses_an_empty_target(target):
    with pytest.raises(tilec.TargetError, match=rf"tilec.compile: target='{target}' names no GPU; name one, such "
                                                r"as 'sm_80', 'sm_90' or 'sm_100' .*or leave target out for sm_90"):
        tilec.compile(static_kernel, signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 64}, target=target)
    assert tilec.compile(static_kernel, signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 64},
                         target="sm_80", ).metadata.target == "sm_80"  # a named one still compiles


# ----------------------------------------------------------------------------- import time

_LOADED = "import sys, json, tilec; print(json.dumps(sorted(sys.modules)))"


def test_import_tilec_leaves_the_drawing_code_out():
    done = subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "tilec.layout.encodings" in loaded  # the package is reached (encodings), its pictures are not
    assert not {"tilec.layout.drawing", "xml.sax", "xml.sax.saxutils", "colorsys"} & loaded


def test_drawing_is_imported_at_first_use():
    script = ("import sys, tilec.layout as layout; assert 'tilec.layout.drawing' not in sys.modules; "
              "from tilec.layout import draw; print(draw('#tilegpu.shared<{maxPhase = 1 : i32, order = array<i32: 1, "
              "0>, perPhase = 1 : i32, vec = 1 : i32}>', '2x2', 'svg')[:4]); print(layout.save.__module__)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["<svg", "tilec.layout.drawing"]  # drawn, and save is there too


def test_svg_text_is_escaped():
    from tilec.layout.drawing import _escape
    assert _escape("a < b && c > d") == "a &lt; b &amp;&amp; c &gt; d"


# ----------------------------------------------------------------------------- the PNG font


def _drawn(text: str) -> bytes:
    canvas = _raster.Canvas(_raster.text_width(text), _raster.GLYPH_HEIGHT)
    canvas.text(0, 0, text)
    return bytes(canvas.pixels)


def test_png_font_has_lower_case_and_tells_b_from_8():
    assert _drawn("B") != _drawn("8") and _drawn("0") != _drawn("O")
    for upper in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        assert _drawn(upper.lower()) != _drawn(upper), upper
    assert _drawn("12b3") != _drawn("12B3") != _drawn("1283")  # a shared layout's cell: offset b bank
    printable = [chr(c) for c in range(32, 127)]
    assert all(c in _raster._GLYPHS for c in printable)  # none drawn as '?' but '?' itself
    assert len({_drawn(c) for c in printable}) == len(printable)  # no two alike
    for c, glyph in _raster._GLYPHS.items():
        rows = glyph.split()
        assert _raster.CAP_HEIGHT <= len(rows) <= _raster.GLYPH_HEIGHT, c
        assert all(len(row) == _raster.GLYPH_WIDTH for row in rows), c
    descenders = {c for c, glyph in _raster._GLYPHS.items() if len(glyph.split()) > _raster.CAP_HEIGHT}
    assert descenders == set("gjpqy,;")


# ----------------------------------------------------------------------------- a missing launcher extension


def _fake_package(monkeypatch, root: Path) -> Path:
    """Makes `require_launcher` look at a tilec package under `root` whose launcher did
    not import."""
    (root / "tilec" / "runtime").mkdir(parents=True)
    monkeypatch.setattr(kernel_module, "__file__", str(root / "tilec" / "runtime" / "kernel.py"))
    monkeypatch.setattr(kernel_module, "_launcher", None)
    monkeypatch.setattr(kernel_module, "_launcher_import_error", ImportError("undefined symbol: PyFoo"))
    return root


def test_missing_launcher_of_a_source_tree(monkeypatch, tmp_path):
    root = _fake_package(monkeypatch, tmp_path / "checkout")
    (root / "csrc").mkdir()
    (root / "csrc" / "launcher.cpp").write_text("// the source")
    with pytest.raises(ImportError) as failed:
        kernel_module.require_launcher()
    message = str(failed.value)
    assert message.startswith(f"tilec is imported from the source tree at {root}, which has no built launcher "
                              "extension (tilec/_launcher*.so")
    assert "Run from another directory to use the installed tilec" in message
    assert message.endswith(f"`pip install -e .` in {root}.")


def test_missing_launcher_of_an_installed_package(monkeypatch, tmp_path):
    root = _fake_package(monkeypatch, tmp_path / "site-packages")
    with pytest.raises(ImportError, match=r"tilec's launcher extension \(tilec/_launcher\*\.so\) is missing from "
                                          r".*site-packages/tilec: .*reinstall tilec"):
        kernel_module.require_launcher()


def test_launcher_that_does_not_load(monkeypatch, tmp_path):
    root = _fake_package(monkeypatch, tmp_path / "site-packages")
    (root / "tilec" / "_launcher.cpython-399-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    with pytest.raises(ImportError, match=r"tilec cannot load its launcher extension .*_launcher\.cpython-399.* "
                                          r"\(undefined symbol: PyFoo\); rebuild it"):
        kernel_module.require_launcher()


_WITHOUT_LAUNCHER = textwrap.dedent("""
    import sys
    # The copy has no extension; without this, the editable install this test runs in
    # would supply the repository's to it (its finder serves tilec's submodules).
    sys.modules["tilec._launcher"] = None
    import numpy as np, tilec, tilec.language as tl
    print("imported", tilec.__file__)

    @tilec.jit
    def double(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)

    compiled = tilec.compile(double, signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 64}, target="sm_90")
    print("compiled", compiled.name)
    x = np.random.default_rng(1).uniform(1, 2, 64).astype(np.float32)
    tilec.config.config.interpret = True
    y = x.copy()
    double[(1,)](y, BLOCK=64)
    print("interpreted", bool((y == 2 * x).all()))
    tilec.config.config.interpret = False
    try:
        compiled[(1,)](x, 64)
    except ImportError as error:
        print("launch:", error)
""")


def test_a_source_tree_without_the_launcher(tmp_path):
    """As the newcomer met it: a script beside a checkout that was installed with `pip
    install .` (so the checkout has no built extension) imports the checkout. Compiling
    and the interpreter work; a launch says what happened and what to do."""
    import shutil
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "tilec", checkout / "tilec", ignore=shutil.ignore_patterns("_launcher*", "__pycache__"))
    shutil.copytree(ROOT / "csrc", checkout / "csrc")
    (checkout / "script.py").write_text(_WITHOUT_LAUNCHER)
    done = subprocess.run([sys.executable, "script.py"], cwd=checkout, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache")))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [f"imported {checkout / 'tilec' / '__init__.py'}", "compiled double", "interpreted True"]
    assert lines[3].startswith(f"launch: tilec is imported from the source tree at {checkout}, which has no built "
                               "launcher extension (tilec/_launcher*.so"), lines
    assert lines[3].endswith(f"`pip install -e .` in {checkout}.")
