"""The GPU a kernel is compiled for: `Target`, parsed once from "sm_90" at the edge.

Every stage that depends on the GPU asks the same `Target`: the semantic layer (which
conversions the chip has), the lowering (which instructions it may emit), the compile
driver (the chip and PTX ISA version given to LLVM and ptxas). `Target.parse` is the
only code that reads a target string; the IR keeps the string (`tilegpu.target =
"sm_90"`) and the lowering parses it back with the same function.

This module imports nothing from tilec at import time, so every layer may use it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# The first PTX ISA version (80 for 8.0) that knows each chip, from NVIDIA's PTX ISA
# release notes. sm_90's "a" variant (wgmma, setmaxnreg) needs 8.0 as well.
_FIRST_PTX_VERSION: dict[int, int] = {
    80: 70, 86: 71, 87: 74, 89: 78, 90: 80, 100: 86, 101: 86, 103: 88, 120: 87, 121: 88,
}

# tilec emitted +ptx80 for every target before the version was chosen per chip, and
# LLVM's NVPTX back end and ptxas were checked with it (docs/architecture.md): no
# target gets less, so older chips keep exactly the PTX they had.
_PTX_VERSION_FLOOR = 80

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
    def parse(text: str, *, ptx_limit: int | None = None) -> Target:
        """"sm_90" (or "sm_90a", "sm_80", ...) -> its Target. `ptx_limit` is the newest PTX
        ISA version the assembler takes; by default the CUDA toolkit's ptxas is asked (once),
        and without one the chip's own minimum is used."""
        match = _TARGET_TEXT.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise ValueError(f"target must look like 'sm_90', got {text!r}")
        capability = int(match.group(1))
        chip = text + "a" if text == "sm_90" else text
        ptx_version = max(_first_ptx_version(capability), _PTX_VERSION_FLOOR)
        limit = ptx_limit if ptx_limit is not None else _toolkit_ptx_limit()
        if limit is not None:
            ptx_version = min(ptx_version, limit)
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


def _first_ptx_version(capability: int) -> int:
    """The first PTX ISA version that knows the chip; a chip missing from the table takes
    that of the nearest known one below it (at least the floor applies)."""
    return _nearest_below(_FIRST_PTX_VERSION, capability, _PTX_VERSION_FLOOR)


def _nearest_below(table: dict[int, int], capability: int, default: int) -> int:
    """The entry of `table` for the nearest known capability at or below `capability`."""
    known = [c for c in table if c <= capability]
    return table[max(known)] if known else default


def _toolkit_ptx_limit() -> int | None:
    # Imported here, not at the top: the toolkit belongs to the backend, and this module
    # must stay importable from the frontend. The answer is cached there and never raises.
    from .backend import toolkit
    return toolkit.max_ptx_version()
