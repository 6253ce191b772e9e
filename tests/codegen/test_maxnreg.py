"""`maxnreg`, Triton's cap on the registers a thread may use: from tilec.compile, a
launch or warmup option and an autotune Config, it reaches the PTX as `.maxnreg` and
ptxas keeps to it (spilling what does not fit). It used to be accepted and dropped:
mamba's Mamba-3 configs ask for 128, and got 255."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec_testing import register_pressure_kernel as pressure_kernel

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.autotune(configs=[tilec.Config({}, num_warps=1, maxnreg=48)], key=[])
@tilec.jit
def tuned_kernel(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(x_ptr + offs)
    b = tl.load(x_ptr + N + offs)
    tl.store(y_ptr + offs, tl.exp(a) * tl.sin(b) + a * b)


SIGNATURE = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16"}


def _limits(ptx: str) -> list[str]:
    return re.findall(r"^\.maxnreg (\d+)$", ptx, re.M)


def test_compile_maxnreg_reaches_ptx_and_ptxas():
    free = tilec.compile(pressure_kernel, signature=SIGNATURE, constexprs={"N": 1024}, num_warps=1)
    capped = tilec.compile(pressure_kernel, signature=SIGNATURE, constexprs={"N": 1024}, num_warps=1, maxnreg=32)
    assert _limits(free.asm["ptx"]) == []
    assert _limits(capped.asm["ptx"]) == ["32"]
    assert free.n_regs > 32
    assert capped.n_regs <= 32 and capped.n_spills > free.n_spills


def test_warmup_and_config_maxnreg_key_the_kernel():
    x, y = np.random.rand(3 * 1024).astype(np.float32), np.empty(1024, np.float32)
    capped = pressure_kernel.warmup(x, y, N=1024, grid=(1,), num_warps=1, maxnreg=40, target="sm_90")
    free = pressure_kernel.warmup(x, y, N=1024, grid=(1,), num_warps=1, target="sm_90")
    assert _limits(capped.asm["ptx"]) == ["40"] and capped.n_regs <= 40
    assert _limits(free.asm["ptx"]) == []

    compiled = tuned_kernel.warmup(x, y, N=1024, grid=(1,), target="sm_90")
    kernels = compiled if isinstance(compiled, list) else [compiled]
    assert [_limits(k.asm["ptx"]) for k in kernels] == [["48"]]


def test_bad_maxnreg_is_refused():
    with pytest.raises(tilec.TilecError, match="maxnreg"):
        tilec.compile(pressure_kernel, signature=SIGNATURE, constexprs={"N": 64}, maxnreg=-1)
    x, y = np.zeros(3 * 64, np.float32), np.empty(64, np.float32)
    with pytest.raises(tilec.TilecError, match="maxnreg"):
        pressure_kernel.warmup(x, y, N=64, grid=(1,), maxnreg="many", target="sm_90")
