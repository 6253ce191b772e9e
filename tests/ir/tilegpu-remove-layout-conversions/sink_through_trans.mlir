// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// y[c, r] = x[r, c] for a 32x64 fp32 tile, as tilegpu-coalesce leaves it: the load
// coalesced along x's rows (4 per thread), its value converted to the default layout for
// tl.trans, the transposed tile converted to the store's layout (coalesced along y's
// rows). The load's conversion sinks through the transpose, which then renumbers
// registers (4 per thread down y's columns), and one conversion is left, before the
// store: the transposed layout would scatter the warp's writes (its lanes run down y's
// columns), so the store keeps its coalesced layout.

// CHECK-DAG: #[[ROWS:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-DAG: #[[COLS:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 4, 1>, threadsPerWarp = array<i32: 16, 2>, warpsPerCTA = array<i32: 1, 4>}>
// CHECK-DAG: #[[STORE:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-LABEL: func.func public @trans_store
// CHECK: [[X:%[0-9]+]] = "tile.load"({{.*}}) -> tensor<32x64xf32, #[[ROWS]]>
// CHECK-NOT: "tilegpu.convert_layout"
// CHECK: [[T:%[0-9]+]] = "tile.trans"([[X]]) {order = array<i32: 1, 0>} : (tensor<32x64xf32, #[[ROWS]]>) -> tensor<64x32xf32, #[[COLS]]>
// CHECK-NEXT: [[S:%[0-9]+]] = "tilegpu.convert_layout"([[T]]) : (tensor<64x32xf32, #[[COLS]]>) -> tensor<64x32xf32, #[[STORE]]>
// CHECK-NEXT: "tile.store"(%{{[0-9]+}}, [[S]])
// CHECK-NOT: "tilegpu.convert_layout"
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>
#slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
#blocked3 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
#slice2 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked4 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#blocked5 = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 2, 2>}>
#blocked6 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @trans_store(%arg0: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
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
    %17 = "tilegpu.convert_layout"(%1) : (tensor<64xi32, #blocked0>) -> tensor<64xi32, #slice0>
    %18 = "tile.expand_dims"(%17) {axis = 1 : i32} : (tensor<64xi32, #slice0>) -> tensor<64x1xi32, #blocked1>
    %19 = "tile.splat"(%c32_i32) : (i32) -> tensor<64x1xi32, #blocked1>
    %20 = arith.muli %18, %19 : tensor<64x1xi32, #blocked1>
    %21 = "tile.splat"(%arg1) : (!tile.ptr<f32>) -> tensor<64x1x!tile.ptr<f32>, #blocked1>
    %22 = "tile.addptr"(%21, %20) : (tensor<64x1x!tile.ptr<f32>, #blocked1>, tensor<64x1xi32, #blocked1>) -> tensor<64x1x!tile.ptr<f32>, #blocked1>
    %23 = "tilegpu.convert_layout"(%0) : (tensor<32xi32, #blocked0>) -> tensor<32xi32, #slice2>
    %24 = "tile.expand_dims"(%23) {axis = 0 : i32} : (tensor<32xi32, #slice2>) -> tensor<1x32xi32, #blocked4>
    %25 = "tilegpu.convert_layout"(%22) : (tensor<64x1x!tile.ptr<f32>, #blocked1>) -> tensor<64x1x!tile.ptr<f32>, #blocked4>
    %26 = "tile.broadcast"(%25) : (tensor<64x1x!tile.ptr<f32>, #blocked4>) -> tensor<64x32x!tile.ptr<f32>, #blocked4>
    %27 = "tile.broadcast"(%24) : (tensor<1x32xi32, #blocked4>) -> tensor<64x32xi32, #blocked4>
    %28 = "tile.addptr"(%26, %27) : (tensor<64x32x!tile.ptr<f32>, #blocked4>, tensor<64x32xi32, #blocked4>) -> tensor<64x32x!tile.ptr<f32>, #blocked4>
    %29 = "tile.trans"(%16) {order = array<i32: 1, 0>} : (tensor<32x64xf32, #blocked2>) -> tensor<64x32xf32, #blocked5>
    %30 = "tilegpu.convert_layout"(%29) : (tensor<64x32xf32, #blocked5>) -> tensor<64x32xf32, #blocked4>
    %31 = "tilegpu.convert_layout"(%28) : (tensor<64x32x!tile.ptr<f32>, #blocked4>) -> tensor<64x32x!tile.ptr<f32>, #blocked6>
    %32 = "tilegpu.convert_layout"(%30) : (tensor<64x32xf32, #blocked4>) -> tensor<64x32xf32, #blocked6>
    "tile.store"(%31, %32) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x32x!tile.ptr<f32>, #blocked6>, tensor<64x32xf32, #blocked6>) -> ()
    return
  }
}
