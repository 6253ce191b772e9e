// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// acc += x[i * 512 + offs] over a loop, as tilegpu-coalesce leaves it: the load is
// coalesced (4 per thread), the accumulator is in the default layout (1 per thread).
// The accumulator should take the load's layout (its init is a splat, cheap to
// recompute), leaving no conversion at all, in particular none inside the loop:
// there each one is a shared-memory round trip with two barriers per iteration.

// CHECK-DAG: #[[VEC:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-LABEL: func.func public @accumulate
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.for {{.*}} -> (tensor<512xf32, #[[VEC]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: "tile.store"({{.*}}) {{.*}} : (tensor<512x!tile.ptr<f32>, #[[VEC]]>, tensor<512xf32, #[[VEC]]>) -> ()
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @accumulate(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg2: i32) {
    %c512_i32 = arith.constant 512 : i32
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %0 = "tile.make_range"() {end = 512 : i32, start = 0 : i32} : () -> tensor<512xi32, #blocked0>
    %1 = "tile.splat"(%cst) : (f32) -> tensor<512xf32, #blocked0>
    %2 = scf.for %arg3 = %c0_i32 to %arg2 step %c1_i32 iter_args(%arg4 = %1) -> (tensor<512xf32, #blocked0>)  : i32 {
      %7 = arith.muli %arg3, %c512_i32 : i32
      %8 = "tile.addptr"(%arg0, %7) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      %9 = "tile.splat"(%8) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #blocked0>
      %10 = "tile.addptr"(%9, %0) : (tensor<512x!tile.ptr<f32>, #blocked0>, tensor<512xi32, #blocked0>) -> tensor<512x!tile.ptr<f32>, #blocked0>
      %11 = "tilegpu.convert_layout"(%10) : (tensor<512x!tile.ptr<f32>, #blocked0>) -> tensor<512x!tile.ptr<f32>, #blocked1>
      %12 = "tile.load"(%11) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<512x!tile.ptr<f32>, #blocked1>) -> tensor<512xf32, #blocked1>
      %13 = "tilegpu.convert_layout"(%12) : (tensor<512xf32, #blocked1>) -> tensor<512xf32, #blocked0>
      %14 = arith.addf %arg4, %13 : tensor<512xf32, #blocked0>
      scf.yield %14 : tensor<512xf32, #blocked0>
    }
    %3 = "tile.splat"(%arg1) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #blocked0>
    %4 = "tile.addptr"(%3, %0) : (tensor<512x!tile.ptr<f32>, #blocked0>, tensor<512xi32, #blocked0>) -> tensor<512x!tile.ptr<f32>, #blocked0>
    %5 = "tilegpu.convert_layout"(%4) : (tensor<512x!tile.ptr<f32>, #blocked0>) -> tensor<512x!tile.ptr<f32>, #blocked1>
    %6 = "tilegpu.convert_layout"(%2) : (tensor<512xf32, #blocked0>) -> tensor<512xf32, #blocked1>
    "tile.store"(%5, %6) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<512x!tile.ptr<f32>, #blocked1>, tensor<512xf32, #blocked1>) -> ()
    return
  }
}

