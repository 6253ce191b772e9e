"""`tilec compile`: a kernel of a file, its signature and constexprs from the command line,
any stage printed (sass through a disassembler found next to ptxas), and one-line errors."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tilec.backend import toolkit
from tilec.cli import main
from tilec.cli import compile as compile_command

ROOT = Path(__file__).resolve().parents[2]
VECTOR_ADD = str(ROOT / "examples" / "vector_add.py")
ADD = ["compile", f"{VECTOR_ADD}:add_kernel", "-s", "x_ptr=*fp32:16,y_ptr=*fp32:16,out_ptr=*fp32:16",
       "-s", "n_elements=i32", "-c", "BLOCK_SIZE=1024"]

KERNELS = '''
import tilec
import tilec.language as tl
from helper import SCALE          # a neighbour of this file


@tilec.jit
def scale(x_ptr, n, factor, BLOCK: tl.constexpr, DTYPE: tl.constexpr, MASKED: tl.constexpr = True):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n) if MASKED else tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, (x * factor * SCALE).to(DTYPE).to(tl.float32), mask=offs < n)


@tilec.autotune(configs=[tilec.Config({"BLOCK": 128})], key=["n"])
@tilec.jit
def tuned(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0, mask=offs < n)


def not_a_kernel():
    pass


if __name__ == "__main__":
    raise SystemExit("the command must not run this")
'''


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def kernels(tmp_path) -> str:
    # A kernel reads only constant globals (as in Triton), so the imported one is a tl.constexpr.
    (tmp_path / "helper.py").write_text("import tilec.language as tl\nSCALE = tl.constexpr(2.0)\n")
    (tmp_path / "kernels.py").write_text(KERNELS)
    return str(tmp_path / "kernels.py")


@pytest.mark.parametrize("stage,expected", [
    ("ttir", '"tile.load"'), ("ttgir", "#blocked0 = #tilegpu.blocked<"), ("llir", "define ptx_kernel void @add_kernel"),
    ("ptx", ".visible .entry add_kernel("),
])
def test_stages(capsys, stage, expected):
    status, out, err = run(capsys, *ADD, "--stage", stage)
    assert status == 0, err
    assert expected in out


def test_options_reach_the_compiler(capsys):
    status, out, _ = run(capsys, *ADD, "--stage", "ptx", "--target", "sm_80", "--num-warps", "8")
    assert status == 0 and ".target sm_80" in out and ".maxntid 256" in out
    status, out, _ = run(capsys, *ADD, "--num-warps", "8")
    assert '"tilegpu.num-warps" = 8' in out


def test_ttgir_needs_no_toolkit(capsys, monkeypatch):
    def no_ptxas():
        raise toolkit.ToolkitError("ptxas not found")
    monkeypatch.setattr(toolkit, "ptxas_path", no_ptxas)
    status, out, err = run(capsys, *ADD, "--stage", "ttgir")
    assert status == 0, err


def test_cubin_to_a_file(capsys, tmp_path):
    path = tmp_path / "add.cubin"
    status, out, err = run(capsys, *ADD, "--stage", "cubin", "-o", str(path))
    assert status == 0 and out == ""
    assert path.read_bytes()[:4] == b"\x7fELF"
    assert err.startswith("add_kernel: sm_90, 4 warps, ") and "registers" in err


def test_file_kernels_types_and_constexprs(capsys, kernels):
    # unnamed types fill the parameters not named, in order; a dtype and a bool as constexprs
    status, out, err = run(capsys, "compile", f"{kernels}:scale", "-s", "*fp32:16,i32,fp32",
                           "-c", "BLOCK=256,DTYPE=fp16", "-c", "MASKED=false")
    assert status == 0, err
    assert "tensor<256xf16" in out and "%arg2: f32" in out
    status, out, err = run(capsys, "compile", f"{kernels}:tuned", "-s", "x_ptr=*fp32,n=i32", "-c", "BLOCK=64")
    assert status == 0, err  # the @jit function under @autotune
    assert "tensor<64x" in out


@pytest.mark.parametrize("argv,message", [
    (["nope.py:k"], "no such file: nope.py"),
    ([VECTOR_ADD], "expected FILE.py:KERNEL"),
    ([f"{VECTOR_ADD}:nokernel"], "has no kernel 'nokernel'; its kernels: add_kernel"),
    ([f"{VECTOR_ADD}:add_kernel", "-s", "x_ptr=*fp33"], "parameter 'x_ptr' of add_kernel: unknown type 'fp33'"),
    ([f"{VECTOR_ADD}:add_kernel", "-s", "x_ptr"], "bad signature item 'x_ptr': expected NAME=TYPE"),
    ([f"{VECTOR_ADD}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32,i32"], "5 unnamed types for 4 parameters"),
    ([f"{VECTOR_ADD}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32"], "'BLOCK_SIZE' of add_kernel is in neither"),
    ([f"{VECTOR_ADD}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32", "-c", "BLOCK_SIZE"], "bad constexpr 'BLOCK_SIZE'"),
    ([f"{VECTOR_ADD}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32", "-c", "BLOCK_SIZE=128", "--target", "hopper"],
     "target must look like 'sm_90'"),
    ([f"{VECTOR_ADD}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32", "-c", "BLOCK_SIZE=128", "-o", "/no/such/dir/x"],
     "cannot write /no/such/dir/x: no directory /no/such/dir"),
])
def test_errors_are_one_line(capsys, argv, message):
    status, out, err = run(capsys, "compile", *argv)
    assert status == 1 and out == ""
    assert err.startswith("tilec compile: error: ") and message in err and len(err.splitlines()) == 1


def test_more_errors(capsys, kernels, tmp_path):
    status, _, err = run(capsys, "compile", f"{kernels}:not_a_kernel")
    assert status == 1 and "'not_a_kernel' in " in err and "is not a @tilec.jit function (it is function)" in err
    broken = tmp_path / "broken.py"
    broken.write_text("import tilec\ndef f(:\n")
    status, _, err = run(capsys, "compile", f"{broken}:f")
    assert status == 1 and err.startswith(f"tilec compile: error: cannot import {broken}: invalid syntax (line 2)")
    status, _, err = run(capsys, "compile", f"{kernels}:scale", "-s", "*fp32,i32,fp32", "-c", "BLOCK=100,DTYPE=fp16")
    assert status == 1  # the kernel's own error keeps its lines: place, caret, reason
    assert err.splitlines()[0] == "tilec compile: error: the kernel does not compile:"
    assert "arange(0, 100) has 100 elements" in err
    with pytest.raises(ValueError):
        main(["--traceback", "compile", f"{VECTOR_ADD}:add_kernel", "-s", "x_ptr=*fp33"])


def _fake_disassembler(directory: Path) -> None:
    script = directory / "nvdisasm"
    script.write_text('#!/bin/sh\n[ "$1" = "-c" ] && head -c 4 "$2" | grep -q ELF && echo "fake sass of $(basename $2)"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_sass(capsys, tmp_path, monkeypatch):
    try:
        compile_command.disassembler()
        real = True
    except compile_command.CliError:
        real = False
        _fake_disassembler(tmp_path)
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    status, out, err = run(capsys, *ADD, "--stage", "sass")
    assert status == 0, err
    assert ("add_kernel" in out) if real else out == "fake sass of add_kernel.cubin\n"
    assert err.startswith("add_kernel: sm_90, ")


def test_sass_without_a_disassembler(capsys, tmp_path, monkeypatch):
    fake_ptxas = tmp_path / "bin" / "ptxas"
    fake_ptxas.parent.mkdir()
    fake_ptxas.write_text("")
    monkeypatch.setattr(toolkit, "ptxas_path", lambda: str(fake_ptxas))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(compile_command.CliError, match=f"no nvdisasm or cuobjdump .* {tmp_path / 'bin'}"):
        compile_command.disassembler()
