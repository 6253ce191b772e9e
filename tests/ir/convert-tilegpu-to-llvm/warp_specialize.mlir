// RUN: tilec-opt %s -p tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm | FileCheck %s

// A warp-specialised kernel (8 consumer warps, 4 producer warps: 384 threads). Before
// the split every warp runs the code (the barriers' init, published by barrier 0; the
// empty barriers count one arrival per consumer warp). At the split the producer
// warpgroup (warp index from lane 0 >= 8) gives registers back, one warp of it (index
// 8) runs the region, where a TMA wait needs no barrier, and all of them exit; the
// consumers take their registers, and from then on a CTA barrier is named barrier 1
// over their 256 threads. An arrive is made by one elected lane of each warp.

// CHECK-LABEL: llvm.func @split
// CHECK-SAME: nvvm.maxntid = array<i32: 384>
// CHECK: [[WARP:%.+]] = nvvm.shfl.sync idx
// CHECK: mbarrier.init.shared::cta.b64 [$1], 8;
// CHECK: mbarrier.init.shared::cta.b64 [$1], 8;
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK-NEXT: nvvm.barrier0
// CHECK: [[PRODUCER:%.+]] = arith.cmpi uge, [[WARP]], %{{.+}} : i32
// CHECK: scf.if [[PRODUCER]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK: [[ISSUER:%.+]] = arith.cmpi eq, [[WARP]], %{{.+}} : i32
// CHECK: scf.if [[ISSUER]] {
// CHECK: mbarrier.try_wait.parity
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.exit
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.setmaxregister increase 232
// CHECK: nvvm.elect.sync
// CHECK: mbarrier.arrive.shared::cta.b64 _, [$1];
// CHECK: nvvm.barrier id = %{{.+}} number_of_threads = %{{.+}}
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
module attributes {"tilegpu.num-warps" = 8 : i32, "tilegpu.producer-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func public @split(%p: i1) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %bars = "tilegpu.local_alloc"() {operandSegmentSizes = array<i32: 0>} : () -> !tilegpu.memdesc<tensor<2xi64>>
    "tilegpu.init_barriers"(%bars) {tilegpu.arrive_count = 8 : i32} : (!tilegpu.memdesc<tensor<2xi64>>) -> ()
    "tilegpu.warp_specialize"() ({
      %b0 = "tilegpu.memdesc_index"(%bars, %c0) : (!tilegpu.memdesc<tensor<2xi64>>, i32) -> !tilegpu.memdesc<tensor<i64>>
      "tilegpu.wait_barrier"(%b0, %c1) : (!tilegpu.memdesc<tensor<i64>>, i32) -> ()
      "gpu.yield"() : () -> ()
    }) {producer_regs = 40 : i32, consumer_regs = 232 : i32} : () -> ()
    %b1 = "tilegpu.memdesc_index"(%bars, %c1) : (!tilegpu.memdesc<tensor<2xi64>>, i32) -> !tilegpu.memdesc<tensor<i64>>
    "tilegpu.arrive_barrier"(%b1, %p) : (!tilegpu.memdesc<tensor<i64>>, i1) -> ()
    "tilegpu.barrier"() : () -> ()
    return
  }
}
