// RUN: tilec-opt %s -p tilegpu-accelerate-matmul | FileCheck %s

// An fp32 dot with input_precision "bf16x3" runs as three bf16 tensor-core dots. Each
// operand is split into hi = bf16(x) and lo = bf16(x - hi); the products lo_a @ hi_b and
// hi_a @ lo_b go into the accumulator before hi_a @ hi_b.

// CHECK-LABEL: func.func @bf16x3
// CHECK: %[[AHI:.+]] = arith.truncf %arg0 : tensor<64x32xf32, #{{.*}}> to tensor<64x32xbf16
// CHECK: %[[AHIW:.+]] = arith.extf %[[AHI]]
// CHECK: %[[AREST:.+]] = arith.subf %arg0, %[[AHIW]]
// CHECK: %[[ALO:.+]] = arith.truncf %[[AREST]]
// CHECK: %[[BHI:.+]] = arith.truncf %arg1
// CHECK: %[[BLO:.+]] = arith.truncf
// CHECK: "tilegpu.convert_layout"(%[[ALO]])
// CHECK: "tilegpu.convert_layout"(%[[BHI]])
// CHECK: "tile.dot"({{.*}}) {input_precision = "ieee"} : (tensor<64x32xbf16, #dot_op{{.*}}>, tensor<32x64xbf16, #dot_op{{.*}}>, tensor<64x64xf32, #mma{{.*}}>)
// CHECK: "tilegpu.convert_layout"(%[[AHI]])
// CHECK: "tilegpu.convert_layout"(%[[BLO]])
// CHECK: "tile.dot"({{.*}}) {input_precision = "ieee"} : (tensor<64x32xbf16
// CHECK: "tilegpu.convert_layout"(%[[AHI]])
// CHECK: "tilegpu.convert_layout"(%[[BHI]])
// CHECK: "tile.dot"({{.*}}) {input_precision = "ieee"} : (tensor<64x32xbf16
// CHECK-NOT: "tile.dot"
// CHECK: return
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80"} {
  func.func @bf16x3(%a: tensor<64x32xf32, #b>, %bb: tensor<32x64xf32, #b>, %acc: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %bb, %acc) {input_precision = "bf16x3"} : (tensor<64x32xf32, #b>, tensor<32x64xf32, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
}
