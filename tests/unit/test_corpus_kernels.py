"""Every kernel of the benchmark corpus (benchmarks/corpus/k_*.py) runs correctly in the
interpreter at its tiny shapes, so that the corpus itself is tested in CI; its speed
beside Triton is measured on the GPU by benchmarks/corpus/run.py."""
from __future__ import annotations

import glob
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "benchmarks", "corpus")
FILES = sorted(glob.glob(os.path.join(CORPUS, "k_*.py")))

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def corpus():
    """benchmarks/corpus/run.py (its loader and checker)."""
    sys.path[:0] = [CORPUS, os.path.dirname(CORPUS)]
    import run
    return run


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(f)[2:-3] for f in FILES])
def test_corpus_kernel_in_the_interpreter(corpus, monkeypatch, path):
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    module = corpus.load(path, "tilec")
    problems = []
    count = 0
    for case in module.cases("cpu", "tiny"):
        count += 1
        torch.manual_seed(0)
        inputs = case.inputs()
        reference = case.reference(inputs) if case.reference else None
        outcome, _ = corpus.run_case(case, module, inputs, reference, lambda: None)
        if outcome.status != "ok":
            problems.append(f"{case.name} [{case.shape}]: {outcome.status} {outcome.detail}")
    assert count, "the file yields no cases"
    assert not problems, "\n".join(problems)


def test_timing_alternates_and_keeps_the_faster_median(corpus, monkeypatch):
    """Each backend is timed twice, in the order A B B A, and keeps its faster median; a
    backend whose first call failed is not timed."""
    import tilec.testing
    calls, medians = [], iter([3.0, 5.0, 4.0, 2.0])

    def fake_bench(fn, return_mode):
        assert return_mode == "median"
        calls.append(fn())
        return next(medians)

    monkeypatch.setattr(tilec.testing, "do_bench", fake_bench)
    outcomes = {name: corpus.Outcome("ok") for name in ("tilec", "triton")}
    corpus.time_cases({"tilec": lambda: "tilec", "triton": lambda: "triton"}, outcomes)
    assert calls == ["tilec", "triton", "triton", "tilec"]
    assert (outcomes["tilec"].ms, outcomes["triton"].ms) == (2.0, 4.0)
    failed = {"tilec": corpus.Outcome("ok"), "triton": corpus.Outcome("FAIL")}
    calls.clear()
    medians = iter([1.0, 1.5])
    corpus.time_cases({"tilec": lambda: "tilec"}, failed)
    assert calls == ["tilec", "tilec"] and failed["tilec"].ms == 1.0 and failed["triton"].ms is None


def test_per_config_runs_each_config_of_the_kernels_a_case_launches(corpus, monkeypatch, capsys):
    """--per-config: one row per config of the @autotune kernels the case launches (the
    pointer kernel's four, not the descriptor kernels' of the same file), each config
    really the one launched, and the autotuner as it was afterwards."""
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    monkeypatch.setenv("TILEC_INTERPRET", "1")
    launched = []
    module = corpus.load(os.path.join(CORPUS, "k_persistent_matmul.py"), "tilec")
    tuner = module.persistent_matmul_kernel
    run = tuner.run

    def spy(*args, **kwargs):
        result = run(*args, **kwargs)
        launched.append(tuner.best_config)
        return result

    monkeypatch.setattr(tuner, "run", spy)
    monkeypatch.setattr(corpus, "load", lambda path, backend: module)
    monkeypatch.setattr(sys, "argv", ["run.py", "--interpret", "--per-config", "--only", "persistent_matmul",
                                      "--match", r"persistent float16 \[37x"])
    assert corpus.main() == 0
    out = capsys.readouterr().out
    configs = tuner.configs
    assert len(configs) == 4 and launched[1:] == configs  # the first: finding the kernels the case launches
    rows = [line for line in out.splitlines() if line.startswith("| persistent_matmul |")]
    assert len(rows) == 4 and all("persistent_matmul_kernel: BLOCK_M=" in row and "| ok |" in row for row in rows)
    assert "tma_persistent_matmul_kernel" not in out



def test_warm_pass_runs_every_part_untimed_before_the_timed_pass(tmp_path):
    """`--gpus N --warm K`: every part first runs in a child with `--no-time` (K at once),
    then the timed pass runs them again and the table says its first calls found warm
    caches. Here in the interpreter (no GPU), on one small file."""
    import subprocess
    env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, os.path.join(CORPUS, "run.py"), "--gpus", "1", "--warm", "2",
                             "--interpret", "--only", "dropout"], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    warm = [i for i, line in enumerate(lines) if line.startswith("[warm, gpu 0")]
    timed = [i for i, line in enumerate(lines) if line.startswith("[gpu 0")]
    assert warm and timed and max(warm) < min(timed), result.stdout
    assert any("first call tilec/Triton (warm caches)" in line for line in lines), result.stdout
    assert sum(line.startswith("| dropout |") for line in lines) == 4, result.stdout
    # With --no-time as well, only the warm pass runs (a machine's caches filled for later runs).
    result = subprocess.run([sys.executable, os.path.join(CORPUS, "run.py"), "--gpus", "1", "--warm", "2",
                             "--no-time", "--interpret", "--only", "dropout"], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "k_dropout.py part 0/1: 4 cases" in result.stdout and "[gpu" not in result.stdout, result.stdout
