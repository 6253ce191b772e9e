// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// A tensor-core accumulator that is rescaled before each dot (attention's
// `acc = acc * alpha[:, None]`, here by a splat scalar): the loop carries it in a
// blocked layout, multiplies it there, converts the product to the mma layout for the
// dot, and yields the dot's result converted back. The loop yields a conversion out of
// mma, so the accumulator should be carried in mma, even though its first use is the
// multiplication rather than a conversion to mma (which, before, every use had to be);
// the multiplication then runs in mma too (the splat is recomputed there), and the loop
// is left without any conversion: the init splat is recomputed in mma and one
// conversion after the loop gives the blocked result.

// CHECK-DAG: #[[MMA:mma[0-9]*]] = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-DAG: #[[BLOCKED:blocked[0-9]*]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
// CHECK-LABEL: func.func public @rescaled_acc
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[INIT:.+]] = "tile.splat"(%cst) : (f32) -> tensor<64x64xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[RES:.+]] = scf.for {{.*}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (tensor<64x64xf32, #[[MMA]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[SPLAT:.+]] = "tile.splat"(%arg2) : (f32) -> tensor<64x64xf32, #[[MMA]]>
// CHECK-NEXT: %[[RESCALED:.+]] = arith.mulf %[[ACC]], %[[SPLAT]] : tensor<64x64xf32, #[[MMA]]>
// CHECK-NEXT: %[[D:.+]] = "tile.dot"(%arg0, %arg1, %[[RESCALED]]) {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CHECK-NEXT: scf.yield %[[D]] : tensor<64x64xf32, #[[MMA]]>
// CHECK-NEXT: }
// CHECK-NEXT: %[[OUT:.+]] = "tilegpu.convert_layout"(%[[RES]]) : (tensor<64x64xf32, #[[MMA]]>) -> tensor<64x64xf32, #[[BLOCKED]]>
// CHECK-NEXT: return %[[OUT]]
#blocked = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
#dot_a = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>
#dot_b = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @rescaled_acc(%a: tensor<64x32xf16, #dot_a>, %b: tensor<32x64xf16, #dot_b>, %scale: f32, %n: i32) -> tensor<64x64xf32, #blocked> {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %acc0 = "tile.splat"(%cst) : (f32) -> tensor<64x64xf32, #blocked>
    %res = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args(%acc = %acc0) -> (tensor<64x64xf32, #blocked>)  : i32 {
      %s = "tile.splat"(%scale) : (f32) -> tensor<64x64xf32, #blocked>
      %rescaled = arith.mulf %acc, %s : tensor<64x64xf32, #blocked>
      %c = "tilegpu.convert_layout"(%rescaled) : (tensor<64x64xf32, #blocked>) -> tensor<64x64xf32, #mma>
      %d = "tile.dot"(%a, %b, %c) {input_precision = "ieee"} : (tensor<64x32xf16, #dot_a>, tensor<32x64xf16, #dot_b>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
      %back = "tilegpu.convert_layout"(%d) : (tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #blocked>
      scf.yield %back : tensor<64x64xf32, #blocked>
    }
    return %res : tensor<64x64xf32, #blocked>
  }
}
