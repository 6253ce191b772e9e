// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// Program ids and counts read the CTA id and grid size registers of their axis.
// Every kernel starts by reading the thread id and splitting it into lane and warp.

// CHECK-LABEL: llvm.func @ids(%arg0: !llvm.ptr<1> {llvm.noundef}) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256>}
// CHECK-NEXT: [[TID:%[0-9]+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: [[C31:%.*]] = arith.constant 31 : i32
// CHECK-NEXT: {{%[0-9]+}} = arith.andi [[TID]], [[C31]] : i32
// CHECK-NEXT: [[C5:%.*]] = arith.constant 5 : i32
// CHECK-NEXT: {{%[0-9]+}} = arith.shrui [[TID]], [[C5]] : i32
// CHECK: [[X:%[0-9]+]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT: [[Y:%[0-9]+]] = nvvm.read.ptx.sreg.ctaid.y : i32
// CHECK-NEXT: [[Z:%[0-9]+]] = nvvm.read.ptx.sreg.ctaid.z : i32
// CHECK-NEXT: [[NX:%[0-9]+]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NEXT: [[NZ:%[0-9]+]] = nvvm.read.ptx.sreg.nctaid.z : i32
// CHECK-NEXT: [[S:%[0-9]+]] = arith.addi [[X]], [[Y]] : i32
// CHECK-NEXT: [[T:%[0-9]+]] = arith.addi [[S]], [[Z]] : i32
// CHECK-NEXT: [[U:%[0-9]+]] = arith.muli [[T]], [[NX]] : i32
// CHECK-NEXT: [[V:%[0-9]+]] = arith.muli [[U]], [[NZ]] : i32
// CHECK-NEXT: {{%[0-9]+}} = llvm.getelementptr %arg0{{\[}}[[V]]{{\]}} : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90"} {
  func.func @ids(%out: !tile.ptr<i32>) {
    %x = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    %y = "tile.get_program_id"() {axis = 1 : i32} : () -> i32
    %z = "tile.get_program_id"() {axis = 2 : i32} : () -> i32
    %nx = "tile.get_num_programs"() {axis = 0 : i32} : () -> i32
    %nz = "tile.get_num_programs"() {axis = 2 : i32} : () -> i32
    %s = arith.addi %x, %y : i32
    %t = arith.addi %s, %z : i32
    %u = arith.muli %t, %nx : i32
    %v = arith.muli %u, %nz : i32
    %p = "tile.addptr"(%out, %v) : (!tile.ptr<i32>, i32) -> !tile.ptr<i32>
    "tile.store"(%p, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
    return
  }
}
