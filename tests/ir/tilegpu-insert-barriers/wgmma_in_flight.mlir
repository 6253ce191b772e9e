// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers | FileCheck %s

// A wgmma dot left in flight (tilegpu.wgmma_pending = 1) reads its shared operands
// until a later wait: a barrier before then does not end those reads (each warpgroup
// waits for its own groups only). The next write of those bytes gets a barrier after
// the tilegpu.wgmma_wait {0}. A dot that waits for itself (no attribute) is done
// reading when it returns: the barrier already there suffices.

// CHECK-LABEL: func.func @in_flight
// CHECK: "tile.dot"
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.wgmma_wait"
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.local_store"
// CHECK-LABEL: func.func @waited
// CHECK: "tile.dot"
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.wgmma_wait"
// CHECK-NEXT: "tilegpu.local_store"
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 8, 1>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 64, 64>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 8, 1>}>
#sa = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 128 : i32, transposed = false}>
#sb = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 128 : i32, transposed = true}>
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90"} {
  func.func @in_flight(%x: tensor<128x64xf16, #b>, %y: tensor<64x64xf16, #b>, %z: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma> {
    %a = "tilegpu.local_alloc"(%x) : (tensor<128x64xf16, #b>) -> !tilegpu.memdesc<tensor<128x64xf16, #sa>>
    %bb = "tilegpu.local_alloc"(%y) : (tensor<64x64xf16, #b>) -> !tilegpu.memdesc<tensor<64x64xf16, #sb>>
    %d = "tile.dot"(%a, %bb, %z) {input_precision = "ieee", tilegpu.wgmma_pending = 1 : i32} : (!tilegpu.memdesc<tensor<128x64xf16, #sa>>, !tilegpu.memdesc<tensor<64x64xf16, #sb>>, tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma>
    "tilegpu.barrier"() : () -> ()
    %w = "tilegpu.wgmma_wait"(%d) {pendings = 0 : i32} : (tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma>
    "tilegpu.local_store"(%x, %a) : (tensor<128x64xf16, #b>, !tilegpu.memdesc<tensor<128x64xf16, #sa>>) -> ()
    return %w : tensor<128x64xf32, #mma>
  }
  func.func @waited(%x: tensor<128x64xf16, #b>, %y: tensor<64x64xf16, #b>, %z: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma> {
    %a = "tilegpu.local_alloc"(%x) : (tensor<128x64xf16, #b>) -> !tilegpu.memdesc<tensor<128x64xf16, #sa>>
    %bb = "tilegpu.local_alloc"(%y) : (tensor<64x64xf16, #b>) -> !tilegpu.memdesc<tensor<64x64xf16, #sb>>
    %d = "tile.dot"(%a, %bb, %z) {input_precision = "ieee"} : (!tilegpu.memdesc<tensor<128x64xf16, #sa>>, !tilegpu.memdesc<tensor<64x64xf16, #sb>>, tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma>
    "tilegpu.barrier"() : () -> ()
    %w = "tilegpu.wgmma_wait"(%d) {pendings = 0 : i32} : (tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma>
    "tilegpu.local_store"(%x, %a) : (tensor<128x64xf16, #b>, !tilegpu.memdesc<tensor<128x64xf16, #sa>>) -> ()
    return %w : tensor<128x64xf32, #mma>
  }
}
