// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// Attention's running sum, `l = l * alpha + sum(qk, 1)`: alpha and the sum are computed
// in the row slice of the mma layout (reductions of the dot's result), while l is
// carried in a plain 1-D blocked layout, so each iteration converts both to l's layout.
// The yielded value is not a direct elementwise update of l but a tree of them (the
// add's operands are the mul and a conversion; l is an operand of the mul only), and
// the leaves other than l are conversions out of one layout: carrying l in that layout
// lets the whole tree run there. So l should become carried in the mma row slice: the
// scf.for result takes that type, the splat init is recomputed in it, no conversion is
// left in the loop, and one conversion after the loop gives the function its blocked
// result. (Before, only an update with l as a direct operand was considered.)

// CHECK-DAG: #[[ROW:slice[0-9]*]] = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>}>
// CHECK-DAG: #[[B1D:blocked[0-9]*]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-LABEL: func.func public @running_sum
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[INIT:.+]] = "tile.splat"(%cst) : (f32) -> tensor<64xf32, #[[ROW]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[L:.+]] = scf.for {{.*}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (tensor<64xf32, #[[ROW]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[ALPHA:.+]] = math.exp2 %{{.*}} : tensor<64xf32, #[[ROW]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[S:.+]] = "tile.reduce"
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[SCALED:.+]] = arith.mulf %[[ACC]], %[[ALPHA]] : tensor<64xf32, #[[ROW]]>
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[SCALED]], %[[S]] : tensor<64xf32, #[[ROW]]>
// CHECK-NEXT: scf.yield %[[NEXT]] : tensor<64xf32, #[[ROW]]>
// CHECK-NEXT: }
// CHECK-NEXT: %[[OUT:.+]] = "tilegpu.convert_layout"(%[[L]]) : (tensor<64xf32, #[[ROW]]>) -> tensor<64xf32, #[[B1D]]>
// CHECK-NEXT: return %[[OUT]]
#blocked1d = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
#dot_a = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>
#dot_b = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>
#row = #tilegpu.slice<{dim = 1 : i32, parent = #mma}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @running_sum(%q: tensor<64x32xf16, #dot_a>, %k: tensor<32x64xf16, #dot_b>, %zero: tensor<64x64xf32, #mma>, %n: i32) -> tensor<64xf32, #blocked1d> {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %l0 = "tile.splat"(%cst) : (f32) -> tensor<64xf32, #blocked1d>
    %l = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args(%acc = %l0) -> (tensor<64xf32, #blocked1d>)  : i32 {
      %qk = "tile.dot"(%q, %k, %zero) {input_precision = "ieee"} : (tensor<64x32xf16, #dot_a>, tensor<32x64xf16, #dot_b>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
      %m = "tile.reduce"(%qk) ({
      ^bb0(%x: f32, %y: f32):
        %mx = arith.maxnumf %x, %y : f32
        gpu.yield %mx : f32
      }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x64xf32, #mma>) -> tensor<64xf32, #row>
      %alpha = math.exp2 %m : tensor<64xf32, #row>
      %s = "tile.reduce"(%qk) ({
      ^bb0(%x: f32, %y: f32):
        %add = arith.addf %x, %y : f32
        gpu.yield %add : f32
      }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x64xf32, #mma>) -> tensor<64xf32, #row>
      %alpha_b = "tilegpu.convert_layout"(%alpha) : (tensor<64xf32, #row>) -> tensor<64xf32, #blocked1d>
      %s_b = "tilegpu.convert_layout"(%s) : (tensor<64xf32, #row>) -> tensor<64xf32, #blocked1d>
      %scaled = arith.mulf %acc, %alpha_b : tensor<64xf32, #blocked1d>
      %next = arith.addf %scaled, %s_b : tensor<64xf32, #blocked1d>
      scf.yield %next : tensor<64xf32, #blocked1d>
    }
    return %l : tensor<64xf32, #blocked1d>
  }
}
