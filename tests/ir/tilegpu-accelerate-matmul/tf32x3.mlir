// RUN: tilec-opt %s --split-input-file -p tilegpu-accelerate-matmul | FileCheck %s

// An fp32 dot with input_precision "tf32x3" runs as three tf32 tensor-core dots. Each
// operand x is split into big = x with the low 13 mantissa bits cleared (exactly a tf32
// value) and small = x - big; the products small_a @ big_b and big_a @ small_b go into
// the accumulator first, big_a @ big_b last. On sm_75 (no tf32 instruction) the dot
// keeps its precision and stays on the FMA path.

// CHECK-LABEL: func.func @split
// CHECK: %[[ABITS:.+]] = arith.bitcast %arg0 : tensor<64x32xf32, #{{.*}}> to tensor<64x32xi32, #{{.*}}>
// CHECK: %[[MASK:.+]] = arith.constant -8192 : i32
// CHECK: %[[AM:.+]] = "tile.splat"(%[[MASK]]) : (i32) -> tensor<64x32xi32
// CHECK: %[[AKEPT:.+]] = arith.andi %[[ABITS]], %[[AM]]
// CHECK: %[[ABIG:.+]] = arith.bitcast %[[AKEPT]] : tensor<64x32xi32, #{{.*}}> to tensor<64x32xf32
// CHECK: %[[ASMALL:.+]] = arith.subf %arg0, %[[ABIG]]
// CHECK: %[[BBITS:.+]] = arith.bitcast %arg1
// CHECK: %[[BKEPT:.+]] = arith.andi %[[BBITS]]
// CHECK: %[[BBIG:.+]] = arith.bitcast %[[BKEPT]]
// CHECK: %[[BSMALL:.+]] = arith.subf %arg1, %[[BBIG]]
// CHECK: "tilegpu.convert_layout"(%[[ASMALL]])
// CHECK: "tilegpu.convert_layout"(%[[BBIG]])
// CHECK: %[[P1:.+]] = "tile.dot"({{.*}}) {input_precision = "tf32"} : (tensor<64x32xf32, #dot_op{{.*}}) -> tensor<64x64xf32, #mma{{.*}}>
// CHECK: "tilegpu.convert_layout"(%[[ABIG]])
// CHECK: "tilegpu.convert_layout"(%[[BSMALL]])
// CHECK: %[[P2:.+]] = "tile.dot"({{.*}}) {input_precision = "tf32"}
// CHECK: "tilegpu.convert_layout"(%[[ABIG]])
// CHECK: "tilegpu.convert_layout"(%[[BBIG]])
// CHECK: "tile.dot"({{.*}}) {input_precision = "tf32"}
// CHECK-NOT: "tile.dot"
// CHECK: return
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @split(%a: tensor<64x32xf32, #b>, %bb: tensor<32x64xf32, #b>, %acc: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %bb, %acc) {input_precision = "tf32x3"} : (tensor<64x32xf32, #b>, tensor<32x64xf32, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
}

// -----

// CHECK-LABEL: func.func @old_target
// CHECK-NOT: arith.bitcast
// CHECK: "tile.dot"(%arg0, %arg1, %arg2) {input_precision = "tf32x3"}
// CHECK-NOT: "tile.dot"
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_75"} {
  func.func @old_target(%a: tensor<64x32xf32, #b>, %bb: tensor<32x64xf32, #b>, %acc: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %bb, %acc) {input_precision = "tf32x3"} : (tensor<64x32xf32, #b>, tensor<32x64xf32, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
}
