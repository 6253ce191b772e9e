"""tilegpu-optimize-dot-operands: mma operands through a swizzled buffer and ldmatrix.

A `convert_layout` into a tensor-core operand layout (`#tilegpu.dot_op` with an `mma`
parent) would go through the generic exchange (every element stored and loaded on its
own, with bank conflicts). This pass makes it explicit instead:

    %a = convert_layout %x : #blocked -> #dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
  becomes
    %buf = local_alloc %x : memdesc<tensor<128x32xf16, #shared<{vec = 8, perPhase = 2, ...}>>>
    %a = local_load %buf : -> #dot_op<...>

The buffer's swizzle (`mma_operand_shared_encoding`, in the order the value is held:
its fastest dimension stays contiguous, so threads store 16-byte vectors) makes the
`ldmatrix` reads of the local_load free of bank conflicts. The allocator and the
barrier pass then place and synchronise the buffer like any other. Conversions the
pipeliner already turned into a local_load from a ring are untouched.
"""
from __future__ import annotations

from mlir import ir

from ..dialects import tilegpu
from ..dialects._mlir import tensor_type, walk_ops
from ..dialects.tile import shape_of
from ..layout.encodings import BlockedEncoding, DotOperandEncoding
from ..layout.mma import MmaEncoding
from ..layout.shared import mma_operand_shared_encoding
from . import register_pass
from .utils import functions

_BITS = {"f16": 16, "bf16": 16, "f32": 32, "i8": 8}


def _order(encoding) -> tuple[int, ...]:
    """The order (fastest dimension first) in which a value's layout holds it."""
    if isinstance(encoding, BlockedEncoding):
        return encoding.order
    rank = encoding.rank
    return tuple(reversed(range(rank)))


def _through_shared_memory(op: ir.Operation) -> None:
    src, result = op.operands[0], op.results[0]
    operand = tilegpu.layout_of(result.type)
    ty = tensor_type(src.type)
    shape = list(shape_of(src.type))
    shared = mma_operand_shared_encoding(operand, shape, _order(tilegpu.layout_of(src.type)),
                                         _BITS[str(ty.element_type)])
    buffer = tilegpu.memdesc_type(ir.RankedTensorType.get(shape, ty.element_type, tilegpu.encoding_attr(shared)))
    with ir.InsertionPoint(op), op.location:
        loaded = tilegpu.local_load(tilegpu.local_alloc(buffer, src), result.type)
    result.replace_all_uses_with(loaded)
    op.erase()


@register_pass("tilegpu-optimize-dot-operands", "Tensor-core operands through swizzled shared memory (ldmatrix)")
def optimize_dot_operands(module_op: ir.Operation) -> None:
    for fn in functions(module_op):
        for op in [op for op in walk_ops(fn) if op.name == "tilegpu.convert_layout"]:
            target = tilegpu.layout_of(op.results[0].type)
            source = tilegpu.layout_of(op.operands[0].type)
            if (isinstance(target, DotOperandEncoding) and isinstance(target.parent, MmaEncoding)
                    and not isinstance(source, DotOperandEncoding)
                    and str(tensor_type(op.operands[0].type).element_type) in _BITS):
                _through_shared_memory(op)
