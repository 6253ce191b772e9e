// RUN: tilec-opt %s -p tilegpu-pipeline | FileCheck %s

// A matmul loop on sm_90 whose A and B rows are an unknown number of elements apart
// (`stride_am`, `stride_bk` without divisibility): each thread's runs are one 2-byte
// element, too short for cp.async, so neither load streams. accelerate-matmul staged
// both tiles for wgmma right before the dot (load A, load B, local_alloc A, local_alloc
// B); the pass stages each right after its load, so A's registers are free before B's
// loads and their addresses take registers too (with the stores at the dot, 128x128
// tiles of this loop spilled 264-1024 B where Triton spills 104-700).

// CHECK-LABEL: func.func public @staged
// CHECK: scf.for
// CHECK-NEXT: %[[A:.+]] = "tile.load"(%arg8)
// CHECK-NEXT: "tilegpu.local_alloc"(%[[A]])
// CHECK-NEXT: %[[B:.+]] = "tile.load"(%arg9)
// CHECK-NEXT: "tilegpu.local_alloc"(%[[B]])
// CHECK-NEXT: "tile.dot"
// CHECK-NOT: tilegpu.async_copy_global_to_local
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#slice0 = #tilegpu.slice<{dim = 0 : i32, parent = #blocked0}>
#slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #blocked2}>
#slice2 = #tilegpu.slice<{dim = 0 : i32, parent = #blocked1}>
#slice3 = #tilegpu.slice<{dim = 1 : i32, parent = #blocked0}>
#slice4 = #tilegpu.slice<{dim = 1 : i32, parent = #blocked2}>
#slice5 = #tilegpu.slice<{dim = 1 : i32, parent = #blocked1}>
#mma = #tilegpu.mma<{instrShape = array<i32: 64, 64>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 4, 1>}>
#nvmma64 = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 64 : i32, transposed = false}>
#nvmma128 = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 128 : i32, transposed = false}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @staged(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg3: i32, %arg4: i32, %arg5: i32) {
    %c64_i32 = arith.constant 64 : i32
    %c32_i32 = arith.constant 32 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %0 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #slice5>
    %1 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #slice4>
    %2 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #slice0>
    %3 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #slice2>
    %4 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice3>
    %5 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #slice1>
    %6 = "tile.expand_dims"(%1) {axis = 1 : i32} : (tensor<64xi32, #slice4>) -> tensor<64x1xi32, #blocked2>
    %7 = "tile.splat"(%arg4) : (i32) -> tensor<64x1xi32, #blocked2>
    %8 = arith.muli %6, %7 : tensor<64x1xi32, #blocked2>
    %9 = "tile.splat"(%arg0) : (!tile.ptr<f16>) -> tensor<64x1x!tile.ptr<f16>, #blocked2>
    %10 = "tile.addptr"(%9, %8) : (tensor<64x1x!tile.ptr<f16>, #blocked2>, tensor<64x1xi32, #blocked2>) -> tensor<64x1x!tile.ptr<f16>, #blocked2>
    %11 = "tile.expand_dims"(%5) {axis = 0 : i32} : (tensor<32xi32, #slice1>) -> tensor<1x32xi32, #blocked2>
    %12 = "tile.broadcast"(%10) : (tensor<64x1x!tile.ptr<f16>, #blocked2>) -> tensor<64x32x!tile.ptr<f16>, #blocked2>
    %13 = "tile.broadcast"(%11) : (tensor<1x32xi32, #blocked2>) -> tensor<64x32xi32, #blocked2>
    %14 = "tile.addptr"(%12, %13) : (tensor<64x32x!tile.ptr<f16>, #blocked2>, tensor<64x32xi32, #blocked2>) -> tensor<64x32x!tile.ptr<f16>, #blocked2>
    %15 = "tile.expand_dims"(%4) {axis = 1 : i32} : (tensor<32xi32, #slice3>) -> tensor<32x1xi32, #blocked0>
    %16 = "tile.splat"(%arg5) : (i32) -> tensor<32x1xi32, #blocked0>
    %17 = arith.muli %15, %16 : tensor<32x1xi32, #blocked0>
    %18 = "tile.splat"(%arg1) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %19 = "tile.addptr"(%18, %17) : (tensor<32x1x!tile.ptr<f16>, #blocked0>, tensor<32x1xi32, #blocked0>) -> tensor<32x1x!tile.ptr<f16>, #blocked0>
    %20 = "tile.expand_dims"(%2) {axis = 0 : i32} : (tensor<64xi32, #slice0>) -> tensor<1x64xi32, #blocked0>
    %21 = "tile.broadcast"(%19) : (tensor<32x1x!tile.ptr<f16>, #blocked0>) -> tensor<32x64x!tile.ptr<f16>, #blocked0>
    %22 = "tile.broadcast"(%20) : (tensor<1x64xi32, #blocked0>) -> tensor<32x64xi32, #blocked0>
    %23 = "tile.addptr"(%21, %22) : (tensor<32x64x!tile.ptr<f16>, #blocked0>, tensor<32x64xi32, #blocked0>) -> tensor<32x64x!tile.ptr<f16>, #blocked0>
    %24 = "tile.splat"(%cst) : (f32) -> tensor<64x64xf32, #mma>
    %25:3 = scf.for %arg6 = %c0_i32 to %arg3 step %c32_i32 iter_args(%arg7 = %24, %arg8 = %14, %arg9 = %23) -> (tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f16>, #blocked2>, tensor<32x64x!tile.ptr<f16>, #blocked0>)  : i32 {
      %36 = "tile.load"(%arg8) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x32x!tile.ptr<f16>, #blocked2>) -> tensor<64x32xf16, #blocked2>
      %37 = "tile.load"(%arg9) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x64x!tile.ptr<f16>, #blocked0>) -> tensor<32x64xf16, #blocked0>
      %38 = "tilegpu.local_alloc"(%36) : (tensor<64x32xf16, #blocked2>) -> !tilegpu.memdesc<tensor<64x32xf16, #nvmma64>>
      %39 = "tilegpu.local_alloc"(%37) : (tensor<32x64xf16, #blocked0>) -> !tilegpu.memdesc<tensor<32x64xf16, #nvmma128>>
      %40 = "tile.dot"(%38, %39, %arg7) {input_precision = "ieee"} : (!tilegpu.memdesc<tensor<64x32xf16, #nvmma64>>, !tilegpu.memdesc<tensor<32x64xf16, #nvmma128>>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
      %41 = "tile.splat"(%c32_i32) : (i32) -> tensor<64x32xi32, #blocked2>
      %42 = "tile.addptr"(%arg8, %41) : (tensor<64x32x!tile.ptr<f16>, #blocked2>, tensor<64x32xi32, #blocked2>) -> tensor<64x32x!tile.ptr<f16>, #blocked2>
      %43 = arith.muli %arg5, %c32_i32 : i32
      %44 = "tile.splat"(%43) : (i32) -> tensor<32x64xi32, #blocked0>
      %45 = "tile.addptr"(%arg9, %44) : (tensor<32x64x!tile.ptr<f16>, #blocked0>, tensor<32x64xi32, #blocked0>) -> tensor<32x64x!tile.ptr<f16>, #blocked0>
      scf.yield %40, %42, %45 : tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f16>, #blocked2>, tensor<32x64x!tile.ptr<f16>, #blocked0>
    }
    %26 = "tile.expand_dims"(%0) {axis = 1 : i32} : (tensor<64xi32, #slice5>) -> tensor<64x1xi32, #blocked1>
    %27 = "tile.splat"(%c64_i32) : (i32) -> tensor<64x1xi32, #blocked1>
    %28 = arith.muli %26, %27 : tensor<64x1xi32, #blocked1>
    %29 = "tile.splat"(%arg2) : (!tile.ptr<f32>) -> tensor<64x1x!tile.ptr<f32>, #blocked1>
    %30 = "tile.addptr"(%29, %28) : (tensor<64x1x!tile.ptr<f32>, #blocked1>, tensor<64x1xi32, #blocked1>) -> tensor<64x1x!tile.ptr<f32>, #blocked1>
    %31 = "tile.expand_dims"(%3) {axis = 0 : i32} : (tensor<64xi32, #slice2>) -> tensor<1x64xi32, #blocked1>
    %32 = "tile.broadcast"(%30) : (tensor<64x1x!tile.ptr<f32>, #blocked1>) -> tensor<64x64x!tile.ptr<f32>, #blocked1>
    %33 = "tile.broadcast"(%31) : (tensor<1x64xi32, #blocked1>) -> tensor<64x64xi32, #blocked1>
    %34 = "tile.addptr"(%32, %33) : (tensor<64x64x!tile.ptr<f32>, #blocked1>, tensor<64x64xi32, #blocked1>) -> tensor<64x64x!tile.ptr<f32>, #blocked1>
    %35 = "tilegpu.convert_layout"(%25#0) : (tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #blocked1>
    "tile.store"(%34, %35) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #blocked1>, tensor<64x64xf32, #blocked1>) -> ()
    return
  }
}

