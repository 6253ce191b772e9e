"""tile-dce: removes tile and arith ops whose results are unused.

IRDL ops carry no traits, so upstream DCE/canonicalize keep every tile op (their side
effects are unknown to MLIR). This pass knows which tile ops are pure.
"""
from __future__ import annotations

from mlir import ir

from . import register_pass
from .utils import erase_dead_ops


@register_pass("tile-dce", "Remove unused pure tile, tilegpu, arith and math ops")
def tile_dce(module_op: ir.Operation) -> None:
    erase_dead_ops(module_op)
