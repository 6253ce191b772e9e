// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,convert-tilegpu-to-llvm | FileCheck %s

// Atomic loads, stores and polls, and the hardware reads of tl.extra.cuda.
//
// @handover: a release store is one thread's (the scalar's owner), after a barrier; an
// acquire load of a block each thread holds alone is followed by a barrier; a poll
// without timeout spins in thread 0, fences on success and ends with a barrier, and its
// result is constant true.
//
// @timed_poll: a poll of a replicated block with a timeout reads %globaltimer once, polls
// each element in its owner, and publishes whether it matched through shared memory.
//
// @hardware: special registers and grid dependency control.

// CHECK-LABEL: llvm.func @handover
// CHECK: %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x
// CHECK: nvvm.barrier0
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %{{.+}} : i32
// CHECK: "@$2 st.release.gpu.global.b32 [$0], $1;", "l,r,b" %{{.+}}, %{{.+}}, %[[FIRST]]
// CHECK-COUNT-4: "mov.b32 $0, 0;\0A@$2 ld.acquire.sys.global.b32 $0, [$1];", "=&r,l,b"
// CHECK-NOT: ld.acquire
// CHECK: nvvm.barrier0
// CHECK: "{\0A.reg .pred matched;\0A.reg .b32 value;\0Amov.u32 $0, 0;\0A@!$4 bra done;\0Apoll:\0Ald.relaxed.cta.global.b32 value, [$1];\0Asetp.eq.b32 matched, value, $2;\0A@matched bra found;\0Abra poll;\0Afound:\0Afence.acq_rel.cta;\0Amov.u32 $0, 1;\0Adone:\0A}", "=&r,l,r,l,b,l"
// CHECK-NEXT: arith.cmpi ne
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: st.shared
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @timed_poll
// CHECK: "mov.u64 $0, %globaltimer;", "=l"
// CHECK: ld.relaxed.gpu.global.b64 value
// CHECK-SAME: setp.lt.u64 matched, elapsed, $5;
// CHECK-NOT: fence
// CHECK-SAME: "=&r,l,l,l,b,l"
// CHECK: st.shared.b8
// CHECK: nvvm.barrier0
// CHECK: llvm.load
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @hardware
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "griddepcontrol.wait;", "~{memory}"
// CHECK: llvm.inline_asm asm_dialect = att "mov.u32 $0, %smid;", "=r"  : () -> i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %globaltimer;", "=l"  : () -> i64
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "griddepcontrol.launch_dependents;", "~{memory}"
// CHECK: llvm.return

#own = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#few = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @handover(%arg0: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %c1 = arith.constant 1 : i32
    "tile.atomic_store"(%arg0, %c1) {operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "release"} : (!tile.ptr<i32>, i32) -> ()
    %0 = "tile.make_range"() {end = 512 : i32, start = 0 : i32} : () -> tensor<512xi32, #own>
    %1 = "tile.splat"(%arg1) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #own>
    %2 = "tile.addptr"(%1, %0) : (tensor<512x!tile.ptr<f32>, #own>, tensor<512xi32, #own>) -> tensor<512x!tile.ptr<f32>, #own>
    %3 = "tile.atomic_load"(%2) {operandSegmentSizes = array<i32: 1, 0>, scope = "sys", sem = "acquire"} : (tensor<512x!tile.ptr<f32>, #own>) -> tensor<512xf32, #own>
    %4 = "tile.atomic_poll"(%arg0, %c1) {operandSegmentSizes = array<i32: 1, 1, 0>, scope = "cta", sem = "acquire"} : (!tile.ptr<i32>, i32) -> i1
    %5 = arith.uitofp %4 : i1 to f32
    %6 = "tile.splat"(%5) : (f32) -> tensor<512xf32, #own>
    %7 = arith.addf %3, %6 : tensor<512xf32, #own>
    "tile.store"(%2, %7) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<512x!tile.ptr<f32>, #own>, tensor<512xf32, #own>) -> ()
    return
  }
  func.func public @timed_poll(%arg0: !tile.ptr<i64> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %arg2: i64) {
    %c7 = arith.constant 7 : i64
    %0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #few>
    %1 = "tile.splat"(%arg0) : (!tile.ptr<i64>) -> tensor<32x!tile.ptr<i64>, #few>
    %2 = "tile.addptr"(%1, %0) : (tensor<32x!tile.ptr<i64>, #few>, tensor<32xi32, #few>) -> tensor<32x!tile.ptr<i64>, #few>
    %3 = "tile.splat"(%c7) : (i64) -> tensor<32xi64, #few>
    %4 = "tile.atomic_poll"(%2, %3, %arg2) {operandSegmentSizes = array<i32: 1, 1, 1>, scope = "gpu", sem = "relaxed"} : (tensor<32x!tile.ptr<i64>, #few>, tensor<32xi64, #few>, i64) -> tensor<32xi1, #few>
    %5 = arith.extui %4 : tensor<32xi1, #few> to tensor<32xi8, #few>
    %6 = "tile.splat"(%arg1) : (!tile.ptr<i8>) -> tensor<32x!tile.ptr<i8>, #few>
    %7 = "tile.addptr"(%6, %0) : (tensor<32x!tile.ptr<i8>, #few>, tensor<32xi32, #few>) -> tensor<32x!tile.ptr<i8>, #few>
    "tile.store"(%7, %5) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<i8>, #few>, tensor<32xi8, #few>) -> ()
    return
  }
  func.func public @hardware(%arg0: !tile.ptr<i64> {tile.divisibility = 16 : i32}) {
    "tile.grid_dependency"() {action = "wait"} : () -> ()
    %0 = "tile.special_register"() {name = "smid"} : () -> i32
    %1 = "tile.special_register"() {name = "globaltimer"} : () -> i64
    %2 = arith.extsi %0 : i32 to i64
    %3 = arith.addi %1, %2 : i64
    "tile.store"(%arg0, %3) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i64>, i64) -> ()
    "tile.grid_dependency"() {action = "launch_dependents"} : () -> ()
    return
  }
}
