// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// x[i, j] + y[j, i]: the two loads are coalesced along different dimensions, so one of
// them must be converted before the add. The one conversion that is needed stays, and
// the add and the store keep the row-major layout.

#row = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#col = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 4, 1>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 1, 4>}>

// CHECK-DAG: #[[ROW:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, {{.*}}}>
// CHECK-DAG: #[[COL:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0, 1>, {{.*}}}>
// CHECK-LABEL: func.func @transpose_add
// CHECK: [[X:%.*]] = "tile.load"(%arg0) {{.*}} -> tensor<32x32xf32, #[[ROW]]>
// CHECK: [[Y:%.*]] = "tile.load"(%arg1) {{.*}} -> tensor<32x32xf32, #[[COL]]>
// CHECK-NEXT: [[YR:%.*]] = "tilegpu.convert_layout"([[Y]]) : (tensor<32x32xf32, #[[COL]]>) -> tensor<32x32xf32, #[[ROW]]>
// CHECK-NEXT: [[S:%.*]] = arith.addf [[X]], [[YR]] : tensor<32x32xf32, #[[ROW]]>
// CHECK-NEXT: "tile.store"(%arg2, [[S]]) {{.*}} : (tensor<32x32x!tile.ptr<f32>, #[[ROW]]>, tensor<32x32xf32, #[[ROW]]>) -> ()
// CHECK-NOT: tilegpu.convert_layout
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @transpose_add(%xp: tensor<32x32x!tile.ptr<f32>, #row>, %yp: tensor<32x32x!tile.ptr<f32>, #col>, %op: tensor<32x32x!tile.ptr<f32>, #row>) {
    %x = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f32>, #row>) -> tensor<32x32xf32, #row>
    %y = "tile.load"(%yp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x32x!tile.ptr<f32>, #col>) -> tensor<32x32xf32, #col>
    %yr = "tilegpu.convert_layout"(%y) : (tensor<32x32xf32, #col>) -> tensor<32x32xf32, #row>
    %s = arith.addf %x, %yr : tensor<32x32xf32, #row>
    "tile.store"(%op, %s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x32x!tile.ptr<f32>, #row>, tensor<32x32xf32, #row>) -> ()
    return
  }
}
