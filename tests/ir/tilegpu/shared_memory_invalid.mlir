// RUN: not tilec-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Each piece breaks one rule of the shared-memory ops (tilec/dialects/tilegpu.py).

func.func @alloc_init_shape(%x: tensor<16x8xf32>) {
  // CHECK: 'tilegpu.local_alloc' op the initial value must have the buffer's shape and element type
  %a = "tilegpu.local_alloc"(%x) {operandSegmentSizes = array<i32: 1>} : (tensor<16x8xf32>) -> !tilegpu.memdesc<tensor<16x16xf32>>
  return
}

// -----

func.func @load_type(%a: !tilegpu.memdesc<tensor<16x16xf32>>) {
  // CHECK: 'tilegpu.local_load' op the result must have the buffer's shape and element type
  %x = "tilegpu.local_load"(%a) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf16>
  return
}

// -----

func.func @store_shape(%a: !tilegpu.memdesc<tensor<16x16xf32>>, %x: tensor<16xf32>) {
  // CHECK: 'tilegpu.local_store' op the stored value must have the buffer's shape
  "tilegpu.local_store"(%x, %a) : (tensor<16xf32>, !tilegpu.memdesc<tensor<16x16xf32>>) -> ()
  return
}

// -----

func.func @index_keeps_dimension(%a: !tilegpu.memdesc<tensor<2x16x16xf32>>, %i: i32) {
  // CHECK: 'tilegpu.memdesc_index' op must drop the leading dimension
  %b = "tilegpu.memdesc_index"(%a, %i) : (!tilegpu.memdesc<tensor<2x16x16xf32>>, i32) -> !tilegpu.memdesc<tensor<2x16x16xf32>>
  return
}

// -----

func.func @copy_element_type(%p: tensor<16x!tile.ptr<f16>>, %a: !tilegpu.memdesc<tensor<16xf32>>) {
  // CHECK: 'tilegpu.async_copy_global_to_local' op copies {{.*}}: needs pointers to its elements
  "tilegpu.async_copy_global_to_local"(%p, %a) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0>} : (tensor<16x!tile.ptr<f16>>, !tilegpu.memdesc<tensor<16xf32>>) -> ()
  return
}

// -----

func.func @copy_guard_type(%p: tensor<16x!tile.ptr<f32>>, %a: !tilegpu.memdesc<tensor<16xf32>>, %g: tensor<16xi1>) {
  // CHECK: expected 'i1' but got 'tensor<16xi1>'
  "tilegpu.async_copy_global_to_local"(%p, %a, %g) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1>} : (tensor<16x!tile.ptr<f32>>, !tilegpu.memdesc<tensor<16xf32>>, tensor<16xi1>) -> ()
  return
}

// -----

func.func @copy_mask_shape(%p: tensor<16x!tile.ptr<f32>>, %a: !tilegpu.memdesc<tensor<16xf32>>, %m: tensor<8xi1>) {
  // CHECK: 'tilegpu.async_copy_global_to_local' op mask must have the buffer's shape [16]
  "tilegpu.async_copy_global_to_local"(%p, %a, %m) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<16x!tile.ptr<f32>>, !tilegpu.memdesc<tensor<16xf32>>, tensor<8xi1>) -> ()
  return
}

// -----

func.func @wait_negative() {
  // CHECK: 'tilegpu.async_wait' op num must be at least 0, got -1
  "tilegpu.async_wait"() {num = -1 : i32} : () -> ()
  return
}

// -----

func.func @subview_unaligned(%a: !tilegpu.memdesc<tensor<64x32xf16>>) {
  // CHECK: 'tilegpu.memdesc_subview' op offsets [0, 8] must be in bounds and multiples of the view's shape [64, 16]
  %b = "tilegpu.memdesc_subview"(%a) {offsets = array<i32: 0, 8>} : (!tilegpu.memdesc<tensor<64x32xf16>>) -> !tilegpu.memdesc<tensor<64x16xf16>>
  return
}

// -----

func.func @subview_element_type(%a: !tilegpu.memdesc<tensor<64x32xf16>>) {
  // CHECK: 'tilegpu.memdesc_subview' op must keep the element type, encoding and rank
  %b = "tilegpu.memdesc_subview"(%a) {offsets = array<i32: 0, 16>} : (!tilegpu.memdesc<tensor<64x32xf16>>) -> !tilegpu.memdesc<tensor<64x16xf32>>
  return
}
