// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// A mask that may change at any element (`offs < n`, n of unknown divisibility) splits
// every access into scalar ones: the thread's run is limited by the mask's constancy, so
// the load keeps one element per thread (no conversion either side). With n a multiple
// of 16, the mask is constant over 16 elements and the access gets 8 x f16.

#blocked = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>

// CHECK-DAG: #[[ONE:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-DAG: #[[V8:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 8>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {

// CHECK-LABEL: func.func @tail_of_unknown_length
// CHECK-NOT: tilegpu.convert_layout
// CHECK: "tile.load"({{.*}}) {{.*}} -> tensor<1024xf16, #[[ONE]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: "tile.store"
  func.func @tail_of_unknown_length(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32) {
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #blocked>
    %nb = "tile.splat"(%n) : (i32) -> tensor<1024xi32, #blocked>
    %mask = arith.cmpi slt, %offs, %nb : tensor<1024xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<f16>, #blocked>, tensor<1024xi32, #blocked>) -> tensor<1024x!tile.ptr<f16>, #blocked>
    %v = "tile.load"(%xp, %mask) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>, volatile = false} : (tensor<1024x!tile.ptr<f16>, #blocked>, tensor<1024xi1, #blocked>) -> tensor<1024xf16, #blocked>
    %yb = "tile.splat"(%y) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>, #blocked>
    %yp = "tile.addptr"(%yb, %offs) : (tensor<1024x!tile.ptr<f16>, #blocked>, tensor<1024xi32, #blocked>) -> tensor<1024x!tile.ptr<f16>, #blocked>
    "tile.store"(%yp, %v, %mask) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f16>, #blocked>, tensor<1024xf16, #blocked>, tensor<1024xi1, #blocked>) -> ()
    return
  }

// CHECK-LABEL: func.func @tail_of_a_multiple_of_16
// CHECK: "tile.load"({{.*}}) {{.*}} -> tensor<1024xf16, #[[V8]]>
  func.func @tail_of_a_multiple_of_16(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) {
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #blocked>
    %nb = "tile.splat"(%n) : (i32) -> tensor<1024xi32, #blocked>
    %mask = arith.cmpi slt, %offs, %nb : tensor<1024xi32, #blocked>
    %xb = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>, #blocked>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<f16>, #blocked>, tensor<1024xi32, #blocked>) -> tensor<1024x!tile.ptr<f16>, #blocked>
    %v = "tile.load"(%xp, %mask) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>, volatile = false} : (tensor<1024x!tile.ptr<f16>, #blocked>, tensor<1024xi1, #blocked>) -> tensor<1024xf16, #blocked>
    return
  }
}
