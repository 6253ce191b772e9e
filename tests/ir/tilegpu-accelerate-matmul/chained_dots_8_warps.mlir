// RUN: tilec-opt %s -p tilegpu-accelerate-matmul | FileCheck %s

// A chain of two dots with 8 warps (attention's s = q @ k, then p @ v with p computed
// elementwise from s and truncated to f16), with a 128x64 result. Alone, a 128x64 dot
// would split 8 warps as [4, 2]; in a chain, both dots must put all 8 warps along M
// ([8, 1]), so the first dot's result holds exactly the rows of the second's A operand
// and the hand-over stays in registers. The first dot gets [8, 1] because it feeds
// another; the second must get it because it is fed by another, which the pass once
// missed (it matched the fed dots by the id() of their Python wrappers, which differ
// from one lookup to the next), giving the second dot a second, [4, 2], mma layout.
// Checked: one mma layout, [8, 1], used by both dots (results and operands).

// CHECK-NOT: warpsPerCTA = array<i32: 4, 2>
// CHECK-DAG: #[[A:dot_op[0-9]*]] = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 8, 1>}>}>
// CHECK-DAG: #[[B:dot_op[0-9]*]] = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 8, 1>}>}>
// CHECK-DAG: #[[MMA:mma[0-9]*]] = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 8, 1>}>
// CHECK-NOT: warpsPerCTA = array<i32: 4, 2>
// CHECK-LABEL: func.func @chain8
// CHECK: %[[S:.+]] = "tile.dot"({{.*}}) {input_precision = "ieee"} : (tensor<128x64xf16, #[[A]]>, tensor<64x64xf16, #[[B]]>, tensor<128x64xf32, #[[MMA]]>) -> tensor<128x64xf32, #[[MMA]]>
// CHECK: %[[P:.+]] = arith.truncf
// CHECK: "tilegpu.convert_layout"(%[[P]]) : (tensor<128x64xf16, #{{.*}}>) -> tensor<128x64xf16, #[[A]]>
// CHECK: %[[O:.+]] = "tile.dot"({{.*}}) {input_precision = "ieee"} : (tensor<128x64xf16, #[[A]]>, tensor<64x64xf16, #[[B]]>, tensor<128x64xf32, #[[MMA]]>) -> tensor<128x64xf32, #[[MMA]]>
// CHECK: return
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 8, 1>}>
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_80"} {
  func.func @chain8(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %v: tensor<64x64xf16, #b>, %z: tensor<128x64xf32, #b>, %scale: f32) -> tensor<128x64xf32, #b> {
    %qk = "tile.dot"(%q, %k, %z) {input_precision = "ieee"} : (tensor<128x64xf16, #b>, tensor<64x64xf16, #b>, tensor<128x64xf32, #b>) -> tensor<128x64xf32, #b>
    %s = "tile.splat"(%scale) : (f32) -> tensor<128x64xf32, #b>
    %scaled = arith.mulf %qk, %s : tensor<128x64xf32, #b>
    %e = math.exp2 %scaled : tensor<128x64xf32, #b>
    %p = arith.truncf %e : tensor<128x64xf32, #b> to tensor<128x64xf16, #b>
    %o = "tile.dot"(%p, %v, %z) {input_precision = "ieee"} : (tensor<128x64xf16, #b>, tensor<64x64xf16, #b>, tensor<128x64xf32, #b>) -> tensor<128x64xf32, #b>
    return %o : tensor<128x64xf32, #b>
  }
}
