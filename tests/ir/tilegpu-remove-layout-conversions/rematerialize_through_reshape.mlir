// RUN: tilec-opt %s --split-input-file -p tilegpu-remove-layout-conversions | FileCheck %s

// Index arithmetic reshaped (the bit positions of tl.sort's network: an arange reshaped
// to [2, 2, ...]) and converted to the layout its user wants: the reshape keeps its
// elements in registers, so the arange is recomputed in the layout that becomes the
// wanted one under the reshape, and no conversion is left.

// CHECK-LABEL: func.func @reshaped_range
// CHECK-NOT: tilegpu.convert_layout
// CHECK: "tile.reshape"
// CHECK-SAME: -> tensor<16x16xi32, #[[WANT:blocked[0-9]+]]>
// CHECK: "tile.store"
// CHECK-SAME: tensor<16x16xi32, #[[WANT]]>
#flat = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 2>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#rows = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 2>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
#cols = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 16, 2>, warpsPerCTA = array<i32: 1, 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @reshaped_range(%p: tensor<16x16x!tile.ptr<i32>, #cols>) {
    %r = "tile.make_range"() {end = 256 : i32, start = 0 : i32} : () -> tensor<256xi32, #flat>
    %s = "tile.reshape"(%r) : (tensor<256xi32, #flat>) -> tensor<16x16xi32, #rows>
    %c = "tilegpu.convert_layout"(%s) : (tensor<16x16xi32, #rows>) -> tensor<16x16xi32, #cols>
    "tile.store"(%p, %c) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x16x!tile.ptr<i32>, #cols>, tensor<16x16xi32, #cols>) -> ()
    return
  }
}
