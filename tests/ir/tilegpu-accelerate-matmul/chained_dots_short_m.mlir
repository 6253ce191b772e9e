// RUN: tilec-opt %s -p tilegpu-accelerate-matmul | FileCheck %s

// A chain of two dots whose M (16 rows: a decode step's group of query heads, padded) is
// shorter than 16 rows per warp with 4 warps. Putting all warps along M, as longer
// chains do, would give every warp a copy of the same 16 rows: each would run the whole
// chain (4x the mma instructions, 4x the accumulator registers). M takes as many warps
// as it has 16-row tiles (one), N the rest: both dots get [1, 4], the second's A operand
// in the layout of that same mma.

// CHECK-DAG: #[[A:dot_op[0-9]*]] = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 1, 4>}>}>
// CHECK-DAG: #[[MMA:mma[0-9]*]] = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 1, 4>}>
// CHECK-DAG: #[[M4:mma[0-9]*]] = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-LABEL: func.func @decode_chain
// CHECK-NOT: tensor<16x64xf32, #[[M4]]>
// CHECK: "tile.dot"({{.*}}) -> tensor<16x64xf32, #[[MMA]]>
// CHECK: "tilegpu.convert_layout"({{.*}}) : (tensor<16x64xbf16, #{{.*}}>) -> tensor<16x64xbf16, #[[A]]>
// CHECK: "tile.dot"({{.*}} : (tensor<16x64xbf16, #[[A]]>, {{.*}}) -> tensor<16x128xf32, #[[MMA]]>
// CHECK: return

// A chain whose M has a 16-row tile per warp keeps all warps along M.
// CHECK-LABEL: func.func @prefill_chain
// CHECK: "tile.dot"({{.*}}) -> tensor<64x64xf32, #[[M4]]>
// CHECK: "tile.dot"({{.*}}) -> tensor<64x128xf32, #[[M4]]>
// CHECK: return
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @decode_chain(%q: tensor<16x128xbf16, #b>, %kt: tensor<128x64xbf16, #b>, %v: tensor<64x128xbf16, #b>, %z: tensor<16x64xf32, #b>, %acc: tensor<16x128xf32, #b>) -> tensor<16x128xf32, #b> {
    %qk = "tile.dot"(%q, %kt, %z) {input_precision = "ieee"} : (tensor<16x128xbf16, #b>, tensor<128x64xbf16, #b>, tensor<16x64xf32, #b>) -> tensor<16x64xf32, #b>
    %e = math.exp2 %qk : tensor<16x64xf32, #b>
    %p = arith.truncf %e : tensor<16x64xf32, #b> to tensor<16x64xbf16, #b>
    %o = "tile.dot"(%p, %v, %acc) {input_precision = "ieee"} : (tensor<16x64xbf16, #b>, tensor<64x128xbf16, #b>, tensor<16x128xf32, #b>) -> tensor<16x128xf32, #b>
    return %o : tensor<16x128xf32, #b>
  }
  func.func @prefill_chain(%q: tensor<64x128xbf16, #b>, %kt: tensor<128x64xbf16, #b>, %v: tensor<64x128xbf16, #b>, %z: tensor<64x64xf32, #b>, %acc: tensor<64x128xf32, #b>) -> tensor<64x128xf32, #b> {
    %qk = "tile.dot"(%q, %kt, %z) {input_precision = "ieee"} : (tensor<64x128xbf16, #b>, tensor<128x64xbf16, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    %e = math.exp2 %qk : tensor<64x64xf32, #b>
    %p = arith.truncf %e : tensor<64x64xf32, #b> to tensor<64x64xbf16, #b>
    %o = "tile.dot"(%p, %v, %acc) {input_precision = "ieee"} : (tensor<64x64xbf16, #b>, tensor<64x128xbf16, #b>, tensor<64x128xf32, #b>) -> tensor<64x128xf32, #b>
    return %o : tensor<64x128xf32, #b>
  }
}
