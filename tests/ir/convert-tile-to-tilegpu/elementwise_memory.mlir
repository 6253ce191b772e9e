// RUN: tilec-opt %s -p 'convert-tile-to-tilegpu{num-warps=4}' | FileCheck %s

// Elementwise ops, loads and stores take the layout of their first tensor operand and
// convert the other operands to it.

// CHECK-DAG: #[[B1:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-DAG: #[[ROWS:slice[0-9]+]] = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>}>

// CHECK-LABEL: func.func @mixed
// CHECK: [[RANGE:%.*]] = "tile.make_range"() {{.*}} -> tensor<16xi32, #[[B1]]>
// CHECK: [[SUM:%.*]] = "tile.reduce"
// CHECK: -> tensor<16xi32, #[[ROWS]]>
// The reduction result comes first: the range is converted to its layout.
// CHECK-NEXT: [[CVT:%.*]] = "tilegpu.convert_layout"([[RANGE]]) : (tensor<16xi32, #[[B1]]>) -> tensor<16xi32, #[[ROWS]]>
// CHECK-NEXT: [[ADD:%.*]] = arith.addi [[SUM]], [[CVT]] : tensor<16xi32, #[[ROWS]]>
// The range comes first: the reduction result is converted to its layout.
// CHECK-NEXT: [[CVT2:%.*]] = "tilegpu.convert_layout"([[SUM]]) : (tensor<16xi32, #[[ROWS]]>) -> tensor<16xi32, #[[B1]]>
// CHECK-NEXT: [[MASK:%.*]] = arith.cmpi slt, [[RANGE]], [[CVT2]] : tensor<16xi32, #[[B1]]>
// CHECK: [[PTRS:%.*]] = "tile.addptr"({{.*}}) : (tensor<16x!tile.ptr<i32>, #[[B1]]>, tensor<16xi32, #[[B1]]>) -> tensor<16x!tile.ptr<i32>, #[[B1]]>
// A load takes its pointers' layout; the mask and other values follow.
// CHECK-NEXT: [[OTHER:%.*]] = "tilegpu.convert_layout"([[ADD]]) : (tensor<16xi32, #[[ROWS]]>) -> tensor<16xi32, #[[B1]]>
// CHECK-NEXT: [[LOADED:%.*]] = "tile.load"([[PTRS]], [[MASK]], [[OTHER]]) {{.*}} -> tensor<16xi32, #[[B1]]>
// A store converts its value to the pointers' layout.
// CHECK: [[PTRS2:%.*]] = "tile.addptr"({{.*}}) -> tensor<16x!tile.ptr<i32>, #[[B1]]>
// CHECK-NEXT: [[VALUE:%.*]] = "tilegpu.convert_layout"([[ADD]]) : (tensor<16xi32, #[[ROWS]]>) -> tensor<16xi32, #[[B1]]>
// CHECK-NEXT: "tile.store"([[PTRS2]], [[VALUE]], [[MASK]])
// CHECK-SAME: (tensor<16x!tile.ptr<i32>, #[[B1]]>, tensor<16xi32, #[[B1]]>, tensor<16xi1, #[[B1]]>) -> ()
// CHECK-NEXT: "tile.store"([[PTRS2]], [[LOADED]])
func.func @mixed(%p: !tile.ptr<i32>, %q: !tile.ptr<i32>, %x: i32) {
  %range = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
  %tile = "tile.splat"(%x) : (i32) -> tensor<16x16xi32>
  %sum = "tile.reduce"(%tile) ({
  ^bb0(%a: i32, %b: i32):
    %c = arith.addi %a, %b : i32
    gpu.yield %c : i32
  }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16x16xi32>) -> tensor<16xi32>
  %add = arith.addi %sum, %range : tensor<16xi32>
  %mask = arith.cmpi slt, %range, %sum : tensor<16xi32>
  %base = "tile.splat"(%p) : (!tile.ptr<i32>) -> tensor<16x!tile.ptr<i32>>
  %ptrs = "tile.addptr"(%base, %range) : (tensor<16x!tile.ptr<i32>>, tensor<16xi32>) -> tensor<16x!tile.ptr<i32>>
  %loaded = "tile.load"(%ptrs, %mask, %add) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x!tile.ptr<i32>>, tensor<16xi1>, tensor<16xi32>) -> tensor<16xi32>
  %qbase = "tile.splat"(%q) : (!tile.ptr<i32>) -> tensor<16x!tile.ptr<i32>>
  %qptrs = "tile.addptr"(%qbase, %range) : (tensor<16x!tile.ptr<i32>>, tensor<16xi32>) -> tensor<16x!tile.ptr<i32>>
  "tile.store"(%qptrs, %add, %mask) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x!tile.ptr<i32>>, tensor<16xi32>, tensor<16xi1>) -> ()
  "tile.store"(%qptrs, %loaded) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<i32>>, tensor<16xi32>) -> ()
  return
}
