// RUN: tilec-opt %s --split-input-file -p 'tilegpu-accelerate-matmul{wgmma=1}' | FileCheck %s

// fp32 dots at tf32 on sm_90 with wgmma: an mma v3 accumulator, and both operands staged
// K-major (the only way wgmma reads 32-bit operands): A [M, K] with K fastest, B [K, N]
// with K fastest too, whatever their loaded layouts (B here is N-fastest). 32 of K in
// 4-byte elements fill a 128-byte swizzle row.

// CHECK-DAG: #[[MMA:mma[0-9]*]] = #tilegpu.mma<{instrShape = array<i32: 64, 64>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 4, 1>}>
// CHECK-DAG: #[[SA:nvmma_shared[0-9]*]] = #tilegpu.nvmma_shared<{elementBits = 32 : i32, swizzle = 128 : i32, transposed = false}>
// CHECK-DAG: #[[SB:nvmma_shared[0-9]*]] = #tilegpu.nvmma_shared<{elementBits = 32 : i32, swizzle = 128 : i32, transposed = true}>
// CHECK-LABEL: func.func @tf32
// CHECK: %[[A:.+]] = "tilegpu.local_alloc"(%arg0) : (tensor<64x32xf32, #{{.*}}>) -> !tilegpu.memdesc<tensor<64x32xf32, #[[SA]]>>
// CHECK: %[[B:.+]] = "tilegpu.local_alloc"(%arg1) : (tensor<32x64xf32, #{{.*}}>) -> !tilegpu.memdesc<tensor<32x64xf32, #[[SB]]>>
// CHECK: "tile.dot"(%[[A]], %[[B]], {{.*}}) {input_precision = "tf32"} : ({{.*}}, tensor<64x64xf32, #[[MMA]]>) -> tensor<64x64xf32, #[[MMA]]>
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @tf32(%a: tensor<64x32xf32, #b>, %b: tensor<32x64xf32, #b>, %z: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %b, %z) {input_precision = "tf32"} : (tensor<64x32xf32, #b>, tensor<32x64xf32, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
}

// -----

// "ieee" keeps the FMA path, and tf32x3's three products (each the next one's
// accumulator: not a chain of dots) all take the same v3 layout.

// CHECK-LABEL: func.func @ieee
// CHECK-NOT: local_alloc
// CHECK: "tile.dot"(%arg0, %arg1, %arg2) {input_precision = "ieee"}
// CHECK-LABEL: func.func @tf32x3
// CHECK-COUNT-3: "tile.dot"({{.*}}) {input_precision = "tf32"} : (!tilegpu.memdesc<{{.*}}>, !tilegpu.memdesc<{{.*}}>, tensor<64x64xf32, #mma
// CHECK-NOT: "tile.dot"
#b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @ieee(%a: tensor<64x32xf32, #b>, %b: tensor<32x64xf32, #b>, %z: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %b, %z) {input_precision = "ieee"} : (tensor<64x32xf32, #b>, tensor<32x64xf32, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
  func.func @tf32x3(%a: tensor<64x32xf32, #b>, %b: tensor<32x64xf32, #b>, %z: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %d = "tile.dot"(%a, %b, %z) {input_precision = "tf32x3"} : (tensor<64x32xf32, #b>, tensor<32x64xf32, #b>, tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b>
    return %d : tensor<64x64xf32, #b>
  }
}
