// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// A loaded value's conversion sinks into a reduction: the reduction reads the load's
// layout directly. Reducing to a scalar ends the conversion; a reduction to a tensor
// gives the slice of the load's layout, whose conversion then sinks into the store.

#one = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#vec = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#rows = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>
#tile = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>

// CHECK-DAG: #[[VEC:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-DAG: #[[TILE:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-DAG: #[[SUMS:slice[0-9]+]] = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>}>

// CHECK-LABEL: func.func @total
// CHECK-NOT: tilegpu.convert_layout
// CHECK: [[V:%.*]] = "tile.load"(%arg0) {{.*}} -> tensor<1024xf32, #[[VEC]]>
// CHECK-NEXT: "tile.reduce"([[V]])
// CHECK: (tensor<1024xf32, #[[VEC]]>) -> f32
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @total(%xp: tensor<1024x!tile.ptr<f32>, #vec>, %out: !tile.ptr<f32>) {
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #vec>) -> tensor<1024xf32, #vec>
    %v1 = "tilegpu.convert_layout"(%v) : (tensor<1024xf32, #vec>) -> tensor<1024xf32, #one>
    %s = "tile.reduce"(%v1) ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gpu.yield %c : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1024xf32, #one>) -> f32
    "tile.store"(%out, %s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    return
  }

// CHECK-LABEL: func.func @row_sums
// CHECK-NOT: tilegpu.convert_layout
// CHECK: [[V:%.*]] = "tile.load"(%arg0) {{.*}} -> tensor<32x64xf32, #[[TILE]]>
// CHECK-NEXT: [[S:%.*]] = "tile.reduce"([[V]])
// CHECK: (tensor<32x64xf32, #[[TILE]]>) -> tensor<32xf32, #[[SUMS]]>
// CHECK-NEXT: [[R:%.*]] = "tile.make_range"() {{.*}} -> tensor<32xi32, #[[SUMS]]>
// CHECK: [[P:%.*]] = "tile.addptr"({{.*}}, [[R]]) {{.*}} -> tensor<32x!tile.ptr<f32>, #[[SUMS]]>
// CHECK-NEXT: "tile.store"([[P]], [[S]])
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
  func.func @row_sums(%xp: tensor<32x64x!tile.ptr<f32>, #tile>, %out: !tile.ptr<f32>) {
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x64x!tile.ptr<f32>, #tile>) -> tensor<32x64xf32, #tile>
    %v1 = "tilegpu.convert_layout"(%v) : (tensor<32x64xf32, #tile>) -> tensor<32x64xf32, #rows>
    %s = "tile.reduce"(%v1) ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gpu.yield %c : f32
    }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x64xf32, #rows>) -> tensor<32xf32, #tilegpu.slice<{dim = 1 : i32, parent = #rows}>>
    %s1 = "tilegpu.convert_layout"(%s) : (tensor<32xf32, #tilegpu.slice<{dim = 1 : i32, parent = #rows}>>) -> tensor<32xf32, #one>
    %r = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #one>
    %ob = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>, #one>
    %op = "tile.addptr"(%ob, %r) : (tensor<32x!tile.ptr<f32>, #one>, tensor<32xi32, #one>) -> tensor<32x!tile.ptr<f32>, #one>
    "tile.store"(%op, %s1) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<f32>, #one>, tensor<32xf32, #one>) -> ()
    return
  }
}
