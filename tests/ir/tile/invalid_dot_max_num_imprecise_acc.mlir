// RUN: not tilec-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// tile.dot's optional `max_num_imprecise_acc` (not declared in IRDL, which has no
// optional attributes) is checked by the dot's verifier (tilec/dialects/tile.py).

func.func @negative_limit(%a: tensor<64x64xf8E5M2>, %b: tensor<64x64xf8E5M2>, %acc: tensor<64x64xf32>) {
  // CHECK: 'tile.dot' op max_num_imprecise_acc must be a non-negative integer, got -1 : i32
  %0 = "tile.dot"(%a, %b, %acc) {input_precision = "ieee", max_num_imprecise_acc = -1 : i32} : (tensor<64x64xf8E5M2>, tensor<64x64xf8E5M2>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return
}

// -----

func.func @not_an_integer(%a: tensor<64x64xf8E5M2>, %b: tensor<64x64xf8E5M2>, %acc: tensor<64x64xf32>) {
  // CHECK: 'tile.dot' op max_num_imprecise_acc must be a non-negative integer, got "32"
  %0 = "tile.dot"(%a, %b, %acc) {input_precision = "ieee", max_num_imprecise_acc = "32"} : (tensor<64x64xf8E5M2>, tensor<64x64xf8E5M2>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return
}
