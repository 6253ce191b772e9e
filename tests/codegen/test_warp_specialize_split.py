"""The split of a warp-specialised kernel (tilegpu.warp_specialize, lowered in
convert_tilegpu_to_llvm/warp_specialize.py) assembles: a hand-written ttgir module with
8 consumer and 4 producer warps goes through the backend's lowering, LLVM and ptxas.
The PTX has the producers' setmaxnreg.dec and exit, the consumers' setmaxnreg.inc, a
named barrier over the 256 consumer threads after the split and barrier 0 only before
it (the init's publication); under its register cap (.maxnreg, which the lowering
sets when no maxnreg is given) ptxas honours setmaxnreg (without one it would ignore
it, warning C7508)."""
import re

import pytest
from mlir import ir

from tilec.backend import compiler, toolkit
from tilec.dialects import make_context
from tilec.passes import run_pipeline

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)

MODULE = """
module attributes {"tilegpu.num-warps" = 8 : i32, "tilegpu.producer-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @split(%out: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %p: i1) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %bars = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<2xi64>>
    "tilegpu.init_barriers"(%bars) {tilegpu.arrive_count = 8 : i32} : (!tilegpu.memdesc<tensor<2xi64>>) -> ()
    "tilegpu.warp_specialize"() ({
      %b0 = "tilegpu.memdesc_index"(%bars, %c0) : (!tilegpu.memdesc<tensor<2xi64>>, i32) -> !tilegpu.memdesc<tensor<i64>>
      "tilegpu.wait_barrier"(%b0, %c1) : (!tilegpu.memdesc<tensor<i64>>, i32) -> ()
      "gpu.yield"() : () -> ()
    }) {producer_regs = 40 : i32, consumer_regs = 232 : i32} : () -> ()
    %b1 = "tilegpu.memdesc_index"(%bars, %c1) : (!tilegpu.memdesc<tensor<2xi64>>, i32) -> !tilegpu.memdesc<tensor<i64>>
    "tilegpu.arrive_barrier"(%b1, %p) : (!tilegpu.memdesc<tensor<i64>>, i1) -> ()
    "tilegpu.barrier"() : () -> ()
    %x = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    "tile.store"(%out, %x) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
    return
  }
}
"""


def _ptx(maxnreg: int) -> str:
    with make_context():
        module = ir.Module.parse(MODULE)
        run_pipeline(module, "tilegpu-allocate-shared-memory,tilegpu-insert-barriers,"
                             f"convert-tilegpu-to-llvm{{maxnreg={maxnreg}}},{compiler._LLVM_CLEANUP}")
        gpu_module = compiler._gpu_module(module)
        gpu_module.attributes["targets"] = ir.ArrayAttr.get([ir.Attribute.parse(
            '#nvvm.target<O = 1, chip = "sm_90a", features = "+ptx80">')])
        run_pipeline(module, "gpu-module-to-binary{format=isa}")
        return compiler._binary_object(module.operation).decode()


def test_the_split_assembles_with_its_register_budgets():
    ptx = _ptx(maxnreg=168)
    assert ".maxntid 384" in ptx and ".maxnreg 168" in ptx
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+40;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)
    # (LLVM places the producers' block last.) Barrier 0 once, where all 12 warps meet: the
    # publication of the mbarriers' init, before the split.
    assert "exit;" in ptx and "mbarrier.try_wait.parity" in ptx and "mbarrier.arrive.shared::cta.b64" in ptx
    assert len(re.findall(r"bar\.sync\s+0;", ptx)) == 1
    assert ptx.index("bar.sync") < ptx.index("setmaxnreg")
    assert len(re.findall(r"bar\.sync\s+1, 256;", ptx)) == 1
    result = toolkit.assemble(ptx, "sm_90a", "split")
    assert result.cubin[:4] == b"\x7fELF" and "C7508" not in result.log


def test_a_split_kernel_gets_its_register_cap_on_its_own():
    """Without a user's maxnreg, the lowering gives a kernel that moves registers the cap
    ptxas needs to honour setmaxnreg (65536 / 384 threads, to a multiple of 8)."""
    ptx = _ptx(maxnreg=0)
    assert ".maxnreg 168" in ptx
    assert "C7508" not in toolkit.assemble(ptx, "sm_90a", "split").log
