"""Runs MLIR's verifier and then tilec's own per-op rules over a module."""
from __future__ import annotations

from mlir import ir

from . import tile, tilegpu  # noqa: F401  (register verifiers)
from ._mlir import walk_ops


class IRVerificationError(Exception):
    """The IR broke a rule: a tilec bug, or a hand-written .mlir test input."""


def verify_module(module: ir.Module, stage: str = "") -> None:
    where = f" after {stage}" if stage else ""
    try:
        module.operation.verify()
    except ir.MLIRError as exc:
        raise IRVerificationError(f"invalid IR{where}: {exc}") from None
    with module.context:
        _run_tilec_verifiers(module, where)


def _run_tilec_verifiers(module: ir.Module, where: str) -> None:
    for op in walk_ops(module.operation):
        check = tile.VERIFIERS.get(op.name)
        if check is None:
            continue
        message = check(op)
        if message:
            raise IRVerificationError(f"invalid IR{where}: '{op.name}' op {message}\n  at {op.location}")
