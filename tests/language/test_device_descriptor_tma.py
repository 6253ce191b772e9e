"""Tensor descriptors (`tl.make_tensor_descriptor`) and block pointers (`tl.make_block_ptr`)
made in the kernel from the kernel's own parameters: on sm_90 their 2-D loads and stores
are TMA copies through a tensor map the launcher encodes from the call's values (a
parameter the compiler appends), on both backends the same values. Those TMA cannot be
proven legal for (a base not known to be 16-byte aligned or computed in the kernel)
keep the pointer form; stride arguments are taken on make_tensor_descriptor's contract
(multiples of 16 bytes) and checked at launch.

Inputs are random and outputs poisoned, larger than the described region so that
writes outside it show.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import LaunchError
from tilec.frontend.ir_builder import recipe_positions
from tilec.runtime import tma
from tilec_testing import assert_block_written, device_array, to_numpy, descriptor_scale_kernel as scale_kernel

POISON = -12345.0
BULK_LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
BULK_STORE = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"


@pytest.mark.parametrize("m, n, stride, bm, bn", [
    (37, 48, 64, 16, 32), (64, 24, 32, 32, 8), (130, 70, 80, 64, 64), (100, 92, 96, 64, 32),
    (50, 40, 44, 16, 16)])  # a row stride of 44 floats: not a multiple of 16 elements, 16 bytes though
def test_load_and_store_with_boundary_tiles(backend, rng, m, n, stride, bm, bn):
    """Tiles straddling the last rows and columns: what lies outside reads 0 and is not
    written. On sm_90 the loads are TMA copies (and the stores, where a row spans whole
    16-byte runs)."""
    x = rng.standard_normal((m, stride)).astype(np.float32)
    out = np.full((m + 3, stride), POISON, np.float32)
    x_dev, out_dev = device_array(x, backend), device_array(out, backend)
    grid = (tilec.cdiv(m, bm), tilec.cdiv(n, bn))
    scale_kernel[grid](x_dev, out_dev, m, n, stride, stride, BM=bm, BN=bn)
    got = to_numpy(out_dev)
    assert_block_written(got, x[:, :n] * 2 + 1, POISON, "a descriptor store")


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32])
@pytest.mark.parametrize("bm, bn", [(1, 1024), (2, 512), (4, 256), (8, 1024)])
def test_thin_blocks_wider_than_a_swizzle_row(backend, rng, dtype, bm, bn):
    """Blocks of fewer than 8 rows whose rows span several 128-byte swizzle columns (a
    [1, 1024] block): their column blocks would not land 128-byte aligned (and TMA's
    swizzle by address would disagree with the layout's), so they keep pointers; [8, 1024]
    stays a TMA copy."""
    m, n = 3 * bm, 4 * bn
    if dtype == np.uint8:
        x = rng.integers(0, 255, (m, n)).astype(np.uint8)
    else:
        x = rng.standard_normal((m, n)).astype(dtype)
    out = np.zeros((m, n), dtype) + np.array(7, dtype)
    x_dev, out_dev = device_array(x, backend), device_array(out, backend)
    scale_copy_kernel[(3, 4)](x_dev, out_dev, m, n, BM=bm, BN=bn)
    np.testing.assert_array_equal(to_numpy(out_dev), x)


@tilec.jit
def scale_copy_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    offsets = [tl.program_id(0) * BM, tl.program_id(1) * BN]
    dst.store(offsets, src.load(offsets))


@tilec.jit
def persistent_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                             BK: tl.constexpr, NUM_PROGRAMS: tl.constexpr):
    """Triton tutorial 09's device-descriptor persistent matmul: B given as B^T [N, K]."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_PROGRAMS, flatten=True):
        pid_m, pid_n = tile // tiles_n, tile % tiles_n
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            a = a_desc.load([pid_m * BM, k * BK])
            b = b_desc.load([pid_n * BN, k * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@pytest.mark.parametrize("m, n, k, bm, bn, bk, programs, warps", [
    (96, 80, 64, 32, 32, 32, 3, 4), (200, 144, 96, 64, 64, 32, 5, 4), (300, 272, 208, 128, 128, 64, 3, 8),
    (130, 136, 72, 64, 64, 32, 4, 4)])  # K = 72: strides not a multiple of 16 elements (144 bytes)
def test_persistent_matmul(backend, rng, m, n, k, bm, bn, bk, programs, warps):
    """K's last block and the last tiles run past the tensors (zero fill, dropped stores)."""
    a = rng.standard_normal((m, k)).astype(np.float16)
    bt = rng.standard_normal((n, k)).astype(np.float16)
    c = device_array(np.full((m, n), np.nan, np.float16), backend)
    persistent_matmul_kernel[(programs,)](device_array(a, backend), device_array(bt, backend), c, m, n, k,
                                          BM=bm, BN=bn, BK=bk, NUM_PROGRAMS=programs, num_warps=warps)
    want = a.astype(np.float64) @ bt.T.astype(np.float64)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), want, rtol=1e-2, atol=2e-2)


MATMUL_SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32", "N": "i32:16",
                    "K": "i32:16"}


def test_descriptors_made_in_the_kernel_are_tma_copies_on_hopper():
    """Compiled for sm_90: one tensor-map parameter per descriptor after the kernel's own
    (the launcher appends their values), recipes reading the call's values, and the
    operand loads TMA copies streamed into wgmma rings. For sm_80: no extra parameter."""
    kernel = tilec.compile(persistent_matmul_kernel, signature=MATMUL_SIGNATURE, target="sm_90", num_warps=8,
                           num_stages=3, constexprs={"BM": 128, "BN": 128, "BK": 64, "NUM_PROGRAMS": 4})
    meta, ptx = kernel.metadata, kernel.asm["ptx"]
    assert [name for name, _ in meta.params] == ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "a_ptr.tensormap",
                                                 "b_ptr.tensormap", "c_ptr.tensormap"]
    # The maps are by-value, grid-constant parameters (the launcher's 128 bytes), as a host descriptor's.
    assert [ty for _, ty in meta.params][6:] == ["tensormap"] * 3
    assert len(re.findall(r"\.param \.align 64 \.b8 \w+_param_[678]\[128\]", ptx)) == 3
    # 10 values: 6 parameters and 4 constexprs; the maps' values come after them.
    assert meta.param_indices == [0, 1, 2, 3, 4, 5, 10, 11, 12]
    assert meta.tensormaps[0] == {"base": 0, "shape": [["arg", 3], ["arg", 5]], "strides": [["arg", 5], ["const", 1]],
                                  "block": [128, 64], "bytes": 2, "padding": "zero", "shape_bits": 32,
                                  "name": "a_ptr"}
    assert meta.tensormaps[1]["shape"] == [["arg", 4], ["arg", 5]]
    assert BULK_LOAD in ptx and "mbarrier.try_wait.parity" in ptx and "wgmma.mma_async" in ptx
    # The epilogue's store, in the tile loop: nothing in the kernel reads C, so it waits
    # only until its block was read out of shared memory.
    assert BULK_STORE in ptx and "cp.async.bulk.wait_group.read 0;" in ptx
    assert "cp.async.cg.shared.global" not in ptx and kernel.n_spills == 0
    ampere = tilec.compile(persistent_matmul_kernel, signature=MATMUL_SIGNATURE, target="sm_80", num_warps=8,
                           constexprs={"BM": 128, "BN": 128, "BK": 64, "NUM_PROGRAMS": 4})
    assert len(ampere.metadata.params) == 6 and not ampere.metadata.tensormaps
    assert "cp.async.bulk" not in ampere.asm["ptx"]


def test_descriptors_tma_cannot_be_proven_for_keep_pointers():
    """A base not known to be 16-byte aligned keeps pointers (a stride argument need not
    be proven: tests/language/test_descriptor_stride_promise.py)."""
    kernel = tilec.compile(persistent_matmul_kernel, signature={**MATMUL_SIGNATURE, "a_ptr": "*fp16"},
                           target="sm_90", num_warps=8, num_stages=3,
                           constexprs={"BM": 128, "BN": 128, "BK": 64, "NUM_PROGRAMS": 4})
    names = [name for name, _ in kernel.metadata.params]
    assert names[6:] == ["b_ptr.tensormap", "c_ptr.tensormap"], "a base not known to be 16-byte aligned"


@tilec.jit
def offset_base_kernel(x_ptr, out_ptr, N, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr + N, shape=[N, N], strides=[N, 1], block_shape=[BN, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[N, N], strides=[N, 1], block_shape=[BN, BN])
    dst.store([0, 0], src.load([0, 0]))


def test_computed_base_keeps_pointers_for_its_descriptor():
    """A base computed in the kernel is not an argument the launcher can read: that
    descriptor's load keeps the pointer form; the store's descriptor is a TMA copy."""
    kernel = tilec.compile(offset_base_kernel, signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "N": "i32:16"},
                           target="sm_90", constexprs={"BN": 32})
    assert [name for name, _ in kernel.metadata.params][3:] == ["out_ptr.tensormap"]
    assert BULK_STORE in kernel.asm["ptx"] and BULK_LOAD not in kernel.asm["ptx"]


@tilec.jit
def loaded_base_kernel(ptrs, lds, out_ptr, stride_out, N, BN: tl.constexpr):
    # a grouped GEMM's operand: its address and leading dimension read from memory
    x_ptr = tl.load(ptrs).to(tl.pointer_type(tl.float16))
    ld = tl.load(lds)
    src = tl.make_tensor_descriptor(x_ptr, shape=[N, N], strides=[ld, 1], block_shape=[BN, BN])
    offs = tl.arange(0, BN)
    tl.store(out_ptr + offs[:, None] * stride_out + offs[None, :], src.load([0, 0]))


def test_loaded_base_and_stride_keep_pointers_that_move_16_byte_vectors():
    """make_tensor_descriptor requires a 16-byte aligned base and leading strides that
    are multiples of 16 bytes (Triton's contract, TMA's rules): a base and a stride
    loaded from memory, which keep the pointer form, are taken to meet it, so that form
    reads 8 halves at a time; a stride argument whose pointer form runs (sm_80: no tensor
    map whose encoding checks it at launch) keeps what the specialisation proved."""
    # The shape is a multiple of 16: the bounds mask does not cut the vectors short.
    signature = {"ptrs": "*u64:16", "lds": "*i32:16", "out_ptr": "*fp16", "stride_out": "i32", "N": "i32:16"}
    kernel = tilec.compile(loaded_base_kernel, signature=signature, target="sm_90", constexprs={"BN": 64})
    ptx = kernel.asm["ptx"]
    assert BULK_LOAD not in ptx
    assert "ld.global.v4.b32" in ptx and "ld.global.b16" not in ptx
    unaligned = tilec.compile(scale_kernel, signature={"x_ptr": "*fp16:16", "out_ptr": "*fp16:16", "M": "i32:16",
                                                       "N": "i32:16", "stride_x": "i32", "stride_out": "i32:16"},
                              target="sm_80", constexprs={"BM": 32, "BN": 32})
    ptx = unaligned.asm["ptx"]
    assert BULK_LOAD not in ptx and "ld.global.v4.b32" not in ptx and "ld.global.b16" in ptx


def test_loaded_base_descriptor_values(backend, rng):
    """The same kernel computes the same block on both backends (the loaded pointer is
    a real, aligned address)."""
    n, bn = 80, 64
    x = device_array(rng.standard_normal((n, n)).astype(np.float16), backend)
    ptrs = device_array(np.array([_address(x)], dtype=np.uint64), backend)
    lds = device_array(np.array([n], dtype=np.int32), backend)
    out = device_array(np.full((bn, bn + 3), POISON, dtype=np.float16), backend)
    loaded_base_kernel[(1,)](ptrs, lds, out, bn + 3, n, BN=bn)
    got = to_numpy(out)
    np.testing.assert_array_equal(got[:, :bn], to_numpy(x)[:bn, :bn])
    assert (got[:, bn:] == np.float16(POISON)).all()


def _address(array) -> int:
    return array.data_ptr() if hasattr(array, "data_ptr") else array.ctypes.data


RECIPE = {"base": 0, "shape": [["arg", 1], ["const", 64]], "strides": [["arg", 2], ["const", 1]], "block": [32, 32],
          "bytes": 4, "padding": "zero", "name": "x_ptr"}


def test_recipe_reads_the_call_values():
    """Without a GPU: a recipe's base is the address (an int as the fast path passes it,
    or a GPU array's), shape entries are int32 as make_tensor_descriptor takes them."""
    assert tma.kernel_map_values(RECIPE, [4096, 100, 64]) == (4096, (100, 64), (64, 1))
    class DeviceArray:  # what the slow path passes: a GPU array
        def data_ptr(self):
            return 8192
    assert tma.kernel_map_values(RECIPE, [DeviceArray(), 100, 64])[0] == 8192


@pytest.mark.parametrize("values, words", [
    ([4096, 0, 64], "shape [0, 64]"),
    ([4096, (1 << 32) + 5, 64], None),   # int32: 5 rows, as in the kernel
    ([4096, -3, 64], "shape [-3, 64]"),
    ([4096, 8, 1 << 40], "strides [1099511627776, 1]"),
])
def test_recipe_values_tma_cannot_take_are_a_launch_error(values, words):
    if words is None:
        assert tma.kernel_map_values(RECIPE, values)[1] == (5, 64)
        return
    with pytest.raises(LaunchError) as caught:
        tma.kernel_map_values(RECIPE, values)
    assert words in str(caught.value) and "'x_ptr'" in str(caught.value)


@pytest.mark.gpu
def test_empty_grid_launches_nothing_whatever_the_shape(rng):
    """A launch over an empty grid makes no tensor map, so a zero-sized tensor is fine
    there; over a non-empty grid it is a LaunchError naming the argument."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("TMA needs an sm_90 GPU")
    x = torch.randn(64, 64, device="cuda")
    out = torch.full((64, 64), POISON, device="cuda")
    scale_kernel[(0, 1)](x, out, 0, 64, 64, 64, BM=32, BN=32)
    with pytest.raises(LaunchError, match="'x_ptr'"):
        scale_kernel[(1, 1)](x, out, 0, 64, 64, 64, BM=32, BN=32)
    assert (out == POISON).all()


@tilec.jit
def block_pointer_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The block-pointer matmul of Triton's tests: both operands advanced along K."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (stride_am, stride_ak), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_bp, boundary_check=(0, 1))
        b = tl.load(b_bp, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps, stages", [
    (200, 144, 96, 64, 64, 32, 4, 3), (300, 272, 208, 128, 128, 64, 8, 3), (130, 136, 72, 64, 64, 32, 4, 2)])
def test_block_pointer_matmul(backend, rng, m, n, k, bm, bn, bk, warps, stages):
    """Boundary tiles on every side; K = 72 and N = 136 leave strides that are not
    multiples of 16 elements (the pointer form for those operands)."""
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = device_array(np.full((m + 2, n), np.nan, np.float16), backend)
    grid = (tilec.cdiv(m, bm), tilec.cdiv(n, bn))
    block_pointer_matmul_kernel[grid](device_array(a, backend), device_array(b, backend), c, m, n, k, k, 1, n, 1, n,
                                      BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)
    got = to_numpy(c).astype(np.float64)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got[:m], want, rtol=1e-2, atol=2e-2)
    assert np.isnan(got[m:]).all(), "a block-pointer store wrote past the tensor's rows"


BLOCK_POINTER_SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32", "N": "i32:16",
                           "K": "i32:16", "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}


def test_block_pointers_are_tma_copies_on_hopper():
    """Compiled for sm_90: the operand loads are TMA copies streamed into wgmma rings (the
    advanced offsets carried by the loop), the epilogue's store a TMA store; the map's
    shape entries are read as int64, a block pointer's width."""
    kernel = tilec.compile(block_pointer_matmul_kernel, signature=BLOCK_POINTER_SIGNATURE, target="sm_90",
                           num_stages=3, constexprs={"BM": 128, "BN": 128, "BK": 64, "stride_ak": 1, "stride_bn": 1})
    ptx, ttgir = kernel.asm["ptx"], kernel.asm["ttgir"]
    assert [name for name, _ in kernel.metadata.params][-3:] == ["a_ptr.tensormap", "b_ptr.tensormap",
                                                                  "c_ptr.tensormap"]
    assert all(r["shape_bits"] == 64 for r in kernel.metadata.tensormaps)
    assert ttgir.count('"tilegpu.tma_copy_global_to_local"') == 6  # two rings: two prologue stages and the body
    assert BULK_LOAD in ptx and BULK_STORE in ptx and "cp.async.cg.shared.global" not in ptx
    assert "wgmma.mma_async" in ptx and kernel.n_spills == 0


@tilec.jit
def volatile_block_kernel(x_ptr, out_ptr, N, BN: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (N, N), (N, 1), (0, 0), (BN, BN), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (N, N), (N, 1), (0, 0), (BN, BN), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1), volatile=True), boundary_check=(0, 1))


def test_volatile_block_pointer_load_keeps_pointers():
    kernel = tilec.compile(volatile_block_kernel, signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16",
                                                             "N": "i32:16"}, target="sm_90", constexprs={"BN": 32})
    assert [name for name, _ in kernel.metadata.params][3:] == ["out_ptr.tensormap"]
    assert "ld.volatile.global" in kernel.asm["ptx"] and BULK_LOAD not in kernel.asm["ptx"]


def test_block_pointer_recipe_reads_int64_shapes():
    recipe = {**RECIPE, "shape_bits": 64}
    assert tma.kernel_map_values(recipe, [4096, (1 << 31) + 5, 64])[1] == ((1 << 31) + 5, 64)
    with pytest.raises(LaunchError, match="block pointer"):
        tma.kernel_map_values(recipe, [4096, 1 << 33, 64])


@tilec.jit
def accumulate_rows_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, STEPS: tl.constexpr):
    """Read-modify-write through one descriptor in a loop: each step must see the last."""
    desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid = tl.program_id(0)
    for _ in range(STEPS):
        desc.store([pid * BM, 0], desc.load([pid * BM, 0]) + src.load([pid * BM, 0]))


def test_a_loop_reading_what_it_stored_sees_every_store(backend, rng):
    """The store is followed (next iteration) by a load of the same tensor: it must wait
    for its writes (on sm_90 it keeps the pointer form, as a store in a loop that waits
    for its writes does)."""
    x = rng.standard_normal((64, 32)).astype(np.float32)
    start = rng.standard_normal((64, 32)).astype(np.float32)
    out = device_array(start, backend)
    accumulate_rows_kernel[(2,)](device_array(x, backend), out, 64, 32, BM=32, BN=32, STEPS=3)
    np.testing.assert_allclose(to_numpy(out), start + 3 * x, rtol=1e-6, atol=1e-6)


@tilec.jit
def store_then_count_kernel(x_ptr, out_ptr, counter_ptr, N, BN: tl.constexpr, ATOMIC: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[N, N], strides=[N, 1], block_shape=[BN, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[N, N], strides=[N, 1], block_shape=[BN, BN])
    dst.store([0, 0], src.load([0, 0]) * 2.0)
    if ATOMIC:  # another program may wait on the counter for the data: the writes land first
        tl.atomic_add(counter_ptr, 1)
    else:  # a different tensor: the store need not wait for its writes
        tl.store(counter_ptr, 1)


@pytest.mark.parametrize("atomic, read_wait", [(True, False), (False, True)])
def test_what_follows_a_tma_store_sets_its_wait(atomic, read_wait):
    kernel = tilec.compile(store_then_count_kernel, target="sm_90", constexprs={"BN": 32, "ATOMIC": atomic},
                           signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "counter_ptr": "*i32:16",
                                      "N": "i32:16"})
    ptx = kernel.asm["ptx"]
    assert BULK_STORE in ptx
    assert ("cp.async.bulk.wait_group.read 0;" in ptx) == read_wait
    assert ("cp.async.bulk.wait_group 0;" in ptx) == (not read_wait)


def test_a_store_in_a_loop_that_must_wait_for_its_writes_keeps_pointers():
    kernel = tilec.compile(accumulate_rows_kernel, target="sm_90", constexprs={"BM": 32, "BN": 32, "STEPS": 3},
                           signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "M": "i32:16", "N": "i32:16"})
    assert BULK_STORE not in kernel.asm["ptx"] and BULK_LOAD in kernel.asm["ptx"]


@tilec.jit
def one_tile_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 09's one-tile-per-program descriptor matmul (B given as B^T)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b_desc.load([pid_n * BN, k * BK]).T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@pytest.mark.gpu
def test_epilogue_waits_for_both_warpgroups(rng):
    """8 warps are two warpgroups, each waiting for its own wgmma groups after the loop;
    the store's staging buffer reuses the operand rings' bytes, so it is written only
    after a barrier following that wait (without it, one warpgroup overwrote a ring the
    other's last wgmma was still reading: wrong tiles, one launch in a few)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("wgmma needs an sm_90 GPU")
    size = 2048
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    bt = torch.randn(size, size, device="cuda", dtype=torch.float16)
    want = (a.double() @ bt.double().T)
    for _ in range(4):
        c = torch.full((size, size), float("nan"), device="cuda", dtype=torch.float16)
        one_tile_matmul_kernel[(size // 128, size // 256)](a, bt, c, size, size, size, BM=128, BN=256, BK=64,
                                                          num_warps=8, num_stages=3)
        torch.testing.assert_close(c.double(), want, rtol=2e-2, atol=0.25)


@tilec.jit
def flattened_rows_kernel(x_ptr, out_ptr, Z, H, ROWS: tl.constexpr, N, BM: tl.constexpr, BN: tl.constexpr):
    # tutorial 06's descriptors over [Z * H * N_CTX, HEAD_DIM]: the shape computed in the kernel
    rows = Z * H * ROWS
    src = tl.make_tensor_descriptor(x_ptr, shape=[rows, N - 16], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[rows, N - 16], strides=[N, 1], block_shape=[BM, BN])
    offsets = [tl.program_id(0) * BM, tl.program_id(1) * BN]
    dst.store(offsets, src.load(offsets) * 2.0)


FLATTENED_SIGNATURE = {"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "Z": "i32", "H": "i32", "N": "i32:16"}


def test_shapes_computed_from_parameters_are_tma_copies():
    """A shape the kernel computes from its parameters and constants with +, - and *
    (`Z * H * ROWS`, `N - 16`) is a recipe expression the launcher evaluates: the copies
    stay TMA copies, and the recipe reads the values the kernel's arithmetic reads."""
    kernel = tilec.compile(flattened_rows_kernel, signature=FLATTENED_SIGNATURE, target="sm_90",
                           constexprs={"ROWS": 48, "BM": 32, "BN": 32})
    recipe = kernel.metadata.tensormaps[0]
    assert recipe["shape"] == [["mul", 32, ["mul", 32, ["arg", 2], ["arg", 3]], ["const", 48]],
                               ["sub", 32, ["arg", 5], ["const", 16]]]
    assert [name for name, _ in kernel.metadata.params][5:] == ["x_ptr.tensormap", "out_ptr.tensormap"]
    assert BULK_LOAD in kernel.asm["ptx"] and BULK_STORE in kernel.asm["ptx"]
    values = [4096, 8192, 3, 5, 48, 80, 32, 32]  # x, out, Z, H, ROWS, N, BM, BN
    assert tma.kernel_map_values(recipe, values) == (4096, (3 * 5 * 48, 64), (80, 1))


def test_recipe_expressions_wrap_as_the_kernel_does():
    """Each operation of an expression wraps at its own width, as the kernel's does."""
    product = ["mul", 32, ["arg", 0], ["arg", 1]]
    assert tma.recipe_value(product, 64, [1 << 16, 1 << 16]) == 0
    assert tma.recipe_value(["add", 64, product, ["const", 7]], 64, [3, 5]) == 22
    assert tma.recipe_value(["sub", 32, ["const", 5], ["arg", 0]], 32, [9]) == -4
    assert recipe_positions(["add", 32, ["arg", 0], ["mul", 32, ["arg", 1], ["const", 2]]], [4, 7]) == \
        ["add", 32, ["arg", 4], ["mul", 32, ["arg", 7], ["const", 2]]]
    assert tma.recipe_arguments(["add", 32, ["arg", 4], ["mul", 32, ["arg", 7], ["const", 2]]]) == {4, 7}


@pytest.mark.parametrize("z, h", [(1, 1), (2, 3)])
def test_computed_shape_descriptor_values(backend, rng, z, h):
    """Tiles past the computed shape (rows Z * H * 48, columns N - 16) read 0 and are not
    written, on both backends."""
    n, rows = 80, z * h * 48
    x = rng.standard_normal((rows + 8, n)).astype(np.float32)
    out = np.full((rows + 8, n), POISON, np.float32)
    x_dev, out_dev = device_array(x, backend), device_array(out, backend)
    flattened_rows_kernel[(tilec.cdiv(rows, 32), tilec.cdiv(n - 16, 32))](x_dev, out_dev, z, h, 48, n, BM=32, BN=32)
    got = to_numpy(out_dev)
    np.testing.assert_array_equal(got[:rows, :n - 16], x[:rows, :n - 16] * 2)
    assert (got[rows:] == POISON).all() and (got[:, n - 16:] == POISON).all()
