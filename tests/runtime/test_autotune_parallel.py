"""@autotune compiles its configs in forked worker processes before timing them.

No GPU is needed: the workers only compile (the target is read in the parent, here
pretended), so the test checks what they leave behind. Each config must be in the disk
cache afterwards (the parent then compiles nothing), and a config a worker found cannot
run (a failed static_assert) is reported without being compiled again.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend import compiler
from tilec.runtime import driver

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


@tilec.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr, FACTOR: tl.constexpr):
    tl.static_assert(BLOCK <= 512, "BLOCK too large for this kernel")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * FACTOR, mask=mask)


CONFIGS = [tilec.Config({"BLOCK": block, "FACTOR": 3}, num_warps=warps)
           for block, warps in ((128, 4), (256, 4), (512, 8), (1024, 4))]


@pytest.fixture
def pretend_sm90(monkeypatch, fresh_cache):
    from tests.conftest import _ptxas_available
    if not _ptxas_available():
        pytest.skip("needs ptxas")
    monkeypatch.setattr(driver, "current_device", lambda: 0)
    monkeypatch.setattr(driver, "target_of", lambda device: "sm_90")
    monkeypatch.setenv("TILEC_COMPILE_WORKERS", "3")
    return fresh_cache


def compiles_in_this_process(monkeypatch) -> list:
    """The compilations this process makes from now on (a forked worker's are not
    counted: it appends to its own copy)."""
    parent, compiled = os.getpid(), []
    original = compiler.compile_specialized

    def counting(*args, **kwargs):
        if os.getpid() == parent:
            compiled.append(args)
        return original(*args, **kwargs)
    monkeypatch.setattr(compiler, "compile_specialized", counting)
    return compiled


def _tuner():
    return tilec.autotune(configs=CONFIGS, key=["n"])(scale)


def test_workers_fill_the_cache_and_report_unrunnable_configs(pretend_sm90, monkeypatch):
    tuner = _tuner()
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    y = np.full_like(x, np.nan)
    args, named = (x, y, 1000), {"x_ptr": x, "y_ptr": y, "n": 1000}
    unrunnable = tuner._compile_in_parallel(CONFIGS, args, None, {}, named)
    assert unrunnable == {CONFIGS[3]}  # BLOCK=1024 fails its static_assert
    assert len(list(pretend_sm90.rglob("*"))) > 0

    def no_compiling(*args, **kwargs):
        raise AssertionError("the parent compiled a config the workers had compiled")
    monkeypatch.setattr(compiler, "compile_specialized", no_compiling)
    for config in CONFIGS[:3]:
        kernel = scale.warmup(*args, grid=(1,), target="sm_90", **config.all_kwargs())
        assert kernel.num_warps == config.num_warps


def test_a_new_tuning_key_forks_nothing_for_configs_known_not_to_run(pretend_sm90, monkeypatch):
    """A second size (a new tuning key, the same kernels: 1064, like 1000, is not a
    multiple of 16): the configs compiled are found in the cache and the one the
    workers found cannot run is remembered, so nothing is forked or compiled, and the
    same config is ruled out."""
    # FACTOR 5: kernels no other test compiled in this process
    configs = [tilec.Config({**config.kwargs, "FACTOR": 5}, num_warps=config.num_warps) for config in CONFIGS]
    tuner = tilec.autotune(configs=configs, key=["n"])(scale)
    x = np.random.default_rng(0).standard_normal(2000).astype(np.float32)
    y = np.full_like(x, np.nan)
    assert tuner._compile_in_parallel(configs, (x, y, 1000), None, {}, {"x_ptr": x, "y_ptr": y, "n": 1000}) == \
        {configs[3]}
    compiled_here = compiles_in_this_process(monkeypatch)
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: (_ for _ in ()).throw(AssertionError("forked")))
    assert tuner._compile_in_parallel(configs, (x, y, 1064), None, {}, {"x_ptr": x, "y_ptr": y, "n": 1064}) == \
        {configs[3]}
    assert compiled_here == []
    # Another tuner of the same kernel has not learnt it: its one config left to compile
    # is compiled here, by the serial path, which then finds it out again.
    monkeypatch.setattr(os, "fork", fork)
    another = tilec.autotune(configs=configs, key=["n"])(scale)
    assert another._compile_in_parallel(configs, (x, y, 1064), None, {}, {"x_ptr": x, "y_ptr": y, "n": 1064}) == set()


def test_every_config_unrunnable_is_left_to_the_serial_path(pretend_sm90):
    tuner = _tuner()
    x = np.ones(10, np.float32)
    configs = [CONFIGS[3], tilec.Config({"BLOCK": 2048, "FACTOR": 3})]
    # Both fail: nothing is reported, so that compiling them here raises the real error.
    assert tuner._compile_in_parallel(configs, (x, x, 10), None, {}, {"x_ptr": x, "y_ptr": x, "n": 10}) == set()


def test_one_worker_or_none_compiles_serially(pretend_sm90, monkeypatch):
    monkeypatch.setenv("TILEC_COMPILE_WORKERS", "1")
    monkeypatch.setattr(os, "fork", lambda: (_ for _ in ()).throw(AssertionError("forked")))
    x = np.ones(10, np.float32)
    assert _tuner()._compile_in_parallel(CONFIGS, (x, x, 10), None, {}, {}) == set()


def test_without_a_gpu_nothing_is_forked(monkeypatch, fresh_cache):
    def no_gpu(device):
        raise RuntimeError("no GPU")
    monkeypatch.setattr(driver, "current_device", lambda: 0)
    monkeypatch.setattr(driver, "target_of", no_gpu)
    monkeypatch.setattr(os, "fork", lambda: (_ for _ in ()).throw(AssertionError("forked")))
    x = np.ones(10, np.float32)
    assert _tuner()._compile_in_parallel(CONFIGS, (x, x, 10), None, {}, {}) == set()


@pytest.mark.gpu
def test_on_the_gpu_the_parent_compiles_nothing(backend, monkeypatch, fresh_cache, rng):
    """A real tuning with CUDA in use in the parent: the workers compile every config
    (the parent, which then times them, compiles none), and the result is right."""
    if backend != "gpu":
        pytest.skip("tuning times configs on the GPU only")
    from tilec_testing import device_array, to_numpy
    monkeypatch.setenv("TILEC_COMPILE_WORKERS", "4")
    compiled_here = compiles_in_this_process(monkeypatch)
    tuner = tilec.autotune(configs=CONFIGS, key=["n"])(scale)
    n = 5000
    x = device_array(rng.standard_normal(n).astype(np.float32), backend)
    y = device_array(np.full(n, np.nan, np.float32), backend)
    tuner[lambda meta: (tilec.cdiv(n, meta["BLOCK"]),)](x, y, n)
    np.testing.assert_allclose(to_numpy(y), 3 * to_numpy(x), rtol=1e-6)
    assert compiled_here == []
    assert tuner.configs_timings[CONFIGS[3]] == float("inf")  # its static_assert, reported by a worker


def test_a_stuck_worker_is_killed_and_its_configs_left_to_the_serial_path(pretend_sm90, monkeypatch):
    """A worker that never reports (hung) is killed once nothing has come for a while;
    the tuning goes on with what the others reported."""
    from tilec.runtime import autotuner
    import time as time_module
    monkeypatch.setattr(autotuner, "_COMPILE_WORKER_SILENCE_S", 3)
    monkeypatch.setenv("TILEC_COMPILE_WORKERS", "2")
    original = scale.warmup

    def hang_on_the_second_worker(*args, **kwargs):
        if kwargs.get("BLOCK") in (256, 1024):  # worker 1's share: configs 1 and 3
            time_module.sleep(3600)
        return original(*args, **kwargs)
    monkeypatch.setattr(scale, "warmup", hang_on_the_second_worker)
    x = np.ones(10, np.float32)
    start = time_module.monotonic()
    unrunnable = _tuner()._compile_in_parallel(CONFIGS, (x, x, 10), None, {}, {"x_ptr": x, "y_ptr": x, "n": 10})
    assert time_module.monotonic() - start < 30
    assert unrunnable == set()  # config 3's failure was never reported: the serial path will find it


def test_warmup_of_an_autotuned_kernel_compiles_in_the_workers(monkeypatch, fresh_cache):
    """`tuner.warmup(..., target=...)` (no GPU needed) compiles every config in workers;
    the parent then reads them from the disk cache."""
    from tests.conftest import _ptxas_available
    if not _ptxas_available():
        pytest.skip("needs ptxas")
    monkeypatch.setenv("TILEC_COMPILE_WORKERS", "3")
    compiled_here = compiles_in_this_process(monkeypatch)
    tuner = tilec.autotune(configs=CONFIGS[:3], key=["n"])(scale)
    x = np.ones(10, np.float32)
    kernels = tuner.warmup(x, x, 10, grid=(1,), target="sm_80")
    assert [k.num_warps for k in kernels] == [4, 4, 8] and compiled_here == []
    with pytest.raises(tilec.CompilationError, match="BLOCK too large"):  # the real error, raised here
        tilec.autotune(configs=CONFIGS, key=["n"])(scale).warmup(x, x, 10, grid=(1,), target="sm_80")


def test_compiled_configs_fork_no_worker(monkeypatch, fresh_cache):
    """A kernel tuned again (a new key, another process with a warm disk cache) whose
    configs are all compiled forks nothing: a fork of a large process costs about a
    second. Configs with a pre-hook are checked after it runs; a single config left to
    compile is compiled in this process."""
    from tests.conftest import _ptxas_available
    if not _ptxas_available():
        pytest.skip("needs ptxas")
    monkeypatch.setenv("TILEC_COMPILE_WORKERS", "3")
    forks = []
    real_fork = os.fork

    def counting_fork():
        forks.append(1)
        return real_fork()
    monkeypatch.setattr(os, "fork", counting_fork)
    hooked = [tilec.Config({"BLOCK": 128, "FACTOR": 3}, num_warps=4, pre_hook=lambda args: None)] + CONFIGS[1:3]
    x = np.ones(10, np.float32)
    kernel = tilec.jit(scale.fn)  # compiled nowhere yet: other tests' kernels stay in `scale`
    tilec.autotune(configs=hooked, key=["n"])(kernel).warmup(x, x, 10, grid=(1,), target="sm_80")
    assert len(forks) == 3
    forks.clear()
    compiled_here = compiles_in_this_process(monkeypatch)
    tilec.autotune(configs=hooked, key=["n"])(kernel).warmup(x, x, 10, grid=(1,), target="sm_80")
    assert forks == [] and compiled_here == []  # found in this process
    kernel = tilec.jit(scale.fn)
    tilec.autotune(configs=hooked, key=["n"])(kernel).warmup(x, x, 10, grid=(1,), target="sm_80")
    assert forks == [] and compiled_here == []  # found on disk
    more = hooked + [tilec.Config({"BLOCK": 64, "FACTOR": 3}, num_warps=2)]
    tilec.autotune(configs=more, key=["n"])(kernel).warmup(x, x, 10, grid=(1,), target="sm_80")
    assert forks == [] and len(compiled_here) == 1  # one config left: compiled here, no worker for it
