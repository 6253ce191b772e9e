// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// Pointers and mask converted to the coalesced layout are computed again in it
// (make_range, splat, arith, addptr); the old computation becomes dead and goes.

#one = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#vec = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>

// CHECK: #[[VEC:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
// CHECK-NOT: #blocked
// CHECK-LABEL: func.func @masked_load
// CHECK: [[PID:%.*]] = "tile.get_program_id"
// CHECK-NEXT: [[START:%.*]] = arith.muli [[PID]], %{{.*}} : i32
// CHECK-DAG: [[R:%.*]] = "tile.make_range"() {{.*}} -> tensor<1024xi32, #[[VEC]]>
// CHECK-DAG: [[S:%.*]] = "tile.splat"([[START]]) : (i32) -> tensor<1024xi32, #[[VEC]]>
// CHECK: [[OFFS:%.*]] = arith.addi [[S]], [[R]] : tensor<1024xi32, #[[VEC]]>
// CHECK: [[MASK:%.*]] = arith.cmpi slt, [[OFFS]], %{{.*}} : tensor<1024xi32, #[[VEC]]>
// CHECK: [[P:%.*]] = "tile.addptr"(%{{.*}}, [[OFFS]]) {{.*}} -> tensor<1024x!tile.ptr<f32>, #[[VEC]]>
// CHECK-NEXT: "tile.load"([[P]], [[MASK]]) {{.*}} -> tensor<1024xf32, #[[VEC]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @masked_load(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) -> tensor<1024xf32, #vec> {
    %c1024 = arith.constant 1024 : i32
    %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    %start = arith.muli %pid, %c1024 : i32
    %r = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #one>
    %s = "tile.splat"(%start) : (i32) -> tensor<1024xi32, #one>
    %offs = arith.addi %s, %r : tensor<1024xi32, #one>
    %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32, #one>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32, #one>
    %xb = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #one>
    %xp = "tile.addptr"(%xb, %offs) : (tensor<1024x!tile.ptr<f32>, #one>, tensor<1024xi32, #one>) -> tensor<1024x!tile.ptr<f32>, #one>
    %xp4 = "tilegpu.convert_layout"(%xp) : (tensor<1024x!tile.ptr<f32>, #one>) -> tensor<1024x!tile.ptr<f32>, #vec>
    %mask4 = "tilegpu.convert_layout"(%mask) : (tensor<1024xi1, #one>) -> tensor<1024xi1, #vec>
    %v = "tile.load"(%xp4, %mask4) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #vec>, tensor<1024xi1, #vec>) -> tensor<1024xf32, #vec>
    return %v : tensor<1024xf32, #vec>
  }
}
