// RUN: not tilec-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Each piece breaks one rule of tilegpu.extract_slice (_verify_extract_slice in
// tilec/dialects/tilegpu.py): the result is a block of the source at `offsets`, in the
// same element type, layout and rank, and the offsets are in bounds and multiples of
// the block's shape (as for memdesc_subview). The first piece follows the rules and
// must produce no error: the first error printed is the second piece's.

#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-NOT: error
func.func @valid_block(%x: tensor<128x64xf16, #b>) {
  %s = "tilegpu.extract_slice"(%x) {offsets = array<i32: 0, 48>} : (tensor<128x64xf16, #b>) -> tensor<128x16xf16, #b>
  return
}

// -----

// An offset that is not a multiple of the block's shape: [0, 8] for a 16-wide block.
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK: error: {{.*}}'tilegpu.extract_slice' op offsets [0, 8] must be in bounds and multiples of the block's shape [128, 16]
func.func @unaligned(%x: tensor<128x64xf16, #b>) {
  %s = "tilegpu.extract_slice"(%x) {offsets = array<i32: 0, 8>} : (tensor<128x64xf16, #b>) -> tensor<128x16xf16, #b>
  return
}

// -----

// Aligned, but the block [0, 64] starts past the end of a 64-wide source.
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK: 'tilegpu.extract_slice' op offsets [0, 64] must be in bounds and multiples of the block's shape [128, 16]
func.func @out_of_bounds(%x: tensor<128x64xf16, #b>) {
  %s = "tilegpu.extract_slice"(%x) {offsets = array<i32: 0, 64>} : (tensor<128x64xf16, #b>) -> tensor<128x16xf16, #b>
  return
}

// -----

// A negative offset is out of bounds too.
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK: 'tilegpu.extract_slice' op offsets [-16, 0] must be in bounds and multiples of the block's shape [16, 64]
func.func @negative(%x: tensor<128x64xf16, #b>) {
  %s = "tilegpu.extract_slice"(%x) {offsets = array<i32: -16, 0>} : (tensor<128x64xf16, #b>) -> tensor<16x64xf16, #b>
  return
}

// -----

// The result may not change the layout: extract_slice only selects registers, it
// moves nothing between threads.
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#c = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK: 'tilegpu.extract_slice' op must keep the element type, layout and rank of
func.func @layout_changed(%x: tensor<128x64xf16, #b>) {
  %s = "tilegpu.extract_slice"(%x) {offsets = array<i32: 0, 16>} : (tensor<128x64xf16, #b>) -> tensor<128x16xf16, #c>
  return
}

// -----

// Nor the element type: no conversion happens on the way.
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK: 'tilegpu.extract_slice' op must keep the element type, layout and rank of
func.func @element_type_changed(%x: tensor<128x64xf16, #b>) {
  %s = "tilegpu.extract_slice"(%x) {offsets = array<i32: 0, 16>} : (tensor<128x64xf16, #b>) -> tensor<128x16xf32, #b>
  return
}

// -----

// One offset per dimension of the source.
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK: 'tilegpu.extract_slice' op must keep the element type, layout and rank of {{.*}} at [16]
func.func @offsets_rank(%x: tensor<128x64xf16, #b>) {
  %s = "tilegpu.extract_slice"(%x) {offsets = array<i32: 16>} : (tensor<128x64xf16, #b>) -> tensor<128x16xf16, #b>
  return
}
