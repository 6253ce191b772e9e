// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s

// A TMA store in a loop that waits only for the read-out of its block is deferred by
// tilegpu-allocate-shared-memory: each execution first waits for the previous one's
// read-out (every thread: only the issuing one has bulk groups), then a barrier, then
// writes the block, fences, synchronises and issues the copies with a commit and no wait;
// after the loop, tilegpu.bulk_store_wait waits for the last read-out and synchronises.
// tilegpu-insert-barriers adds no barrier of its own before the store.

// CHECK-LABEL: llvm.func @persistent_epilogue
// CHECK: scf.for
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.inline_asm has_side_effects {{.*}}"cp.async.bulk.wait_group.read 0;"
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-8: llvm.store {{.+}} !llvm.ptr<3>
// CHECK-NEXT: "fence.proxy.async.shared::cta;"
// CHECK-NEXT: nvvm.barrier0
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK-SAME: @p cp.async.bulk.commit_group; }"
// CHECK-NOT: nvvm.barrier0
// CHECK: }
// CHECK-NEXT: "cp.async.bulk.wait_group.read 0;"
// CHECK-NEXT: nvvm.barrier0

#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @persistent_epilogue(%desc: !tile.ptr<i8>, %x: tensor<64x64xf16, #b>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %t = %c0 to %n step %c1 : i32 {
      "tile.descriptor_store"(%desc, %x, %t, %c0) ({
        gpu.yield
      }) {operandSegmentSizes = array<i32: 1, 1, 2>, tile.wait_for_read} : (!tile.ptr<i8>, tensor<64x64xf16, #b>, i32, i32) -> ()
    }
    return
  }
}
