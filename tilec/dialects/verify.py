"""Runs MLIR's verifier and then tilec's own per-op rules over a module."""
from __future__ import annotations

from mlir import ir

from . import tile, tilegpu  # noqa: F401  (register verifiers)
from ._mlir import walk_ops
from .op_facts import verifier_of


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
    checked_types: set[ir.Type] = set()
    for op in walk_ops(module.operation):
        message = _segment_error(op)
        check = verifier_of(op)
        if message is None and check is not None:
            try:
                message = check(op)
            except Exception as exc:  # a malformed op must be reported, not crash the verifier
                message = f"is malformed ({type(exc).__name__}: {exc})"
        if message is None:
            message = _encoding_error(op, checked_types)
        if message:
            raise IRVerificationError(f"invalid IR{where}: '{op.name}' op {message}\n  at {op.location}")


def _segment_error(op: ir.Operation) -> str | None:
    """IRDL does not check that segment sizes add up to the operand and result counts."""
    for attr, values in (("operandSegmentSizes", op.operands), ("resultSegmentSizes", op.results)):
        if attr in op.attributes:
            total = sum(ir.DenseI32ArrayAttr(op.attributes[attr]))
            if total != len(values):
                return f"{attr} add up to {total}, but the op has {len(values)}"
    return None


def _encoding_error(op: ir.Operation, checked: set[ir.Type]) -> str | None:
    """The first encoding error of a type `op` uses; each type is checked once (`checked`:
    types are uniqued in their context, so equal types hash alike)."""
    types = [v.type for v in op.results] + [v.type for v in op.operands]
    for region in op.regions:
        for block in region.blocks:
            types.extend(a.type for a in block.arguments)
    for ty in types:
        if ty in checked:
            continue
        checked.add(ty)
        if "#tilegpu" not in str(ty):
            continue
        message = tilegpu.encoding_error(ty)
        if message:
            return message
    return None
