"""Persistent pointer matmuls with the next tile's prologue issued before this tile's
epilogue (passes/overlap_prologue.py, TILEC_OVERLAP_PROLOGUE=1) compute what they compute
without it: several tiles a program, programs with no tile at all, M and N not tile
multiples, K of fewer steps than the prologue issues, 2 to 4 stages, wgmma and mma.sync.
Random inputs, outputs poisoned with NaN, an fp64 reference."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from tilec.config import config

pytestmark = pytest.mark.gpu

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "codegen"))

CASES = [(m, n, k, programs) for (m, n, k) in ((256, 256, 64), (300, 200, 200), (640, 384, 1024), (130, 1000, 136))
         for programs in (3, 40)]


@pytest.mark.parametrize("wgmma", [True, False])
@pytest.mark.parametrize("num_warps,num_stages,bn", [(4, 2, 128), (4, 3, 128), (8, 4, 128), (8, 3, 256)])
@pytest.mark.parametrize("m,n,k,programs", CASES)
def test_overlapped_prologue_matches_the_reference(monkeypatch, m, n, k, programs, num_warps, num_stages, bn, wgmma):
    import torch
    from test_overlap_prologue import persistent_matmul
    monkeypatch.setattr(config, "overlap_prologue", True)
    monkeypatch.setattr(config, "wgmma", wgmma)
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    c = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
    persistent_matmul[(programs,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, m, n, k, k, k, n,
                                   BM=128, BN=bn, BK=64, PROGRAMS=programs, num_warps=num_warps,
                                   num_stages=num_stages)
    torch.cuda.synchronize()
    got = c.cpu().numpy().astype(np.float64)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    assert not np.isnan(got).any(), f"{int(np.isnan(got).sum())} outputs never written"
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=2e-2 * np.sqrt(k))
