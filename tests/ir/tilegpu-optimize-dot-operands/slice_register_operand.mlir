// RUN: tilec-opt %s -p tilegpu-optimize-dot-operands | FileCheck %s

// Attention's second dot (p @ v): A is already in registers, converted from the #mma
// result of the first dot to the A operand layout (a register permutation, so it keeps
// its convert_layout and gets no buffer), while B comes from a blocked tensor, whose
// conversion the pass first turns into local_alloc + local_load.
// The dot is then still sliced along K (64) into four dots one instruction (16) deep,
// chained through the accumulator: A's slices are register selections
// (tilegpu.extract_slice at [0, 16 * i]), B's are memdesc_subviews of the buffer read
// by their own local_load, so only one 16x64 B slice is live at a time.

// CHECK-LABEL: func.func @p_times_v
// CHECK-DAG: %[[A:[0-9]+]] = "tilegpu.convert_layout"(%arg0) : (tensor<128x64xf16, #mma0>) -> tensor<128x64xf16, #dot_op0>
// CHECK-DAG: %[[BBUF:[0-9]+]] = "tilegpu.local_alloc"(%arg1) {{.*}} -> !tilegpu.memdesc<tensor<64x64xf16, #shared0>>
// No load of the whole of B before the chain.
// CHECK-NOT: "tilegpu.local_load"(%[[BBUF]])
// B's first slice is read where B was loaded; the rest at the dot.
// CHECK: %[[B0:[0-9]+]] = "tilegpu.memdesc_subview"(%[[BBUF]]) {offsets = array<i32: 0, 0>} {{.*}} -> !tilegpu.memdesc<tensor<16x64xf16, #shared0>>
// CHECK-NEXT: %[[LB0:[0-9]+]] = "tilegpu.local_load"(%[[B0]]) {{.*}} -> tensor<16x64xf16, #dot_op1>
// CHECK-NEXT: %[[A0:[0-9]+]] = "tilegpu.extract_slice"(%[[A]]) {offsets = array<i32: 0, 0>} : (tensor<128x64xf16, #dot_op0>) -> tensor<128x16xf16, #dot_op0>
// CHECK-NEXT: %[[D0:[0-9]+]] = "tile.dot"(%[[A0]], %[[LB0]], %arg2) {{.*}} -> tensor<128x64xf32, #mma0>
// CHECK-NEXT: %[[A1:[0-9]+]] = "tilegpu.extract_slice"(%[[A]]) {offsets = array<i32: 0, 16>} : (tensor<128x64xf16, #dot_op0>) -> tensor<128x16xf16, #dot_op0>
// CHECK-NEXT: %[[B1:[0-9]+]] = "tilegpu.memdesc_subview"(%[[BBUF]]) {offsets = array<i32: 16, 0>} {{.*}} -> !tilegpu.memdesc<tensor<16x64xf16, #shared0>>
// CHECK-NEXT: %[[LB1:[0-9]+]] = "tilegpu.local_load"(%[[B1]]) {{.*}} -> tensor<16x64xf16, #dot_op1>
// CHECK-NEXT: %[[D1:[0-9]+]] = "tile.dot"(%[[A1]], %[[LB1]], %[[D0]])
// CHECK-NEXT: %[[A2:[0-9]+]] = "tilegpu.extract_slice"(%[[A]]) {offsets = array<i32: 0, 32>} : (tensor<128x64xf16, #dot_op0>) -> tensor<128x16xf16, #dot_op0>
// CHECK-NEXT: %[[B2:[0-9]+]] = "tilegpu.memdesc_subview"(%[[BBUF]]) {offsets = array<i32: 32, 0>} {{.*}} -> !tilegpu.memdesc<tensor<16x64xf16, #shared0>>
// CHECK-NEXT: %[[LB2:[0-9]+]] = "tilegpu.local_load"(%[[B2]]) {{.*}} -> tensor<16x64xf16, #dot_op1>
// CHECK-NEXT: %[[D2:[0-9]+]] = "tile.dot"(%[[A2]], %[[LB2]], %[[D1]])
// CHECK-NEXT: %[[A3:[0-9]+]] = "tilegpu.extract_slice"(%[[A]]) {offsets = array<i32: 0, 48>} : (tensor<128x64xf16, #dot_op0>) -> tensor<128x16xf16, #dot_op0>
// CHECK-NEXT: %[[B3:[0-9]+]] = "tilegpu.memdesc_subview"(%[[BBUF]]) {offsets = array<i32: 48, 0>} {{.*}} -> !tilegpu.memdesc<tensor<16x64xf16, #shared0>>
// CHECK-NEXT: %[[LB3:[0-9]+]] = "tilegpu.local_load"(%[[B3]]) {{.*}} -> tensor<16x64xf16, #dot_op1>
// CHECK-NEXT: %[[D3:[0-9]+]] = "tile.dot"(%[[A3]], %[[LB3]], %[[D2]])
// The whole-K dot is gone; the chain's last dot is the result.
// CHECK-NOT: "tile.dot"
// CHECK: return %[[D3]]
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 8>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
#opa = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>
#opb = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @p_times_v(%p: tensor<128x64xf16, #mma>, %v: tensor<64x64xf16, #b>, %acc: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma> {
    %a = "tilegpu.convert_layout"(%p) : (tensor<128x64xf16, #mma>) -> tensor<128x64xf16, #opa>
    %b = "tilegpu.convert_layout"(%v) : (tensor<64x64xf16, #b>) -> tensor<64x64xf16, #opb>
    %d = "tile.dot"(%a, %b, %acc) {input_precision = "ieee"} : (tensor<128x64xf16, #opa>, tensor<64x64xf16, #opb>, tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma>
    return %d : tensor<128x64xf32, #mma>
  }
}
