// RUN: tilec-opt %s -p tile-combine | FileCheck %s

// In a loop, `ptr + (inv + var)` becomes `(ptr + inv) + var` when the pointer and one
// side of the sum do not change in the loop (the invariant side computed in the loop
// from values defined outside it counts too), whichever side it is on.

// CHECK-LABEL: func.func @split_both_orders
// CHECK: scf.for %[[K:.*]] = %c0_i32 to %arg3 step %c1_i32
// CHECK: %[[INV:.*]] = arith.muli %arg1, %[[STRIDE:.*]] : tensor<32xi32>
// CHECK: %[[VAR:.*]] = arith.addi %[[KS:.*]], %arg2 : tensor<32xi32>
// CHECK-NOT: arith.addi %[[INV]]
// CHECK: %[[BASE:.*]] = "tile.addptr"(%[[P:.*]], %[[INV]])
// CHECK-NEXT: %[[A:.*]] = "tile.addptr"(%[[BASE]], %[[VAR]])
// CHECK: %[[BASE2:.*]] = "tile.addptr"(%[[P]], %[[INV]])
// CHECK-NEXT: %[[B:.*]] = "tile.addptr"(%[[BASE2]], %[[VAR]])
// CHECK: "tile.load"(%[[A]])
// CHECK: "tile.load"(%[[B]])
func.func @split_both_orders(%x: !tile.ptr<f32>, %rows: tensor<32xi32>, %cols: tensor<32xi32>, %n: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  %stride = arith.constant dense<64> : tensor<32xi32>
  %p = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) : i32 {
    %inv = arith.muli %rows, %stride : tensor<32xi32>
    %ks = "tile.splat"(%k) : (i32) -> tensor<32xi32>
    %var = arith.addi %ks, %cols : tensor<32xi32>
    %o1 = arith.addi %inv, %var : tensor<32xi32>
    %o2 = arith.addi %var, %inv : tensor<32xi32>
    %a = "tile.addptr"(%p, %o1) : (tensor<32x!tile.ptr<f32>>, tensor<32xi32>) -> tensor<32x!tile.ptr<f32>>
    %b = "tile.addptr"(%p, %o2) : (tensor<32x!tile.ptr<f32>>, tensor<32xi32>) -> tensor<32x!tile.ptr<f32>>
    %va = "tile.load"(%a) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x!tile.ptr<f32>>) -> tensor<32xf32>
    %vb = "tile.load"(%b) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x!tile.ptr<f32>>) -> tensor<32xf32>
    %s = arith.addf %va, %vb : tensor<32xf32>
    %t = "tile.reduce"(%s) ({
    ^bb0(%l: f32, %m: f32):
      %u = arith.addf %l, %m : f32
      gpu.yield %u : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32xf32>) -> f32
    %next = arith.addf %acc, %t : f32
    scf.yield %next : f32
  }
  return %r : f32
}

// Left alone: both sides vary; the pointer varies (a carried block); outside any loop.
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.for
// CHECK: arith.muli
// CHECK-NEXT: %[[O:.*]] = arith.addi {{.*}} : tensor<32xi32>
// CHECK-NEXT: "tile.addptr"(%0, %[[O]])
// CHECK-NEXT: %[[O2:.*]] = arith.addi %arg1, {{.*}} : tensor<32xi32>
// CHECK-NEXT: "tile.addptr"(%arg6, %[[O2]])
// CHECK: %[[O3:.*]] = arith.addi %arg1, %arg2 : tensor<32xi32>
// CHECK-NEXT: "tile.addptr"(%1, %[[O3]])
func.func @left_alone(%x: !tile.ptr<f32>, %rows: tensor<32xi32>, %cols: tensor<32xi32>, %n: i32, %v: tensor<32xf32>) -> tensor<32x!tile.ptr<f32>> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %p = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%q = %p) -> (tensor<32x!tile.ptr<f32>>) : i32 {
    %ks = "tile.splat"(%k) : (i32) -> tensor<32xi32>
    %v1 = arith.addi %ks, %cols : tensor<32xi32>
    %v2 = arith.muli %ks, %rows : tensor<32xi32>
    %o = arith.addi %v1, %v2 : tensor<32xi32>
    %a = "tile.addptr"(%p, %o) : (tensor<32x!tile.ptr<f32>>, tensor<32xi32>) -> tensor<32x!tile.ptr<f32>>
    %o2 = arith.addi %rows, %v1 : tensor<32xi32>
    %b = "tile.addptr"(%q, %o2) : (tensor<32x!tile.ptr<f32>>, tensor<32xi32>) -> tensor<32x!tile.ptr<f32>>
    "tile.store"(%a, %v) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<f32>>, tensor<32xf32>) -> ()
    scf.yield %b : tensor<32x!tile.ptr<f32>>
  }
  %o3 = arith.addi %rows, %cols : tensor<32xi32>
  %c = "tile.addptr"(%r, %o3) : (tensor<32x!tile.ptr<f32>>, tensor<32xi32>) -> tensor<32x!tile.ptr<f32>>
  return %c : tensor<32x!tile.ptr<f32>>
}

// 64-bit offsets: split when one pointer reads the sum (it saves an add per element),
// kept whole when two do (a column scan's `x_ptr + offs` and `out_ptr + offs`): the
// split would hold an invariant block of pointers per pointer instead of one block of
// offsets for both. 32-bit offsets shared by two pointers are still split (each saves
// its per-element widening).
// CHECK-LABEL: func.func @wide_offsets
// CHECK: scf.for
// CHECK: %[[SHARED:.*]] = arith.addi %[[ROWS:.*]], %[[COLS:.*]] : tensor<32xi64>
// CHECK: "tile.addptr"(%{{.*}}, %[[SHARED]])
// CHECK: "tile.addptr"(%{{.*}}, %[[SHARED]])
// CHECK: %[[BASE:.*]] = "tile.addptr"(%{{.*}}, %[[COLS]]) : (tensor<32x!tile.ptr<f32>>, tensor<32xi64>)
// CHECK-NEXT: "tile.addptr"(%[[BASE]], %[[ROWS]])
// CHECK-NOT: arith.addi {{.*}} : tensor<32xi32>
// CHECK: return
func.func @wide_offsets(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %z: !tile.ptr<f32>, %cols: tensor<32xi64>,
                        %cols32: tensor<32xi32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %px = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>>
  %py = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>>
  %pz = "tile.splat"(%z) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>>
  scf.for %k = %c0 to %n step %c1 : i32 {
    %k64 = arith.extsi %k : i32 to i64
    %rows = "tile.splat"(%k64) : (i64) -> tensor<32xi64>
    %shared = arith.addi %rows, %cols : tensor<32xi64>
    %a = "tile.addptr"(%px, %shared) : (tensor<32x!tile.ptr<f32>>, tensor<32xi64>) -> tensor<32x!tile.ptr<f32>>
    %b = "tile.addptr"(%py, %shared) : (tensor<32x!tile.ptr<f32>>, tensor<32xi64>) -> tensor<32x!tile.ptr<f32>>
    %single = arith.addi %cols, %rows : tensor<32xi64>
    %c = "tile.addptr"(%pz, %single) : (tensor<32x!tile.ptr<f32>>, tensor<32xi64>) -> tensor<32x!tile.ptr<f32>>
    %ks = "tile.splat"(%k) : (i32) -> tensor<32xi32>
    %narrow = arith.addi %ks, %cols32 : tensor<32xi32>
    %d = "tile.addptr"(%px, %narrow) : (tensor<32x!tile.ptr<f32>>, tensor<32xi32>) -> tensor<32x!tile.ptr<f32>>
    %e = "tile.addptr"(%py, %narrow) : (tensor<32x!tile.ptr<f32>>, tensor<32xi32>) -> tensor<32x!tile.ptr<f32>>
    %va = "tile.load"(%a) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<32x!tile.ptr<f32>>) -> tensor<32xf32>
    "tile.store"(%b, %va) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<f32>>, tensor<32xf32>) -> ()
    "tile.store"(%c, %va) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<f32>>, tensor<32xf32>) -> ()
    "tile.store"(%d, %va) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<f32>>, tensor<32xf32>) -> ()
    "tile.store"(%e, %va) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<f32>>, tensor<32xf32>) -> ()
  }
  return
}

// A 64-bit sum one pointer reads and a mask compares: the sum is computed anyway, so it
// stays whole.
// CHECK-LABEL: func.func @wide_offsets_and_a_mask
// CHECK: scf.for
// CHECK: %[[SUM:.*]] = arith.addi %[[ROWS:.*]], %[[COLS:.*]] : tensor<32xi64>
// CHECK: arith.cmpi slt, %[[SUM]]
// CHECK-NEXT: "tile.addptr"(%{{.*}}, %[[SUM]])
func.func @wide_offsets_and_a_mask(%x: !tile.ptr<f32>, %cols: tensor<32xi64>, %n: i32, %limit: tensor<32xi64>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %px = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<32x!tile.ptr<f32>>
  scf.for %k = %c0 to %n step %c1 : i32 {
    %k64 = arith.extsi %k : i32 to i64
    %rows = "tile.splat"(%k64) : (i64) -> tensor<32xi64>
    %sum = arith.addi %rows, %cols : tensor<32xi64>
    %mask = arith.cmpi slt, %sum, %limit : tensor<32xi64>
    %a = "tile.addptr"(%px, %sum) : (tensor<32x!tile.ptr<f32>>, tensor<32xi64>) -> tensor<32x!tile.ptr<f32>>
    %va = "tile.load"(%a, %mask) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>, volatile = false} : (tensor<32x!tile.ptr<f32>>, tensor<32xi1>) -> tensor<32xf32>
    "tile.store"(%a, %va, %mask) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<32x!tile.ptr<f32>>, tensor<32xf32>, tensor<32xi1>) -> ()
  }
  return
}
