// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers | FileCheck %s

// A barrier goes exactly where threads could race: before a read of bytes written since
// the last barrier, before a write of bytes read or written since then; none between
// accesses to different buffers of a ring (constant indices), nor after an existing one.

// CHECK-LABEL: func.func @straight_line
// CHECK: "tilegpu.local_store"(%arg0, %[[A:[0-9]+]])
// CHECK-NEXT: "tilegpu.local_store"(%arg0, %[[B:[0-9]+]])
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.local_load"(%[[A]])
// CHECK-NEXT: "tilegpu.local_load"(%[[B]])
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.local_store"(%arg0, %[[A]])
// CHECK-NEXT: "tile.barrier"()
// CHECK-NEXT: "tilegpu.local_load"(%[[A]])
// CHECK-NEXT: return
func.func @straight_line(%x: tensor<16x16xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ring = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<2x16x16xf32>>
  %a = "tilegpu.memdesc_index"(%ring, %c0) : (!tilegpu.memdesc<tensor<2x16x16xf32>>, i32) -> !tilegpu.memdesc<tensor<16x16xf32>>
  %b = "tilegpu.memdesc_index"(%ring, %c1) : (!tilegpu.memdesc<tensor<2x16x16xf32>>, i32) -> !tilegpu.memdesc<tensor<16x16xf32>>
  "tilegpu.local_store"(%x, %a) : (tensor<16x16xf32>, !tilegpu.memdesc<tensor<16x16xf32>>) -> ()
  "tilegpu.local_store"(%x, %b) : (tensor<16x16xf32>, !tilegpu.memdesc<tensor<16x16xf32>>) -> ()
  %y = "tilegpu.local_load"(%a) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
  %z = "tilegpu.local_load"(%b) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
  "tilegpu.local_store"(%x, %a) : (tensor<16x16xf32>, !tilegpu.memdesc<tensor<16x16xf32>>) -> ()
  "tile.barrier"() : () -> ()
  %w = "tilegpu.local_load"(%a) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
  return
}

// A loop reading at its top and writing at its bottom: the write waits for this
// iteration's read, and the next iteration's read waits for the write (the back edge).
// The copy after the loop waits for the last read.

// CHECK-LABEL: func.func @loop_carried
// CHECK: scf.for
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.local_load"
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.local_store"
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.async_copy_global_to_local"
// CHECK-NEXT: "tilegpu.async_wait"
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.local_load"
func.func @loop_carried(%x: tensor<16x16xf32>, %p: tensor<16x16x!tile.ptr<f32>>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %buf = "tilegpu.local_alloc"(%x) {operandSegmentSizes = array<i32: 1>} : (tensor<16x16xf32>) -> !tilegpu.memdesc<tensor<16x16xf32>>
  scf.for %k = %c0 to %c4 step %c1 {
    %y = "tilegpu.local_load"(%buf) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
    "tilegpu.local_store"(%y, %buf) : (tensor<16x16xf32>, !tilegpu.memdesc<tensor<16x16xf32>>) -> ()
  }
  "tilegpu.async_copy_global_to_local"(%p, %buf) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0>} : (tensor<16x16x!tile.ptr<f32>>, !tilegpu.memdesc<tensor<16x16xf32>>) -> ()
  "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
  %z = "tilegpu.local_load"(%buf) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
  return
}

// A buffer written before a loop and only read in it: the reads wait for the write once,
// by a barrier before the loop, not by one in the body every iteration. A loop that also
// writes it keeps its barriers in the body (above).

// CHECK-LABEL: func.func @staged_before_loop
// CHECK: "tilegpu.local_alloc"(%arg0)
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: scf.for
// CHECK-NEXT: "tilegpu.local_load"
// CHECK-NEXT: "tilegpu.local_load"
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @staged_before_loop(%x: tensor<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %buf = "tilegpu.local_alloc"(%x) {operandSegmentSizes = array<i32: 1>} : (tensor<16x16xf32>) -> !tilegpu.memdesc<tensor<16x16xf32>>
  scf.for %k = %c0 to %c4 step %c1 {
    %y = "tilegpu.local_load"(%buf) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
    %z = "tilegpu.local_load"(%buf) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
  }
  return
}
