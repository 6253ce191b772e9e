"""TILEC_DUMP_DIR writes a kernel's stages whether it is compiled or read from the disk cache."""
from __future__ import annotations

import pytest

import tilec
import tilec.language as tl
from tilec.backend import compiler
from tilec.config import config


@tilec.jit
def scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


SIGNATURE = {"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32", "factor": "fp32"}


def _files(directory) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def test_a_cache_hit_writes_what_the_compilation_wrote(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.setattr(config, "dump_dir", str(tmp_path / "compiled"))
    tilec.compile(scale, signature=SIGNATURE, constexprs={"BLOCK": 256})
    compiled = _files(tmp_path / "compiled")
    assert sorted(name.split(".", 1)[1] for name in compiled) == ["cubin", "ll", "ptx", "ttgir.mlir", "ttir.mlir"]

    def no_compilation(*args, **kwargs):
        raise AssertionError("the kernel was compiled again instead of read from the disk cache")

    monkeypatch.setattr(compiler, "compile_specialized", no_compilation)
    monkeypatch.setattr(config, "dump_dir", str(tmp_path / "hit"))
    tilec.compile(scale, signature=SIGNATURE, constexprs={"BLOCK": 256})
    assert _files(tmp_path / "hit") == compiled  # same names (same tag), same text and cubin


def test_a_hit_of_another_specialisation_has_its_own_files(tmp_path, monkeypatch, fresh_cache):
    for block in (128, 256):
        tilec.compile(scale, signature=SIGNATURE, constexprs={"BLOCK": block})
    monkeypatch.setattr(config, "dump_dir", str(tmp_path / "dump"))
    for block in (128, 256):
        tilec.compile(scale, signature=SIGNATURE, constexprs={"BLOCK": block})
    assert len(_files(tmp_path / "dump")) == 10


@pytest.mark.parametrize("always_compile", [False, True])
def test_nothing_is_written_without_a_dump_dir(tmp_path, monkeypatch, fresh_cache, always_compile):
    monkeypatch.setattr(config, "always_compile", always_compile)
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        tilec.compile(scale, signature=SIGNATURE, constexprs={"BLOCK": 64})
    assert list(tmp_path.iterdir()) == [fresh_cache]
