// RUN: tilec-opt %s -p 'convert-tile-to-tilegpu{num-warps=1}' | FileCheck %s --check-prefixes=CHECK,W1
// RUN: tilec-opt %s -p 'convert-tile-to-tilegpu{num-warps=4}' | FileCheck %s --check-prefixes=CHECK,W4
// RUN: tilec-opt %s -p 'convert-tile-to-tilegpu{num-warps=8 target=sm_80}' | FileCheck %s --check-prefixes=CHECK,W8

// Sources get the default blocked layout: one element per thread, lanes and then warps
// along the fastest (last) dimension as far as it has room, the rest along the slowest.

// W1: #blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 1>}>
// W1: #blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 1, 1>}>
// W1: #blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 1, 1>}>
// W1: module attributes {"tilegpu.num-warps" = 1 : i32, tilegpu.target = "sm_90"}

// W4: #blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// W4: #blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
// W4: #blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// W4: module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"}

// W8: #blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 8>}>
// W8: #blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 2>}>
// W8: #blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 8, 1>}>
// W8: module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_80"}

// CHECK-LABEL: func.func @sources
// CHECK: "tile.make_range"() {{.*}} -> tensor<1024xi32, #blocked0>
// CHECK: "tile.splat"(%arg0) : (f32) -> tensor<32x64xf32, #blocked1>
// CHECK: arith.constant dense<0> : tensor<128x8xi32, #blocked2>
// A scalar stays a scalar.
// CHECK: arith.addf %arg0, %arg0 : f32
func.func @sources(%x: f32) {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %s = "tile.splat"(%x) : (f32) -> tensor<32x64xf32>
  %c = arith.constant dense<0> : tensor<128x8xi32>
  %y = arith.addf %x, %x : f32
  return
}
