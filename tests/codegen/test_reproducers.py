"""A pass failing in any stage, the upstream LLVM clean-up and gpu-module-to-binary
included, is an InternalError naming a reproducer that tilec.opt reruns."""
from __future__ import annotations

import re

import pytest

import tilec
import tilec.language as tl
from tilec import opt
from tilec.backend import compiler, toolkit
from tilec.config import config
from tilec.errors import InternalError


@tilec.jit
def erf_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.erf(tl.load(x_ptr + offsets)))  # __nv_erff: links libdevice


def compile_erf():
    return tilec.compile(erf_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16"}, constexprs={"BLOCK": 128})


@pytest.fixture
def reproducers(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "reproducer_dir", str(tmp_path))
    monkeypatch.setattr(config, "dump_ir", False)
    monkeypatch.setattr(config, "always_compile", True)  # the compilation must run to fail: no cache hits
    return tmp_path


def reproducer_of(error: InternalError) -> tuple[str, str]:
    match = re.search(r"reproducer: (\S+)\nrerun with: python -m tilec.opt \S+ -p '(.+)'", str(error))
    assert match, str(error)
    return match.group(1), match.group(2)


def test_failing_llvm_cleanup_writes_a_reproducer(reproducers, monkeypatch, capsys):
    # A canonicalize that fails whenever it changes anything, right after the conversions.
    failing = "canonicalize{max-iterations=1 test-convergence=true}"
    monkeypatch.setattr(compiler, "_LLVM_CLEANUP", compiler._LLVM_CLEANUP.replace(
        "convert-cf-to-llvm,", f"convert-cf-to-llvm,{failing},"))
    with pytest.raises(InternalError, match=r"in pass canonicalize while compiling erf_kernel \(llir stage\)") as info:
        compile_erf()
    path, pipeline = reproducer_of(info.value)
    assert pipeline == failing and path.startswith(str(reproducers))
    assert opt.main([path, "-p", pipeline]) == 1  # the reproducer fails the same way
    assert "canonicalize failed" in capsys.readouterr().err


def _has_ptxas() -> bool:
    try:
        toolkit.ptxas_path()
        return True
    except toolkit.ToolkitError:
        return False


@pytest.mark.skipif(not _has_ptxas(), reason="needs a CUDA toolkit")
def test_failing_binary_step_writes_a_reproducer(reproducers, monkeypatch, capsys):
    monkeypatch.setattr(toolkit, "libdevice_path", lambda: str(reproducers / "missing" / "libdevice.10.bc"))
    with pytest.raises(InternalError, match=r"in pass gpu-module-to-binary while compiling erf_kernel \(ptx stage\)") \
            as info:
        compile_erf()
    path, pipeline = reproducer_of(info.value)
    assert pipeline == "gpu-module-to-binary{format=isa}"
    assert opt.main([path, "-p", pipeline]) == 1  # the reproducer parses, and fails the same way
    assert "libdevice.10.bc\" does not exist" in capsys.readouterr().err
