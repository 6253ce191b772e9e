"""Scratch size functions agree with the lowering rules they stand beside.

tilegpu-allocate-shared-memory places each op's scratch space from its size function
(`@scratch_bytes` in convert_tilegpu_to_llvm/); the rule then reserves what it actually
uses. For a spread of kernels (reductions, scans, shape ops, gather, histogram, the FMA
dot, atomics; fp16 to fp64, 1 to 8 warps), compiled by the real pipeline, every op the
allocator gave scratch space reserves exactly that many bytes, and no other op reserves
any (the lowering itself refuses an op that reserves more than it was given, or that
addresses scratch space it did not reserve).
"""
from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from mlir import ir

import tilec
import tilec.language as tl
from tilec.dialects import make_context
from tilec.passes import run_pipeline
from tilec.passes.convert_tilegpu_to_llvm.context import LoweringContext

allocator = importlib.import_module("tilec.passes.allocate_shared_memory")


@tilec.jit
def reduce_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    if OP == "sum":
        r = tl.sum(x, axis=AXIS)
    else:
        r = tl.argmax(x, axis=AXIS)  # two operands: values and indices
    tl.store(out_ptr + tl.arange(0, N if AXIS == 0 else M), r.to(tl.float32))


@tilec.jit
def scan_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=AXIS, reverse=REVERSE))


@tilec.jit
def shape_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    if OP == "trans":
        y = tl.ravel(tl.trans(x))
    elif OP == "reshape":  # default layouts all along: no element moves
        y = tl.reshape(tl.reshape(x, (N, M)) * 2, (M * N,))
    elif OP == "pairs":  # pair sums (a slice layout) flattened: elements move
        y = tl.reshape(tl.sum(tl.reshape(x, (M, N // 2, 2)), axis=2), (M * N // 2,))
        y = tl.ravel(tl.join(y, y))
    elif OP == "join_split":
        a, b = tl.split(tl.join(x, x * 3))
        y = tl.ravel(a + b * 10)
    else:
        y = tl.ravel(tl.cat(x, x * 2))
        y = tl.max(tl.reshape(y, (2, M * N)), axis=0)
    tl.store(out_ptr + tl.arange(0, M * N), y)


@tilec.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    offs = tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :]
    tl.store(out_ptr + offs, tl.gather(src, tl.load(idx_ptr + offs), 1))


@tilec.jit
def histogram_kernel(x_ptr, out_ptr, N: tl.constexpr, BINS: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BINS), tl.histogram(tl.load(x_ptr + tl.arange(0, N)), BINS))


@tilec.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(c_ptr + offs, tl.dot(a, b, allow_tf32=False))


@tilec.jit
def atomic_kernel(ptr, out_ptr, BLOCK: tl.constexpr, USE_OLD: tl.constexpr, CAS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if CAS:
        old = tl.atomic_cas(ptr + offs, offs, offs + 1)
    else:
        old = tl.atomic_add(ptr + offs, offs)
    scalar = tl.atomic_add(ptr, 1)
    if USE_OLD:
        tl.store(out_ptr + offs, old + scalar)


@dataclass(frozen=True)
class Case:
    kernel: Any
    signature: dict[str, str]
    constexprs: dict[str, Any]
    num_warps: int = 4
    scratch: frozenset[str] = frozenset()  # ops that must get scratch space here
    none: frozenset[str] = frozenset()     # ops that must not

    def __str__(self) -> str:
        values = ",".join(f"{k}={v}" for k, v in self.constexprs.items())
        return f"{self.kernel.__name__}[{values},w={self.num_warps}]"


def _io(dtype: str) -> dict[str, str]:
    return {"x_ptr": f"*{dtype}:16", "out_ptr": f"*{dtype}:16"}


CASES = [
    # Rows across warps, reduced along them: partials through shared memory.
    *[Case(reduce_kernel, {"x_ptr": f"*{dt}:16", "out_ptr": "*fp32:16"},
           {"M": m, "N": n, "AXIS": 0, "OP": op}, w, scratch=frozenset({"tile.reduce"}))
      for dt, m, n, op, w in [("fp32", 64, 64, "sum", 8), ("fp16", 32, 16, "sum", 4), ("fp64", 128, 8, "argmax", 4),
                              ("i8", 16, 128, "argmax", 2), ("i64", 256, 4, "sum", 8)]],
    # Along the fast axis within warps: shuffles only.
    Case(reduce_kernel, {"x_ptr": "*fp32:16", "out_ptr": "*fp32:16"}, {"M": 64, "N": 32, "AXIS": 1, "OP": "sum"},
         8, none=frozenset({"tile.reduce"})),
    Case(reduce_kernel, {"x_ptr": "*fp16:16", "out_ptr": "*fp32:16"}, {"M": 4, "N": 32, "AXIS": 1, "OP": "argmax"},
         1, none=frozenset({"tile.reduce"})),
    *[Case(scan_kernel, _io(dt), {"M": m, "N": n, "AXIS": axis, "REVERSE": rev}, w, scratch=frozenset({"tile.scan"}))
      for dt, m, n, axis, rev, w in [("fp32", 64, 64, 0, False, 4), ("fp32", 128, 4, 0, True, 8),
                                     ("i32", 16, 256, 1, False, 4), ("fp64", 32, 32, 0, True, 2),
                                     ("i64", 256, 8, 0, False, 8)]],
    Case(scan_kernel, _io("fp32"), {"M": 4, "N": 32, "AXIS": 1, "REVERSE": False}, 1, none=frozenset({"tile.scan"})),
    *[Case(shape_kernel, _io(dt), {"M": m, "N": n, "OP": "cat"}, w, scratch=frozenset({"tile.cat"}))
      for dt, m, n, w in [("fp64", 16, 16, 4), ("i8", 8, 32, 1)]],
    # Shape ops whose results take the layouts their operands' become under them: every
    # element stays in its thread (the layout conversions before the stores pay instead).
    *[Case(shape_kernel, _io(dt), {"M": m, "N": n, "OP": op}, w, none=frozenset(ttgir_ops))
      for dt, m, n, op, w, ttgir_ops in [("fp32", 16, 32, "trans", 4, {"tile.trans"}),
                                         ("fp16", 64, 8, "trans", 2, {"tile.trans"}),
                                         ("fp32", 64, 8, "pairs", 4, {"tile.reshape", "tile.join"}),
                                         ("fp16", 8, 16, "pairs", 8, {"tile.reshape", "tile.join"}),
                                         ("fp16", 16, 16, "join_split", 4, {"tile.join", "tile.split"}),
                                         ("fp32", 32, 8, "join_split", 8, {"tile.join", "tile.split"}),
                                         ("fp32", 8, 16, "reshape", 4, {"tile.reshape"}),
                                         ("fp32", 64, 8, "reshape", 8, {"tile.reshape"}),
                                         ("fp32", 32, 32, "reshape", 4, {"tile.reshape"})]],
    *[Case(gather_kernel, {"src_ptr": f"*{dt}:16", "idx_ptr": "*i32:16", "out_ptr": f"*{dt}:16"},
           {"M": m, "N": n, "K": k}, w, scratch=frozenset({"tile.gather"}))
      for dt, m, n, k, w in [("fp32", 16, 32, 8, 4), ("fp16", 64, 64, 64, 8), ("i64", 4, 16, 32, 1)]],
    *[Case(histogram_kernel, {"x_ptr": "*i32:16", "out_ptr": "*i32:16"}, {"N": n, "BINS": bins}, w,
           scratch=frozenset({"tile.histogram"}))
      for n, bins, w in [(128, 16, 4), (1024, 256, 8), (64, 512, 2)]],
    # The FMA dot (full fp32, and fp64); 64 x 64 fp32 operands with K = 256 exceed
    # CHUNK_BYTES: staged in slices.
    *[Case(dot_kernel, {"a_ptr": f"*{dt}:16", "b_ptr": f"*{dt}:16", "c_ptr": f"*{dt}:16"},
           {"M": m, "N": n, "K": k}, w, scratch=frozenset({"tile.dot"}))
      for dt, m, n, k, w in [("fp64", 16, 16, 16, 4), ("fp32", 32, 64, 16, 4), ("fp32", 64, 64, 256, 4),
                             ("fp64", 16, 32, 64, 1)]],
    # On tensor cores the dot itself works in registers (its operands are staged by
    # local_alloc buffers, not scratch).
    *[Case(dot_kernel, {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp32:16"},
           {"M": m, "N": n, "K": k}, w, none=frozenset({"tile.dot"}))
      for m, n, k, w in [(16, 16, 16, 4), (16, 32, 64, 1)]],
    # 16 elements over 4 warps: replicas, so the used old values go through shared memory.
    Case(atomic_kernel, {"ptr": "*i32:16", "out_ptr": "*i32:16"}, {"BLOCK": 16, "USE_OLD": True, "CAS": False}, 4,
         scratch=frozenset({"tile.atomic_rmw"})),
    Case(atomic_kernel, {"ptr": "*i32:16", "out_ptr": "*i32:16"}, {"BLOCK": 32, "USE_OLD": True, "CAS": True}, 2,
         scratch=frozenset({"tile.atomic_cas", "tile.atomic_rmw"})),
    Case(atomic_kernel, {"ptr": "*i32:16", "out_ptr": "*i32:16"}, {"BLOCK": 16, "USE_OLD": False, "CAS": True}, 4,
         none=frozenset({"tile.atomic_cas", "tile.atomic_rmw"})),
]


@dataclass
class ScratchLog:
    allocated: list[tuple[str, int]] = field(default_factory=list)  # what the allocator placed
    reserved: list[tuple[str, int]] = field(default_factory=list)   # what the rules reserved


@pytest.fixture
def scratch_log(monkeypatch: pytest.MonkeyPatch) -> ScratchLog:
    monkeypatch.setattr(tilec.config.config, "always_compile", True)  # observed while compiling: no cache hits
    log = ScratchLog()
    size_of = allocator.scratch_size
    reserve = LoweringContext.reserve_shared

    def recorded_size(op, num_warps: int) -> int:
        size = size_of(op, num_warps)
        if size:
            log.allocated.append((op.name, size))
        return size

    def recorded_reserve(ctx: LoweringContext, nbytes: int) -> None:
        reserve(ctx, nbytes)
        log.reserved.append((ctx.current_op.name, nbytes))

    monkeypatch.setattr(allocator, "scratch_size", recorded_size)
    monkeypatch.setattr(LoweringContext, "reserve_shared", recorded_reserve)
    return log


@pytest.mark.parametrize("case", CASES, ids=str)
def test_scratch_size_is_what_the_lowering_reserves(case: Case, scratch_log: ScratchLog):
    kernel = tilec.compile(case.kernel, signature=case.signature, constexprs=case.constexprs, target="sm_90",
                           num_warps=case.num_warps)
    assert Counter(scratch_log.reserved) == Counter(scratch_log.allocated)
    names = {name for name, _ in scratch_log.allocated}
    assert case.scratch <= names, f"expected scratch space for {sorted(case.scratch - names)}"
    assert not case.none & names, f"expected no scratch space for {sorted(case.none & names)}"
    # The allocator's high-water mark covers every op's scratch space.
    assert kernel.metadata.shared >= max((size for _, size in scratch_log.allocated), default=0)


# Layouts the language does not produce yet: the mma accumulator (scanned along M its
# runs are not a blocked layout's, so every run total goes through shared memory; along
# N the lanes' shuffle scan applies), its dot operands, and conversions of booleans and
# pointers (1 and 8 bytes an element).
MMA = "#tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>"
BLOCKED = ("#tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, "
           "threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>")
DOT_A = f"#tilegpu.dot_op<{{kWidth = 2 : i32, opIdx = 0 : i32, parent = {MMA}}}>"
COMBINE = """({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      gpu.yield %t : f32
    })"""
SEGMENTS = ("operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, "
            "resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>")
TENSOR_CORE_LAYOUTS = f"""
#mma = {MMA}
#blocked = {BLOCKED}
#a = {DOT_A}
module attributes {{"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"}} {{
  func.func @layouts(%xs: f32, %ys: f16, %ms: i1, %ps: !tile.ptr<f32>) {{
    %x = "tile.splat"(%xs) : (f32) -> tensor<32x32xf32, #mma>
    %y = "tile.splat"(%ys) : (f16) -> tensor<32x32xf16, #blocked>
    %m = "tile.splat"(%ms) : (i1) -> tensor<32x32xi1, #blocked>
    %p = "tile.splat"(%ps) : (!tile.ptr<f32>) -> tensor<32x32x!tile.ptr<f32>, #blocked>
    %s0 = "tile.scan"(%x) {COMBINE} {{axis = 0 : i32, {SEGMENTS}, reverse = false}} : (tensor<32x32xf32, #mma>) -> tensor<32x32xf32, #mma>
    %s1 = "tile.scan"(%x) {COMBINE} {{axis = 1 : i32, {SEGMENTS}, reverse = true}} : (tensor<32x32xf32, #mma>) -> tensor<32x32xf32, #mma>
    %r0 = "tile.reduce"(%x) {COMBINE} {{axis = 0 : i32, {SEGMENTS}}} : (tensor<32x32xf32, #mma>) -> tensor<32xf32, #tilegpu.slice<{{dim = 0 : i32, parent = #mma}}>>
    %r1 = "tile.reduce"(%x) {COMBINE} {{axis = 1 : i32, {SEGMENTS}}} : (tensor<32x32xf32, #mma>) -> tensor<32xf32, #tilegpu.slice<{{dim = 1 : i32, parent = #mma}}>>
    %c0 = "tilegpu.convert_layout"(%x) : (tensor<32x32xf32, #mma>) -> tensor<32x32xf32, #blocked>
    %c1 = "tilegpu.convert_layout"(%y) : (tensor<32x32xf16, #blocked>) -> tensor<32x32xf16, #a>
    %c2 = "tilegpu.convert_layout"(%m) : (tensor<32x32xi1, #blocked>) -> tensor<32x32xi1, #mma>
    %c3 = "tilegpu.convert_layout"(%p) : (tensor<32x32x!tile.ptr<f32>, #blocked>) -> tensor<32x32x!tile.ptr<f32>, #mma>
    return
  }}
}}
"""


def test_scratch_size_on_tensor_core_layouts(scratch_log: ScratchLog):
    module = ir.Module.parse(TENSOR_CORE_LAYOUTS, make_context())
    run_pipeline(module, "tilegpu-allocate-shared-memory,tilegpu-insert-barriers,convert-tilegpu-to-llvm")
    assert Counter(scratch_log.reserved) == Counter(scratch_log.allocated)
    assert Counter(name for name, _ in scratch_log.allocated) == {
        "tile.scan": 2, "tile.reduce": 2, "tilegpu.convert_layout": 4}
    # 32 x 32 pointers (8 bytes each) and booleans (1 byte each) staged whole.
    assert ("tilegpu.convert_layout", 32 * 32 * 8) in scratch_log.allocated
    assert ("tilegpu.convert_layout", 32 * 32) in scratch_log.allocated
