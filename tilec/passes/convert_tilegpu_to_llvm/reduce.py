"""Lowering of tile.reduce: within a thread, then across lanes, then across warps.

With the operand's linear layout L and the reduced axis a:

1. registers whose coordinates differ only along a are combined in register order;
2. every lane bit whose basis moves along a is a butterfly step: `shfl.sync.bfly`
   with that bit as the lane mask, then combine (after all steps every lane holds the
   result of its group); a 32-bit integer add, min, max, and, or or xor over the whole
   warp is one `redux.sync` instead (`_redux_kind`, sm_80 on);
3. if warp bits move along a (`cross_warp_bits`), each warp writes its partial result
   to its scratch space in shared memory, and after a barrier the partials are combined:
   when the lanes of a warp hold the same output elements (no lane basis moves along
   another axis: a row reduced to a scalar), lane l loads partial l mod n and butterfly
   shuffles over the low lane bits combine the n partials. Otherwise, where it costs
   less (`spreads_partials`: threads holding copies of the same output elements, as a
   column reduction's lanes along the axis do, a costly combine such as argmax's, many
   partials), the combining is spread over all threads: thread t loads slot t of the
   partials (those of one element sit in n consecutive lanes), butterfly shuffles combine
   them, one lane per element stores the result in a compact array, and after a second
   barrier every thread loads its elements. Else every thread combines the n partials of
   each of its elements in warp order: the n partials of an element side by side (one
   vector load), elements in lane-major order (`lane_major_slots`: consecutive lanes
   hold consecutive elements), so that a warp's accesses span no more bytes than its
   lanes move. The scratch size (`reduce_scratch_bytes`) comes from the same facts; the
   barrier before the writes, if an earlier access needs one, is tilegpu-insert-barriers'.

The combiner region is lowered inline for each combine step, so user-defined
combiners (and tuples of operands, such as argmax's value and index) work the same way.
The result holds, per thread, the elements of the sliced layout, in its register order.
"""
from __future__ import annotations

import math
from typing import Sequence

from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import block_ops, create_op, is_tensor
from ...dialects.tile import shape_of
from ...layout.encodings import LANE, REGISTER, WARP, SliceEncoding
from ...layout.exchange import MAX_ACCESS_BYTES
from ...layout.linear_layout import LinearLayout
from .context import LoweringContext, LoweringError, layout_of_value, lower_op, lowers
from .debug import scf_if
from .shared_memory import element_bytes, from_shared, row_slot_arrays, scratch_bytes, store_type, to_shared


def cross_warp_bits(ll: LinearLayout, axis: int) -> list[int]:
    """The warp bits of the operand layout `ll` that move along `axis`: the partial
    results they separate are combined through shared memory (none: no shared memory)."""
    return [bit for bit, basis in enumerate(ll.bases(WARP)) if basis[axis] != 0]


def lanes_share_outputs(ll: LinearLayout, axis: int) -> bool:
    """No lane basis moves off `axis`: after the lane steps, all lanes of a warp hold the
    same output elements (a row reduced to a scalar)."""
    return not any(c for basis in ll.bases(LANE) for d, c in enumerate(basis) if d != axis)


# What the second barrier, the store of the results and its branch cost, in combine-sized
# instructions, when deciding how to combine the partials across warps.
SPREAD_FIXED_COST = 8


def spreads_partials(op: ir.Operation, ll: LinearLayout, num_warps: int) -> bool:
    """Whether the partials across warps of the tile.reduce `op` (operand layout `ll`) are
    combined spread over all threads (two rounds through shared memory) rather than by
    every thread for each of its elements.

    With n partials and K elements a thread, C instructions a combine and `ops` operands:
    directly, a thread combines K * (n - 1) times; spread, it combines and shuffles
    log2(n) times per round (the n partials of all elements over the block's threads),
    plus a fixed cost (SPREAD_FIXED_COST). Spreading pays when threads hold copies of the
    same elements (a column reduction's lanes along the axis all end with every column's
    result: K is then several times the rounds), or for costly combines (argmax) or many
    partials; a cheap combine of a few partials per element stays direct."""
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    warp_bits = cross_warp_bits(ll, axis)
    if not warp_bits or lanes_share_outputs(ll, axis) or len(warp_bits) > 5:
        return False
    shape = list(ll.out_dim_sizes.values())
    slots = math.prod(shape[:axis] + shape[axis + 1:]) << len(warp_bits)
    if slots & (slots - 1):
        return False
    rounds = max(1, slots // (32 * num_warps))
    elements = len({coord[:axis] + coord[axis + 1:] for coord in ll.images(REGISTER)})
    combine = len(list(block_ops(op.regions[0].blocks[0]))) - 1  # without its gpu.yield
    direct = elements * ((1 << len(warp_bits)) - 1) * combine
    spread = rounds * len(warp_bits) * (combine + len(list(op.operands))) + SPREAD_FIXED_COST
    return spread <= direct


def _scratch_arrays(shape: Sequence[int], axis: int, n_partials: int, sizes: Sequence[int],
                    spread: bool) -> tuple[list[int], list[int], int]:
    """(offsets of the partial arrays, offsets of the arrays of combined results (spread
    combining only), total bytes)."""
    partials, end = row_slot_arrays(shape, axis, n_partials, sizes)
    if not spread:
        return partials, [], end
    results, size = row_slot_arrays(shape, axis, 1, sizes)
    return partials, [end + offset for offset in results], end + size


@scratch_bytes("tile.reduce")
def reduce_scratch_bytes(op: ir.Operation, num_warps: int) -> int:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    srcs = list(op.operands)
    ll = layout_of_value(srcs[0])
    warp_bits = cross_warp_bits(ll, axis)
    if not warp_bits:
        return 0
    return _scratch_arrays(shape_of(srcs[0].type), axis, 1 << len(warp_bits), [element_bytes(s.type) for s in srcs],
                           spreads_partials(op, ll, num_warps))[2]


def _combine(ctx: LoweringContext, region: ir.Region, lhs: Sequence[ir.Value], rhs: Sequence[ir.Value]) -> list[ir.Value]:
    """Emits the combiner region for one pair of (tuples of) values."""
    block = region.blocks[0]
    for arg, value in zip(block.arguments, list(lhs) + list(rhs)):
        ctx.set(arg, value)
    results = None
    for op in block_ops(block):
        if op.name == "gpu.yield":
            results = [ctx.lowered(v) for v in op.operands]
            break
        lower_op(ctx, op)
    if results is None:
        raise LoweringError("reduction combiner has no gpu.yield")
    return results


def _shuffle_xor(ctx: LoweringContext, value: ir.Value, lane_mask: int) -> ir.Value:
    """value from lane (lane ^ lane_mask), for any scalar type up to 64 bits."""
    return shuffle(ctx, value, ctx.const(lane_mask), "bfly")


def shuffle(ctx: LoweringContext, value: ir.Value, operand: ir.Value, kind: str) -> ir.Value:
    """shfl.sync of any scalar up to 64 bits: kind "bfly" (from lane ^ operand) or "idx"
    (from lane `operand`)."""
    ty = value.type
    width = getattr(ty, "width", 64)
    full = ctx.const(-1)
    clamp = ctx.const(0x1F)
    offset = operand

    def shfl32(v: ir.Value) -> ir.Value:
        return create_op("nvvm.shfl.sync", [v.type], [full, v, offset, clamp],
                         attributes={"kind": ir.Attribute.parse(f"#nvvm<shfl_kind {kind}>")}).result

    if ty == ctx.f32 or ty == ctx.i32:
        return shfl32(value)
    if ty == ctx.ptr_global:
        as_int = create_op("llvm.ptrtoint", [ctx.i64], [value]).result
        return create_op("llvm.inttoptr", [ctx.ptr_global], [shuffle(ctx, as_int, operand, kind)]).result
    if width == 64:
        as_int = value if isinstance(ty, ir.IntegerType) else create_op("llvm.bitcast", [ctx.i64], [value]).result
        lo = ctx.arith("trunci", as_int, result_type=ctx.i32)
        hi = ctx.arith("trunci", ctx.arith("shrui", as_int, ctx.const(32, ctx.i64)), result_type=ctx.i32)
        lo, hi = shfl32(lo), shfl32(hi)
        joined = ctx.arith("ori", ctx.arith("extui", lo, result_type=ctx.i64),
                           ctx.arith("shli", ctx.arith("extui", hi, result_type=ctx.i64), ctx.const(32, ctx.i64)))
        return joined if isinstance(ty, ir.IntegerType) else create_op("llvm.bitcast", [ty], [joined]).result
    # narrower than 32 bits: widen the bits, shuffle, narrow
    int_ty = ir.IntegerType.get_signless(width)
    as_int = value if isinstance(ty, ir.IntegerType) else create_op("llvm.bitcast", [int_ty], [value]).result
    wide = shfl32(ctx.arith("extui", as_int, result_type=ctx.i32))
    narrow = ctx.arith("trunci", wide, result_type=int_ty)
    return narrow if isinstance(ty, ir.IntegerType) else create_op("llvm.bitcast", [ty], [narrow]).result


@lowers("tile.reduce")
def lower_reduce(ctx: LoweringContext, op: ir.Operation) -> None:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    srcs = list(op.operands)
    region = op.regions[0]
    ll = ctx.layout(srcs[0])
    inputs = [ctx.elements(s) for s in srcs]

    def project(coord: tuple[int, ...]) -> tuple[int, ...]:
        return coord[:axis] + coord[axis + 1:]

    # 1. within the thread
    groups: dict[tuple[int, ...], list[ir.Value]] = {}
    for r, coord in enumerate(ctx.register_coordinates(ll)):
        key = project(coord)
        values = [inp[r] for inp in inputs]
        groups[key] = values if key not in groups else _combine(ctx, region, groups[key], values)

    # 2. across lanes: one redux.sync where a warp-wide integer reduction allows it,
    # else a butterfly shuffle per lane bit
    kind = _redux_kind(ctx, region, ll, axis)
    if kind is not None:
        for key, values in groups.items():
            groups[key] = [_redux(ctx, kind, values[0])]
    for bit, basis in enumerate([] if kind is not None else ll.bases(LANE)):
        if basis[axis] == 0:
            continue
        if any(c for d, c in enumerate(basis) if d != axis):
            raise LoweringError("reduction over a layout whose lanes mix the reduced axis with others")
        for key, values in groups.items():
            others = [_shuffle_xor(ctx, v, 1 << bit) for v in values]
            groups[key] = _combine(ctx, region, values, others)

    # 3. across warps, through shared memory
    warp_bits = cross_warp_bits(ll, axis)
    if warp_bits:
        for bit in warp_bits:
            if any(c for d, c in enumerate(ll.bases(WARP)[bit]) if d != axis):
                raise LoweringError("reduction over a layout whose warps mix the reduced axis with others")
        sizes = [element_bytes(s.type) for s in srcs]
        groups = _reduce_across_warps(ctx, op, ll, axis, warp_bits, groups, sizes)

    # Order the results as the sliced layout's registers.
    results = list(op.results)
    if not is_tensor(results[0].type):
        values = next(iter(groups.values()))
        for result, value in zip(results, values):
            ctx.set(result, value)
        return
    out_ll = SliceEncoding(axis, tilegpu.layout_of(srcs[0].type)).to_linear(shape_of(results[0].type))
    ordered = []
    for coord in ctx.register_coordinates(out_ll):
        if coord not in groups:
            raise LoweringError(f"reduction result element {coord} is not held by the thread")
        ordered.append(groups[coord])
    for i, result in enumerate(results):
        ctx.set(result, [values[i] for values in ordered])


# Combiners `redux.sync` computes across a warp (sm_80 on), by their arith op; the
# idempotent ones tolerate lanes holding copies of the same elements.
_REDUX_KINDS = {"arith.addi": "add", "arith.minsi": "min", "arith.maxsi": "max", "arith.minui": "umin",
                "arith.maxui": "umax", "arith.andi": "and", "arith.ori": "or", "arith.xori": "xor"}
_IDEMPOTENT = {"min", "max", "umin", "umax", "and", "or"}


def _redux(ctx: LoweringContext, kind: str, value: ir.Value) -> ir.Value:
    """`kind` of `value` over the whole warp, in every lane."""
    return create_op("nvvm.redux.sync", [ctx.i32], [value, ctx.const(-1)],
                     attributes={"kind": ir.Attribute.parse(f"#nvvm<redux_kind {kind}>")}).result


def _redux_combiner(ctx: LoweringContext, region: ir.Region) -> str | None:
    """The redux.sync kind of an i32 combiner that is one arith op of its two arguments
    (on sm_80 and later); None otherwise."""
    if not ctx.target.at_least(80):
        return None
    block = region.blocks[0]
    ops = block_ops(block)
    arguments = list(block.arguments)
    if len(ops) != 2 or len(arguments) != 2 or arguments[0].type != ctx.i32 or ops[1].name != "gpu.yield":
        return None
    op = ops[0]
    kind = _REDUX_KINDS.get(op.name)
    if (kind is None or len(op.operands) != 2 or set(op.operands) != set(arguments)
            or list(ops[1].operands) != [op.results[0]]):
        return None
    return kind


def _redux_kind(ctx: LoweringContext, region: ir.Region, ll: LinearLayout, axis: int) -> str | None:
    """The redux.sync kind that reduces across the lanes of the layout `ll` in one
    step: its combiner's (`_redux_combiner`), when every lane moves along the axis (an
    idempotent combiner also lets lanes hold copies); None otherwise."""
    kind = _redux_combiner(ctx, region)
    if kind is None or LANE not in ll.in_dims:
        return None
    for basis in ll.bases(LANE):
        if any(c for d, c in enumerate(basis) if d != axis):
            return None  # lanes holding other output elements (step 2 refuses such layouts)
        if basis[axis] == 0 and kind not in _IDEMPOTENT:
            return None
    return kind


def _reduce_across_warps(ctx: LoweringContext, op: ir.Operation, ll, axis: int, warp_bits: list[int],
                         groups: dict, sizes: list[int]) -> dict:
    """Each warp writes its partials; after a barrier they are combined (see the module
    docstring for the three ways). `sizes`: the bytes of one element of each operand."""
    region = op.regions[0]
    shape = list(ll.out_dim_sizes.values())
    out_shape = shape[:axis] + shape[axis + 1:]
    n_partials = 1 << len(warp_bits)
    types = [v.type for v in next(iter(groups.values()))]
    spread = spreads_partials(op, ll, ctx.num_warps)
    offsets, result_offsets, total = _scratch_arrays(shape, axis, n_partials, sizes, spread)
    ctx.reserve_shared(total)

    thread = ctx.thread_coordinates(ll)
    # This warp's index among the warps that split the axis.
    partial_index = None
    for k, bit in enumerate(warp_bits):
        term = ctx.arith("andi", ctx.arith("shrui", ctx.warp, ctx.const(bit)), ctx.const(1))
        if k:
            term = ctx.arith("shli", term, ctx.const(k))
        partial_index = term if partial_index is None else ctx.arith("ori", partial_index, term)

    strides = [math.prod(out_shape[d + 1:]) for d in range(len(out_shape))]
    out_dims = [d for d in range(len(shape)) if d != axis]

    def element_index(key: tuple[int, ...]) -> ir.Value:
        """Linear index of the output element `key` (register part) held by this thread."""
        index = ctx.const(0)
        for k, d in enumerate(out_dims):
            part, disjoint = thread[d]
            coord = ctx.const(key[k]) if part is None else (
                part if key[k] == 0 else ctx.arith("addi" if disjoint else "xori", part, ctx.const(key[k])))
            if strides[k] != 1:
                coord = ctx.arith("muli", coord, ctx.const(strides[k]))
            index = ctx.arith("addi", index, coord)
        return index

    def address(array_offset: int, size: int, slot: ir.Value) -> ir.Value:
        byte = ctx.arith("addi", ctx.const(array_offset), ctx.arith("muli", slot, ctx.const(size)))
        return ctx.shared_address(byte)

    def load(array_offsets: list[int], slot: ir.Value) -> list[ir.Value]:
        return [from_shared(ctx, create_op("llvm.load", [store_type(ctx, t)],
                                           [address(array_offsets[i], sizes[i], slot)]).result, t)
                for i, t in enumerate(types)]

    def store(array_offsets: list[int], slot: ir.Value, values: list[ir.Value]) -> None:
        for i, value in enumerate(values):
            create_op("llvm.store", [], [to_shared(ctx, value), address(array_offsets[i], sizes[i], slot)])

    if not spread and not lanes_share_outputs(ll, axis):
        return _combine_directly(ctx, region, ll, axis, groups, offsets, sizes, partial_index, n_partials)
    bases = {}
    for key, values in groups.items():
        base = ctx.arith("muli", element_index(key), ctx.const(n_partials))
        bases[key] = base
        store(offsets, ctx.arith("addi", base, partial_index), values)
    ctx.barrier()
    result = {}
    if lanes_share_outputs(ll, axis):
        # The lanes of a warp hold the same output elements: lane l loads partial
        # l mod n_partials and butterfly steps over the low lane bits combine them. One
        # load per lane instead of n_partials, all live at once, which cost registers
        # (and so occupancy) in big-block row kernels.
        lane_slot = ctx.arith("andi", ctx.lane, ctx.const(n_partials - 1))
        # Lanes l and l + n_partials hold the same partial: one redux.sync combines them
        # where copies do not change the result.
        kind = _redux_combiner(ctx, region)
        if kind not in _IDEMPOTENT and n_partials != 32:
            kind = None
        for key in groups:
            acc = load(offsets, ctx.arith("addi", bases[key], lane_slot))
            if kind is not None:
                result[key] = [_redux(ctx, kind, acc[0])]
                continue
            for bit in range(len(warp_bits)):
                acc = _combine(ctx, region, acc, [_shuffle_xor(ctx, v, 1 << bit) for v in acc])
            result[key] = acc
        return result
    # Spread (the direct combine returned above): thread t combines slot t (t + k *
    # threads in round k) with the other partials of its element, which sit in the
    # neighbouring lanes; the lane holding partial 0 stores the element's result. With
    # fewer slots than threads, threads t and t + slots repeat the work and only the
    # first stores.
    slots = math.prod(out_shape) * n_partials
    threads = 32 * ctx.num_warps
    writer_mask = (n_partials - 1) | (threads - 1) & ~(slots - 1)
    is_writer = ctx.equals(ctx.arith("andi", ctx.tid, ctx.const(writer_mask)), 0)
    for k in range(max(1, slots // threads)):
        slot = (ctx.arith("andi", ctx.tid, ctx.const(slots - 1)) if slots < threads else
                ctx.tid if k == 0 else ctx.arith("addi", ctx.tid, ctx.const(k * threads)))
        acc = load(offsets, slot)
        for bit in range(len(warp_bits)):
            acc = _combine(ctx, region, acc, [_shuffle_xor(ctx, v, 1 << bit) for v in acc])
        with scf_if(ctx, is_writer):
            store(result_offsets, ctx.arith("shrui", slot, ctx.const(len(warp_bits))), acc)
    ctx.barrier()
    for key in groups:
        result[key] = load(result_offsets, element_index(key))
    return result


def _off_axis(coord: Sequence[int], axis: int) -> tuple[int, ...]:
    return tuple(coord[:axis]) + tuple(coord[axis + 1:])


def lane_major_slots(ll: LinearLayout, axis: int) -> LinearLayout:
    """Where the direct combine keeps each output element of a reduction of `ll` along
    `axis`: a bijection from the output coordinates to one in-dim, "slot", whose low bits
    are the lane bases that tell output elements apart, then the warp bases', then the
    registers'. A warp's lanes then touch consecutive slots. (Row-major output order put
    lanes as far apart as the elements each holds: in a bitonic sort's stage across
    warps, with 8 consecutive i64 keys a thread and 2 partials, 128 bytes, every lane of
    a warp in the same bank, 32 passes an access.)"""
    out_dims = {name: size for d, (name, size) in enumerate(ll.out_dim_sizes.items()) if d != axis}
    order = [name for name in (LANE, WARP, REGISTER) if name in ll.in_dims]
    projected = LinearLayout({name: [_off_axis(v, axis) for v in ll.bases(name)] for name in order}, out_dims)
    free = projected.free_variable_masks()  # bases that repeat earlier ones (or are zero)
    chosen = [v for name in order for i, v in enumerate(projected.bases(name)) if not free[name] >> i & 1]
    return LinearLayout({"slot": chosen}, out_dims).invert()


def _combine_directly(ctx: LoweringContext, region: ir.Region, ll: LinearLayout, axis: int, groups: dict,
                      offsets: list[int], sizes: list[int], partial_index: ir.Value, n_partials: int) -> dict:
    """Every thread combines the n partials of each of its elements: partial p of the
    element in slot s (`lane_major_slots`) at s * n + p of each operand's array, so that
    one vector load (up to 16 bytes) brings an element's partials. The address of a
    register key's partials is this thread's pointer (computed once) plus a constant,
    as convert_layout's are: the thread's slot XOR the key's slot, whose bits a thread's
    slot never sets are an immediate offset."""
    slots = lane_major_slots(ll, axis)
    names = list(slots.in_dims)

    def slot_of(coord: Sequence[int]) -> int:
        return slots.apply(dict(zip(names, _off_axis(coord, axis))))[0]

    terms, thread_bits = [], 0  # thread_bits: every slot bit some thread's part may set
    for name, source in ((LANE, ctx.lane), (WARP, ctx.warp)):
        components = [slot_of(v) for v in ll.bases(name)]
        terms.extend(ctx.bit_terms(source, components))
        for c in components:
            thread_bits |= c
    thread = ctx.combine_terms(terms, disjoint=False)
    keys = {_off_axis(coord, axis): slot_of(coord) for coord in ctx.register_coordinates(ll)}
    types = [v.type for v in next(iter(groups.values()))]
    pointers: dict[tuple[int, int, bool], ir.Value] = {}

    def pointer(i: int, key: tuple[int, ...], partial: bool) -> ir.Value:
        """Array i's address of the key's partials (of this warp's partial, if `partial`)."""
        slot = keys[key]
        low, high = slot & thread_bits, slot & ~thread_bits
        base = pointers.get((i, low, partial))
        if base is None:
            if thread is None:  # (then thread_bits, and so low, are 0)
                variable = ctx.const(0)
            else:
                variable = ctx.arith("xori", thread, ctx.const(low)) if low else thread
            element = ctx.arith("muli", variable, ctx.const(n_partials))
            if partial:
                element = ctx.arith("addi", element, partial_index)
            byte = ctx.arith("addi", ctx.arith("muli", element, ctx.const(sizes[i])), ctx.const(offsets[i]))
            base = pointers[(i, low, partial)] = ctx.shared_address(byte)
        return ctx.shared_pointer(ctx.const(high * n_partials * sizes[i]), base) if high else base

    for key, values in groups.items():
        for i, value in enumerate(values):
            create_op("llvm.store", [], [to_shared(ctx, value), pointer(i, key, True)])
    ctx.barrier()
    result = {}
    for key in groups:
        partials = [[] for _ in range(n_partials)]
        for i, ty in enumerate(types):
            kept = store_type(ctx, ty)
            vector = n_partials * sizes[i] <= MAX_ACCESS_BYTES
            if vector:
                vector_type = ir.VectorType.get([n_partials], kept)
                packed = create_op("llvm.load", [vector_type], [pointer(i, key, False)],
                                   attributes={"alignment": ir.IntegerAttr.get(ctx.i64, n_partials * sizes[i])}).result
            for p in range(n_partials):
                if vector:
                    value = create_op("llvm.extractelement", [kept], [packed, ctx.const(p)]).result
                else:
                    address = ctx.shared_pointer(ctx.const(p * sizes[i]), pointer(i, key, False))
                    value = create_op("llvm.load", [kept], [address]).result
                partials[p].append(from_shared(ctx, value, ty))
        acc = partials[0]
        for loaded in partials[1:]:
            acc = _combine(ctx, region, acc, loaded)
        result[key] = acc
    return result
