// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers | FileCheck %s

// An op with scratch space (here cross-warp sums, 16 bytes each) writes and then reads
// its bytes: it waits for earlier accesses of those bytes, and its reads stay pending
// after it, so the next writer of those bytes waits. Whether two reductions in a row
// need a barrier depends on where the allocator put their scratch.

#b = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 1>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>
#rows = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>

// Consecutive sums, both at offset 0: a barrier between them. Row sums within warps
// touch no shared memory: no barrier before or after them.
// CHECK-LABEL: func.func @overlapping
// CHECK-NOT: "tilegpu.barrier"
// CHECK: "tile.reduce"
// CHECK: tilegpu.offset = 0
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tile.reduce"
// CHECK: tilegpu.offset = 0
// CHECK-NOT: "tilegpu.barrier"
// CHECK: "tile.reduce"
// CHECK-NOT: "tilegpu.barrier"
// CHECK: return
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @overlapping(%v: tensor<128xf32, #b>, %m: tensor<4x32xf32, #rows>) {
    %s1 = "tile.reduce"(%v) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32, #b>) -> f32
    %s2 = "tile.reduce"(%v) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.maximumf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32, #b>) -> f32
    %r = "tile.reduce"(%m) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x32xf32, #rows>) -> tensor<4xf32, #tilegpu.slice<{dim = 1 : i32, parent = #rows}>>
    return
  }

// The second sum is live with %buf (defined, not yet written, before it), so the
// allocator puts it after %buf's 1 KiB; the first, at 0, shares %buf's bytes. No
// barrier between the sums (disjoint bytes); the store into %buf waits for the first
// sum's reads, and the load for the store.
// CHECK-LABEL: func.func @disjoint
// CHECK: "tile.reduce"
// CHECK: tilegpu.offset = 0
// CHECK-NEXT: "tilegpu.local_alloc"(){{.*}}tilegpu.offset = 0
// CHECK-NEXT: "tile.reduce"
// CHECK: tilegpu.offset = 1024
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.local_store"
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tilegpu.local_load"
  func.func @disjoint(%v: tensor<128xf32, #b>, %x: tensor<16x16xf32>) {
    %s1 = "tile.reduce"(%v) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32, #b>) -> f32
    %buf = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<16x16xf32>>
    %s2 = "tile.reduce"(%v) ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32, #b>) -> f32
    "tilegpu.local_store"(%x, %buf) : (tensor<16x16xf32>, !tilegpu.memdesc<tensor<16x16xf32>>) -> ()
    %y = "tilegpu.local_load"(%buf) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
    return
  }

// A sum in a loop: the next iteration's sum overwrites what this one read, so a barrier
// heads the body; the load of a buffer live across the loop (written before it, then a
// tl.debug_barrier) is at other bytes and needs none.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK-NEXT: "tilegpu.barrier"()
// CHECK-NEXT: "tile.reduce"
// CHECK: tilegpu.offset = 1024
// CHECK-NEXT: "tilegpu.local_load"
// CHECK-NEXT: }
  func.func @in_loop(%v: tensor<128xf32, #b>, %x: tensor<16x16xf32>) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %buf = "tilegpu.local_alloc"(%x) {operandSegmentSizes = array<i32: 1>} : (tensor<16x16xf32>) -> !tilegpu.memdesc<tensor<16x16xf32>>
    "tile.barrier"() : () -> ()
    scf.for %k = %c0 to %c4 step %c1 {
      %s = "tile.reduce"(%v) ({
      ^bb0(%a: f32, %c: f32):
        %t = arith.addf %a, %c : f32
        gpu.yield %t : f32
      }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32, #b>) -> f32
      %y = "tilegpu.local_load"(%buf) : (!tilegpu.memdesc<tensor<16x16xf32>>) -> tensor<16x16xf32>
    }
    return
  }
}
