// RUN: tilec-opt %s -p tile-dce | FileCheck %s

// Stores, volatile loads and control flow stay; dead pure ops inside regions go.

#blocked = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 1>}>
#blocked4 = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 1>}>

// CHECK-LABEL: func.func @keep
// CHECK: [[P:%.*]] = "tile.addptr"
// CHECK-NEXT: "tile.load"([[P]]) {{.*}}volatile = true
// CHECK-NEXT: scf.for
// CHECK-NEXT: [[S:%.*]] = "tile.splat"
// CHECK-NEXT: "tile.store"([[P]], [[S]])
// CHECK-NEXT: {{^ *}}}
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
func.func @keep(%p: !tile.ptr<f32>, %n: i32, %x: f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32, #blocked>
  %base = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<16x!tile.ptr<f32>, #blocked>
  %ptrs = "tile.addptr"(%base, %r) : (tensor<16x!tile.ptr<f32>, #blocked>, tensor<16xi32, #blocked>) -> tensor<16x!tile.ptr<f32>, #blocked>
  %v = "tile.load"(%ptrs) {cache = "", evict = "", volatile = true, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!tile.ptr<f32>, #blocked>) -> tensor<16xf32, #blocked>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %dead = arith.muli %i, %i : i32
    %s = "tile.splat"(%x) : (f32) -> tensor<16xf32, #blocked>
    %cvt = "tilegpu.convert_layout"(%s) : (tensor<16xf32, #blocked>) -> tensor<16xf32, #blocked4>
    "tile.store"(%ptrs, %s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>, #blocked>, tensor<16xf32, #blocked>) -> ()
  }
  return
}
