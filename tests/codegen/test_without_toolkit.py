"""Compiling where the CUDA toolkit is missing: ttir, ttgir and llir never need it, ptx
needs libdevice only for a kernel calling one of its functions, and only the cubin needs
ptxas. A missing piece leaves out the stages that need it, and reading one says, in one
sentence, what to install.

The toolkit is hidden by pointing TILEC_CUDA_HOME (the only place looked at when set)
at an empty directory, so these tests mean the same on machines with and without one.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend.compiler import CompiledKernel
from tilec.config import config
from tilec.runtime import driver
from tilec.runtime.kernel import LoadedKernel

ADD_SIGNATURE = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32"}


@tilec.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@tilec.jit
def erf_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.erf(tl.load(x_ptr + offsets)))  # __nv_erff, from libdevice


@pytest.fixture
def no_toolkit(monkeypatch, tmp_path):
    empty = tmp_path / "no-cuda"
    empty.mkdir()
    monkeypatch.setattr(config, "tilec_cuda_home", str(empty))
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    return empty


def test_every_stage_but_the_cubin_without_ptxas(no_toolkit):
    k = tilec.compile(add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK": 256}, target="sm_90")
    assert sorted(k.asm) == ["llir", "ptx", "ttgir", "ttir"]
    assert ".target sm_90a" in k.asm["ptx"] and "cubin" not in k.asm
    assert list(k.missing) == ["cubin"]
    with pytest.raises(tilec.ToolNotFoundError) as info:
        k.asm["cubin"]
    assert str(info.value) == (f"add_kernel has no cubin, because ptxas was not found: TILEC_CUDA_HOME is "
                               f"{no_toolkit}, which has no bin/ptxas (unset it to use the nvidia-cuda-nvcc wheel "
                               "tilec depends on)")
    assert "\n" not in str(info.value)
    assert repr(k).endswith(", no cubin)")
    assert k.n_regs == 0  # ptxas reports them


@pytest.mark.parametrize("target", ["sm_80", "sm_100", "sm_120"])
def test_newer_targets_too(no_toolkit, target):
    k = tilec.compile(add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK": 256}, target=target)
    assert f".target {target}" in k.asm["ptx"] and list(k.missing) == ["cubin"]


def test_libdevice_is_needed_from_the_ptx_stage_on(no_toolkit):
    k = tilec.compile(erf_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16"}, constexprs={"BLOCK": 128})
    assert sorted(k.asm) == ["llir", "ttgir", "ttir"]
    assert "declare float @__nv_erff(float)" in k.asm["llir"]
    assert list(k.missing) == ["ptx", "cubin"]
    with pytest.raises(tilec.ToolNotFoundError, match=r"^erf_kernel has no ptx, because libdevice.10.bc was not "
                                                      r"found: TILEC_CUDA_HOME is .*, which has no nvvm/libdevice"):
        k.asm["ptx"]
    with pytest.raises(tilec.ToolNotFoundError, match=r"^erf_kernel has no cubin, because libdevice.10.bc"):
        k.asm["cubin"]


def test_other_stages_are_plain_missing_keys(no_toolkit):
    k = tilec.compile(add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK": 256})
    with pytest.raises(KeyError):
        k.asm["sass"]
    assert k.asm.get("cubin") is None


def test_the_reasons_survive_the_disk_cache(no_toolkit):
    k = tilec.compile(add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK": 256})
    again = CompiledKernel.deserialize(k.serialize())
    assert sorted(again.asm) == sorted(k.asm) and again.missing == k.missing
    assert again.asm["ptx"] == k.asm["ptx"]
    with pytest.raises(tilec.ToolNotFoundError, match="has no cubin, because ptxas was not found"):
        again.asm["cubin"]


def test_warmup_goes_through_the_cache_without_ptxas(no_toolkit):
    x = np.ones(256, np.float32)
    first = add_kernel.warmup(x, x, x, 256, BLOCK=256, grid=(1,))
    assert "ptx" in first.asm and "cubin" not in first.asm
    add_kernel._by_spec.clear()
    second = add_kernel.warmup(x, x, x, 256, BLOCK=256, grid=(1,))  # from the disk cache
    assert second.asm["ttir"] == first.asm["ttir"] and second.missing == first.missing


def test_loading_a_kernel_without_cubin_says_why(no_toolkit, monkeypatch):
    def load_cubin(*args):
        raise AssertionError("the driver was asked to load a missing cubin")
    monkeypatch.setattr(driver, "load_cubin", load_cubin)
    k = tilec.compile(add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK": 256})
    with pytest.raises(tilec.ToolNotFoundError, match="add_kernel has no cubin, because ptxas was not found"):
        LoadedKernel(k, 0)


def test_what_the_user_sees(tmp_path):
    """The README's tilec.compile on a machine without ptxas: the ttir prints; asking for
    the cubin ends in one sentence, raised from the user's own line."""
    script = tmp_path / "look.py"
    script.write_text(textwrap.dedent('''
        import tilec
        import tilec.language as tl

        @tilec.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offsets < n_elements
            x = tl.load(x_ptr + offsets, mask=mask)
            tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)

        k = tilec.compile(add_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16",
                                                 "n_elements": "i32"}, constexprs={"BLOCK_SIZE": 1024}, target="sm_90")
        print(k.asm["ttir"])
        print(k.asm["cubin"])
    '''))
    (tmp_path / "no-cuda").mkdir()
    repository = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TILEC_CUDA_HOME=str(tmp_path / "no-cuda"), TILEC_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=repository)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1
    assert '"tile.load"' in proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (f"tilec.errors.ToolNotFoundError: add_kernel has no cubin, because ptxas was not found: "
                    f"TILEC_CUDA_HOME is {tmp_path / 'no-cuda'}, which has no bin/ptxas (unset it to use the "
                    "nvidia-cuda-nvcc wheel tilec depends on)")
    assert len(proc.stderr.strip().splitlines()) <= 8, proc.stderr  # the user's line, the lookup, the sentence


def test_stages_not_asked_for_are_not_missing(no_toolkit):
    from tilec.backend.compiler import compile_kernel
    k = compile_kernel(add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK": 256}, target="sm_90",
                       stop_after="ptx")
    assert sorted(k.asm) == ["llir", "ptx", "ttgir", "ttir"] and k.missing == {}
    k = compile_kernel(erf_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16"}, constexprs={"BLOCK": 128},
                       target="sm_90", stop_after="ptx")
    assert list(k.missing) == ["ptx"]
