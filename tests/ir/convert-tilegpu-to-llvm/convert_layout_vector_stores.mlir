// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s

// A conversion through shared memory stages the source at row-major positions. In #rows
// each thread holds 4 consecutive elements of one row, 16-byte aligned in the staging
// buffer (rows of 4 f32), so it writes them with one vector store, not four. #cols holds
// them spread over other threads (8 rows by 4 columns of lanes), read back with scalar loads. (Booleans and pointers, kept in
// another form in shared memory, stay scalar.)

#rows = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 1, 1>}>
#cols = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 1, 1>}>

// CHECK: tilegpu.shared = 512 : i32
// CHECK-LABEL: llvm.func @convert(%arg0: f32 {llvm.noundef})
// CHECK-NOT: llvm.store {{.*}} : f32
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.load %{{[0-9]+}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.store
// CHECK: llvm.return
module attributes {"tilegpu.num-warps" = 1 : i32, tilegpu.target = "sm_90"} {
  func.func @convert(%x: f32) {
    %a = "tile.splat"(%x) : (f32) -> tensor<32x4xf32, #rows>
    %b = "tilegpu.convert_layout"(%a) : (tensor<32x4xf32, #rows>) -> tensor<32x4xf32, #cols>
    return
  }
}
