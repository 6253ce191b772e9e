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
        outcome = corpus.run_case(case, module, inputs, reference, False, lambda: None)
        if outcome.status != "ok":
            problems.append(f"{case.name} [{case.shape}]: {outcome.status} {outcome.detail}")
    assert count, "the file yields no cases"
    assert not problems, "\n".join(problems)
