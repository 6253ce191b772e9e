// RUN: tilec-opt %s -p 'tilegpu-pipeline{num-stages=3}' | FileCheck %s

// A K loop whose A and B are host descriptors' TMA loads (tile.descriptor_load), staged
// for a wgmma dot. Each becomes a 3-slot ring filled by TMA copies, with one mbarrier
// per slot (initialised before the loop, invalidated after it): the prologue issues
// iterations 0 and 1 into slots 0 and 1; the body waits on the slot's mbarrier for the
// carried phase, the dot reads the slot, and after a barrier the copies of iteration
// i+2 go into slot (c+2)%3; the phase flips whenever the counter wraps to 0. No
// cp.async, commit group or async_wait is left.

// CHECK-LABEL: func.func public @k
// CHECK: %[[RA:.+]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<3x64x32xf16, #nvmma_shared0>>
// CHECK-NEXT: %[[BA:.+]] = "tilegpu.local_alloc"() {{.*}} -> !tilegpu.memdesc<tensor<3xi64>>
// CHECK-NEXT: "tilegpu.init_barriers"(%[[BA]])
// CHECK: "tilegpu.tma_copy_global_to_local"(%arg4, {{.*}}) {operandSegmentSizes = array<i32: 1, 2, 1, 1, 1>}
// CHECK: "tilegpu.tma_copy_global_to_local"(%arg9,
// CHECK: "tilegpu.tma_copy_global_to_local"(%arg4,
// CHECK: "tilegpu.tma_copy_global_to_local"(%arg9,
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[PHASE:.*]] = %{{.*}}) -> (tensor<64x64xf32, #mma0>, i32, i32)
// CHECK-NEXT: %[[BAR:.+]] = "tilegpu.memdesc_index"(%[[BA]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// CHECK-NEXT: "tilegpu.wait_barrier"(%[[BAR]], %[[PHASE]])
// CHECK-NEXT: %[[SA:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[C]]) {tilegpu.pipeline_slot = 0 : i32}
// CHECK: "tilegpu.wait_barrier"
// CHECK: "tile.dot"(%[[SA]],
// CHECK: "tilegpu.barrier"
// CHECK: "tilegpu.memdesc_index"(%[[RA]], %{{.*}}) {tilegpu.pipeline_slot = 2 : i32}
// CHECK: "tilegpu.tma_copy_global_to_local"(%arg4,
// CHECK: "tilegpu.tma_copy_global_to_local"(%arg9,
// CHECK: %[[FLIP:.+]] = arith.xori %[[PHASE]], %{{.*}} : i32
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[FLIP]]
// CHECK: "tilegpu.inval_barriers"(%[[BA]])
// CHECK-NOT: async_copy
// CHECK-NOT: async_wait
#mma0 = #tilegpu.mma<{instrShape = array<i32: 64, 64>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 4, 1>}>
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 4, 1>}>
#blocked1 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 1, 32>, warpsPerCTA = array<i32: 2, 2>}>
#nvmma_shared0 = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 64 : i32, transposed = false}>
#nvmma_shared1 = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 128 : i32, transposed = false}>
#slice0 = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>}>
#slice1 = #tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>}>
#blocked2 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @k(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: i32 {tile.divisibility = 16 : i32}, %arg2: i32 {tile.divisibility = 16 : i32}, %arg3: i32 {tile.divisibility = 16 : i32}, %arg4: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %arg5: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg6: i32 {tile.divisibility = 16 : i32}, %arg7: i32 {tile.divisibility = 16 : i32}, %arg8: i32 {tile.divisibility = 16 : i32}, %arg9: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %arg10: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg11: i32 {tile.divisibility = 16 : i32}) {
    %c64_i32 = arith.constant 64 : i32
    %c32_i32 = arith.constant 32 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %0 = "tile.splat"(%cst) : (f32) -> tensor<64x64xf32, #mma0>
    %1 = scf.for %arg12 = %c0_i32 to %arg11 step %c32_i32 iter_args(%arg13 = %0) -> (tensor<64x64xf32, #mma0>)  : i32 {
      %14 = "tile.descriptor_load"(%arg4, %c0_i32, %arg12) ({
        gpu.yield
      }) {operandSegmentSizes = array<i32: 1, 2>} : (!tile.ptr<i8>, i32, i32) -> tensor<64x32xf16, #blocked0>
      %15 = "tile.descriptor_load"(%arg9, %arg12, %c0_i32) ({
        gpu.yield
      }) {operandSegmentSizes = array<i32: 1, 2>} : (!tile.ptr<i8>, i32, i32) -> tensor<32x64xf16, #blocked1>
      %16 = "tilegpu.local_alloc"(%14) : (tensor<64x32xf16, #blocked0>) -> !tilegpu.memdesc<tensor<64x32xf16, #nvmma_shared0>>
      %17 = "tilegpu.local_alloc"(%15) : (tensor<32x64xf16, #blocked1>) -> !tilegpu.memdesc<tensor<32x64xf16, #nvmma_shared1>>
      %18 = "tile.dot"(%16, %17, %arg13) {input_precision = "ieee"} : (!tilegpu.memdesc<tensor<64x32xf16, #nvmma_shared0>>, !tilegpu.memdesc<tensor<32x64xf16, #nvmma_shared1>>, tensor<64x64xf32, #mma0>) -> tensor<64x64xf32, #mma0>
      scf.yield %18 : tensor<64x64xf32, #mma0>
    }
    %2 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #slice0>
    %3 = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #slice1>
    %4 = "tile.expand_dims"(%2) {axis = 1 : i32} : (tensor<64xi32, #slice0>) -> tensor<64x1xi32, #blocked2>
    %5 = "tile.splat"(%c64_i32) : (i32) -> tensor<64x1xi32, #blocked2>
    %6 = arith.muli %4, %5 : tensor<64x1xi32, #blocked2>
    %7 = "tile.splat"(%arg10) : (!tile.ptr<f32>) -> tensor<64x1x!tile.ptr<f32>, #blocked2>
    %8 = "tile.addptr"(%7, %6) : (tensor<64x1x!tile.ptr<f32>, #blocked2>, tensor<64x1xi32, #blocked2>) -> tensor<64x1x!tile.ptr<f32>, #blocked2>
    %9 = "tile.expand_dims"(%3) {axis = 0 : i32} : (tensor<64xi32, #slice1>) -> tensor<1x64xi32, #blocked2>
    %10 = "tile.broadcast"(%8) : (tensor<64x1x!tile.ptr<f32>, #blocked2>) -> tensor<64x64x!tile.ptr<f32>, #blocked2>
    %11 = "tile.broadcast"(%9) : (tensor<1x64xi32, #blocked2>) -> tensor<64x64xi32, #blocked2>
    %12 = "tile.addptr"(%10, %11) : (tensor<64x64x!tile.ptr<f32>, #blocked2>, tensor<64x64xi32, #blocked2>) -> tensor<64x64x!tile.ptr<f32>, #blocked2>
    %13 = "tilegpu.convert_layout"(%1) : (tensor<64x64xf32, #mma0>) -> tensor<64x64xf32, #blocked2>
    "tile.store"(%12, %13) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #blocked2>, tensor<64x64xf32, #blocked2>) -> ()
    return
  }
}
