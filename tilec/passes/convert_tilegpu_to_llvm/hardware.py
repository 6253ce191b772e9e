"""Lowering of the hardware ops of tl.extra.cuda: tile.special_register reads a PTX
special register (`mov.u32 %r, %smid;`, `mov.u64 %rd, %globaltimer;`), and
tile.grid_dependency is `griddepcontrol.wait` or `griddepcontrol.launch_dependents`.

Both are inline PTX. %globaltimer changes between reads and griddepcontrol orders the
kernel's memory accesses, so their asm has side effects (LLVM neither merges, moves nor
drops it); %smid is fixed for a program, and its read may be merged or dropped.
"""
from __future__ import annotations

from mlir import ir

from ...dialects._mlir import str_attr_value
from .context import LoweringContext, lowers


@lowers("tile.special_register")
def lower_special_register(ctx: LoweringContext, op: ir.Operation) -> None:
    name = str_attr_value(op, "name")
    ty = op.results[0].type
    width = ty.width
    (value,) = ctx.inline_asm(f"mov.u{width} $0, %{name};", "=l" if width == 64 else "=r", [], [ty],
                              side_effects=name != "smid")
    ctx.set(op.results[0], value)


@lowers("tile.grid_dependency")
def lower_grid_dependency(ctx: LoweringContext, op: ir.Operation) -> None:
    ctx.inline_asm(f"griddepcontrol.{str_attr_value(op, 'action')};", "~{memory}", [], [])
