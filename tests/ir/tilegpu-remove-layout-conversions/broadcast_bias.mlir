// RUN: tilec-opt %s --split-input-file -p tilegpu-remove-layout-conversions | FileCheck %s

// y = x + bias[None, :] on a 64x256 tile with 8 warps, as coalescing leaves it: x is
// loaded and stored in the vectorised layout #vec, while the add runs in the layout the
// bias row's broadcast came in (#other), so the whole tile would be converted twice
// (through shared memory). The conversion of x sinks into the add once the broadcast
// bias is recomputed in #vec: below the broadcast, the bias row is loaded again straight
// into slice<0, #vec> (its pointers are index arithmetic), so neither the tile nor the
// row is converted and the kernel needs no shared memory.

// CHECK-DAG: #[[VEC:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 8, 1>}>
// CHECK-DAG: #[[ROW:slice[0-9]+]] = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 8, 1>}>}>
// CHECK-LABEL: func.func @bias
// CHECK-NOT: tilegpu.convert_layout
// CHECK: [[X:%.*]] = "tile.load"(%arg0) {{.*}} -> tensor<64x256xf16, #[[VEC]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: [[B:%.*]] = "tile.load"({{.*}}) {{.*}} -> tensor<256xf16, #[[ROW]]>
// CHECK-NEXT: [[E:%.*]] = "tile.expand_dims"([[B]]) {axis = 0 : i32} : (tensor<256xf16, #[[ROW]]>) -> tensor<1x256xf16, #[[VEC]]>
// CHECK-NEXT: [[BB:%.*]] = "tile.broadcast"([[E]]) : (tensor<1x256xf16, #[[VEC]]>) -> tensor<64x256xf16, #[[VEC]]>
// CHECK-NEXT: [[S:%.*]] = arith.addf [[X]], [[BB]] : tensor<64x256xf16, #[[VEC]]>
// CHECK-NEXT: "tile.store"(%arg2, [[S]])
// CHECK-NOT: tilegpu.convert_layout
#vec = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 8, 1>}>
#other = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 1, 8>}>
#flat = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 8>}>
#row = #tilegpu.slice<{dim = 0 : i32, parent = #other}>
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90"} {
  func.func @bias(%xp: tensor<64x256x!tile.ptr<f16>, #vec>, %b: !tile.ptr<f16>, %yp: tensor<64x256x!tile.ptr<f16>, #vec>) {
    %x = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x256x!tile.ptr<f16>, #vec>) -> tensor<64x256xf16, #vec>
    %xo = "tilegpu.convert_layout"(%x) : (tensor<64x256xf16, #vec>) -> tensor<64x256xf16, #other>
    %r = "tile.make_range"() {end = 256 : i32, start = 0 : i32} : () -> tensor<256xi32, #flat>
    %bs = "tile.splat"(%b) : (!tile.ptr<f16>) -> tensor<256x!tile.ptr<f16>, #flat>
    %bp = "tile.addptr"(%bs, %r) : (tensor<256x!tile.ptr<f16>, #flat>, tensor<256xi32, #flat>) -> tensor<256x!tile.ptr<f16>, #flat>
    %bv = "tile.load"(%bp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<256x!tile.ptr<f16>, #flat>) -> tensor<256xf16, #flat>
    %br = "tilegpu.convert_layout"(%bv) : (tensor<256xf16, #flat>) -> tensor<256xf16, #row>
    %be = "tile.expand_dims"(%br) {axis = 0 : i32} : (tensor<256xf16, #row>) -> tensor<1x256xf16, #other>
    %bb = "tile.broadcast"(%be) : (tensor<1x256xf16, #other>) -> tensor<64x256xf16, #other>
    %s = arith.addf %xo, %bb : tensor<64x256xf16, #other>
    %sv = "tilegpu.convert_layout"(%s) : (tensor<64x256xf16, #other>) -> tensor<64x256xf16, #vec>
    "tile.store"(%yp, %sv) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x256x!tile.ptr<f16>, #vec>, tensor<64x256xf16, #vec>) -> ()
    return
  }
}

// -----

// A volatile load of the row is not repeated: the row is converted (256 elements),
// still not the tile.

// CHECK-LABEL: func.func @volatile_bias
// CHECK: [[X:%.*]] = "tile.load"(%arg0) {{.*}} -> tensor<64x256xf16, #[[VEC2:blocked[0-9]+]]>
// CHECK: [[B:%.*]] = "tile.load"({{.*}}) {{.*}}volatile = true{{.*}} -> tensor<256xf16, #{{blocked[0-9]+}}>
// CHECK-NEXT: "tilegpu.convert_layout"([[B]]) : (tensor<256xf16, #{{blocked[0-9]+}}>) -> tensor<256xf16, #{{slice[0-9]+}}>
// CHECK-NOT: "tilegpu.convert_layout"({{.*}}) : (tensor<64x256xf16
// CHECK: arith.addf [[X]], {{.*}} : tensor<64x256xf16, #[[VEC2]]>
#vec = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 8, 1>}>
#other = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 1, 8>}>
#flat = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 8>}>
#row = #tilegpu.slice<{dim = 0 : i32, parent = #other}>
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90"} {
  func.func @volatile_bias(%xp: tensor<64x256x!tile.ptr<f16>, #vec>, %b: !tile.ptr<f16>, %yp: tensor<64x256x!tile.ptr<f16>, #vec>) {
    %x = "tile.load"(%xp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x256x!tile.ptr<f16>, #vec>) -> tensor<64x256xf16, #vec>
    %xo = "tilegpu.convert_layout"(%x) : (tensor<64x256xf16, #vec>) -> tensor<64x256xf16, #other>
    %r = "tile.make_range"() {end = 256 : i32, start = 0 : i32} : () -> tensor<256xi32, #flat>
    %bs = "tile.splat"(%b) : (!tile.ptr<f16>) -> tensor<256x!tile.ptr<f16>, #flat>
    %bp = "tile.addptr"(%bs, %r) : (tensor<256x!tile.ptr<f16>, #flat>, tensor<256xi32, #flat>) -> tensor<256x!tile.ptr<f16>, #flat>
    %bv = "tile.load"(%bp) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = true} : (tensor<256x!tile.ptr<f16>, #flat>) -> tensor<256xf16, #flat>
    %br = "tilegpu.convert_layout"(%bv) : (tensor<256xf16, #flat>) -> tensor<256xf16, #row>
    %be = "tile.expand_dims"(%br) {axis = 0 : i32} : (tensor<256xf16, #row>) -> tensor<1x256xf16, #other>
    %bb = "tile.broadcast"(%be) : (tensor<1x256xf16, #other>) -> tensor<64x256xf16, #other>
    %s = arith.addf %xo, %bb : tensor<64x256xf16, #other>
    %sv = "tilegpu.convert_layout"(%s) : (tensor<64x256xf16, #other>) -> tensor<64x256xf16, #vec>
    "tile.store"(%yp, %sv) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x256x!tile.ptr<f16>, #vec>, tensor<64x256xf16, #vec>) -> ()
    return
  }
}
