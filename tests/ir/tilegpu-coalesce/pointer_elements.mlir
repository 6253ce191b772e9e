// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// Loading a tensor of pointers (x: !tile.ptr<!tile.ptr<f32>>): the elements are 8 bytes,
// so 16 bytes per thread are 2 elements, as for i64.

#b = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>

// CHECK-DAG: #[[V2:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 2>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-LABEL: func.func @pointers
// CHECK: "tile.load"(%{{.*}}) {{.*}} : (tensor<1024x!tile.ptr<!tile.ptr<f32>>, #[[V2]]>) -> tensor<1024x!tile.ptr<f32>, #[[V2]]>
// CHECK-LABEL: func.func @int64
// CHECK: "tile.load"(%{{.*}}) {{.*}} : (tensor<1024x!tile.ptr<i64>, #[[V2]]>) -> tensor<1024xi64, #[[V2]]>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @pointers(%x: !tile.ptr<!tile.ptr<f32>> {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #b>
    %xb = "tile.splat"(%x) : (!tile.ptr<!tile.ptr<f32>>) -> tensor<1024x!tile.ptr<!tile.ptr<f32>>, #b>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<!tile.ptr<f32>>, #b>, tensor<1024xi32, #b>) -> tensor<1024x!tile.ptr<!tile.ptr<f32>>, #b>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<!tile.ptr<f32>>, #b>) -> tensor<1024x!tile.ptr<f32>, #b>
    return
  }
  func.func @int64(%x: !tile.ptr<i64> {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #b>
    %xb = "tile.splat"(%x) : (!tile.ptr<i64>) -> tensor<1024x!tile.ptr<i64>, #b>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<i64>, #b>, tensor<1024xi32, #b>) -> tensor<1024x!tile.ptr<i64>, #b>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<i64>, #b>) -> tensor<1024xi64, #b>
    return
  }
}
