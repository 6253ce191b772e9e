// RUN: tilec-opt %s | FileCheck %s

// Shared-memory buffers and the ops on them parse, verify and print back.

// CHECK-LABEL: func.func @ring
// CHECK: %[[RING:.+]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<3x64x32xf16>>
// CHECK: %[[ONE:.+]] = "tilegpu.memdesc_index"(%[[RING]], %{{.+}}) : (!tilegpu.memdesc<tensor<3x64x32xf16>>, i32) -> !tilegpu.memdesc<tensor<64x32xf16>>
// CHECK: "tilegpu.async_copy_global_to_local"(%{{.+}}, %[[ONE]], %{{.+}})
// CHECK: "tilegpu.async_commit_group"()
// CHECK: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK: "tilegpu.barrier"()
// CHECK: "tilegpu.local_load"(%[[ONE]])
// CHECK: "tilegpu.local_store"(%{{.+}}, %[[ONE]])
// CHECK: "tilegpu.local_dealloc"(%[[RING]])
func.func @ring(%p: tensor<64x32x!tile.ptr<f16>>, %mask: tensor<64x32xi1>, %i: i32) {
  %a = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x64x32xf16>>
  %b = "tilegpu.memdesc_index"(%a, %i) : (!tilegpu.memdesc<tensor<3x64x32xf16>>, i32) -> !tilegpu.memdesc<tensor<64x32xf16>>
  "tilegpu.async_copy_global_to_local"(%p, %b, %mask) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<64x32x!tile.ptr<f16>>, !tilegpu.memdesc<tensor<64x32xf16>>, tensor<64x32xi1>) -> ()
  "tilegpu.async_commit_group"() : () -> ()
  "tilegpu.async_wait"() {num = 1 : i32} : () -> ()
  "tilegpu.barrier"() : () -> ()
  %c = "tilegpu.local_load"(%b) : (!tilegpu.memdesc<tensor<64x32xf16>>) -> tensor<64x32xf16>
  "tilegpu.local_store"(%c, %b) : (tensor<64x32xf16>, !tilegpu.memdesc<tensor<64x32xf16>>) -> ()
  "tilegpu.local_dealloc"(%a) : (!tilegpu.memdesc<tensor<3x64x32xf16>>) -> ()
  return
}

// CHECK-LABEL: func.func @initialised
// CHECK: "tilegpu.local_alloc"(%arg0) {{.*}} : (tensor<16x16xf32>) -> !tilegpu.memdesc<tensor<16x16xf32>>
func.func @initialised(%x: tensor<16x16xf32>) {
  %a = "tilegpu.local_alloc"(%x) {operandSegmentSizes = array<i32: 1>} : (tensor<16x16xf32>) -> !tilegpu.memdesc<tensor<16x16xf32>>
  return
}
