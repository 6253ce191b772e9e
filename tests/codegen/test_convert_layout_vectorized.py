"""Layout conversions through shared memory (tilegpu.convert_layout) move the widest
vectors the two layouts share, without bank conflicts where the layouts allow
(tilec.layout.exchange chooses the scratch layout).

The case that made split-K matmul slow (issue 25): a 128x128 fp32 wgmma accumulator
converted into the blocked layout of tl.atomic_add. Staged row-major, each thread wrote
its column pairs (64 st.shared.v2) and read back one element at a time (128
ld.shared.b32); Triton moves 4 elements per access both ways (rows 8 and 64 apart are
registers of both layouts): 32 st.shared.v4 and 32 ld.shared.v4.

Four tiers:
- the layout algebra alone: vectors, bank cycles, a bijective buffer;
- PTX of kernels compiled for sm_90 (no GPU): the shared accesses per thread;
- the lowering run on the CPU: each conversion (mma v2 and wgmma accumulators, blocked,
  sliced layouts; fp32, fp16, int8, int64, bool) is lowered to LLVM IR and executed
  thread by thread (block_llvm.py); every element must arrive where it belongs;
- kernels through the `backend` fixture (the interpreter, compiled too, and the GPU):
  split-K matmul with atomics, transposes, reductions, chained dots.
"""
from __future__ import annotations

import itertools
import re
from collections import Counter

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

import tilec
import tilec.language as tl
from block_llvm import Memory, from_bytes, param_base, run
from tilec.backend import toolkit
from tilec.backend.compiler import _LLVM_CLEANUP, _gpu_module, _llvm_ir_text
from tilec.dialects import make_context
from tilec.layout.encodings import to_linear
from tilec.layout.exchange import choose_exchange
from tilec.layout.syntax import parse_encoding
from tilec.passes import run_pipeline
from tilec_testing import device_array, to_numpy


def _ptxas_available() -> bool:
    try:
        toolkit.ptxas_path()
        return True
    except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
        return False


needs_ptxas = pytest.mark.skipif(not _ptxas_available(), reason="ptxas is not available")


def blocked(size, threads, warps, order=(1, 0)):
    return (f"#tilegpu.blocked<{{order = array<i32: {order[0]}, {order[1]}>, sizePerThread = array<i32: {size[0]}, "
            f"{size[1]}>, threadsPerWarp = array<i32: {threads[0]}, {threads[1]}>, warpsPerCTA = array<i32: "
            f"{warps[0]}, {warps[1]}>}}>")


def mma_v2(warps):
    return (f"#tilegpu.mma<{{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: "
            f"{warps[0]}, {warps[1]}>}}>")


def wgmma(n, warps=4):
    return (f"#tilegpu.mma<{{instrShape = array<i32: 64, {n}>, versionMajor = 3 : i32, warpsPerCTA = array<i32: "
            f"{warps}, 1>}}>")


def sliced(dim, parent):
    return f"#tilegpu.slice<{{dim = {dim} : i32, parent = {parent}}}>"


ROWS_IN_REGISTERS = blocked((1, 1), (1, 32), (1, 4))  # what tl.atomic_add of the split-K tile gets
COALESCED = blocked((1, 4), (2, 16), (4, 1))
WIDE = blocked((1, 8), (4, 8), (4, 1))
COLUMNS = blocked((4, 1), (16, 2), (1, 4), (0, 1))
SQUARES = blocked((2, 2), (8, 4), (2, 2))


def _linear(encoding: str, shape):
    return to_linear(parse_encoding(encoding), list(shape))


# ----------------------------------------------------------------------------- the layout algebra


@pytest.mark.parametrize("element_bytes, vector", [(4, 4), (2, 4), (8, 2)])
def test_wgmma_accumulator_to_rows_in_registers_moves_16_bytes_without_conflicts(element_bytes, vector):
    """Rows 8 and 64 apart are registers of both layouts: 4 elements per access (2 of 8
    bytes; fp16 has only those two shared rows too), every warp cycle serving 128 bytes."""
    shape = (128, 128)
    plan = choose_exchange(_linear(wgmma(128), shape), _linear(ROWS_IN_REGISTERS, shape), shape, element_bytes)
    per_thread = 128 * 128 // 128
    ideal_cycles = per_thread * 32 * element_bytes // 128
    for side in (plan.src, plan.dst):
        assert side.vector == vector
        assert side.instructions == per_thread // vector
        assert side.wavefronts == ideal_cycles


@pytest.mark.parametrize("src, dst, shape", [
    (mma_v2((1, 4)), COALESCED, (16, 64)),
    (mma_v2((2, 2)), WIDE, (64, 64)),
    (wgmma(64), COLUMNS, (64, 64)),
    (COALESCED, COLUMNS, (64, 64)),
    (SQUARES, ROWS_IN_REGISTERS, (32, 128)),
])
@pytest.mark.parametrize("element_bytes", [1, 2, 4, 8])
def test_exchange_buffer_is_a_bijection_and_never_worse_than_row_major(src, dst, shape, element_bytes):
    from tilec.layout.exchange import exchange_cost, row_major_offsets
    src_ll, dst_ll = _linear(src, shape), _linear(dst, shape)
    plan = choose_exchange(src_ll, dst_ll, shape, element_bytes)
    offsets = sorted(plan.offsets.apply({f"dim{d}": c for d, c in enumerate(coords)})[0]
                     for coords in itertools.product(*(range(n) for n in shape)))
    assert offsets == list(range(int(np.prod(shape))))
    row_major = exchange_cost(src_ll, dst_ll, row_major_offsets(shape), shape, element_bytes)
    assert plan.src.total + plan.dst.total <= sum(side.total for side in row_major)
    for side in (plan.src, plan.dst):
        assert side.vector * element_bytes <= 16


# ----------------------------------------------------------------------------- PTX on sm_90


@tilec.jit
def splitk_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    """c += a @ b, program (i, j, s) adding the part of K made of its BLOCK_K slices
    s, s + SPLIT_K, ... (K a multiple of BLOCK_K * SPLIT_K)."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.program_id(2) * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K // (BLOCK_K * SPLIT_K)):
        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.atomic_add(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _shared_accesses(ptx: str) -> Counter:
    return Counter(re.findall(r"\b((?:ld|st)\.shared(?:\.v\d)?\.b\d+)", ptx))


@needs_ptxas
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_splitk_wgmma_accumulator_reaches_the_atomics_in_16_byte_accesses(dtype):
    signature = {"a_ptr": f"*{dtype}:16", "b_ptr": f"*{dtype}:16", "c_ptr": "*fp32:16", "M": "i32:16",
                 "N": "i32:16", "K": "i32:16", "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}
    kernel = tilec.compile(splitk_kernel, signature=signature, target="sm_90", num_warps=4, num_stages=3,
                           constexprs={"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "SPLIT_K": 4})
    assert "wgmma.mma_async" in kernel.asm["ptx"]
    accesses = _shared_accesses(kernel.asm["ptx"])
    # The operands travel by cp.async or TMA; the only shared accesses are the conversion's.
    assert accesses == {"st.shared.v4.b32": 32, "ld.shared.v4.b32": 32}, accesses


@needs_ptxas
def test_splitk_mma_v2_accumulator_reaches_the_atomics_in_16_byte_accesses():
    """BLOCK_M 16 runs on mma.sync; its accumulator goes out to a [1, 4]-per-thread layout
    in 2 stores and 2 loads of 16 bytes per thread (row-major: 4 stores of 8)."""
    signature = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp32:16", "M": "i32:16", "N": "i32:16",
                 "K": "i32:16", "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}
    kernel = tilec.compile(splitk_kernel, signature=signature, target="sm_90", num_warps=4, num_stages=3,
                           constexprs={"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "SPLIT_K": 8})
    ptx = kernel.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16" in ptx
    accesses = _shared_accesses(ptx)
    assert accesses == {"st.shared.v4.b32": 2, "ld.shared.v4.b32": 2}, accesses
    assert "atom.global.gpu.acq_rel.add.v4.f32" in ptx  # as Triton: 4 elements per atomic on sm_90


# ----------------------------------------------------------------------------- the lowering, run on the CPU

_CASTS = {"i32": "", "i64": "arith.extsi", "i8": "arith.trunci", "i1": "arith.trunci", "f16": "arith.sitofp",
          "f32": "arith.sitofp"}
_TYPES = {"i32": ("int", 32), "i64": ("int", 64), "i8": ("int", 8), "i1": ("int", 8), "f16": ("half",),
          "f32": ("float",)}


def _index_tensor(name: str, encoding: str, shape) -> tuple[str, str]:
    """ttgir computing the row-major index of every element in `encoding`: (text, type)."""
    if len(shape) == 1:
        (n,) = shape
        return (f'    %{name} = "tile.make_range"() {{end = {n} : i32, start = 0 : i32}} : () -> '
                f'tensor<{n}xi32, {encoding}>\n'), f"tensor<{n}xi32, {encoding}>"
    m, n = shape
    full = f"tensor<{m}x{n}xi32, {encoding}>"
    rows, cols = sliced(1, encoding), sliced(0, encoding)
    return f"""
    %{name}r = "tile.make_range"() {{end = {m} : i32, start = 0 : i32}} : () -> tensor<{m}xi32, {rows}>
    %{name}re = "tile.expand_dims"(%{name}r) {{axis = 1 : i32}} : (tensor<{m}xi32, {rows}>) -> tensor<{m}x1xi32, {encoding}>
    %{name}n = "tile.splat"(%width) : (i32) -> tensor<{m}x1xi32, {encoding}>
    %{name}rm = arith.muli %{name}re, %{name}n : tensor<{m}x1xi32, {encoding}>
    %{name}rb = "tile.broadcast"(%{name}rm) : (tensor<{m}x1xi32, {encoding}>) -> {full}
    %{name}c = "tile.make_range"() {{end = {n} : i32, start = 0 : i32}} : () -> tensor<{n}xi32, {cols}>
    %{name}ce = "tile.expand_dims"(%{name}c) {{axis = 0 : i32}} : (tensor<{n}xi32, {cols}>) -> tensor<1x{n}xi32, {encoding}>
    %{name}cb = "tile.broadcast"(%{name}ce) : (tensor<1x{n}xi32, {encoding}>) -> {full}
    %{name} = arith.addi %{name}rb, %{name}cb : {full}
""", full


def _conversion_kernel(src: str, dst: str, shape, dtype: str) -> str:
    """A kernel whose element i (row-major) is i cast to `dtype`, made in `src`,
    converted to `dst` and stored to out[i] from there."""
    dims = "x".join(map(str, shape))
    src_index, src_index_type = _index_tensor("s", "#src", shape)
    dst_index, dst_index_type = _index_tensor("d", "#dst", shape)
    value = f"tensor<{dims}x{dtype}, #src>"
    cast = f"    %x = {_CASTS[dtype]} %s : {src_index_type} to {value}\n" if _CASTS[dtype] else ""
    x = "%x" if cast else "%s"
    pointers = f"tensor<{dims}x!tile.ptr<{dtype}>, #dst>"
    return f"""
#src = {src}
#dst = {dst}
module attributes {{"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90"}} {{
  func.func public @k(%out: !tile.ptr<{dtype}> {{tile.divisibility = 16 : i32}}) {{
    %width = arith.constant {shape[-1]} : i32
{src_index}{cast}    %y = "tilegpu.convert_layout"({x}) : ({value}) -> tensor<{dims}x{dtype}, #dst>
{dst_index}    %p0 = "tile.splat"(%out) : (!tile.ptr<{dtype}>) -> {pointers}
    %p = "tile.addptr"(%p0, %d) : ({pointers}, {dst_index_type}) -> {pointers}
    "tile.store"(%p, %y) {{cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>}} : ({pointers}, tensor<{dims}x{dtype}, #dst>) -> ()
    return
  }}
}}
"""


def _lower(ttgir: str) -> str:
    with make_context():
        module = ir.Module.parse(ttgir)
        run_pipeline(module, "tilegpu-allocate-shared-memory")
        run_pipeline(module, "tilegpu-insert-barriers,convert-tilegpu-to-llvm{fp-fusion=1}," + _LLVM_CLEANUP)
        return _llvm_ir_text(_gpu_module(module))


def _expected(index: int, dtype: str):
    return {"i32": index, "i64": index, "i8": index & 0xFF, "i1": index & 1, "f16": np.float16(index),
            "f32": np.float32(index)}[dtype]


def _run_conversion(src: str, dst: str, shape, dtype: str) -> str:
    llir = _lower(_conversion_kernel(src, dst, shape, dtype))
    element = _TYPES[dtype]
    size = 8 if dtype == "i64" else 2 if dtype == "f16" else 4 if dtype in ("i32", "f32") else 1
    memory = Memory()
    run(llir, 4 * 32, memory)
    total = int(np.prod(shape))
    written = {address - param_base(0) for address in memory.global_bytes}
    assert written == set(range(total * size)), "some element was not stored, or stored out of place"
    got = {i: from_bytes(memory.read(memory.global_bytes, param_base(0) + i * size, size), element)
           for i in range(total)}
    wrong = [(i, got[i], _expected(i, dtype)) for i in range(total) if got[i] != _expected(i, dtype)]
    assert not wrong, f"{len(wrong)} elements wrong, e.g. (index, got, want) {wrong[:4]}"
    return llir


PAIRS_2D = [
    (wgmma(128), ROWS_IN_REGISTERS, (128, 128)),
    (wgmma(64), COALESCED, (64, 64)),
    (wgmma(64), COLUMNS, (128, 64)),
    (ROWS_IN_REGISTERS, wgmma(64), (64, 64)),
    (mma_v2((1, 4)), COALESCED, (16, 64)),
    (mma_v2((2, 2)), WIDE, (64, 32)),
    (mma_v2((4, 1)), COLUMNS, (64, 64)),
    (COLUMNS, mma_v2((1, 4)), (32, 64)),
    (COALESCED, COLUMNS, (64, 64)),
    (SQUARES, ROWS_IN_REGISTERS, (32, 128)),
    (WIDE, SQUARES, (16, 64)),
]


@pytest.mark.parametrize("src, dst, shape", PAIRS_2D,
                         ids=[f"{i}-{'x'.join(map(str, p[2]))}" for i, p in enumerate(PAIRS_2D)])
@pytest.mark.parametrize("dtype", ["f32", "f16", "i8", "i64", "i1"])
def test_conversion_lowering_moves_every_element(src, dst, shape, dtype):
    _run_conversion(src, dst, shape, dtype)


@pytest.mark.parametrize("src, dst, n", [
    (sliced(1, mma_v2((2, 2))), sliced(1, COALESCED), 64),
    (sliced(0, wgmma(64)), sliced(0, ROWS_IN_REGISTERS), 64),
    (sliced(0, COLUMNS), sliced(1, WIDE), 128),
    (sliced(1, SQUARES), sliced(0, SQUARES), 32),
])
@pytest.mark.parametrize("dtype", ["f32", "f16", "i64"])
def test_sliced_conversion_lowering_moves_every_element(src, dst, n, dtype):
    _run_conversion(src, dst, (n,), dtype)


def test_accumulator_conversion_lowers_to_vector_accesses():
    """The wgmma -> blocked case at the LLVM level: 32 stores and 32 loads of 4 floats."""
    llir = _run_conversion(wgmma(128), ROWS_IN_REGISTERS, (128, 128), "f32")
    assert len(re.findall(r"store <4 x float> .*addrspace\(3\)", llir)) == 32
    assert len(re.findall(r"load <4 x float>, ptr addrspace\(3\)", llir)) == 32
    assert not re.search(r"(load|store) float.*addrspace\(3\)", llir)


# ----------------------------------------------------------------------------- kernels, every backend

HALF = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16}


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("block_m, block_n, block_k, split_k, warps", [(16, 64, 64, 4, 4), (64, 128, 32, 2, 4),
                                                                       (128, 128, 32, 2, 8)])
def test_splitk_matmul_with_atomics(backend, rng, dtype, block_m, block_n, block_k, split_k, warps):
    m, n, k = 2 * block_m - 3, 2 * block_n - 5, 2 * block_k * split_k
    a = rng.standard_normal((m, k)).astype(HALF[dtype])
    b = rng.standard_normal((k, n)).astype(HALF[dtype])
    # c starts from random values: the atomics add to them.
    start = rng.standard_normal((m, n)).astype(np.float32)
    c = device_array(start.copy(), backend)
    grid = (triton_cdiv(m, block_m), triton_cdiv(n, block_n), split_k)
    splitk_kernel[grid](device_array(a, backend), device_array(b, backend), c, m, n, k, k, n, n,
                        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, SPLIT_K=split_k, num_warps=warps)
    want = start.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), want, rtol=1e-3, atol=1e-2 * np.sqrt(k))


def triton_cdiv(x: int, y: int) -> int:
    return (x + y - 1) // y


@tilec.jit
def transpose_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    # y[j, i] = x[i, j] + x[i, :].sum(): the sum comes back along rows (a sliced layout).
    total = tl.sum(x, axis=1)
    out = tl.trans(x + total[:, None])
    tl.store(y_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], out)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int64])
@pytest.mark.parametrize("m, n", [(32, 64), (128, 16), (64, 64)])
def test_transpose_and_row_sums_through_shared_memory(backend, rng, dtype, m, n):
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(-3, 4, size=(m, n)).astype(dtype)
    else:
        x = rng.standard_normal((m, n)).astype(dtype)
    y = device_array(np.full((n, m), 77, dtype), backend)
    transpose_kernel[(1,)](device_array(x, backend), y, M=m, N=n)
    total = x.astype(np.float64).sum(axis=1, keepdims=True)
    want = (x.astype(np.float64) + total).T
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(to_numpy(y).astype(np.int64), want.astype(np.int64))
    else:
        tol = 2e-2 * np.sqrt(n) if dtype == np.float16 else 1e-4
        np.testing.assert_allclose(to_numpy(y).astype(np.float64), want, rtol=1e-2, atol=tol)


@tilec.jit
def chained_dot_kernel(q_ptr, k_ptr, v_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    """o = (q @ k^T) @ v, the first product's accumulator narrowed and used as an operand
    (attention's shape of conversions: accumulator -> operand)."""
    rows = tl.arange(0, M)[:, None]
    keys = tl.arange(0, N)
    dims = tl.arange(0, D)[None, :]
    q = tl.load(q_ptr + rows * D + dims)
    k = tl.load(k_ptr + keys[:, None] * D + dims)
    v = tl.load(v_ptr + keys[:, None] * D + dims)
    s = tl.dot(q, tl.trans(k))
    o = tl.dot(s.to(tl.float16), v)
    tl.store(o_ptr + rows * D + dims, o)


@pytest.mark.parametrize("m, n, d, warps", [(16, 32, 64, 4), (64, 64, 32, 4), (128, 64, 64, 8)])
def test_accumulator_converted_into_a_dot_operand(backend, rng, m, n, d, warps):
    q = (rng.standard_normal((m, d)) / 4).astype(np.float16)
    k = (rng.standard_normal((n, d)) / 4).astype(np.float16)
    v = rng.standard_normal((n, d)).astype(np.float16)
    o = device_array(np.full((m, d), np.nan, np.float32), backend)
    chained_dot_kernel[(1,)](device_array(q, backend), device_array(k, backend), device_array(v, backend), o,
                             M=m, N=n, D=d, num_warps=warps)
    s = (q.astype(np.float64) @ k.astype(np.float64).T).astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(to_numpy(o).astype(np.float64), s @ v.astype(np.float64), rtol=1e-2, atol=2e-2)
