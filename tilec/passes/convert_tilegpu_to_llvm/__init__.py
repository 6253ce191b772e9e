"""convert-tilegpu-to-llvm: ttgir -> per-thread LLVM/NVVM inside a gpu.module.

Every tensor value becomes the list of scalars one thread holds, ordered by its
layout's register index; scalars stay scalars. Each op is lowered by a rule looked up
by op name (`@lowers("tile.load")`), a small function of an explicit `LoweringContext`;
an op without a rule is an error naming it. Rules emit upstream arith/math, llvm and
nvvm ops (and inline PTX for predicated vector memory access); upstream passes
(scf-to-cf, arith-to-llvm, ...) finish the job.

Shared memory is placed beforehand by tilegpu-allocate-shared-memory (explicit buffers
and each op's scratch space, `tilegpu.offset`) and synchronised by
tilegpu-insert-barriers; the rules only address it.

The result replaces the module's body:

    module attributes {gpu.container_module, tilegpu.shared = N} {
      gpu.module @tilec {
        llvm.mlir.global external @global_smem() {addr_space = 3} : !llvm.array<0 x i8>
        llvm.func @kernel(%arg0: !llvm.ptr<1>, ...) attributes {nvvm.kernel, nvvm.maxntid = array<i32: T>}
      }
    }
"""
from __future__ import annotations

from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import i32_attr, int_attr_value
from ...target import Target
from .. import register_pass
from ..utils import functions
from .context import TENSORMAP_ARG_ATTR, LoweringContext, lower_block  # noqa: F401
from .shared_memory import SHARED_ATTR
from . import (atomic, control_flow, convert_layout, debug, dot, dot_wgmma, elementwise, hardware,  # noqa: F401
               indexing, local_memory, memory, reduce, scan, shape, tma, warp_specialize)

GPU_MODULE_NAME = "tilec"


@register_pass("convert-tilegpu-to-llvm", "Lower ttgir to per-thread LLVM/NVVM in a gpu.module",
               **{"fp-fusion": True, "maxnreg": 0})
def convert_tilegpu_to_llvm(module_op: ir.Operation, fp_fusion: bool = True, maxnreg: int = 0) -> None:
    """fp_fusion: float adds, subtracts and multiplies carry LLVM's `contract` flag, so a
    multiply feeding an add may become one fma (Triton's enable_fp_fusion). maxnreg: the
    kernels' register cap (`nvvm.maxnreg`, PTX's `.maxnreg`; 0 for none)."""
    num_warps = tilegpu.num_warps_of(module_op)
    target = Target.parse(tilegpu.target_of(module_op))  # once per module, for every function
    body = module_op.regions[0].blocks[0]
    with ir.InsertionPoint(body):
        gpu_module = ir.Operation.create("gpu.module", regions=1,
                                         attributes={"sym_name": ir.StringAttr.get(GPU_MODULE_NAME)})
    gpu_block = gpu_module.regions[0].blocks.append()
    producer_warps = tilegpu.producer_warps_of(module_op)
    for fn in list(functions(module_op)):
        cap = maxnreg or _split_register_cap(fn, num_warps + producer_warps)
        ctx = LoweringContext(fn, gpu_block, num_warps=num_warps, target=target, fp_fusion=fp_fusion,
                              maxnreg=cap, producer_warps=producer_warps)
        ctx.build_function()
        lower_block(ctx, fn.regions[0].blocks[0], ctx.entry_block)
        ctx.finish()
        fn.erase()
    module_op.attributes["gpu.container_module"] = ir.UnitAttr.get()
    # Every byte of shared memory, explicit buffers and scratch space alike, was placed by
    # tilegpu-allocate-shared-memory, which recorded the total (none without it: then
    # any rule needing scratch space has failed above).
    module_op.attributes[SHARED_ATTR] = i32_attr(int_attr_value(module_op, SHARED_ATTR, 0))


def _split_register_cap(fn: ir.Operation, warps: int) -> int:
    """For a warp-specialised kernel that moves registers between its warps (setmaxnreg),
    the cap ptxas must allocate within (PTX's `.maxnreg`; without one ptxas ignores
    setmaxnreg): the register file's 65536 over the block's threads, rounded down to a
    multiple of 8. 0 for other kernels."""
    for op in fn.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "tilegpu.warp_specialize" and int_attr_value(op, "producer_regs", 0):
            return 65536 // (32 * warps) // 8 * 8
    return 0
