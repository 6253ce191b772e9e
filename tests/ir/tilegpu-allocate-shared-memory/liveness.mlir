// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory | FileCheck %s

// Buffers live at the same time get disjoint, 128-byte aligned offsets; a buffer whose
// last use is before another's definition may share its bytes. A buffer used inside a
// loop stays live to the loop's end. The kernel's shared memory is the high-water mark.

// Largest first: %late (16 KiB, defined after the loop) at 0; the ring (12 KiB), not live
// with it, also at 0; %acc, live with the ring, after it; %tiny, live with all three,
// after the largest of them (128-byte aligned), ending at 16384 + 16.
// CHECK: module attributes {tilegpu.shared = 16400 : i32}
// CHECK-LABEL: func.func @lifetimes
// CHECK: "tilegpu.local_alloc"() {{.*}}tilegpu.offset = 0 : i32{{.*}} -> !tilegpu.memdesc<tensor<3x64x32xf16>>
// CHECK: "tilegpu.local_alloc"() {{.*}}tilegpu.offset = 12288 : i32{{.*}} -> !tilegpu.memdesc<tensor<16x16xf32>>
// CHECK: "tilegpu.local_alloc"() {{.*}}tilegpu.offset = 16384 : i32{{.*}} -> !tilegpu.memdesc<tensor<4xf32>>
// CHECK: "tilegpu.local_alloc"() {{.*}}tilegpu.offset = 0 : i32{{.*}} -> !tilegpu.memdesc<tensor<64x64xf32>>
func.func @lifetimes(%i: i32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %ring = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x64x32xf16>>
  %acc = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<16x16xf32>>
  %tiny = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<4xf32>>
  scf.for %k = %c0 to %c4 step %c1 {
    %b = "tilegpu.memdesc_index"(%ring, %i) : (!tilegpu.memdesc<tensor<3x64x32xf16>>, i32) -> !tilegpu.memdesc<tensor<64x32xf16>>
    %x = "tilegpu.local_load"(%b) : (!tilegpu.memdesc<tensor<64x32xf16>>) -> tensor<64x32xf16>
    %y = "tilegpu.local_load"(%acc) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
  }
  %late = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<64x64xf32>>
  %z = "tilegpu.local_load"(%late) : (!tilegpu.memdesc<tensor<64x64xf32>>) -> tensor<64x64xf32>
  %t = "tilegpu.local_load"(%tiny) : (!tilegpu.memdesc<tensor<4xf32>>) -> tensor<4xf32>
  return
}
