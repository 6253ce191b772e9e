"""Stride arguments of `tl.make_tensor_descriptor` are taken on the descriptor's contract
(every stride but the last a multiple of 16 bytes, as Triton requires), not only where
the specialisation proves it (an integer divisible by 16 elements): a [1000, 3000] fp16
operand's row stride of 3000 elements (6000 bytes) is a TMA copy on sm_90. The launcher,
which reads the strides to encode the tensor map, checks the promise at every launch.

Block pointers (`tl.make_block_ptr`) have no such contract: theirs keep what is proven.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import LaunchError
from tilec.runtime import tma
from tilec_testing import device_array, to_numpy

BULK_LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
BULK_STORE = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
POISON = -12345.0


@tilec.jit
def persistent_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                             BK: tl.constexpr, NUM_PROGRAMS: tl.constexpr):
    """The corpus's device-descriptor persistent matmul (B given as B^T [N, K])."""
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
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_ptr.dtype.element_ty))


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_a_stride_not_divisible_by_16_elements_is_a_tma_copy(dtype):
    """K = 3000 (an `i32` argument, not `i32:16`): the operands' loads are TMA copies
    streamed into wgmma rings, as with K = 4096; before, they took the pointer form with
    element-wise loads (255 registers, 1,152 bytes of spills at 128x128x64, 4 warps)."""
    signature = {"a_ptr": f"*{dtype}:16", "b_ptr": f"*{dtype}:16", "c_ptr": f"*{dtype}:16", "M": "i32",
                 "N": "i32:16", "K": "i32"}
    kernel = tilec.compile(persistent_matmul_kernel, signature=signature, target="sm_90", num_warps=4, num_stages=3,
                           constexprs={"BM": 128, "BN": 128, "BK": 64, "NUM_PROGRAMS": 132})
    assert [name for name, _ in kernel.metadata.params][6:] == ["a_ptr.tensormap", "b_ptr.tensormap",
                                                                 "c_ptr.tensormap"]
    assert kernel.metadata.tensormaps[0]["strides"] == [["arg", 5], ["const", 1]]
    ptx = kernel.asm["ptx"]
    assert BULK_LOAD in ptx and BULK_STORE in ptx and "wgmma.mma_async" in ptx
    assert "ld.global.b16" not in ptx and "ld.global.v4" not in ptx
    assert "cp.async.cg.shared.global" not in ptx and kernel.n_spills == 0


@tilec.jit
def block_pointer_copy_kernel(x_ptr, out_ptr, M, N, stride_x, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (M, N), (stride_x, 1), (0, 0), (BM, BN), (1, 0))
    offs_m, offs_n = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], tl.load(src, boundary_check=(0, 1)))


def test_a_block_pointer_stride_keeps_what_is_proven():
    """No contract for block pointers: a stride argument not divisible by 16 keeps the
    pointer form (no tensor map); one divisible by 16 gets a TMA copy."""
    signature = {"x_ptr": "*fp16:16", "out_ptr": "*fp16:16", "M": "i32:16", "N": "i32:16", "stride_x": "i32"}
    loose = tilec.compile(block_pointer_copy_kernel, signature=signature, target="sm_90",
                          constexprs={"BM": 32, "BN": 32})
    assert not loose.metadata.tensormaps and BULK_LOAD not in loose.asm["ptx"]
    proven = tilec.compile(block_pointer_copy_kernel, signature={**signature, "stride_x": "i32:16"}, target="sm_90",
                           constexprs={"BM": 32, "BN": 32})
    assert len(proven.metadata.tensormaps) == 1 and BULK_LOAD in proven.asm["ptx"]


RECIPE = {"base": 0, "shape": [["arg", 1], ["arg", 2]], "strides": [["arg", 2], ["const", 1]], "block": [64, 64],
          "bytes": 2, "padding": "zero", "shape_bits": 32, "name": "a_ptr"}


@pytest.mark.parametrize("stride, ok", [(3000, True), (3008, True), (8, True), (3001, False), (3004, False),
                                        (4, False)])
def test_launch_checks_the_promised_strides(stride, ok):
    """Without a GPU: the launcher's reading of a recipe accepts 16-byte strides and
    refuses others with a LaunchError naming the base argument and the rule."""
    values = [4096, 1000, stride]
    if ok:
        assert tma.kernel_map_values(RECIPE, values) == (4096, (1000, stride), (stride, 1))
        return
    with pytest.raises(LaunchError) as caught:
        tma.kernel_map_values(RECIPE, values)
    message = str(caught.value)
    assert "'a_ptr'" in message and f"[{stride}, 1]" in message and "multiple of 16 bytes" in message


@pytest.mark.parametrize("m, n, k, bm, bn, bk, programs, warps", [
    (100, 80, 200, 64, 64, 64, 3, 4),      # K = 200: 400-byte rows, 8 elements past a multiple of 16
    (130, 144, 120, 128, 128, 64, 2, 8),   # K = 120, the last K block half outside
    (37, 48, 40, 32, 32, 32, 4, 4)])
def test_persistent_matmul_values(backend, rng, m, n, k, bm, bn, bk, programs, warps):
    """The same products on both backends with such strides (the boundary tiles and K's
    last block read zeros, stores past M and N are dropped)."""
    a = rng.standard_normal((m, k)).astype(np.float16)
    bt = rng.standard_normal((n, k)).astype(np.float16)
    c = device_array(np.full((m, n), np.nan, np.float16), backend)
    persistent_matmul_kernel[(programs,)](device_array(a, backend), device_array(bt, backend), c, m, n, k,
                                          BM=bm, BN=bn, BK=bk, NUM_PROGRAMS=programs, num_warps=warps)
    want = a.astype(np.float64) @ bt.T.astype(np.float64)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), want, rtol=1e-2, atol=2e-2)


@tilec.jit
def strided_copy_kernel(x_ptr, out_ptr, M, N, stride_x, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN])
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], src.load([tl.program_id(0) * BM, 0]))


def test_strided_copy_values(backend, rng):
    """A float32 row stride of 36 elements (144 bytes), a view of 24 columns read in
    blocks of 32: the rows' first 24 columns, zeros past them."""
    m, n, stride, bm, bn = 48, 24, 36, 16, 32
    x = rng.standard_normal((m, stride)).astype(np.float32)
    out = device_array(np.full((m, bn), POISON, np.float32), backend)
    strided_copy_kernel[(m // bm,)](device_array(x, backend), out, m, n, stride, BM=bm, BN=bn)
    want = np.zeros((m, bn), np.float32)
    want[:, :n] = x[:, :n]
    np.testing.assert_array_equal(to_numpy(out), want)


@pytest.mark.gpu
def test_a_stride_breaking_the_contract_is_a_launch_error(rng):
    """On an sm_90 GPU: a row stride of 37 halves (74 bytes) cannot be a TMA map's; the
    launch says so (Triton's kernel would fault or read wrong rows)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("TMA needs an sm_90 GPU")
    x = torch.randn(32, 37, device="cuda", dtype=torch.float16)
    out = torch.full((32, 32), POISON, device="cuda", dtype=torch.float16)
    with pytest.raises(LaunchError, match="'x_ptr'.*multiple of 16 bytes"):
        strided_copy_kernel[(2,)](x, out, 32, 32, 37, BM=16, BN=32)
    assert (out == POISON).all()
