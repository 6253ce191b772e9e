// RUN: not tilec-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// CHECK: error: {{.*}}'tile.get_program_id' op
// (lowering: "xyz"[3] raises IndexError)
func.func @program_id_axis() {
  %0 = "tile.get_program_id"() {axis = 3 : i32} : () -> i32
  return
}

// -----

// CHECK: error: {{.*}}'tile.reduce' op
// (the result element type is not compared with the operand's or the combiner's)
func.func @reduce_result_type(%x: tensor<4x8xf32>) {
  %0 = "tile.reduce"(%x) ({
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    gpu.yield %c : f32
  }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> tensor<4xf16>
  return
}

// -----

// CHECK: error: {{.*}}'tile.store' op
// (segments claim a mask that is not there: the store silently becomes unmasked)
func.func @store_segments(%p: tensor<4x!tile.ptr<f32>>, %v: tensor<4xf32>) {
  "tile.store"(%p, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<4x!tile.ptr<f32>>, tensor<4xf32>) -> ()
  return
}

// -----

// CHECK: error: {{.*}}'tile.load' op
// (lowering: _LOAD_CACHE[".foo"] raises KeyError)
func.func @load_cache_modifier(%p: tensor<4x!tile.ptr<f32>>) {
  %0 = "tile.load"(%p) {cache = ".foo", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x!tile.ptr<f32>>) -> tensor<4xf32>
  return
}
