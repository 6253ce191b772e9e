// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// Contiguous pointers: each thread gets up to 16 bytes of consecutive elements
// (4 x f32, 8 x f16), as far as the tensor has elements for every thread. The load runs
// in the new layout and its result is converted back; store operands are converted.

#blocked = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>

// CHECK-DAG: #[[OLD:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-DAG: #[[V4:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-DAG: #[[V8:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 8>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {

// CHECK-LABEL: func.func @copy_f32
// CHECK: [[XP:%.*]] = "tile.addptr"
// CHECK-NEXT: [[XP4:%.*]] = "tilegpu.convert_layout"([[XP]]) : (tensor<1024x!tile.ptr<f32>, #[[OLD]]>) -> tensor<1024x!tile.ptr<f32>, #[[V4]]>
// CHECK-NEXT: [[V:%.*]] = "tile.load"([[XP4]]) {{.*}} -> tensor<1024xf32, #[[V4]]>
// CHECK-NEXT: [[BACK:%.*]] = "tilegpu.convert_layout"([[V]]) : (tensor<1024xf32, #[[V4]]>) -> tensor<1024xf32, #[[OLD]]>
// CHECK: [[YP:%.*]] = "tile.addptr"
// CHECK-NEXT: [[YP4:%.*]] = "tilegpu.convert_layout"([[YP]]) : (tensor<1024x!tile.ptr<f32>, #[[OLD]]>) -> tensor<1024x!tile.ptr<f32>, #[[V4]]>
// CHECK-NEXT: [[V4VAL:%.*]] = "tilegpu.convert_layout"([[BACK]]) : (tensor<1024xf32, #[[OLD]]>) -> tensor<1024xf32, #[[V4]]>
// CHECK-NEXT: "tile.store"([[YP4]], [[V4VAL]])
  func.func @copy_f32(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>) -> tensor<1024x!tile.ptr<f32>, #blocked>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #blocked>) -> tensor<1024xf32, #blocked>
    %yb = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #blocked>
    %yp = "tile.addptr"(%yb, %offs) : (tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>) -> tensor<1024x!tile.ptr<f32>, #blocked>
    "tile.store"(%yp, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xf32, #blocked>) -> ()
    return
  }

// CHECK-LABEL: func.func @load_f16
// CHECK: "tile.load"(%{{.*}}) {{.*}} -> tensor<1024xf16, #[[V8]]>
  func.func @load_f16(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<f16>, #blocked>, tensor<1024xi32, #blocked>) -> tensor<1024x!tile.ptr<f16>, #blocked>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<f16>, #blocked>) -> tensor<1024xf16, #blocked>
    return
  }

// 128 elements for 128 threads: one each, so the layout stays as it is.
// CHECK-LABEL: func.func @one_per_thread
// CHECK-NOT: tilegpu.convert_layout
// CHECK: "tile.load"(%{{.*}}) {{.*}} -> tensor<128xf32, #[[OLD]]>
  func.func @one_per_thread(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<128x!tile.ptr<f32>, #blocked>, tensor<128xi32, #blocked>) -> tensor<128x!tile.ptr<f32>, #blocked>
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<128x!tile.ptr<f32>, #blocked>) -> tensor<128xf32, #blocked>
    return
  }
}
