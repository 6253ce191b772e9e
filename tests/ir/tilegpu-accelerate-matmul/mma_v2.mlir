// RUN: tilec-opt %s --split-input-file -p tilegpu-accelerate-matmul | FileCheck %s

// An fp16 dot on sm_80 goes to tensor cores: the result takes an mma v2 layout (4 warps
// as 2x2 over a 64x64 result), A and B are converted to its dot operand layouts (two
// halves per 32-bit register), the accumulator to the mma layout, and the result back
// to what its users had.

// CHECK: #dot_op0 = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>}>
// CHECK: #dot_op1 = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>}>
// CHECK: #mma0 = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>
// CHECK-LABEL: func.func @f16
// CHECK: %[[A:.+]] = "tilegpu.convert_layout"(%arg0) {{.*}} -> tensor<64x32xf16, #dot_op0>
// CHECK: %[[B:.+]] = "tilegpu.convert_layout"(%arg1) {{.*}} -> tensor<32x64xf16, #dot_op1>
// CHECK: %[[C:.+]] = "tilegpu.convert_layout"(%arg2) {{.*}} -> tensor<64x64xf32, #mma0>
// CHECK: %[[D:.+]] = "tile.dot"(%[[A]], %[[B]], %[[C]]) {{.*}} -> tensor<64x64xf32, #mma0>
// CHECK: "tilegpu.convert_layout"(%[[D]]) {{.*}} -> tensor<64x64xf32, #blocked0>
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @f16(%a: tensor<64x32xf16, #b>, %bb: tensor<32x64xf16, #b>, %c: tensor<64x64xf32, #b>, %p: tensor<64x64x!tile.ptr<f32>, #b>) {
    %d = "tile.dot"(%a, %bb, %c) {input_precision = "ieee"} : (tensor<64x32xf16, #b>, tensor<32x64xf16, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    "tile.store"(%p, %d) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #b>, tensor<64x64xf32, #b>) -> ()
    return
  }
}

// -----

// fp32 operands with input_precision tf32: m16n8k8, one element per register.
// CHECK: #dot_op0 = #tilegpu.dot_op<{kWidth = 1 : i32, opIdx = 0 : i32
// CHECK-LABEL: func.func @tf32
// CHECK: tensor<64x32xf32, #dot_op0>
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @tf32(%a: tensor<64x32xf32, #b>, %bb: tensor<32x64xf32, #b>, %c: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %bb, %c) {input_precision = "tf32"} : (tensor<64x32xf32, #b>, tensor<32x64xf32, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
}

// -----

// Full fp32 (ieee) stays on the FMA path, and so does every dot before sm_80.
// CHECK-LABEL: func.func @ieee
// CHECK-NOT: tilegpu.mma
// CHECK: return
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @ieee(%a: tensor<64x32xf32, #b>, %bb: tensor<32x64xf32, #b>, %c: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %bb, %c) {input_precision = "ieee"} : (tensor<64x32xf32, #b>, tensor<32x64xf32, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
}

// -----

// CHECK-LABEL: func.func @turing
// CHECK-NOT: tilegpu.mma
// CHECK: return
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_75"} {
  func.func @turing(%a: tensor<64x32xf16, #b>, %bb: tensor<32x64xf16, #b>, %c: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %bb, %c) {input_precision = "ieee"} : (tensor<64x32xf16, #b>, tensor<32x64xf16, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
}

// -----

// A chain of dots (attention: s = q @ k, then p @ v with p from s): both dots put every
// warp on its own rows (warpsPerCTA [4, 1]), so s's mma layout lines up with the A
// operand of the second dot and the hand-over needs no shared memory.
// CHECK: #mma0 = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-LABEL: func.func @chain
// CHECK-NOT: warpsPerCTA = array<i32: 2, 2>
// CHECK: return
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @chain(%q: tensor<64x32xf16, #b>, %k: tensor<32x64xf16, #b>, %v: tensor<64x64xf16, #b>, %z: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %s = "tile.dot"(%q, %k, %z) {input_precision = "ieee"} : (tensor<64x32xf16, #b>, tensor<32x64xf16, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    %p = arith.truncf %s : tensor<64x64xf32, #b> to tensor<64x64xf16, #b>
    %o = "tile.dot"(%p, %v, %z) {input_precision = "ieee"} : (tensor<64x64xf16, #b>, tensor<64x64xf16, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %o : tensor<64x64xf32, #b>
  }
}
