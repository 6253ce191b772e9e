"""Where ptxas and libdevice come from (tilec.backend.toolkit), in which order, what a
missing one says, and the sentences ptxas's refusals become.

Every toolkit here is made up in a temporary directory (a shell script standing in for
ptxas, an empty libdevice), so the tests mean the same with or without a CUDA toolkit on
the machine.
"""
from __future__ import annotations

import os
import re
import stat
import warnings
import sys
from pathlib import Path

import pytest

import tilec
from tilec.backend import toolkit
from tilec.config import config

REPOSITORY = Path(__file__).resolve().parents[2]


def fake_ptxas(path: Path, *, release: str = "13.5", failure: str = "") -> Path:
    """A ptxas that prints `release` for --version, and fails with `failure` (or writes an
    empty cubin) otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if failure:
        (path.parent / "failure.txt").write_text(failure + "\n")
    run = (f'while IFS= read -r line; do echo "$line" >&2; done < "{path.parent / "failure.txt"}"; exit 255'
           if failure else
           'out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done; : > "$out"; '
           "echo 'ptxas info    : Used 12 registers'")
    path.write_text("#!/bin/sh\n"
                    f'if [ "$1" = --version ]; then echo "Cuda compilation tools, release {release}, V{release}.1"; '
                    f"exit 0; fi\n{run}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_toolkit(root: Path, **ptxas) -> Path:
    """A CUDA toolkit's layout: bin/ptxas and nvvm/libdevice/libdevice.10.bc."""
    fake_ptxas(root / "bin" / "ptxas", **ptxas)
    (root / "nvvm" / "libdevice").mkdir(parents=True, exist_ok=True)
    (root / "nvvm" / "libdevice" / "libdevice.10.bc").write_bytes(b"BC")
    return root


def fake_wheel(site: Path, name: str, version: str, files: dict[str, bytes | None]) -> None:
    """An installed wheel in `site`: its files (None: a fake ptxas) and the dist-info that
    lists them, as pip leaves them."""
    for relative, content in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            fake_ptxas(path)
        else:
            path.write_bytes(content)
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    record = [f"{relative},," for relative in files] + [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n")


CU13_PTXAS = "nvidia/cu13/bin/ptxas"
CU13_LIBDEVICE = "nvidia/cu13/nvvm/libdevice/libdevice.10.bc"


@pytest.fixture
def places(monkeypatch, tmp_path):
    """No toolkit anywhere: no TILEC_CUDA_HOME or CUDA_HOME, an empty system toolkit
    directory and PATH, and no CUDA wheel importable. Tests add what they need."""
    monkeypatch.setattr(config, "tilec_cuda_home", "")
    monkeypatch.setattr(config, "cuda_home", "")
    monkeypatch.setattr(toolkit, "SYSTEM_CUDA_HOME", str(tmp_path / "no-system-cuda"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    hidden = set(toolkit._OLDER_WHEELS) | {toolkit._wheel_name(p) for p in toolkit.WHEELS}
    real_distribution = toolkit.importlib.metadata.distribution

    def only_fake_wheels(name):  # the wheels installed in this venv (if any) are hidden
        found = real_distribution(name)
        if name in hidden and not str(found.locate_file("")).startswith(str(tmp_path)):
            raise toolkit.importlib.metadata.PackageNotFoundError(name)
        return found
    monkeypatch.setattr(toolkit.importlib.metadata, "distribution", only_fake_wheels)
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return tmp_path


def test_nothing_installed_says_what_to_install(places):
    with pytest.raises(tilec.ToolNotFoundError) as info:
        toolkit.ptxas_path()
    assert str(info.value) == ("ptxas was not found: install the nvidia-cuda-nvcc wheel tilec depends on "
                               "(pip install 'nvidia-cuda-nvcc>=13.5,<14'), or set TILEC_CUDA_HOME to a CUDA toolkit")
    with pytest.raises(tilec.ToolNotFoundError, match=r"libdevice.10.bc was not found: install the nvidia-nvvm wheel"):
        toolkit.libdevice_path()
    assert isinstance(info.value, tilec.ToolkitError) and isinstance(info.value, tilec.TilecError)


def test_cuda_13_wheels_are_found_where_they_put_their_files(places):
    site = places / "site-packages"
    fake_wheel(site, "nvidia-cuda-nvcc", "13.5.37", {CU13_PTXAS: None, "nvidia/cu13/bin/nvlink": b""})
    fake_wheel(site, "nvidia-nvvm", "13.5.37", {CU13_LIBDEVICE: b"BC", "nvidia/cu13/nvvm/bin/cicc": b""})
    assert toolkit.ptxas_path() == str(site / CU13_PTXAS)
    assert toolkit.libdevice_path() == str(site / CU13_LIBDEVICE)
    assert toolkit.ptxas_version() == "13.5"
    assert "(from the nvidia-cuda-nvcc wheel, CUDA 13.5)" in toolkit.describe()


def test_cuda_12_wheel_layout_is_found_too(places):
    site = places / "site-packages"
    fake_wheel(site, "nvidia-cuda-nvcc-cu12", "12.9.86", {
        "nvidia/cuda_nvcc/bin/ptxas": None, "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc": b"BC"})
    assert toolkit.ptxas_path() == str(site / "nvidia/cuda_nvcc/bin/ptxas")
    assert toolkit.libdevice_path() == str(site / "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc")


def test_the_wheels_come_before_cuda_home_and_the_system_toolkit(places, monkeypatch):
    monkeypatch.setattr(config, "cuda_home", str(fake_toolkit(places / "cuda-home")))
    monkeypatch.setattr(toolkit, "SYSTEM_CUDA_HOME", str(fake_toolkit(places / "system-cuda")))
    assert toolkit.ptxas_path() == str(places / "cuda-home" / "bin" / "ptxas")
    site = places / "another-site-packages"  # the wheel installed
    fake_wheel(site, "nvidia-cuda-nvcc", "13.5.37", {CU13_PTXAS: None})
    monkeypatch.syspath_prepend(str(site))
    assert toolkit.ptxas_path() == str(site / CU13_PTXAS)
    # each piece independently: libdevice still comes from CUDA_HOME, having no wheel
    assert toolkit.libdevice_path() == str(places / "cuda-home" / "nvvm" / "libdevice" / "libdevice.10.bc")


def test_system_toolkit_then_the_path(places, monkeypatch):
    monkeypatch.setattr(toolkit, "SYSTEM_CUDA_HOME", str(fake_toolkit(places / "system-cuda")))
    assert toolkit.ptxas_path() == str(places / "system-cuda" / "bin" / "ptxas")
    monkeypatch.setattr(toolkit, "SYSTEM_CUDA_HOME", str(places / "no-system-cuda"))
    fake_toolkit(places / "opt" / "cuda-12.9")
    monkeypatch.setenv("PATH", os.pathsep.join([str(places / "no-bin"), str(places / "opt" / "cuda-12.9" / "bin")]))
    assert toolkit.ptxas_path() == str(places / "opt" / "cuda-12.9" / "bin" / "ptxas")
    assert toolkit.libdevice_path() == str(places / "opt" / "cuda-12.9" / "nvvm" / "libdevice" / "libdevice.10.bc")


def test_tilec_cuda_home_is_the_only_place_looked_at_when_set(places, monkeypatch):
    site = places / "site-packages"
    fake_wheel(site, "nvidia-cuda-nvcc", "13.5.37", {CU13_PTXAS: None})
    monkeypatch.setattr(config, "tilec_cuda_home", str(fake_toolkit(places / "chosen", release="12.8")))
    assert toolkit.ptxas_path() == str(places / "chosen" / "bin" / "ptxas")
    assert toolkit.ptxas_version() == "12.8"
    empty = places / "empty"
    empty.mkdir()
    monkeypatch.setattr(config, "tilec_cuda_home", str(empty))
    with pytest.raises(tilec.ToolNotFoundError) as info:
        toolkit.ptxas_path()  # not silently the wheel's
    assert str(info.value) == (f"ptxas was not found: TILEC_CUDA_HOME is {empty}, which has no bin/ptxas "
                               "(unset it to use the nvidia-cuda-nvcc wheel tilec depends on)")


def test_a_ptxas_that_cannot_run_is_passed_over(places, monkeypatch):
    root = fake_toolkit(places / "cuda-home")
    (root / "bin" / "ptxas").chmod(0o644)
    monkeypatch.setattr(config, "cuda_home", str(root))
    with pytest.raises(tilec.ToolNotFoundError):
        toolkit.ptxas_path()


def test_declared_wheels_are_the_ones_searched():
    """pyproject.toml depends on exactly the requirements toolkit.WHEELS names (and
    quotes in its advice)."""
    text = (REPOSITORY / "pyproject.toml").read_text()
    dependencies = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
    declared = set(re.findall(r'"([^"]+)"', dependencies))
    assert set(toolkit.WHEELS.values()) <= declared


# ----------------------------------------------------------------------------- ptxas's refusals


def refusal(places, monkeypatch, failure: str, chip: str, release: str = "13.5") -> str:
    monkeypatch.setattr(config, "tilec_cuda_home", str(fake_toolkit(places / f"cuda-{release}", release=release,
                                                                   failure=failure)))
    with pytest.raises(tilec.ToolkitError) as info:
        toolkit.assemble(".version 8.0\n", chip, "kernel")
    return str(info.value)


def test_chip_older_than_cuda_13_supports(places, monkeypatch):
    message = refusal(places, monkeypatch, "ptxas fatal   : Value 'sm_70' is not defined for option 'gpu-name'",
                      "sm_70")
    ptxas = places / "cuda-13.5" / "bin" / "ptxas"
    assert message == (f"cannot make a cubin of kernel: the ptxas of CUDA 13.5 ({ptxas}) does not compile for "
                       "sm_70; CUDA 13 compiles for sm_75 and newer only: set TILEC_CUDA_HOME to a CUDA 12 toolkit")


def test_chip_renamed_by_cuda_13(places, monkeypatch):
    message = refusal(places, monkeypatch, "ptxas fatal   : Value 'sm_101' is not defined for option 'gpu-name'",
                      "sm_101")
    assert message.endswith("does not compile for sm_101; CUDA 13 calls this GPU sm_110: compile for sm_110")


def test_chip_newer_than_ptxas(places, monkeypatch):
    message = refusal(places, monkeypatch, "ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'",
                      "sm_120", release="12.6")
    assert message.endswith("does not compile for sm_120; another CUDA toolkit may: set TILEC_CUDA_HOME to one")


def test_ptx_isa_newer_than_ptxas(places, monkeypatch):
    message = refusal(places, monkeypatch, "ptxas k.ptx, line 5; fatal   : Unsupported .version 8.7; "
                      "current version is '8.5'", "sm_120", release="12.6")
    ptxas = places / "cuda-12.6" / "bin" / "ptxas"
    assert message == (f"cannot make a cubin of kernel: sm_120 needs PTX ISA 8.7, but the ptxas of CUDA 12.6 "
                       f"({ptxas}) reads PTX ISA 8.5 at most; upgrade nvidia-cuda-nvcc or set TILEC_CUDA_HOME to "
                       "a newer toolkit")


def test_other_refusals_keep_ptxas_log(places, monkeypatch):
    message = refusal(places, monkeypatch, "ptxas k.ptx, line 9; error   : Unknown symbol 'x'", "sm_90a")
    assert message.startswith("ptxas failed for kernel (sm_90a):\n") and "Unknown symbol 'x'" in message


def test_assemble_reads_registers(places, monkeypatch):
    monkeypatch.setattr(config, "tilec_cuda_home", str(fake_toolkit(places / "cuda")))
    result = toolkit.assemble(".version 8.0\n", "sm_90a", "kernel")
    assert (result.cubin, result.n_regs, result.n_spills) == (b"", 12, 0)


def test_describe_runs_as_a_module():
    import subprocess
    proc = subprocess.run([sys.executable, "-m", "tilec.backend.toolkit"], capture_output=True, text=True,
                          timeout=120, cwd=REPOSITORY, env=dict(os.environ, PYTHONPATH=str(REPOSITORY)))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["ptxas", "libdevice"]


# ----------------------------------------------------------------------------- known miscompiles


@pytest.mark.parametrize("release,warns", [("13.0", True), ("13.5", False)])
def test_a_ptxas_known_to_miscompile_is_named_once(places, monkeypatch, release, warns):
    """CUDA 13.0's ptxas produced wrong SASS for kernels the fuzzer generated (fixed in
    13.5): assembling with it warns, once per ptxas, saying what to install."""
    root = fake_toolkit(places / f"cuda-{release}", release=release)
    monkeypatch.setattr(config, "tilec_cuda_home", str(root))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        toolkit.assemble(".version 8.0\n", "sm_90a", "kernel")
        toolkit.assemble(".version 8.0\n", "sm_90a", "kernel")
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    if warns:
        assert len(messages) == 1 and "miscompiles" in messages[0] and toolkit.WHEELS["ptxas"] in messages[0]
        assert "warning: this ptxas" in toolkit.describe()
    else:
        assert messages == [] and "warning" not in toolkit.describe()
