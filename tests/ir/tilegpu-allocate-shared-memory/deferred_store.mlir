// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory | FileCheck %s

// A TMA store that waits only for the read-out of its block (tile.wait_for_read) inside a
// loop keeps its buffer over the whole loop, is marked tilegpu.deferred_read_wait (its next
// execution waits for the previous read-out), and the loop is followed by one
// tilegpu.bulk_store_wait. Its bytes then never meet those of a ring allocated inside the
// loop, which would otherwise reuse them.

#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>

// The store's 8 KiB come after the ring's 24 KiB (not at 0, as a store that waits in place
// gets: see @waits_for_writes); both stores of the loop are deferred, one wait follows it.
// CHECK-LABEL: func.func @persistent_epilogue
// CHECK: scf.for
// CHECK: "tilegpu.local_alloc"() {{.*}}tilegpu.offset = 0 : i32
// CHECK: "tile.descriptor_store"
// CHECK: tile.wait_for_read, tilegpu.deferred_read_wait, tilegpu.offset = 24576 : i32
// CHECK: "tile.descriptor_store"
// CHECK: tile.wait_for_read, tilegpu.deferred_read_wait, tilegpu.offset = 32768 : i32
// CHECK-NEXT: {{^ *}$}}
// CHECK-NEXT: "tilegpu.bulk_store_wait"() : () -> ()
// CHECK-NOT: tilegpu.bulk_store_wait
// CHECK: return

// A store outside every loop, and one in a loop that waits for its writes to land, wait
// in place: no mark, no wait op, their bytes shared with the ring's.
// CHECK-LABEL: func.func @waits_for_writes
// CHECK-NOT: deferred_read_wait
// CHECK-NOT: bulk_store_wait
// CHECK: return

// Live over the loop, the 128 KiB block and the 128 KiB ring need more than the 227 KiB
// of sm_90: the store waits in place and shares the ring's bytes.
// CHECK-LABEL: func.func @too_big
// CHECK-NOT: deferred_read_wait
// CHECK: tile.wait_for_read, tilegpu.offset = 0 : i32
// CHECK-NOT: bulk_store_wait
// CHECK: return
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @persistent_epilogue(%desc: !tile.ptr<i8>, %x: tensor<64x64xf16, #b>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %t = %c0 to %n step %c1 : i32 {
      %ring = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x64x64xf16>>
      %slot = "tilegpu.memdesc_index"(%ring, %t) : (!tilegpu.memdesc<tensor<3x64x64xf16>>, i32) -> !tilegpu.memdesc<tensor<64x64xf16>>
      %y = "tilegpu.local_load"(%slot) : (!tilegpu.memdesc<tensor<64x64xf16>>) -> tensor<64x64xf16, #b>
      "tile.descriptor_store"(%desc, %y, %t, %c0) ({
        gpu.yield
      }) {operandSegmentSizes = array<i32: 1, 1, 2>, tile.wait_for_read} : (!tile.ptr<i8>, tensor<64x64xf16, #b>, i32, i32) -> ()
      "tile.descriptor_store"(%desc, %x, %c0, %t) ({
        gpu.yield
      }) {operandSegmentSizes = array<i32: 1, 1, 2>, tile.wait_for_read} : (!tile.ptr<i8>, tensor<64x64xf16, #b>, i32, i32) -> ()
    }
    return
  }

  func.func @waits_for_writes(%desc: !tile.ptr<i8>, %x: tensor<64x64xf16, #b>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    "tile.descriptor_store"(%desc, %x, %c0, %c0) ({
      gpu.yield
    }) {operandSegmentSizes = array<i32: 1, 1, 2>, tile.wait_for_read} : (!tile.ptr<i8>, tensor<64x64xf16, #b>, i32, i32) -> ()
    scf.for %t = %c0 to %n step %c1 : i32 {
      %ring = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x64x64xf16>>
      %slot = "tilegpu.memdesc_index"(%ring, %t) : (!tilegpu.memdesc<tensor<3x64x64xf16>>, i32) -> !tilegpu.memdesc<tensor<64x64xf16>>
      %y = "tilegpu.local_load"(%slot) : (!tilegpu.memdesc<tensor<64x64xf16>>) -> tensor<64x64xf16, #b>
      "tile.descriptor_store"(%desc, %y, %t, %c0) ({
        gpu.yield
      }) {operandSegmentSizes = array<i32: 1, 1, 2>} : (!tile.ptr<i8>, tensor<64x64xf16, #b>, i32, i32) -> ()
    }
    return
  }

  func.func @too_big(%desc: !tile.ptr<i8>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %t = %c0 to %n step %c1 : i32 {
      %ring = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<1x128x256xf32>>
      %slot = "tilegpu.memdesc_index"(%ring, %t) : (!tilegpu.memdesc<tensor<1x128x256xf32>>, i32) -> !tilegpu.memdesc<tensor<128x256xf32>>
      %y = "tilegpu.local_load"(%slot) : (!tilegpu.memdesc<tensor<128x256xf32>>) -> tensor<128x256xf32, #b>
      "tile.descriptor_store"(%desc, %y, %t, %c0) ({
        gpu.yield
      }) {operandSegmentSizes = array<i32: 1, 1, 2>, tile.wait_for_read} : (!tile.ptr<i8>, tensor<128x256xf32, #b>, i32, i32) -> ()
    }
    return
  }
}
