// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// Every element is stored by one thread. A scalar store is thread 0's (every thread
// storing a scalar let a load-modify-store of one address see another warp's write);
// a block whose layout holds each element in every warp (32 elements over 4 warps) is
// stored by warp 0 alone; a block held by every lane and warp is stored by thread 0.

// CHECK-LABEL: llvm.func @scalar_double
// CHECK: %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x
// CHECK: ld.global.b32
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %{{.+}} : i32
// CHECK: "@$2 st.global.b32 [$0], $1;", "l,r,b" %arg0, %{{.+}}, %[[FIRST]]
// CHECK-NOT: st.global
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @replicated_over_warps
// CHECK: %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[WARP:.+]] = arith.shrui %[[TID]]
// CHECK: %[[WARPBITS:.+]] = arith.andi %[[WARP]], %{{.+}} : i32
// CHECK: %[[OWNER:.+]] = arith.cmpi eq, %[[WARPBITS]], %{{.+}} : i32
// CHECK: "@$2 st.global.b32 [$0], $1;", "l,r,b" %{{.+}}, %{{.+}}, %[[OWNER]]
// CHECK-NOT: st.global
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @replicated_everywhere
// CHECK: "@$3 st.global.v2.b32 [$0], {$1, $2};"
// CHECK-NOT: st.global
// CHECK: llvm.return

#warps = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#wide = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @scalar_double(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %0 = "tile.load"(%arg0) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (!tile.ptr<f32>) -> f32
    %1 = arith.addf %0, %0 : f32
    "tile.store"(%arg0, %1) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    return
  }
  func.func public @replicated_over_warps(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #warps>
    %1 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>, #warps>
    %2 = "tile.addptr"(%1, %0) : (tensor<32x!tile.ptr<f32>, #warps>, tensor<32xi32, #warps>) -> tensor<32x!tile.ptr<f32>, #warps>
    %3 = "tile.load"(%2) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x!tile.ptr<f32>, #warps>) -> tensor<32xf32, #warps>
    %4 = arith.addf %3, %3 : tensor<32xf32, #warps>
    "tile.store"(%2, %4) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<f32>, #warps>, tensor<32xf32, #warps>) -> ()
    return
  }
  func.func public @replicated_everywhere(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: f32) {
    %0 = "tile.make_range"() {end = 2 : i32, start = 0 : i32} : () -> tensor<2xi32, #wide>
    %1 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<2x!tile.ptr<f32>, #wide>
    %2 = "tile.addptr"(%1, %0) : (tensor<2x!tile.ptr<f32>, #wide>, tensor<2xi32, #wide>) -> tensor<2x!tile.ptr<f32>, #wide>
    %3 = "tile.splat"(%arg1) : (f32) -> tensor<2xf32, #wide>
    "tile.store"(%2, %3) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<2x!tile.ptr<f32>, #wide>, tensor<2xf32, #wide>) -> ()
    return
  }
}
