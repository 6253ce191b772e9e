"""convert-tile-to-tilegpu: gives every tensor a layout (ttir -> ttgir).

Layouts are inferred forward, in program order, changing value types in place:

- sources (make_range, splat, tensor constants, cat) get the default blocked layout for
  their shape: one element per thread, lanes and then warps along the fastest dim;
- elementwise ops, loads and stores take the layout of their first tensor operand and
  convert the others to it; broadcast keeps its operand's encoding;
- the shape ops (trans, reshape, join, split) give their results the layouts their
  operand's layout becomes under the op (`tilec.layout.shape_layouts`), so that they
  move no data between threads;
- a reduction's result is its operand's layout sliced along the reduced axis;
  expand_dims undoes a slice (or converts its operand to one);
- loop-carried values keep the layout they enter with; `if` results take the layout
  of the `then` branch.

Later passes choose better layouts (tilegpu-coalesce) and remove the conversions that
become unnecessary (tilegpu-remove-layout-conversions).
"""
from __future__ import annotations

from mlir import ir

from ..dialects import tilegpu
from ..dialects._mlir import block_ops, int_attr_value, is_tensor
from ..dialects.tile import shape_of, trans_order
from ..layout.encodings import REGISTER, BlockedEncoding, Encoding, SliceEncoding, default_blocked
from ..layout.shape_layouts import infer_encodings
from . import register_pass
from .utils import functions, is_elementwise


class _LayoutAssigner:
    def __init__(self, num_warps: int):
        self.num_warps = num_warps

    def default(self, shape) -> BlockedEncoding:
        return default_blocked(list(shape), self.num_warps)

    # -- helpers
    def set_layout(self, value: ir.Value, enc: Encoding | None) -> None:
        if is_tensor(value.type):
            value.set_type(tilegpu.with_layout(value.type, enc))

    def ensure(self, op: ir.Operation, index: int, enc: Encoding) -> None:
        """Makes operand `index` of `op` have layout `enc` (inserting a conversion)."""
        value = op.operands[index]
        if not is_tensor(value.type) or tilegpu.layout_of(value.type) == enc:
            return
        with ir.InsertionPoint(op), op.location:
            op.operands[index] = tilegpu.convert_layout(value, enc)

    # -- walking
    def run_block(self, block: ir.Block) -> None:
        for op in block_ops(block):
            self.run_op(op)

    def run_op(self, op: ir.Operation) -> None:
        rule = _RULES.get(op.name)
        if rule is None:
            if not is_elementwise(op):
                raise LayoutAssignmentError(f"convert-tile-to-tilegpu has no layout rule for '{op.name}' "
                                            f"(at {op.location})")
            rule = _LayoutAssigner.run_elementwise
        rule(self, op)

    def run_nothing(self, op: ir.Operation) -> None:
        """Terminators and ops without tensor results: their operands keep their layouts."""

    def run_store(self, op: ir.Operation) -> None:
        enc = tilegpu.layout_of(op.operands[0].type)
        if enc is not None:
            for i in range(1, len(op.operands)):
                self.ensure(op, i, enc)

    def run_dot(self, op: ir.Operation) -> None:
        # The FMA lowering reads its operands through shared memory in any layout; the
        # result takes the accumulator's.
        self.set_layout(op.results[0], tilegpu.layout_of(op.operands[2].type))

    def run_broadcast(self, op: ir.Operation) -> None:
        # The result's own default layout, not the (small) operand's: a [2, 1, 1]
        # operand's layout stretched to [2, 16, 64] would give every thread 1024
        # elements. The operand is converted (cheap: it is the small side).
        enc = self.default(shape_of(op.results[0].type))
        self.ensure(op, 0, enc)
        self.set_layout(op.results[0], enc)

    def run_gather(self, op: ir.Operation) -> None:
        # Each thread reads the source elements its index elements name.
        self.set_layout(op.results[0], tilegpu.layout_of(op.operands[1].type))

    def run_default(self, op: ir.Operation) -> None:
        """Sources and shape ops: each tensor result gets the default layout for its shape
        (shape ops then move data through shared memory as their lowering needs)."""
        for result in op.results:
            if is_tensor(result.type):
                self.set_layout(result, self.default(shape_of(result.type)))

    def run_shape(self, op: ir.Operation) -> None:
        """trans, reshape, join, split: the results take the layouts their operand's
        layout becomes under the op, so that no data moves (join converts its second
        operand to the first's layout; split first puts its size-2 last dimension in
        registers when it lies across threads)."""
        operand = op.operands[0]
        enc = tilegpu.layout_of(operand.type)
        operand_shape, result_shape = shape_of(operand.type), shape_of(op.results[0].type)
        order = trans_order(op) if op.name == "tile.trans" else ()
        if op.name == "tile.join":
            self.ensure(op, 1, enc)
        found = infer_encodings(op.name, enc, operand_shape, result_shape, self.num_warps, order)
        if found is None and op.name == "tile.split":
            pair = [1] * (len(operand_shape) - 1) + [2]
            enc = default_blocked(list(operand_shape), self.num_warps, size_per_thread=pair)
            self.ensure(op, 0, enc)
            found = infer_encodings(op.name, enc, operand_shape, result_shape, self.num_warps, order)
        if found is None:
            self.run_default(op)
            return
        for result, result_enc in zip(op.results, found):
            self.set_layout(result, result_enc)

    def run_elementwise(self, op: ir.Operation) -> None:
        tensor_operands = [i for i, v in enumerate(op.operands) if is_tensor(v.type)]
        if not tensor_operands:
            return
        enc = tilegpu.layout_of(op.operands[tensor_operands[0]].type)
        for i in tensor_operands[1:]:
            self.ensure(op, i, enc)
        for result in op.results:
            self.set_layout(result, enc)

    def run_packed(self, op: ir.Operation) -> None:
        """An inline asm or map_elementwise: elementwise, except that each thread must hold
        a multiple of `pack` elements (one instance takes `pack` of them): otherwise `pack`
        per thread along the last dimension long enough, which becomes the fastest."""
        self.run_elementwise(op)
        pack = int_attr_value(op, "pack")
        result = op.results[0]
        if pack == 1 or not is_tensor(result.type):
            return
        shape = shape_of(result.type)
        enc = tilegpu.layout_of(result.type)
        if enc.to_linear(shape).in_dim_size(REGISTER) % pack == 0:
            return
        spt = [1] * len(shape)
        dim = next(d for d in reversed(range(len(shape))) if shape[d] >= pack)  # the semantic layer checked one exists
        spt[dim] = pack
        order = [dim] + [d for d in reversed(range(len(shape))) if d != dim]
        enc = default_blocked(shape, self.num_warps, size_per_thread=spt, order=order)
        for i, value in enumerate(op.operands):
            if is_tensor(value.type):
                self.ensure(op, i, enc)
        for r in op.results:
            self.set_layout(r, enc)

    def run_constant(self, op: ir.Operation) -> None:
        result = op.results[0]
        if not is_tensor(result.type):
            return
        enc = self.default(shape_of(result.type))
        new_type = tilegpu.with_layout(result.type, enc)
        value = ir.DenseElementsAttr(op.attributes["value"])
        if not value.is_splat:
            raise NotImplementedError("non-splat tensor constants are not supported yet")
        with ir.InsertionPoint(op), op.location:
            new_attr = ir.DenseElementsAttr.get_splat(new_type, value.get_splat_value())
            new_op = ir.Operation.create("arith.constant", results=[new_type], attributes={"value": new_attr})
        result.replace_all_uses_with(new_op.result)
        op.erase()

    def run_reduce(self, op: ir.Operation) -> None:
        enc = tilegpu.layout_of(op.operands[0].type)
        for i in range(1, len(op.operands)):
            self.ensure(op, i, enc)
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        for result in op.results:
            if is_tensor(result.type):
                self.set_layout(result, SliceEncoding(axis, enc))

    def run_expand_dims(self, op: ir.Operation) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        src_enc = tilegpu.layout_of(op.operands[0].type)
        result = op.results[0]
        if isinstance(src_enc, SliceEncoding) and src_enc.dim == axis:
            self.set_layout(result, src_enc.parent)
            return
        enc = self.default(shape_of(result.type))
        self.ensure(op, 0, SliceEncoding(axis, enc))
        self.set_layout(result, enc)

    def run_for(self, op: ir.Operation) -> None:
        body = op.regions[0].blocks[0]
        inits = list(op.operands)[3:]
        for init, arg, result in zip(inits, list(body.arguments)[1:], op.results):
            arg.set_type(init.type)
            result.set_type(init.type)
        self.run_block(body)
        self._yield_in_init_layouts(block_ops(body)[-1], inits)

    def run_while(self, op: ir.Operation) -> None:
        """The `before` arguments take the types of the inits (and the `after` block's
        yield is converted to them); the `after` arguments and the results take the types
        of the values `scf.condition` forwards, which canonicalisation may have thinned
        (a value only the condition reads is not forwarded)."""
        inits = list(op.operands)
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        for init, arg in zip(inits, before.arguments):
            arg.set_type(init.type)
        self.run_block(before)
        forwarded = list(block_ops(before)[-1].operands)[1:]  # operand 0 is the condition itself
        for value, arg, result in zip(forwarded, after.arguments, op.results):
            arg.set_type(value.type)
            result.set_type(value.type)
        self.run_block(after)
        self._yield_in_init_layouts(block_ops(after)[-1], inits)

    def _yield_in_init_layouts(self, terminator: ir.Operation, inits: list) -> None:
        """A loop-carried tensor keeps the layout it entered with: the yield converts to it."""
        for i, init in enumerate(inits):
            enc = tilegpu.layout_of(init.type)
            if enc is not None:
                self.ensure(terminator, i, enc)

    def run_if(self, op: ir.Operation) -> None:
        then_block = op.regions[0].blocks[0]
        else_block = op.regions[1].blocks[0] if len(op.regions[1].blocks) else None
        self.run_block(then_block)
        if else_block is not None:
            self.run_block(else_block)
        then_yield = block_ops(then_block)[-1]
        for i, result in enumerate(op.results):
            ty = then_yield.operands[i].type
            result.set_type(ty)
            enc = tilegpu.layout_of(ty)
            if enc is not None and else_block is not None:
                self.ensure(block_ops(else_block)[-1], i, enc)


class LayoutAssignmentError(Exception):
    pass


_A = _LayoutAssigner
# The layout rule of every op that can reach this pass; upstream elementwise ops (arith,
# math) and the pure extern/asm ops take `run_elementwise` through their op facts.
_RULES = {
    "scf.for": _A.run_for, "scf.if": _A.run_if, "scf.while": _A.run_while,
    **{name: _A.run_nothing for name in ("scf.yield", "scf.condition", "func.return", "gpu.yield",
                                         "tile.print", "tile.assert", "tile.assume", "tile.barrier",
                                         "tile.special_register", "tile.grid_dependency",
                                         "tile.descriptor_store",
                                         "tilegpu.convert_layout")},
    # ttgir's own ops are made by later passes with their layouts already chosen.
    **{name: _A.run_nothing for name in ("tilegpu.local_alloc", "tilegpu.local_dealloc", "tilegpu.local_load",
                                         "tilegpu.local_store", "tilegpu.memdesc_index", "tilegpu.memdesc_subview", "tilegpu.extract_slice",
                                         "tilegpu.async_copy_global_to_local", "tilegpu.async_commit_group",
                                         "tilegpu.async_wait", "tilegpu.barrier", "tilegpu.bulk_store_wait", "tilegpu.init_barriers",
                                         "tilegpu.inval_barriers",
                                         "tilegpu.tma_copy_global_to_local", "tilegpu.wait_barrier",
                                         "tilegpu.arrive_barrier", "tilegpu.warp_specialize")},
    "tile.store": _A.run_store,
    "tile.reduce": _A.run_reduce,
    "tile.dot": _A.run_dot,
    "tile.expand_dims": _A.run_expand_dims,
    "tile.broadcast": _A.run_broadcast,
    "tile.gather": _A.run_gather,
    "tile.inline_asm": _A.run_packed,
    "tile.map_elementwise": _A.run_packed,
    **{name: _A.run_elementwise for name in ("tile.load", "tile.scan", "tile.atomic_rmw", "tile.atomic_cas",
                                             "tile.atomic_load", "tile.atomic_poll", "tile.extern_elementwise")},
    "tile.atomic_store": _A.run_store,
    "arith.constant": _A.run_constant,
    **{name: _A.run_default for name in ("tile.make_range", "tile.splat", "tile.get_program_id",
                                         "tile.get_num_programs", "tile.cat", "tile.histogram",
                                         "tile.descriptor_load")},
    **{name: _A.run_shape for name in ("tile.reshape", "tile.trans", "tile.join", "tile.split")},
}


@register_pass("convert-tile-to-tilegpu", "Give every tensor a layout (ttir to ttgir)",
               **{"num-warps": 4, "target": "sm_90"})
def convert_tile_to_tilegpu(module_op: ir.Operation, num_warps: int = 4, target: str = "sm_90") -> None:
    module_op.attributes[tilegpu.NUM_WARPS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), num_warps)
    module_op.attributes[tilegpu.TARGET_ATTR] = ir.StringAttr.get(target)
    assigner = _LayoutAssigner(num_warps)
    for fn in functions(module_op):
        assigner.run_block(fn.regions[0].blocks[0])
