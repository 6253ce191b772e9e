// RUN: not tilec-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Each piece breaks one of the rules tilec checks beyond IRDL (tilec/dialects/tile.py).

func.func @make_range_shape() {
  // CHECK: 'tile.make_range' op result shape [64] does not match the range [0, 128)
  %0 = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<64xi32>
  return
}

// -----

func.func @make_range_type() {
  // CHECK: 'tile.make_range' op result must be a tensor of i32
  %0 = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi64>
  return
}

// -----

func.func @splat_tensor(%x: tensor<4xf32>) {
  // CHECK: 'tile.splat' op source of splat must be a scalar
  %0 = "tile.splat"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @splat_type(%x: f16) {
  // CHECK: 'tile.splat' op result element type f32 differs from the scalar type f16
  %0 = "tile.splat"(%x) : (f16) -> tensor<4xf32>
  return
}

// -----

func.func @broadcast_rank(%x: tensor<4xf32>) {
  // CHECK: 'tile.broadcast' op broadcast cannot change the rank (1 to 2)
  %0 = "tile.broadcast"(%x) : (tensor<4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast_shape(%x: tensor<2x4xf32>) {
  // CHECK: 'tile.broadcast' op cannot broadcast shape [2, 4] to [8, 4]
  %0 = "tile.broadcast"(%x) : (tensor<2x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @broadcast_type(%x: tensor<1x4xf32>) {
  // CHECK: 'tile.broadcast' op broadcast cannot change the element type
  %0 = "tile.broadcast"(%x) : (tensor<1x4xf32>) -> tensor<8x4xf16>
  return
}

// -----

func.func @expand_dims(%x: tensor<4xf32>) {
  // CHECK: 'tile.expand_dims' op expanding [4] at axis 0 does not give [4, 1]
  %0 = "tile.expand_dims"(%x) {axis = 0 : i32} : (tensor<4xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @expand_dims_axis(%x: tensor<4xf32>) {
  // CHECK: 'tile.expand_dims' op expanding [4] at axis 2 does not give [4, 1]
  %0 = "tile.expand_dims"(%x) {axis = 2 : i32} : (tensor<4xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @addptr_not_pointer(%x: tensor<4xi64>, %o: tensor<4xi32>) {
  // CHECK: 'tile.addptr' op first operand must be a pointer or tensor of pointers, got tensor<4xi64>
  %0 = "tile.addptr"(%x, %o) : (tensor<4xi64>, tensor<4xi32>) -> tensor<4xi64>
  return
}

// -----

func.func @addptr_float_offset(%p: tensor<4x!tile.ptr<f32>>, %o: tensor<4xf32>) {
  // CHECK: 'tile.addptr' op offset must be an integer or tensor of integers, got tensor<4xf32>
  %0 = "tile.addptr"(%p, %o) : (tensor<4x!tile.ptr<f32>>, tensor<4xf32>) -> tensor<4x!tile.ptr<f32>>
  return
}

// -----

func.func @addptr_shape(%p: tensor<4x!tile.ptr<f32>>, %o: tensor<8xi32>) {
  // CHECK: 'tile.addptr' op pointer, offset and result must have the same shape, and the result the pointer's type
  %0 = "tile.addptr"(%p, %o) : (tensor<4x!tile.ptr<f32>>, tensor<8xi32>) -> tensor<4x!tile.ptr<f32>>
  return
}

// -----

func.func @addptr_result(%p: tensor<4x!tile.ptr<f32>>, %o: tensor<4xi32>) {
  // CHECK: 'tile.addptr' op pointer, offset and result must have the same shape, and the result the pointer's type
  %0 = "tile.addptr"(%p, %o) : (tensor<4x!tile.ptr<f32>>, tensor<4xi32>) -> tensor<4x!tile.ptr<f16>>
  return
}

// -----

func.func @load_not_pointer(%p: tensor<4xi64>) {
  // CHECK: 'tile.load' op load needs a pointer operand, got tensor<4xi64>
  %0 = "tile.load"(%p) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @load_type(%p: tensor<4x!tile.ptr<f32>>) {
  // CHECK: 'tile.load' op loading f32 cannot produce f16
  %0 = "tile.load"(%p) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x!tile.ptr<f32>>) -> tensor<4xf16>
  return
}

// -----

func.func @load_mask_shape(%p: tensor<4x!tile.ptr<f32>>, %m: tensor<8xi1>) {
  // CHECK: 'tile.load' op mask shape [8] differs from pointer shape [4]
  %0 = "tile.load"(%p, %m) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x!tile.ptr<f32>>, tensor<8xi1>) -> tensor<4xf32>
  return
}

// -----

func.func @load_other_shape(%p: tensor<4x!tile.ptr<f32>>, %m: tensor<4xi1>, %o: tensor<2xf32>) {
  // CHECK: 'tile.load' op other shape [2] differs from pointer shape [4]
  %0 = "tile.load"(%p, %m, %o) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<4x!tile.ptr<f32>>, tensor<4xi1>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @load_mask_type(%p: tensor<4x!tile.ptr<f32>>, %m: tensor<4xi32>) {
  // CHECK: 'tile.load' op mask must be i1
  %0 = "tile.load"(%p, %m) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x!tile.ptr<f32>>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @load_result_shape(%p: tensor<4x!tile.ptr<f32>>) {
  // CHECK: 'tile.load' op result shape differs from pointer shape
  %0 = "tile.load"(%p) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x!tile.ptr<f32>>) -> tensor<8xf32>
  return
}

// -----

func.func @store_not_pointer(%p: tensor<4xi64>, %v: tensor<4xi64>) {
  // CHECK: 'tile.store' op store needs a pointer operand, got tensor<4xi64>
  "tile.store"(%p, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4xi64>, tensor<4xi64>) -> ()
  return
}

// -----

func.func @store_type(%p: tensor<4x!tile.ptr<f32>>, %v: tensor<4xf16>) {
  // CHECK: 'tile.store' op stored value type differs from the pointee type
  "tile.store"(%p, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x!tile.ptr<f32>>, tensor<4xf16>) -> ()
  return
}

// -----

func.func @store_value_shape(%p: tensor<4x!tile.ptr<f32>>, %v: tensor<8xf32>) {
  // CHECK: 'tile.store' op pointer, value and mask must have the same shape
  "tile.store"(%p, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x!tile.ptr<f32>>, tensor<8xf32>) -> ()
  return
}

// -----

func.func @store_mask_shape(%p: tensor<4x!tile.ptr<f32>>, %v: tensor<4xf32>, %m: tensor<2xi1>) {
  // CHECK: 'tile.store' op pointer, value and mask must have the same shape
  "tile.store"(%p, %v, %m) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<4x!tile.ptr<f32>>, tensor<4xf32>, tensor<2xi1>) -> ()
  return
}

// -----

func.func @reduce_axis(%x: tensor<4x8xf32>) {
  // CHECK: 'tile.reduce' op axis 2 out of range for rank 2
  %0 = "tile.reduce"(%x) ({
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    gpu.yield %c : f32
  }) {axis = 2 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reduce_operand_shapes(%x: tensor<4x8xf32>, %i: tensor<4x4xi32>) {
  // CHECK: 'tile.reduce' op all reduced operands must have the same shape
  %0:2 = "tile.reduce"(%x, %i) ({
  ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
    gpu.yield %a, %ai : f32, i32
  }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>, tensor<4x4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
  return
}

// -----

func.func @reduce_result_shape(%x: tensor<4x8xf32>) {
  // CHECK: 'tile.reduce' op result shape [8] should be [4]
  %0 = "tile.reduce"(%x) ({
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    gpu.yield %c : f32
  }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @reduce_combiner_arity(%x: tensor<4x8xf32>) {
  // CHECK: 'tile.reduce' op combiner takes 3 arguments; expected 2
  %0 = "tile.reduce"(%x) ({
  ^bb0(%a: f32, %b: f32, %extra: f32):
    %c = arith.addf %a, %b : f32
    gpu.yield %c : f32
  }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @atomic_load_release(%p: !tile.ptr<i32>) {
  // CHECK: 'tile.atomic_load' op memory semantics 'release' is not one of ['relaxed', 'acquire']
  %0 = "tile.atomic_load"(%p) {operandSegmentSizes = array<i32: 1, 0>, scope = "gpu", sem = "release"} : (!tile.ptr<i32>) -> i32
  return
}

// -----

func.func @atomic_store_type(%p: !tile.ptr<i32>, %v: i64) {
  // CHECK: 'tile.atomic_store' op the value must have the pointee type and the pointer's shape
  "tile.atomic_store"(%p, %v) {operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "release"} : (!tile.ptr<i32>, i64) -> ()
  return
}

// -----

func.func @atomic_poll_float(%p: !tile.ptr<f32>, %v: f32) {
  // CHECK: 'tile.atomic_poll' op polls a 16-, 32- or 64-bit integer, not f32
  %0 = "tile.atomic_poll"(%p, %v) {operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "acquire"} : (!tile.ptr<f32>, f32) -> i1
  return
}

// -----

func.func @special_register_type() {
  // CHECK: 'tile.special_register' op %globaltimer is read as i64, not i32
  %0 = "tile.special_register"() {name = "globaltimer"} : () -> i32
  return
}

// -----

func.func @map_elementwise_pack_arity(%x: tensor<8xi32>) {
  // CHECK: 'tile.map_elementwise' op the body takes 2 scalar(s) of each operand's element type, operand by operand
  %0 = "tile.map_elementwise"(%x) ({
  ^bb0(%a: i32):
    gpu.yield %a, %a : i32, i32
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, pack = 2 : i32, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<8xi32>) -> tensor<8xi32>
  return
}
