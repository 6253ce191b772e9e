// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// A loop-carried tensor of 4 elements per thread becomes 4 loop-carried f32 scalars;
// an `if` yielding a tensor yields its 4 elements.

#vec = #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>, threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>

// CHECK-LABEL: llvm.func @accumulate
// CHECK: [[ZERO:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK: [[LOOP:%[0-9]+]]:4 = scf.for [[I:%.*]] = %{{.*}} to %arg2 step %{{.*}} iter_args([[A0:%.*]] = [[ZERO]], [[A1:%.*]] = [[ZERO]], [[A2:%.*]] = [[ZERO]], [[A3:%.*]] = [[ZERO]]) -> (f32, f32, f32, f32) : i32 {
// CHECK: "ld.global.v4.b32 {$0, $1, $2, $3}, [$4];"
// CHECK: [[S0:%[0-9]+]] = arith.addf [[A0]], %{{[0-9]+}} fastmath<contract> : f32
// CHECK-NEXT: [[S1:%[0-9]+]] = arith.addf [[A1]], %{{[0-9]+}} fastmath<contract> : f32
// CHECK-NEXT: [[S2:%[0-9]+]] = arith.addf [[A2]], %{{[0-9]+}} fastmath<contract> : f32
// CHECK-NEXT: [[S3:%[0-9]+]] = arith.addf [[A3]], %{{[0-9]+}} fastmath<contract> : f32
// CHECK-NEXT: scf.yield [[S0]], [[S1]], [[S2]], [[S3]] : f32, f32, f32, f32
// CHECK: [[IF:%[0-9]+]]:4 = scf.if %{{[0-9]+}} -> (f32, f32, f32, f32) {
// CHECK-NEXT: [[M0:%[0-9]+]] = arith.mulf [[LOOP]]#0, %{{.*}} fastmath<contract> : f32
// CHECK-NEXT: [[M1:%[0-9]+]] = arith.mulf [[LOOP]]#1, %{{.*}} fastmath<contract> : f32
// CHECK-NEXT: [[M2:%[0-9]+]] = arith.mulf [[LOOP]]#2, %{{.*}} fastmath<contract> : f32
// CHECK-NEXT: [[M3:%[0-9]+]] = arith.mulf [[LOOP]]#3, %{{.*}} fastmath<contract> : f32
// CHECK-NEXT: scf.yield [[M0]], [[M1]], [[M2]], [[M3]] : f32, f32, f32, f32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield [[LOOP]]#0, [[LOOP]]#1, [[LOOP]]#2, [[LOOP]]#3 : f32, f32, f32, f32
// CHECK: llvm.bitcast [[IF]]#0 : f32 to i32
// CHECK: "st.global.v4.b32 [$0], {$1, $2, $3, $4};"
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @accumulate(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c512 = arith.constant 512 : i32
    %two = arith.constant 2.000000e+00 : f32
    %zero = arith.constant 0.000000e+00 : f32
    %offs = "tile.make_range"() {end = 512 : i32, start = 0 : i32} : () -> tensor<512xi32, #vec>
    %init = "tile.splat"(%zero) : (f32) -> tensor<512xf32, #vec>
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<512xf32, #vec>) : i32 {
      %start = arith.muli %i, %c512 : i32
      %base = "tile.addptr"(%x, %start) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      %bs = "tile.splat"(%base) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #vec>
      %ptrs = "tile.addptr"(%bs, %offs) : (tensor<512x!tile.ptr<f32>, #vec>, tensor<512xi32, #vec>) -> tensor<512x!tile.ptr<f32>, #vec>
      %v = "tile.load"(%ptrs) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<512x!tile.ptr<f32>, #vec>) -> tensor<512xf32, #vec>
      %next = arith.addf %acc, %v : tensor<512xf32, #vec>
      scf.yield %next : tensor<512xf32, #vec>
    }
    %big = arith.cmpi sgt, %n, %c3 : i32
    %res = scf.if %big -> (tensor<512xf32, #vec>) {
      %twos = "tile.splat"(%two) : (f32) -> tensor<512xf32, #vec>
      %doubled = arith.mulf %sum, %twos : tensor<512xf32, #vec>
      scf.yield %doubled : tensor<512xf32, #vec>
    } else {
      scf.yield %sum : tensor<512xf32, #vec>
    }
    %ob = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #vec>
    %op = "tile.addptr"(%ob, %offs) : (tensor<512x!tile.ptr<f32>, #vec>, tensor<512xi32, #vec>) -> tensor<512x!tile.ptr<f32>, #vec>
    "tile.store"(%op, %res) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<512x!tile.ptr<f32>, #vec>, tensor<512xf32, #vec>) -> ()
    return
  }
  // A while loop carrying a 4-element tensor, a scalar only the condition reads, and a
  // counter; the condition forwards the tensor and the counter: the `after` block and
  // the results are 4 + 1 scalars, the `before` block 4 + 1 + 1.
  // CHECK-LABEL: llvm.func @while_forwards_fewer
  // CHECK: [[W:%[0-9]+]]:5 = scf.while ([[B0:%.*]] = %{{.*}}, [[B1:%.*]] = %{{.*}}, [[B2:%.*]] = %{{.*}}, [[B3:%.*]] = %{{.*}}, [[BY:%.*]] = %{{.*}}, [[BI:%.*]] = %{{.*}}) : (f32, f32, f32, f32, f32, i32) -> (f32, f32, f32, f32, i32) {
  // CHECK: scf.condition(%{{[0-9]+}}) [[B0]], [[B1]], [[B2]], [[B3]], [[BI]] : f32, f32, f32, f32, i32
  // CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, [[AI:%.*]]: i32):
  // CHECK: arith.addi [[AI]], %{{.*}} : i32
  func.func @while_forwards_fewer(%v: f32, %tol: f32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = "tile.splat"(%v) : (f32) -> tensor<512xf32, #vec>
    %res:2 = scf.while (%x = %init, %y = %v, %it = %c0) : (tensor<512xf32, #vec>, f32, i32) -> (tensor<512xf32, #vec>, i32) {
      %go = arith.cmpf ogt, %y, %tol : f32
      scf.condition(%go) %x, %it : tensor<512xf32, #vec>, i32
    } do {
    ^bb0(%x2: tensor<512xf32, #vec>, %it2: i32):
      %half = arith.constant 5.000000e-01 : f32
      %h = "tile.splat"(%half) : (f32) -> tensor<512xf32, #vec>
      %next = arith.mulf %x2, %h : tensor<512xf32, #vec>
      %inc = arith.addi %it2, %c1 : i32
      scf.yield %next, %half, %inc : tensor<512xf32, #vec>, f32, i32
    }
    return
  }
}
