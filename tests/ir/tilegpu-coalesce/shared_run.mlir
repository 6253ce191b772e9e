// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// Loads and stores of one shape and order share the longest run any of them may take
// (as in Triton): a [2048] bf16 row read 8 elements (16 bytes) a thread and written
// back as fp8 16 a thread (16 bytes) both get 16 a thread, so the value needs no
// conversion between them (it went through shared memory when the load kept 8).
// Stores keep their own runs (one vector write a thread): an int8 row read 16 a
// thread and written as fp32 keeps 4 a thread on the store, whose 16 would leave gaps
// in every warp-wide write.

#blocked = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>

// CHECK-DAG: #[[V4:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-DAG: #[[V16:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 16>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {

// CHECK-LABEL: func.func @bf16_row_to_fp8
// CHECK: "tile.load"({{.*}}) {{.*}} -> tensor<2048xbf16, #[[V16]]>
// CHECK: "tile.store"({{.*}}) {{.*}} : (tensor<2048x!tile.ptr<f8E4M3FN>, #[[V16]]>, tensor<2048xf8E4M3FN, #[[V16]]>) -> ()
  func.func @bf16_row_to_fp8(%x: !tile.ptr<bf16> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f8E4M3FN> {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 2048 : i32, start = 0 : i32} : () -> tensor<2048xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<bf16>) -> tensor<2048x!tile.ptr<bf16>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<2048x!tile.ptr<bf16>, #blocked>, tensor<2048xi32, #blocked>) -> tensor<2048x!tile.ptr<bf16>, #blocked>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<2048x!tile.ptr<bf16>, #blocked>) -> tensor<2048xbf16, #blocked>
    %w = arith.extf %v : tensor<2048xbf16, #blocked> to tensor<2048xf32, #blocked>
    %q = "tile.fp_to_fp"(%w) : (tensor<2048xf32, #blocked>) -> tensor<2048xf8E4M3FN, #blocked>
    %yb = "tile.splat"(%y) : (!tile.ptr<f8E4M3FN>) -> tensor<2048x!tile.ptr<f8E4M3FN>, #blocked>
    %yp = "tile.addptr"(%yb, %offs) : (tensor<2048x!tile.ptr<f8E4M3FN>, #blocked>, tensor<2048xi32, #blocked>) -> tensor<2048x!tile.ptr<f8E4M3FN>, #blocked>
    "tile.store"(%yp, %q) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<2048x!tile.ptr<f8E4M3FN>, #blocked>, tensor<2048xf8E4M3FN, #blocked>) -> ()
    return
  }

// CHECK-LABEL: func.func @int8_row_to_fp32
// CHECK: "tile.load"({{.*}}) {{.*}} -> tensor<2048xi8, #[[V16]]>
// CHECK: "tile.store"({{.*}}) {{.*}} : (tensor<2048x!tile.ptr<f32>, #[[V4]]>, tensor<2048xf32, #[[V4]]>) -> ()
  func.func @int8_row_to_fp32(%x: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 2048 : i32, start = 0 : i32} : () -> tensor<2048xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<i8>) -> tensor<2048x!tile.ptr<i8>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<2048x!tile.ptr<i8>, #blocked>, tensor<2048xi32, #blocked>) -> tensor<2048x!tile.ptr<i8>, #blocked>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<2048x!tile.ptr<i8>, #blocked>) -> tensor<2048xi8, #blocked>
    %w = arith.sitofp %v : tensor<2048xi8, #blocked> to tensor<2048xf32, #blocked>
    %yb = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<2048x!tile.ptr<f32>, #blocked>
    %yp = "tile.addptr"(%yb, %offs) : (tensor<2048x!tile.ptr<f32>, #blocked>, tensor<2048xi32, #blocked>) -> tensor<2048x!tile.ptr<f32>, #blocked>
    "tile.store"(%yp, %w) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<2048x!tile.ptr<f32>, #blocked>, tensor<2048xf32, #blocked>) -> ()
    return
  }
}
