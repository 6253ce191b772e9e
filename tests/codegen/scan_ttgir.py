"""A cumsum kernel written in ttgir, in a layout the test chooses (so that what it checks
does not depend on the layout tilegpu-coalesce picks), lowered to LLVM IR or PTX by
tilec's own passes (the llir and ptx stages of tilec.backend.compiler)."""
from __future__ import annotations

from mlir import ir

from tilec.backend.compiler import _LLVM_CLEANUP, _LLVM_OPT_LEVEL, _binary_object, _gpu_module, _llvm_ir_text
from tilec.dialects import make_context
from tilec.passes import run_pipeline
from tilec.target import Target


def blocked(size, threads, warps) -> str:
    return (f"#tilegpu.blocked<{{order = array<i32: 1, 0>, sizePerThread = array<i32: {size[0]}, {size[1]}>, "
            f"threadsPerWarp = array<i32: {threads[0]}, {threads[1]}>, warpsPerCTA = array<i32: {warps[0]}, "
            f"{warps[1]}>}}>")


def linear(register, lane, warp) -> str:
    flat = lambda bases: ", ".join(str(v) for basis in bases for v in basis)  # noqa: E731
    return (f"#tilegpu.linear<{{lane = array<i32: {flat(lane)}>, rank = 2 : i32, register = array<i32: "
            f"{flat(register)}>, warp = array<i32: {flat(warp)}>}}>")


# The corpus's 64x32 fp32 strip as tilegpu-coalesce lays it out for row-major pointers:
# 4 columns a thread, 4 x 8 lanes, 4 warps down the rows; the tile repeats 4 times down
# the rows (a thread holds rows r, r + 16, r + 32, r + 48).
STRIP = blocked((1, 4), (4, 8), (4, 1))


def scan_kernel(layout: str, m: int, n: int, axis: int, reverse: bool, num_warps: int = 4) -> str:
    """ttgir: out = the cumsum along `axis` of x (both row-major m x n fp32), all in `layout`."""
    rows, cols = (f"#tilegpu.slice<{{dim = {d} : i32, parent = {layout}}}>" for d in (1, 0))
    index = f"tensor<{m}x{n}xi32, #l>"
    pointers = f"tensor<{m}x{n}x!tile.ptr<f32>, #l>"
    values = f"tensor<{m}x{n}xf32, #l>"
    return f"""
#l = {layout}
module attributes {{"tilegpu.num-warps" = {num_warps} : i32, tilegpu.target = "sm_90"}} {{
  func.func public @cumsum(%x: !tile.ptr<f32> {{tile.divisibility = 16 : i32}}, %out: !tile.ptr<f32> {{tile.divisibility = 16 : i32}}) {{
    %width = arith.constant {n} : i32
    %r = "tile.make_range"() {{end = {m} : i32, start = 0 : i32}} : () -> tensor<{m}xi32, {rows}>
    %re = "tile.expand_dims"(%r) {{axis = 1 : i32}} : (tensor<{m}xi32, {rows}>) -> tensor<{m}x1xi32, #l>
    %wn = "tile.splat"(%width) : (i32) -> tensor<{m}x1xi32, #l>
    %rm = arith.muli %re, %wn : tensor<{m}x1xi32, #l>
    %rb = "tile.broadcast"(%rm) : (tensor<{m}x1xi32, #l>) -> {index}
    %c = "tile.make_range"() {{end = {n} : i32, start = 0 : i32}} : () -> tensor<{n}xi32, {cols}>
    %ce = "tile.expand_dims"(%c) {{axis = 0 : i32}} : (tensor<{n}xi32, {cols}>) -> tensor<1x{n}xi32, #l>
    %cb = "tile.broadcast"(%ce) : (tensor<1x{n}xi32, #l>) -> {index}
    %i = arith.addi %rb, %cb : {index}
    %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> {pointers}
    %xp = "tile.addptr"(%xs, %i) : ({pointers}, {index}) -> {pointers}
    %v = "tile.load"(%xp) {{cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false}} : ({pointers}) -> {values}
    %s = "tile.scan"(%v) ({{
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      gpu.yield %sum : f32
    }}) {{axis = {axis} : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, reverse = {str(reverse).lower()}}} : ({values}) -> {values}
    %os = "tile.splat"(%out) : (!tile.ptr<f32>) -> {pointers}
    %op = "tile.addptr"(%os, %i) : ({pointers}, {index}) -> {pointers}
    "tile.store"(%op, %s) {{cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>}} : ({pointers}, {values}) -> ()
    return
  }}
}}
"""


def _lowered(ttgir: str) -> ir.Module:
    module = ir.Module.parse(ttgir)
    run_pipeline(module, "tilegpu-allocate-shared-memory")
    run_pipeline(module, "tilegpu-insert-barriers,convert-tilegpu-to-llvm{fp-fusion=1}," + _LLVM_CLEANUP)
    return module


def llvm_ir(ttgir: str) -> str:
    """The kernel as LLVM IR, before LLVM's optimisation (what the llir stage keeps)."""
    with make_context():
        module = _lowered(ttgir)  # held: the gpu.module belongs to it
        return _llvm_ir_text(_gpu_module(module))


def ptx(ttgir: str, target: str = "sm_90a") -> str:
    """The kernel's PTX, through LLVM's NVPTX backend at the compiler's optimisation level."""
    chip = Target.parse(target)
    with make_context():
        module = _lowered(ttgir)
        _gpu_module(module).attributes["targets"] = ir.ArrayAttr.get([ir.Attribute.parse(
            f'#nvvm.target<O = {_LLVM_OPT_LEVEL}, chip = "{chip.chip}", features = "{chip.features}">')])
        run_pipeline(module, "gpu-module-to-binary{format=isa}")
        return _binary_object(module.operation).decode()
