// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s

// Tiles staged from registers into wgmma (NVMMA) buffers are made visible to the
// asynchronous proxy by a fence.proxy.async after their stores. A thread's fence orders
// all its earlier writes, so two tiles staged one after the other, with only global
// loads and address arithmetic between them (a matmul's A and B when neither can be
// copied with cp.async), need one fence, after the second: Triton fences once before
// the dot; one fence per tile put an extra MEMBAR.ALL.CTA in every iteration. A read
// of the first buffer in between (here a local_load; a dot alike) keeps its own fence.

// CHECK-LABEL: llvm.func @one_fence
// CHECK-NOT: nvvm.fence.proxy
// CHECK-COUNT-4: llvm.store {{.+}} !llvm.ptr<3>
// CHECK-NOT: nvvm.fence.proxy
// CHECK-COUNT-4: ld.global.v4.b32
// CHECK-NOT: nvvm.fence.proxy
// CHECK-COUNT-4: llvm.store {{.+}} !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.fence.proxy

// CHECK-LABEL: llvm.func @read_between
// CHECK-COUNT-4: llvm.store {{.+}} !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK-NEXT: nvvm.barrier0
// CHECK: llvm.load {{.+}} !llvm.ptr<3>
// CHECK-COUNT-4: llvm.store {{.+}} !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>

#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#s = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 128 : i32, transposed = false}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @one_fence(%x_ptr: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %y_ptr: !tile.ptr<f16> {tile.divisibility = 16 : i32}) {
    %r = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #tilegpu.slice<{dim = 1 : i32, parent = #b}>>
    %c = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #tilegpu.slice<{dim = 0 : i32, parent = #b}>>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<64xi32, #tilegpu.slice<{dim = 1 : i32, parent = #b}>>) -> tensor<64x1xi32, #b>
    %c2 = "tile.expand_dims"(%c) {axis = 0 : i32} : (tensor<64xi32, #tilegpu.slice<{dim = 0 : i32, parent = #b}>>) -> tensor<1x64xi32, #b>
    %c64 = arith.constant dense<64> : tensor<64x1xi32, #b>
    %rs = arith.muli %r2, %c64 : tensor<64x1xi32, #b>
    %rb = "tile.broadcast"(%rs) : (tensor<64x1xi32, #b>) -> tensor<64x64xi32, #b>
    %cb = "tile.broadcast"(%c2) : (tensor<1x64xi32, #b>) -> tensor<64x64xi32, #b>
    %off = arith.addi %rb, %cb : tensor<64x64xi32, #b>
    %xs = "tile.splat"(%x_ptr) : (!tile.ptr<f16>) -> tensor<64x64x!tile.ptr<f16>, #b>
    %xp = "tile.addptr"(%xs, %off) : (tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xi32, #b>) -> tensor<64x64x!tile.ptr<f16>, #b>
    %x = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x64x!tile.ptr<f16>, #b>) -> tensor<64x64xf16, #b>
    %xa = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #b>) -> !tilegpu.memdesc<tensor<64x64xf16, #s>>
    %ys = "tile.splat"(%y_ptr) : (!tile.ptr<f16>) -> tensor<64x64x!tile.ptr<f16>, #b>
    %yp = "tile.addptr"(%ys, %off) : (tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xi32, #b>) -> tensor<64x64x!tile.ptr<f16>, #b>
    %y = "tile.load"(%yp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x64x!tile.ptr<f16>, #b>) -> tensor<64x64xf16, #b>
    %ya = "tilegpu.local_alloc"(%y) : (tensor<64x64xf16, #b>) -> !tilegpu.memdesc<tensor<64x64xf16, #s>>
    %xr = "tilegpu.local_load"(%xa) : (!tilegpu.memdesc<tensor<64x64xf16, #s>>) -> tensor<64x64xf16, #b>
    %yr = "tilegpu.local_load"(%ya) : (!tilegpu.memdesc<tensor<64x64xf16, #s>>) -> tensor<64x64xf16, #b>
    %sum = arith.addf %xr, %yr : tensor<64x64xf16, #b>
    "tile.store"(%xp, %sum) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xf16, #b>) -> ()
    return
  }
  func.func public @read_between(%x_ptr: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %y_ptr: !tile.ptr<f16> {tile.divisibility = 16 : i32}) {
    %r = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #tilegpu.slice<{dim = 1 : i32, parent = #b}>>
    %c = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #tilegpu.slice<{dim = 0 : i32, parent = #b}>>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<64xi32, #tilegpu.slice<{dim = 1 : i32, parent = #b}>>) -> tensor<64x1xi32, #b>
    %c2 = "tile.expand_dims"(%c) {axis = 0 : i32} : (tensor<64xi32, #tilegpu.slice<{dim = 0 : i32, parent = #b}>>) -> tensor<1x64xi32, #b>
    %c64 = arith.constant dense<64> : tensor<64x1xi32, #b>
    %rs = arith.muli %r2, %c64 : tensor<64x1xi32, #b>
    %rb = "tile.broadcast"(%rs) : (tensor<64x1xi32, #b>) -> tensor<64x64xi32, #b>
    %cb = "tile.broadcast"(%c2) : (tensor<1x64xi32, #b>) -> tensor<64x64xi32, #b>
    %off = arith.addi %rb, %cb : tensor<64x64xi32, #b>
    %xs = "tile.splat"(%x_ptr) : (!tile.ptr<f16>) -> tensor<64x64x!tile.ptr<f16>, #b>
    %xp = "tile.addptr"(%xs, %off) : (tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xi32, #b>) -> tensor<64x64x!tile.ptr<f16>, #b>
    %x = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x64x!tile.ptr<f16>, #b>) -> tensor<64x64xf16, #b>
    %xa = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #b>) -> !tilegpu.memdesc<tensor<64x64xf16, #s>>
    %xr = "tilegpu.local_load"(%xa) : (!tilegpu.memdesc<tensor<64x64xf16, #s>>) -> tensor<64x64xf16, #b>
    %ys = "tile.splat"(%y_ptr) : (!tile.ptr<f16>) -> tensor<64x64x!tile.ptr<f16>, #b>
    %yp = "tile.addptr"(%ys, %off) : (tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xi32, #b>) -> tensor<64x64x!tile.ptr<f16>, #b>
    %y = "tile.load"(%yp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x64x!tile.ptr<f16>, #b>) -> tensor<64x64xf16, #b>
    %ya = "tilegpu.local_alloc"(%y) : (tensor<64x64xf16, #b>) -> !tilegpu.memdesc<tensor<64x64xf16, #s>>
    %yr = "tilegpu.local_load"(%ya) : (!tilegpu.memdesc<tensor<64x64xf16, #s>>) -> tensor<64x64xf16, #b>
    %sum = arith.addf %xr, %yr : tensor<64x64xf16, #b>
    "tile.store"(%xp, %sum) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xf16, #b>) -> ()
    return
  }
}
