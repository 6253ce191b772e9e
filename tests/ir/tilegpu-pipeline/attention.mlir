// RUN: tilec-opt %s -p 'tilegpu-pipeline{num-stages=2},tile-dce,canonicalize,cse' | FileCheck %s
// RUN: tilec-opt %s -p 'tilegpu-remove-layout-conversions,tilegpu-pipeline{num-stages=2},tile-dce,canonicalize,cse,tilegpu-allocate-shared-memory,tilegpu-insert-barriers' | FileCheck %s --check-prefix=BAR

// Flash attention's inner loop: qk = dot(q, trans(k)), a softmax update, then
// acc += dot(p, v). K reaches its dot through tile.trans, V after the softmax; both
// come from loop-carried pointers and both are pipelined. The dots read their operands
// into registers, so each ring has S-1 = 1 slot (as in Triton), and each is refilled
// with iteration i+1's tile right after the last dot that reads it: K's after q @ k,
// before the softmax (so its copy overlaps the softmax and p @ v), V's after p @ v,
// followed by the iteration's commit.

// CHECK-LABEL: func.func public @attention
// CHECK: %[[RK:.*]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<1x32x32xf16>>
// CHECK: %[[RV:.*]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<1x32x32xf16>>
// CHECK: scf.for
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// CHECK-NEXT: %[[SK:.*]] = "tilegpu.memdesc_index"(%[[RK]], %c0_i32) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: %[[K:.*]] = "tilegpu.local_load"(%[[SK]])
// CHECK-NEXT: %[[KT:.*]] = "tile.trans"(%[[K]])
// CHECK: "tile.dot"(%{{.*}}, %[[KT]], %{{.*}})
// CHECK-NOT: "tile.reduce"
// CHECK: "tilegpu.memdesc_index"(%[[RK]], %c0_i32) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: "tilegpu.async_copy_global_to_local"
// CHECK-NOT: "tilegpu.async_commit_group"
// CHECK: "tile.reduce"
// CHECK: %[[SV:.*]] = "tilegpu.memdesc_index"(%[[RV]], %c0_i32) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: %[[V:.*]] = "tilegpu.local_load"(%[[SV]])
// CHECK: "tile.dot"(%{{.*}}, %[[V]], %{{.*}})
// CHECK-NOT: "tilegpu.async_commit_group"
// CHECK: "tilegpu.memdesc_index"(%[[RV]], %c0_i32) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: "tilegpu.async_copy_global_to_local"
// CHECK-NEXT: "tilegpu.async_commit_group"
// CHECK-NOT: "tile.load"
// CHECK: scf.yield
// CHECK: "tilegpu.async_wait"() {num = 0 : i32}
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[RK]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[RV]])

// BAR-LABEL: func.func public @attention
// BAR: scf.for
// BAR-NEXT: "tilegpu.async_wait"
// BAR-NEXT: "tilegpu.memdesc_index"
// BAR-NEXT: "tilegpu.barrier"
// BAR-NEXT: "tilegpu.local_load"
// Each refill waits for every thread's reads of its slot.
// BAR: "tile.dot"
// BAR: "tilegpu.memdesc_index"
// BAR-NEXT: "tilegpu.barrier"
// BAR-NEXT: "tilegpu.async_copy_global_to_local"
// The softmax's reductions and conversions have barriers of their own (scratch space);
// the V ring's read, whose slot landed with K's, needs none.
// BAR: %[[V:[0-9]+]] = "tilegpu.memdesc_index"(%{{[0-9]+}}, %c0_i32) {tilegpu.pipeline_slot = 0 : i32}
// BAR-NEXT: "tilegpu.local_load"(%[[V]])
// BAR: "tile.dot"
// BAR: "tilegpu.memdesc_index"
// BAR-NEXT: "tilegpu.barrier"
// BAR-NEXT: "tilegpu.async_copy_global_to_local"
// BAR: scf.yield

#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice1 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice2 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice3 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice4 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice5 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#blocked3 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#slice6 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked4 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @attention(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg3: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg4: i32 {tile.divisibility = 16 : i32}) {
    %c1024_i32 = arith.constant 1024 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %c32_i32 = arith.constant 32 : i32
    %0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice0>
    %1 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %2 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice2>
    %3 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice3>
    %4 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice4>
    %5 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice5>
    %6 = "tile.expand_dims"(%1) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked0>
    %7 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked0>
    %8 = arith.muli %6, %7 : tensor<32x1xi32, #blocked0>
    %9 = "tile.splat"(%arg0) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %10 = "tile.addptr"(%9, %8) : (tensor<32x1x!tile.ptr<f16>, #blocked0>, tensor<32x1xi32, #blocked0>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %11 = "tile.expand_dims"(%5) {axis = 0 : i32} : (tensor<32xi32, #slice5>) -> tensor<1x32xi32, #blocked0>
    %12 = "tile.broadcast"(%10) : (tensor<32x1x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %13 = "tile.broadcast"(%11) : (tensor<1x32xi32, #blocked0>) -> tensor<32x32xi32, #blocked0>
    %14 = "tile.addptr"(%12, %13) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %15 = "tile.load"(%14) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked0>) -> tensor<32x32xf16, #blocked0>
    %16 = "tile.splat"(%cst_0) : (f32) -> tensor<32xf32, #slice2>
    %17 = "tile.splat"(%cst) : (f32) -> tensor<32xf32, #blocked1>
    %18 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked2>
    %19 = "tile.expand_dims"(%2) {axis = 1 : i32} : (tensor<32xi32, #slice2>) -> tensor<32x1xi32, #blocked2>
    %20 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked2>
    %21 = arith.muli %19, %20 : tensor<32x1xi32, #blocked2>
    %22 = "tile.splat"(%arg1) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked2>
    %23 = "tile.addptr"(%22, %21) : (tensor<32x1x!tile.ptr<f16>, #blocked2>, tensor<32x1xi32, #blocked2>) -> tensor<32x1x!tile.ptr<f16>, #blocked2>
    %24 = "tile.expand_dims"(%3) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked2>
    %25 = "tile.broadcast"(%23) : (tensor<32x1x!tile.ptr<f16>, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked2>
    %26 = "tile.broadcast"(%24) : (tensor<1x32xi32, #blocked2>) -> tensor<32x32xi32, #blocked2>
    %27 = "tile.addptr"(%25, %26) : (tensor<32x32x!tile.ptr<f16>, #blocked2>, tensor<32x32xi32, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked2>
    %28 = "tile.expand_dims"(%2) {axis = 1 : i32} : (tensor<32xi32, #slice2>) -> tensor<32x1xi32, #blocked2>
    %29 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked2>
    %30 = arith.muli %28, %29 : tensor<32x1xi32, #blocked2>
    %31 = "tile.splat"(%arg2) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked2>
    %32 = "tile.addptr"(%31, %30) : (tensor<32x1x!tile.ptr<f16>, #blocked2>, tensor<32x1xi32, #blocked2>) -> tensor<32x1x!tile.ptr<f16>, #blocked2>
    %33 = "tile.expand_dims"(%3) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked2>
    %34 = "tile.broadcast"(%32) : (tensor<32x1x!tile.ptr<f16>, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked2>
    %35 = "tile.broadcast"(%33) : (tensor<1x32xi32, #blocked2>) -> tensor<32x32xi32, #blocked2>
    %36 = "tile.addptr"(%34, %35) : (tensor<32x32x!tile.ptr<f16>, #blocked2>, tensor<32x32xi32, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked2>
    %37:5 = scf.for %arg5 = %c0_i32 to %arg4 step %c32_i32 iter_args(%arg6 = %17, %arg7 = %18, %arg8 = %16, %arg9 = %27, %arg10 = %36) -> (tensor<32xf32, #blocked1>, tensor<32x32xf32, #blocked2>, tensor<32xf32, #slice2>, tensor<32x32x!tile.ptr<f16>, #blocked2>, tensor<32x32x!tile.ptr<f16>, #blocked2>)  : i32 {
      %53 = "tilegpu.convert_layout"(%arg9) : (tensor<32x32x!tile.ptr<f16>, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
      %54 = "tile.load"(%53) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked0>) -> tensor<32x32xf16, #blocked0>
      %55 = "tilegpu.convert_layout"(%54) : (tensor<32x32xf16, #blocked0>) -> tensor<32x32xf16, #blocked2>
      %56 = "tile.trans"(%55) {order = array<i32: 1, 0>} : (tensor<32x32xf16, #blocked2>) -> tensor<32x32xf16, #blocked2>
      %57 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked2>
      %58 = "tile.dot"(%15, %56, %57) {input_precision = "ieee"} : (tensor<32x32xf16, #blocked0>, tensor<32x32xf16, #blocked2>, tensor<32x32xf32, #blocked2>) -> tensor<32x32xf32, #blocked2>
      %59 = "tile.reduce"(%58) ({
      ^bb0(%arg11: f32, %arg12: f32):
        %85 = arith.maxnumf %arg11, %arg12 : f32
        gpu.yield %85 : f32
      }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x32xf32, #blocked2>) -> tensor<32xf32, #slice2>
      %60 = arith.maxnumf %arg8, %59 : tensor<32xf32, #slice2>
      %61 = "tile.expand_dims"(%60) {axis = 1 : i32} : (tensor<32xf32, #slice2>) -> tensor<32x1xf32, #blocked2>
      %62 = "tile.broadcast"(%61) : (tensor<32x1xf32, #blocked2>) -> tensor<32x32xf32, #blocked2>
      %63 = arith.subf %58, %62 : tensor<32x32xf32, #blocked2>
      %64 = math.exp %63 : tensor<32x32xf32, #blocked2>
      %65 = arith.subf %arg8, %60 : tensor<32xf32, #slice2>
      %66 = math.exp %65 : tensor<32xf32, #slice2>
      %67 = "tilegpu.convert_layout"(%66) : (tensor<32xf32, #slice2>) -> tensor<32xf32, #blocked1>
      %68 = arith.mulf %arg6, %67 : tensor<32xf32, #blocked1>
      %69 = "tile.reduce"(%64) ({
      ^bb0(%arg11: f32, %arg12: f32):
        %85 = arith.addf %arg11, %arg12 : f32
        gpu.yield %85 : f32
      }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x32xf32, #blocked2>) -> tensor<32xf32, #slice2>
      %70 = "tilegpu.convert_layout"(%69) : (tensor<32xf32, #slice2>) -> tensor<32xf32, #blocked1>
      %71 = arith.addf %68, %70 : tensor<32xf32, #blocked1>
      %72 = "tilegpu.convert_layout"(%arg10) : (tensor<32x32x!tile.ptr<f16>, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
      %73 = "tile.load"(%72) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked0>) -> tensor<32x32xf16, #blocked0>
      %74 = "tile.expand_dims"(%66) {axis = 1 : i32} : (tensor<32xf32, #slice2>) -> tensor<32x1xf32, #blocked2>
      %75 = "tile.broadcast"(%74) : (tensor<32x1xf32, #blocked2>) -> tensor<32x32xf32, #blocked2>
      %76 = arith.mulf %arg7, %75 : tensor<32x32xf32, #blocked2>
      %77 = arith.truncf %64 : tensor<32x32xf32, #blocked2> to tensor<32x32xf16, #blocked2>
      %78 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked2>
      %79 = "tile.dot"(%77, %73, %78) {input_precision = "ieee"} : (tensor<32x32xf16, #blocked2>, tensor<32x32xf16, #blocked0>, tensor<32x32xf32, #blocked2>) -> tensor<32x32xf32, #blocked2>
      %80 = arith.addf %76, %79 : tensor<32x32xf32, #blocked2>
      %81 = "tile.splat"(%c1024_i32) : (i32) -> tensor<32x32xi32, #blocked2>
      %82 = "tile.addptr"(%arg9, %81) : (tensor<32x32x!tile.ptr<f16>, #blocked2>, tensor<32x32xi32, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked2>
      %83 = "tile.splat"(%c1024_i32) : (i32) -> tensor<32x32xi32, #blocked2>
      %84 = "tile.addptr"(%arg10, %83) : (tensor<32x32x!tile.ptr<f16>, #blocked2>, tensor<32x32xi32, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked2>
      scf.yield %71, %80, %60, %82, %84 : tensor<32xf32, #blocked1>, tensor<32x32xf32, #blocked2>, tensor<32xf32, #slice2>, tensor<32x32x!tile.ptr<f16>, #blocked2>, tensor<32x32x!tile.ptr<f16>, #blocked2>
    }
    %38 = "tile.expand_dims"(%0) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked3>
    %39 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked3>
    %40 = arith.muli %38, %39 : tensor<32x1xi32, #blocked3>
    %41 = "tile.splat"(%arg3) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked3>
    %42 = "tile.addptr"(%41, %40) : (tensor<32x1x!tile.ptr<f32>, #blocked3>, tensor<32x1xi32, #blocked3>) -> tensor<32x1x!tile.ptr<f32>, #blocked3>
    %43 = "tile.expand_dims"(%4) {axis = 0 : i32} : (tensor<32xi32, #slice4>) -> tensor<1x32xi32, #blocked3>
    %44 = "tile.broadcast"(%42) : (tensor<32x1x!tile.ptr<f32>, #blocked3>) -> tensor<32x32x!tile.ptr<f32>, #blocked3>
    %45 = "tile.broadcast"(%43) : (tensor<1x32xi32, #blocked3>) -> tensor<32x32xi32, #blocked3>
    %46 = "tile.addptr"(%44, %45) : (tensor<32x32x!tile.ptr<f32>, #blocked3>, tensor<32x32xi32, #blocked3>) -> tensor<32x32x!tile.ptr<f32>, #blocked3>
    %47 = "tilegpu.convert_layout"(%37#0) : (tensor<32xf32, #blocked1>) -> tensor<32xf32, #slice6>
    %48 = "tile.expand_dims"(%47) {axis = 1 : i32} : (tensor<32xf32, #slice6>) -> tensor<32x1xf32, #blocked4>
    %49 = "tilegpu.convert_layout"(%48) : (tensor<32x1xf32, #blocked4>) -> tensor<32x1xf32, #blocked2>
    %50 = "tile.broadcast"(%49) : (tensor<32x1xf32, #blocked2>) -> tensor<32x32xf32, #blocked2>
    %51 = arith.divf %37#1, %50 : tensor<32x32xf32, #blocked2>
    %52 = "tilegpu.convert_layout"(%51) : (tensor<32x32xf32, #blocked2>) -> tensor<32x32xf32, #blocked3>
    "tile.store"(%46, %52) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f32>, #blocked3>, tensor<32x32xf32, #blocked3>) -> ()
    return
  }
}

