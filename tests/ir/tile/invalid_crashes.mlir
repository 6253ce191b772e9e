// RUN: not tilec-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed ops that reach the tilec verifiers (IRDL lets them through) must be
// reported as errors, not crash tilec-opt with a Python traceback.

// A reduction without a combiner block: _verify_reduce reads blocks[0].
func.func @reduce_without_combiner(%x: tensor<4xf32>) {
  // CHECK: error: {{.*}}'tile.reduce' op
  %0 = "tile.reduce"(%x) ({}) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> f32
  return
}

// -----

// operandSegmentSizes that do not add up to the operands: IRDL does not check the
// sum, and store_operands() then returns None for the value.
func.func @store_segments(%p: !tile.ptr<f32>, %v: f32) {
  // CHECK: error: {{.*}}'tile.store' op
  "tile.store"(%p, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>} : (!tile.ptr<f32>, f32) -> ()
  return
}
