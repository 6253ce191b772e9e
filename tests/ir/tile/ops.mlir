// RUN: tilec-opt %s | FileCheck %s

// Every tile op round-trips in the generic syntax the bindings print.

// CHECK-LABEL: func.func @program_ids
// CHECK-SAME: (%{{.*}}: !tile.ptr<f32>, %{{.*}}: !tile.ptr<!tile.ptr<f16>>, %{{.*}}: !tile.ptr<i1>)
// CHECK-NEXT: "tile.get_program_id"() {axis = 0 : i32} : () -> i32
// CHECK-NEXT: "tile.get_program_id"() {axis = 2 : i32} : () -> i32
// CHECK-NEXT: "tile.get_num_programs"() {axis = 1 : i32} : () -> i32
func.func @program_ids(%p: !tile.ptr<f32>, %pp: !tile.ptr<!tile.ptr<f16>>, %pb: !tile.ptr<i1>) {
  %0 = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %1 = "tile.get_program_id"() {axis = 2 : i32} : () -> i32
  %2 = "tile.get_num_programs"() {axis = 1 : i32} : () -> i32
  return
}

// CHECK-LABEL: func.func @shapes
// CHECK: [[R:%.*]] = "tile.make_range"() {end = 132 : i32, start = 4 : i32} : () -> tensor<128xi32>
// CHECK: [[S:%.*]] = "tile.splat"(%arg0) : (f32) -> tensor<128xf32>
// CHECK: [[E:%.*]] = "tile.expand_dims"([[S]]) {axis = 0 : i32} : (tensor<128xf32>) -> tensor<1x128xf32>
// CHECK: "tile.broadcast"([[E]]) : (tensor<1x128xf32>) -> tensor<64x128xf32>
// CHECK: "tile.expand_dims"([[R]]) {axis = 1 : i32} : (tensor<128xi32>) -> tensor<128x1xi32>
func.func @shapes(%x: f32) {
  %r = "tile.make_range"() {start = 4 : i32, end = 132 : i32} : () -> tensor<128xi32>
  %s = "tile.splat"(%x) : (f32) -> tensor<128xf32>
  %e = "tile.expand_dims"(%s) {axis = 0 : i32} : (tensor<128xf32>) -> tensor<1x128xf32>
  %b = "tile.broadcast"(%e) : (tensor<1x128xf32>) -> tensor<64x128xf32>
  %c = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<128xi32>) -> tensor<128x1xi32>
  return
}

// CHECK-LABEL: func.func @pointers
// CHECK: [[Q:%.*]] = "tile.addptr"(%arg0, %arg1) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
// CHECK: [[I:%.*]] = "tile.ptr_to_int"([[Q]]) : (!tile.ptr<f32>) -> i64
// CHECK: [[P:%.*]] = "tile.int_to_ptr"([[I]]) : (i64) -> !tile.ptr<f32>
// CHECK: "tile.bitcast"([[P]]) : (!tile.ptr<f32>) -> !tile.ptr<i32>
// CHECK: [[T:%.*]] = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<16x!tile.ptr<f32>>
// CHECK: "tile.addptr"([[T]], %{{.*}}) : (tensor<16x!tile.ptr<f32>>, tensor<16xi64>) -> tensor<16x!tile.ptr<f32>>
func.func @pointers(%p: !tile.ptr<f32>, %o: i32, %offs: tensor<16xi64>) {
  %q = "tile.addptr"(%p, %o) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
  %i = "tile.ptr_to_int"(%q) : (!tile.ptr<f32>) -> i64
  %back = "tile.int_to_ptr"(%i) : (i64) -> !tile.ptr<f32>
  %cast = "tile.bitcast"(%back) : (!tile.ptr<f32>) -> !tile.ptr<i32>
  %t = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<16x!tile.ptr<f32>>
  %u = "tile.addptr"(%t, %offs) : (tensor<16x!tile.ptr<f32>>, tensor<16xi64>) -> tensor<16x!tile.ptr<f32>>
  return
}

// Optional operands keep their operandSegmentSizes; attributes print sorted.
// CHECK-LABEL: func.func @memory
// CHECK: "tile.load"(%arg0) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<16x!tile.ptr<f32>>) -> tensor<16xf32>
// CHECK: "tile.load"(%arg0, %arg1) {cache = ".cg", evict = "evict_last", operandSegmentSizes = array<i32: 1, 1, 0>, volatile = true}
// CHECK: [[V:%.*]] = "tile.load"(%arg0, %arg1, %arg2) {{{.*}}operandSegmentSizes = array<i32: 1, 1, 1>{{.*}}} : (tensor<16x!tile.ptr<f32>>, tensor<16xi1>, tensor<16xf32>) -> tensor<16xf32>
// CHECK: "tile.store"(%arg0, [[V]]) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>) -> ()
// CHECK: "tile.store"(%arg0, [[V]], %arg1) {cache = ".cs", evict = "evict_first", operandSegmentSizes = array<i32: 1, 1, 1>}
// CHECK: "tile.load"(%arg3) {{.*}} : (!tile.ptr<i1>) -> i1
func.func @memory(%ptrs: tensor<16x!tile.ptr<f32>>, %mask: tensor<16xi1>, %other: tensor<16xf32>, %sp: !tile.ptr<i1>) {
  %a = "tile.load"(%ptrs) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!tile.ptr<f32>>) -> tensor<16xf32>
  %b = "tile.load"(%ptrs, %mask) {cache = ".cg", evict = "evict_last", volatile = true, operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<16xi1>) -> tensor<16xf32>
  %c = "tile.load"(%ptrs, %mask, %other) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x!tile.ptr<f32>>, tensor<16xi1>, tensor<16xf32>) -> tensor<16xf32>
  "tile.store"(%ptrs, %c) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>) -> ()
  "tile.store"(%ptrs, %c, %mask) {cache = ".cs", evict = "evict_first", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> ()
  %s = "tile.load"(%sp) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (!tile.ptr<i1>) -> i1
  return
}

// A reduction to a scalar, and an argmax-style reduction of two operands.
// CHECK-LABEL: func.func @reductions
// CHECK: "tile.reduce"(%arg0) ({
// CHECK-NEXT: ^bb0([[A:%.*]]: f32, [[B:%.*]]: f32):
// CHECK-NEXT: [[M:%.*]] = arith.maxnumf [[A]], [[B]] : f32
// CHECK-NEXT: gpu.yield [[M]] : f32
// CHECK-NEXT: }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32>) -> f32
// CHECK: "tile.reduce"(%arg1, %arg2) ({
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: i32, %{{.*}}: f32, %{{.*}}: i32):
// CHECK: gpu.yield %{{.*}}, %{{.*}} : f32, i32
// CHECK-NEXT: }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<8x32xf32>, tensor<8x32xi32>) -> (tensor<8xf32>, tensor<8xi32>)
func.func @reductions(%x: tensor<128xf32>, %v: tensor<8x32xf32>, %i: tensor<8x32xi32>) {
  %m = "tile.reduce"(%x) ({
  ^bb0(%a: f32, %b: f32):
    %c = arith.maxnumf %a, %b : f32
    gpu.yield %c : f32
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128xf32>) -> f32
  %r:2 = "tile.reduce"(%v, %i) ({
  ^bb0(%va: f32, %ia: i32, %vb: f32, %ib: i32):
    %gt = arith.cmpf ogt, %va, %vb : f32
    %vm = arith.select %gt, %va, %vb : f32
    %im = arith.select %gt, %ia, %ib : i32
    gpu.yield %vm, %im : f32, i32
  }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<8x32xf32>, tensor<8x32xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return
}
