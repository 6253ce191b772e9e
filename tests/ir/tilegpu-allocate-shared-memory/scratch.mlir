// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory | FileCheck %s

// Ops whose lowering exchanges values through shared memory get scratch space, placed
// with the explicit buffers: a buffer live only at the op (`tilegpu.offset`). Ops whose
// lowering stays in registers get none: a reduction with no warp bits along its axis, a
// layout conversion that only permutes registers.

#b = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#rows = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#row = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 2, 2>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 1, 4>}>
#col = #tilegpu.blocked<{order = array<i32: 0, 1>, sizePerThread = array<i32: 2, 2>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 1, 4>}>

// A cross-warp sum (4 warps' f32 partials: 16 bytes) inside a loop that reads a ring
// (2 KiB) live across the loop: the reduction's bytes are after the ring's. The sum
// after the loop, live with nothing, reuses the ring's bytes; the row sums (lanes only)
// and the register permutation get no scratch. The kernel's shared memory ends after
// the first sum's 16 bytes.
// CHECK: module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.shared = 2064 : i32
// CHECK-LABEL: func.func @loop_and_ring
// CHECK: "tilegpu.local_alloc"() {{.*}}tilegpu.offset = 0 : i32{{.*}} -> !tilegpu.memdesc<tensor<2x16x16xf32>>
// CHECK: scf.for
// CHECK: "tilegpu.local_load"
// CHECK: "tile.reduce"
// CHECK: tilegpu.offset = 2048 : i32
// CHECK: "tile.reduce"
// CHECK-NOT: tilegpu.offset
// CHECK: } : (tensor<4x32xf32, #{{.*}}>) -> tensor<4xf32,
// CHECK: "tilegpu.convert_layout"(%{{.*}}) : (tensor<2x256xf32, #{{.*}}>) -> tensor<2x256xf32, #{{.*}}>
// CHECK: "tile.reduce"
// CHECK: tilegpu.offset = 0 : i32
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @loop_and_ring(%v: tensor<128xf32, #b>, %m: tensor<4x32xf32, #rows>, %p: tensor<2x256xf32, #row>, %i: i32) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %ring = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<2x16x16xf32>>
    scf.for %k = %c0 to %c4 step %c1 {
      %b = "tilegpu.memdesc_index"(%ring, %i) : (!tilegpu.memdesc<tensor<2x16x16xf32>>, i32) -> !tilegpu.memdesc<tensor<16x16xf32>>
      %x = "tilegpu.local_load"(%b) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
      %s = "tile.reduce"(%v) ({
      ^bb0(%a: f32, %c: f32):
        %t = arith.addf %a, %c : f32
        gpu.yield %t : f32
      }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32, #b>) -> f32
    }
    %r = "tile.reduce"(%m) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x32xf32, #rows>) -> tensor<4xf32, #tilegpu.slice<{dim = 1 : i32, parent = #rows}>>
    %q = "tilegpu.convert_layout"(%p) : (tensor<2x256xf32, #row>) -> tensor<2x256xf32, #col>
    %s2 = "tile.reduce"(%v) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32, #b>) -> f32
    return
  }
}
