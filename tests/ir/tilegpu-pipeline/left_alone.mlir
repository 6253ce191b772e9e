// RUN: tilec-opt %s --split-input-file -p 'tilegpu-pipeline' | FileCheck %s

// Loads the pass leaves as they are:
// - A's address adds a value loaded in the same iteration (a gather through idx_ptr),
//   and the loop also stores to memory (idx_ptr's entry, which a later iteration could
//   read): that value cannot be loaded S-1 iterations ahead (indirect_addresses.mlir
//   has a loop without stores, whose table entries are);
// - B is loaded with other=1.0: cp.async fills masked-off elements with zeros;
// - the scalar load of idx_ptr feeds no dot.

// CHECK-LABEL: func.func public @left_alone
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK-COUNT-3: "tile.load"
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK-NOT: tilegpu.local_alloc
// CHECK: "tile.store"

#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice1 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice2 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice3 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func public @left_alone(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg3: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg4: i32 {tile.divisibility = 16 : i32}) {
    %cst = arith.constant 1.000000e+00 : f16
    %c32_i32 = arith.constant 32 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice0>
    %1 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %2 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice2>
    %3 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice3>
    %4 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %5 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice3>
    %6 = "tile.splat"(%cst_0) : (f32) -> tensor<32x32xf32, #blocked0>
    %7 = scf.for %arg5 = %c0_i32 to %arg4 step %c32_i32 iter_args(%arg6 = %6) -> (tensor<32x32xf32, #blocked0>)  : i32 {
      %18 = "tile.addptr"(%arg1, %arg5) : (!tile.ptr<i32>, i32) -> !tile.ptr<i32>
      %19 = "tile.load"(%18) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (!tile.ptr<i32>) -> i32
      %20 = arith.muli %19, %c32_i32 : i32
      %21 = "tile.addptr"(%arg0, %20) : (!tile.ptr<f16>, i32) -> !tile.ptr<f16>
      %22 = "tile.expand_dims"(%1) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked1>
      %23 = "tile.splat"(%arg4) : (i32) -> tensor<32x1xi32, #blocked1>
      %24 = arith.muli %22, %23 : tensor<32x1xi32, #blocked1>
      %25 = "tile.splat"(%21) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked1>
      %26 = "tile.addptr"(%25, %24) : (tensor<32x1x!tile.ptr<f16>, #blocked1>, tensor<32x1xi32, #blocked1>) -> tensor<32x1x!tile.ptr<f16>, #blocked1>
      %27 = "tile.expand_dims"(%5) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked1>
      %28 = "tile.broadcast"(%26) : (tensor<32x1x!tile.ptr<f16>, #blocked1>) -> tensor<32x32x!tile.ptr<f16>, #blocked1>
      %29 = "tile.broadcast"(%27) : (tensor<1x32xi32, #blocked1>) -> tensor<32x32xi32, #blocked1>
      %30 = "tile.addptr"(%28, %29) : (tensor<32x32x!tile.ptr<f16>, #blocked1>, tensor<32x32xi32, #blocked1>) -> tensor<32x32x!tile.ptr<f16>, #blocked1>
      %31 = "tile.load"(%30) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked1>) -> tensor<32x32xf16, #blocked1>
      %32 = "tile.expand_dims"(%4) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked1>
      %33 = "tile.splat"(%arg5) : (i32) -> tensor<32x1xi32, #blocked1>
      %34 = arith.addi %33, %32 : tensor<32x1xi32, #blocked1>
      %35 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked1>
      %36 = arith.muli %34, %35 : tensor<32x1xi32, #blocked1>
      %37 = "tile.splat"(%arg2) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked1>
      %38 = "tile.addptr"(%37, %36) : (tensor<32x1x!tile.ptr<f16>, #blocked1>, tensor<32x1xi32, #blocked1>) -> tensor<32x1x!tile.ptr<f16>, #blocked1>
      %39 = "tile.expand_dims"(%3) {axis = 0 : i32} : (tensor<32xi32, #slice3>) -> tensor<1x32xi32, #blocked1>
      %40 = "tile.broadcast"(%38) : (tensor<32x1x!tile.ptr<f16>, #blocked1>) -> tensor<32x32x!tile.ptr<f16>, #blocked1>
      %41 = "tile.broadcast"(%39) : (tensor<1x32xi32, #blocked1>) -> tensor<32x32xi32, #blocked1>
      %42 = "tile.addptr"(%40, %41) : (tensor<32x32x!tile.ptr<f16>, #blocked1>, tensor<32x32xi32, #blocked1>) -> tensor<32x32x!tile.ptr<f16>, #blocked1>
      %43 = "tile.expand_dims"(%4) {axis = 1 : i32} : (tensor<32xi32, #slice1>) -> tensor<32x1xi32, #blocked1>
      %44 = arith.subi %arg4, %arg5 : i32
      %45 = "tile.splat"(%44) : (i32) -> tensor<32x1xi32, #blocked1>
      %46 = arith.cmpi slt, %43, %45 : tensor<32x1xi32, #blocked1>
      %47 = "tile.broadcast"(%46) : (tensor<32x1xi1, #blocked1>) -> tensor<32x32xi1, #blocked1>
      %48 = "tile.splat"(%cst) : (f16) -> tensor<32x32xf16, #blocked1>
      %49 = "tile.load"(%42, %47, %48) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<32x32x!tile.ptr<f16>, #blocked1>, tensor<32x32xi1, #blocked1>, tensor<32x32xf16, #blocked1>) -> tensor<32x32xf16, #blocked1>
      %50 = "tile.splat"(%cst_0) : (f32) -> tensor<32x32xf32, #blocked0>
      %51 = "tile.dot"(%31, %49, %50) {input_precision = "ieee"} : (tensor<32x32xf16, #blocked1>, tensor<32x32xf16, #blocked1>, tensor<32x32xf32, #blocked0>) -> tensor<32x32xf32, #blocked0>
      %52 = arith.addf %arg6, %51 : tensor<32x32xf32, #blocked0>
      "tile.store"(%18, %20) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
      scf.yield %52 : tensor<32x32xf32, #blocked0>
    }
    %8 = "tile.expand_dims"(%0) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked2>
    %9 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked2>
    %10 = arith.muli %8, %9 : tensor<32x1xi32, #blocked2>
    %11 = "tile.splat"(%arg3) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked2>
    %12 = "tile.addptr"(%11, %10) : (tensor<32x1x!tile.ptr<f32>, #blocked2>, tensor<32x1xi32, #blocked2>) -> tensor<32x1x!tile.ptr<f32>, #blocked2>
    %13 = "tile.expand_dims"(%2) {axis = 0 : i32} : (tensor<32xi32, #slice2>) -> tensor<1x32xi32, #blocked2>
    %14 = "tile.broadcast"(%12) : (tensor<32x1x!tile.ptr<f32>, #blocked2>) -> tensor<32x32x!tile.ptr<f32>, #blocked2>
    %15 = "tile.broadcast"(%13) : (tensor<1x32xi32, #blocked2>) -> tensor<32x32xi32, #blocked2>
    %16 = "tile.addptr"(%14, %15) : (tensor<32x32x!tile.ptr<f32>, #blocked2>, tensor<32x32xi32, #blocked2>) -> tensor<32x32x!tile.ptr<f32>, #blocked2>
    %17 = "tilegpu.convert_layout"(%7) : (tensor<32x32xf32, #blocked0>) -> tensor<32x32xf32, #blocked2>
    "tile.store"(%16, %17) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f32>, #blocked2>, tensor<32x32xf32, #blocked2>) -> ()
    return
  }
}


// -----

// The matmul of matmul_loop_carried.mlir, but for sm_75: no cp.async there.

// CHECK-LABEL: func.func public @mm_carried
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK-COUNT-2: "tile.load"

#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice1 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice2 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice3 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_75"} {
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


// -----

// tl.range(..., num_stages=1) on the loop overrides the pass option.

// CHECK-LABEL: func.func public @mm_carried
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK-COUNT-2: "tile.load"

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
    } {tile.num_stages = 1 : i32}
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


// -----

// A step that is not a constant (its sign unknown): left alone.

// CHECK-LABEL: func.func public @mm_carried
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK-COUNT-2: "tile.load"

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
    %25:3 = scf.for %arg4 = %c0_i32 to %arg3 step %arg3 iter_args(%arg5 = %24, %arg6 = %14, %arg7 = %23) -> (tensor<32x32xf32, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>, tensor<32x32x!tile.ptr<f16>, #blocked0>)  : i32 {
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

