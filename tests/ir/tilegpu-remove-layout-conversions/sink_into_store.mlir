// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// A loaded value cannot be recomputed, so its conversion moves forward instead: the
// elementwise ops and the store run in the load's layout (their other operands are
// recomputed in it), and the conversion disappears.

#one = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#vec = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>

// CHECK: #[[VEC:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, {{.*}}}>
// CHECK-NOT: #blocked
// CHECK-LABEL: func.func @scale
// CHECK-NOT: tilegpu.convert_layout
// CHECK: [[V:%.*]] = "tile.load"(%arg0) {{.*}} -> tensor<1024xf32, #[[VEC]]>
// CHECK: [[K:%.*]] = "tile.splat"(%arg2) : (f32) -> tensor<1024xf32, #[[VEC]]>
// CHECK: [[M:%.*]] = arith.mulf [[V]], [[K]] : tensor<1024xf32, #[[VEC]]>
// CHECK: [[E:%.*]] = math.exp [[M]] : tensor<1024xf32, #[[VEC]]>
// CHECK: [[P:%.*]] = "tile.addptr"({{.*}}) {{.*}} -> tensor<1024x!tile.ptr<f32>, #[[VEC]]>
// CHECK: "tile.store"([[P]], [[E]]) {{.*}} : (tensor<1024x!tile.ptr<f32>, #[[VEC]]>, tensor<1024xf32, #[[VEC]]>) -> ()
// CHECK-NOT: tilegpu.convert_layout
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @scale(%xp: tensor<1024x!tile.ptr<f32>, #vec>, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %k: f32) {
    %v = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #vec>) -> tensor<1024xf32, #vec>
    %v1 = "tilegpu.convert_layout"(%v) : (tensor<1024xf32, #vec>) -> tensor<1024xf32, #one>
    %ks = "tile.splat"(%k) : (f32) -> tensor<1024xf32, #one>
    %m = arith.mulf %v1, %ks : tensor<1024xf32, #one>
    %e = math.exp %m : tensor<1024xf32, #one>
    %offs = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #one>
    %yb = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #one>
    %yp = "tile.addptr"(%yb, %offs) : (tensor<1024x!tile.ptr<f32>, #one>, tensor<1024xi32, #one>) -> tensor<1024x!tile.ptr<f32>, #one>
    "tile.store"(%yp, %e) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, #one>, tensor<1024xf32, #one>) -> ()
    return
  }
}
