"""Target: parsing "sm_XX" once, the chip given to LLVM/ptxas, the PTX ISA version, and the
targets refused (with a TargetError, before LLVM could end the process on them)."""
from __future__ import annotations

import re
import subprocess

import pytest

import tilec
from tilec.backend import toolkit
from tilec.errors import TargetError
from tilec.target import _FIRST_PTX_VERSION, Target


@pytest.mark.parametrize("text,capability,chip", [
    ("sm_70", 70, "sm_70"), ("sm_75", 75, "sm_75"), ("sm_80", 80, "sm_80"), ("sm_86", 86, "sm_86"),
    ("sm_89", 89, "sm_89"), ("sm_90", 90, "sm_90a"), ("sm_90a", 90, "sm_90a"), ("sm_100", 100, "sm_100"),
    ("sm_100a", 100, "sm_100a"), ("sm_110", 110, "sm_110"), ("sm_120", 120, "sm_120"), ("sm_121a", 121, "sm_121a"),
])
def test_parse(text, capability, chip):
    target = Target.parse(text)
    assert (target.name, target.capability, target.chip) == (text, capability, chip)
    assert str(target) == text


@pytest.mark.parametrize("text", ["hopper", "sm90", "sm_", "sm_90b", "sm_100f", "SM_90", " sm_90", "sm_90 ",
                                  "compute_90", "", None, 90])
def test_malformed_targets_are_target_errors(text):
    with pytest.raises(TargetError, match=r"target must look like 'sm_90', got"):
        Target.parse(text)


@pytest.mark.parametrize("text", ["sm_107", "sm_102", "sm_91", "sm_1000", "sm_70a", "sm_80a", "sm_89a"])
def test_gpus_llvm_does_not_know_are_target_errors(text):
    with pytest.raises(TargetError, match=rf"tilec cannot compile for {text}: the LLVM it uses does not know"):
        Target.parse(text)


@pytest.mark.parametrize("text", ["sm_9", "sm_20", "sm_52", "sm_60", "sm_61", "sm_62"])
def test_gpus_before_volta_are_target_errors(text):
    with pytest.raises(TargetError, match=rf"tilec compiles for sm_70 \(Volta\) and newer GPUs, not {text}"):
        Target.parse(text)


def test_target_errors_are_tilec_errors_and_value_errors():
    assert issubclass(TargetError, tilec.TilecError) and issubclass(TargetError, ValueError)


@pytest.mark.parametrize("text,ptx_version", [
    # the targets before sm_100 keep the +ptx80 they always had (the floor) ...
    ("sm_70", 80), ("sm_75", 80), ("sm_80", 80), ("sm_86", 80), ("sm_87", 80),
    # ... but sm_89, whose fp8 conversions need 8.1, and sm_90, whose vector atomics do ...
    ("sm_89", 81), ("sm_90", 81), ("sm_90a", 81),
    # ... and newer chips need a newer PTX ISA: the first one LLVM takes for them
    ("sm_88", 90), ("sm_100", 86), ("sm_100a", 86), ("sm_101", 86), ("sm_103", 88), ("sm_110", 90),
    ("sm_120", 87), ("sm_121", 88),
])
def test_ptx_version_is_the_chips_minimum_but_at_least_8_0(text, ptx_version):
    target = Target.parse(text)
    assert target.ptx_version == ptx_version
    assert target.features == f"+ptx{ptx_version}"


def test_parse_asks_no_tool(monkeypatch):
    """The target alone decides the PTX ISA version: ttir and ttgir need no CUDA toolkit."""
    def no_tool(*args, **kwargs):
        raise AssertionError("Target.parse ran a program")
    monkeypatch.setattr(subprocess, "run", no_tool)
    monkeypatch.setattr(toolkit, "ptxas_path", no_tool)
    assert Target.parse("sm_120").ptx_version == 87


def _llc() -> str:
    try:
        return toolkit.llvm_tool("llc")
    except toolkit.ToolkitError as exc:
        pytest.skip(str(exc))


_TRIVIAL_KERNEL = """target triple = "nvptx64-nvidia-cuda"
define ptx_kernel void @k(ptr addrspace(1) %p) {
  store float 1.0, ptr addrspace(1) %p
  ret void
}
"""


def _llc_accepts(tmp_path, chip: str, ptx_version: int) -> subprocess.CompletedProcess:
    source = tmp_path / "k.ll"
    source.write_text(_TRIVIAL_KERNEL)
    return subprocess.run([_llc(), "-mtriple=nvptx64-nvidia-cuda", f"-mcpu={chip}", f"-mattr=+ptx{ptx_version}",
                           str(source), "-o", "-"], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("chip", sorted(_FIRST_PTX_VERSION))
def test_first_ptx_versions_are_llvms(tmp_path, chip):
    """The table holds exactly LLVM's minimum for each chip: with it, LLVM emits PTX for
    the chip; with the version before, it fails (in process, it would end the process:
    llc runs in its own)."""
    first = _FIRST_PTX_VERSION[chip]
    accepted = _llc_accepts(tmp_path, chip, first)
    assert accepted.returncode == 0 and f".target {chip}" in accepted.stdout, accepted.stderr
    assert "is not a recognized processor" not in accepted.stderr
    versions = sorted(v for v in _LLVM_PTX_VERSIONS if v < first)
    if versions:
        refused = _llc_accepts(tmp_path, chip, versions[-1])
        assert refused.returncode != 0 and "does not support target" in refused.stderr


# PTX ISA versions LLVM 22 knows (`llc -mattr=help`), 60 and later.
_LLVM_PTX_VERSIONS = (60, 61, 62, 63, 64, 65, 70, 71, 72, 73, 74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88, 90)


def test_chips_are_all_llvm_knows_from_sm_70_on():
    listing = subprocess.run([_llc(), "-mtriple=nvptx64-nvidia-cuda", "-mcpu=help"], capture_output=True,
                             text=True, timeout=120)
    text = listing.stdout + listing.stderr
    known = set(re.findall(r"^\s+(sm_\d+a?)\s+- Select", text, re.M))
    assert known, text
    assert {chip for chip in known if int(re.match(r"sm_(\d+)", chip).group(1)) >= 70} == set(_FIRST_PTX_VERSION)
    features = set(int(v) for v in re.findall(r"^\s+ptx(\d+)\s", text, re.M))
    assert max(features) >= max(_FIRST_PTX_VERSION.values())


def test_at_least():
    target = Target.parse("sm_89")
    assert target.at_least(80) and target.at_least(89) and not target.at_least(90)


def test_targets_are_frozen_and_hashable():
    target = Target.parse("sm_90")
    assert target == Target.parse("sm_90") and hash(target) == hash(Target.parse("sm_90"))
    with pytest.raises(AttributeError):
        target.capability = 80


def test_compile_options_take_a_target_and_key_it_by_name():
    from tilec.backend.compiler import CompileOptions
    options = CompileOptions(target=Target.parse("sm_80"))
    assert "'target': 'sm_80'" in options.cache_key()
    assert CompileOptions().target.name == "sm_90"
    with pytest.raises(TypeError, match="Target"):
        CompileOptions(target="sm_90")
