// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// A conversion inside a loop of a value defined before the loop (attention's q: loaded
// once, converted for a dot in every iteration) moves before the loop, done once.

// CHECK-LABEL: func.func @hoist
// CHECK: %[[Q:[0-9]+]] = "tilegpu.convert_layout"(%arg0)
// CHECK-NEXT: scf.for
// CHECK-NOT: "tilegpu.convert_layout"
// CHECK: "tile.store"(%arg1, %[[Q]])
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#c = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 4, 1>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 1, 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @hoist(%q: tensor<32x32xf32, #b>, %p: tensor<32x32x!tile.ptr<f32>, #c>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      %q2 = "tilegpu.convert_layout"(%q) : (tensor<32x32xf32, #b>) -> tensor<32x32xf32, #c>
      "tile.store"(%p, %q2) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f32>, #c>, tensor<32x32xf32, #c>) -> ()
    }
    return
  }
}
