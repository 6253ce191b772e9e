// RUN: tilec-opt %s -p tile-combine | FileCheck %s

// `acc += tl.dot(a, b)`: the addition of a product with a zero accumulator becomes the
// product's accumulator, whichever side of the addition the product is on, in a loop too.

// CHECK-LABEL: func.func @fold_both_orders
// CHECK: %[[D1:.*]] = "tile.dot"(%arg0, %arg1, %arg2) {input_precision = "tf32"}
// CHECK-NOT: arith.addf
// CHECK: %[[D2:.*]] = "tile.dot"(%arg0, %arg1, %[[D1]]) {input_precision = "ieee"}
// CHECK-NOT: arith.addf
// CHECK: return %[[D2]]
func.func @fold_both_orders(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %acc: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %p = "tile.dot"(%a, %b, %zero) {input_precision = "tf32"} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = arith.addf %acc, %p : tensor<16x16xf32>
  %q = "tile.dot"(%a, %b, %zero) {input_precision = "ieee"} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %t = arith.addf %q, %s : tensor<16x16xf32>
  return %t : tensor<16x16xf32>
}

// CHECK-LABEL: func.func @fold_in_a_loop
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %arg2)
// CHECK-NEXT: %[[D:.*]] = "tile.dot"(%arg0, %arg1, %[[ACC]])
// CHECK-NEXT: scf.yield %[[D]]
func.func @fold_in_a_loop(%a: tensor<16x16xi8>, %b: tensor<16x16xi8>, %init: tensor<16x16xi32>) -> tensor<16x16xi32> {
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<16x16xi32>) {
    %p = "tile.dot"(%a, %b, %zero) {input_precision = "ieee"} : (tensor<16x16xi8>, tensor<16x16xi8>, tensor<16x16xi32>) -> tensor<16x16xi32>
    %s = arith.addi %acc, %p : tensor<16x16xi32>
    scf.yield %s : tensor<16x16xi32>
  }
  return %r : tensor<16x16xi32>
}

// Not folded: the product has another use; its accumulator is not zero; it is added
// to itself.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: arith.addf
func.func @kept(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %acc: tensor<16x16xf32>, %row: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %p = "tile.dot"(%a, %b, %zero) {input_precision = "tf32"} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = arith.addf %acc, %p : tensor<16x16xf32>
  %q = "tile.dot"(%a, %b, %row) {input_precision = "tf32"} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %t = arith.addf %acc, %q : tensor<16x16xf32>
  %u = "tile.dot"(%a, %b, %zero) {input_precision = "tf32"} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v = arith.addf %u, %u : tensor<16x16xf32>
  return %s, %p, %t, %v : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}
