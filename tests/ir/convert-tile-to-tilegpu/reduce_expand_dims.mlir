// RUN: tilec-opt %s -p 'convert-tile-to-tilegpu{num-warps=4}' | FileCheck %s

// A reduction's result is its operand's layout sliced along the reduced axis;
// expand_dims of such a slice restores the parent layout, and broadcast keeps it.

// CHECK-DAG: #[[B:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
// CHECK-DAG: #[[ROWS:slice[0-9]+]] = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>}>
// CHECK-DAG: #[[COLS:slice[0-9]+]] = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>}>

// CHECK-LABEL: func.func @softmax_like
// CHECK: [[X:%.*]] = "tile.splat"(%arg0) : (f32) -> tensor<32x64xf32, #[[B]]>
// CHECK: [[MAX:%.*]] = "tile.reduce"([[X]])
// CHECK: {axis = 1 : i32, {{.*}}} : (tensor<32x64xf32, #[[B]]>) -> tensor<32xf32, #[[ROWS]]>
// CHECK-NEXT: [[COL:%.*]] = "tile.expand_dims"([[MAX]]) {axis = 1 : i32} : (tensor<32xf32, #[[ROWS]]>) -> tensor<32x1xf32, #[[B]]>
// CHECK-NEXT: [[WIDE:%.*]] = "tile.broadcast"([[COL]]) : (tensor<32x1xf32, #[[B]]>) -> tensor<32x64xf32, #[[B]]>
// CHECK-NEXT: arith.subf [[X]], [[WIDE]] : tensor<32x64xf32, #[[B]]>
// CHECK: "tile.reduce"
// CHECK: {axis = 0 : i32, {{.*}}} : (tensor<32x64xf32, #[[B]]>) -> tensor<64xf32, #[[COLS]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
func.func @softmax_like(%v: f32) {
  %x = "tile.splat"(%v) : (f32) -> tensor<32x64xf32>
  %max = "tile.reduce"(%x) ({
  ^bb0(%a: f32, %b: f32):
    %c = arith.maxnumf %a, %b : f32
    gpu.yield %c : f32
  }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x64xf32>) -> tensor<32xf32>
  %col = "tile.expand_dims"(%max) {axis = 1 : i32} : (tensor<32xf32>) -> tensor<32x1xf32>
  %wide = "tile.broadcast"(%col) : (tensor<32x1xf32>) -> tensor<32x64xf32>
  %y = arith.subf %x, %wide : tensor<32x64xf32>
  %colsum = "tile.reduce"(%y) ({
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    gpu.yield %c : f32
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x64xf32>) -> tensor<64xf32>
  return
}

// expand_dims of a tensor that is not a slice along that axis converts it to a slice
// of the default layout for the result shape.
// CHECK-LABEL: func.func @expand_range
// CHECK-DAG: [[R:%.*]] = "tile.make_range"() {{.*}} -> tensor<64xi32, #[[B1D:blocked[0-9]+]]>
// CHECK: [[CVT:%.*]] = "tilegpu.convert_layout"([[R]]) : (tensor<64xi32, #[[B1D]]>) -> tensor<64xi32, #[[S0:slice[0-9]+]]>
// CHECK-NEXT: [[ROW:%.*]] = "tile.expand_dims"([[CVT]]) {axis = 0 : i32} : (tensor<64xi32, #[[S0]]>) -> tensor<1x64xi32, #[[P:blocked[0-9]+]]>
// CHECK-NEXT: "tile.broadcast"([[ROW]]) : (tensor<1x64xi32, #[[P]]>) -> tensor<16x64xi32, #[[P]]>
func.func @expand_range() {
  %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
  %row = "tile.expand_dims"(%r) {axis = 0 : i32} : (tensor<64xi32>) -> tensor<1x64xi32>
  %rows = "tile.broadcast"(%row) : (tensor<1x64xi32>) -> tensor<16x64xi32>
  return
}
