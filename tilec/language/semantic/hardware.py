"""The hardware rules of the semantic layer: what `tl.extra.cuda` reads from the GPU
(special registers, the launch's number of warps), programmatic dependent launch, and
the elementwise NVVM intrinsics some GPUs have.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import core as tl
from ..core import tensor
from .common import SemanticState, _error

# The special registers a kernel may read, and their types.
_REGISTER_TYPES = {"smid": tl.int32, "globaltimer": tl.int64}


class HardwareRules(SemanticState):
    """Special registers, grid dependency control, target-specific intrinsics."""

    def special_register(self, name: str) -> tensor:
        """A scalar read of the PTX special register `name` (%smid, %globaltimer)."""
        ty = _REGISTER_TYPES[name]
        return tensor(self.builder.special_register(name, ty), ty)

    def grid_dependency(self, action: str, what: str) -> None:
        """griddepcontrol.wait ("wait") or .launch_dependents; `what` names the builtin."""
        self.require_gpu(what, f"griddepcontrol.{action}", capability=90)
        self.builder.grid_dependency(action)

    def require_gpu(self, what: str, instruction: str, capability: int = 0,
                    chips: Sequence[str] | None = None) -> None:
        """Refuses `what` (a builtin's name) when the target (if known) lacks `instruction`:
        it exists from compute capability `capability` on, or on `chips` only."""
        target = self.target
        if target is None:
            return
        if chips is not None and target.chip not in chips:
            raise _error(f"{what} needs one of the GPUs {', '.join(chips)} ({instruction}); the target is "
                         f"{target.name}")
        if self.capability is not None and self.capability < capability:
            raise _error(f"{what} needs an sm_{capability} or newer GPU ({instruction}); the target is {target.name}")

    def nvvm_elementwise(self, what: str, instruction: str, args: Sequence[Any], table: dict,
                         capability: int = 0, chips: Sequence[str] | None = None) -> tensor:
        """An NVVM intrinsic applied elementwise (`table` as extern_elementwise's, naming
        `llvm.nvvm.*` functions; the interpreter has a NumPy version of each)."""
        self.require_gpu(what, instruction, capability, chips)
        return self.extern_elementwise(args, table, True)
