"""The NVVM intrinsics that LLVM's NVPTX back end can select on some GPUs only.

Given an intrinsic the chip lacks (`mma.sync` m16n8k16 on sm_75, `wgmma` on anything but
sm_90a), the back end does not raise: it prints "LLVM ERROR: Cannot select: intrinsic
%llvm.nvvm..." and ends the process. The passes choose instructions by target, so this
never happens when they are right; `unavailable_intrinsic` checks their output before
the ptx stage hands it to LLVM, so a mistake becomes an `InternalError` naming the
instruction, and Python lives on.

The requirements below are LLVM 22's (what its back end refuses, checked with its `llc`
in tests/unit/test_intrinsics.py), rounded up to the PTX ISA's where the PTX ISA asks
more (ptxas would refuse the PTX anyway). Intrinsics not listed (special registers,
barriers, shuffles, ...) exist on every GPU tilec compiles for.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..target import Target


@dataclass(frozen=True)
class _Requirement:
    pattern: str                       # a regular expression matched at the start of the intrinsic's name
    capability: int                    # the oldest GPU that has it (80 for sm_80) ...
    chips: frozenset[str] | None = None  # ... or, for arch-specific ones, exactly the chips that do

    def allows(self, target: Target) -> bool:
        if self.chips is not None:
            return target.chip in self.chips
        return target.at_least(self.capability)

    def describe(self) -> str:
        return " or ".join(sorted(self.chips)) if self.chips is not None else f"sm_{self.capability} or newer"


# First match wins: specific shapes before their family.
_REQUIREMENTS = (
    _Requirement(r"llvm\.nvvm\.mma\.m8n8k4\.", 70),
    _Requirement(r"llvm\.nvvm\.mma\.", 80),
    _Requirement(r"llvm\.nvvm\.ldmatrix\.", 75),
    _Requirement(r"llvm\.nvvm\.stmatrix\.", 90),
    _Requirement(r"llvm\.nvvm\.cp\.async\.bulk\.", 90),
    _Requirement(r"llvm\.nvvm\.cp\.async\.", 80),
    _Requirement(r"llvm\.nvvm\.mbarrier\.(try_wait|expect_tx|arrive\.expect_tx)", 90),
    _Requirement(r"llvm\.nvvm\.mbarrier\.", 80),
    _Requirement(r"llvm\.nvvm\.redux\.sync\.", 80),
    _Requirement(r"llvm\.nvvm\.fence\.proxy\.", 90),
    _Requirement(r"llvm\.nvvm\.elect\.sync", 90),
    _Requirement(r"llvm\.nvvm\.wgmma\.", 90, frozenset({"sm_90a"})),
    _Requirement(r"llvm\.nvvm\.setmaxnreg\.", 90,
                 frozenset({"sm_90a", "sm_100a", "sm_103a", "sm_110a", "sm_120a", "sm_121a"})),
)

_CALLED = re.compile(r"@(llvm\.nvvm\.[\w.]+)\(")


def unavailable_intrinsic(llvm_ir: str, target: Target) -> str | None:
    """The first intrinsic `llvm_ir` (the llir stage's text) calls that `target` lacks,
    said in a sentence; None when there is none."""
    for name in sorted(set(_CALLED.findall(llvm_ir))):
        for requirement in _REQUIREMENTS:
            if re.match(requirement.pattern, name):
                if not requirement.allows(target):
                    return (f"the kernel calls {name}, which needs {requirement.describe()}, "
                            f"but the target is {target.name} ({target.chip})")
                break
    return None
