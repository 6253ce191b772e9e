// RUN: tilec-opt %s | FileCheck %s
// RUN: tilec-opt %s --generic | FileCheck %s --check-prefix=GENERIC

// Layout encodings round-trip, in the alias form print_module emits (#blocked0 = ...,
// numbered per kind in order of first use) and written inline; equal encodings share
// one alias, whichever way they were written.

#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>}>
#col = #tilegpu.slice<{dim = 0 : i32, parent = #blocked1}>

// CHECK: #blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-NEXT: #slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>}>
// CHECK-NEXT: #slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>}>
// CHECK-NEXT: #blocked1 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-NEXT: module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
// CHECK-NEXT: func.func @layouts(%arg0: tensor<32x64xf32, #blocked0>)
// CHECK-NEXT: "tile.reduce"(%arg0)
// CHECK: : (tensor<32x64xf32, #blocked0>) -> tensor<32xf32, #slice0>
// CHECK: [[R:%.*]] = "tile.make_range"() {{.*}} -> tensor<64xi32, #slice1>
// CHECK-NEXT: [[A:%.*]] = "tilegpu.convert_layout"([[R]]) : (tensor<64xi32, #slice1>) -> tensor<64xi32, #blocked1>
// CHECK-NEXT: "tilegpu.convert_layout"([[A]]) : (tensor<64xi32, #blocked1>) -> tensor<64xi32, #blocked1>
// CHECK-NEXT: "tile.expand_dims"([[R]]) {axis = 0 : i32} : (tensor<64xi32, #slice1>) -> tensor<1x64xi32, #blocked0>
// CHECK-NEXT: arith.constant dense<1.000000e+00> : tensor<1024xf16, #blocked1>

// --generic prints the encodings in full, and no alias.
// GENERIC-NOT: #blocked0
// GENERIC: "func.func"()
// GENERIC: tensor<32x64xf32, #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>>
// GENERIC: tensor<64xi32, #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>}>>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @layouts(%x: tensor<32x64xf32, #blocked1>) {
    %sum = "tile.reduce"(%x) ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gpu.yield %c : f32
    }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x64xf32, #blocked1>) -> tensor<32xf32, #slice0>
    %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32, #col>
    %a = "tilegpu.convert_layout"(%r) : (tensor<64xi32, #col>) -> tensor<64xi32, #blocked0>
    %b = "tilegpu.convert_layout"(%a) : (tensor<64xi32, #blocked0>) -> tensor<64xi32, #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>>
    %e = "tile.expand_dims"(%r) {axis = 0 : i32} : (tensor<64xi32, #col>) -> tensor<1x64xi32, #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>>
    %k = arith.constant dense<1.0> : tensor<1024xf16, #blocked0>
    return
  }
}
