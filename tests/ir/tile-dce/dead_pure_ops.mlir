// RUN: tilec-opt %s -p tile-dce | FileCheck %s

// Unused results of pure tile, tilegpu, arith and math ops are removed, whole chains
// at once (IRDL ops carry no traits, so upstream DCE would keep them all).

// CHECK-LABEL: func.func @dead_chain
// CHECK-NEXT: return
func.func @dead_chain(%p: !tile.ptr<f32>, %x: f32) {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %n = "tile.get_num_programs"() {axis = 0 : i32} : () -> i32
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
  %s = "tile.splat"(%pid) : (i32) -> tensor<16xi32>
  %offs = arith.addi %s, %r : tensor<16xi32>
  %base = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<16x!tile.ptr<f32>>
  %ptrs = "tile.addptr"(%base, %offs) : (tensor<16x!tile.ptr<f32>>, tensor<16xi32>) -> tensor<16x!tile.ptr<f32>>
  %v = "tile.load"(%ptrs) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!tile.ptr<f32>>) -> tensor<16xf32>
  %e = math.exp %v : tensor<16xf32>
  %row = "tile.expand_dims"(%e) {axis = 0 : i32} : (tensor<16xf32>) -> tensor<1x16xf32>
  %b = "tile.broadcast"(%row) : (tensor<1x16xf32>) -> tensor<4x16xf32>
  %sum = "tile.reduce"(%b) ({
  ^bb0(%a: f32, %c: f32):
    %t = arith.addf %a, %c : f32
    gpu.yield %t : f32
  }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x16xf32>) -> tensor<4xf32>
  %i = "tile.ptr_to_int"(%p) : (!tile.ptr<f32>) -> i64
  %q = "tile.int_to_ptr"(%i) : (i64) -> !tile.ptr<f32>
  %bc = "tile.bitcast"(%q) : (!tile.ptr<f32>) -> !tile.ptr<i32>
  %k = arith.constant 3.0 : f32
  %y = arith.mulf %x, %k : f32
  return
}

// Only what feeds the store survives.
// CHECK-LABEL: func.func @partly_dead
// CHECK-NEXT: [[R:%.*]] = "tile.make_range"
// CHECK-NEXT: [[B:%.*]] = "tile.splat"(%arg0)
// CHECK-NEXT: [[P:%.*]] = "tile.addptr"([[B]], [[R]])
// CHECK-NEXT: [[V:%.*]] = "tile.load"([[P]])
// CHECK-NEXT: "tile.store"([[P]], [[V]])
// CHECK-NEXT: return
func.func @partly_dead(%p: !tile.ptr<f32>) {
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
  %base = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<16x!tile.ptr<f32>>
  %ptrs = "tile.addptr"(%base, %r) : (tensor<16x!tile.ptr<f32>>, tensor<16xi32>) -> tensor<16x!tile.ptr<f32>>
  %v = "tile.load"(%ptrs) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!tile.ptr<f32>>) -> tensor<16xf32>
  %dead = arith.addf %v, %v : tensor<16xf32>
  %dead2 = arith.mulf %dead, %v : tensor<16xf32>
  "tile.store"(%ptrs, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>) -> ()
  return
}
