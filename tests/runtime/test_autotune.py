"""@tilec.autotune, @tilec.heuristics and tilec.Config.

The tuning logic (keys, pruning, timing, hooks, restore/reset, the results cache,
failures) is tested against a recording stand-in kernel so it runs without a GPU; real
kernels then run through both decorators on both backends (the interpreter takes the
first surviving config; the GPU times them all).
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.config import config
from tilec.errors import CompilationError, LaunchError, OutOfResources
from tilec_testing import device_array, to_numpy


class FakeKernel:
    """Records launches; `times` gives each BLOCK value a pretend duration."""

    __name__ = "fake"
    arg_names = ["x", "n", "BLOCK"]

    def __init__(self, times=None, fail=(), errors=None):
        self.calls = []
        self.times = times or {}
        self.fail = set(fail)
        self.errors = errors or {}  # BLOCK -> the exception compiling that config raises

    def run(self, *args, grid, **kwargs):
        if kwargs.get("BLOCK") in self.fail:
            raise OutOfResources("shared memory", 1 << 20, 228 << 10, "fake")
        if kwargs.get("BLOCK") in self.errors:
            raise self.errors[kwargs["BLOCK"]]
        self.calls.append((args, grid, dict(kwargs)))


@pytest.fixture
def compiled_mode(monkeypatch):
    monkeypatch.setattr(config, "interpret", False)


def fake_bench(kernel):
    def bench(call):
        before = len(kernel.calls)
        call()
        return kernel.times[kernel.calls[before][2]["BLOCK"]]
    return bench


CONFIGS = [tilec.Config({"BLOCK": 64}, num_warps=2), tilec.Config({"BLOCK": 128}, num_warps=4),
           tilec.Config({"BLOCK": 256}, num_warps=8, num_stages=2)]


def test_fastest_config_is_chosen_once_per_key(compiled_mode):
    kernel = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0})
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel))(kernel)
    tuned[(1,)]("x", 1000)
    assert tuned.best_config.kwargs == {"BLOCK": 128} and tuned.best_config.num_warps == 4
    assert tuned.configs_timings == {CONFIGS[0]: 3.0, CONFIGS[1]: 1.0, CONFIGS[2]: 2.0}
    n_calls = len(kernel.calls)
    tuned[(1,)]("x", 1000)  # same key: no tuning, one launch with the chosen config
    assert len(kernel.calls) == n_calls + 1
    assert kernel.calls[-1][2] == {"BLOCK": 128, "num_warps": 4, "num_stages": 3, "num_ctas": 1}
    kernel.times = {64: 0.5, 128: 1.0, 256: 2.0}
    tuned[(1,)]("x", 2000)  # new key: tuned again
    assert tuned.best_config.kwargs == {"BLOCK": 64}
    assert set(tuned.cache) == {(1000,), (2000,)}


def test_configs_that_cannot_run_are_skipped_and_all_failing_is_an_error(compiled_mode):
    kernel = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0}, fail={128})
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel))(kernel)
    tuned[(1,)]("x", 5)
    assert tuned.best_config.kwargs == {"BLOCK": 256}
    assert tuned.configs_timings[CONFIGS[1]] == float("inf")
    failing = FakeKernel(fail={64, 128, 256})
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(failing))(failing)
    with pytest.raises(LaunchError, match="none of the 3 @autotune configs can run here.*shared memory"):
        tuned[(1,)]("x", 5)


def test_pruning_by_early_prune_and_perf_model(compiled_mode):
    kernel = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0})
    seen = {}

    def early(configs, named_args, **kwargs):
        seen["named"] = dict(named_args)
        return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]

    def perf_model(**kwargs):  # prefers big blocks
        return -kwargs["BLOCK"]

    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel),
                           prune_configs_by={"early_config_prune": early, "perf_model": perf_model, "top_k": 1})(kernel)
    tuned[(1,)]("x", 200)
    assert seen["named"] == {"x": "x", "n": 200}
    # early prune keeps 64 and 128, the model's top 1 is 128: nothing is timed
    assert tuned.best_config.kwargs == {"BLOCK": 128} and tuned.configs_timings is None
    assert len(kernel.calls) == 1


def test_a_single_config_runs_unpruned(compiled_mode):
    """As on Triton: early_config_prune chooses among several configs; one config runs as
    it is, even where the prune would have dropped it."""
    kernel = FakeKernel(times={256: 1.0})
    tuned = tilec.autotune([CONFIGS[2]], key=["n"], do_bench=fake_bench(kernel),
                           prune_configs_by={"early_config_prune": lambda configs, named, **kw: []})(kernel)
    tuned[(1,)]("x", 5)
    assert tuned.best_config is CONFIGS[2] and kernel.calls[-1][2]["BLOCK"] == 256


def test_restore_value_reset_to_zero_and_hooks(compiled_mode):
    torch = pytest.importorskip("torch")
    events = []

    class Accumulating(FakeKernel):
        arg_names = ["out", "acc", "n", "BLOCK"]

        def run(self, *args, grid, **kwargs):
            out, acc = args[0], args[1]
            events.append(("run", kwargs["BLOCK"], float(acc.sum())))
            out += 1
            acc += 1
            super().run(*args, grid=grid, **kwargs)

    kernel = Accumulating(times={64: 2.0, 128: 1.0, 256: 3.0})
    out, acc = torch.full((4,), 7.0), torch.full((4,), 5.0)
    hooks = []
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel), restore_value=["out"],
                           reset_to_zero=["acc"], pre_hook=lambda args: hooks.append("pre"),
                           post_hook=lambda args, exception: hooks.append("post"))(kernel)
    tuned[(1,)](out, acc, 4)
    # every timed run saw acc zeroed; out was restored after tuning, then the real launch ran once
    assert all(total == 0.0 for kind, _, total in events[:-1])
    assert torch.equal(out, torch.full((4,), 8.0))
    assert hooks.count("pre") == hooks.count("post") == len(events) - 1


def test_a_subclass_written_for_tritons_autotuner(compiled_mode):
    """Libraries subclass Triton's Autotuner (FLA's CachedAutotuner): its constructor's
    arguments in Triton's order, `user_defined_pre_hook`, and pre_hook / post_hook
    attributes they may replace, called as Triton calls them (pre_hook(nargs) and
    post_hook(nargs, exception) around each timed call, pre_hook(nargs, reset_only=True)
    once tuning ends)."""
    from tilec.runtime.autotuner import Autotuner
    calls = []

    class LibraryTuner(Autotuner):
        def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs):
            super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs)
            if not self.user_defined_pre_hook and (self.reset_to_zero or self.restore_value):
                self.pre_hook = lambda nargs, reset_only=False: calls.append(("pre", reset_only, nargs["n"]))
            if not self.user_defined_post_hook and self.restore_value:
                self.post_hook = lambda nargs, exception: calls.append(("post", exception))

        def run(self, *args, **kwargs):
            calls.append("run")
            return super().run(*args, **kwargs)

    kernel = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0})
    tuned = LibraryTuner(kernel, kernel.arg_names, CONFIGS, ["n"], ["x"], ["x"], pre_hook=None, post_hook=None,
                         prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False,
                         do_bench=fake_bench(kernel), cache_results=False)
    tuned[(1,)]("x", 5)
    assert tuned.best_config.kwargs == {"BLOCK": 128}
    # run; per config a first call and a timed one, each wrapped in pre/post; then the reset
    per_call = [("pre", False, 5), ("post", None)]
    assert calls == ["run"] + per_call * 6 + [("pre", True, 5)]


def test_none_for_an_optional_argument_to_reset_or_restore(compiled_mode):
    kernel = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0})
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel), reset_to_zero=["x"],
                           restore_value=["x"])(kernel)
    tuned[(1,)](None, 5)
    assert tuned.best_config.kwargs == {"BLOCK": 128}


def test_meta_parameters_must_not_also_be_passed(compiled_mode):
    kernel = FakeKernel(times={64: 1.0, 128: 2.0, 256: 3.0})
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel))(kernel)
    with pytest.raises(LaunchError, match="BLOCK is set by the @autotune configs"):
        tuned[(1,)]("x", 5, BLOCK=32)


def test_a_failed_static_assert_skips_a_config_but_other_compile_errors_are_raised(compiled_mode):
    """As Triton's autotuner: a config is ruled out by a static_assert or a resource
    limit; any other compile error is the kernel's, raised rather than timed as infinite."""
    static = CompilationError("static_assert failed: BLOCK <= 128")
    kernel = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0}, errors={128: static})
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel))(kernel)
    tuned[(1,)]("x", 5)
    assert tuned.best_config.kwargs == {"BLOCK": 256}
    broken = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0}, errors={128: CompilationError("name 'y' is not defined")})
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(broken))(broken)
    with pytest.raises(CompilationError, match="name 'y' is not defined"):
        tuned[(1,)]("x", 5)


def test_a_key_naming_no_parameter_is_ignored_with_a_warning(compiled_mode):
    """Triton skips key names that are not parameters (its tutorial 08 misspells one)."""
    kernel = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0})
    with pytest.warns(UserWarning, match="@autotune key names 'm', not parameters of fake"):
        tuned = tilec.autotune(CONFIGS, key=["n", "m"], do_bench=fake_bench(kernel))(kernel)
    tuned[(1,)]("x", 5)
    assert tuned.best_config.kwargs == {"BLOCK": 128} and set(tuned.cache) == {(5,)}


def test_bad_declarations():
    with pytest.raises(ValueError, match="'m', which is not a parameter of fake"):
        tilec.autotune(CONFIGS, key=["n"], reset_to_zero=["m"])(FakeKernel())
    with pytest.raises(TypeError, match="tilec.Config"):
        tilec.autotune([{"BLOCK": 64}], key=["n"])(FakeKernel())
    with pytest.raises(ValueError, match="'B', which is neither a parameter of fake\\(\\) nor a launch option"):
        tilec.heuristics({"B": lambda args: 1})(FakeKernel())


def test_heuristics_may_set_launch_options():
    """As in Triton (FlagGems' reductions): a rule for num_warps sets the launch option."""
    import tilec.language as tl

    @tilec.heuristics({"BLOCK": lambda args: 64, "num_warps": lambda args: 2})
    @tilec.jit
    def double(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
    import numpy as np
    compiled = double.warmup(np.zeros(64, np.float32), grid=(1,), target="sm_90")
    assert compiled.num_warps == 2 and "tensor<64xf32" in compiled.asm["ttir"]


def test_results_cache_survives_a_new_autotuner(compiled_mode, tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))

    class Cached(FakeKernel):
        def cache_hash(self):
            return "source-hash"

    kernel = Cached(times={64: 3.0, 128: 1.0, 256: 2.0})
    tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel), cache_results=True)(kernel)[(1,)]("x", 9)
    assert len(list((tmp_path / "autotune").iterdir())) == 1
    fresh = Cached(times={64: 0.1, 128: 9.0, 256: 9.0})  # would choose 64 if it timed
    tuned = tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(fresh), cache_results=True)(fresh)
    tuned[(1,)]("x", 9)
    assert tuned.best_config.kwargs == {"BLOCK": 128} and len(fresh.calls) == 1


def test_config_repr_and_all_kwargs():
    c = tilec.Config({"BM": 64, "BN": 32}, num_warps=8, num_stages=4, maxnreg=128)
    assert repr(c) == "BM: 64, BN: 32, num_warps: 8, num_stages: 4, num_ctas: 1, maxnreg: 128"
    assert c.all_kwargs() == {"BM": 64, "BN": 32, "num_warps": 8, "num_stages": 4, "num_ctas": 1, "maxnreg": 128}


# ---------------------------------------------------------------------------- real kernels


@tilec.autotune(configs=[tilec.Config({"BLOCK": 128}, num_warps=2), tilec.Config({"BLOCK": 512}, num_warps=4),
                         tilec.Config({"BLOCK": 1024}, num_warps=8)],
                key=["n"], reset_to_zero=["total_ptr"])
@tilec.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@tilec.jit
def scaled_sum(x_ptr, out_ptr, total_ptr, n, scale, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = x * scale
    tl.store(out_ptr + offs, y, mask=offs < n)
    tl.atomic_add(total_ptr, tl.sum(y, axis=0))


@pytest.mark.parametrize("n", [4096, 1000])
def test_autotuned_heuristic_kernel(backend, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    out = device_array(np.full(n, np.nan, np.float32), backend)
    total = device_array(np.full(1, 123.0, np.float32), backend)  # reset_to_zero clears it
    scaled_sum[lambda meta: (tilec.cdiv(n, meta["BLOCK"]),)](device_array(x, backend), out, total, n, 0.5)
    np.testing.assert_array_equal(to_numpy(out), x * np.float32(0.5))
    np.testing.assert_allclose(to_numpy(total)[0], (x.astype(np.float64) * 0.5).sum(), rtol=1e-4, atol=1e-3)
    best = scaled_sum.best_config
    if backend == "interpreter":
        assert best.kwargs == {"BLOCK": 128}
    else:
        assert set(scaled_sum.configs_timings) == set(scaled_sum.configs)
        assert all(0 < t < 10 for t in scaled_sum.configs_timings.values())


@pytest.mark.gpu
def test_do_bench_measures_a_kernel():
    torch = pytest.importorskip("torch")
    x = torch.randn(1 << 24, device="cuda")
    ms = tilec.testing.do_bench(lambda: x.mul_(1.0))
    low, mid, high = tilec.testing.do_bench(lambda: x.mul_(1.0), quantiles=[0.2, 0.5, 0.8])
    assert 0 < low <= mid <= high and 0 < ms < 100
    assert isinstance(tilec.testing.do_bench(lambda: x.mul_(1.0), quantiles=[0.5]), float)


def test_print_autotuning(compiled_mode, monkeypatch, capsys):
    monkeypatch.setattr(config, "print_autotuning", True)
    kernel = FakeKernel(times={64: 3.0, 128: 1.0, 256: 2.0})
    tilec.autotune(CONFIGS, key=["n"], do_bench=fake_bench(kernel))(kernel)[(1,)]("x", 77)
    out = capsys.readouterr().out
    assert "tilec autotuning fake for key (77,): chose BLOCK: 128, num_warps: 4" in out
