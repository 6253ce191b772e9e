// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// Column-major [32, 64] f32 pointers (x + row + col * 32): addresses are contiguous along
// dim 0, so the order is [0, 1] and each thread takes 4 consecutive rows.

// CHECK-DAG: #[[COLS:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 4, 1>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 1, 4>}>
// CHECK-LABEL: func.func @column_major
// CHECK: [[P:%.*]] = "tile.addptr"({{.*}}) : ({{.*}}) -> tensor<32x64x!tile.ptr<f32>, #{{.*}}>
// CHECK-NEXT: [[Q:%.*]] = "tilegpu.convert_layout"([[P]]) : ({{.*}}) -> tensor<32x64x!tile.ptr<f32>, #[[COLS]]>
// CHECK-NEXT: "tile.load"([[Q]]) {{.*}} -> tensor<32x64xf32, #[[COLS]]>
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>
#slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @column_major(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %c32_i32 = arith.constant 32 : i32
    %0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #blocked0>
    %1 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #blocked0>
    %2 = "tilegpu.convert_layout"(%0) : (tensor<32xi32, #blocked0>) -> tensor<32xi32, #slice0>
    %3 = "tile.expand_dims"(%2) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked1>
    %4 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
    %5 = "tile.addptr"(%4, %3) : (tensor<32x1x!tile.ptr<f32>, #blocked1>, tensor<32x1xi32, #blocked1>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
    %6 = "tilegpu.convert_layout"(%1) : (tensor<64xi32, #blocked0>) -> tensor<64xi32, #slice1>
    %7 = "tile.expand_dims"(%6) {axis = 0 : i32} : (tensor<64xi32, #slice1>) -> tensor<1x64xi32, #blocked2>
    %8 = "tile.splat"(%c32_i32) : (i32) -> tensor<1x64xi32, #blocked2>
    %9 = arith.muli %7, %8 : tensor<1x64xi32, #blocked2>
    %10 = "tile.broadcast"(%5) : (tensor<32x1x!tile.ptr<f32>, #blocked1>) -> tensor<32x64x!tile.ptr<f32>, #blocked1>
    %11 = "tile.broadcast"(%9) : (tensor<1x64xi32, #blocked2>) -> tensor<32x64xi32, #blocked2>
    %12 = "tilegpu.convert_layout"(%11) : (tensor<32x64xi32, #blocked2>) -> tensor<32x64xi32, #blocked1>
    %13 = "tile.addptr"(%10, %12) : (tensor<32x64x!tile.ptr<f32>, #blocked1>, tensor<32x64xi32, #blocked1>) -> tensor<32x64x!tile.ptr<f32>, #blocked1>
    %14 = "tile.load"(%13) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x64x!tile.ptr<f32>, #blocked1>) -> tensor<32x64xf32, #blocked1>
    return
  }
}
