"""`tilec.KernelInterface` (Triton's `triton.KernelInterface`) and `run(..., warmup=)`:
libraries wrap kernels in subclasses of their own (FlagGems' LibEntry caches launches
by its own key) that launch through `fn.run(*args, grid=grid, warmup=False, **kwargs)`.
With the imports swapped, those wrappers must work on tilec's kernels, autotuners and
heuristics, on the GPU and in the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


class LaunchCache(tilec.KernelInterface):
    """A library's wrapper, written against Triton's interface only."""

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names
        self.launches = 0

    def run(self, *args, grid, warmup, **kwargs):
        self.launches += not warmup
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)


def _inputs(backend, rng, n=1000):
    x = rng.standard_normal(n).astype(np.float32)
    return x, device_array(x, backend), device_array(np.full(n, np.nan, np.float32), backend)


@pytest.mark.parametrize("wrap", ["jit", "autotune", "heuristics"])
def test_a_library_wrapper_launches_through_run(backend, rng, wrap):
    kernel = {"jit": lambda: scale_kernel,
              "autotune": lambda: tilec.autotune([tilec.Config({"BLOCK": 128}), tilec.Config({"BLOCK": 256})],
                                                 key=["n"])(scale_kernel),
              "heuristics": lambda: tilec.heuristics({"BLOCK": lambda args: 256})(scale_kernel)}[wrap]()
    entry = LaunchCache(kernel)
    assert isinstance(scale_kernel, tilec.KernelInterface) and isinstance(kernel, tilec.KernelInterface)
    x, x_dev, y_dev = _inputs(backend, rng)
    extra = {"BLOCK": 256} if wrap == "jit" else {}
    grid = lambda meta: (tilec.cdiv(x.size, meta["BLOCK"]),)  # noqa: E731
    entry[grid](x_dev, y_dev, x.size, 1.5, **extra)
    np.testing.assert_allclose(to_numpy(y_dev), x * np.float32(1.5), rtol=1e-6)
    assert entry.launches == 1
    # Triton's own spelling of a launch, on the kernel itself.
    kernel.run(x_dev, y_dev, x.size, -2.0, grid=grid, warmup=False, **extra)
    np.testing.assert_allclose(to_numpy(y_dev), x * np.float32(-2.0), rtol=1e-6)


def test_run_with_warmup_compiles_without_launching(fresh_cache):
    compiled = scale_kernel.run("*fp32:16", "*fp32:16", "i32", "fp32", BLOCK=128, grid=(1,), warmup=True,
                                target="sm_90")
    assert compiled.name == "scale_kernel" and "ptx" in compiled.asm
    entry = LaunchCache(scale_kernel)
    assert entry.warmup("*fp32:16", "*fp32:16", "i32", "fp32", BLOCK=128, grid=(1,), target="sm_90") is compiled
    assert entry.launches == 0


def test_a_subclass_without_run_says_so():
    class Incomplete(tilec.KernelInterface):
        pass
    with pytest.raises(NotImplementedError, match="Incomplete must define run"):
        Incomplete()[(1,)](1, 2)


def test_a_parameter_named_warmup_is_the_kernel_s(backend, rng):
    @tilec.jit
    def add_kernel(x_ptr, warmup, n, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + warmup, mask=mask)

    x = rng.standard_normal(100).astype(np.float32)
    x_dev = device_array(x, backend)
    add_kernel.run(x_dev, grid=(1,), warmup=3.0, n=100, BLOCK=128)
    np.testing.assert_allclose(to_numpy(x_dev), x + np.float32(3.0), rtol=1e-6)


def test_triton_runtime_names():
    import tilec.runtime as runtime
    assert runtime.KernelInterface is tilec.KernelInterface and runtime.JITFunction is tilec.JITFunction
    assert runtime.Autotuner is tilec.Autotuner and runtime.autotune is tilec.autotune
