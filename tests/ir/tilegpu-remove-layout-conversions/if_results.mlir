// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// partial = x * 2; if first: keep it, else: partial += load(acc); store(acc, partial)
// (tutorial 05's dw accumulation under its lock). The if's result was given the default
// layout (1 per thread) while both branches compute in the loads' layout (4 per thread):
// the result takes the loads' layout and every conversion goes, in both branches and
// before the store. Before, each was a shared-memory round trip with two barriers.

// CHECK-DAG: #[[VEC:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-LABEL: func.func public @accumulate_if
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.if {{.*}} -> (tensor<512xf32, #[[VEC]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: "tile.store"({{.*}}) {{.*}} : (tensor<512x!tile.ptr<f32>, #[[VEC]]>, tensor<512xf32, #[[VEC]]>) -> ()

// When a branch yields a value that is expensive in the other layout (a load in the
// default layout), the result keeps its layout.
// CHECK-LABEL: func.func public @keep_if
// CHECK: "tilegpu.convert_layout"
// CHECK: scf.if {{.*}} -> (tensor<512xf32, #[[ONE:blocked[0-9]+]]>)
// CHECK-NOT: #[[VEC]]
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @accumulate_if(%arg0: tensor<512x!tile.ptr<f32>, #blocked1>, %arg1: tensor<512x!tile.ptr<f32>, #blocked1>, %first: i1) {
    %cst = arith.constant 2.000000e+00 : f32
    %x = "tile.load"(%arg0) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<512x!tile.ptr<f32>, #blocked1>) -> tensor<512xf32, #blocked1>
    %two = "tile.splat"(%cst) : (f32) -> tensor<512xf32, #blocked1>
    %p = arith.mulf %x, %two : tensor<512xf32, #blocked1>
    %pc = "tilegpu.convert_layout"(%p) : (tensor<512xf32, #blocked1>) -> tensor<512xf32, #blocked0>
    %r = scf.if %first -> (tensor<512xf32, #blocked0>) {
      scf.yield %pc : tensor<512xf32, #blocked0>
    } else {
      %y = "tile.load"(%arg1) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<512x!tile.ptr<f32>, #blocked1>) -> tensor<512xf32, #blocked1>
      %s = arith.addf %p, %y : tensor<512xf32, #blocked1>
      %sc = "tilegpu.convert_layout"(%s) : (tensor<512xf32, #blocked1>) -> tensor<512xf32, #blocked0>
      scf.yield %sc : tensor<512xf32, #blocked0>
    }
    %rc = "tilegpu.convert_layout"(%r) : (tensor<512xf32, #blocked0>) -> tensor<512xf32, #blocked1>
    "tile.store"(%arg1, %rc) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<512x!tile.ptr<f32>, #blocked1>, tensor<512xf32, #blocked1>) -> ()
    return
  }
  func.func public @keep_if(%arg0: tensor<512x!tile.ptr<f32>, #blocked1>, %arg1: tensor<512x!tile.ptr<f32>, #blocked0>, %first: i1) {
    %x = "tile.load"(%arg0) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<512x!tile.ptr<f32>, #blocked1>) -> tensor<512xf32, #blocked1>
    %xc = "tilegpu.convert_layout"(%x) : (tensor<512xf32, #blocked1>) -> tensor<512xf32, #blocked0>
    %r = scf.if %first -> (tensor<512xf32, #blocked0>) {
      scf.yield %xc : tensor<512xf32, #blocked0>
    } else {
      %y = "tile.load"(%arg1) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<512x!tile.ptr<f32>, #blocked0>) -> tensor<512xf32, #blocked0>
      scf.yield %y : tensor<512xf32, #blocked0>
    }
    "tile.store"(%arg1, %r) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<512x!tile.ptr<f32>, #blocked0>, tensor<512xf32, #blocked0>) -> ()
    return
  }
}
