"""The debugging rules of the semantic layer: printing, assertions, barriers and the compiler
hints (multiple_of, max_contiguous, assume, ...).

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core import _unwrap, tensor
from .common import SemanticState, _error

# device_print shows at most this many values (tile.print's operand groups).
MAX_PRINT_VALUES = 16


class DebuggingRules(SemanticState):
    """Printing, assertions, barriers and the compiler hints (multiple_of, assume, ...)."""

    def device_print(self, prefix: Any, args: Sequence[Any], hex: Any = False) -> None:
        prefix = _unwrap(prefix)
        if not isinstance(prefix, str):
            raise _error(f"device_print needs a string prefix first, got {prefix!r}")
        if not prefix.isascii() or not prefix.isprintable():
            raise _error(f"the device_print prefix must be printable ASCII, got {prefix!r}")
        values = [self.to_tensor(a) for a in args]
        for value in values:
            if value.dtype.is_fp8():
                raise _error("device_print cannot show fp8 values; convert with .to(tl.float32) first")
        if len(values) > MAX_PRINT_VALUES:
            raise _error(f"device_print shows at most {MAX_PRINT_VALUES} values at once, got {len(values)}")
        self.builder.device_print(_print_prefix(prefix, bool(values)), values, bool(_unwrap(hex)))

    def python_print(self, args: Sequence[Any], kwargs: dict) -> None:
        """Python's `print` in a kernel: device_print, the first argument the prefix when it
        is a string (`print("x =", x)`)."""
        if kwargs:
            raise _error(f"print() in a kernel takes no keyword arguments (got {', '.join(kwargs)}); "
                         "it prints at run time like tl.device_print")
        args = list(args)
        prefix = _unwrap(args.pop(0)) if args and isinstance(_unwrap(args[0]), str) else ""
        if any(isinstance(_unwrap(a), str) for a in args):
            raise _error("print() in a kernel takes one string, first (the prefix), then values")
        self.device_print(prefix, args)

    def device_assert(self, cond: Any, msg: Any = "", mask: Any = None) -> None:
        """Stops the kernel where `cond` is false (and `mask` true); only in debug mode, as
        in Triton: otherwise it costs nothing."""
        msg = _unwrap(msg)
        if not isinstance(msg, str):
            raise _error(f"the device_assert message must be a string, got {msg!r}")
        if not self.debug:
            return
        cond = self._to_bool(cond)
        if _unwrap(mask) is not None:
            cond = self.logical_or(cond, self.logical_not(mask))
        self.builder.device_assert(cond.handle, msg, self.builder.source_location())

    def debug_barrier(self) -> None:
        self.builder.barrier()

    def assume(self, cond: Any) -> None:
        cond = self.to_tensor(cond)
        if not cond.dtype.is_bool():
            raise _error(f"assume needs a boolean condition, got {cond.dtype}")
        self.builder.assume(cond.handle)

    def hint(self, kind: str, x: Any, values: Any) -> tensor:
        """multiple_of / max_contiguous / max_constancy: facts about integer or pointer
        values, one per dimension (a single int applies to every dimension)."""
        x = self.to_tensor(x)
        values = _unwrap(values)
        rank = len(x.type.shape) if x.type.is_block() else 1
        if isinstance(values, (list, tuple)):
            values = [_unwrap(v) for v in values]
        else:
            values = [values] * rank
        if len(values) != rank or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                           for v in values):
            raise _error(f"{kind} needs {rank} positive int(s) (one per dimension), got {values!r}")
        if not (x.dtype.is_int() or x.dtype.is_ptr()):
            raise _error(f"{kind} applies to integer or pointer values, got {x.dtype}")
        return tensor(self.builder.hint(x.handle, kind, values), x.type)


def _print_prefix(prefix: str, has_values: bool) -> str:
    """The text printed between `idx (...)` and a value, as Triton prints it: a prefix
    ends in ": " (`"x"`, `"x "` and `"x: "` all print `x: 1.5`; an empty one prints
    `idx (): 1.5`) and, when longer, starts with a space. A message alone (no values)
    keeps its text, set off by a space."""
    if has_values:
        if not prefix.endswith(" "):
            prefix += " "
        if not prefix.endswith(": "):
            prefix = prefix[:-1] + ": "
    if prefix and not prefix.startswith(" ") and (len(prefix) > 2 or not has_values):
        prefix = " " + prefix
    return prefix
