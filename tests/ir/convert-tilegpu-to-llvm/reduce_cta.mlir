// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s

// A sum over 128 elements held by 4 warps: shuffles within each warp, then every warp
// writes its partial sum to its scratch space (4 x f32 = 16 bytes), a barrier, and lane
// l of every warp loads partial l mod 4 (one load, not four) and two butterfly shuffles
// add the four. The only barrier is the reduction's own: no earlier access of shared
// memory needs one before the writes.

// CHECK: tilegpu.shared = 16 : i32
// CHECK-LABEL: llvm.func @cta_sum
// CHECK: [[SMEM:%[0-9]+]] = llvm.mlir.addressof @global_smem : !llvm.ptr<3>
// CHECK-COUNT-5: nvvm.shfl.sync bfly
// CHECK-NEXT: [[PARTIAL:%[0-9]+]] = arith.addf
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: [[SLOT:%[0-9]+]] = llvm.getelementptr [[SMEM]][%{{[0-9]+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: llvm.store [[PARTIAL]], [[SLOT]] : f32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK: [[P:%[0-9]+]] = llvm.load %{{[0-9]+}} : !llvm.ptr<3> -> f32
// CHECK-NEXT: [[Q:%[0-9]+]] = nvvm.shfl.sync bfly %{{.*}}, [[P]], %c1_i32
// CHECK-NEXT: [[PQ:%[0-9]+]] = arith.addf [[P]], [[Q]] fastmath<contract> : f32
// CHECK-NEXT: [[R:%[0-9]+]] = nvvm.shfl.sync bfly %{{.*}}, [[PQ]], %c2_i32
// CHECK-NEXT: [[SUM:%[0-9]+]] = arith.addf [[PQ]], [[R]] fastmath<contract> : f32
// CHECK-NOT: llvm.load
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: nvvm.shfl.sync
// CHECK: llvm.bitcast [[SUM]] : f32 to i32
#b = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @cta_sum(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>) {
    %r = "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32, #b>
    %xb = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #b>
    %xp = "tile.addptr"(%xb, %r) : (tensor<128x!tile.ptr<f32>, #b>, tensor<128xi32, #b>) -> tensor<128x!tile.ptr<f32>, #b>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<128x!tile.ptr<f32>, #b>) -> tensor<128xf32, #b>
    %s = "tile.reduce"(%v) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32, #b>) -> f32
    "tile.store"(%out, %s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    return
  }
}
