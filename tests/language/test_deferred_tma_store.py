"""TMA stores in loops whose wait for the read-out of their block moves to the store's next
execution (tilegpu-allocate-shared-memory's deferral): every block a loop stores lands,
however many iterations run (none, one, many), with several stores per iteration, in
nested loops and with the stored block computed from shared-memory work in between (a
reduction's scratch, a ring) that must not overwrite a block still being read out.

On the GPU these run the deferred form on sm_90; in the interpreter and compiled for other
targets they check the same results. Inputs are random, outputs poisoned.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.tools.tensor_descriptor import TensorDescriptor
from tilec_testing import device_array, to_numpy

POISON = -12345.0


@tilec.jit
def strided_tiles_kernel(x_desc, out_desc, other_desc, tiles, NUM_PROGRAMS: tl.constexpr, BM: tl.constexpr,
                         BN: tl.constexpr):
    """Program p stores tiles p, p + NUM_PROGRAMS, ... of a column of tiles, twice each
    (scaled into `out`, row-normalised by a cross-warp reduction into `other`)."""
    for tile in tl.range(tl.program_id(0), tiles, NUM_PROGRAMS):
        x = x_desc.load([tile * BM, 0])
        out_desc.store([tile * BM, 0], x * 3.0 - 1.0)
        total = tl.sum(x, axis=1)
        other_desc.store([tile * BM, 0], x - total[:, None] / BN)


@pytest.mark.parametrize("tiles, programs", [(7, 3), (2, 4), (1, 1), (12, 5)])
def test_every_tile_of_a_strided_loop_lands(backend, rng, tiles, programs):
    """(2, 4): programs 2 and 3 run no iteration; (1, 1): one iteration only."""
    bm, bn = 64, 64
    x = rng.standard_normal((tiles * bm, bn)).astype(np.float32)
    out = device_array(np.full(x.shape, POISON, np.float32), backend)
    other = device_array(np.full(x.shape, POISON, np.float32), backend)
    x_dev = device_array(x, backend)
    strided_tiles_kernel[(programs,)](TensorDescriptor.from_tensor(x_dev, [bm, bn]),
                                      TensorDescriptor.from_tensor(out, [bm, bn]),
                                      TensorDescriptor.from_tensor(other, [bm, bn]), tiles, NUM_PROGRAMS=programs,
                                      BM=bm, BN=bn, num_warps=4)
    np.testing.assert_allclose(to_numpy(out), x * 3.0 - 1.0, rtol=1e-6, atol=1e-6)
    want = x.astype(np.float64) - x.astype(np.float64).sum(axis=1, keepdims=True) / bn
    np.testing.assert_allclose(to_numpy(other), want, rtol=1e-5, atol=1e-5)


@tilec.jit
def nested_matmul_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One program per row of tiles: an inner loop over the row's tiles, each with its own
    K loop (a ring inside the loop), stores each tile; the store sits two loops deep."""
    pid_m = tl.program_id(0)
    for pid_n in range(0, tl.cdiv(N, BN)):
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b_desc.load([k * BK, pid_n * BN]), acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps", [(192, 320, 160, 64, 64, 32, 4), (256, 384, 96, 128, 128, 32, 8)])
def test_tiles_stored_from_a_nested_loop(backend, rng, m, n, k, bm, bn, bk, warps):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = device_array(np.full((m, n), np.nan, np.float16), backend)
    a_dev, b_dev = device_array(a, backend), device_array(b, backend)
    nested_matmul_kernel[(m // bm,)](TensorDescriptor.from_tensor(a_dev, [bm, bk]),
                                     TensorDescriptor.from_tensor(b_dev, [bk, bn]),
                                     TensorDescriptor.from_tensor(c, [bm, bn]), m, n, k, BM=bm, BN=bn, BK=bk,
                                     num_warps=warps)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), want, rtol=1e-2, atol=2e-2)


def test_deferred_wait_in_the_ptx():
    """Compiled for sm_90: the strided loop's stores issue without waiting; each waits for
    the read-out before writing its block again, and one wait follows the loop."""
    x = np.zeros((64 * 7, 64), np.float32)
    descs = [TensorDescriptor.from_tensor(x, [64, 64]) for _ in range(3)]
    kernel = strided_tiles_kernel.warmup(*descs, 7, NUM_PROGRAMS=3, BM=64, BN=64, grid=(3,), target="sm_90")
    ptx = kernel.asm["ptx"]
    assert ptx.count("cp.async.bulk.commit_group") == 2
    assert ptx.count("cp.async.bulk.wait_group.read 0") == 3  # before each store's write, after the loop
    assert "cp.async.bulk.wait_group 0" not in ptx
