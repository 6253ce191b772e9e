// RUN: tilec-opt %s -p tile-choose-descriptor-copies | FileCheck %s

// Two loads through a host descriptor's tensor map (what the language emits on sm_90,
// each with its pointer form in the fallback region). The first starts at column 16
// (64 bytes of f32: a multiple of 16): it stays a TMA copy and its fallback is emptied.
// The second starts at a column known only at run time (%arg6, no divisibility): the
// hardware needs 16-byte aligned columns, so its pointer form replaces it.

// CHECK-LABEL: func.func public @k
// CHECK: %[[TMA:.+]] = "tile.descriptor_load"(%arg4, %c0_i32, %c16_i32) ({
// CHECK-NEXT: gpu.yield
// CHECK-NEXT: })
// CHECK-NOT: "tile.descriptor_load"
// CHECK: %[[PTRS:.+]] = "tile.load"
// CHECK-NOT: "tile.descriptor_load"
// CHECK: arith.addf %[[TMA]], %[[PTRS]]
module {
  func.func public @k(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: i32 {tile.divisibility = 16 : i32}, %arg2: i32 {tile.divisibility = 16 : i32}, %arg3: i32 {tile.divisibility = 16 : i32}, %arg4: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %arg5: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg6: i32) {
    %c16_i64 = arith.constant 16 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %c1_i64 = arith.constant 1 : i64
    %c0_i64 = arith.constant 0 : i64
    %c0_i32 = arith.constant 0 : i32
    %c16_i32 = arith.constant 16 : i32
    %0 = "tile.descriptor_load"(%arg4, %c0_i32, %c16_i32) ({
      %14 = "tile.make_range"() {end = 8 : i32, start = 0 : i32} : () -> tensor<8xi32>
      %15 = arith.extsi %14 : tensor<8xi32> to tensor<8xi64>
      %16 = "tile.splat"(%c0_i64) : (i64) -> tensor<8xi64>
      %17 = arith.addi %15, %16 : tensor<8xi64>
      %18 = "tile.expand_dims"(%17) {axis = 1 : i32} : (tensor<8xi64>) -> tensor<8x1xi64>
      %19 = arith.extsi %arg3 : i32 to i64
      %20 = "tile.splat"(%19) : (i64) -> tensor<8x1xi64>
      %21 = arith.muli %18, %20 : tensor<8x1xi64>
      %22 = "tile.splat"(%c0_i64) : (i64) -> tensor<8x1xi64>
      %23 = arith.cmpi sge, %18, %22 : tensor<8x1xi64>
      %24 = arith.extsi %arg1 : i32 to i64
      %25 = "tile.splat"(%24) : (i64) -> tensor<8x1xi64>
      %26 = arith.cmpi slt, %18, %25 : tensor<8x1xi64>
      %27 = arith.andi %23, %26 : tensor<8x1xi1>
      %28 = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32>
      %29 = arith.extsi %28 : tensor<16xi32> to tensor<16xi64>
      %30 = "tile.splat"(%c16_i64) : (i64) -> tensor<16xi64>
      %31 = arith.addi %29, %30 : tensor<16xi64>
      %32 = "tile.expand_dims"(%31) {axis = 0 : i32} : (tensor<16xi64>) -> tensor<1x16xi64>
      %33 = "tile.splat"(%c1_i64) : (i64) -> tensor<1x16xi64>
      %34 = arith.muli %32, %33 : tensor<1x16xi64>
      %35 = "tile.broadcast"(%21) : (tensor<8x1xi64>) -> tensor<8x16xi64>
      %36 = "tile.broadcast"(%34) : (tensor<1x16xi64>) -> tensor<8x16xi64>
      %37 = arith.addi %35, %36 : tensor<8x16xi64>
      %38 = "tile.splat"(%c0_i64) : (i64) -> tensor<1x16xi64>
      %39 = arith.cmpi sge, %32, %38 : tensor<1x16xi64>
      %40 = arith.extsi %arg2 : i32 to i64
      %41 = "tile.splat"(%40) : (i64) -> tensor<1x16xi64>
      %42 = arith.cmpi slt, %32, %41 : tensor<1x16xi64>
      %43 = arith.andi %39, %42 : tensor<1x16xi1>
      %44 = "tile.broadcast"(%27) : (tensor<8x1xi1>) -> tensor<8x16xi1>
      %45 = "tile.broadcast"(%43) : (tensor<1x16xi1>) -> tensor<8x16xi1>
      %46 = arith.andi %44, %45 : tensor<8x16xi1>
      %47 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<8x16x!tile.ptr<f32>>
      %48 = "tile.addptr"(%47, %37) : (tensor<8x16x!tile.ptr<f32>>, tensor<8x16xi64>) -> tensor<8x16x!tile.ptr<f32>>
      %49 = "tile.splat"(%cst) : (f32) -> tensor<8x16xf32>
      %50 = "tile.load"(%48, %46, %49) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<8x16x!tile.ptr<f32>>, tensor<8x16xi1>, tensor<8x16xf32>) -> tensor<8x16xf32>
      gpu.yield %50 : tensor<8x16xf32>
    }) {operandSegmentSizes = array<i32: 1, 2>} : (!tile.ptr<i8>, i32, i32) -> tensor<8x16xf32>
    %1 = "tile.descriptor_load"(%arg4, %c0_i32, %arg6) ({
      %14 = "tile.make_range"() {end = 8 : i32, start = 0 : i32} : () -> tensor<8xi32>
      %15 = arith.extsi %14 : tensor<8xi32> to tensor<8xi64>
      %16 = "tile.splat"(%c0_i64) : (i64) -> tensor<8xi64>
      %17 = arith.addi %15, %16 : tensor<8xi64>
      %18 = "tile.expand_dims"(%17) {axis = 1 : i32} : (tensor<8xi64>) -> tensor<8x1xi64>
      %19 = arith.extsi %arg3 : i32 to i64
      %20 = "tile.splat"(%19) : (i64) -> tensor<8x1xi64>
      %21 = arith.muli %18, %20 : tensor<8x1xi64>
      %22 = "tile.splat"(%c0_i64) : (i64) -> tensor<8x1xi64>
      %23 = arith.cmpi sge, %18, %22 : tensor<8x1xi64>
      %24 = arith.extsi %arg1 : i32 to i64
      %25 = "tile.splat"(%24) : (i64) -> tensor<8x1xi64>
      %26 = arith.cmpi slt, %18, %25 : tensor<8x1xi64>
      %27 = arith.andi %23, %26 : tensor<8x1xi1>
      %28 = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32>
      %29 = arith.extsi %28 : tensor<16xi32> to tensor<16xi64>
      %30 = arith.extsi %arg6 : i32 to i64
      %31 = "tile.splat"(%30) : (i64) -> tensor<16xi64>
      %32 = arith.addi %29, %31 : tensor<16xi64>
      %33 = "tile.expand_dims"(%32) {axis = 0 : i32} : (tensor<16xi64>) -> tensor<1x16xi64>
      %34 = "tile.splat"(%c1_i64) : (i64) -> tensor<1x16xi64>
      %35 = arith.muli %33, %34 : tensor<1x16xi64>
      %36 = "tile.broadcast"(%21) : (tensor<8x1xi64>) -> tensor<8x16xi64>
      %37 = "tile.broadcast"(%35) : (tensor<1x16xi64>) -> tensor<8x16xi64>
      %38 = arith.addi %36, %37 : tensor<8x16xi64>
      %39 = "tile.splat"(%c0_i64) : (i64) -> tensor<1x16xi64>
      %40 = arith.cmpi sge, %33, %39 : tensor<1x16xi64>
      %41 = arith.extsi %arg2 : i32 to i64
      %42 = "tile.splat"(%41) : (i64) -> tensor<1x16xi64>
      %43 = arith.cmpi slt, %33, %42 : tensor<1x16xi64>
      %44 = arith.andi %40, %43 : tensor<1x16xi1>
      %45 = "tile.broadcast"(%27) : (tensor<8x1xi1>) -> tensor<8x16xi1>
      %46 = "tile.broadcast"(%44) : (tensor<1x16xi1>) -> tensor<8x16xi1>
      %47 = arith.andi %45, %46 : tensor<8x16xi1>
      %48 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<8x16x!tile.ptr<f32>>
      %49 = "tile.addptr"(%48, %38) : (tensor<8x16x!tile.ptr<f32>>, tensor<8x16xi64>) -> tensor<8x16x!tile.ptr<f32>>
      %50 = "tile.splat"(%cst) : (f32) -> tensor<8x16xf32>
      %51 = "tile.load"(%49, %47, %50) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<8x16x!tile.ptr<f32>>, tensor<8x16xi1>, tensor<8x16xf32>) -> tensor<8x16xf32>
      gpu.yield %51 : tensor<8x16xf32>
    }) {operandSegmentSizes = array<i32: 1, 2>} : (!tile.ptr<i8>, i32, i32) -> tensor<8x16xf32>
    %2 = "tile.make_range"() {end = 8 : i32, start = 0 : i32} : () -> tensor<8xi32>
    %3 = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32>
    %4 = "tile.expand_dims"(%2) {axis = 1 : i32} : (tensor<8xi32>) -> tensor<8x1xi32>
    %5 = "tile.splat"(%c16_i32) : (i32) -> tensor<8x1xi32>
    %6 = arith.muli %4, %5 : tensor<8x1xi32>
    %7 = "tile.splat"(%arg5) : (!tile.ptr<f32>) -> tensor<8x1x!tile.ptr<f32>>
    %8 = "tile.addptr"(%7, %6) : (tensor<8x1x!tile.ptr<f32>>, tensor<8x1xi32>) -> tensor<8x1x!tile.ptr<f32>>
    %9 = "tile.expand_dims"(%3) {axis = 0 : i32} : (tensor<16xi32>) -> tensor<1x16xi32>
    %10 = "tile.broadcast"(%8) : (tensor<8x1x!tile.ptr<f32>>) -> tensor<8x16x!tile.ptr<f32>>
    %11 = "tile.broadcast"(%9) : (tensor<1x16xi32>) -> tensor<8x16xi32>
    %12 = "tile.addptr"(%10, %11) : (tensor<8x16x!tile.ptr<f32>>, tensor<8x16xi32>) -> tensor<8x16x!tile.ptr<f32>>
    %13 = arith.addf %0, %1 : tensor<8x16xf32>
    "tile.store"(%12, %13) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<8x16x!tile.ptr<f32>>, tensor<8x16xf32>) -> ()
    return
  }
}
