// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// A sum over one warp: five butterfly shuffles (lane masks 1, 2, 4, 8, 16), each
// followed by the combiner; no barrier and no shared memory. Every lane holds the sum;
// thread 0 stores it.

// CHECK: tilegpu.shared = 0 : i32
// CHECK-LABEL: llvm.func @warp_sum
// CHECK-DAG: [[C1:%.*]] = arith.constant 1 : i32
// CHECK-DAG: [[C2:%.*]] = arith.constant 2 : i32
// CHECK-DAG: [[C4:%.*]] = arith.constant 4 : i32
// CHECK-DAG: [[C8:%.*]] = arith.constant 8 : i32
// CHECK-DAG: [[C16:%.*]] = arith.constant 16 : i32
// CHECK-NOT: nvvm.barrier0
// CHECK: [[X:%[0-9]+]] = llvm.bitcast %{{[0-9]+}} : i32 to f32
// CHECK-NOT: nvvm.barrier0
// CHECK: [[S1:%[0-9]+]] = nvvm.shfl.sync bfly %{{.*}}, [[X]], [[C1]], %{{.*}} : f32 -> f32
// CHECK-NEXT: [[A1:%[0-9]+]] = arith.addf [[X]], [[S1]] fastmath<contract> : f32
// CHECK-NEXT: [[S2:%[0-9]+]] = nvvm.shfl.sync bfly %{{.*}}, [[A1]], [[C2]], %{{.*}} : f32 -> f32
// CHECK-NEXT: [[A2:%[0-9]+]] = arith.addf [[A1]], [[S2]] fastmath<contract> : f32
// CHECK-NEXT: [[S4:%[0-9]+]] = nvvm.shfl.sync bfly %{{.*}}, [[A2]], [[C4]], %{{.*}} : f32 -> f32
// CHECK-NEXT: [[A4:%[0-9]+]] = arith.addf [[A2]], [[S4]] fastmath<contract> : f32
// CHECK-NEXT: [[S8:%[0-9]+]] = nvvm.shfl.sync bfly %{{.*}}, [[A4]], [[C8]], %{{.*}} : f32 -> f32
// CHECK-NEXT: [[A8:%[0-9]+]] = arith.addf [[A4]], [[S8]] fastmath<contract> : f32
// CHECK-NEXT: nvvm.shfl.sync bfly %{{.*}}, [[A8]], [[C16]], %{{.*}} : f32 -> f32
// CHECK-NEXT: [[SUM:%[0-9]+]] = arith.addf
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: [[BITS:%[0-9]+]] = llvm.bitcast [[SUM]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "@$2 st.global.b32 [$0], $1;", "l,r,b" %arg1, [[BITS]], [[THREAD0:%[0-9]+]]
#b = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 1>}>
module attributes {"tilegpu.num-warps" = 1 : i32, tilegpu.target = "sm_90"} {
  func.func @warp_sum(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>) {
    %r = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #b>
    %xb = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>, #b>
    %xp = "tile.addptr"(%xb, %r) : (tensor<32x!tile.ptr<f32>, #b>, tensor<32xi32, #b>) -> tensor<32x!tile.ptr<f32>, #b>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x!tile.ptr<f32>, #b>) -> tensor<32xf32, #b>
    %s = "tile.reduce"(%v) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32xf32, #b>) -> f32
    "tile.store"(%out, %s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    return
  }
}
