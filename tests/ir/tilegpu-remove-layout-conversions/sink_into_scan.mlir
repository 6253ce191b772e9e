// RUN: tilec-opt %s --split-input-file -p tilegpu-remove-layout-conversions | FileCheck %s

// tl.cumsum(x, axis=0) of a 64x32 fp32 strip (the corpus's k_scans cumsum_cols), as
// coalescing leaves it: x is loaded and stored in the vectorised layout #vec, the scan
// runs in the default layout #other, so the tile is converted to #other and back
// (through shared memory, a barrier each). The scan reads any layout (its lowering
// handles runs, lanes, warps and repeats along the axis): the conversion sinks through
// it, the scan runs in #vec and neither conversion is left.

// CHECK-DAG: #[[VEC:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-LABEL: func.func @cumsum_cols
// CHECK-NOT: tilegpu.convert_layout
// CHECK: "tile.scan"
// CHECK: reverse = false} : (tensor<64x32xf32, #[[VEC]]>) -> tensor<64x32xf32, #[[VEC]]>
// CHECK-NOT: tilegpu.convert_layout
#vec = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#other = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @cumsum_cols(%xp: tensor<64x32x!tile.ptr<f32>, #vec>, %yp: tensor<64x32x!tile.ptr<f32>, #vec>) {
    %x = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x32x!tile.ptr<f32>, #vec>) -> tensor<64x32xf32, #vec>
    %xo = "tilegpu.convert_layout"(%x) : (tensor<64x32xf32, #vec>) -> tensor<64x32xf32, #other>
    %s = "tile.scan"(%xo) ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gpu.yield %c : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, reverse = false} : (tensor<64x32xf32, #other>) -> tensor<64x32xf32, #other>
    %sv = "tilegpu.convert_layout"(%s) : (tensor<64x32xf32, #other>) -> tensor<64x32xf32, #vec>
    "tile.store"(%yp, %sv) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x32x!tile.ptr<f32>, #vec>, tensor<64x32xf32, #vec>) -> ()
    return
  }
}
