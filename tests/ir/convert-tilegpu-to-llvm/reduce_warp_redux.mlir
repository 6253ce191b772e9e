// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// An i32 minimum over one warp: one redux.sync instead of five butterfly shuffles.
// CHECK-LABEL: llvm.func @warp_min
// CHECK-NOT: nvvm.shfl.sync
// CHECK: nvvm.redux.sync min %{{[0-9]+}}, %{{.*}} : i32 -> i32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.redux.sync
// CHECK: llvm.return

// An i32 sum over 16 elements: half of each warp's lanes hold copies, which redux.sync
// would count twice; the four shuffles over the lanes that hold distinct elements stay.
// CHECK-LABEL: llvm.func @copied_sum
// CHECK-NOT: nvvm.redux.sync
// CHECK-COUNT-4: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.redux.sync
// CHECK: llvm.return

// The same layout's maximum: copies do not change a maximum, so redux.sync serves.
// CHECK-LABEL: llvm.func @copied_max
// CHECK-NOT: nvvm.shfl.sync
// CHECK: nvvm.redux.sync umax
// CHECK-NOT: nvvm.shfl.sync
// CHECK: llvm.return
#b = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 1>}>
module attributes {"tilegpu.num-warps" = 1 : i32, tilegpu.target = "sm_90"} {
  func.func @warp_min(%x: !tile.ptr<i32>, %out: !tile.ptr<i32>) {
    %r = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #b>
    %xb = "tile.splat"(%x) : (!tile.ptr<i32>) -> tensor<32x!tile.ptr<i32>, #b>
    %xp = "tile.addptr"(%xb, %r) : (tensor<32x!tile.ptr<i32>, #b>, tensor<32xi32, #b>) -> tensor<32x!tile.ptr<i32>, #b>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x!tile.ptr<i32>, #b>) -> tensor<32xi32, #b>
    %s = "tile.reduce"(%v) ({
    ^bb0(%a: i32, %c: i32):
      %t = arith.minsi %a, %c : i32
      gpu.yield %t : i32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32xi32, #b>) -> i32
    "tile.store"(%out, %s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
    return
  }
  func.func @copied_sum(%x: !tile.ptr<i32>, %out: !tile.ptr<i32>) {
    %r = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32, #b>
    %xb = "tile.splat"(%x) : (!tile.ptr<i32>) -> tensor<16x!tile.ptr<i32>, #b>
    %xp = "tile.addptr"(%xb, %r) : (tensor<16x!tile.ptr<i32>, #b>, tensor<16xi32, #b>) -> tensor<16x!tile.ptr<i32>, #b>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<16x!tile.ptr<i32>, #b>) -> tensor<16xi32, #b>
    %s = "tile.reduce"(%v) ({
    ^bb0(%a: i32, %c: i32):
      %t = arith.addi %a, %c : i32
      gpu.yield %t : i32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xi32, #b>) -> i32
    "tile.store"(%out, %s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
    return
  }
  func.func @copied_max(%x: !tile.ptr<i32>, %out: !tile.ptr<i32>) {
    %r = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32, #b>
    %xb = "tile.splat"(%x) : (!tile.ptr<i32>) -> tensor<16x!tile.ptr<i32>, #b>
    %xp = "tile.addptr"(%xb, %r) : (tensor<16x!tile.ptr<i32>, #b>, tensor<16xi32, #b>) -> tensor<16x!tile.ptr<i32>, #b>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<16x!tile.ptr<i32>, #b>) -> tensor<16xi32, #b>
    %s = "tile.reduce"(%v) ({
    ^bb0(%a: i32, %c: i32):
      %t = arith.maxui %a, %c : i32
      gpu.yield %t : i32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xi32, #b>) -> i32
    "tile.store"(%out, %s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
    return
  }
}
