// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// A conversion to the layout a value already has disappears; a conversion of a
// conversion converts the original value (and goes away if that gets back to it).
// The values come from a load, so nothing can be recomputed; the users are `return`,
// so nothing can be sunk: only folding applies.

#a = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 2>}>
#b = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 2>}>
#c = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 2>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 2>}>

// CHECK-DAG: #[[A:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, {{.*}}}>
// CHECK-DAG: #[[C:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 2>, {{.*}}}>
// CHECK-LABEL: func.func @fold
// CHECK-NEXT: [[V:%.*]] = "tile.load"(%arg0)
// CHECK-NEXT: [[VC:%.*]] = "tilegpu.convert_layout"([[V]]) : (tensor<256xf32, #[[A]]>) -> tensor<256xf32, #[[C]]>
// CHECK-NEXT: return [[V]], [[VC]], [[V]] : tensor<256xf32, #[[A]]>, tensor<256xf32, #[[C]]>, tensor<256xf32, #[[A]]>
module attributes {"tilegpu.num-warps" = 2 : i32, tilegpu.target = "sm_90"} {
  func.func @fold(%p: tensor<256x!tile.ptr<f32>, #a>) -> (tensor<256xf32, #a>, tensor<256xf32, #c>, tensor<256xf32, #a>) {
    %v = "tile.load"(%p) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<256x!tile.ptr<f32>, #a>) -> tensor<256xf32, #a>
    %same = "tilegpu.convert_layout"(%v) : (tensor<256xf32, #a>) -> tensor<256xf32, #a>
    %vb = "tilegpu.convert_layout"(%v) : (tensor<256xf32, #a>) -> tensor<256xf32, #b>
    %vc = "tilegpu.convert_layout"(%vb) : (tensor<256xf32, #b>) -> tensor<256xf32, #c>
    %back = "tilegpu.convert_layout"(%vb) : (tensor<256xf32, #b>) -> tensor<256xf32, #a>
    return %same, %vc, %back : tensor<256xf32, #a>, tensor<256xf32, #c>, tensor<256xf32, #a>
  }
}
