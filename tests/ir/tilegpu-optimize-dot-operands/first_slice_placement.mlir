// RUN: tilec-opt %s -p tilegpu-optimize-dot-operands | FileCheck %s

// A dot sliced along K reads its first slices where the first operand was read, ahead of
// what lies between the two operands' reads, but only past ops that cannot change what B
// reads: a copy into another slot of a pipelining ring (and its commit) may be passed, a
// wait for copies may not (B's slot may still be arriving).

#sa = #tilegpu.shared<{maxPhase = 4 : i32, order = array<i32: 1, 0>, perPhase = 2 : i32, vec = 8 : i32}>
#sb = #tilegpu.shared<{maxPhase = 8 : i32, order = array<i32: 1, 0>, perPhase = 1 : i32, vec = 8 : i32}>
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>
#opa = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>
#opb = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>

// CHECK-LABEL: func.func @copy_between
// CHECK: "tilegpu.local_load"({{.*}}) : (!tilegpu.memdesc<tensor<64x16xf16, #shared0>>)
// CHECK: "tilegpu.local_load"({{.*}}) : (!tilegpu.memdesc<tensor<16x64xf16, #shared1>>)
// CHECK: "tilegpu.async_copy_global_to_local"
// CHECK: "tilegpu.async_commit_group"
// CHECK: "tile.dot"

// CHECK-LABEL: func.func @wait_between
// CHECK: "tilegpu.local_load"({{.*}}) : (!tilegpu.memdesc<tensor<64x16xf16, #shared0>>)
// CHECK-NOT: "tilegpu.local_load"
// CHECK: "tilegpu.async_wait"
// CHECK: "tilegpu.local_load"({{.*}}) : (!tilegpu.memdesc<tensor<16x64xf16, #shared1>>)
// CHECK: "tile.dot"
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @copy_between(%i: i32, %j: i32, %p: tensor<32x64x!tile.ptr<f16>, #b>, %c: tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma> {
    %ra = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x64x32xf16, #sa>>
    %rb = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x32x64xf16, #sb>>
    %sa = "tilegpu.memdesc_index"(%ra, %i) {tilegpu.pipeline_slot = 0 : i32} : (!tilegpu.memdesc<tensor<3x64x32xf16, #sa>>, i32) -> !tilegpu.memdesc<tensor<64x32xf16, #sa>>
    %a = "tilegpu.local_load"(%sa) : (!tilegpu.memdesc<tensor<64x32xf16, #sa>>) -> tensor<64x32xf16, #opa>
    %w = "tilegpu.memdesc_index"(%rb, %j) {tilegpu.pipeline_slot = 2 : i32} : (!tilegpu.memdesc<tensor<3x32x64xf16, #sb>>, i32) -> !tilegpu.memdesc<tensor<32x64xf16, #sb>>
    "tilegpu.async_copy_global_to_local"(%p, %w) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0>} : (tensor<32x64x!tile.ptr<f16>, #b>, !tilegpu.memdesc<tensor<32x64xf16, #sb>>) -> ()
    "tilegpu.async_commit_group"() : () -> ()
    %sb = "tilegpu.memdesc_index"(%rb, %i) {tilegpu.pipeline_slot = 0 : i32} : (!tilegpu.memdesc<tensor<3x32x64xf16, #sb>>, i32) -> !tilegpu.memdesc<tensor<32x64xf16, #sb>>
    %bb = "tilegpu.local_load"(%sb) : (!tilegpu.memdesc<tensor<32x64xf16, #sb>>) -> tensor<32x64xf16, #opb>
    %d = "tile.dot"(%a, %bb, %c) {input_precision = "ieee"} : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
    return %d : tensor<64x64xf32, #mma>
  }
  func.func @wait_between(%i: i32, %c: tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma> {
    %ra = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x64x32xf16, #sa>>
    %rb = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x32x64xf16, #sb>>
    %sa = "tilegpu.memdesc_index"(%ra, %i) {tilegpu.pipeline_slot = 0 : i32} : (!tilegpu.memdesc<tensor<3x64x32xf16, #sa>>, i32) -> !tilegpu.memdesc<tensor<64x32xf16, #sa>>
    %a = "tilegpu.local_load"(%sa) : (!tilegpu.memdesc<tensor<64x32xf16, #sa>>) -> tensor<64x32xf16, #opa>
    "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
    %sb = "tilegpu.memdesc_index"(%rb, %i) {tilegpu.pipeline_slot = 0 : i32} : (!tilegpu.memdesc<tensor<3x32x64xf16, #sb>>, i32) -> !tilegpu.memdesc<tensor<32x64xf16, #sb>>
    %bb = "tilegpu.local_load"(%sb) : (!tilegpu.memdesc<tensor<32x64xf16, #sb>>) -> tensor<32x64xf16, #opb>
    %d = "tile.dot"(%a, %bb, %c) {input_precision = "ieee"} : (tensor<64x32xf16, #opa>, tensor<32x64xf16, #opb>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
    return %d : tensor<64x64xf32, #mma>
  }
}
