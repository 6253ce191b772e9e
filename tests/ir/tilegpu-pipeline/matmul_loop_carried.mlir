// RUN: tilec-opt %s -p 'tilegpu-pipeline{num-stages=3},tile-dce,canonicalize,cse' | FileCheck %s --check-prefix=S3
// RUN: tilec-opt %s -p 'tilegpu-pipeline{num-stages=2},tile-dce,canonicalize,cse' | FileCheck %s --check-prefix=S2
// RUN: tilec-opt %s -p 'tilegpu-pipeline{num-stages=4},tile-dce,canonicalize,cse' | FileCheck %s --check-prefix=S4
// RUN: tilec-opt %s -p 'tilegpu-remove-layout-conversions,tilegpu-pipeline{num-stages=3},tile-dce,canonicalize,cse,tilegpu-allocate-shared-memory,tilegpu-insert-barriers' | FileCheck %s --check-prefixes=BAR,BAR3
// RUN: tilec-opt %s -p 'tilegpu-remove-layout-conversions,tilegpu-pipeline{num-stages=2},tile-dce,canonicalize,cse,tilegpu-allocate-shared-memory,tilegpu-insert-barriers' | FileCheck %s --check-prefix=BAR
// RUN: tilec-opt %s -p 'tilegpu-pipeline{num-stages=1}' | FileCheck %s --check-prefix=S1

// The tutorial matmul's loop: A and B tiles loaded through loop-carried pointers
// (a_ptrs += BK, b_ptrs += BK * BN), fp16, feeding a dot on the FMA path (blocked
// operands, so plain row-major rings). The dot reads its operands into registers, so
// the loads become rings of S-1 buffers, as in Triton: the prologue copies iterations
// 0..S-2 (each guarded by lb + s*step < ub), the body waits for iteration i, reads
// slot c, and after the dot copies iteration i+S-1 into that same slot with pointers
// S-1 updates ahead (extra iter_args); the loop drains after its end. The original
// pointers, which now only update themselves, are gone.

// S3-LABEL: func.func public @mm_carried
// S3-DAG: %[[RA:.*]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<2x32x32xf16>>
// S3-DAG: %[[RB:.*]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<2x32x32xf16>>
// S3: %[[E0:.*]] = arith.cmpi sgt, %arg3, %c0_i32 : i32
// S3: "tilegpu.memdesc_index"(%[[RA]], %c0_i32)
// S3: "tilegpu.async_copy_global_to_local"
// S3: "tilegpu.memdesc_index"(%[[RB]], %c0_i32)
// S3: "tilegpu.async_copy_global_to_local"
// S3-NEXT: "tilegpu.async_commit_group"
// S3: %[[E1:.*]] = arith.cmpi sgt, %arg3, %c32_i32 : i32
// S3: "tilegpu.memdesc_index"(%[[RA]], %c1_i32)
// S3: "tilegpu.async_copy_global_to_local"
// S3: "tilegpu.memdesc_index"(%[[RB]], %c1_i32)
// S3: "tilegpu.async_copy_global_to_local"
// S3-NEXT: "tilegpu.async_commit_group"
// S3-NOT: async_copy
// S3: scf.for %[[IV:.*]] = %c0_i32 to %arg3 step %c32_i32 iter_args(%[[ACC:.*]] = %{{.*}}, %[[PA:.*]] = %{{.*}}, %[[PB:.*]] = %{{.*}}, %[[C:.*]] = %c0_i32) -> (tensor<32x32xf32, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>, i32)
// S3-NEXT: "tilegpu.async_wait"() {num = 1 : i32}
// S3-NEXT: %[[SA:.*]] = "tilegpu.memdesc_index"(%[[RA]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// S3-NEXT: %[[A:.*]] = "tilegpu.local_load"(%[[SA]]) : (!tilegpu.memdesc<tensor<32x32xf16>>) -> tensor<32x32xf16, #blocked1>
// S3-NEXT: %[[SB:.*]] = "tilegpu.memdesc_index"(%[[RB]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// S3-NEXT: %[[B:.*]] = "tilegpu.local_load"(%[[SB]])
// S3-NOT: async_copy
// S3: "tile.dot"(%[[A]], %[[B]], %{{.*}})
// S3-NEXT: %[[AHEAD:.*]] = arith.addi %[[IV]], %c64_i32 : i32
// S3-NEXT: %[[EXISTS:.*]] = arith.cmpi slt, %[[AHEAD]], %arg3 : i32
// S3: %[[WA:.*]] = "tilegpu.memdesc_index"(%[[RA]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// S3: "tilegpu.async_copy_global_to_local"(%{{.*}}, %[[WA]], %[[EXISTS]]) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1>, vec = 8 : i32}
// S3: %[[WB:.*]] = "tilegpu.memdesc_index"(%[[RB]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// S3: "tilegpu.async_copy_global_to_local"(%{{.*}}, %[[WB]], %[[EXISTS]]) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 1>, vec = 8 : i32}
// S3-NEXT: "tilegpu.async_commit_group"
// S3: %[[NEXT:.*]] = arith.addi %[[C]], %c1_i32 : i32
// S3-NEXT: %[[WRAPS:.*]] = arith.cmpi eq, %[[NEXT]], %c2_i32 : i32
// S3-NEXT: arith.select %[[WRAPS]], %c0_i32, %[[NEXT]] : i32
// S3-NOT: tile.load
// S3: scf.yield
// S3-NEXT: }
// S3-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// S3-NEXT: "tilegpu.local_dealloc"(%[[RA]])
// S3-NEXT: "tilegpu.local_dealloc"(%[[RB]])

// Two stages: one slot a ring, always slot 0 (no counter is carried).
// S2-LABEL: func.func public @mm_carried
// S2: "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<1x32x32xf16>>
// S2-COUNT-2: "tilegpu.async_copy_global_to_local"
// S2-NEXT: "tilegpu.async_commit_group"
// S2-NEXT: scf.for {{.*}} -> (tensor<32x32xf32, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>)
// S2-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// S2-NEXT: "tilegpu.memdesc_index"(%{{.*}}, %c0_i32) {tilegpu.pipeline_slot = 0 : i32}
// S2: "tile.dot"
// S2-NEXT: arith.addi %{{.*}}, %c32_i32 : i32
// S2: "tilegpu.memdesc_index"(%{{.*}}, %c0_i32) {tilegpu.pipeline_slot = 0 : i32}
// S2-NEXT: "tilegpu.async_copy_global_to_local"

// S4-LABEL: func.func public @mm_carried
// S4: "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<3x32x32xf16>>
// S4-COUNT-3: "tilegpu.async_commit_group"
// S4-NEXT: scf.for
// S4-NEXT: "tilegpu.async_wait"() {num = 2 : i32}
// S4: "tile.dot"
// S4-NEXT: arith.addi %{{.*}}, %c96_i32 : i32
// S4: {tilegpu.pipeline_slot = 0 : i32}
// S4: arith.cmpi eq, %{{.*}}, %c3_i32 : i32

// With the barriers placed (after the layout clean-up that carries the pointers in the
// loads' layout, as the compiler runs it): two per iteration, one after the wait and
// before the first read, one after the dot (the last read of the slots) and before
// the copies that refill them; none between the reads of the two rings, nor between
// the copies.
// BAR-LABEL: func.func public @mm_carried
// BAR-NOT: "tilegpu.barrier"
// BAR: scf.for
// BAR-NEXT: "tilegpu.async_wait"
// BAR-NEXT: "tilegpu.memdesc_index"
// BAR-NEXT: "tilegpu.barrier"
// BAR-NEXT: "tilegpu.local_load"
// BAR-NOT: "tilegpu.barrier"
// BAR: "tile.dot"
// BAR-NOT: "tilegpu.barrier"
// BAR: "tilegpu.memdesc_index"
// BAR-NEXT: "tilegpu.barrier"
// BAR-NEXT: "tilegpu.async_copy_global_to_local"
// BAR-NOT: "tilegpu.barrier"
// BAR: scf.yield
// BAR-NEXT: }
// BAR-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// With three stages the epilogue's conversion takes scratch space over the rings'
// bytes: it waits for their last reads.
// BAR3: "tilegpu.barrier"
// BAR3-NEXT: "tilegpu.convert_layout"
// BAR: return

// S1-LABEL: func.func public @mm_carried
// S1-NOT: tilegpu.async_copy
// S1: "tile.load"
// S1: "tile.load"

#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice1 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice2 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice3 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @mm_carried(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg3: i32 {tile.divisibility = 16 : i32}) {
    %c1024_i32 = arith.constant 1024 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %c32_i32 = arith.constant 32 : i32
    %0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice0>
    %1 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %2 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice2>
    %3 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice3>
    %4 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice0>
    %5 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice2>
    %6 = "tile.expand_dims"(%0) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked0>
    %7 = "tile.splat"(%arg3) : (i32) -> tensor<32x1xi32, #blocked0>
    %8 = arith.muli %6, %7 : tensor<32x1xi32, #blocked0>
    %9 = "tile.splat"(%arg0) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %10 = "tile.addptr"(%9, %8) : (tensor<32x1x!tile.ptr<f16>, #blocked0>, tensor<32x1xi32, #blocked0>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %11 = "tile.expand_dims"(%5) {axis = 0 : i32} : (tensor<32xi32, #slice2>) -> tensor<1x32xi32, #blocked0>
    %12 = "tile.broadcast"(%10) : (tensor<32x1x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %13 = "tile.broadcast"(%11) : (tensor<1x32xi32, #blocked0>) -> tensor<32x32xi32, #blocked0>
    %14 = "tile.addptr"(%12, %13) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %15 = "tile.expand_dims"(%4) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked0>
    %16 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked0>
    %17 = arith.muli %15, %16 : tensor<32x1xi32, #blocked0>
    %18 = "tile.splat"(%arg1) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %19 = "tile.addptr"(%18, %17) : (tensor<32x1x!tile.ptr<f16>, #blocked0>, tensor<32x1xi32, #blocked0>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %20 = "tile.expand_dims"(%2) {axis = 0 : i32} : (tensor<32xi32, #slice2>) -> tensor<1x32xi32, #blocked0>
    %21 = "tile.broadcast"(%19) : (tensor<32x1x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %22 = "tile.broadcast"(%20) : (tensor<1x32xi32, #blocked0>) -> tensor<32x32xi32, #blocked0>
    %23 = "tile.addptr"(%21, %22) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %24 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked0>
    %25:3 = scf.for %arg4 = %c0_i32 to %arg3 step %c32_i32 iter_args(%arg5 = %24, %arg6 = %14, %arg7 = %23) -> (tensor<32x32xf32, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>)  : i32 {
      %36 = "tilegpu.convert_layout"(%arg6) : (tensor<32x32x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked1>
      %37 = "tile.load"(%36) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked1>) -> tensor<32x32xf16, #blocked1>
      %38 = "tilegpu.convert_layout"(%arg7) : (tensor<32x32x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked1>
      %39 = "tile.load"(%38) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked1>) -> tensor<32x32xf16, #blocked1>
      %40 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked0>
      %41 = "tile.dot"(%37, %39, %40) {input_precision = "ieee"} : (tensor<32x32xf16, #blocked1>, tensor<32x32xf16, #blocked1>, tensor<32x32xf32, #blocked0>) -> tensor<32x32xf32, #blocked0>
      %42 = arith.addf %arg5, %41 : tensor<32x32xf32, #blocked0>
      %43 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x32xi32, #blocked0>
      %44 = "tile.addptr"(%arg6, %43) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
      %45 = "tile.splat"(%c1024_i32) : (i32) -> tensor<32x32xi32, #blocked0>
      %46 = "tile.addptr"(%arg7, %45) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
      scf.yield %42, %44, %46 : tensor<32x32xf32, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>
    }
    %26 = "tile.expand_dims"(%1) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked2>
    %27 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked2>
    %28 = arith.muli %26, %27 : tensor<32x1xi32, #blocked2>
    %29 = "tile.splat"(%arg2) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked2>
    %30 = "tile.addptr"(%29, %28) : (tensor<32x1x!tile.ptr<f32>, #blocked2>, tensor<32x1xi32, #blocked2>) -> tensor<32x1x!tile.ptr<f32>, #blocked2>
    %31 = "tile.expand_dims"(%3) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked2>
    %32 = "tile.broadcast"(%30) : (tensor<32x1x!tile.ptr<f32>, #blocked2>) -> tensor<32x32x!tile.ptr<f32>, #blocked2>
    %33 = "tile.broadcast"(%31) : (tensor<1x32xi32, #blocked2>) -> tensor<32x32xi32, #blocked2>
    %34 = "tile.addptr"(%32, %33) : (tensor<32x32x!tile.ptr<f32>, #blocked2>, tensor<32x32xi32, #blocked2>) -> tensor<32x32x!tile.ptr<f32>, #blocked2>
    %35 = "tilegpu.convert_layout"(%25#0) : (tensor<32x32xf32, #blocked0>) -> tensor<32x32xf32, #blocked2>
    "tile.store"(%34, %35) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f32>, #blocked2>, tensor<32x32xf32, #blocked2>) -> ()
    return
  }
}

