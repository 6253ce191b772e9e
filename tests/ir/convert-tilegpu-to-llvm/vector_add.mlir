// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// Vector add, 1024 f32 per program, 4 warps, 4 elements per thread in two repetitions:
// with 16-byte aligned pointers and a mask constant over runs of 4 (n divisible by 16),
// each run of 4 registers is one predicated `ld.global.v4.b32` / `st.global.v4.b32`
// (2 per load or store), the masked-off lanes keeping the `other` value (0) tied in.

// CHECK: module attributes {gpu.container_module, "tilegpu.num-warps" = 4 : i32, tilegpu.shared = 0 : i32, tilegpu.target = "sm_90"}
// CHECK-NEXT: gpu.module @tilec {
// CHECK-NEXT: llvm.mlir.global external @global_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-NEXT: llvm.func @add(%arg0: !llvm.ptr<1> {llvm.noundef}, %arg1: !llvm.ptr<1> {llvm.noundef}, %arg2: !llvm.ptr<1> {llvm.noundef}, %arg3: i32 {llvm.noundef}) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128>}
// CHECK: nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK: [[MASK0:%[0-9]+]] = arith.cmpi slt, %{{[0-9]+}}, %arg3 : i32
// CHECK: [[P0:%[0-9]+]] = llvm.getelementptr %arg0[%{{[0-9]+}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$5 ld.global.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l,b,0,1,2,3" [[P0]], [[MASK0]], {{.*}} : (!llvm.ptr<1>, i1, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-COUNT-3: "@$5 ld.global.v4.b32 {$0, $1, $2, $3}, [$4];"
// CHECK-NOT: ld.global
// CHECK: arith.addf %{{.*}} : f32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$5 st.global.v4.b32 [$0], {$1, $2, $3, $4};", "l,r,r,r,r,b" %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, [[MASK0]] : (!llvm.ptr<1>, i32, i32, i32, i32, i1) -> ()
// CHECK: llvm.inline_asm {{.*}}st.global.v4.b32
// CHECK-NEXT: llvm.return
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @add(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg3: i32 {tile.divisibility = 16 : i32}) {
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

