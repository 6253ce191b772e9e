// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// Contiguous f32 pointers whose base is only known to be 4-byte aligned: no vector
// access is possible, so (as in Triton's coalesce, which caps the elements per thread by
// divisibility / element size) each thread keeps one element and a warp's scalar
// accesses stay on consecutive addresses. With 8-byte alignment, two.

#blocked = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>

// CHECK-DAG: #[[ONE:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-DAG: #[[TWO:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 2>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-LABEL: func.func @align4
// CHECK: "tile.load"(%{{.*}}) {{.*}} : (tensor<1024x!tile.ptr<f32>, #[[ONE]]>) -> tensor<1024xf32, #[[ONE]]>
// CHECK-LABEL: func.func @align8
// CHECK: "tile.load"(%{{.*}}) {{.*}} : (tensor<1024x!tile.ptr<f32>, #[[TWO]]>) -> tensor<1024xf32, #[[TWO]]>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @align4(%x: !tile.ptr<f32> {tile.divisibility = 4 : i32}) {
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>) -> tensor<1024x!tile.ptr<f32>, #blocked>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #blocked>) -> tensor<1024xf32, #blocked>
    return
  }
  func.func @align8(%x: !tile.ptr<f32> {tile.divisibility = 8 : i32}) {
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>) -> tensor<1024x!tile.ptr<f32>, #blocked>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #blocked>) -> tensor<1024xf32, #blocked>
    return
  }
}
