"""Differential fuzzing: random programs (fuzz_generator.py) on every backend.

- `test_fixed_seeds` (CI, no GPU): a fixed set of programs, each run in the interpreter
  and checked against the generator's independent NumPy reference, and compiled to a
  cubin for sm_80 or sm_90 (catching compiler crashes and verifier errors).
- `test_gpu_campaign` (`-m fuzz`, needs a GPU): TILEC_FUZZ_COUNT programs from seed
  TILEC_FUZZ_SEED on, run in the interpreter and compiled on the GPU, both checked
  against the reference, in batches of TILEC_FUZZ_BATCH per test item (for xdist).
  Every failure prints its seed and kernel; with TILEC_FUZZ_OUT set, each failing seed
  also leaves a standalone reproducer there (seed_<N>.py + .npz) and every batch appends
  one line to summary.txt.

    TILEC_FUZZ_COUNT=10000 TILEC_FUZZ_OUT=$OUT python -m pytest -q -n 16 -m fuzz tests/fuzz
"""
from __future__ import annotations

import os
import time

import pytest

import fuzz_harness

CI_SEEDS = 150
CI_BATCH = 15

CAMPAIGN_COUNT = int(os.environ.get("TILEC_FUZZ_COUNT", "0"))
CAMPAIGN_SEED = int(os.environ.get("TILEC_FUZZ_SEED", "1000000"))
CAMPAIGN_BATCH = int(os.environ.get("TILEC_FUZZ_BATCH", "25"))


@pytest.fixture
def fuzz_cache(monkeypatch, tmp_path):
    """Compile into an empty cache, so that every program really goes through the compiler."""
    from tilec.config import config
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))


def _ptxas_available() -> bool:
    from tilec.backend import toolkit
    try:
        toolkit.ptxas_path()
        return True
    except toolkit.ToolkitError:
        return False


def _run_batch(seeds, targets_of, gpu: bool) -> None:
    out_dir = os.environ.get("TILEC_FUZZ_OUT")
    failures, failed, compared, skipped = [], [], 0, 0
    started = time.perf_counter()
    progress = os.path.join(out_dir, f"running-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.txt") \
        if out_dir else None
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    for seed in seeds:
        if progress:  # names the program a hung launch is stuck in
            with open(progress, "w") as f:
                f.write(f"seed {seed}\n")
        result = fuzz_harness.check(seed, interpret=True, targets=targets_of(seed), gpu=gpu)
        compared += result.compared
        skipped += result.skipped
        if not result.ok:
            report = result.report()
            print(report)
            if out_dir:
                report += "\nreproducer: " + fuzz_harness.write_reproducer(result, out_dir)
            failures.append(report)
            failed.append(seed)
    if out_dir:
        line = (f"seeds {seeds[0]}..{seeds[-1]}: {len(seeds)} programs, {len(failures)} failed {failed}, "
                f"{compared} elements compared, {skipped} not determined, {time.perf_counter() - started:.1f} s\n")
        with open(os.path.join(out_dir, "summary.txt"), "a") as f:
            f.write(line)
    if failures:
        pytest.fail(f"{len(failures)} of {len(seeds)} programs failed:\n\n" + "\n\n".join(failures), pytrace=False)


@pytest.mark.parametrize("first", range(0, CI_SEEDS, CI_BATCH))
def test_fixed_seeds(first, fuzz_cache):
    """Interpreter against the reference, and a compile to cubin (alternately sm_80 and
    sm_90) of every program."""
    compile_ = _ptxas_available()
    _run_batch(list(range(first, first + CI_BATCH)),
               lambda seed: (("sm_80",) if seed % 2 else ("sm_90",)) if compile_ else (), gpu=False)


@pytest.mark.fuzz
@pytest.mark.gpu
@pytest.mark.parametrize("first", range(CAMPAIGN_SEED, CAMPAIGN_SEED + CAMPAIGN_COUNT, CAMPAIGN_BATCH)
                         if CAMPAIGN_COUNT else [pytest.param(None, marks=pytest.mark.skip(
                             reason="set TILEC_FUZZ_COUNT (and TILEC_FUZZ_SEED, TILEC_FUZZ_OUT) to run the campaign"))])
def test_gpu_campaign(first, fuzz_cache):
    """Interpreter and GPU against the reference; every 4th program is also compiled for sm_80."""
    last = min(first + CAMPAIGN_BATCH, CAMPAIGN_SEED + CAMPAIGN_COUNT)
    compile_ = _ptxas_available()
    _run_batch(list(range(first, last)), lambda seed: ("sm_80",) if seed % 4 == 0 and compile_ else (), gpu=True)
