"""Programmatic dependent launch: `kernel[grid](..., launch_pdl=True)` lets a kernel start
while the kernel before it on its stream still runs; `tl.extra.cuda.gdc_wait()` waits
for that kernel to finish (and its writes to be visible), and
`tl.extra.cuda.gdc_launch_dependents()` lets the next PDL kernel start early. The
interpreter runs kernels one after another, so both calls do nothing there.

The pair below chains through memory: the second kernel reads what the first wrote,
after its gdc_wait, so a missing wait (or a launch attribute that let it start without
one) would read the poison."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -7.0


@tilec.jit
def scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr, USE_GDC: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if USE_GDC:
        tl.extra.cuda.gdc_wait()
    x = tl.load(x_ptr + offs, mask=mask)
    if USE_GDC:
        tl.extra.cuda.gdc_launch_dependents()
    tl.store(y_ptr + offs, x * factor + 1.0, mask=mask)


def _chain(x, y, z, n: int, pdl: bool) -> None:
    grid = (tilec.cdiv(n, 256),)
    scale_kernel[grid](x, y, n, 3.0, BLOCK=256, USE_GDC=pdl, launch_pdl=pdl)
    scale_kernel[grid](y, z, n, 0.5, BLOCK=256, USE_GDC=pdl, launch_pdl=pdl)


@pytest.mark.parametrize("pdl", [False, True])
def test_a_dependent_kernel_reads_what_the_first_wrote(backend, rng, pdl):
    n = 100_003
    x = rng.standard_normal(n).astype(np.float32)
    x_dev = device_array(x, backend)
    y = device_array(np.full(n, POISON, np.float32), backend)
    z = device_array(np.full(n, POISON, np.float32), backend)
    _chain(x_dev, y, z, n, pdl)
    expected = (x.astype(np.float64) * 3 + 1) * 0.5 + 1
    # The GPU fuses each multiply-add (one rounding instead of two).
    np.testing.assert_allclose(to_numpy(z), expected, rtol=1e-6, atol=1e-6)


def test_the_wait_and_trigger_instructions():
    """Compiled for sm_90, the calls are `griddepcontrol.wait` and
    `griddepcontrol.launch_dependents`; without them the kernel has neither."""
    signature = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "n": "i32", "factor": "fp32"}
    with_gdc = tilec.compile(scale_kernel, signature=signature, constexprs={"BLOCK": 256, "USE_GDC": True},
                             target="sm_90").asm["ptx"]
    without = tilec.compile(scale_kernel, signature=signature, constexprs={"BLOCK": 256, "USE_GDC": False},
                            target="sm_90").asm["ptx"]
    assert "griddepcontrol.wait" in with_gdc and "griddepcontrol.launch_dependents" in with_gdc
    assert "griddepcontrol" not in without


@pytest.mark.gpu
def test_pdl_chain_under_cuda_graph_capture(rng):
    """Tutorial 11 times PDL launches inside a CUDA graph: captured launches keep their
    attribute as a programmatic edge between the two kernel nodes."""
    import torch
    n = 1 << 20
    x = torch.from_numpy(rng.standard_normal(n).astype(np.float32)).cuda()
    y = torch.full((n,), POISON, device="cuda")
    z = torch.full((n,), POISON, device="cuda")
    _chain(x, y, z, n, True)  # compile outside the capture
    torch.cuda.synchronize()
    y.fill_(POISON)
    z.fill_(POISON)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            _chain(x, y, z, n, True)
    for _ in range(3):
        z.fill_(POISON)
        graph.replay()
    torch.cuda.synchronize()
    expected = (x * 3 + 1) * 0.5 + 1
    torch.testing.assert_close(z, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_pdl_with_cooperative_launch():
    """Both launch attributes at once go through one cuLaunchKernelEx."""
    import torch
    x = torch.arange(1024, dtype=torch.float32, device="cuda")
    y = torch.full((1024,), POISON, device="cuda")
    scale_kernel[(4,)](x, y, 1024, 2.0, BLOCK=256, USE_GDC=True, launch_pdl=True, launch_cooperative_grid=True)
    torch.testing.assert_close(y, x * 2 + 1)
