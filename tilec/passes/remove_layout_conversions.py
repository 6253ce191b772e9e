"""tilegpu-remove-layout-conversions: removes layout conversions that are not needed.

A `convert_layout` moves data between threads, through shared memory in general, so
the pass removes as many as it can, repeating three rewrites until none applies:

1. fold: a conversion to the layout the value already has disappears; a conversion of
   a conversion converts the original value;
2. rematerialise (backward): when the converted value is cheap to compute — index
   arithmetic built from make_range, splat, constants and elementwise ops, through
   expand_dims, broadcasts, reshapes and transposes — compute it again directly in the
   wanted layout, and use that instead. Below a broadcast, what
   gets broadcast is small next to the result, so a load there is repeated in the
   wanted layout and a conversion there is redone from its source (`x + bias[None, :]`
   loads the bias row in the tile's layout rather than converting the tile);
3. sink (forward): when the value is expensive (a load, a reduction), move the
   conversion past its layout-agnostic users — elementwise ops, reductions, scans and the shape
   ops trans, reshape, join and split (not broadcasts: the conversion is cheaper on their
   smaller operand) — by running those users in the value's own layout instead (their
   other operands must be rematerialisable in it, or be conversions themselves, which are
   redirected; a shape op's results take the layouts the value's becomes under it, and a
   split whose halves would lie in different threads stays). A conversion that reaches a reduction to a scalar vanishes; one that
   meets the conversion coalescing put before a store folds with it. Stores take the
   value's layout only when theirs has one element per thread along the fastest
   dimension (there is no vector write to lose) and the value's layout still lets a
   warp write contiguous runs: its registers along that dimension count only as far as
   the store's pointers and mask allow one vector write (see `_store_layout_is_free`).

Before these, operands that their op reads in any layout (tl.dot's, through shared
memory; gather's source) simply skip the conversion.

4. retype loop-carried values: a value the loop yields converted out of a layout L (a
   tensor-core dot's accumulator), or computes elementwise from itself and from values
   converted out of L (`acc = acc + tl.load(...)`; attention's `l_i = l_i * alpha +
   tl.sum(p, 1)`), is carried in L, so that no iteration pays a conversion; it is
   converted once before and after the loop instead (usually free: the initial value is
   a splat, and the result feeds a store). So is a value the loop replaces inside an
   `scf.if` (each branch yields it unchanged or something computable in L) and otherwise
   only converts to L (`if i % cut == 0: rows = ...`; a flattened tile loop's offsets).

5. hoist: a conversion inside a loop of a value defined before the loop moves before
   it (done once rather than every iteration).

6. retype if results: a result of an `scf.if` that every branch yields converted out
   of one layout L (or already in L, or recomputable in L) takes L, and one conversion
   after the if replaces those of the branches; it then sinks or folds like any other
   (`partial += tl.load(...)` under `if count != 0:` stays in the loads' layout).

After coalescing, this makes whole chains of elementwise work run in the layout of the
loads that feed them, which is what a hand-written kernel would do.
"""
from __future__ import annotations

import math

from mlir import ir

from ..dialects import tilegpu
from ..dialects._mlir import block_ops, is_tensor, tensor_type, walk_ops
from ..dialects.op_facts import is_pure, reads_any_layout
from ..dialects.tile import element_type, memory_bits, pointee_type, shape_of, store_operands, trans_order
from ..layout.encodings import LANE, REGISTER, BlockedEncoding, DotOperandEncoding, Encoding, SliceEncoding, to_linear
from ..layout.shape_layouts import infer_encodings
from . import register_pass
from .axis_info import AxisInfoAnalysis
from .utils import erase_dead_ops, functions, is_elementwise

MAX_ITERATIONS = 64
# How deep rematerialisation follows a value's operands: past tl.rand's Philox rounds
# (36-39 ops from the offsets to a dropout mask), two Python frames per level.
_MAX_DEPTH = 128

# Ops recomputed in another layout instead of converting their result.
_CHEAP_SOURCES = {"tile.make_range", "tile.splat", "arith.constant"}


class _Rewriter:
    def __init__(self, store_widths: _StoreWidths):
        self.memo: dict[tuple[ir.Value, Encoding, bool], ir.Value | None] = {}
        self.store_widths = store_widths

    # ------------------------------------------------------------------ rematerialisation
    def rematerialize(self, value: ir.Value, layout: Encoding, depth: int = 0,
                      below_broadcast: bool = False) -> ir.Value | None:
        """`value` computed in `layout` without a conversion, or None if too costly.

        Below a broadcast (`below_broadcast`), a conversion whose source cannot be
        recomputed is redone from that source into the wanted layout: it then moves
        fewer elements than converting the broadcast result would (a bias row added to
        a tile converts the row, not the tile)."""
        if not is_tensor(value.type):
            return value
        if tilegpu.layout_of(value.type) == layout:
            return value
        key = (value, layout, below_broadcast)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = None  # guards cycles
        result = self._rematerialize(value, layout, depth, below_broadcast) if depth < _MAX_DEPTH else None
        self.memo[key] = result
        return result

    def _rematerialize(self, value: ir.Value, layout: Encoding, depth: int, below_broadcast: bool) -> ir.Value | None:
        if not isinstance(value, ir.OpResult):
            return None
        op = value.owner.operation
        name = op.name
        if name == "tilegpu.convert_layout":
            found = self.rematerialize(op.operands[0], layout, depth + 1, below_broadcast)
            if found is None and below_broadcast:
                with ir.InsertionPoint.after(op), op.location:
                    found = tilegpu.convert_layout(op.operands[0], layout)
            return found
        if name in _CHEAP_SOURCES:
            operand_layouts = [None] * len(op.operands)
        elif is_elementwise(op) or name == "tile.broadcast":
            operand_layouts = [layout if is_tensor(v.type) else None for v in op.operands]
            below_broadcast = below_broadcast or name == "tile.broadcast"
        elif name == "tile.expand_dims":
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            operand_layouts = [SliceEncoding(axis, layout)]
        elif name in ("tile.reshape", "tile.trans"):
            # Shape ops keep their elements in registers: the operand is wanted in the
            # layout that becomes `layout` under the op (the inverse reshape or transpose).
            source = _shape_source_layout(op, layout)
            if source is None:
                return None
            operand_layouts = [source]
        elif name == "tile.load" and below_broadcast and is_pure(op):
            # The load of what gets broadcast (a bias row): loaded again in the wanted
            # layout, threads that share elements read the same addresses (served by the
            # cache) instead of exchanging them through shared memory.
            operand_layouts = [layout if is_tensor(v.type) else None for v in op.operands]
        else:
            return None
        operands = []
        for operand, want in zip(op.operands, operand_layouts):
            if want is None:
                operands.append(operand)
                continue
            new = self.rematerialize(operand, want, depth + 1, below_broadcast)
            if new is None:
                return None
            operands.append(new)
        new_types = [tilegpu.with_layout(r.type, layout) for r in op.results]
        with ir.InsertionPoint.after(op), op.location:
            if name == "arith.constant":
                dense = ir.DenseElementsAttr(op.attributes["value"])
                attrs = {"value": ir.DenseElementsAttr.get_splat(new_types[0], dense.get_splat_value())}
            else:
                attrs = {key: op.attributes[key] for key in op.attributes}
            if len(op.regions):  # tile.map_elementwise: its body comes along
                clone = op.clone(ip=ir.InsertionPoint.after(op))
                for i, operand in enumerate(operands):
                    clone.operands[i] = operand
                for result, ty in zip(clone.results, new_types):
                    result.set_type(ty)
            else:
                clone = ir.Operation.create(name, results=new_types, operands=operands, attributes=attrs)
        for old_result, new_result in zip(op.results, clone.results):
            self.memo[(old_result, layout, below_broadcast)] = new_result  # siblings of multi-result ops
        return clone.results[value.result_number]

    # ------------------------------------------------------------------ rewrites of one conversion
    def fold(self, convert: ir.Operation) -> bool:
        src = convert.operands[0]
        if src.type == convert.results[0].type:
            convert.results[0].replace_all_uses_with(src)
            convert.erase()
            return True
        if isinstance(src, ir.OpResult) and src.owner.operation.name == "tilegpu.convert_layout":
            convert.operands[0] = src.owner.operands[0]
            return True
        return False

    def try_rematerialize(self, convert: ir.Operation) -> bool:
        layout = tilegpu.layout_of(convert.results[0].type)
        new = self.rematerialize(convert.operands[0], layout)
        if new is None:
            return False
        convert.results[0].replace_all_uses_with(new)
        convert.erase()
        return True

    def try_sink(self, convert: ir.Operation) -> bool:
        src = convert.operands[0]
        src_layout = tilegpu.layout_of(src.type)
        changed = False
        for use in list(convert.results[0].uses):
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if self._sink_into(user, convert.results[0], src, src_layout):
                changed = True
        if changed and not any(True for _ in convert.results[0].uses):
            convert.erase()
        return changed

    def _sink_into(self, user: ir.Operation, converted: ir.Value, src: ir.Value, layout: Encoding) -> bool:
        """Runs `user` in `layout` so that the conversion moves past it.

        A store is left alone when its layout gives threads vectors to write: coalescing
        chose it, and a conversion before such a store is worth paying. Every other
        tensor operand must be available in
        `layout`: recomputed there, or itself a conversion, which is then redirected
        (one conversion replaces another, and the sunk one disappears).
        """
        name = user.name
        if name == "tile.store" and not _store_layout_is_free(user, layout, self.store_widths(user),
                                                              self.store_widths.operands_in_registers):
            return False
        # Not past a broadcast: its operand is the small side, where a conversion is cheap.
        if not (is_elementwise(user) or name in ("tile.reduce", "tile.scan", "tile.store") or name in _SHAPE_OPS):
            return False
        if _widens_into_dot_operand(user, converted):
            return False
        if name in _SHAPE_OPS:
            shape_layouts = _shape_result_layouts(user, layout)
            if shape_layouts is None:
                return False
        replacements: list[tuple[int, ir.Value | ir.Operation]] = []
        for i, operand in enumerate(user.operands):
            if operand == converted:
                replacements.append((i, src))
            elif is_tensor(operand.type):
                new = self.rematerialize(operand, layout)
                if new is None:
                    if not (isinstance(operand, ir.OpResult)
                            and operand.owner.operation.name == "tilegpu.convert_layout"):
                        return False
                    new = operand.owner.operation  # re-convert its source below
                replacements.append((i, new))
        for i, value in replacements:
            if isinstance(value, ir.Operation):
                with ir.InsertionPoint(user), user.location:
                    value = tilegpu.convert_layout(value.operands[0], layout)
            user.operands[i] = value
        for result in user.results:
            if not is_tensor(result.type):
                continue
            old_type = result.type
            if name == "tile.reduce":
                axis = ir.IntegerAttr(user.attributes["axis"]).value
                new_layout = SliceEncoding(axis, layout)
            elif name in _SHAPE_OPS:
                new_layout = shape_layouts[result.result_number]
            else:
                new_layout = layout
            result.set_type(tilegpu.with_layout(old_type, new_layout))
            with ir.InsertionPoint.after(user), user.location:
                back = tilegpu.convert_layout(result, tilegpu.layout_of(old_type))
            result.replace_all_uses_except(back, back.owner.operation)
        return True


_SHAPE_OPS = ("tile.trans", "tile.reshape", "tile.join", "tile.split")


def _widens_into_dot_operand(user: ir.Operation, converted: ir.Value) -> bool:
    """Whether `user` widens a value converted into a tensor-core operand's fragments (an
    fp8 operand of mma.sync, widened to f16 there): sunk past it, the conversion would
    move twice the bytes, and a wide value in the fragments' narrow k_width is one no
    shared-memory read (ldmatrix) serves, where the narrow one is read straight from the
    pipeline's buffer."""
    if not isinstance(tilegpu.layout_of(converted.type), DotOperandEncoding) or len(user.results) != 1:
        return False
    result = user.results[0]
    return is_tensor(result.type) and \
        memory_bits(tensor_type(result.type).element_type) > memory_bits(tensor_type(converted.type).element_type)


def _shape_source_layout(op: ir.Operation, layout: Encoding) -> Encoding | None:
    """The layout of a reshape's or transpose's operand under which its result is in
    `layout`: the inverse op's result layout."""
    operand_shape, result_shape = shape_of(op.operands[0].type), shape_of(op.results[0].type)
    order = ()
    if op.name == "tile.trans":
        forward = trans_order(op)
        order = [forward.index(d) for d in range(len(forward))]
    found = infer_encodings(op.name, layout, result_shape, operand_shape, layout.num_warps, order)
    return None if found is None else found[0]


def _shape_result_layouts(op: ir.Operation, layout: Encoding) -> list[Encoding] | None:
    """The layouts of shape op `op`'s results when its operands are in `layout`."""
    operand_shape, result_shape = shape_of(op.operands[0].type), shape_of(op.results[0].type)
    order = trans_order(op) if op.name == "tile.trans" else ()
    return infer_encodings(op.name, layout, operand_shape, result_shape, layout.num_warps, order)


def _store_layout_is_free(store: ir.Operation, layout: Encoding, widths: tuple[int, ...],
                          operands_in_registers: bool = False) -> bool:
    """True when a store can take `layout` instead of its own and lose nothing: its own
    has one element per thread along its fastest dimension (no vector write to lose),
    and `layout` still gives consecutive lanes consecutive runs along it, so the warp's
    writes stay coalesced: a transposed tile's layout would scatter them.

    A lane's run is what one instruction writes: the thread's first registers along the
    dimension, as the lowering groups them, but no more than `widths` (the store's
    pointers and mask) allow one vector write to cover. Registers past that become
    separate instructions, so the first lane bit must continue the written run, not the
    registers: an mma accumulator's register pair (columns 2t and 2t+1) stored through
    pointers of odd row stride is two scalar stores, each writing every other element of
    8 rows, and the conversion to the store's layout (a warp writing one row) is worth
    keeping. A thread writing whole rows (vectors as long as a row) is coalesced too.
    A store of fewer elements than the threads of the program (a row of sums) is not
    worth a conversion, shared memory and its barriers included, whatever its width.

    Where the function's dots load an operand through registers (`operands_in_registers`:
    addresses too misaligned for a 4-byte copy, so nothing streams and the kernel sits at
    the register limit), a 32-bit register run whose lanes fill whole 32-byte sectors
    keeps its layout: the conversion's registers cost more than its fewer write requests
    save (fp8 4099x4093x4091 with an fp32 output on an H200: 1.06x Triton without it,
    0.94x with it; fp8 2048x50257x4096, its operands streamed: 0.76x without, 0.89-1.01x
    with)."""
    enc = tilegpu.layout_of(store.operands[0].type)
    if not isinstance(enc, BlockedEncoding):
        return True
    if enc.size_per_thread[enc.order[0]] != 1:
        return False
    shape = shape_of(store.operands[0].type)
    fast = enc.order[0]
    if shape[fast] == 1:
        return True
    mine = to_linear(layout, shape)
    along = lambda step: tuple(step if d == fast else 0 for d in range(len(shape)))  # noqa: E731
    width = widths[fast] if math.prod(shape) >= 32 * layout.num_warps else shape[fast]
    registers = [tuple(v) for v in mine.bases(REGISTER)]
    lanes = [tuple(v) for v in mine.bases(LANE) if any(v)]  # a zero basis: a lane holding a copy
    if operands_in_registers and _fills_sectors(registers, lanes, along,
                                                memory_bits(pointee_type(element_type(store.operands[0].type)))):
        return True
    run = 1
    for basis in registers:
        if basis != along(run) or run == width:
            break
        run *= 2
    return run >= shape[fast] or (bool(lanes) and lanes[0] == along(run))


def _fills_sectors(registers: list, lanes: list, along, element_bits: int) -> bool:
    """Whether a warp's scalar writes of a register run, its lanes continuing the run,
    cover whole 32-byte sectors of a row: an mma accumulator's register pair of fp32 and
    4 lanes (8 columns, 32 bytes). 16-bit pairs cover half a sector."""
    run = 1
    for basis in registers:
        if basis != along(run):
            break
        run *= 2
    if run == 1 or not lanes or lanes[0] != along(run):
        return False
    for basis in lanes:
        if basis != along(run):
            break
        run *= 2
    return run * element_bits >= 32 * 8


class _StoreWidths:
    """How many elements one vector write of each store of a function can cover along
    each dimension: its pointers contiguous and aligned over them, its mask constant
    over them, and 16 bytes at most (the lowering's limits, before the layout's).

    Axis info is not free: it is computed for the whole function on the first question
    only. It stays true while the pass rewrites the function: the rewrites change
    layouts, not which addresses a store writes or under which mask, and they neither
    create nor erase stores, which are the keys (their operands are replaced). The keys
    are looked up by equality: an op's hash changes when its operands do."""

    def __init__(self, fn: ir.Operation):
        self.fn = fn
        self.widths: list[tuple[ir.Operation, tuple[int, ...]]] | None = None
        self.operands_in_registers = False

    def __call__(self, store: ir.Operation) -> tuple[int, ...]:
        if self.widths is None:
            analysis = AxisInfoAnalysis(self.fn)
            ops = list(walk_ops(self.fn))
            self.widths = [(op, _vector_widths(op, analysis)) for op in ops if op.name == "tile.store"]
            self.operands_in_registers = any(_loaded_below_a_word(operand, analysis) for op in ops
                                             if op.name == "tile.dot" for operand in list(op.operands)[:2])
        return next(widths for op, widths in self.widths if op == store)


# Ops between a dot operand and the load it comes from (layouts, staging, widening).
_OPERAND_PATH = ("tilegpu.convert_layout", "tilegpu.local_alloc", "tilegpu.local_load", "tile.trans",
                 "tile.fp_to_fp", "arith.extf", "arith.sitofp", "arith.extsi")


def _loaded_below_a_word(value: ir.Value, analysis: AxisInfoAnalysis) -> bool:
    """Whether dot operand `value` is a tile load whose pointers allow no vector of 4
    bytes along its layout's fastest dimension (cp.async's smallest copy: the load cannot
    stream and comes through registers)."""
    while isinstance(value, ir.OpResult):
        op = value.owner.operation if hasattr(value.owner, "operation") else value.owner
        if op.name == "tile.load":
            layout = tilegpu.layout_of(op.operands[0].type)
            if not isinstance(layout, BlockedEncoding):
                return False
            elem_bytes = max(1, memory_bits(pointee_type(element_type(op.operands[0].type))) // 8)
            info = analysis.get(op.operands[0])
            fast = layout.order[0]
            if info.rank != len(layout.order):
                return True
            return min(info.contiguity[fast], info.divisibility[fast] // elem_bytes) * elem_bytes < 4
        if op.name not in _OPERAND_PATH:
            return False
        value = op.operands[0]
    return False


def _vector_widths(store: ir.Operation, analysis: AxisInfoAnalysis) -> tuple[int, ...]:
    """Per dimension, the widest vector write `store`'s pointers and mask allow (a power
    of 2; 1 where nothing is known, as of a pointer tensor passed in as an argument)."""
    ptr, _, mask = store_operands(store)
    rank = len(shape_of(ptr.type))
    info = analysis.get(ptr)
    if info.rank != rank:
        return (1,) * rank
    elem_bytes = max(1, memory_bits(pointee_type(element_type(ptr.type))) // 8)
    widths = [min(info.contiguity[d], info.divisibility[d] // elem_bytes, 16 // elem_bytes) for d in range(rank)]
    if mask is not None and is_tensor(mask.type):
        constancy = analysis.get(mask).constancy
        widths = [min(w, constancy[d]) if len(constancy) == rank else 1 for d, w in enumerate(widths)]
    return tuple(1 << (max(1, w).bit_length() - 1) for w in widths)


def _retype_loop_carried(rewriter: _Rewriter, fn: ir.Operation, history: list) -> bool:
    """Rewrite 4 of the module docstring, for every scf.for in `fn`; True if any changed.

    `history` holds (loop, index, layouts it has had) across the pass's rounds: a value
    never goes back to a layout it had, so the rules cannot undo each other forever."""
    changed = False
    for loop in [op for op in walk_ops(fn) if op.name == "scf.for"]:
        body = loop.regions[0].blocks[0]
        terminator = list(body.operations)[-1].operation
        for i, (arg, result) in enumerate(zip(list(body.arguments)[1:], loop.results)):
            layout = _better_accumulator_layout(rewriter, arg, terminator.operands[i])
            if layout is None:
                continue
            if not _first_time(history, loop, i, tilegpu.layout_of(arg.type), layout):
                continue
            old_type = arg.type
            new_type = tilegpu.with_layout(old_type, layout)
            with ir.InsertionPoint(loop), loop.location:
                loop.operands[3 + i] = tilegpu.convert_layout(loop.operands[3 + i], layout)
            arg.set_type(new_type)
            result.set_type(new_type)
            with ir.InsertionPoint.at_block_begin(body), loop.location:
                inside = tilegpu.convert_layout(arg, tilegpu.layout_of(old_type))
            arg.replace_all_uses_except(inside, inside.owner.operation)
            with ir.InsertionPoint(terminator), loop.location:
                terminator.operands[i] = tilegpu.convert_layout(terminator.operands[i], layout)
            with ir.InsertionPoint.after(loop), loop.location:
                outside = tilegpu.convert_layout(result, tilegpu.layout_of(old_type))
            result.replace_all_uses_except(outside, outside.owner.operation)
            changed = True
    return changed


def _better_accumulator_layout(rewriter: _Rewriter, arg: ir.Value, yielded: ir.Value) -> Encoding | None:
    """The layout a loop-carried value should take, or None to leave it.

    - The loop yields a conversion out of a layout L (a tensor-core accumulator, yielded
      converted back from the mma layout): carried in L, the yield needs no conversion,
      and the conversion of the argument at the top of the body, when something still
      needs the old layout, is no worse than the one it replaces (and usually sinks).
    - The yielded value is computed by elementwise ops from `arg` and from operands that
      are conversions out of one other layout L, or recomputable in L (`l = l * alpha +
      sum(p)` with alpha and the sum in a reduction's layout): those ops then run in L
      once the value is carried in L, and the loop's conversions disappear.
    - Every use of `arg` but its elementwise update converts it to L (see
      `_converted_uses_layout`).
    """
    if not is_tensor(arg.type) or not isinstance(yielded, ir.OpResult):
        return None
    update = yielded.owner.operation
    current = tilegpu.layout_of(arg.type)
    if update.name == "scf.if" and update.block == arg.owner:
        layout = _layout_through_if(rewriter, arg, yielded)
        return layout if layout != current else None
    if update.name == "tilegpu.convert_layout":
        source = tilegpu.layout_of(update.operands[0].type)
        return source if source != current else None
    if not is_elementwise(update):
        return None
    if arg in list(update.operands):
        converted = _converted_uses_layout(rewriter, arg, update)
        if converted is not None and converted != current:
            return converted
    leaves = _elementwise_leaves(yielded, arg, update.block)
    if leaves is None or arg not in leaves:
        return None
    candidate = None
    for leaf in leaves:
        if isinstance(leaf, ir.OpResult) and leaf.owner.operation.name == "tilegpu.convert_layout":
            src_layout = tilegpu.layout_of(leaf.owner.operation.operands[0].type)
            if src_layout != current:
                candidate = src_layout
                break
    if candidate is None:
        return None
    for leaf in leaves:
        if leaf == arg or not is_tensor(leaf.type):
            continue
        converted = isinstance(leaf, ir.OpResult) and leaf.owner.operation.name == "tilegpu.convert_layout"
        if not converted and rewriter.rematerialize(leaf, candidate) is None:
            return None
    return candidate


def _layout_through_if(rewriter: _Rewriter, arg: ir.Value, yielded: ir.Value) -> Encoding | None:
    """L when the loop yields, for `arg`, a result of an `scf.if` of its body whose
    branches each yield `arg` itself or a value computable in L, and every other use of
    `arg` converts it to L: a flattened tile loop's offsets, replaced by the next tile's
    on a tile's last step and read in the loads' layout at every step. Carried in L, no
    step converts them (the if's result then takes L too, rewrite 6)."""
    if_op, index = yielded.owner.operation, yielded.result_number
    yields = [list(region.blocks[0].operations)[-1].operation for region in if_op.regions]
    layout = _common_conversion(arg, lambda user, operand: user in yields and operand == index)
    if layout is None:
        return None
    for terminator in yields:
        value = terminator.operands[index]
        if value != arg and tilegpu.layout_of(value.type) != layout and rewriter.rematerialize(value, layout) is None:
            return None
    return layout


def _first_time(history: list, op: ir.Operation, index: int, current: Encoding, layout: Encoding) -> bool:
    """Whether result `index` of `op` may move from `current` to `layout`: not if it had
    `layout` before (then the rules would undo each other forever). Records both."""
    had = next((seen for other, i, seen in history if i == index and other == op), None)
    if had is None:
        had = set()
        history.append((op, index, had))
    if layout in had:
        return False
    had.update((current, layout))
    return True


def _retype_if_results(rewriter: _Rewriter, fn: ir.Operation, history: list) -> bool:
    """Rewrite 6 of the module docstring, for every scf.if in `fn`; True if any changed.
    `history` as for loops: a result never goes back to a layout it had."""
    changed = False
    for if_op in [op for op in walk_ops(fn) if op.name == "scf.if" and len(op.results)]:
        yields = [list(region.blocks[0].operations)[-1].operation for region in if_op.regions]
        for i, result in enumerate(if_op.results):
            if not is_tensor(result.type):
                continue
            current = tilegpu.layout_of(result.type)
            layout = _common_yielded_layout(rewriter, [y.operands[i] for y in yields], current)
            if layout is None:
                continue
            if not _first_time(history, if_op, i, current, layout):
                continue
            for terminator in yields:
                value = terminator.operands[i]
                if isinstance(value, ir.OpResult) and value.owner.operation.name == "tilegpu.convert_layout" \
                        and tilegpu.layout_of(value.owner.operation.operands[0].type) == layout:
                    terminator.operands[i] = value.owner.operation.operands[0]
                else:
                    with ir.InsertionPoint(terminator), if_op.location:
                        terminator.operands[i] = rewriter.rematerialize(value, layout)
            old_type = result.type
            result.set_type(tilegpu.with_layout(old_type, layout))
            with ir.InsertionPoint.after(if_op), if_op.location:
                back = tilegpu.convert_layout(result, current)
            result.replace_all_uses_except(back, back.owner.operation)
            changed = True
    return changed


def _common_yielded_layout(rewriter: _Rewriter, values: list[ir.Value], current: Encoding) -> Encoding | None:
    """The layout L other than `current` that the branches' `values` can all be yielded
    in without a conversion (each converted out of L, in L already, or recomputable in
    L), at least one of them through a conversion that then disappears; else None."""
    candidate = None
    for value in values:
        if isinstance(value, ir.OpResult) and value.owner.operation.name == "tilegpu.convert_layout":
            candidate = tilegpu.layout_of(value.owner.operation.operands[0].type)
            break
    if candidate is None or candidate == current:
        return None
    for value in values:
        if isinstance(value, ir.OpResult) and value.owner.operation.name == "tilegpu.convert_layout" \
                and tilegpu.layout_of(value.owner.operation.operands[0].type) == candidate:
            continue
        if tilegpu.layout_of(value.type) != candidate and rewriter.rematerialize(value, candidate) is None:
            return None
    return candidate


def _elementwise_leaves(value: ir.Value, arg: ir.Value, body: ir.Block, depth: int = 0) -> list[ir.Value] | None:
    """The operands at the leaves of the tree of elementwise ops of `body` that computes
    `value`: the walk stops at `arg`, at conversions, at values from outside the body and
    at any other op. None when the tree is implausibly deep."""
    if depth > 16:
        return None
    if value == arg or not isinstance(value, ir.OpResult):
        return [value]
    op = value.owner.operation
    if op.block != body or op.name == "tilegpu.convert_layout" or not is_elementwise(op):
        return [value]
    leaves = []
    for operand in op.operands:
        below = _elementwise_leaves(operand, arg, body, depth + 1)
        if below is None:
            return None
        leaves += below
    return leaves


def _hoist_invariant_conversions(fn: ir.Operation) -> bool:
    """Rewrite 5: a conversion inside a loop of a value defined before the loop (a dot
    operand loaded once, attention's q) moves before the loop, so it is done once, not
    every iteration (it is pure; a loop that runs zero times pays it once for nothing).
    So does a shared buffer initialised with such a value (wgmma's staged q): it is
    never written again."""
    changed = False
    staged = [op for op in walk_ops(fn) if op.name == "tilegpu.local_alloc" and len(op.operands) == 1]
    for op in [op for op in walk_ops(fn) if op.name == "tilegpu.convert_layout"] + staged:
        loop = op.parent
        source = op.operands[0]
        if loop is None or loop.name != "scf.for" or op.block != loop.regions[0].blocks[0]:
            continue
        defined_in_loop = (isinstance(source, ir.BlockArgument) and source.owner == op.block) or (
            isinstance(source, ir.OpResult) and _inside(source.owner.operation if hasattr(source.owner, "operation")
                                                        else source.owner, loop))
        if not defined_in_loop:
            op.move_before(loop)
            changed = True
    return changed


# Users that only read a staged buffer (or free it).
_BUFFER_READERS = ("tile.dot", "tilegpu.local_load", "tilegpu.local_dealloc")


def _merge_repeated_staging(fn: ir.Operation) -> bool:
    """Rewrite 6: two shared buffers of one block initialised with the same value, neither
    written again (attention's q, staged before each of the causal kernel's two loops),
    are one: the later one's readers read the earlier, and the value need not stay in
    registers in between."""
    for block in _blocks(fn):
        staged = []
        for op in block_ops(block):
            if op.name != "tilegpu.local_alloc" or len(op.operands) != 1 or not _only_read(op):
                continue
            same = next((s for s in staged if s.operands[0] == op.operands[0]
                         and s.results[0].type == op.results[0].type and not _freed(s)), None)
            if same is None:
                staged.append(op)
                continue
            for use in list(op.results[0].uses):
                user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
                if user.name == "tilegpu.local_dealloc":
                    user.erase()
            op.results[0].replace_all_uses_with(same.results[0])
            op.erase()
            return True
    return False


def _freed(alloc: ir.Operation) -> bool:
    return any((use.owner.operation if hasattr(use.owner, "operation") else use.owner).name == "tilegpu.local_dealloc"
               for use in alloc.results[0].uses)


def _only_read(alloc: ir.Operation) -> bool:
    return all((use.owner.operation if hasattr(use.owner, "operation") else use.owner).name in _BUFFER_READERS
               for use in alloc.results[0].uses)


def _blocks(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            yield block
            for inner in block_ops(block):
                yield from _blocks(inner)


def _inside(op: ir.Operation, loop: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent == loop:
            return True
        parent = parent.parent
    return False


def _common_conversion(value: ir.Value, skipped) -> Encoding | None:
    """L when every use of `value` but those `skipped(user, operand number)` is a
    conversion to L; None when some other use reads it, or none converts it."""
    layout = None
    for use in value.uses:
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if skipped(user, use.operand_number):
            continue
        if user.name != "tilegpu.convert_layout":
            return None
        target = tilegpu.layout_of(user.results[0].type)
        if layout is not None and target != layout:
            return None
        layout = target
    return layout


def _converted_uses_layout(rewriter: _Rewriter, arg: ir.Value, update: ir.Operation) -> Encoding | None:
    """L when every use of `arg` but its elementwise `update` converts it to L, and the
    update's other operands can be computed in L (a loop-carried pointer advanced each
    iteration, `ptrs += BK * stride`, that the loop's load reads in its coalesced layout
    L): carried in L, neither the pointers nor their update need a conversion."""
    layout = _common_conversion(arg, lambda user, operand: user == update)
    if layout is None:
        return None
    for operand in update.operands:
        if operand != arg and is_tensor(operand.type) and rewriter.rematerialize(operand, layout) is None:
            return None
    return layout


def _bypass_for_any_layout_users(op: ir.Operation) -> bool:
    """Users that read their operand in any layout take the unconverted value."""
    source, result = op.operands[0], op.results[0]
    changed = False
    for use in list(result.uses):
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if reads_any_layout(user, use.operand_number):
            user.operands[use.operand_number] = source
            changed = True
    return changed


@register_pass("tilegpu-remove-layout-conversions", "Remove unnecessary layout conversions")
def remove_layout_conversions(module_op: ir.Operation) -> None:
    for fn in functions(module_op):
        history: list = []
        store_widths = _StoreWidths(fn)
        # Dead ops are erased once at the start and then only after a step that changed
        # the IR (a walk of the whole function each time: most of this pass's time when
        # it ran after every step of every iteration).
        erase_dead_ops(fn)
        for _ in range(MAX_ITERATIONS):
            rewriter = _Rewriter(store_widths)
            changed = False
            for op in [op for op in walk_ops(fn) if op.name == "tilegpu.convert_layout"]:
                if _bypass_for_any_layout_users(op) or rewriter.fold(op) or rewriter.try_rematerialize(op):
                    changed = True
            if changed:
                erase_dead_ops(fn)
            # Dead-code removal may have erased rematerialised clones: start a new memo.
            rewriter = _Rewriter(store_widths)
            sunk = False
            for op in [op for op in walk_ops(fn) if op.name == "tilegpu.convert_layout"]:
                # Sinking erases only the conversion it moves (the rest of the list stays
                # valid); one it leaves unused is skipped here and erased below.
                if rewriter.try_sink(op):
                    sunk = True
            if sunk:
                changed = True
                erase_dead_ops(fn)
            if not changed:
                rewriter = _Rewriter(store_widths)
                changed = _retype_loop_carried(rewriter, fn, history)
                if not changed:
                    changed = _retype_if_results(rewriter, fn, history)
                if changed:
                    erase_dead_ops(fn)
            if not changed:
                changed = _hoist_invariant_conversions(fn)
            if not changed:
                changed = _merge_repeated_staging(fn)
            if not changed:
                break
