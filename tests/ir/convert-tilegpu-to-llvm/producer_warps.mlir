// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// A warp-specialised kernel's producer warps (tilegpu.producer-warps) run beyond its
// num_warps: the block's bound counts them (8 + 4 warps: 384 threads), while the warp
// split of the thread id is the same as without them.

// CHECK-LABEL: llvm.func @ids(%arg0: !llvm.ptr<1> {llvm.noundef}) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 384>}
// CHECK-NEXT: [[TID:%[0-9]+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: [[C31:%.*]] = arith.constant 31 : i32
// CHECK-NEXT: {{%[0-9]+}} = arith.andi [[TID]], [[C31]] : i32
// CHECK-NEXT: [[C5:%.*]] = arith.constant 5 : i32
// CHECK-NEXT: {{%[0-9]+}} = arith.shrui [[TID]], [[C5]] : i32
module attributes {"tilegpu.num-warps" = 8 : i32, "tilegpu.producer-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @ids(%out: !tile.ptr<i32>) {
    %x = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    "tile.store"(%out, %x) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
    return
  }
}
