// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// a, b = split(reshape(x, [32, 32, 2])); store(a * b): the pairs of a row held 4 per
// thread by the coalesced load. The load's conversion sinks through the reshape (its
// result a linear layout with each pair in one thread's registers) and the split (each
// half 2 per thread), so neither moves data; the product is converted once, to the
// store's 4-per-thread layout.

// CHECK-DAG: #[[ROWS:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-DAG: #[[PAIRS:linear[0-9]+]] = #tilegpu.linear<{lane = array<i32: 0, 2, 0, 0, 4, 0, 0, 8, 0, 0, 16, 0, 1, 0, 0>, rank = 3 : i32, register = array<i32: 0, 0, 1, 0, 1, 0, 8, 0, 0, 16, 0, 0>, warp = array<i32: 2, 0, 0, 4, 0, 0>}>
// CHECK-DAG: #[[HALF:linear[0-9]+]] = #tilegpu.linear<{lane = array<i32: 0, 2, 0, 4, 0, 8, 0, 16, 1, 0>, rank = 2 : i32, register = array<i32: 0, 1, 8, 0, 16, 0>, warp = array<i32: 2, 0, 4, 0>}>
// CHECK-LABEL: func.func public @pair_sums
// CHECK: [[X:%[0-9]+]] = "tile.load"({{.*}}) -> tensor<32x64xf32, #[[ROWS]]>
// CHECK-NEXT: [[R:%[0-9]+]] = "tile.reshape"([[X]]) : (tensor<32x64xf32, #[[ROWS]]>) -> tensor<32x32x2xf32, #[[PAIRS]]>
// CHECK-NEXT: [[AB:%[0-9]+]]:2 = "tile.split"([[R]]) : (tensor<32x32x2xf32, #[[PAIRS]]>) -> (tensor<32x32xf32, #[[HALF]]>, tensor<32x32xf32, #[[HALF]]>)
// CHECK: [[P:%[0-9]+]] = arith.mulf [[AB]]#0, [[AB]]#1 : tensor<32x32xf32, #[[HALF]]>
// CHECK: "tilegpu.convert_layout"([[P]])
// CHECK-NOT: "tilegpu.convert_layout"
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>
#slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
#blocked3 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
#blocked4 = #tilegpu.blocked<{order = array<i32: 2, 1, 0>, sizePerThread = array<i32: 1, 1, 1>, threadsPerWarp = array<i32: 1, 16, 2>, warpsPerCTA = array<i32: 2, 2, 1>}>
#blocked5 = #tilegpu.blocked<{order = array<i32: 2, 1, 0>, sizePerThread = array<i32: 1, 1, 2>, threadsPerWarp = array<i32: 1, 32, 1>, warpsPerCTA = array<i32: 4, 1, 1>}>
#blocked6 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#slice2 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked7 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @pair_sums(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
    %c32_i32 = arith.constant 32 : i32
    %c64_i32 = arith.constant 64 : i32
    %0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #blocked0>
    %1 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #blocked0>
    %2 = "tilegpu.convert_layout"(%0) : (tensor<32xi32, #blocked0>) -> tensor<32xi32, #slice0>
    %3 = "tile.expand_dims"(%2) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked1>
    %4 = "tile.splat"(%c64_i32) : (i32) -> tensor<32x1xi32, #blocked1>
    %5 = arith.muli %3, %4 : tensor<32x1xi32, #blocked1>
    %6 = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
    %7 = "tile.addptr"(%6, %5) : (tensor<32x1x!tile.ptr<f32>, #blocked1>, tensor<32x1xi32, #blocked1>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
    %8 = "tilegpu.convert_layout"(%1) : (tensor<64xi32, #blocked0>) -> tensor<64xi32, #slice1>
    %9 = "tile.expand_dims"(%8) {axis = 0 : i32} : (tensor<64xi32, #slice1>) -> tensor<1x64xi32, #blocked2>
    %10 = "tilegpu.convert_layout"(%7) : (tensor<32x1x!tile.ptr<f32>, #blocked1>) -> tensor<32x1x!tile.ptr<f32>, #blocked2>
    %11 = "tile.broadcast"(%10) : (tensor<32x1x!tile.ptr<f32>, #blocked2>) -> tensor<32x64x!tile.ptr<f32>, #blocked2>
    %12 = "tile.broadcast"(%9) : (tensor<1x64xi32, #blocked2>) -> tensor<32x64xi32, #blocked2>
    %13 = "tile.addptr"(%11, %12) : (tensor<32x64x!tile.ptr<f32>, #blocked2>, tensor<32x64xi32, #blocked2>) -> tensor<32x64x!tile.ptr<f32>, #blocked2>
    %14 = "tilegpu.convert_layout"(%13) : (tensor<32x64x!tile.ptr<f32>, #blocked2>) -> tensor<32x64x!tile.ptr<f32>, #blocked3>
    %15 = "tile.load"(%14) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x64x!tile.ptr<f32>, #blocked3>) -> tensor<32x64xf32, #blocked3>
    %16 = "tilegpu.convert_layout"(%15) : (tensor<32x64xf32, #blocked3>) -> tensor<32x64xf32, #blocked2>
    %17 = "tile.reshape"(%16) : (tensor<32x64xf32, #blocked2>) -> tensor<32x32x2xf32, #blocked4>
    %18 = "tilegpu.convert_layout"(%17) : (tensor<32x32x2xf32, #blocked4>) -> tensor<32x32x2xf32, #blocked5>
    %19:2 = "tile.split"(%18) : (tensor<32x32x2xf32, #blocked5>) -> (tensor<32x32xf32, #blocked6>, tensor<32x32xf32, #blocked6>)
    %20 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #blocked0>
    %21 = "tilegpu.convert_layout"(%0) : (tensor<32xi32, #blocked0>) -> tensor<32xi32, #slice0>
    %22 = "tile.expand_dims"(%21) {axis = 1 : i32} : (tensor<32xi32, #slice0>) -> tensor<32x1xi32, #blocked1>
    %23 = "tile.splat"(%c32_i32) : (i32) -> tensor<32x1xi32, #blocked1>
    %24 = arith.muli %22, %23 : tensor<32x1xi32, #blocked1>
    %25 = "tile.splat"(%arg1) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
    %26 = "tile.addptr"(%25, %24) : (tensor<32x1x!tile.ptr<f32>, #blocked1>, tensor<32x1xi32, #blocked1>) -> tensor<32x1x!tile.ptr<f32>, #blocked1>
    %27 = "tilegpu.convert_layout"(%20) : (tensor<32xi32, #blocked0>) -> tensor<32xi32, #slice2>
    %28 = "tile.expand_dims"(%27) {axis = 0 : i32} : (tensor<32xi32, #slice2>) -> tensor<1x32xi32, #blocked6>
    %29 = "tilegpu.convert_layout"(%26) : (tensor<32x1x!tile.ptr<f32>, #blocked1>) -> tensor<32x1x!tile.ptr<f32>, #blocked6>
    %30 = "tile.broadcast"(%29) : (tensor<32x1x!tile.ptr<f32>, #blocked6>) -> tensor<32x32x!tile.ptr<f32>, #blocked6>
    %31 = "tile.broadcast"(%28) : (tensor<1x32xi32, #blocked6>) -> tensor<32x32xi32, #blocked6>
    %32 = "tile.addptr"(%30, %31) : (tensor<32x32x!tile.ptr<f32>, #blocked6>, tensor<32x32xi32, #blocked6>) -> tensor<32x32x!tile.ptr<f32>, #blocked6>
    %33 = arith.mulf %19#0, %19#1 : tensor<32x32xf32, #blocked6>
    %34 = "tilegpu.convert_layout"(%32) : (tensor<32x32x!tile.ptr<f32>, #blocked6>) -> tensor<32x32x!tile.ptr<f32>, #blocked7>
    %35 = "tilegpu.convert_layout"(%33) : (tensor<32x32xf32, #blocked6>) -> tensor<32x32xf32, #blocked7>
    "tile.store"(%34, %35) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f32>, #blocked7>, tensor<32x32xf32, #blocked7>) -> ()
    return
  }
}
