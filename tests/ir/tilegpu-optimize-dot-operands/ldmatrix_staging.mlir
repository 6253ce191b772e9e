// RUN: tilec-opt %s -p tilegpu-optimize-dot-operands | FileCheck %s

// Conversions into tensor-core operand layouts become a swizzled buffer and a local
// load (read with ldmatrix): A [64, 32] f16 held K-fastest has 64-byte rows, so two rows
// share a 128-byte line (perPhase 2, maxPhase 4); B [32, 64] has 128-byte rows (perPhase
// 1, maxPhase 8). 16-byte vectors (8 halves) stay whole. Other conversions stay.

// CHECK: #shared0 = #tilegpu.shared<{maxPhase = 4 : i32, order = array<i32: 1, 0>, perPhase = 2 : i32, vec = 8 : i32}>
// CHECK: #shared1 = #tilegpu.shared<{maxPhase = 8 : i32, order = array<i32: 1, 0>, perPhase = 1 : i32, vec = 8 : i32}>
// CHECK-LABEL: func.func @operands
// CHECK: %[[ABUF:[0-9]+]] = "tilegpu.local_alloc"(%arg0) {{.*}} -> !tilegpu.memdesc<tensor<64x32xf16, #shared0>>
// Then the dot, sliced along K into two dots one instruction (16) deep, each loading
// only its slice of A and B. The first slices are read where the first operand was
// loaded (before anything else between there and the dot: in a pipelined loop, before
// the next stage's copies), the others at the dot.
// CHECK-NEXT: %[[A0:[0-9]+]] = "tilegpu.memdesc_subview"(%[[ABUF]]) {offsets = array<i32: 0, 0>} {{.*}} -> !tilegpu.memdesc<tensor<64x16xf16, #shared0>>
// CHECK-NEXT: %[[LA0:[0-9]+]] = "tilegpu.local_load"(%[[A0]]) {{.*}} -> tensor<64x16xf16, #dot_op0>
// CHECK: %[[BBUF:[0-9]+]] = "tilegpu.local_alloc"(%arg1) {{.*}} -> !tilegpu.memdesc<tensor<32x64xf16, #shared1>>
// CHECK-NEXT: %[[B0:[0-9]+]] = "tilegpu.memdesc_subview"(%[[BBUF]]) {offsets = array<i32: 0, 0>} {{.*}} -> !tilegpu.memdesc<tensor<16x64xf16, #shared1>>
// CHECK-NEXT: %[[LB0:[0-9]+]] = "tilegpu.local_load"(%[[B0]]) {{.*}} -> tensor<16x64xf16, #dot_op1>
// CHECK-NEXT: %[[C:[0-9]+]] = "tilegpu.convert_layout"(%arg2)
// CHECK-NEXT: %[[D0:[0-9]+]] = "tile.dot"(%[[LA0]], %[[LB0]], %[[C]])
// CHECK-NEXT: %[[A1:[0-9]+]] = "tilegpu.memdesc_subview"(%[[ABUF]]) {offsets = array<i32: 0, 16>}
// CHECK-NEXT: %[[LA1:[0-9]+]] = "tilegpu.local_load"(%[[A1]])
// CHECK-NEXT: %[[B1:[0-9]+]] = "tilegpu.memdesc_subview"(%[[BBUF]]) {offsets = array<i32: 16, 0>}
// CHECK-NEXT: %[[LB1:[0-9]+]] = "tilegpu.local_load"(%[[B1]])
// CHECK-NEXT: %[[D1:[0-9]+]] = "tile.dot"(%[[LA1]], %[[LB1]], %[[D0]])
// CHECK-NOT: "tilegpu.convert_layout"
// CHECK: return %[[D1]]
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>
#opa = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>
#opb = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @operands(%a: tensor<64x32xf16, #b>, %bb: tensor<32x64xf16, #b>, %c: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #mma> {
    %a2 = "tilegpu.convert_layout"(%a) : (tensor<64x32xf16, #b>) -> tensor<64x32xf16, #opa>
    %b2 = "tilegpu.convert_layout"(%bb) : (tensor<32x64xf16, #b>) -> tensor<32x64xf16, #opb>
    %c2 = "tilegpu.convert_layout"(%c) : (tensor<64x64xf32, #b>) -> tensor<64x64xf32, #mma>
    %d = "tile.dot"(%a2, %b2, %c2) {input_precision = "ieee"} : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
    return %d : tensor<64x64xf32, #mma>
  }
}
