// RUN: tilec-opt %s -p 'tilegpu-pipeline,tile-dce,canonicalize,cse' | FileCheck %s

// for k in range(cdiv(K, BK)): offs_k = k * BK + rk, loads masked by offs_k < K (the
// K tail), other=0.0, fp32 operands, K a runtime value. The addresses are a function of
// the induction variable alone, so no carried values are added: iteration i+2's
// addresses come from iv + 2. A prologue copy's mask is the load's mask ANDed with "that
// iteration exists"; in the body, the mask is the load's own and "that iteration exists"
// guards the copy (past the end, it writes nothing). Masked-off elements are zero-filled,
// as other=0.0 asks. The mask
// is constant over single elements only (K may be odd), so copies are 4 bytes wide:
// allowed, cp.async's smallest.

// CHECK-LABEL: func.func public @mm_indexed
// CHECK: %[[RA:.*]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<2x32x32xf32>>
// CHECK: %[[RB:.*]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<2x32x32xf32>>
// CHECK: %[[E0:.*]] = arith.cmpi sgt, %[[N:.*]], %c0_i32 : i32
// CHECK: %[[P0:.*]] = "tile.splat"(%[[E0]]) : (i1) -> tensor<32x32xi1, #blocked1>
// CHECK-NEXT: %[[M0:.*]] = arith.andi %{{.*}}, %[[P0]] : tensor<32x32xi1, #blocked1>
// CHECK-NEXT: %[[S0:.*]] = "tilegpu.memdesc_index"(%[[RA]], %c0_i32)
// CHECK-NEXT: "tilegpu.async_copy_global_to_local"(%{{.*}}, %[[S0]], %[[M0]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, vec = 1 : i32}
// CHECK: %[[E1:.*]] = arith.cmpi sgt, %[[N]], %c1_i32 : i32
// CHECK: "tilegpu.async_commit_group"
// CHECK: scf.for %[[IV:.*]] = %c0_i32 to %[[N]] step %c1_i32 iter_args(%{{.*}} = %{{.*}}, %[[C:.*]] = %c0_i32) -> (tensor<32x32xf32, #blocked0>, i32)
// CHECK-NEXT: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK-NEXT: "tilegpu.memdesc_index"(%[[RA]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: "tilegpu.local_load"
// CHECK: "tile.dot"
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[IV]], %c2_i32 : i32
// CHECK-NEXT: %[[EXISTS:.*]] = arith.cmpi slt, %[[AHEAD]], %[[N]] : i32
// CHECK-NEXT: arith.muli %[[AHEAD]], %c32_i32 : i32
// CHECK-NOT: "tile.splat"(%[[EXISTS]])
// CHECK: "tilegpu.async_copy_global_to_local"({{.*}}, %[[EXISTS]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>, vec = 1 : i32}
// CHECK: "tilegpu.async_copy_global_to_local"({{.*}}, %[[EXISTS]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>, vec = 4 : i32}
// CHECK-NEXT: "tilegpu.async_commit_group"
// CHECK-NOT: "tile.load"
// CHECK: scf.yield
// CHECK: "tilegpu.async_wait"() {num = 0 : i32}

#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @mm_indexed(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg3: i32) {
    %c31_i32 = arith.constant 31 : i32
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c32_i32 = arith.constant 32 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice0>
    %1 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %2 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice0>
    %3 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %4 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked0>
    %5 = arith.addi %arg3, %c31_i32 : i32
    %6 = arith.divsi %5, %c32_i32 : i32
    %7 = scf.for %arg4 = %c0_i32 to %6 step %c1_i32 iter_args(%arg5 = %4) -> (tensor<32x32xf32, #blocked0>)  : i32 {
      %18 = arith.muli %arg4, %c32_i32 : i32
      %19 = "tile.splat"(%18) : (i32) -> tensor<32xi32, #slice0>
      %20 = "tile.splat"(%18) : (i32) -> tensor<32xi32, #slice1>
      %21 = arith.addi %19, %2 : tensor<32xi32, #slice0>
      %22 = arith.addi %20, %3 : tensor<32xi32, #slice1>
      %23 = "tile.expand_dims"(%0) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked1>
      %24 = "tile.splat"(%arg3) : (i32) -> tensor<32x1xi32, #blocked1>
      %25 = arith.muli %23, %24 : tensor<32x1xi32, #blocked1>
      %26 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
      %27 = "tile.addptr"(%26, %25) : (tensor<32x1x!tile.ptr<f32>, #blocked1>, tensor<32x1xi32, #blocked1>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
      %28 = "tile.expand_dims"(%22) {axis = 0 : i32} : (tensor<32xi32, #slice1>) -> tensor<1x32xi32, #blocked1>
      %29 = "tile.broadcast"(%27) : (tensor<32x1x!tile.ptr<f32>, #blocked1>) -> tensor<32x32x!tile.ptr<f32>, #blocked1>
      %30 = "tile.broadcast"(%28) : (tensor<1x32xi32, #blocked1>) -> tensor<32x32xi32, #blocked1>
      %31 = "tile.addptr"(%29, %30) : (tensor<32x32x!tile.ptr<f32>, #blocked1>, tensor<32x32xi32, #blocked1>) -> tensor<32x32x!tile.ptr<f32>, #blocked1>
      %32 = "tile.expand_dims"(%22) {axis = 0 : i32} : (tensor<32xi32, #slice1>) -> tensor<1x32xi32, #blocked1>
      %33 = "tile.splat"(%arg3) : (i32) -> tensor<1x32xi32, #blocked1>
      %34 = arith.cmpi slt, %32, %33 : tensor<1x32xi32, #blocked1>
      %35 = "tile.broadcast"(%34) : (tensor<1x32xi1, #blocked1>) -> tensor<32x32xi1, #blocked1>
      %36 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked1>
      %37 = "tile.load"(%31, %35, %36) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<32x32x!tile.ptr<f32>, #blocked1>, tensor<32x32xi1, #blocked1>, tensor<32x32xf32, #blocked1>) -> tensor<32x32xf32, #blocked1>
      %38 = "tile.expand_dims"(%21) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked1>
      %39 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked1>
      %40 = arith.muli %38, %39 : tensor<32x1xi32, #blocked1>
      %41 = "tile.splat"(%arg1) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
      %42 = "tile.addptr"(%41, %40) : (tensor<32x1x!tile.ptr<f32>, #blocked1>, tensor<32x1xi32, #blocked1>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
      %43 = "tile.expand_dims"(%1) {axis = 0 : i32} : (tensor<32xi32, #slice1>) -> tensor<1x32xi32, #blocked1>
      %44 = "tile.broadcast"(%42) : (tensor<32x1x!tile.ptr<f32>, #blocked1>) -> tensor<32x32x!tile.ptr<f32>, #blocked1>
      %45 = "tile.broadcast"(%43) : (tensor<1x32xi32, #blocked1>) -> tensor<32x32xi32, #blocked1>
      %46 = "tile.addptr"(%44, %45) : (tensor<32x32x!tile.ptr<f32>, #blocked1>, tensor<32x32xi32, #blocked1>) -> tensor<32x32x!tile.ptr<f32>, #blocked1>
      %47 = "tile.expand_dims"(%21) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked1>
      %48 = "tile.splat"(%arg3) : (i32) -> tensor<32x1xi32, #blocked1>
      %49 = arith.cmpi slt, %47, %48 : tensor<32x1xi32, #blocked1>
      %50 = "tile.broadcast"(%49) : (tensor<32x1xi1, #blocked1>) -> tensor<32x32xi1, #blocked1>
      %51 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked1>
      %52 = "tile.load"(%46, %50, %51) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<32x32x!tile.ptr<f32>, #blocked1>, tensor<32x32xi1, #blocked1>, tensor<32x32xf32, #blocked1>) -> tensor<32x32xf32, #blocked1>
      %53 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #blocked0>
      %54 = "tile.dot"(%37, %52, %53) {input_precision = "tf32"} : (tensor<32x32xf32, #blocked1>, tensor<32x32xf32, #blocked1>, tensor<32x32xf32, #blocked0>) -> tensor<32x32xf32, #blocked0>
      %55 = arith.addf %arg5, %54 : tensor<32x32xf32, #blocked0>
      scf.yield %55 : tensor<32x32xf32, #blocked0>
    }
    %8 = "tile.expand_dims"(%0) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked1>
    %9 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked1>
    %10 = arith.muli %8, %9 : tensor<32x1xi32, #blocked1>
    %11 = "tile.splat"(%arg2) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
    %12 = "tile.addptr"(%11, %10) : (tensor<32x1x!tile.ptr<f32>, #blocked1>, tensor<32x1xi32, #blocked1>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
    %13 = "tile.expand_dims"(%1) {axis = 0 : i32} : (tensor<32xi32, #slice1>) -> tensor<1x32xi32, #blocked1>
    %14 = "tile.broadcast"(%12) : (tensor<32x1x!tile.ptr<f32>, #blocked1>) -> tensor<32x32x!tile.ptr<f32>, #blocked1>
    %15 = "tile.broadcast"(%13) : (tensor<1x32xi32, #blocked1>) -> tensor<32x32xi32, #blocked1>
    %16 = "tile.addptr"(%14, %15) : (tensor<32x32x!tile.ptr<f32>, #blocked1>, tensor<32x32xi32, #blocked1>) -> tensor<32x32x!tile.ptr<f32>, #blocked1>
    %17 = "tilegpu.convert_layout"(%7) : (tensor<32x32xf32, #blocked0>) -> tensor<32x32xf32, #blocked1>
    "tile.store"(%16, %17) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f32>, #blocked1>, tensor<32x32xf32, #blocked1>) -> ()
    return
  }
}

