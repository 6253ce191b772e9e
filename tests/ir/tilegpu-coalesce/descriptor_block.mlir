// RUN: tilec-opt %s -p tilegpu-coalesce | FileCheck %s

// A host descriptor's [64, 128] f16 load (a TMA block the threads read from shared
// memory) has no pointers to follow: each thread takes 8 halves (16 bytes) of a row,
// 16 lanes to a row, and the block goes back to its old layout for its user.

// CHECK-DAG: #[[ROWS:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-LABEL: func.func @descriptor_block
// CHECK: [[X:%.*]] = "tile.descriptor_load"
// CHECK: (!tile.ptr<i8>, i32, i32) -> tensor<64x128xf16, #[[ROWS]]>
// CHECK-NEXT: [[Y:%.*]] = "tilegpu.convert_layout"([[X]]) : (tensor<64x128xf16, #[[ROWS]]>) -> tensor<64x128xf16, #blocked{{[0-9]+}}>
// CHECK-NEXT: "tilegpu.local_alloc"([[Y]])
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 1, 4>}>
#nvmma = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 128 : i32, transposed = false}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @descriptor_block(%desc: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %row: i32) {
    %c0_i32 = arith.constant 0 : i32
    %x = "tile.descriptor_load"(%desc, %row, %c0_i32) ({
      gpu.yield
    }) {operandSegmentSizes = array<i32: 1, 2>} : (!tile.ptr<i8>, i32, i32) -> tensor<64x128xf16, #blocked0>
    %buf = "tilegpu.local_alloc"(%x) : (tensor<64x128xf16, #blocked0>) -> !tilegpu.memdesc<tensor<64x128xf16, #nvmma>>
    return
  }
}
