"""Warp-specialised TMA + wgmma matmuls (TILEC_WARP_SPECIALIZE=1) compute what the plain
pipeline computes: persistent (fused tile and K loops) and K-loop matmuls, and an
attention forward (two dots a step), 4 and 8 consumer warps, 2 to 4 stages, K of fewer steps than slots, as many, and with a tail,
M and N not tile multiples, several tiles a program; a causal attention whose first of two
marked loops is specialised (none of its steps in the first row block). Each case runs in a child process
under a time limit: a mistake in the mbarriers' phases hangs the kernel rather than
failing it. Random inputs, poisoned outputs, an fp64 reference."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

_CHILD = r"""
import json, sys
import numpy as np
import torch
sys.path.insert(0, {codegen!r})
from test_warp_specialize_pipeline import persistent_matmul, k_loop_matmul, attention_fwd, attention_causal
results = []
for which, m, n, k, warps, stages in {cases!r}:
    print("case", which, m, n, k, warps, stages, file=sys.stderr, flush=True)  # the last one shows a hang's case
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    if which in ("attention", "causal"):  # m programs' worth of (batch x head) blocks of n rows, head dim k
        q, kk, v = (rng.standard_normal((m * n, k)).astype(np.float16) for _ in range(3))
        o = torch.full((m * n, k), float("nan"), dtype=torch.float16, device="cuda")
        kernel = attention_fwd if which == "attention" else attention_causal
        kernel[(n // 128, m)](*(torch.from_numpy(t).cuda() for t in (q, kk, v)), o, m * n, n, 0.125, D=k, BM=128,
                              BN=64, num_warps=warps, num_stages=stages)
        torch.cuda.synchronize()
        got = o.cpu().numpy().astype(np.float64).reshape(m, n, k)
        q3, k3, v3 = (t.astype(np.float64).reshape(m, n, k) for t in (q, kk, v))
        s_ = q3 @ k3.transpose(0, 2, 1) * 0.125
        if which == "causal":  # key j > query i masked (the program of rows 0-127 runs no off-band step)
            s_ = np.where(np.tril(np.ones((n, n), bool)), s_, -np.inf)
        p_ = np.exp(s_ - s_.max(-1, keepdims=True))
        want = (p_ / p_.sum(-1, keepdims=True)) @ v3
        err = float(np.max(np.abs(got - want))) if not np.isnan(got).any() else float("inf")
        results.append([which, m, n, k, warps, stages, err])
        continue
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    c = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
    ad, bd = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    if which == "persistent":
        programs = 3
        persistent_matmul[(programs,)](ad, bd, c, m, n, k, BM=128, BN=128, BK=64, GROUP=2, PROGRAMS=programs, WS=True,
                                        num_warps=warps, num_stages=stages)
    else:
        k_loop_matmul[(-(-m // 128), -(-n // 128))](ad, bd, c, m, n, k, BM=128, BN=128, BK=64, num_warps=warps,
                                                      num_stages=stages)
    torch.cuda.synchronize()
    want = a.astype(np.float64) @ b.astype(np.float64).T
    got = c.cpu().numpy().astype(np.float64)
    err = float(np.nanmax(np.abs(got - want) / (1 + np.abs(want)))) if not np.isnan(got).any() else float("inf")
    results.append([which, m, n, k, warps, stages, err])
print(json.dumps(results))
"""

CASES = [(which, m, n, k, warps, stages)
         for which in ("persistent", "k_loop")
         for (m, n, k) in ((256, 256, 64), (300, 200, 200), (640, 384, 1024), (130, 1000, 136))
         for warps in (4, 8)
         for stages in (2, 3, 4)]
# attention: (batch x heads, rows each, head dim)
CASES += [(which, bh, n_ctx, 64, warps, stages) for which in ("attention", "causal")
          for (bh, n_ctx) in ((3, 256), (2, 1024)) for warps in (4, 8) for stages in (2, 3)]


@pytest.mark.parametrize("which", ["persistent", "k_loop", "attention", "causal"])
def test_warp_specialized_matmuls_match_the_reference(tmp_path, which):
    codegen = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "codegen")
    cases = [case for case in CASES if case[0] == which]
    script = tmp_path / "child.py"
    script.write_text(_CHILD.format(codegen=codegen, cases=cases))
    env = dict(os.environ, TILEC_WARP_SPECIALIZE="1", TILEC_CACHE_DIR=str(tmp_path / "cache"))
    try:
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=240)
    except subprocess.TimeoutExpired as error:
        started = (error.stderr.decode() if isinstance(error.stderr, bytes) else error.stderr or "").splitlines()
        last = [line for line in started if line.startswith("case ")][-1:]
        pytest.fail(f"{which}: a warp-specialised kernel did not finish in 240 s (a hang: mbarrier phases?); "
                    f"last started: {last}")
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    bad = [r for r in results if not r[-1] < 2e-2]
    assert len(results) == len(cases) and not bad, bad
