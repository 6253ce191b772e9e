// RUN: tilec-opt %s -p 'tilegpu-pipeline,tile-dce,canonicalize,cse' | FileCheck %s

// A [M, K] and B [N, K], fp16, K-contiguous, 16-byte aligned, each thread holding runs of
// 8 along K; `for k in range(cdiv(K, 32))`, each load masked by its row bound and by
// `offs_k < K - k * 32` with K a runtime value (acc += dot(a, b.T)). The K bound may
// change at any element (constancy 1), which kept the copies one element, 2 bytes,
// wide: too narrow for cp.async, so the loop was not pipelined. But it keeps a prefix
// of every run of 8 (bounded_runs.py), so the copies stay 16 bytes wide: the row bound
// is their mask, and `K - k * 32 - offs_k` (a row of it, in 64 bits, broadcast) their
// limit, the elements left below the bound.

// CHECK-LABEL: func.func public @mm_k_tail
// Prologue, iteration 0: A's limit, then B's; each copy's limit is cut to nothing where
// the iteration does not exist (the select), its mask is the row bound.
// CHECK: %[[LEFT_A:.*]] = arith.subi %{{.*}}, %{{.*}} : tensor<1x32xi64, #blocked0>
// CHECK-NEXT: %[[ROW_A:.*]] = "tile.broadcast"(%[[LEFT_A]]) : (tensor<1x32xi64, #blocked0>) -> tensor<32x32xi64, #blocked0>
// CHECK: %[[LEFT_B:.*]] = arith.subi %{{.*}}, %{{.*}} : tensor<1x32xi64, #blocked0>
// CHECK-NEXT: %[[ROW_B:.*]] = "tile.broadcast"(%[[LEFT_B]]) : (tensor<1x32xi64, #blocked0>) -> tensor<32x32xi64, #blocked0>
// CHECK: %[[LIMIT_A:.*]] = arith.select %[[EXISTS0:.*]], %[[ROW_A]], %{{.*}} : tensor<32x32xi64, #blocked0>
// CHECK: "tilegpu.async_copy_global_to_local"(%{{.*}}, %{{.*}}, %{{.*}}, %[[LIMIT_A]]) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, vec = 8 : i32}
// CHECK: %[[LIMIT_B:.*]] = arith.select %[[EXISTS0]], %[[ROW_B]], %{{.*}} : tensor<32x32xi64, #blocked0>
// CHECK: "tilegpu.async_copy_global_to_local"(%{{.*}}, %{{.*}}, %{{.*}}, %[[LIMIT_B]]) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, vec = 8 : i32}
// CHECK-NEXT: "tilegpu.async_commit_group"
// CHECK: "tilegpu.async_copy_global_to_local"({{.*}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, vec = 8 : i32}
// CHECK: "tilegpu.async_copy_global_to_local"({{.*}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, vec = 8 : i32}
// CHECK-NEXT: "tilegpu.async_commit_group"
// The body: iteration i+2's limits from its own k, two copies guarded by that iteration
// existing (their last operand, one i1: past the end they write nothing), no load left.
// CHECK: scf.for
// CHECK: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK: %[[LEFT:.*]] = arith.subi %{{.*}}, %{{.*}} : tensor<1x32xi64, #blocked0>
// CHECK-NEXT: %[[ROW:.*]] = "tile.broadcast"(%[[LEFT]])
// CHECK-NOT: arith.select {{.*}} : tensor
// CHECK: "tilegpu.async_copy_global_to_local"(%{{.*}}, %{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>, vec = 8 : i32}
// CHECK-SAME: i1) -> ()
// CHECK: "tilegpu.async_copy_global_to_local"({{.*}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>, vec = 8 : i32}
// CHECK-NOT: "tile.load"
// CHECK: scf.yield

#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice1 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice2 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice3 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
#mma0 = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 8, 1>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 1, 4>}>
#dot_op0 = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>}>
#dot_op1 = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @mm_k_tail(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg3: i32, %arg4: i32, %arg5: i32, %arg6: i32 {tile.divisibility = 16 : i32}, %arg7: i32 {tile.divisibility = 16 : i32}, %arg8: i32 {tile.divisibility = 16 : i32}) {
    %c31_i32 = arith.constant 31 : i32
    %cst = arith.constant 0.000000e+00 : f16
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %c32_i32 = arith.constant 32 : i32
    %0 = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    %1 = "tile.get_program_id"() {axis = 1 : i32} : () -> i32
    %2 = arith.muli %0, %c32_i32 : i32
    %3 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice0>
    %4 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %5 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %6 = "tile.splat"(%2) : (i32) -> tensor<32xi32, #slice0>
    %7 = "tile.splat"(%2) : (i32) -> tensor<32xi32, #slice1>
    %8 = "tile.splat"(%2) : (i32) -> tensor<32xi32, #slice1>
    %9 = arith.addi %6, %3 : tensor<32xi32, #slice0>
    %10 = arith.addi %7, %4 : tensor<32xi32, #slice1>
    %11 = arith.addi %8, %5 : tensor<32xi32, #slice1>
    %12 = arith.muli %1, %c32_i32 : i32
    %13 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice2>
    %14 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %15 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %16 = "tile.splat"(%12) : (i32) -> tensor<32xi32, #slice2>
    %17 = "tile.splat"(%12) : (i32) -> tensor<32xi32, #slice1>
    %18 = "tile.splat"(%12) : (i32) -> tensor<32xi32, #slice1>
    %19 = arith.addi %16, %13 : tensor<32xi32, #slice2>
    %20 = arith.addi %17, %14 : tensor<32xi32, #slice1>
    %21 = arith.addi %18, %15 : tensor<32xi32, #slice1>
    %22 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice3>
    %23 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice3>
    %24 = "tile.expand_dims"(%10) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked0>
    %25 = "tile.splat"(%arg6) : (i32) -> tensor<32x1xi32, #blocked0>
    %26 = arith.muli %24, %25 : tensor<32x1xi32, #blocked0>
    %27 = "tile.splat"(%arg0) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %28 = "tile.addptr"(%27, %26) : (tensor<32x1x!tile.ptr<f16>, #blocked0>, tensor<32x1xi32, #blocked0>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %29 = "tile.expand_dims"(%22) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked0>
    %30 = "tile.broadcast"(%28) : (tensor<32x1x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %31 = "tile.broadcast"(%29) : (tensor<1x32xi32, #blocked0>) -> tensor<32x32xi32, #blocked0>
    %32 = "tile.addptr"(%30, %31) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %33 = "tile.expand_dims"(%20) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked0>
    %34 = "tile.splat"(%arg7) : (i32) -> tensor<32x1xi32, #blocked0>
    %35 = arith.muli %33, %34 : tensor<32x1xi32, #blocked0>
    %36 = "tile.splat"(%arg1) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %37 = "tile.addptr"(%36, %35) : (tensor<32x1x!tile.ptr<f16>, #blocked0>, tensor<32x1xi32, #blocked0>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %38 = "tile.expand_dims"(%22) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked0>
    %39 = "tile.broadcast"(%37) : (tensor<32x1x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %40 = "tile.broadcast"(%38) : (tensor<1x32xi32, #blocked0>) -> tensor<32x32xi32, #blocked0>
    %41 = "tile.addptr"(%39, %40) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
    %42 = "tile.splat"(%cst_0) : (f32) -> tensor<32x32xf32, #mma0>
    %43 = arith.addi %arg5, %c31_i32 : i32
    %44 = arith.divsi %43, %c32_i32 : i32
    %45:3 = scf.for %arg9 = %c0_i32 to %44 step %c1_i32 iter_args(%arg10 = %42, %arg11 = %32, %arg12 = %41) -> (tensor<32x32xf32, #mma0>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>)  : i32 {
      %66 = arith.muli %arg9, %c32_i32 : i32
      %67 = arith.subi %arg5, %66 : i32
      %68 = "tile.expand_dims"(%11) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked0>
      %69 = "tile.splat"(%arg3) : (i32) -> tensor<32x1xi32, #blocked0>
      %70 = arith.cmpi slt, %68, %69 : tensor<32x1xi32, #blocked0>
      %71 = "tile.expand_dims"(%23) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked0>
      %72 = "tile.splat"(%67) : (i32) -> tensor<1x32xi32, #blocked0>
      %73 = arith.cmpi slt, %71, %72 : tensor<1x32xi32, #blocked0>
      %74 = "tile.broadcast"(%70) : (tensor<32x1xi1, #blocked0>) -> tensor<32x32xi1, #blocked0>
      %75 = "tile.broadcast"(%73) : (tensor<1x32xi1, #blocked0>) -> tensor<32x32xi1, #blocked0>
      %76 = arith.andi %74, %75 : tensor<32x32xi1, #blocked0>
      %77 = "tile.splat"(%cst) : (f16) -> tensor<32x32xf16, #blocked0>
      %78 = "tile.load"(%arg11, %76, %77) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi1, #blocked0>, tensor<32x32xf16, #blocked0>) -> tensor<32x32xf16, #blocked0>
      %79 = "tile.expand_dims"(%21) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked0>
      %80 = "tile.splat"(%arg4) : (i32) -> tensor<32x1xi32, #blocked0>
      %81 = arith.cmpi slt, %79, %80 : tensor<32x1xi32, #blocked0>
      %82 = "tile.expand_dims"(%23) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked0>
      %83 = "tile.splat"(%67) : (i32) -> tensor<1x32xi32, #blocked0>
      %84 = arith.cmpi slt, %82, %83 : tensor<1x32xi32, #blocked0>
      %85 = "tile.broadcast"(%81) : (tensor<32x1xi1, #blocked0>) -> tensor<32x32xi1, #blocked0>
      %86 = "tile.broadcast"(%84) : (tensor<1x32xi1, #blocked0>) -> tensor<32x32xi1, #blocked0>
      %87 = arith.andi %85, %86 : tensor<32x32xi1, #blocked0>
      %88 = "tile.splat"(%cst) : (f16) -> tensor<32x32xf16, #blocked0>
      %89 = "tile.load"(%arg12, %87, %88) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi1, #blocked0>, tensor<32x32xf16, #blocked0>) -> tensor<32x32xf16, #blocked0>
      %90 = "tile.trans"(%89) {order = array<i32: 1, 0>} : (tensor<32x32xf16, #blocked0>) -> tensor<32x32xf16, #blocked1>
      %91 = "tilegpu.convert_layout"(%78) : (tensor<32x32xf16, #blocked0>) -> tensor<32x32xf16, #dot_op0>
      %92 = "tilegpu.convert_layout"(%90) : (tensor<32x32xf16, #blocked1>) -> tensor<32x32xf16, #dot_op1>
      %93 = "tile.dot"(%91, %92, %arg10) {input_precision = "ieee"} : (tensor<32x32xf16, #dot_op0>, tensor<32x32xf16, #dot_op1>, tensor<32x32xf32, #mma0>) -> tensor<32x32xf32, #mma0>
      %94 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x32xi32, #blocked0>
      %95 = "tile.addptr"(%arg11, %94) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
      %96 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x32xi32, #blocked0>
      %97 = "tile.addptr"(%arg12, %96) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
      scf.yield %93, %95, %97 : tensor<32x32xf32, #mma0>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>
    }
    %46 = "tile.expand_dims"(%9) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked2>
    %47 = "tile.splat"(%arg8) : (i32) -> tensor<32x1xi32, #blocked2>
    %48 = arith.muli %46, %47 : tensor<32x1xi32, #blocked2>
    %49 = "tile.splat"(%arg2) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked2>
    %50 = "tile.addptr"(%49, %48) : (tensor<32x1x!tile.ptr<f16>, #blocked2>, tensor<32x1xi32, #blocked2>) -> tensor<32x1x!tile.ptr<f16>, #blocked2>
    %51 = "tile.expand_dims"(%19) {axis = 0 : i32} : (tensor<32xi32, #slice2>) -> tensor<1x32xi32, #blocked2>
    %52 = "tile.broadcast"(%50) : (tensor<32x1x!tile.ptr<f16>, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked2>
    %53 = "tile.broadcast"(%51) : (tensor<1x32xi32, #blocked2>) -> tensor<32x32xi32, #blocked2>
    %54 = "tile.addptr"(%52, %53) : (tensor<32x32x!tile.ptr<f16>, #blocked2>, tensor<32x32xi32, #blocked2>) -> tensor<32x32x!tile.ptr<f16>, #blocked2>
    %55 = arith.truncf %45#0 : tensor<32x32xf32, #mma0> to tensor<32x32xf16, #mma0>
    %56 = "tilegpu.convert_layout"(%55) : (tensor<32x32xf16, #mma0>) -> tensor<32x32xf16, #blocked2>
    %57 = "tile.expand_dims"(%9) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked2>
    %58 = "tile.splat"(%arg3) : (i32) -> tensor<32x1xi32, #blocked2>
    %59 = arith.cmpi slt, %57, %58 : tensor<32x1xi32, #blocked2>
    %60 = "tile.expand_dims"(%19) {axis = 0 : i32} : (tensor<32xi32, #slice2>) -> tensor<1x32xi32, #blocked2>
    %61 = "tile.splat"(%arg4) : (i32) -> tensor<1x32xi32, #blocked2>
    %62 = arith.cmpi slt, %60, %61 : tensor<1x32xi32, #blocked2>
    %63 = "tile.broadcast"(%59) : (tensor<32x1xi1, #blocked2>) -> tensor<32x32xi1, #blocked2>
    %64 = "tile.broadcast"(%62) : (tensor<1x32xi1, #blocked2>) -> tensor<32x32xi1, #blocked2>
    %65 = arith.andi %63, %64 : tensor<32x32xi1, #blocked2>
    "tile.store"(%54, %56, %65) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<32x32x!tile.ptr<f16>, #blocked2>, tensor<32x32xf16, #blocked2>, tensor<32x32xi1, #blocked2>) -> ()
    return
  }
}
