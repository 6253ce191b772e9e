// RUN: tilec-opt %s --split-input-file -p tilegpu-remove-layout-conversions | FileCheck %s

// An fp8 operand of f16 mma.sync: the load is converted, still 8-bit, to the fragment
// layout and widened there. The load is expensive, but the conversion does not sink
// past the widening: it would then convert twice the bytes, into a 16-bit layout of
// k_width 4 that no shared-memory read serves.

// CHECK-LABEL: func.func @fp8_operand
// CHECK: %[[L:.+]] = "tile.load"
// CHECK: %[[C:.+]] = "tilegpu.convert_layout"(%[[L]]) {{.*}} -> tensor<16x64xf8E4M3FN, #dot_op{{[0-9]*}}>
// CHECK: "tile.fp_to_fp"(%[[C]]) {{.*}} -> tensor<16x64xf16, #dot_op{{[0-9]*}}>
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 16>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 1, 4>}>
#a = #tilegpu.dot_op<{kWidth = 4 : i32, opIdx = 0 : i32, parent = #mma}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @fp8_operand(%p: tensor<16x64x!tile.ptr<f8E4M3FN>, #b>) -> tensor<16x64xf16, #a> {
    %x = "tile.load"(%p) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<16x64x!tile.ptr<f8E4M3FN>, #b>) -> tensor<16x64xf8E4M3FN, #b>
    %c = "tilegpu.convert_layout"(%x) : (tensor<16x64xf8E4M3FN, #b>) -> tensor<16x64xf8E4M3FN, #a>
    %w = "tile.fp_to_fp"(%c) : (tensor<16x64xf8E4M3FN, #a>) -> tensor<16x64xf16, #a>
    return %w : tensor<16x64xf16, #a>
  }
}
