// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// The same vector add with `n` of unknown divisibility: the mask `offs < n` may change
// between any two elements, so every element is its own predicated scalar access
// (8 per thread for each of the two loads and the store), though the layout holds
// runs of 4 consecutive elements.

// CHECK-LABEL: llvm.func @add
// CHECK-NOT: ld.global.v
// CHECK-COUNT-16: llvm.inline_asm has_side_effects asm_dialect = att "@$2 ld.global.b32 $0, [$1];", "=r,l,b,0" %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : (!llvm.ptr<1>, i1, i32) -> i32
// CHECK-NOT: ld.global
// CHECK-COUNT-8: llvm.inline_asm has_side_effects asm_dialect = att "@$2 st.global.b32 [$0], $1;", "l,r,b"
// CHECK-NOT: st.global
// CHECK: llvm.return
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @add(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg3: i32) {
    %c1024_i32 = arith.constant 1024 : i32
    %0 = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    %1 = arith.muli %0, %c1024_i32 : i32
    %2 = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #blocked0>
    %3 = "tile.splat"(%1) : (i32) -> tensor<1024xi32, #blocked0>
    %4 = arith.addi %3, %2 : tensor<1024xi32, #blocked0>
    %5 = "tile.splat"(%arg3) : (i32) -> tensor<1024xi32, #blocked0>
    %6 = arith.cmpi slt, %4, %5 : tensor<1024xi32, #blocked0>
    %7 = "tile.splat"(%arg2) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #blocked0>
    %8 = "tile.addptr"(%7, %4) : (tensor<1024x!tile.ptr<f32>, #blocked0>, tensor<1024xi32, #blocked0>) -> tensor<1024x!tile.ptr<f32>, #blocked0>
    %9 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #blocked0>
    %10 = "tile.addptr"(%9, %4) : (tensor<1024x!tile.ptr<f32>, #blocked0>, tensor<1024xi32, #blocked0>) -> tensor<1024x!tile.ptr<f32>, #blocked0>
    %11 = "tile.load"(%10, %6) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #blocked0>, tensor<1024xi1, #blocked0>) -> tensor<1024xf32, #blocked0>
    %12 = "tile.splat"(%arg1) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #blocked0>
    %13 = "tile.addptr"(%12, %4) : (tensor<1024x!tile.ptr<f32>, #blocked0>, tensor<1024xi32, #blocked0>) -> tensor<1024x!tile.ptr<f32>, #blocked0>
    %14 = "tile.load"(%13, %6) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #blocked0>, tensor<1024xi1, #blocked0>) -> tensor<1024xf32, #blocked0>
    %15 = arith.addf %11, %14 : tensor<1024xf32, #blocked0>
    "tile.store"(%8, %15, %6) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>, #blocked0>, tensor<1024xf32, #blocked0>, tensor<1024xi1, #blocked0>) -> ()
    return
  }
}

