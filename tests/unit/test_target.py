"""Target: parsing "sm_XX" once, the chip given to LLVM/ptxas, the PTX ISA version."""
from __future__ import annotations

import pytest

from tilec.backend import toolkit
from tilec.target import Target


@pytest.mark.parametrize("text,capability,chip", [
    ("sm_80", 80, "sm_80"), ("sm_86", 86, "sm_86"), ("sm_89", 89, "sm_89"),
    ("sm_90", 90, "sm_90a"), ("sm_90a", 90, "sm_90a"), ("sm_100", 100, "sm_100"), ("sm_100a", 100, "sm_100a"),
])
def test_parse(text, capability, chip):
    target = Target.parse(text, ptx_limit=90)
    assert (target.name, target.capability, target.chip) == (text, capability, chip)
    assert str(target) == text


@pytest.mark.parametrize("text", ["hopper", "sm90", "sm_", "sm_90b", "SM_90", " sm_90", "sm_90 ", "compute_90", "", None, 90])
def test_malformed_targets_are_value_errors(text):
    with pytest.raises(ValueError, match=r"target must look like 'sm_90', got"):
        Target.parse(text, ptx_limit=90)


@pytest.mark.parametrize("text,ptx_version", [
    # every target before sm_100 keeps the +ptx80 it always had (the floor) ...
    ("sm_75", 80), ("sm_80", 80), ("sm_86", 80), ("sm_87", 80), ("sm_89", 80), ("sm_90", 80), ("sm_90a", 80),
    # ... newer chips need a newer PTX ISA
    ("sm_100", 86), ("sm_101", 86), ("sm_103", 88), ("sm_120", 87), ("sm_121", 88),
    ("sm_102", 86),  # not in the table: the nearest known chip below
])
def test_ptx_version_is_the_chips_minimum_but_at_least_8_0(text, ptx_version):
    target = Target.parse(text, ptx_limit=99)
    assert target.ptx_version == ptx_version
    assert target.features == f"+ptx{ptx_version}"


def test_ptx_version_is_capped_by_the_toolkit():
    assert Target.parse("sm_120", ptx_limit=85).ptx_version == 85
    assert Target.parse("sm_90", ptx_limit=88).ptx_version == 80


def test_default_limit_comes_from_ptxas(monkeypatch):
    monkeypatch.setattr(toolkit, "max_ptx_version", lambda: 87)
    assert Target.parse("sm_100").ptx_version == 86
    assert Target.parse("sm_121").ptx_version == 87
    monkeypatch.setattr(toolkit, "max_ptx_version", lambda: None)  # no ptxas: the chip's minimum
    assert Target.parse("sm_121").ptx_version == 88


@pytest.mark.parametrize("release,limit", [
    ("12.0", 80), ("12.4", 84), ("12.5", 85), ("12.6", 85), ("12.7", 86), ("12.8", 87), ("12.9", 88), ("13.0", 90),
    ("11.8", None), ("99.9", None), ("unknown", None),
])
def test_max_ptx_version_of_ptxas_release(monkeypatch, release, limit):
    monkeypatch.setattr(toolkit, "ptxas_version", lambda: release)
    toolkit.max_ptx_version.cache_clear()
    try:
        assert toolkit.max_ptx_version() == limit
    finally:
        toolkit.max_ptx_version.cache_clear()


def test_max_ptx_version_without_ptxas(monkeypatch):
    def missing() -> str:
        raise toolkit.ToolkitError("ptxas not found")
    monkeypatch.setattr(toolkit, "ptxas_version", missing)
    toolkit.max_ptx_version.cache_clear()
    try:
        assert toolkit.max_ptx_version() is None
        assert Target.parse("sm_90").ptx_version == 80
    finally:
        toolkit.max_ptx_version.cache_clear()


def test_at_least():
    target = Target.parse("sm_89", ptx_limit=90)
    assert target.at_least(80) and target.at_least(89) and not target.at_least(90)


def test_targets_are_frozen_and_hashable():
    target = Target.parse("sm_90", ptx_limit=90)
    assert target == Target.parse("sm_90", ptx_limit=90) and hash(target) == hash(Target.parse("sm_90", ptx_limit=90))
    with pytest.raises(AttributeError):
        target.capability = 80


def test_compile_options_take_a_target_and_key_it_by_name():
    from tilec.backend.compiler import CompileOptions
    options = CompileOptions(target=Target.parse("sm_80"))
    assert "'target': 'sm_80'" in options.cache_key()
    assert CompileOptions().target.name == "sm_90"
    with pytest.raises(TypeError, match="Target"):
        CompileOptions(target="sm_90")
