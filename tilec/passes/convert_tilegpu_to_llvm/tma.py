"""Lowering of TMA block copies: `tile.descriptor_load` and `tile.descriptor_store`
(a host tensor descriptor's 2-D load or store on sm_90; see language/block_pointer.py).

The block goes through the op's scratch space (1024-byte aligned) in the NVMMA layout
`layout.shared.tma_box` gives, the one the runtime encoded the tensor map's box and
swizzle for (runtime/tma.py). One thread issues the copies, one per box (the block's
last dimension cut into swizzle rows): the lane of warp 0 that `elect.sync` picks
(`_first_thread`; "thread 0" below). Out-of-bounds elements are the tensor map's fill
on a load (zero, or NaN for padding="nan") and are not written by a store.

Load: thread 0 initialises an mbarrier (the 8 bytes after the block) for one arrival,
the CTA synchronises, thread 0 arrives announcing the block's bytes
(`mbarrier.arrive.expect_tx`) and issues `cp.async.bulk.tensor` copies that complete
them; every thread waits for phase 0 (`mbarrier.try_wait.parity`), then reads the
elements its layout holds; after a barrier thread 0 invalidates the mbarrier.

Store: every thread writes its elements into the block, then makes its writes visible
to the asynchronous proxy (`fence.proxy.async.shared::cta`); after a barrier thread 0
issues the copies to global memory, commits them as a bulk group and waits for the
group to complete (its global writes are then done, so the program reads them back
like any store's), or, for a store marked `tile.wait_for_read` (no access that may
follow could tell), only until the block has been read out of the scratch; a final
barrier lets the scratch be reused. A store tilegpu-allocate-shared-memory marked
DEFERRED_ATTR (its buffer is its own over its loop) does not wait: its next execution
first waits for the previous read-out (`cp.async.bulk.wait_group.read 0`, then a barrier)
before writing the block, and `tilegpu.bulk_store_wait` after the loop waits for the last.
"""
from __future__ import annotations

import math

from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import block_ops, create_op, int_attr_value, operand_groups
from ...dialects.tile import shape_of
from ...layout.shared import tma_box
from .context import LoweringContext, LoweringError, lowers
from .local_memory import View, read_view, write_view
from .shared_memory import DEFERRED_ATTR, OFFSET_ATTR, element_bytes, scratch_bytes

_BARRIER_BYTES = 8


def _block(value: ir.Value) -> tuple[list[int], int]:
    shape = list(shape_of(value.type))
    if len(shape) != 2:
        raise LoweringError(f"TMA copies 2-D blocks, not {shape}")
    return shape, element_bytes(value.type)


@scratch_bytes("tile.descriptor_load", "tile.descriptor_store")
def _scratch(op: ir.Operation, num_warps: int) -> int:
    value = op.results[0] if op.name == "tile.descriptor_load" else op.operands[1]
    shape, size = _block(value)
    return math.prod(shape) * size + (_BARRIER_BYTES if op.name == "tile.descriptor_load" else 0)


def _view(value: ir.Value, shape: list[int], size: int) -> tuple[View, list[int]]:
    encoding, box = tma_box(shape, 8 * size)
    ty = tilegpu.tensor_type(value.type)
    buffer = ir.RankedTensorType.get(shape, ty.element_type, tilegpu.encoding_attr(encoding))
    return View(buffer, (0, 0)), box


def _boxes(ctx: LoweringContext, offsets: list[ir.Value], shape: list[int], box: list[int], size: int):
    """(shared byte offset in the block, inner coordinate, outer coordinate) of each copy."""
    box_bytes = math.prod(box) * size
    for j in range(shape[1] // box[1]):
        inner = ctx.arith("addi", offsets[1], ctx.const(j * box[1])) if j else offsets[1]
        yield j * box_bytes, inner, offsets[0]


def _tensormap_address(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    return create_op("llvm.ptrtoint", [ctx.i64], [ctx.lowered(value)]).result


def _first_thread(ctx: LoweringContext) -> ir.Value:
    """1 (i32) in one thread of the block, the lane of warp 0 that `elect.sync` picks; 0 in
    the others. Only for code every thread of the block runs (`elect.sync` asks for the
    whole warp), as every TMA operation lowered here is.

    Not `tid == 0`: TMA instructions take their operands in uniform registers, and under a
    predicate ptxas cannot prove holds in one lane only, it wraps each in a loop over the
    lanes that hold it. An elected lane it knows is one."""
    elected = create_op("nvvm.elect.sync", [ctx.i1]).result
    if ctx.single_warp:  # a warp_specialize region: one (producer) warp runs it
        return ctx.arith("extui", elected, result_type=ctx.i32)
    in_warp_0 = ctx.arith("cmpi", ctx.tid, ctx.const(32), result_type=ctx.i1,
                          attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult
    return ctx.arith("extui", ctx.arith("andi", in_warp_0, elected), result_type=ctx.i32)


def _issue(ctx: LoweringContext, predicate: ir.Value, barrier: ir.Value, tensormap: ir.Value,
           offsets: list[ir.Value], data_address: ir.Value, shape: list[int], size: int, box: list[int]) -> None:
    """Where `predicate` (i32) is non-zero: announce the block's bytes on `barrier` and
    issue one TMA copy per box into the block at shared address `data_address`."""
    nbytes = math.prod(shape) * size
    copies = [f"@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], {nbytes};"]
    operands = [predicate, barrier, _tensormap_address(ctx, tensormap)]
    for place, inner, outer in _boxes(ctx, offsets, shape, box, size):
        n = len(operands)
        copies.append(f"@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                      f"[${n}], [$2, {{${n + 1}, ${n + 2}}}], [$1];")
        operands += [ctx.arith("addi", data_address, ctx.const(place)) if place else data_address, inner, outer]
    ctx.inline_asm("{ .reg .pred p; setp.ne.b32 p, $0, 0; " + " ".join(copies) + " }",
                   ",".join(["r", "r", "l"] + ["r"] * (len(operands) - 3)), operands, [])


def _wait(ctx: LoweringContext, barrier: ir.Value, phase: ir.Value) -> None:
    ctx.inline_asm("{ .reg .pred ready; tma_wait: mbarrier.try_wait.parity.shared::cta.b64 ready, [$0], $1; "
                   "@!ready bra tma_wait; }", "r,r", [barrier, phase], [])


def _by_first_thread(ctx: LoweringContext, instruction: str, barrier: ir.Value) -> None:
    """`instruction` on the mbarrier at shared address `barrier` ($1), by thread 0."""
    ctx.inline_asm("{ .reg .pred p; setp.ne.b32 p, $0, 0; @p " + instruction + " }", "r,r",
                   [_first_thread(ctx), barrier], [])


def _initialise(ctx: LoweringContext, barriers: list[ir.Value], publish: bool = True, arrivals: int = 1) -> None:
    """Thread 0 initialises the mbarriers for `arrivals` arrivals each; then (`publish`)
    every thread may use them."""
    for barrier in barriers:
        _by_first_thread(ctx, f"mbarrier.init.shared::cta.b64 [$1], {arrivals};", barrier)
    if publish:
        ctx.inline_asm("fence.mbarrier_init.release.cluster;", "", [], [])
        ctx.barrier()


def _invalidate(ctx: LoweringContext, barriers: list[ir.Value], wait: bool = True) -> None:
    """Once no thread waits on them any more (`wait`: a barrier), thread 0 invalidates the
    mbarriers."""
    if wait:
        ctx.barrier()
    for barrier in barriers:
        _by_first_thread(ctx, "mbarrier.inval.shared::cta.b64 [$1];", barrier)


def _neighbour(op: ir.Operation, step: int) -> str | None:
    """The name of the op `step` places after `op` in its block (None past either end),
    skipping the deallocations between a pipelined loop's rings."""
    ops = block_ops(op.block)
    at = ops.index(op) + step
    while 0 <= at < len(ops) and ops[at].name == "tilegpu.local_dealloc":
        at += step
    return ops[at].name if 0 <= at < len(ops) else None


def _barrier_array(ctx: LoweringContext, barriers: ir.Value) -> list[ir.Value]:
    """The shared addresses of the mbarriers of a memdesc of i64s."""
    base = ctx.shared_address32(ctx.lowered(barriers))
    count = math.prod(tilegpu.memdesc_tensor(barriers.type).shape)
    return [ctx.arith("addi", base, ctx.const(j * _BARRIER_BYTES)) if j else base for j in range(count)]


@lowers("tilegpu.init_barriers")
def lower_init_barriers(ctx: LoweringContext, op: ir.Operation) -> None:
    """A pipelined loop's rings initialise their barriers one after another: the fence
    and barrier that publish them come once, after the last."""
    _initialise(ctx, _barrier_array(ctx, op.operands[0]), publish=_next_init(op) != "tilegpu.init_barriers",
                arrivals=int_attr_value(op, tilegpu.ARRIVE_COUNT_ATTR, 1))


@lowers("tilegpu.inval_barriers")
def lower_inval_barriers(ctx: LoweringContext, op: ir.Operation) -> None:
    """Likewise, one barrier before a run of invalidations."""
    _invalidate(ctx, _barrier_array(ctx, op.operands[0]), wait=_neighbour(op, -1) != "tilegpu.inval_barriers")


def _next_init(op: ir.Operation) -> str | None:
    """The next op after `op` that is not another ring's allocation."""
    ops = block_ops(op.block)
    at = ops.index(op) + 1
    while at < len(ops) and ops[at].name == "tilegpu.local_alloc" and not len(ops[at].operands):
        at += 1
    return ops[at].name if at < len(ops) else None


@lowers("tilegpu.tma_copy_global_to_local")
def lower_tma_copy(ctx: LoweringContext, op: ir.Operation) -> None:
    (tensormap,), offsets, (buffer,), (barrier,), (pred,) = operand_groups(op)
    slot = tilegpu.memdesc_tensor(buffer.type)
    shape = list(slot.shape)
    size = element_bytes(ir.RankedTensorType.get(shape, slot.element_type))
    _, box = tma_box(shape, 8 * size)
    predicate = ctx.arith("andi", _first_thread(ctx), ctx.arith("extui", ctx.lowered(pred), result_type=ctx.i32))
    _issue(ctx, predicate, ctx.shared_address32(ctx.lowered(barrier)), tensormap, [ctx.lowered(o) for o in offsets],
           ctx.shared_address32(ctx.lowered(buffer)), shape, size, box)


@lowers("tilegpu.wait_barrier")
def lower_wait_barrier(ctx: LoweringContext, op: ir.Operation) -> None:
    barrier, phase = op.operands
    _wait(ctx, ctx.shared_address32(ctx.lowered(barrier)), ctx.lowered(phase))


@lowers("tile.descriptor_load")
def lower_descriptor_load(ctx: LoweringContext, op: ir.Operation) -> None:
    (tensormap,), offsets = operand_groups(op)
    result = op.results[0]
    shape, size = _block(result)
    nbytes = math.prod(shape) * size
    ctx.reserve_shared(nbytes + _BARRIER_BYTES)
    view, box = _view(result, shape, size)
    data = ctx.const(int_attr_value(op, OFFSET_ATTR))
    data_address = ctx.shared_address32(data)
    barrier = ctx.arith("addi", data_address, ctx.const(nbytes))
    _initialise(ctx, [barrier])
    _issue(ctx, _first_thread(ctx), barrier, tensormap, [ctx.lowered(o) for o in offsets], data_address, shape, size,
           box)
    _wait(ctx, barrier, ctx.const(0))
    ctx.set(result, read_view(ctx, result, view, data))
    _invalidate(ctx, [barrier])


@lowers("tile.descriptor_store")
def lower_descriptor_store(ctx: LoweringContext, op: ir.Operation) -> None:
    (tensormap,), (value,), offsets = operand_groups(op)
    shape, size = _block(value)
    ctx.reserve_shared(math.prod(shape) * size)
    view, box = _view(value, shape, size)
    data = ctx.const(int_attr_value(op, OFFSET_ATTR))
    data_address = ctx.shared_address32(data)
    deferred = DEFERRED_ATTR in op.attributes
    if deferred:  # the previous execution's block may still be reading out of the buffer
        _wait_for_read_out(ctx)
    write_view(ctx, value, view, data)
    ctx.inline_asm("fence.proxy.async.shared::cta;", "", [], [])
    ctx.barrier()
    first = _first_thread(ctx)
    copies, operands = [], [first, _tensormap_address(ctx, tensormap)]
    for place, inner, outer in _boxes(ctx, [ctx.lowered(o) for o in offsets], shape, box, size):
        n = len(operands)
        copies.append(f"@p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {{${n + 1}, ${n + 2}}}], [${n}];")
        operands += [ctx.arith("addi", data_address, ctx.const(place)) if place else data_address, inner, outer]
    # Only until the block has been read out of the buffer where no access that may follow
    # could see the writes out of order (tile-choose-descriptor-copies' READ_WAIT_ATTR);
    # otherwise until they land.
    # Deferred (tilegpu-allocate-shared-memory's DEFERRED_ATTR): not here at all.
    wait = "wait_group.read" if "tile.wait_for_read" in op.attributes else "wait_group"
    copies += ["@p cp.async.bulk.commit_group;"] + ([] if deferred else [f"@p cp.async.bulk.{wait} 0;"])
    ctx.inline_asm("{ .reg .pred p; setp.ne.b32 p, $0, 0; " + " ".join(copies) + " }",
                   ",".join(["r", "l"] + ["r"] * (len(operands) - 2)), operands, [])
    if not deferred:
        ctx.barrier()


@lowers("tilegpu.bulk_store_wait")
def lower_bulk_store_wait(ctx: LoweringContext, op: ir.Operation) -> None:
    _wait_for_read_out(ctx)


def _wait_for_read_out(ctx: LoweringContext) -> None:
    """Every TMA store issued so far has been read out of shared memory once this returns
    in every thread. Each thread waits for its own bulk groups (only the issuing thread
    has any), then the CTA synchronises."""
    ctx.inline_asm("cp.async.bulk.wait_group.read 0;", "", [], [])
    ctx.barrier()


@lowers("tilegpu.arrive_barrier")
def lower_arrive_barrier(ctx: LoweringContext, op: ir.Operation) -> None:
    """Where the predicate holds, the lane `elect.sync` picks in each warp arrives once on
    the mbarrier: it completes a phase when every warp of the side running it has (its
    init_barriers' arrive count)."""
    elected = create_op("nvvm.elect.sync", [ctx.i1]).result
    predicate = ctx.arith("extui", ctx.arith("andi", elected, ctx.lowered(op.operands[1])), result_type=ctx.i32)
    barrier = ctx.shared_address32(ctx.lowered(op.operands[0]))
    ctx.inline_asm("{ .reg .pred p; setp.ne.b32 p, $0, 0; @p mbarrier.arrive.shared::cta.b64 _, [$1]; }", "r,r",
                   [predicate, barrier], [])
