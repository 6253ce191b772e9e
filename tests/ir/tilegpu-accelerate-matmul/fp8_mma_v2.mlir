// RUN: tilec-opt %s --split-input-file -p tilegpu-accelerate-matmul | FileCheck %s

// An fp8 dot on sm_90 whose M (16) is too short for wgmma goes to fp16 mma.sync with its
// operands widened in the instruction's registers: each is converted, still 8-bit, to the
// fragment layout of k_width 4 (as int8's), then widened by a tile.fp_to_fp that keeps
// that layout, so the load stays an 8-bit load feeding a dot operand.

// CHECK: #dot_op0 = #tilegpu.dot_op<{kWidth = 4 : i32, opIdx = 0 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 1, 4>}>}>
// CHECK: #dot_op1 = #tilegpu.dot_op<{kWidth = 4 : i32, opIdx = 1 : i32
// CHECK-LABEL: func.func @e4m3
// CHECK: %[[A8:.+]] = "tilegpu.convert_layout"(%arg0) {{.*}} -> tensor<16x64xf8E4M3FN, #dot_op0>
// CHECK: %[[A:.+]] = "tile.fp_to_fp"(%[[A8]]) {{.*}} -> tensor<16x64xf16, #dot_op0>
// CHECK: %[[B8:.+]] = "tilegpu.convert_layout"(%arg1) {{.*}} -> tensor<64x64xf8E4M3FN, #dot_op1>
// CHECK: %[[B:.+]] = "tile.fp_to_fp"(%[[B8]]) {{.*}} -> tensor<64x64xf16, #dot_op1>
// CHECK: "tile.dot"(%[[A]], %[[B]], %{{.+}}) {{.*}} -> tensor<16x64xf32, #mma0>
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 16>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @e4m3(%a: tensor<16x64xf8E4M3FN, #b>, %bb: tensor<64x64xf8E4M3FN, #b>, %c: tensor<16x64xf32, #b>) -> tensor<16x64xf32, #b> {
    %d = "tile.dot"(%a, %bb, %c) {input_precision = "ieee"} : (tensor<16x64xf8E4M3FN, #b>, tensor<64x64xf8E4M3FN, #b>, tensor<16x64xf32, #b>) -> tensor<16x64xf32, #b>
    return %d : tensor<16x64xf32, #b>
  }
}

// -----

// A K of 16 is shorter than one 8-bit instruction (32 deep): the operands are widened
// first, to the fp16 fragments (k_width 2).
// CHECK-LABEL: func.func @short_k
// CHECK: "tile.fp_to_fp"(%arg0) {{.*}} -> tensor<16x16xf16, #blocked0>
// CHECK: "tilegpu.convert_layout"({{.*}}) {{.*}} -> tensor<16x16xf16, #dot_op{{[0-9]+}}>
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 16>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @short_k(%a: tensor<16x16xf8E5M2, #b>, %bb: tensor<16x64xf8E5M2, #b>, %c: tensor<16x64xf32, #b>) -> tensor<16x64xf32, #b> {
    %d = "tile.dot"(%a, %bb, %c) {input_precision = "ieee"} : (tensor<16x16xf8E5M2, #b>, tensor<16x64xf8E5M2, #b>, tensor<16x64xf32, #b>) -> tensor<16x64xf32, #b>
    return %d : tensor<16x64xf32, #b>
  }
}
