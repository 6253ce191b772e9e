"""The one seam between tilec and the MLIR Python bindings.

Everything that touches the bindings' rough edges lives here, once:

- `make_context()` creates a context with tilec's IRDL dialects loaded (IRDL dialects
  are per context and must be re-loaded into every new one);
- `create_op()` creates an operation by name, filling in `operandSegmentSizes` for the
  optional/variadic operand groups IRDL uses (one group per differently typed operand,
  because an IRDL constraint variable binds a single type);
- small attribute helpers, since IRDL attributes come back from the bindings as opaque
  `ir.Attribute`s (see `tilegpu.py` for how layouts are read back from their text).

IRDL ops carry no traits: they cannot be terminators, and upstream CSE/DCE treat them as
having unknown side effects. Region terminators of tile ops are therefore `gpu.yield`
(which accepts any parent), and tilec has its own DCE (`passes/tile_dce.py`).
"""
from __future__ import annotations

from typing import Iterable, Sequence

from mlir import ir
from mlir._mlir_libs import _mlir
from mlir.dialects import irdl

# The bindings import a Python module per dialect namespace the first time they meet
# one of its ops, and retry on every op when none exists: tile and tilegpu would cost
# a failed import each time an op is visited. Their modules here end the search.
if __package__ not in _mlir.globals.dialect_search_modules:
    _mlir.globals.append_dialect_search_prefix(__package__)

# arith.truncf's `roundingmode` attribute value (the arith::RoundingMode enum) for toward_zero.
ROUND_TOWARD_ZERO = 3

# Each dialect module registers its IRDL text here at import time.
_IRDL_SOURCES: dict[str, str] = {}


def register_irdl(name: str, text: str) -> None:
    _IRDL_SOURCES[name] = text


def load_tilec_dialects(context: ir.Context) -> None:
    """Loads every registered tilec dialect into `context` (call once per context)."""
    with context, ir.Location.unknown():
        for text in _IRDL_SOURCES.values():
            irdl.load_dialects(ir.Module.parse(text))


def make_context() -> ir.Context:
    """A fresh context with tile and tilegpu loaded (and every upstream dialect)."""
    # Importing the dialect modules registers their IRDL text.
    from . import tile, tilegpu  # noqa: F401
    context = ir.Context()
    # No thread pool: a compile has one function, so MLIR finds nothing to run in
    # parallel, and a context without threads can be dropped in a forked process (the
    # autotuner's compile workers), where joining the parent's threads would abort.
    context.enable_multithreading(False)
    load_tilec_dialects(context)
    return context


# ----------------------------------------------------------------------------- ops


def create_op(name: str, results: Sequence[ir.Type] = (), operands: Sequence[ir.Value | None] = (),
              attributes: dict[str, ir.Attribute] | None = None, regions: int = 0,
              segments: Sequence[int] | None = None, loc: ir.Location | None = None) -> ir.Operation:
    """Creates `name` at the current insertion point.

    `operands` may hold None for an absent optional operand when `segments` is None:
    then every operand is its own group of size 0 or 1 and `operandSegmentSizes` is
    derived. Pass `segments` explicitly for variadic groups.
    """
    attributes = dict(attributes or {})
    present = [v for v in operands if v is not None]
    if segments is None and len(present) != len(operands):
        segments = [0 if v is None else 1 for v in operands]
    if segments is not None:
        attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(list(segments))
    return ir.Operation.create(name, results=list(results), operands=present, attributes=attributes,
                               regions=regions, loc=loc)


def i32_attr(value: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))


def str_attr(value: str) -> ir.StringAttr:
    return ir.StringAttr.get(value)


def bool_attr(value: bool) -> ir.BoolAttr:
    return ir.BoolAttr.get(bool(value))


def int_attr_value(op: ir.Operation, name: str, default: int | None = None) -> int:
    """The integer value of attribute `name` on `op` (default when absent)."""
    attrs = op.attributes
    if name not in attrs:
        if default is None:
            raise KeyError(f"{op.name} has no attribute {name!r}")
        return default
    return ir.IntegerAttr(attrs[name]).value


def str_attr_value(op: ir.Operation, name: str, default: str = "") -> str:
    attrs = op.attributes
    if name not in attrs:
        return default
    return ir.StringAttr(attrs[name]).value


def bool_attr_value(op: ir.Operation, name: str, default: bool = False) -> bool:
    attrs = op.attributes
    if name not in attrs:
        return default
    return ir.BoolAttr(attrs[name]).value


def operand_groups(op: ir.Operation) -> list[list[ir.Value]]:
    """The operands of `op` split by its `operandSegmentSizes` (one group if absent)."""
    operands = list(op.operands)
    if "operandSegmentSizes" not in op.attributes:
        return [[v] for v in operands]
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    groups, at = [], 0
    for size in sizes:
        groups.append(operands[at:at + size])
        at += size
    return groups


def walk_ops(region_holder: ir.Operation) -> Iterable[ir.Operation]:
    """Pre-order walk of every op nested in `region_holder` (not the op itself)."""
    for region in region_holder.regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                yield op
                if len(op.regions):  # most ops have none: no generator for them
                    yield from walk_ops(op)


def block_ops(block: ir.Block) -> list[ir.Operation]:
    return [op.operation for op in block.operations]


def is_tensor(ty: ir.Type) -> bool:
    return isinstance(ty, ir.RankedTensorType)


def tensor_type(ty: ir.Type) -> ir.RankedTensorType:
    return ty if isinstance(ty, ir.RankedTensorType) else ir.RankedTensorType(ty)
