"""FileCheck tests of tilec's dialects and passes: one directory per pass, as in MLIR and Triton.

Every `tests/ir/**/*.mlir` is one test case; its `// RUN:` lines say how to run it:

    // RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s
    // RUN: not tilec-opt %s --verify-only 2>&1 | FileCheck %s --check-prefix=ERR

- `tilec-opt` is `python -m tilec.opt`, called in-process here (`tilec.opt.main`) for speed;
- `not` expects it to fail (exit status not 0); a Python exception escaping it is a crash
  and fails the test either way;
- `2>&1` sends its errors to FileCheck too (otherwise only its output is checked);
- `--split-input-file` (a tilec-opt flag, as in mlir-opt) runs each piece between
  `// -----` lines as its own module.

A line `// XFAIL: <reason>` marks a known bug: the test is a strict xfail, so it must
start passing (and lose the marker) when the bug is fixed.
"""
from __future__ import annotations

import contextlib
import io
import pathlib
import re
import shlex
import subprocess
import sys
import traceback

import pytest

from tilec.backend.toolkit import llvm_tool
from tilec.opt import main as tilec_opt

ROOT = pathlib.Path(__file__).parent
FILES = sorted(ROOT.rglob("*.mlir"))

_RUN = re.compile(r"^\s*// RUN:\s*(.*)$", re.M)
_XFAIL = re.compile(r"^\s*// XFAIL:\s*(.*)$", re.M)
_COMMAND = re.compile(r"^(?P<not>not\s+)?tilec-opt\s+(?P<args>.*?)\s*(?P<stderr>2>&1)?\s*\|\s*FileCheck\s+(?P<check>.*)$")


def _run_tilec_opt(args: list[str], text: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `tilec-opt args` reading `text` as its input."""
    out, err = io.StringIO(), io.StringIO()
    stdin = sys.stdin
    try:
        sys.stdin = io.StringIO(text)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = tilec_opt(args)
    except SystemExit as exc:  # argparse errors
        status = exc.code if isinstance(exc.code, int) else 1
    except Exception:
        pytest.fail(f"tilec-opt {shlex.join(args)} crashed:\n{traceback.format_exc()}\n{err.getvalue()}",
                    pytrace=False)
    finally:
        sys.stdin = stdin
    return status, out.getvalue(), err.getvalue()


def _run_line(path: pathlib.Path, line: str) -> None:
    match = _COMMAND.match(line.strip())
    if not match:
        pytest.fail(f"{path.name}: cannot understand RUN line: {line}", pytrace=False)
    args = shlex.split(match["args"])
    args = ["-" if a == "%s" else a for a in args]
    status, out, err = _run_tilec_opt(args, path.read_text())
    if match["not"] is None and status != 0:
        pytest.fail(f"tilec-opt {shlex.join(args)} failed (status {status}):\n{err}", pytrace=False)
    if match["not"] and status == 0:
        pytest.fail(f"tilec-opt {shlex.join(args)} was expected to fail but succeeded:\n{out}", pytrace=False)
    outputs = [out + err if match["stderr"] else out]
    check_args = [str(path) if a == "%s" else a for a in shlex.split(match["check"])]
    checked = subprocess.run([llvm_tool("FileCheck"), *check_args], input="".join(outputs),
                             capture_output=True, text=True)
    if checked.returncode != 0:
        pytest.fail(f"FileCheck failed for RUN: {line}\n{checked.stderr}", pytrace=False)


def _case(path: pathlib.Path):
    xfail = _XFAIL.search(path.read_text())
    marks = [pytest.mark.xfail(reason=xfail[1].strip(), strict=True)] if xfail else []
    return pytest.param(path, id=str(path.relative_to(ROOT)), marks=marks)


@pytest.mark.parametrize("path", [_case(p) for p in FILES])
def test_filecheck(path: pathlib.Path) -> None:
    lines = _RUN.findall(path.read_text())
    assert lines, f"{path} has no // RUN: line"
    for line in lines:
        _run_line(path, line)
