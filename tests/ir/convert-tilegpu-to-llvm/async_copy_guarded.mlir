// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s

// Copies guarded by one i1 (`pred`, the pipeliner's "this iteration exists"): every
// cp.async is issued under `@p`, so a false guard copies nothing and writes nothing,
// where a mask that is off zero-fills. With a mask as well, the mask stays the
// ignore-src predicate and the guard is the instruction's own; with a limit, the guard
// sits before the copy whose source size the limit gives.

// CHECK-LABEL: llvm.func @guarded
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred ignore; not.pred ignore, $2; @$3 cp.async.cg.shared.global [$0], [$1], 16, ignore; }", "r,l,b,b" %{{.+}}, %{{.+}}, %{{.+}}, %[[G:.+]] : (i32, !llvm.ptr<1>, i1, i1) -> ()
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$2 cp.async.cg.shared.global [$0], [$1], 16;", "r,l,b" %{{.+}}, %{{.+}}, %[[G]] : (i32, !llvm.ptr<1>, i1) -> ()
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$3 cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r,b" %{{.+}}, %{{.+}}, %{{.+}}, %[[G]] : (i32, !llvm.ptr<1>, i32, i1) -> ()
// CHECK-NOT: cp.async.cg
// CHECK: nvvm.cp.async.commit.group

#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @guarded(%src: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32, %k: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %r = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #tilegpu.slice<{dim = 1 : i32, parent = #b}>>
    %c = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #tilegpu.slice<{dim = 0 : i32, parent = #b}>>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<32xi32, #tilegpu.slice<{dim = 1 : i32, parent = #b}>>) -> tensor<32x1xi32, #b>
    %c2d = "tile.expand_dims"(%c) {axis = 0 : i32} : (tensor<32xi32, #tilegpu.slice<{dim = 0 : i32, parent = #b}>>) -> tensor<1x32xi32, #b>
    %c32 = arith.constant dense<32> : tensor<32x1xi32, #b>
    %rs = arith.muli %r2, %c32 : tensor<32x1xi32, #b>
    %rb = "tile.broadcast"(%rs) : (tensor<32x1xi32, #b>) -> tensor<32x32xi32, #b>
    %cb = "tile.broadcast"(%c2d) : (tensor<1x32xi32, #b>) -> tensor<32x32xi32, #b>
    %off = arith.addi %rb, %cb : tensor<32x32xi32, #b>
    %ns = "tile.splat"(%n) : (i32) -> tensor<32x32xi32, #b>
    %m = arith.cmpi slt, %rb, %ns : tensor<32x32xi32, #b>
    %ks = "tile.splat"(%k) : (i32) -> tensor<32x32xi32, #b>
    %left = arith.subi %ks, %cb : tensor<32x32xi32, #b>
    %g = arith.cmpi slt, %c0, %n : i32
    %ps = "tile.splat"(%src) : (!tile.ptr<f16>) -> tensor<32x32x!tile.ptr<f16>, #b>
    %p = "tile.addptr"(%ps, %off) : (tensor<32x32x!tile.ptr<f16>, #b>, tensor<32x32xi32, #b>) -> tensor<32x32x!tile.ptr<f16>, #b>
    %ring = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<3x32x32xf16>>
    %s0 = "tilegpu.memdesc_index"(%ring, %c0) : (!tilegpu.memdesc<tensor<3x32x32xf16>>, i32) -> !tilegpu.memdesc<tensor<32x32xf16>>
    %s1 = "tilegpu.memdesc_index"(%ring, %c1) : (!tilegpu.memdesc<tensor<3x32x32xf16>>, i32) -> !tilegpu.memdesc<tensor<32x32xf16>>
    %s2 = "tilegpu.memdesc_index"(%ring, %c2) : (!tilegpu.memdesc<tensor<3x32x32xf16>>, i32) -> !tilegpu.memdesc<tensor<32x32xf16>>
    "tilegpu.async_copy_global_to_local"(%p, %s0, %m, %g) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>, vec = 8 : i32} : (tensor<32x32x!tile.ptr<f16>, #b>, !tilegpu.memdesc<tensor<32x32xf16>>, tensor<32x32xi1, #b>, i1) -> ()
    "tilegpu.async_copy_global_to_local"(%p, %s1, %g) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1>, vec = 8 : i32} : (tensor<32x32x!tile.ptr<f16>, #b>, !tilegpu.memdesc<tensor<32x32xf16>>, i1) -> ()
    "tilegpu.async_copy_global_to_local"(%p, %s2, %left, %g) {operandSegmentSizes = array<i32: 1, 1, 0, 1, 1>, vec = 8 : i32} : (tensor<32x32x!tile.ptr<f16>, #b>, !tilegpu.memdesc<tensor<32x32xf16>>, tensor<32x32xi32, #b>, i1) -> ()
    "tilegpu.async_commit_group"() : () -> ()
    "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
    return
  }
}
