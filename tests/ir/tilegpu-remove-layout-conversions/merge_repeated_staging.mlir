// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// The causal attention kernel's two loops both read q from shared memory: each staging
// moves before its loop, and the second is the first (neither buffer is written
// again), so q is staged once and need not stay in registers through the first loop.

// CHECK-LABEL: func.func @two_loops
// CHECK: %[[Q:[0-9]+]] = "tilegpu.local_alloc"(%arg0)
// CHECK-NOT: "tilegpu.local_alloc"(%arg0)
// CHECK: scf.for
// CHECK: "tile.dot"(%[[Q]],
// CHECK: scf.for
// CHECK: "tile.dot"(%[[Q]],
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
#s = #tilegpu.nvmma_shared<{elementBitWidth = 16 : i32, swizzlingByteWidth = 64 : i32, transposed = false}>
#m = #tilegpu.mma<{instrShape = array<i32: 64, 32>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @two_loops(%q: tensor<64x32xf16, #b>, %k: tensor<32x32xf16, #b>, %acc0: tensor<64x32xf32, #m>, %n: index) -> tensor<64x32xf32, #m> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %ks = "tilegpu.local_alloc"(%k) : (tensor<32x32xf16, #b>) -> !tilegpu.memdesc<tensor<32x32xf16, #s>>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %acc0) -> (tensor<64x32xf32, #m>) {
      %qs = "tilegpu.local_alloc"(%q) : (tensor<64x32xf16, #b>) -> !tilegpu.memdesc<tensor<64x32xf16, #s>>
      %d = "tile.dot"(%qs, %ks, %acc) {input_precision = "ieee"} : (!tilegpu.memdesc<tensor<64x32xf16, #s>>, !tilegpu.memdesc<tensor<32x32xf16, #s>>, tensor<64x32xf32, #m>) -> tensor<64x32xf32, #m>
      scf.yield %d : tensor<64x32xf32, #m>
    }
    %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r) -> (tensor<64x32xf32, #m>) {
      %qs = "tilegpu.local_alloc"(%q) : (tensor<64x32xf16, #b>) -> !tilegpu.memdesc<tensor<64x32xf16, #s>>
      %d = "tile.dot"(%qs, %ks, %acc) {input_precision = "ieee"} : (!tilegpu.memdesc<tensor<64x32xf16, #s>>, !tilegpu.memdesc<tensor<32x32xf16, #s>>, tensor<64x32xf32, #m>) -> tensor<64x32xf32, #m>
      scf.yield %d : tensor<64x32xf32, #m>
    }
    return %r2 : tensor<64x32xf32, #m>
  }
}
