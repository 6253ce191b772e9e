"""Lowering of tilegpu.warp_specialize: the split of a warp-specialised kernel.

The block has num_warps consumer warps (ids 0..num_warps-1, whose layouts the rest of
the kernel was planned for) and the module's producer warps after them. At the op:

    if (warp >= num_warps) {                  // the producers (a whole warpgroup)
        setmaxnreg.dec producer_regs          // give registers back to the consumers
        if (warp == num_warps) { region }     // one warp issues the copies
        exit                                  // and none runs the consumers' code
    }
    setmaxnreg.inc consumer_regs              // the consumers, every one of them

The warp index is the one taken from lane 0 (`ctx.uniform_warp`): setmaxnreg is
`.sync.aligned`, so ptxas must see the branch as uniform in each warp. From the op on,
what is lowered runs in the consumers alone: `ctx.barrier()` becomes a named barrier
over their threads (barrier 0 would wait for the producers, which have left), and TMA
operations in the region are issued by the lane `elect.sync` picks in its one warp.
A register count of 0 leaves that side's budget as ptxas gave it.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import nvvm

from ...dialects._mlir import int_attr_value
from .context import LoweringContext, LoweringError, lower_block, lowers
from .debug import scf_if


def _compare(ctx: LoweringContext, predicate: int, lhs: ir.Value, rhs: int) -> ir.Value:
    return ctx.arith("cmpi", lhs, ctx.const(rhs), result_type=ctx.i1,
                     attrs={"predicate": ir.IntegerAttr.get(ctx.i64, predicate)})


@lowers("tilegpu.warp_specialize")
def lower_warp_specialize(ctx: LoweringContext, op: ir.Operation) -> None:
    if not ctx.producer_warps:
        raise LoweringError("tilegpu.warp_specialize in a module without tilegpu.producer-warps")
    if op.parent.name != "func.func":
        # What follows it in its block is what runs after it: only true at the top level.
        raise LoweringError("tilegpu.warp_specialize must sit in its function's entry block")
    producer_regs = int_attr_value(op, "producer_regs")
    consumer_regs = int_attr_value(op, "consumer_regs")
    warp = ctx.uniform_warp
    with scf_if(ctx, _compare(ctx, 9, warp, ctx.num_warps)):  # uge: the producers
        if producer_regs:
            nvvm.SetMaxRegisterOp(producer_regs, nvvm.SetMaxRegisterAction.decrease)
        with scf_if(ctx, _compare(ctx, 0, warp, ctx.num_warps)):  # eq: the one that issues
            ctx.single_warp = True
            lower_block(ctx, op.regions[0].blocks[0], ir.InsertionPoint.current.block)
            ctx.single_warp = False
        nvvm.exit()
    if consumer_regs:
        nvvm.SetMaxRegisterOp(consumer_regs, nvvm.SetMaxRegisterAction.increase)
    ctx.consumer_only = True
