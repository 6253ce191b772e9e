// RUN: tilec-opt %s -p convert-tilegpu-to-llvm | FileCheck %s

// fp32 division: `/` (arith.divf) is the full-range approximation div.full.f32, as in
// Triton; a division allowed to approximate (fastmath<afn>, tl.fdiv(approx=True)) is the
// fast div.approx.f32; an fp64 division stays IEEE's (arith.divf, div.rn.f64 in the PTX).

// CHECK-LABEL: llvm.func @divisions
// CHECK: llvm.inline_asm asm_dialect = att "div.full.f32 $0, $1, $2;", "=f,f,f" %arg1, %arg2 : (f32, f32) -> f32
// CHECK: llvm.inline_asm asm_dialect = att "div.approx.f32 $0, $1, $2;", "=f,f,f" %arg1, %arg2 : (f32, f32) -> f32
// CHECK-NOT: div.approx
// CHECK: arith.divf %arg3, %arg4 : f64
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"} {
  func.func @divisions(%out: !tile.ptr<f32>, %x: f32, %y: f32, %a: f64, %b: f64) {
    %full = arith.divf %x, %y : f32
    %fast = arith.divf %x, %y fastmath<afn> : f32
    %sum = arith.addf %full, %fast : f32
    %wide = arith.divf %a, %b : f64
    %narrow = arith.truncf %wide : f64 to f32
    %total = arith.addf %sum, %narrow : f32
    "tile.store"(%out, %total) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    return
  }
}
