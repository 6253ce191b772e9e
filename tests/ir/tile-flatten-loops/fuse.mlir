// RUN: tilec-opt %s --split-input-file -p tile-flatten-loops | FileCheck %s

// A tile loop marked flatten (tl.range(..., flatten=True)) and its one inner loop become
// one loop over n_outer * n_inner steps (i64), carrying the inner value, the tile's own
// values (what the outer body computes from the tile alone, here x) and both induction
// variables. The first tile's values are computed before the loop; the next tile's in a
// pure scf.if on a tile's last step (tilegpu-pipeline clones it for the steps it issues
// ahead). The inner value starts again from its initial value when k is at its start;
// the epilogue runs in an scf.if on a tile's last step. Where the inner loop has no
// step, the outer loop runs with the inner loop's initial value as its result.

// CHECK-LABEL: func.func @nest
// CHECK: %[[RUNS:.+]] = arith.cmpi sgt, %{{.+}}, %{{.+}} : i64
// CHECK: scf.if %[[RUNS]] {
// CHECK: %[[X0:.+]] = arith.sitofp %[[LB:.+]] : i32 to f32
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[X0]], %[[X:.+]] = %[[X0]], %[[T:.+]] = %[[LB]], %[[K:.+]] = %{{.+}}) -> (f32, f32, i32, i32) : i64 {
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[K]], %{{.+}} : i32
// CHECK: %[[FRESH:.+]] = arith.select %[[FIRST]], %[[X]], %[[A]] : f32
// CHECK: %[[S:.+]] = arith.addf %[[FRESH]], %{{.+}} : f32
// CHECK: %[[NEXT:.+]] = arith.addi %[[K]], %{{.+}} : i32
// CHECK: %[[LAST:.+]] = arith.cmpi sge, %[[NEXT]], %{{.+}} : i32
// CHECK: scf.if %[[LAST]] {
// CHECK: "tile.store"(%{{.+}}, %[[S]])
// CHECK: %[[XN:.+]] = scf.if %[[LAST]] -> (f32) {
// CHECK: %[[TN:.+]] = arith.addi %[[T]], %{{.+}} : i32
// CHECK: %[[XT:.+]] = arith.sitofp %[[TN]] : i32 to f32
// CHECK: scf.yield %[[XT]] : f32
// CHECK: } else {
// CHECK: scf.yield %[[X]] : f32
// CHECK: scf.yield %[[S]], %[[XN]], %{{.+}}, %{{.+}} : f32, f32, i32, i32
// CHECK: } else {
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: "tile.store"
// CHECK: return
module {
  func.func @nest(%p: !tile.ptr<f32>, %n: i32, %m: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %t = %c0 to %m step %c1 : i32 {
      %x = arith.sitofp %t : i32 to f32
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) : i32 {
        %kf = arith.sitofp %k : i32 to f32
        %s = arith.addf %a, %kf : f32
        scf.yield %s : f32
      }
      %ptr = "tile.addptr"(%p, %t) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      "tile.store"(%ptr, %r) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    } {tile.flatten}
    return
  }
}

// -----

// Two inner loops: left alone.
// CHECK-LABEL: func.func @two_inner
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: } {tile.flatten}
module {
  func.func @two_inner(%p: !tile.ptr<f32>, %n: i32, %m: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant 0.0 : f32
    scf.for %t = %c0 to %m step %c1 : i32 {
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) : i32 {
        %kf = arith.sitofp %k : i32 to f32
        %s = arith.addf %a, %kf : f32
        scf.yield %s : f32
      }
      %r2 = scf.for %k = %c0 to %n step %c1 iter_args(%a = %r) -> (f32) : i32 {
        %s = arith.addf %a, %a : f32
        scf.yield %s : f32
      }
      %ptr = "tile.addptr"(%p, %t) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      "tile.store"(%ptr, %r2) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    } {tile.flatten}
    return
  }
}

// -----

// An outer carried value read before the inner loop (here the inner loop's initial
// value): the copy made for the first tile, before the loop, reads the outer loop's
// initial value; inside, the value is computed every step from the carried one.
// CHECK-LABEL: func.func @outer_carried_in_prologue
// CHECK: %[[INIT:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: scf.if
// CHECK: %[[X0:.+]] = arith.addf %[[INIT]], %[[INIT]] : f32
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[C:.+]] = %[[INIT]], %[[A:.+]] = %[[X0]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (f32, f32, i32, i32) : i64 {
// CHECK: %[[X:.+]] = arith.addf %[[C]], %[[C]] : f32
// CHECK: arith.select %{{.+}}, %[[X]], %[[A]] : f32
module {
  func.func @outer_carried_in_prologue(%p: !tile.ptr<f32>, %n: i32, %m: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %one = arith.constant 1.0 : f32
    %done = scf.for %t = %c0 to %m step %c1 iter_args(%c = %one) -> (f32) : i32 {
      %x = arith.addf %c, %c : f32
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) : i32 {
        %kf = arith.sitofp %k : i32 to f32
        %s = arith.addf %a, %kf : f32
        scf.yield %s : f32
      }
      %ptr = "tile.addptr"(%p, %t) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      "tile.store"(%ptr, %r) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
      scf.yield %r : f32
    } {tile.flatten}
    "tile.store"(%p, %done) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    return
  }
}

// -----

// warp_specialize=True marks its loop with tile.warp_specialize beside tile.flatten: the
// fused loop keeps it (tilegpu-pipeline reads it there), the outer loop run where the
// inner one has no step drops both.
// CHECK-LABEL: func.func @specialised
// CHECK: scf.if
// CHECK: scf.for
// CHECK: } {tile.warp_specialize}
// CHECK: } else {
// CHECK: scf.for
// CHECK-NOT: tile.warp_specialize
// CHECK: return
module {
  func.func @specialised(%p: !tile.ptr<f32>, %n: i32, %m: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %t = %c0 to %m step %c1 : i32 {
      %x = arith.sitofp %t : i32 to f32
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) : i32 {
        %kf = arith.sitofp %k : i32 to f32
        %s = arith.addf %a, %kf : f32
        scf.yield %s : f32
      }
      %ptr = "tile.addptr"(%p, %t) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      "tile.store"(%ptr, %r) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    } {tile.flatten, tile.warp_specialize}
    return
  }
}
