// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// Index math is cheap: instead of converting a 2-D tensor of pointers to the coalesced
// layout, the pass computes it again in that layout, back through broadcast,
// expand_dims (whose operand then needs the matching slice layout) and make_range.
// The loaded value's round trip (coalesced -> default -> coalesced) folds away.
// (Input: a 16x64 f16 copy after convert-tile-to-tilegpu and tilegpu-coalesce.)

// CHECK-DAG: #[[L:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-DAG: #[[ROWS:slice[0-9]+]] = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
// CHECK-DAG: #[[COLS:slice[0-9]+]] = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>}>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: [[RM:%.*]] = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32, #[[ROWS]]>
// CHECK: [[RN:%.*]] = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #[[COLS]]>
// CHECK: "tile.expand_dims"([[RM]]) {axis = 1 : i32} : (tensor<16xi32, #[[ROWS]]>) -> tensor<16x1xi32, #[[L]]>
// CHECK: "tile.expand_dims"([[RN]]) {axis = 0 : i32} : (tensor<64xi32, #[[COLS]]>) -> tensor<1x64xi32, #[[L]]>
// CHECK: [[OFFS:%.*]] = arith.addi {{.*}} : tensor<16x64xi32, #[[L]]>
// CHECK: [[OUT:%.*]] = "tile.addptr"({{.*}}, [[OFFS]]) {{.*}} -> tensor<16x64x!tile.ptr<f16>, #[[L]]>
// CHECK: [[IN:%.*]] = "tile.addptr"({{.*}}, [[OFFS]]) {{.*}} -> tensor<16x64x!tile.ptr<f16>, #[[L]]>
// CHECK-NEXT: [[V:%.*]] = "tile.load"([[IN]]) {{.*}} -> tensor<16x64xf16, #[[L]]>
// CHECK-NEXT: "tile.store"([[OUT]], [[V]])
// CHECK-NOT: tilegpu.convert_layout
#blocked0 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 32, 1>, warpsPerCTA = array<i32: 4, 1>}>
#slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
#blocked3 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @copy2d(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f16> {tile.divisibility = 16 : i32}) {
    %c64_i32 = arith.constant 64 : i32
    %0 = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32, #blocked0>
    %1 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #blocked0>
    %2 = "tilegpu.convert_layout"(%0) : (tensor<16xi32, #blocked0>) -> tensor<16xi32, #slice0>
    %3 = "tile.expand_dims"(%2) {axis = 1 : i32} : (tensor<16xi32, #slice0>) -> tensor<16x1xi32, #blocked1>
    %4 = "tile.splat"(%c64_i32) : (i32) -> tensor<16x1xi32, #blocked1>
    %5 = arith.muli %3, %4 : tensor<16x1xi32, #blocked1>
    %6 = "tilegpu.convert_layout"(%1) : (tensor<64xi32, #blocked0>) -> tensor<64xi32, #slice1>
    %7 = "tile.expand_dims"(%6) {axis = 0 : i32} : (tensor<64xi32, #slice1>) -> tensor<1x64xi32, #blocked2>
    %8 = "tile.broadcast"(%5) : (tensor<16x1xi32, #blocked1>) -> tensor<16x64xi32, #blocked1>
    %9 = "tile.broadcast"(%7) : (tensor<1x64xi32, #blocked2>) -> tensor<16x64xi32, #blocked2>
    %10 = "tilegpu.convert_layout"(%9) : (tensor<16x64xi32, #blocked2>) -> tensor<16x64xi32, #blocked1>
    %11 = arith.addi %8, %10 : tensor<16x64xi32, #blocked1>
    %12 = "tile.splat"(%arg1) : (!tile.ptr<f16>) -> tensor<16x64x!tile.ptr<f16>, #blocked2>
    %13 = "tilegpu.convert_layout"(%11) : (tensor<16x64xi32, #blocked1>) -> tensor<16x64xi32, #blocked2>
    %14 = "tile.addptr"(%12, %13) : (tensor<16x64x!tile.ptr<f16>, #blocked2>, tensor<16x64xi32, #blocked2>) -> tensor<16x64x!tile.ptr<f16>, #blocked2>
    %15 = "tile.splat"(%arg0) : (!tile.ptr<f16>) -> tensor<16x64x!tile.ptr<f16>, #blocked2>
    %16 = "tilegpu.convert_layout"(%11) : (tensor<16x64xi32, #blocked1>) -> tensor<16x64xi32, #blocked2>
    %17 = "tile.addptr"(%15, %16) : (tensor<16x64x!tile.ptr<f16>, #blocked2>, tensor<16x64xi32, #blocked2>) -> tensor<16x64x!tile.ptr<f16>, #blocked2>
    %18 = "tilegpu.convert_layout"(%17) : (tensor<16x64x!tile.ptr<f16>, #blocked2>) -> tensor<16x64x!tile.ptr<f16>, #blocked3>
    %19 = "tile.load"(%18) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<16x64x!tile.ptr<f16>, #blocked3>) -> tensor<16x64xf16, #blocked3>
    %20 = "tilegpu.convert_layout"(%19) : (tensor<16x64xf16, #blocked3>) -> tensor<16x64xf16, #blocked2>
    %21 = "tilegpu.convert_layout"(%14) : (tensor<16x64x!tile.ptr<f16>, #blocked2>) -> tensor<16x64x!tile.ptr<f16>, #blocked3>
    %22 = "tilegpu.convert_layout"(%20) : (tensor<16x64xf16, #blocked2>) -> tensor<16x64xf16, #blocked3>
    "tile.store"(%21, %22) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x64x!tile.ptr<f16>, #blocked3>, tensor<16x64xf16, #blocked3>) -> ()
    return
  }
}

