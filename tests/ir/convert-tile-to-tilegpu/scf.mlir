// RUN: tilec-opt %s -p 'convert-tile-to-tilegpu{num-warps=4}' | FileCheck %s

// Loop-carried tensors keep the layout they enter the loop with (the yielded value is
// converted to it); `if` results take the layout of the `then` branch.

// CHECK-DAG: #[[B:blocked[0-9]+]] = #tilegpu.blocked<{order = array<i32: 0>, {{.*}}warpsPerCTA = array<i32: 4>}>
// CHECK-DAG: #[[S:slice[0-9]+]] = #tilegpu.slice<{dim = 1 : i32, {{.*}}}>

// CHECK-LABEL: func.func @loop
// CHECK: [[INIT:%.*]] = "tile.splat"(%{{.*}}) : (f32) -> tensor<128xf32, #[[B]]>
// CHECK: [[RES:%.*]] = scf.for [[IV:%.*]] = {{.*}} iter_args([[ACC:%.*]] = [[INIT]]) -> (tensor<128xf32, #[[B]]>)
// CHECK: [[V:%.*]] = "tile.load"({{.*}}) -> tensor<128xf32, #[[B]]>
// CHECK-NEXT: [[SUM:%.*]] = arith.addf [[ACC]], [[V]] : tensor<128xf32, #[[B]]>
// CHECK-NEXT: scf.yield [[SUM]] : tensor<128xf32, #[[B]]>
// CHECK: "tile.store"(%{{.*}}, [[RES]])
func.func @loop(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %offs = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32>
  %init = "tile.splat"(%zero) : (f32) -> tensor<128xf32>
  %res = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<128xf32>) : i32 {
    %base = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>>
    %ptrs = "tile.addptr"(%base, %offs) : (tensor<128x!tile.ptr<f32>>, tensor<128xi32>) -> tensor<128x!tile.ptr<f32>>
    %v = "tile.load"(%ptrs) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<128x!tile.ptr<f32>>) -> tensor<128xf32>
    %sum = arith.addf %acc, %v : tensor<128xf32>
    scf.yield %sum : tensor<128xf32>
  }
  %obase = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>>
  %optrs = "tile.addptr"(%obase, %offs) : (tensor<128x!tile.ptr<f32>>, tensor<128xi32>) -> tensor<128x!tile.ptr<f32>>
  "tile.store"(%optrs, %res) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<f32>>, tensor<128xf32>) -> ()
  return
}

// The body computes the next value in another layout: it is converted before the yield.
// CHECK-LABEL: func.func @loop_converts_yield
// CHECK: scf.for {{.*}} iter_args([[ACC:%.*]] = %{{.*}}) -> (tensor<128xf32, #[[B]]>)
// CHECK: [[ROWSUM:%.*]] = "tile.reduce"
// CHECK: -> tensor<128xf32, #[[S]]>
// CHECK-NEXT: [[ACC_S:%.*]] = "tilegpu.convert_layout"([[ACC]]) : (tensor<128xf32, #[[B]]>) -> tensor<128xf32, #[[S]]>
// CHECK-NEXT: [[NEXT:%.*]] = arith.addf [[ROWSUM]], [[ACC_S]] : tensor<128xf32, #[[S]]>
// CHECK-NEXT: [[CVT:%.*]] = "tilegpu.convert_layout"([[NEXT]]) : (tensor<128xf32, #[[S]]>) -> tensor<128xf32, #[[B]]>
// CHECK-NEXT: scf.yield [[CVT]] : tensor<128xf32, #[[B]]>
func.func @loop_converts_yield(%v: f32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %init = "tile.splat"(%v) : (f32) -> tensor<128xf32>
  %res = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<128xf32>) : i32 {
    %tile = "tile.splat"(%v) : (f32) -> tensor<128x4xf32>
    %rowsum = "tile.reduce"(%tile) ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gpu.yield %c : f32
    }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128x4xf32>) -> tensor<128xf32>
    %next = arith.addf %rowsum, %acc : tensor<128xf32>
    scf.yield %next : tensor<128xf32>
  }
  return
}

// CHECK-LABEL: func.func @if_results
// CHECK: [[R:%.*]] = scf.if %{{.*}} -> (tensor<128xf32, #[[S]]>) {
// CHECK: [[THEN:%.*]] = "tile.reduce"
// CHECK: scf.yield [[THEN]] : tensor<128xf32, #[[S]]>
// CHECK-NEXT: } else {
// CHECK-NEXT: [[ELSE:%.*]] = "tile.splat"(%{{.*}}) : (f32) -> tensor<128xf32, #[[B]]>
// CHECK-NEXT: [[CVT:%.*]] = "tilegpu.convert_layout"([[ELSE]]) : (tensor<128xf32, #[[B]]>) -> tensor<128xf32, #[[S]]>
// CHECK-NEXT: scf.yield [[CVT]] : tensor<128xf32, #[[S]]>
// CHECK: arith.mulf [[R]], [[R]] : tensor<128xf32, #[[S]]>
func.func @if_results(%v: f32, %cond: i1) {
  %r = scf.if %cond -> (tensor<128xf32>) {
    %tile = "tile.splat"(%v) : (f32) -> tensor<128x4xf32>
    %rowsum = "tile.reduce"(%tile) ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gpu.yield %c : f32
    }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128x4xf32>) -> tensor<128xf32>
    scf.yield %rowsum : tensor<128xf32>
  } else {
    %s = "tile.splat"(%v) : (f32) -> tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  %sq = arith.mulf %r, %r : tensor<128xf32>
  return
}

// A while loop whose condition forwards fewer values than it carries (canonicalisation
// drops one only the condition reads): the `after` arguments and the results take the
// types of the forwarded values, not those of the inits.
// CHECK-LABEL: func.func @while_forwards_fewer
// CHECK: [[W:%.*]]:2 = scf.while ([[X:%.*]] = %{{.*}}, [[Y:%.*]] = %{{.*}}, [[IT:%.*]] = %{{.*}}) : (tensor<128xf32, #[[B]]>, f32, i32) -> (tensor<128xf32, #[[B]]>, i32)
// CHECK: scf.condition(%{{.*}}) [[X]], [[IT]] : tensor<128xf32, #[[B]]>, i32
// CHECK: ^bb0([[X2:%.*]]: tensor<128xf32, #[[B]]>, [[IT2:%.*]]: i32):
// CHECK: arith.addi [[IT2]], %{{.*}} : i32
func.func @while_forwards_fewer(%v: f32, %tol: f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %init = "tile.splat"(%v) : (f32) -> tensor<128xf32>
  %res:2 = scf.while (%x = %init, %y = %v, %it = %c0) : (tensor<128xf32>, f32, i32) -> (tensor<128xf32>, i32) {
    %go = arith.cmpf ogt, %y, %tol : f32
    scf.condition(%go) %x, %it : tensor<128xf32>, i32
  } do {
  ^bb0(%x2: tensor<128xf32>, %it2: i32):
    %half = arith.constant 5.000000e-01 : f32
    %h = "tile.splat"(%half) : (f32) -> tensor<128xf32>
    %next = arith.mulf %x2, %h : tensor<128xf32>
    %first = "tile.reduce"(%next) ({
    ^bb0(%a: f32, %b: f32):
      %m = arith.maximumf %a, %b : f32
      gpu.yield %m : f32
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32>) -> f32
    %inc = arith.addi %it2, %c1 : i32
    scf.yield %next, %first, %inc : tensor<128xf32>, f32, i32
  }
  return
}
