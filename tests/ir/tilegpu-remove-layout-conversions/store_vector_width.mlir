// RUN: tilec-opt %s -p tilegpu-remove-layout-conversions | FileCheck %s

// A matmul's epilogue: the accumulator comes out of the dot in the mma layout, is
// converted to the store's layout (one element a thread, a warp along one row) and
// truncated. The truncation runs in the mma layout either way (the conversion then
// moves half the bytes); whether the store takes the mma layout too depends on how wide
// the store's pointers and mask let a thread write.
//
// A thread of the mma layout holds columns 2t and 2t+1 of a row; its lanes 0-3 go on
// with columns 2-7. When two elements make one vector write (a row stride divisible by
// 16 here), four lanes write 16 contiguous bytes: the store takes the mma layout and
// the conversion disappears. When they cannot (an odd row stride: a row's start has no
// alignment; or a mask `cols < n` that may change at any column), each register is a
// scalar store of its own, a warp writing every other element of 8 rows: the
// conversion stays, and a warp writes 64 contiguous bytes of one row per instruction.

#store = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>
#dot_a = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>
#dot_b = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>
#rows = #tilegpu.slice<{dim = 1 : i32, parent = #store}>
#cols = #tilegpu.slice<{dim = 0 : i32, parent = #store}>

// CHECK-DAG: #[[STORE:blocked[0-9]*]] = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-DAG: #[[MMA:mma[0-9]*]] = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 4, 1>}>

// CHECK-LABEL: func.func @odd_stride
// CHECK: [[ACC:%.*]] = "tile.dot"
// CHECK: [[H:%.*]] = arith.truncf [[ACC]] : tensor<64x64xf32, #[[MMA]]> to tensor<64x64xf16, #[[MMA]]>
// CHECK: [[HS:%.*]] = "tilegpu.convert_layout"([[H]]) : (tensor<64x64xf16, #[[MMA]]>) -> tensor<64x64xf16, #[[STORE]]>
// CHECK: "tile.store"({{%[0-9]+}}, [[HS]]) {{.*}} : (tensor<64x64x!tile.ptr<f16>, #[[STORE]]>, tensor<64x64xf16, #[[STORE]]>) -> ()

// CHECK-LABEL: func.func @aligned_stride
// CHECK-NOT: tilegpu.convert_layout
// CHECK: [[ACC:%.*]] = "tile.dot"
// CHECK-NOT: tilegpu.convert_layout
// CHECK: [[H:%.*]] = arith.truncf [[ACC]] : tensor<64x64xf32, #[[MMA]]> to tensor<64x64xf16, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: "tile.store"({{%[0-9]+}}, [[H]]) {{.*}} : (tensor<64x64x!tile.ptr<f16>, #[[MMA]]>, tensor<64x64xf16, #[[MMA]]>) -> ()
// CHECK-NOT: tilegpu.convert_layout

// CHECK-LABEL: func.func @aligned_stride_column_mask
// CHECK: [[ACC:%.*]] = "tile.dot"
// CHECK: [[H:%.*]] = arith.truncf [[ACC]] : tensor<64x64xf32, #[[MMA]]> to tensor<64x64xf16, #[[MMA]]>
// CHECK: [[HS:%.*]] = "tilegpu.convert_layout"([[H]]) : (tensor<64x64xf16, #[[MMA]]>) -> tensor<64x64xf16, #[[STORE]]>
// CHECK: "tile.store"({{%[0-9]+}}, [[HS]], {{%[0-9]+}}) {{.*}} : (tensor<64x64x!tile.ptr<f16>, #[[STORE]]>, tensor<64x64xf16, #[[STORE]]>, tensor<64x64xi1, #[[STORE]]>) -> ()

// An fp32 accumulator stored through the same odd stride: each register of the pair
// is its own scalar write, a warp instruction touching 8 rows, so the conversion stays,
// as for 16-bit elements (fp8 2048x50257x4096 with an fp32 output measured 0.76x
// Triton's speed storing from the mma layout, 0.97-1.04x with the conversion).
// CHECK-LABEL: func.func @odd_stride_fp32
// CHECK: [[F:%.*]] = "tilegpu.convert_layout"({{%.*}}) : (tensor<64x64xf32, #[[MMA]]>) -> tensor<64x64xf32, #[[STORE]]>
// CHECK: "tile.store"({{%[0-9]+}}, [[F]]) {{.*}} : (tensor<64x64x!tile.ptr<f32>, #[[STORE]]>, tensor<64x64xf32, #[[STORE]]>) -> ()
// The same fp32 store where the dot's A operand is loaded through pointers with no
// alignment (an odd K stride: no 4-byte copy, so nothing streams and the kernel sits at
// the register limit): the register pair and its lanes fill whole 32-byte sectors, and
// the store takes the mma layout (the conversion's registers cost more there: fp8
// 4099^3 on an H200, 1.06x Triton without it, 0.94x with it).
// CHECK-LABEL: func.func @odd_stride_fp32_operand_in_registers
// CHECK-NOT: tilegpu.convert_layout{{.*}}-> tensor<64x64xf32
// CHECK: "tile.store"({{%[0-9]+}}, {{%[0-9]+}}) {{.*}} : (tensor<64x64x!tile.ptr<f32>, #[[MMA]]>, tensor<64x64xf32, #[[MMA]]>) -> ()
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @odd_stride(%a: tensor<64x32xf16, #dot_a>, %b: tensor<32x64xf16, #dot_b>, %zero: tensor<64x64xf32, #mma>, %c: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %stride: i32) {
    %acc = "tile.dot"(%a, %b, %zero) {input_precision = "ieee"} : (tensor<64x32xf16, #dot_a>, tensor<32x64xf16, #dot_b>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
    %acc_s = "tilegpu.convert_layout"(%acc) : (tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #store>
    %h = arith.truncf %acc_s : tensor<64x64xf32, #store> to tensor<64x64xf16, #store>
    %r = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #rows>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<64xi32, #rows>) -> tensor<64x1xi32, #store>
    %s = "tile.splat"(%stride) : (i32) -> tensor<64x1xi32, #store>
    %rs = arith.muli %r2, %s : tensor<64x1xi32, #store>
    %rsb = "tile.broadcast"(%rs) : (tensor<64x1xi32, #store>) -> tensor<64x64xi32, #store>
    %k = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #cols>
    %k2 = "tile.expand_dims"(%k) {axis = 0 : i32} : (tensor<64xi32, #cols>) -> tensor<1x64xi32, #store>
    %kb = "tile.broadcast"(%k2) : (tensor<1x64xi32, #store>) -> tensor<64x64xi32, #store>
    %offs = arith.addi %rsb, %kb : tensor<64x64xi32, #store>
    %base = "tile.splat"(%c) : (!tile.ptr<f16>) -> tensor<64x64x!tile.ptr<f16>, #store>
    %ptrs = "tile.addptr"(%base, %offs) : (tensor<64x64x!tile.ptr<f16>, #store>, tensor<64x64xi32, #store>) -> tensor<64x64x!tile.ptr<f16>, #store>
    "tile.store"(%ptrs, %h) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f16>, #store>, tensor<64x64xf16, #store>) -> ()
    return
  }

  func.func @aligned_stride(%a: tensor<64x32xf16, #dot_a>, %b: tensor<32x64xf16, #dot_b>, %zero: tensor<64x64xf32, #mma>, %c: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %stride: i32 {tile.divisibility = 16 : i32}) {
    %acc = "tile.dot"(%a, %b, %zero) {input_precision = "ieee"} : (tensor<64x32xf16, #dot_a>, tensor<32x64xf16, #dot_b>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
    %acc_s = "tilegpu.convert_layout"(%acc) : (tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #store>
    %h = arith.truncf %acc_s : tensor<64x64xf32, #store> to tensor<64x64xf16, #store>
    %r = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #rows>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<64xi32, #rows>) -> tensor<64x1xi32, #store>
    %s = "tile.splat"(%stride) : (i32) -> tensor<64x1xi32, #store>
    %rs = arith.muli %r2, %s : tensor<64x1xi32, #store>
    %rsb = "tile.broadcast"(%rs) : (tensor<64x1xi32, #store>) -> tensor<64x64xi32, #store>
    %k = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #cols>
    %k2 = "tile.expand_dims"(%k) {axis = 0 : i32} : (tensor<64xi32, #cols>) -> tensor<1x64xi32, #store>
    %kb = "tile.broadcast"(%k2) : (tensor<1x64xi32, #store>) -> tensor<64x64xi32, #store>
    %offs = arith.addi %rsb, %kb : tensor<64x64xi32, #store>
    %base = "tile.splat"(%c) : (!tile.ptr<f16>) -> tensor<64x64x!tile.ptr<f16>, #store>
    %ptrs = "tile.addptr"(%base, %offs) : (tensor<64x64x!tile.ptr<f16>, #store>, tensor<64x64xi32, #store>) -> tensor<64x64x!tile.ptr<f16>, #store>
    "tile.store"(%ptrs, %h) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f16>, #store>, tensor<64x64xf16, #store>) -> ()
    return
  }

  func.func @aligned_stride_column_mask(%a: tensor<64x32xf16, #dot_a>, %b: tensor<32x64xf16, #dot_b>, %zero: tensor<64x64xf32, #mma>, %c: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %stride: i32 {tile.divisibility = 16 : i32}, %n: i32) {
    %acc = "tile.dot"(%a, %b, %zero) {input_precision = "ieee"} : (tensor<64x32xf16, #dot_a>, tensor<32x64xf16, #dot_b>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
    %acc_s = "tilegpu.convert_layout"(%acc) : (tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #store>
    %h = arith.truncf %acc_s : tensor<64x64xf32, #store> to tensor<64x64xf16, #store>
    %r = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #rows>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<64xi32, #rows>) -> tensor<64x1xi32, #store>
    %s = "tile.splat"(%stride) : (i32) -> tensor<64x1xi32, #store>
    %rs = arith.muli %r2, %s : tensor<64x1xi32, #store>
    %rsb = "tile.broadcast"(%rs) : (tensor<64x1xi32, #store>) -> tensor<64x64xi32, #store>
    %k = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #cols>
    %k2 = "tile.expand_dims"(%k) {axis = 0 : i32} : (tensor<64xi32, #cols>) -> tensor<1x64xi32, #store>
    %kb = "tile.broadcast"(%k2) : (tensor<1x64xi32, #store>) -> tensor<64x64xi32, #store>
    %offs = arith.addi %rsb, %kb : tensor<64x64xi32, #store>
    %base = "tile.splat"(%c) : (!tile.ptr<f16>) -> tensor<64x64x!tile.ptr<f16>, #store>
    %ptrs = "tile.addptr"(%base, %offs) : (tensor<64x64x!tile.ptr<f16>, #store>, tensor<64x64xi32, #store>) -> tensor<64x64x!tile.ptr<f16>, #store>
    %ns = "tile.splat"(%n) : (i32) -> tensor<64x64xi32, #store>
    %mask = arith.cmpi slt, %kb, %ns : tensor<64x64xi32, #store>
    "tile.store"(%ptrs, %h, %mask) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<64x64x!tile.ptr<f16>, #store>, tensor<64x64xf16, #store>, tensor<64x64xi1, #store>) -> ()
    return
  }

  func.func @odd_stride_fp32(%a: tensor<64x32xf16, #dot_a>, %b: tensor<32x64xf16, #dot_b>, %zero: tensor<64x64xf32, #mma>, %c: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %stride: i32) {
    %acc = "tile.dot"(%a, %b, %zero) {input_precision = "ieee"} : (tensor<64x32xf16, #dot_a>, tensor<32x64xf16, #dot_b>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
    %acc_s = "tilegpu.convert_layout"(%acc) : (tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #store>
    %r = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #rows>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<64xi32, #rows>) -> tensor<64x1xi32, #store>
    %s = "tile.splat"(%stride) : (i32) -> tensor<64x1xi32, #store>
    %rs = arith.muli %r2, %s : tensor<64x1xi32, #store>
    %rsb = "tile.broadcast"(%rs) : (tensor<64x1xi32, #store>) -> tensor<64x64xi32, #store>
    %k = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #cols>
    %k2 = "tile.expand_dims"(%k) {axis = 0 : i32} : (tensor<64xi32, #cols>) -> tensor<1x64xi32, #store>
    %kb = "tile.broadcast"(%k2) : (tensor<1x64xi32, #store>) -> tensor<64x64xi32, #store>
    %offs = arith.addi %rsb, %kb : tensor<64x64xi32, #store>
    %base = "tile.splat"(%c) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #store>
    %ptrs = "tile.addptr"(%base, %offs) : (tensor<64x64x!tile.ptr<f32>, #store>, tensor<64x64xi32, #store>) -> tensor<64x64x!tile.ptr<f32>, #store>
    "tile.store"(%ptrs, %acc_s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #store>, tensor<64x64xf32, #store>) -> ()
    return
  }
  func.func @odd_stride_fp32_operand_in_registers(%pa: !tile.ptr<f16>, %sk: i32, %b: tensor<32x64xf16, #dot_b>, %zero: tensor<64x64xf32, #mma>, %c: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %stride: i32) {
    %ra = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #rows>
    %ra2 = "tile.expand_dims"(%ra) {axis = 1 : i32} : (tensor<64xi32, #rows>) -> tensor<64x1xi32, #store>
    %ska = "tile.splat"(%sk) : (i32) -> tensor<64x1xi32, #store>
    %rsa = arith.muli %ra2, %ska : tensor<64x1xi32, #store>
    %rsab = "tile.broadcast"(%rsa) : (tensor<64x1xi32, #store>) -> tensor<64x32xi32, #store>
    %ka = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #cols>
    %ka2 = "tile.expand_dims"(%ka) {axis = 0 : i32} : (tensor<32xi32, #cols>) -> tensor<1x32xi32, #store>
    %kab = "tile.broadcast"(%ka2) : (tensor<1x32xi32, #store>) -> tensor<64x32xi32, #store>
    %offa = arith.addi %rsab, %kab : tensor<64x32xi32, #store>
    %basea = "tile.splat"(%pa) : (!tile.ptr<f16>) -> tensor<64x32x!tile.ptr<f16>, #store>
    %ptra = "tile.addptr"(%basea, %offa) : (tensor<64x32x!tile.ptr<f16>, #store>, tensor<64x32xi32, #store>) -> tensor<64x32x!tile.ptr<f16>, #store>
    %la = "tile.load"(%ptra) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (tensor<64x32x!tile.ptr<f16>, #store>) -> tensor<64x32xf16, #store>
    %a = "tilegpu.convert_layout"(%la) : (tensor<64x32xf16, #store>) -> tensor<64x32xf16, #dot_a>
    %acc = "tile.dot"(%a, %b, %zero) {input_precision = "ieee"} : (tensor<64x32xf16, #dot_a>, tensor<32x64xf16, #dot_b>, tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma>
    %acc_s = "tilegpu.convert_layout"(%acc) : (tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #store>
    %r = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #rows>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<64xi32, #rows>) -> tensor<64x1xi32, #store>
    %s = "tile.splat"(%stride) : (i32) -> tensor<64x1xi32, #store>
    %rs = arith.muli %r2, %s : tensor<64x1xi32, #store>
    %rsb = "tile.broadcast"(%rs) : (tensor<64x1xi32, #store>) -> tensor<64x64xi32, #store>
    %k = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #cols>
    %k2 = "tile.expand_dims"(%k) {axis = 0 : i32} : (tensor<64xi32, #cols>) -> tensor<1x64xi32, #store>
    %kb = "tile.broadcast"(%k2) : (tensor<1x64xi32, #store>) -> tensor<64x64xi32, #store>
    %offs = arith.addi %rsb, %kb : tensor<64x64xi32, #store>
    %base = "tile.splat"(%c) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #store>
    %ptrs = "tile.addptr"(%base, %offs) : (tensor<64x64x!tile.ptr<f32>, #store>, tensor<64x64xi32, #store>) -> tensor<64x64x!tile.ptr<f32>, #store>
    "tile.store"(%ptrs, %acc_s) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #store>, tensor<64x64xf32, #store>) -> ()
    return
  }
}
