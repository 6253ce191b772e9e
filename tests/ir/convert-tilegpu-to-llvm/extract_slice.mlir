// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s
// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s --check-prefix=SMEM

// tilegpu.extract_slice lowers to a selection of registers: no shared memory, no
// barrier, no instruction of its own. With 4 f32 per thread, 32 lanes and 4 warps, the
// layout covers 512 elements, so a 1024-element tensor is two repetitions of it in each
// thread's registers (0-3: elements below 512, 4-7: the same ones plus 512). Its upper
// half [512, 1024) is therefore registers 4-7 of every thread, which here are the
// second 16-byte load's results; the store of the slice writes exactly those.

// Nothing is allocated, and nothing touches shared memory or waits at a barrier.
// SMEM: tilegpu.shared = 0 : i32
// SMEM-NOT: llvm.store
// SMEM-NOT: llvm.load
// SMEM-NOT: nvvm.barrier0
// SMEM-NOT: tilegpu.extract_slice

// CHECK-LABEL: llvm.func @upper_half
// The second load reads this thread's 4 elements at +512...
// CHECK: %[[HI:[0-9]+]] = arith.addi %{{[0-9]+}}, %c512_i32 : i32
// CHECK: %[[PHI:[0-9]+]] = llvm.getelementptr %arg0[%[[HI]]]
// CHECK: %[[LO_LOAD:[0-9]+]] = llvm.inline_asm {{.*}}"ld.global.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l" %{{[0-9]+}}
// CHECK: %[[HI_LOAD:[0-9]+]] = llvm.inline_asm {{.*}}"ld.global.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l" %[[PHI]]
// CHECK-NEXT: %[[E0:[0-9]+]] = llvm.extractvalue %[[HI_LOAD]][0]
// CHECK-NEXT: %[[E1:[0-9]+]] = llvm.extractvalue %[[HI_LOAD]][1]
// CHECK-NEXT: %[[E2:[0-9]+]] = llvm.extractvalue %[[HI_LOAD]][2]
// CHECK-NEXT: %[[E3:[0-9]+]] = llvm.extractvalue %[[HI_LOAD]][3]
// CHECK-NEXT: %[[F0:[0-9]+]] = llvm.bitcast %[[E0]] : i32 to f32
// CHECK-NEXT: %[[F1:[0-9]+]] = llvm.bitcast %[[E1]] : i32 to f32
// CHECK-NEXT: %[[F2:[0-9]+]] = llvm.bitcast %[[E2]] : i32 to f32
// CHECK-NEXT: %[[F3:[0-9]+]] = llvm.bitcast %[[E3]] : i32 to f32
// ...and the slice's 4 registers, stored in order as one 16-byte vector, are those
// values (not the first load's).
// CHECK: %[[S0:[0-9]+]] = llvm.bitcast %[[F0]] : f32 to i32
// CHECK-NEXT: %[[S1:[0-9]+]] = llvm.bitcast %[[F1]] : f32 to i32
// CHECK-NEXT: %[[S2:[0-9]+]] = llvm.bitcast %[[F2]] : f32 to i32
// CHECK-NEXT: %[[S3:[0-9]+]] = llvm.bitcast %[[F3]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm {{.*}}"st.global.v4.b32 [$0], {$1, $2, $3, $4};", "l,r,r,r,r" %{{[0-9]+}}, %[[S0]], %[[S1]], %[[S2]], %[[S3]]
// CHECK-NOT: st.global
// CHECK: llvm.return

#wide = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @upper_half(%src: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %dst: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %r = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, #wide>
    %s = "tile.splat"(%src) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #wide>
    %p = "tile.addptr"(%s, %r) : (tensor<1024x!tile.ptr<f32>, #wide>, tensor<1024xi32, #wide>) -> tensor<1024x!tile.ptr<f32>, #wide>
    %x = "tile.load"(%p) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<1024x!tile.ptr<f32>, #wide>) -> tensor<1024xf32, #wide>
    %hi = "tilegpu.extract_slice"(%x) {offsets = array<i32: 512>} : (tensor<1024xf32, #wide>) -> tensor<512xf32, #wide>
    %r2 = "tile.make_range"() {end = 512 : i32, start = 0 : i32} : () -> tensor<512xi32, #wide>
    %d = "tile.splat"(%dst) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #wide>
    %q = "tile.addptr"(%d, %r2) : (tensor<512x!tile.ptr<f32>, #wide>, tensor<512xi32, #wide>) -> tensor<512x!tile.ptr<f32>, #wide>
    "tile.store"(%q, %hi) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<512x!tile.ptr<f32>, #wide>, tensor<512xf32, #wide>) -> ()
    return
  }
}
