// RUN: tilec-opt %s -p tile-combine | FileCheck %s

// `acc += tl.dot(a, b, max_num_imprecise_acc=32)`: the folded dot keeps the limit on
// its fp8 products' imprecise sums.

// CHECK-LABEL: func.func @fold_keeps_the_limit
// CHECK: %[[D:.*]] = "tile.dot"(%arg0, %arg1, %arg2) {input_precision = "ieee", max_num_imprecise_acc = 32 : i32}
// CHECK-NOT: arith.addf
// CHECK: return %[[D]]
func.func @fold_keeps_the_limit(%a: tensor<64x64xf8E4M3FN>, %b: tensor<64x64xf8E4M3FN>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %p = "tile.dot"(%a, %b, %zero) {input_precision = "ieee", max_num_imprecise_acc = 32 : i32} : (tensor<64x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = arith.addf %acc, %p : tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @fold_without_a_limit
// CHECK: "tile.dot"(%arg0, %arg1, %arg2) {input_precision = "ieee"} :
func.func @fold_without_a_limit(%a: tensor<64x64xf8E4M3FN>, %b: tensor<64x64xf8E4M3FN>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %p = "tile.dot"(%a, %b, %zero) {input_precision = "ieee"} : (tensor<64x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = arith.addf %p, %acc : tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}
