// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s

// The copy of local_memory.mlir into a swizzled buffer (vec 8, perPhase 2, maxPhase 4):
// a thread's 8 contiguous halves stay one 16-byte cp.async (the swizzle moves whole
// 8-element chunks), and so is its read back: one 16-byte vector load.

// CHECK-LABEL: llvm.func @copy_swizzled
// CHECK: cp.async.cg.shared.global [$0], [$1], 16, ignore;
// CHECK-NOT: cp.async.cg
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @copy_swizzled(%src: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %dst: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %r = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #tilegpu.slice<{dim = 1 : i32, parent = #b}>>
    %c = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #tilegpu.slice<{dim = 0 : i32, parent = #b}>>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<32xi32, #tilegpu.slice<{dim = 1 : i32, parent = #b}>>) -> tensor<32x1xi32, #b>
    %c2 = "tile.expand_dims"(%c) {axis = 0 : i32} : (tensor<32xi32, #tilegpu.slice<{dim = 0 : i32, parent = #b}>>) -> tensor<1x32xi32, #b>
    %c32 = arith.constant dense<32> : tensor<32x1xi32, #b>
    %rs = arith.muli %r2, %c32 : tensor<32x1xi32, #b>
    %rb = "tile.broadcast"(%rs) : (tensor<32x1xi32, #b>) -> tensor<32x32xi32, #b>
    %cb = "tile.broadcast"(%c2) : (tensor<1x32xi32, #b>) -> tensor<32x32xi32, #b>
    %off = arith.addi %rb, %cb : tensor<32x32xi32, #b>
    %ns = "tile.splat"(%n) : (i32) -> tensor<32x32xi32, #b>
    %m = arith.cmpi slt, %rb, %ns : tensor<32x32xi32, #b>
    %ps = "tile.splat"(%src) : (!tile.ptr<f16>) -> tensor<32x32x!tile.ptr<f16>, #b>
    %p = "tile.addptr"(%ps, %off) : (tensor<32x32x!tile.ptr<f16>, #b>, tensor<32x32xi32, #b>) -> tensor<32x32x!tile.ptr<f16>, #b>
    %ring = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<2x32x32xf16, #tilegpu.shared<{maxPhase = 4 : i32, order = array<i32: 1, 0>, perPhase = 2 : i32, vec = 8 : i32}>>>
    %one = "tilegpu.memdesc_index"(%ring, %c0) : (!tilegpu.memdesc<tensor<2x32x32xf16, #tilegpu.shared<{maxPhase = 4 : i32, order = array<i32: 1, 0>, perPhase = 2 : i32, vec = 8 : i32}>>>, i32) -> !tilegpu.memdesc<tensor<32x32xf16, #tilegpu.shared<{maxPhase = 4 : i32, order = array<i32: 1, 0>, perPhase = 2 : i32, vec = 8 : i32}>>>
    "tilegpu.async_copy_global_to_local"(%p, %one, %m) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<32x32x!tile.ptr<f16>, #b>, !tilegpu.memdesc<tensor<32x32xf16, #tilegpu.shared<{maxPhase = 4 : i32, order = array<i32: 1, 0>, perPhase = 2 : i32, vec = 8 : i32}>>>, tensor<32x32xi1, #b>) -> ()
    "tilegpu.async_commit_group"() : () -> ()
    "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
    "tilegpu.barrier"() : () -> ()
    %x = "tilegpu.local_load"(%one) : (!tilegpu.memdesc<tensor<32x32xf16, #tilegpu.shared<{maxPhase = 4 : i32, order = array<i32: 1, 0>, perPhase = 2 : i32, vec = 8 : i32}>>>) -> tensor<32x32xf16, #b>
    %qs = "tile.splat"(%dst) : (!tile.ptr<f16>) -> tensor<32x32x!tile.ptr<f16>, #b>
    %q = "tile.addptr"(%qs, %off) : (tensor<32x32x!tile.ptr<f16>, #b>, tensor<32x32xi32, #b>) -> tensor<32x32x!tile.ptr<f16>, #b>
    "tile.store"(%q, %x) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f16>, #b>, tensor<32x32xf16, #b>) -> ()
    return
  }
}
