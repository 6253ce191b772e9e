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

Then every tensor-core dot whose B is such a local_load is sliced along K into a chain
of dots one instruction deep, each loading its own slice through a `memdesc_subview`
(A likewise, or by `extract_slice` when it is already in registers): one slice's
fragments are live at a time, so large K tiles no longer spill. The first slice is read
where the operands were loaded (in a pipelined loop: right after the wait), the others
at the dot (tilegpu-pipeline refills a ring read into registers after the last dot that
reads its slot, so these reads stay before the copies that overwrite it).
"""
from __future__ import annotations

from mlir import ir

from ..dialects import tilegpu
from ..dialects import tile
from ..dialects._mlir import create_op, int_attr_value, str_attr_value, tensor_type, walk_ops
from ..dialects.tile import shape_of
from ..layout.encodings import BlockedEncoding, DotOperandEncoding
from ..layout.mma import MmaEncoding, mma_v2_instr_k
from ..layout.shared import mma_operand_shared_encoding
from .convert_tilegpu_to_llvm.convert_layout import slice_registers
from .pipeline import SLOT_ATTR
from . import register_pass
from .utils import functions, is_pure

_BITS = {"f16": 16, "bf16": 16, "f32": 32, "i8": 8, "f8E4M3FN": 8, "f8E5M2": 8}


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


def _single_use_local_load(value: ir.Value) -> ir.Operation | None:
    if not isinstance(value, ir.OpResult):
        return None
    op = value.owner.operation if hasattr(value.owner, "operation") else value.owner
    uses = list(value.uses)
    return op if op.name == "tilegpu.local_load" and len(uses) == 1 else None


def _operand_read(value: ir.Value) -> tuple[ir.Operation | None, ir.Operation | None]:
    """The single-use local_load a dot operand comes from, and the fp_to_fp that widens
    it on the way (an fp8 operand of mma.sync, see accelerate_fp8_mma), or None."""
    load = _single_use_local_load(value)
    if load is not None or not isinstance(value, ir.OpResult) or len(list(value.uses)) != 1:
        return load, None
    widen = value.owner.operation
    if widen.name != "tile.fp_to_fp":
        return None, None
    load = _single_use_local_load(widen.operands[0])
    return (load, widen) if load is not None else (None, None)


def _slice_along_k(dot: ir.Operation) -> None:
    """A tensor-core dot whose B operand is read from shared memory becomes a chain of
    dots over K slices of one instruction's depth, each reading only its slice of B (a
    memdesc_subview) and of A (a subview too, or, for an A already in registers such as
    attention's p, an extract_slice that selects registers): the B fragments of one slice
    are live at a time, not the whole K (a 64x128 B operand alone would take 128
    registers a thread). An operand widened after its read (fp8) is read and widened a
    slice at a time."""
    a, b, acc = dot.operands
    (load_a, widen_a), (load_b, widen_b) = _operand_read(a), _operand_read(b)
    operand = tilegpu.layout_of(a.type)
    if load_b is None or len(shape_of(a.type)) != 2:
        return
    m, k = shape_of(a.type)
    n = shape_of(b.type)[1]
    depth = mma_v2_instr_k(operand.k_width)
    if k <= depth:
        return
    if load_a is None and slice_registers(_linear(a.type), _linear(_resized(a.type, [m, depth])), [0, depth]) is None:
        return
    # The first slice is read where the first of the two operands was (in a pipelined
    # loop, right after the wait), so the first mma waits for no other slice's reads.
    # The other slices are read at the dot.
    early = _first_read(load_a, load_b)

    def read(load: ir.Operation, widen: ir.Operation | None, offsets: list[int], shape: list[int], first: bool):
        hoist = first and early is not None and _nothing_writes_between(early, load) and \
            _available_at(load.operands[0], early)
        where = early if hoist else (load if first else dot)
        with ir.InsertionPoint(where), dot.location:
            value = tilegpu.local_load(tilegpu.memdesc_subview(load.operands[0], offsets, shape),
                                       _resized(load.results[0].type, shape))
        if widen is None:
            return value
        with ir.InsertionPoint(dot), dot.location:
            return _fp_to_fp(value, _resized(widen.results[0].type, shape))

    total = acc
    for start in range(0, k, depth):
        if load_a is not None:
            a_slice = read(load_a, widen_a, [0, start], [m, depth], start == 0)
        else:
            with ir.InsertionPoint(dot), dot.location:
                a_slice = tilegpu.extract_slice(a, [0, start], [m, depth])
        b_slice = read(load_b, widen_b, [start, 0], [depth, n], start == 0)
        with ir.InsertionPoint(dot), dot.location:
            total = tile.dot(a_slice, b_slice, total, str_attr_value(dot, "input_precision", "ieee"))
    dot.results[0].replace_all_uses_with(total)
    dot.erase()
    for widen in (widen_a, widen_b):
        if widen is not None:
            widen.erase()
    if load_a is not None:
        load_a.erase()
    load_b.erase()


def _fp_to_fp(value: ir.Value, ty: ir.Type) -> ir.Value:
    return create_op("tile.fp_to_fp", [ty], [value]).result


def _linear(ty: ir.Type):
    return tilegpu.layout_of(ty).to_linear(shape_of(ty))


def _first_read(load_a: ir.Operation | None, load_b: ir.Operation) -> ir.Operation | None:
    """Of the operands' local_loads in one block, the one that comes first."""
    if load_a is None or load_a.block != load_b.block:
        return None
    return load_a if _before(load_a, load_b) else load_b


def _nothing_writes_between(start: ir.Operation, load: ir.Operation) -> bool:
    """Whether `load`'s read may move up to `start`: every op between them is pure, or a
    copy into another slot of a pipelining ring (or another buffer) than the one read,
    or the commit closing such copies. A wait, a barrier or a store in between keeps the
    read where it is."""
    read = load.operands[0]
    read_op = read.owner.operation if isinstance(read, ir.OpResult) else None
    between = False
    for op in start.block.operations:
        op = op.operation
        if op == start:
            between = True
            continue
        if op == load:
            return True
        if not between or is_pure(op) or op.name == "tilegpu.async_commit_group":
            continue
        if op.name != "tilegpu.async_copy_global_to_local" or not _other_slot(op.operands[1], read_op):
            return False
    return False


def _other_slot(written: ir.Value, read_op: ir.Operation | None) -> bool:
    """Whether a copy into `written` cannot touch what `read_op` (the read buffer's
    definition) gives: another ring, or the same ring's slot at another pipeline offset."""
    if read_op is None or read_op.name != "tilegpu.memdesc_index" or not isinstance(written, ir.OpResult):
        return False
    write_op = written.owner.operation
    if write_op.name != "tilegpu.memdesc_index" or SLOT_ATTR not in write_op.attributes \
            or SLOT_ATTR not in read_op.attributes:
        return False
    if write_op.operands[0] != read_op.operands[0]:
        return True
    return int_attr_value(write_op, SLOT_ATTR) != int_attr_value(read_op, SLOT_ATTR)


def _available_at(buffer: ir.Value, where: ir.Operation) -> bool:
    """Whether `buffer` can be used before `where`: defined before it, or a memdesc_index
    whose operands are (block arguments, values from outside the block or from before
    `where`), which is then moved up before `where` (it is pure)."""
    op = buffer.owner.operation if isinstance(buffer, ir.OpResult) else None
    if op is None or _before(op, where):
        return True
    if op.name != "tilegpu.memdesc_index":
        return False
    for operand in op.operands:
        if isinstance(operand, ir.OpResult) and not _before(operand.owner.operation, where):
            return False
    op.move_before(where)
    return True


def _before(op: ir.Operation, where: ir.Operation) -> bool:
    """Whether `op` dominates `where` for our purposes: in another block (an enclosing
    one: the dot's operands are defined there or in the dot's block), or earlier in
    the same block."""
    if op.block != where.block:
        return True
    for other in where.block.operations:
        if other.operation == op:
            return True
        if other.operation == where:
            return False
    return False


def _resized(ty: ir.Type, shape: list[int]) -> ir.RankedTensorType:
    tensor = tensor_type(ty)
    return ir.RankedTensorType.get(shape, tensor.element_type, tensor.encoding)


@register_pass("tilegpu-optimize-dot-operands", "Tensor-core operands through swizzled shared memory (ldmatrix)")
def optimize_dot_operands(module_op: ir.Operation) -> None:
    for fn in functions(module_op):
        for op in [op for op in walk_ops(fn) if op.name == "tilegpu.convert_layout"]:
            target = tilegpu.layout_of(op.results[0].type)
            source = tilegpu.layout_of(op.operands[0].type)
            # From an mma result (a chained dot's A operand) the lowering permutes registers
            # when the warps line up: no buffer then.
            if (isinstance(target, DotOperandEncoding) and isinstance(target.parent, MmaEncoding)
                    and not isinstance(source, (DotOperandEncoding, MmaEncoding))
                    and str(tensor_type(op.operands[0].type).element_type) in _BITS):
                _through_shared_memory(op)
        for op in [op for op in walk_ops(fn) if op.name == "tile.dot"]:
            if isinstance(tilegpu.layout_of(op.results[0].type), MmaEncoding):
                _slice_along_k(op)
