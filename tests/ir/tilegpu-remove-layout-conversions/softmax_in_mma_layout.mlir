// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// The softmax of attention, as tilegpu-accelerate-matmul leaves it: qk comes out of the
// dot in the mma layout and is converted to a blocked layout, where `qk - m[:, None]`,
// exp2 and the row sum run; m, the row max, is reduced from the mma value directly, so
// it is in the mma layout's row slice and is converted to the blocked one only to be
// expanded and broadcast. The subtraction, exp2 and the sum should run in the mma layout
// instead (the dot's registers as they are), which needs m[:, None] recomputed there:
// tile.expand_dims of a slice-of-mma value gives an mma tensor. (expand_dims used to be
// recomputed only into blocked layouts, so qk's 2-D conversion stayed in the loop: a
// shared-memory round trip on every iteration.) After the pass, no conversion remains
// in the loop, and the running sum stays in the mma row slice it starts in.

// CHECK-DAG: #[[MMA:mma[0-9]*]] = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-DAG: #[[ROW:slice[0-9]*]] = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>}>
// CHECK-LABEL: func.func public @softmax
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.for {{.*}} -> (tensor<64xf32, #[[ROW]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[QK:.+]] = "tile.dot"({{.*}}) -> tensor<64x64xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[M:.+]] = "tile.reduce"(%[[QK]])
// CHECK: arith.maxnumf
// CHECK: (tensor<64x64xf32, #[[MMA]]>) -> tensor<64xf32, #[[ROW]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[COL:.+]] = "tile.expand_dims"(%[[M]]) {axis = 1 : i32} : (tensor<64xf32, #[[ROW]]>) -> tensor<64x1xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[M2D:.+]] = "tile.broadcast"(%[[COL]]) : (tensor<64x1xf32, #[[MMA]]>) -> tensor<64x64xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[S:.+]] = arith.subf %[[QK]], %[[M2D]] : tensor<64x64xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[P:.+]] = math.exp2 %[[S]] : tensor<64x64xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[SUM:.+]] = "tile.reduce"(%[[P]])
// CHECK: arith.addf
// CHECK: (tensor<64x64xf32, #[[MMA]]>) -> tensor<64xf32, #[[ROW]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[NEXT:.+]] = arith.addf %{{.*}}, %[[SUM]] : tensor<64xf32, #[[ROW]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.yield %[[NEXT]] : tensor<64xf32, #[[ROW]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
#blocked = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
#dot_a = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>
#dot_b = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>
#row_b = #tilegpu.slice<{dim = 1 : i32, parent = #blocked}>
#row_m = #tilegpu.slice<{dim = 1 : i32, parent = #mma}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @softmax(%q: tensor<64x32xf16, #dot_a>, %k: tensor<32x64xf16, #dot_b>, %zero: tensor<64x64xf32, #mma>, %l0: tensor<64xf32, #row_m>, %n: i32) -> tensor<64xf32, #row_m> {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %l = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args(%acc = %l0) -> (tensor<64xf32, #row_m>)  : i32 {
      %qk = "tile.dot"(%q, %k, %zero) {input_precision = "ieee"} : (tensor<64x32xf16, #dot_a>, tensor<32x64xf16, #dot_b>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
      %m = "tile.reduce"(%qk) ({
      ^bb0(%x: f32, %y: f32):
        %mx = arith.maxnumf %x, %y : f32
        gpu.yield %mx : f32
      }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x64xf32, #mma>) -> tensor<64xf32, #row_m>
      %qk_b = "tilegpu.convert_layout"(%qk) : (tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #blocked>
      %m_b = "tilegpu.convert_layout"(%m) : (tensor<64xf32, #row_m>) -> tensor<64xf32, #row_b>
      %m_col = "tile.expand_dims"(%m_b) {axis = 1 : i32} : (tensor<64xf32, #row_b>) -> tensor<64x1xf32, #blocked>
      %m_2d = "tile.broadcast"(%m_col) : (tensor<64x1xf32, #blocked>) -> tensor<64x64xf32, #blocked>
      %s = arith.subf %qk_b, %m_2d : tensor<64x64xf32, #blocked>
      %p = math.exp2 %s : tensor<64x64xf32, #blocked>
      %sum = "tile.reduce"(%p) ({
      ^bb0(%x: f32, %y: f32):
        %add = arith.addf %x, %y : f32
        gpu.yield %add : f32
      }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x64xf32, #blocked>) -> tensor<64xf32, #row_b>
      %sum_m = "tilegpu.convert_layout"(%sum) : (tensor<64xf32, #row_b>) -> tensor<64xf32, #row_m>
      %next = arith.addf %acc, %sum_m : tensor<64xf32, #row_m>
      scf.yield %next : tensor<64xf32, #row_m>
    }
    return %l : tensor<64xf32, #row_m>
  }
}
