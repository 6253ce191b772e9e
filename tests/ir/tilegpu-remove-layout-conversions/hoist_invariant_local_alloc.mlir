// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// A shared buffer staged in a loop from a value defined before it (attention's q, which
// wgmma reads from shared memory) is never written again: it moves before the loop and
// is staged once. A buffer staged from a value of the loop stays.

// CHECK-LABEL: func.func @hoist
// CHECK: %[[Q:[0-9]+]] = "tilegpu.local_alloc"(%arg0)
// CHECK-NEXT: scf.for
// CHECK: %[[K:.+]] = "tile.load"
// CHECK: "tilegpu.local_alloc"(%[[K]])
// CHECK: "tile.dot"(%[[Q]],
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
#s = #tilegpu.nvmma_shared<{elementBitWidth = 16 : i32, swizzlingByteWidth = 64 : i32, transposed = false}>
#m = #tilegpu.mma<{instrShape = array<i32: 64, 32>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @hoist(%q: tensor<64x32xf16, #b>, %kp: tensor<32x32x!tile.ptr<f16>, #b>, %acc0: tensor<64x32xf32, #m>, %n: index) -> tensor<64x32xf32, #m> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %acc0) -> (tensor<64x32xf32, #m>) {
      %qs = "tilegpu.local_alloc"(%q) : (tensor<64x32xf16, #b>) -> !tilegpu.memdesc<tensor<64x32xf16, #s>>
      %k = "tile.load"(%kp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #b>) -> tensor<32x32xf16, #b>
      %ks = "tilegpu.local_alloc"(%k) : (tensor<32x32xf16, #b>) -> !tilegpu.memdesc<tensor<32x32xf16, #s>>
      %d = "tile.dot"(%qs, %ks, %acc) {input_precision = "ieee"} : (!tilegpu.memdesc<tensor<64x32xf16, #s>>, !tilegpu.memdesc<tensor<32x32xf16, #s>>, tensor<64x32xf32, #m>) -> tensor<64x32xf32, #m>
      scf.yield %d : tensor<64x32xf32, #m>
    }
    return %r : tensor<64x32xf32, #m>
  }
}
