"""fp32 atomic adds several at a time on sm_90 (`atom.add.v4.f32`, PTX 8.1): a split-K
epilogue's atomics take a coalesced layout with 4 consecutive elements per thread, as
Triton's do; masks constant over those runs keep them whole. Results on both backends."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def add_tile_kernel(out_ptr, x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    offsets = rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + offsets, x * 2.0, mask=mask)


SIGNATURE = {"out_ptr": "*fp32:16", "x_ptr": "*fp32:16", "M": "i32", "N": "i32:16"}


def test_fp32_adds_go_four_at_a_time_on_sm_90():
    ptx = tilec.compile(add_tile_kernel, signature=SIGNATURE, constexprs={"BM": 64, "BN": 64},
                        target="sm_90a").asm["ptx"]
    assert ".version 8.1" in ptx
    assert re.findall(r"atom\.global\.gpu\.acq_rel\.add\.v4\.f32", ptx)
    assert not re.findall(r"atom\.global\.gpu\.acq_rel\.add\.f32", ptx)


def test_older_targets_keep_scalar_atomics():
    ptx = tilec.compile(add_tile_kernel, signature=SIGNATURE, constexprs={"BM": 64, "BN": 64},
                        target="sm_80").asm["ptx"]
    assert "add.v4.f32" not in ptx and "atom.global.gpu.acq_rel.add.f32" in ptx


@pytest.mark.parametrize("m, n", [(100, 64), (64, 48)])
def test_vector_atomic_adds_sum_every_program(backend, rng, m, n):
    """Three launches add into one output; masked-off rows and columns stay untouched."""
    x = rng.standard_normal((m, n)).astype(np.float32)
    start = rng.standard_normal((m, n)).astype(np.float32)
    out = device_array(start.copy(), backend)
    x_dev = device_array(x, backend)
    for _ in range(3):
        add_tile_kernel[(tilec.cdiv(m, 32),)](out, x_dev, m, n, BM=32, BN=64)
    np.testing.assert_allclose(to_numpy(out), start + 6 * x, rtol=1e-6, atol=1e-5)
