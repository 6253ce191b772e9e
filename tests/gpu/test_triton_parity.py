"""The same kernel source run by Triton and by tilec (only the imports differ) gives the
same bits: random numbers, and the math Triton computes with the hardware's
approximations. Needs a GPU and Triton; skipped otherwise."""
from __future__ import annotations

import linecache
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

SOURCE = textwrap.dedent('''
    @triton.jit
    def random_kernel(out_ptr, seed, N: tl.constexpr):
        offs = tl.program_id(0) * N + tl.arange(0, N)
        a, b, c, d = tl.randint4x(seed, offs)
        tl.store(out_ptr + offs * 8 + 0, a.to(tl.uint32, bitcast=True).to(tl.float32, bitcast=True))
        tl.store(out_ptr + offs * 8 + 1, d.to(tl.float32, bitcast=True))
        tl.store(out_ptr + offs * 8 + 2, tl.rand(seed, offs))
        tl.store(out_ptr + offs * 8 + 3, tl.randn(seed, offs))
        r0, r1, r2, r3 = tl.randn4x(seed + 7, offs)
        tl.store(out_ptr + offs * 8 + 4, r3)
        tl.store(out_ptr + offs * 8 + 5, tl.rand(seed, offs.to(tl.int64) * 3 + 2**40))
        tl.store(out_ptr + offs * 8 + 6, tl.randint(seed, offs, n_rounds=7).to(tl.float32, bitcast=True))
        tl.store(out_ptr + offs * 8 + 7, tl.randn(seed, offs + 1))

    @triton.jit
    def math_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
        offs = tl.program_id(0) * N + tl.arange(0, N)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        tl.store(out_ptr + offs * 8 + 0, tl.exp(x))
        tl.store(out_ptr + offs * 8 + 1, x / y)
        tl.store(out_ptr + offs * 8 + 2, tl.sqrt(tl.abs(y)))
        tl.store(out_ptr + offs * 8 + 3, tl.rsqrt(tl.abs(y)))
        tl.store(out_ptr + offs * 8 + 4, tl.log(tl.abs(x)))
        tl.store(out_ptr + offs * 8 + 5, tl.sigmoid(x))
        tl.store(out_ptr + offs * 8 + 6, tl.exp2(x) + tl.sin(y))
        tl.store(out_ptr + offs * 8 + 7, tl.div_rn(x, y) + tl.sqrt_rn(tl.abs(x)))
''')


def _kernels(triton, tl):
    """SOURCE's kernels under `triton`/`tl` (both JITs read the source through linecache)."""
    filename = f"<kernels for {triton.__name__}>"
    linecache.cache[filename] = (len(SOURCE), None, SOURCE.splitlines(keepends=True), filename)
    namespace = {"triton": triton, "tl": tl}
    exec(compile(SOURCE, filename, "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def both():
    triton = pytest.importorskip("triton")
    import triton.language as ttl
    import tilec
    import tilec.language as tcl
    return _kernels(triton, ttl), _kernels(tilec, tcl)


@pytest.mark.parametrize("seed", [0, 1, 12345, -7, 2**31 - 1])
def test_random_is_bit_identical_to_triton(both, seed):
    import torch
    n, programs = 256, 16
    outs = []
    for kernels in both:
        out = torch.full((n * programs * 8,), float("nan"), device="cuda")
        kernels["random_kernel"][(programs,)](out, seed, N=n)
        outs.append(out.view(torch.int32).cpu().numpy().reshape(-1, 8))
    for column in range(8):
        same = outs[0][:, column] == outs[1][:, column]
        assert same.all(), f"column {column}: {int((~same).sum())} of {same.size} differ"


def test_approximate_math_is_bit_identical_to_triton(both):
    import torch
    n, programs = 512, 64
    rng = np.random.default_rng(9)
    x = torch.from_numpy((rng.standard_normal(n * programs) * 20).astype(np.float32)).cuda()
    y = torch.from_numpy((rng.standard_normal(n * programs) * 3).astype(np.float32)).cuda()
    outs = []
    for kernels in both:
        out = torch.full((n * programs * 8,), float("nan"), device="cuda")
        kernels["math_kernel"][(programs,)](x, y, out, N=n)
        outs.append(out.view(torch.int32).cpu().numpy().reshape(-1, 8))
    names = ["exp", "/", "sqrt", "rsqrt", "log", "sigmoid", "exp2+sin", "div_rn+sqrt_rn"]
    differing = {name: int((outs[0][:, i] != outs[1][:, i]).sum()) for i, name in enumerate(names)}
    assert not any(differing.values()), differing
