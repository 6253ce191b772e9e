// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s

// Two conversions of a 2x64 f32 tensor. #row -> #col only reorders each thread's
// registers (lanes and warps hold the same elements): no instruction and no shared
// memory at all. #col -> #t moves elements between threads through the op's scratch
// space (2 * 64 * 4 bytes allocated, at offset 0). The two layouts share no register
// vector, so tilec.layout.exchange weighs its swizzled layout (4 scalar stores, 4 scalar
// loads, an xor per access) against a row-major buffer, where #col's two consecutive
// columns go out as one 8-byte store per row: row-major wins. Each thread stores 2
// vectors, a barrier, and loads the 4 elements #t gives it: the scratch's address, plus
// the thread's offset, plus a constant. Nothing used shared memory before, so no
// barrier precedes the stores.

#row = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 2, 2>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 1, 1>}>
#col = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 2, 2>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 1, 1>}>
#t = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 1, 1>}>

// CHECK: tilegpu.shared = 512 : i32
// CHECK-LABEL: llvm.func @convert(%arg0: f32 {llvm.noundef})
// CHECK: [[SMEM:%[0-9]+]] = llvm.mlir.addressof @global_smem : !llvm.ptr<3>
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-2: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: llvm.store
// CHECK: [[BUF:%[0-9]+]] = llvm.getelementptr [[SMEM]][%c0_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: [[OFF:%[0-9]+]] = arith.muli %{{[0-9]+}}, %c4_i32 : i32
// CHECK-NEXT: [[THR:%[0-9]+]] = llvm.getelementptr [[BUF]][[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: llvm.load [[THR]] : !llvm.ptr<3> -> f32
// CHECK-COUNT-3: llvm.getelementptr [[THR]][%c{{[1-9][0-9]*}}_i32]
// CHECK-NOT: llvm.load %{{[0-9]+}} : !llvm.ptr<3> -> vector
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
module attributes {"tilegpu.num-warps" = 1 : i32, tilegpu.target = "sm_90"} {
  func.func @convert(%x: f32) {
    %a = "tile.splat"(%x) : (f32) -> tensor<2x64xf32, #row>
    %b = "tilegpu.convert_layout"(%a) : (tensor<2x64xf32, #row>) -> tensor<2x64xf32, #col>
    %c = "tilegpu.convert_layout"(%b) : (tensor<2x64xf32, #col>) -> tensor<2x64xf32, #t>
    return
  }
}
