"""The compiled kernel: plain data in the backend, launchable once the runtime hands it out."""
from __future__ import annotations

import ast
import pathlib

import pytest

import tilec
import tilec.language as tl
from tilec.backend.compiler import CompiledKernel
from tilec.errors import LaunchError
from tilec.runtime.kernel import LaunchableKernel


@tilec.jit
def copy_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets))


SIGNATURE = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16"}


def test_backend_imports_nothing_of_the_runtime():
    backend = pathlib.Path(tilec.__file__).parent / "backend"
    for path in backend.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [alias.name for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any("runtime" in name for name in names), f"{path.name}:{node.lineno} imports the runtime"


def test_backend_kernel_is_data():
    assert not hasattr(CompiledKernel, "__getitem__")


def test_compile_and_warmup_return_launchable_kernels(fresh_cache):
    compiled = tilec.compile(copy_kernel, signature=SIGNATURE, constexprs={"BLOCK": 128})
    assert isinstance(compiled, LaunchableKernel) and isinstance(compiled, CompiledKernel)
    assert compiled.fn is None
    assert repr(compiled).startswith("CompiledKernel(copy_kernel, sm_90,")
    warm = copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,))
    assert isinstance(warm, LaunchableKernel) and warm.fn is copy_kernel
    assert warm.asm["ttir"] == compiled.asm["ttir"]


def test_a_second_warmup_returns_the_same_kernel(fresh_cache, monkeypatch):
    """Triton's softmax tutorial warms up before every launch: the second warmup is a
    lookup in memory (no disk read), returning the object whose modules its earlier
    launches loaded; other options are another kernel."""
    warm = copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,), num_warps=8)
    from tilec.runtime import cache
    monkeypatch.setattr(cache, "load", lambda key: pytest.fail("read the disk cache again"))
    assert copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,), num_warps=8) is warm
    monkeypatch.undo()
    assert copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,), num_warps=4) is not warm


def test_warmup_names_a_keyword_no_parameter_or_option_takes(fresh_cache):
    with pytest.raises(LaunchError, match="copy_kernel\\(\\) got an unexpected keyword argument 'BLOK'"):
        copy_kernel.warmup("*fp32:16", "*fp32:16", BLOK=128, grid=(1,), num_warps=8)


def test_serialized_kernel_becomes_launchable_again():
    compiled = tilec.compile(copy_kernel, signature=SIGNATURE, constexprs={"BLOCK": 128})
    again = CompiledKernel.deserialize(compiled.serialize())
    assert type(again) is CompiledKernel
    launchable = LaunchableKernel.of(again)
    assert launchable.metadata == compiled.metadata and launchable.asm == compiled.asm


def test_launch_checks_the_number_of_arguments(fresh_cache):
    warm = copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,))
    with pytest.raises(LaunchError, match=r"copy_kernel\(\) takes 3 arguments but 2 were given"):
        warm[(1,)](None, None)


def test_interpreter_needs_the_source(monkeypatch):
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    compiled = tilec.compile(copy_kernel, signature=SIGNATURE, constexprs={"BLOCK": 128})
    with pytest.raises(LaunchError, match="the interpreter runs a kernel from its source"):
        compiled[(1,)](None, None, 128)


@pytest.mark.parametrize("target", ["", "sm90", "90"])
def test_warmup_refuses_a_target_it_cannot_read(fresh_cache, target):
    """`target=""` used to mean the default GPU silently; every bad spelling is refused."""
    with pytest.raises(LaunchError, match="target must look like 'sm_90'"):
        copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,), target=target)
    assert copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,), target="sm_80").name


@pytest.mark.parametrize("switch", ["wgmma", "tma", "flatten_loops", "order_pure_ops", "warp_specialize",
                                    "overlap_prologue"])
def test_in_memory_kernels_follow_every_code_generation_switch(fresh_cache, monkeypatch, switch):
    """A kernel found in memory was compiled under the switches in force now
    (config.codegen_flags names them; the disk cache keys them too): flipping one at
    run time compiles again instead of handing out the other setting's kernel."""
    from tilec.config import config
    first = copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,), target="sm_90")
    assert copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,), target="sm_90") is first
    monkeypatch.setattr(config, switch, not getattr(config, switch))
    assert copy_kernel.warmup("*fp32:16", "*fp32:16", BLOCK=128, grid=(1,), target="sm_90") is not first
