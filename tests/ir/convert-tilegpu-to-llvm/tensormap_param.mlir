// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// A parameter marked tile.tensormap (backend/compiler.py: a TMA tensor map on sm_90) is
// taken by value: a byval 128-byte array, 64-aligned, grid constant, which the PTX
// backend emits as `.param .align 64 .b8 [128]`. Its address (in parameter space) is
// carried as the pointer the IR's type says; the other parameters are as before.

// CHECK-LABEL: llvm.func @maps(%arg0: !llvm.ptr<1> {llvm.noundef}, %arg1: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %arg2: i32 {llvm.noundef})
// CHECK: [[ADDRESS:%[0-9]+]] = llvm.ptrtoint %arg1 : !llvm.ptr to i64
// CHECK-NEXT: [[MAP:%[0-9]+]] = llvm.inttoptr [[ADDRESS]] : i64 to !llvm.ptr<1>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @maps(%base: !tile.ptr<f16>, %map: !tile.ptr<i8> {tile.tensormap}, %n: i32) {
    return
  }
}
