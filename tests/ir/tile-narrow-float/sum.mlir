// RUN: tilec-opt %s -p tile-narrow-float,tile-dce | FileCheck %s

// An fp16 or bf16 sum taken in fp32 and rounded back is taken in the narrow type (the
// same bits), so it lowers to add.f16x2 instead of two conversions up, an fp32 add and
// one down.

// CHECK-LABEL: func.func @sum
// CHECK-NEXT: %[[S:.*]] = arith.addf %arg0, %arg1 : tensor<128xf16>
// CHECK-NEXT: %[[D:.*]] = arith.subf %arg2, %arg3 : tensor<128xbf16>
// CHECK-NEXT: return %[[S]], %[[D]]
func.func @sum(%x: tensor<128xf16>, %y: tensor<128xf16>, %u: tensor<128xbf16>, %v: tensor<128xbf16>) -> (tensor<128xf16>, tensor<128xbf16>) {
  %xw = arith.extf %x : tensor<128xf16> to tensor<128xf32>
  %yw = arith.extf %y : tensor<128xf16> to tensor<128xf32>
  %s = arith.addf %xw, %yw : tensor<128xf32>
  %t = arith.truncf %s : tensor<128xf32> to tensor<128xf16>
  %uw = arith.extf %u : tensor<128xbf16> to tensor<128xf32>
  %vw = arith.extf %v : tensor<128xbf16> to tensor<128xf32>
  %d = arith.subf %uw, %vw : tensor<128xf32>
  %e = arith.truncf %d : tensor<128xf32> to tensor<128xbf16>
  return %t, %e : tensor<128xf16>, tensor<128xbf16>
}

// Tutorial 05's partial db: `dy` widened in one branch, `dy + load(DB)` in the other,
// stored as fp16 after the if. The truncation moves into the branches.
// CHECK-LABEL: func.func @through_if
// CHECK: %[[R:.*]] = scf.if %arg0 -> (tensor<128xf16>) {
// CHECK-NEXT: scf.yield %arg1 : tensor<128xf16>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[S:.*]] = arith.addf %arg1, %arg2 : tensor<128xf16>
// CHECK-NEXT: scf.yield %[[S]] : tensor<128xf16>
// CHECK: return %[[R]], %{{.*}} : tensor<128xf16>, tensor<128xf32>
func.func @through_if(%c: i1, %dy: tensor<128xf16>, %db: tensor<128xf16>) -> (tensor<128xf16>, tensor<128xf32>) {
  %dyw = arith.extf %dy : tensor<128xf16> to tensor<128xf32>
  %r = scf.if %c -> (tensor<128xf32>) {
    scf.yield %dyw : tensor<128xf32>
  } else {
    %dbw = arith.extf %db : tensor<128xf16> to tensor<128xf32>
    %s = arith.addf %dyw, %dbw : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  %t = arith.truncf %r : tensor<128xf32> to tensor<128xf16>
  %other = arith.mulf %dyw, %dyw : tensor<128xf32>
  return %t, %other : tensor<128xf16>, tensor<128xf32>
}

// Left alone: a product (contraction with a later add would change its rounding), an
// fp32 operand that is no widened fp16, a sum used elsewhere too, an if result read by
// another op as well, and rounding toward zero.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: arith.truncf
// CHECK-NOT: arith.truncf
func.func @kept(%c: i1, %x: tensor<128xf16>, %y: tensor<128xf16>, %w: tensor<128xf32>) -> (tensor<128xf16>, tensor<128xf16>, tensor<128xf16>, tensor<128xf32>, tensor<128xf16>, tensor<128xf32>, tensor<128xf16>) {
  %xw = arith.extf %x : tensor<128xf16> to tensor<128xf32>
  %yw = arith.extf %y : tensor<128xf16> to tensor<128xf32>
  %p = arith.mulf %xw, %yw : tensor<128xf32>
  %tp = arith.truncf %p : tensor<128xf32> to tensor<128xf16>
  %a = arith.addf %xw, %w : tensor<128xf32>
  %ta = arith.truncf %a : tensor<128xf32> to tensor<128xf16>
  %s = arith.addf %xw, %yw : tensor<128xf32>
  %ts = arith.truncf %s : tensor<128xf32> to tensor<128xf16>
  %r = scf.if %c -> (tensor<128xf32>) {
    scf.yield %xw : tensor<128xf32>
  } else {
    scf.yield %yw : tensor<128xf32>
  }
  %tr = arith.truncf %r : tensor<128xf32> to tensor<128xf16>
  %z = arith.addf %xw, %yw : tensor<128xf32>
  %tz = arith.truncf %z {roundingmode = 3 : i32} : tensor<128xf32> to tensor<128xf16>
  return %tp, %ta, %ts, %s, %tr, %r, %tz : tensor<128xf16>, tensor<128xf16>, tensor<128xf16>, tensor<128xf32>, tensor<128xf16>, tensor<128xf32>, tensor<128xf16>
}
