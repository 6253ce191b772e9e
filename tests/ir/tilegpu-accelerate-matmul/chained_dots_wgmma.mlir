// RUN: tilec-opt %s -p 'tilegpu-accelerate-matmul{wgmma=1}' | FileCheck %s

// The chain of chained_dots_8_warps.mlir on sm_90 with wgmma: both dots get one mma v3
// layout with all 8 warps (two warpgroups) along M. The first dot reads q and k from
// NVMMA shared buffers; the second reads p (computed in registers) as its A operand in
// the dot_op layout of the v3 parent, and only v from a shared buffer.

// CHECK-NOT: versionMajor = 2
// CHECK-DAG: #[[MMA:mma[0-9]*]] = #tilegpu.mma<{instrShape = array<i32: 64, 64>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 8, 1>}>
// CHECK-DAG: #[[A:dot_op[0-9]*]] = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #tilegpu.mma<{instrShape = array<i32: 64, 64>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 8, 1>}>}>
// CHECK-LABEL: func.func @chain8
// CHECK: %[[Q:.+]] = "tilegpu.local_alloc"(%arg0) : (tensor<128x64xf16, #{{.*}}>) -> !tilegpu.memdesc<tensor<128x64xf16, #nvmma_shared{{[0-9]*}}>>
// CHECK: %[[K:.+]] = "tilegpu.local_alloc"(%arg1)
// CHECK: "tile.dot"(%[[Q]], %[[K]], {{.*}}) {input_precision = "ieee"} : (!tilegpu.memdesc<{{.*}}>, !tilegpu.memdesc<{{.*}}>, tensor<128x64xf32, #[[MMA]]>) -> tensor<128x64xf32, #[[MMA]]>
// CHECK: %[[P:.+]] = arith.truncf
// CHECK: %[[PA:.+]] = "tilegpu.convert_layout"(%[[P]]) : (tensor<128x64xf16, #{{.*}}>) -> tensor<128x64xf16, #[[A]]>
// CHECK: %[[V:.+]] = "tilegpu.local_alloc"(%arg2)
// CHECK: "tile.dot"(%[[PA]], %[[V]], {{.*}}) {input_precision = "ieee"} : (tensor<128x64xf16, #[[A]]>, !tilegpu.memdesc<{{.*}}>, tensor<128x64xf32, #[[MMA]]>) -> tensor<128x64xf32, #[[MMA]]>
// CHECK: return
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 8, 1>}>
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90"} {
  func.func @chain8(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %v: tensor<64x64xf16, #b>, %z: tensor<128x64xf32, #b>, %scale: f32) -> tensor<128x64xf32, #b> {
    %qk = "tile.dot"(%q, %k, %z) {input_precision = "ieee"} : (tensor<128x64xf16, #b>, tensor<64x64xf16, #b>, tensor<128x64xf32, #b>) -> tensor<128x64xf32, #b>
    %s = "tile.splat"(%scale) : (f32) -> tensor<128x64xf32, #b>
    %scaled = arith.mulf %qk, %s : tensor<128x64xf32, #b>
    %e = math.exp2 %scaled : tensor<128x64xf32, #b>
    %p = arith.truncf %e : tensor<128x64xf32, #b> to tensor<128x64xf16, #b>
    %o = "tile.dot"(%p, %v, %z) {input_precision = "ieee"} : (tensor<128x64xf16, #b>, tensor<64x64xf16, #b>, tensor<128x64xf32, #b>) -> tensor<128x64xf32, #b>
    return %o : tensor<128x64xf32, #b>
  }
}
