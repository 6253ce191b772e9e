// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// A cumsum down the rows of a 64x32 f32 tile, loaded and stored row-major (the corpus's
// k_scans strip). The pointers allow 4 consecutive columns a thread; lanes and warps
// cover 16 rows, so the tile repeats 4 times down the rows. Scanned along the rows, the
// repeats go into the thread's registers (sizePerThread [4, 4]: rows 4r..4r+3) rather
// than 16 rows apart, for the load and for the store of the scan's result alike.

// CHECK-DAG: #[[RUNS:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 4, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-LABEL: func.func public @cumsum_tile
// CHECK: "tile.load"({{.*}}) {{.*}} : (tensor<64x32x!tile.ptr<f32>, #[[RUNS]]>) -> tensor<64x32xf32, #[[RUNS]]>
// CHECK: "tile.store"({{.*}}) {{.*}} : (tensor<64x32x!tile.ptr<f32>, #[[RUNS]]>, tensor<64x32xf32, #[[RUNS]]>) -> ()
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>
#slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @cumsum_tile(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %c32_i32 = arith.constant 32 : i32
    %0 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #blocked0>
    %1 = "tilegpu.convert_layout"(%0) : (tensor<64xi32, #blocked0>) -> tensor<64xi32, #slice0>
    %2 = "tile.expand_dims"(%1) {axis = 1 : i32} : (tensor<64xi32, #slice0>) -> tensor<64x1xi32, #blocked1>
    %3 = "tile.splat"(%c32_i32) : (i32) -> tensor<64x1xi32, #blocked1>
    %4 = arith.muli %2, %3 : tensor<64x1xi32, #blocked1>
    %5 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #blocked0>
    %6 = "tilegpu.convert_layout"(%5) : (tensor<32xi32, #blocked0>) -> tensor<32xi32, #slice1>
    %7 = "tile.expand_dims"(%6) {axis = 0 : i32} : (tensor<32xi32, #slice1>) -> tensor<1x32xi32, #blocked2>
    %8 = "tilegpu.convert_layout"(%4) : (tensor<64x1xi32, #blocked1>) -> tensor<64x1xi32, #blocked2>
    %9 = "tile.broadcast"(%8) : (tensor<64x1xi32, #blocked2>) -> tensor<64x32xi32, #blocked2>
    %10 = "tile.broadcast"(%7) : (tensor<1x32xi32, #blocked2>) -> tensor<64x32xi32, #blocked2>
    %11 = arith.addi %9, %10 : tensor<64x32xi32, #blocked2>
    %12 = "tile.splat"(%arg1) : (!tile.ptr<f32>) -> tensor<64x32x!tile.ptr<f32>, #blocked2>
    %13 = "tile.addptr"(%12, %11) : (tensor<64x32x!tile.ptr<f32>, #blocked2>, tensor<64x32xi32, #blocked2>) -> tensor<64x32x!tile.ptr<f32>, #blocked2>
    %14 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<64x32x!tile.ptr<f32>, #blocked2>
    %15 = "tile.addptr"(%14, %11) : (tensor<64x32x!tile.ptr<f32>, #blocked2>, tensor<64x32xi32, #blocked2>) -> tensor<64x32x!tile.ptr<f32>, #blocked2>
    %16 = "tile.load"(%15) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x32x!tile.ptr<f32>, #blocked2>) -> tensor<64x32xf32, #blocked2>
    %17 = "tile.scan"(%16) ({
    ^bb0(%arg2: f32, %arg3: f32):
      %18 = arith.addf %arg2, %arg3 : f32
      gpu.yield %18 : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, reverse = false} : (tensor<64x32xf32, #blocked2>) -> tensor<64x32xf32, #blocked2>
    "tile.store"(%13, %17) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x32x!tile.ptr<f32>, #blocked2>, tensor<64x32xf32, #blocked2>) -> ()
    return
  }
}
