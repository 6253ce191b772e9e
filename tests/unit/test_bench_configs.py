"""benchmarks/configs.py, which --per-config of the corpus and of bench_tutorials.py
uses to run one autotune config at a time (no torch needed)."""
from __future__ import annotations

import os
import sys

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
