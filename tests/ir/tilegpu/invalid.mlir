// RUN: not tilec-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Each piece passes verification today and fails later in a pass or the lowering
// (or, for convert_layout, produces wrong code).

#b1 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK: error: {{.*}}'tilegpu.convert_layout' op
func.func @convert_shape(%x: f32) {
  %a = "tile.splat"(%x) : (f32) -> tensor<128xf32, #b1>
  %b = "tilegpu.convert_layout"(%a) : (tensor<128xf32, #b1>) -> tensor<256xf32, #b1>
  return
}

// -----

#b1 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#b4 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK: error: {{.*}}'tilegpu.convert_layout' op
func.func @convert_element_type(%x: f32) {
  %a = "tile.splat"(%x) : (f32) -> tensor<128xf32, #b1>
  %b = "tilegpu.convert_layout"(%a) : (tensor<128xf32, #b1>) -> tensor<128xf16, #b4>
  return
}

// -----

// 16 threads per warp.
#bad = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 16>, warpsPerCTA = array<i32: 4>}>
// CHECK: error: {{.*}}threadsPerWarp
func.func @threads_per_warp(%x: f32) {
  %a = "tile.splat"(%x) : (f32) -> tensor<128xf32, #bad>
  return
}

// -----

// A 1-D layout on a 2-D tensor.
#b1 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK: error: {{.*}}rank
func.func @encoding_rank(%x: f32) {
  %a = "tile.splat"(%x) : (f32) -> tensor<16x16xf32, #b1>
  return
}
