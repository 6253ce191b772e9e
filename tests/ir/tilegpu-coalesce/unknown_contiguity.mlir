// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// A gather (x[idx] with loaded indices): nothing is known about the addresses, so the
// gather alone would keep one element a thread. The load of the indices themselves is
// contiguous and gets 4 elements a thread, and the gather, of the same shape and order,
// takes the same run (as in Triton): the indices reach it without a conversion.

#blocked = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 8>}>

// CHECK-DAG: #[[V4:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 8>}>
// CHECK-LABEL: func.func @gather
// CHECK: "tile.load"({{.*}}) -> tensor<2048xi32, #[[V4]]>
// CHECK: "tile.load"({{.*}}) {{.*}} : (tensor<2048x!tile.ptr<f32>, #[[V4]]>) -> tensor<2048xf32, #[[V4]]>
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90"} {
  func.func @gather(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %idx: !tile.ptr<i32> {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 2048 : i32, start = 0 : i32} : () -> tensor<2048xi32, #blocked>
    %ib = "tile.splat"(%idx) : (!tile.ptr<i32>) -> tensor<2048x!tile.ptr<i32>, #blocked>
    %ip = "tile.addptr"(%ib, %offs) : (tensor<2048x!tile.ptr<i32>, #blocked>, tensor<2048xi32, #blocked>) -> tensor<2048x!tile.ptr<i32>, #blocked>
    %i = "tile.load"(%ip) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<2048x!tile.ptr<i32>, #blocked>) -> tensor<2048xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<2048x!tile.ptr<f32>, #blocked>
    %xp = "tile.addptr"(%xb, %i) : (tensor<2048x!tile.ptr<f32>, #blocked>, tensor<2048xi32, #blocked>) -> tensor<2048x!tile.ptr<f32>, #blocked>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<2048x!tile.ptr<f32>, #blocked>) -> tensor<2048xf32, #blocked>
    return
  }
}
