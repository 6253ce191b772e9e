"""benchmarks/configs.py, which --per-config of the corpus and of bench_tutorials.py
uses to run one autotune config at a time (no torch needed)."""
from __future__ import annotations

import os
import sys

import numpy as np

import tilec
import tilec.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))
from configs import autotuned, describe, only_config  # noqa: E402


def test_only_config_restores_the_autotuner():
    configs = [tilec.Config({"BLOCK": 16}, num_warps=2), tilec.Config({"BLOCK": 32}, num_warps=4, num_stages=2)]

    @tilec.autotune(configs, key=["n"])
    @tilec.jit
    def kernel(x, n, BLOCK: tl.constexpr):
        tl.store(x + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32))

    class Placeholder:  # what the loaders leave for a module that could not be imported
        def __getattr__(self, name):
            raise ImportError("not here")

    module = type(sys)("m")
    module.kernel, module.other, module.missing = kernel, object(), Placeholder()
    assert autotuned(module) == {"kernel": kernel}
    kernel.cache[(1,)] = configs[0]
    with only_config(kernel, 1) as chosen:
        assert chosen is configs[1] and kernel.configs == [configs[1]] and not kernel.cache
        assert describe(chosen) == "BLOCK=32 w4 s2"
    assert kernel.configs == configs and kernel.cache == {(1,): configs[0]}


def test_only_config_records_what_each_launch_returns(monkeypatch):
    """With a list, each launch of the tuner leaves there the compiled kernel it ran (what
    --per-config reports registers, spills and shared memory of); afterwards the tuner's
    own run is back."""
    from tilec.config import config
    from configs import resources
    monkeypatch.setattr(config, "interpret", False)
    configs = [tilec.Config({"BLOCK": 16}), tilec.Config({"BLOCK": 32}, num_warps=8)]

    @tilec.autotune(configs, key=["n"])
    @tilec.jit
    def fill(x, n, BLOCK: tl.constexpr):
        tl.store(x + tl.arange(0, BLOCK), tl.full((BLOCK,), 1.0, tl.float32))

    class Compiled:  # a launch's result as either backend returns it
        n_regs, n_spills, shared = 40, 0, 512

    def run(*args, **kwargs):
        assert fill.configs == [configs[1]]
        return Compiled()
    monkeypatch.setattr(fill, "run", run)  # stands in for the GPU launch
    launched = []
    with only_config(fill, 1, launched):
        fill[(1,)](None, 32)
        fill[(1,)](None, 32)
    assert len(launched) == 1 and resources(launched[0]) == "40/0/512"
    assert fill.run is run
    assert resources(object()) == "?/?/?"


def test_launched_configs_are_those_of_the_kernels_the_call_launches(monkeypatch):
    """Only the kernels whose choice the first call makes, and that the other backend's
    module has too, each config in order; a first call that raises keeps what it reached."""
    from tilec.config import config
    from configs import launched_configs
    monkeypatch.setattr(config, "interpret", True)
    configs = [tilec.Config({"BLOCK": 16}), tilec.Config({"BLOCK": 32}, num_warps=8)]

    def make():
        @tilec.autotune(configs, key=["n"])
        @tilec.jit
        def fill(x, n, BLOCK: tl.constexpr):
            offsets = tl.arange(0, BLOCK)
            tl.store(x + offsets, tl.full((BLOCK,), 1.0, tl.float32), mask=offsets < n)
        return fill

    mine, theirs, unused = type(sys)("mine"), type(sys)("theirs"), make()
    mine.fill, mine.unused, theirs.fill = make(), unused, make()
    mine.fill.cache[(99,)] = configs[0]  # a stale choice: emptied first, refilled by the call
    x = np.zeros(32, np.float32)

    def first_call():
        mine.fill[(1,)](x, 10)
        raise RuntimeError("after the launch")

    assert launched_configs(mine, [theirs], first_call) == [("fill", 0, "BLOCK=16 w4 s3"),
                                                            ("fill", 1, "BLOCK=32 w8 s3")]
    assert x[:10].tolist() == [1.0] * 10
    assert launched_configs(mine, [type(sys)("empty")], lambda: mine.fill[(1,)](x, 10)) == []
