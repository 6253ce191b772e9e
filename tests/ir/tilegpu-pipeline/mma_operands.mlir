// RUN: tilec-opt %s -p 'tilegpu-pipeline{num-stages=3},tile-dce,canonicalize,cse' | FileCheck %s

// The matmul as tilegpu-accelerate-matmul leaves it: the dot's result in an mma layout,
// its operands converted to dot_op layouts. Each ring takes the swizzled layout
// ldmatrix reads without bank conflicts (16-byte vectors, 64-byte rows: two rows per
// phase, four phases), and the conversions fold into the reads: the local_loads produce
// the dot_op layouts directly from shared memory. mma.sync reads its operands into
// registers, so the rings have S-1 = 2 slots, refilled after the dot in the slot it read.

// CHECK: #shared0 = #tilegpu.shared<{maxPhase = 4 : i32, order = array<i32: 1, 0>, perPhase = 2 : i32, vec = 8 : i32}>
// CHECK: #dot_op0 = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #tilegpu.mma<
// CHECK: #dot_op1 = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #tilegpu.mma<
// CHECK-LABEL: func.func public @mm_carried
// CHECK: %[[RA:.*]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<2x32x32xf16, #shared0>>
// CHECK: %[[RB:.*]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<2x32x32xf16, #shared0>>
// CHECK-COUNT-2: "tilegpu.async_commit_group"
// CHECK: scf.for
// CHECK-NEXT: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK-NEXT: %[[SA:.*]] = "tilegpu.memdesc_index"(%[[RA]], %[[C:.*]]) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: %[[A:.*]] = "tilegpu.local_load"(%[[SA]]) : ({{.*}}) -> tensor<32x32xf16, #dot_op0>
// CHECK: %[[SB:.*]] = "tilegpu.memdesc_index"(%[[RB]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: %[[B:.*]] = "tilegpu.local_load"(%[[SB]]) : ({{.*}}) -> tensor<32x32xf16, #dot_op1>
// CHECK-NEXT: "tile.dot"(%[[A]], %[[B]], %{{.*}})
// CHECK-NOT: "tilegpu.convert_layout"({{.*}}) : (tensor<32x32xf16
// CHECK: "tilegpu.memdesc_index"(%[[RA]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: "tilegpu.async_copy_global_to_local"
// CHECK-NOT: "tilegpu.convert_layout"({{.*}}) : (tensor<32x32xf16
// CHECK: scf.yield

#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice1 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice2 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice3 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>
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
    %24 = "tile.splat"(%cst) : (f32) -> tensor<32x32xf32, #mma>
    %25:3 = scf.for %arg4 = %c0_i32 to %arg3 step %c32_i32 iter_args(%arg5 = %24, %arg6 = %14, %arg7 = %23) -> (tensor<32x32xf32, #mma>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>)  : i32 {
      %36 = "tilegpu.convert_layout"(%arg6) : (tensor<32x32x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked1>
      %37 = "tile.load"(%36) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked1>) -> tensor<32x32xf16, #blocked1>
      %38 = "tilegpu.convert_layout"(%arg7) : (tensor<32x32x!tile.ptr<f16>, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked1>
      %39 = "tile.load"(%38) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked1>) -> tensor<32x32xf16, #blocked1>
      %a = "tilegpu.convert_layout"(%37) : (tensor<32x32xf16, #blocked1>) -> tensor<32x32xf16, #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>>
      %b = "tilegpu.convert_layout"(%39) : (tensor<32x32xf16, #blocked1>) -> tensor<32x32xf16, #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>>
      %41 = "tile.dot"(%a, %b, %arg5) {input_precision = "ieee"} : (tensor<32x32xf16, #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>>, tensor<32x32xf16, #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>>, tensor<32x32xf32, #mma>) -> tensor<32x32xf32, #mma>
      %43 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x32xi32, #blocked0>
      %44 = "tile.addptr"(%arg6, %43) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
      %45 = "tile.splat"(%c1024_i32) : (i32) -> tensor<32x32xi32, #blocked0>
      %46 = "tile.addptr"(%arg7, %45) : (tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32xi32, #blocked0>) -> tensor<32x32x!tile.ptr<f16>, #blocked0>
      scf.yield %41, %44, %46 : tensor<32x32xf32, #mma>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>
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
    %35 = "tilegpu.convert_layout"(%25#0) : (tensor<32x32xf32, #mma>) -> tensor<32x32xf32, #blocked2>
    "tile.store"(%34, %35) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f32>, #blocked2>, tensor<32x32xf32, #blocked2>) -> ()
    return
  }
}

