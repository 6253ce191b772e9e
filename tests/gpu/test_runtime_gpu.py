"""Runtime behaviour that needs a GPU: argument kinds, streams, and the launch itself."""
from __future__ import annotations

import pytest

import tilec
import tilec.language as tl
from tilec_testing import register_pressure_kernel

pytestmark = pytest.mark.gpu


@tilec.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


class CudaArray:
    """An object that only exposes __cuda_array_interface__ (as CuPy arrays do)."""

    def __init__(self, tensor):
        self._tensor = tensor  # keeps the memory alive
        self.__cuda_array_interface__ = tensor.__cuda_array_interface__


def test_cuda_array_interface_arguments():
    import torch
    x = torch.randn(5000, device="cuda")
    out = torch.full_like(x, float("nan"))
    scale_kernel[(tilec.cdiv(5000, 1024),)](CudaArray(x), CudaArray(out), 5000, 2.5, BLOCK=1024)
    torch.testing.assert_close(out, x * 2.5)


def test_launch_goes_to_torchs_current_stream():
    import torch
    n = 1 << 22
    x = torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        # Queue work on the side stream first; the kernel must run after it on that stream.
        x.mul_(3.0)
        scale_kernel[(tilec.cdiv(n, 1024),)](x, out, n, 0.5, BLOCK=1024)
    stream.synchronize()
    torch.testing.assert_close(out, x * 0.5)


def test_explicit_stream_option():
    import torch
    x = torch.randn(4096, device="cuda")
    out = torch.full_like(x, float("nan"))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())  # x and out are filled on the current stream
    scale_kernel[(4,)](x, out, 4096, -1.0, BLOCK=1024, stream=stream.cuda_stream)
    stream.synchronize()
    torch.testing.assert_close(out, -x)


def test_host_tensor_is_refused_with_its_name():
    import torch
    x = torch.randn(16)
    out = torch.empty(16, device="cuda")
    with pytest.raises(tilec.LaunchError, match="x_ptr"):
        scale_kernel[(1,)](x, out, 16, 1.0, BLOCK=16)


def test_pinned_host_memory_is_an_argument():
    """Pinned (page-locked) host tensors are mapped at their host addresses: a kernel
    reads one and writes another in place, on the first launch (slow path) and on hits
    (generated launcher); a pageable host tensor beside them is still refused."""
    import torch
    kernel = tilec.jit(scale_kernel.fn)
    x = torch.randn(5000).pin_memory()
    for _ in range(3):
        out = torch.full((5000,), float("nan")).pin_memory()
        kernel[(tilec.cdiv(5000, 1024),)](x, out, 5000, 2.5, BLOCK=1024)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x * 2.5)
    on_gpu = torch.full((5000,), float("nan"), device="cuda")
    kernel[(tilec.cdiv(5000, 1024),)](x, on_gpu, 5000, 2.5, BLOCK=1024)  # mixed with device memory
    torch.testing.assert_close(on_gpu.cpu(), x * 2.5)
    with pytest.raises(tilec.LaunchError, match="x_ptr"):
        kernel[(1,)](torch.randn(16), out, 16, 1.0, BLOCK=16)


def test_warmup_then_launch_reuses_the_compiled_kernel(fresh_cache):
    import torch
    x = torch.randn(2048, device="cuda")
    out = torch.empty_like(x)
    warm = scale_kernel.warmup(x, out, 2048, 1.0, BLOCK=1024, grid=(2,))
    launched = scale_kernel[(2,)](x, out, 2048, 1.0, BLOCK=1024)
    assert launched.asm["cubin"] == warm.asm["cubin"]
    assert launched.n_regs == warm.n_regs > 0


def test_hits_pass_each_tensors_address():
    """After the first launch, launches go through the generated fast path, which hands
    the launcher the addresses it read for the key: each view must get its own."""
    import torch
    kernel = tilec.jit(scale_kernel.fn)  # a fresh function: the first launch compiles
    base = torch.randn(8192 + 1, device="cuda")
    for offset in (0, 1, 0, 1, 2048):  # 16-byte aligned and not, each seen twice
        x = base[offset:offset + 4096]
        out = torch.full((4096,), float("nan"), device="cuda")
        kernel[(4,)](x, out, 4096, 3.0, BLOCK=1024)
        torch.testing.assert_close(out, x * 3.0)
    assert len(kernel._kernels) == 2  # aligned and unaligned x


def test_a_host_tensor_is_refused_after_hits():
    import torch
    kernel = tilec.jit(scale_kernel.fn)
    x = torch.randn(16, device="cuda")
    out = torch.empty(16, device="cuda")
    for _ in range(2):
        kernel[(1,)](x, out, 16, 1.0, BLOCK=16)
    with pytest.raises(tilec.LaunchError, match="x_ptr"):
        kernel[(1,)](x.cpu(), out, 16, 1.0, BLOCK=16)


def test_hits_go_to_torchs_current_stream():
    import torch
    kernel = tilec.jit(scale_kernel.fn)
    n = 1 << 22
    x = torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    kernel[(tilec.cdiv(n, 1024),)](x, out, n, 0.5, BLOCK=1024)  # compiles, on the current stream
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x.mul_(3.0)
        kernel[(tilec.cdiv(n, 1024),)](x, out, n, 0.5, BLOCK=1024)  # a hit: must run after mul_ on `stream`
    stream.synchronize()
    torch.testing.assert_close(out, x * 0.5)
    # An argument the launcher refuses on a hit (the key has no room for "too big for
    # fp32") is a LaunchError naming the kernel and the argument.
    with pytest.raises(tilec.LaunchError, match=r"^scale_kernel\(\): argument 'factor': .* does not fit in fp32$"):
        kernel[(tilec.cdiv(n, 1024),)](x, out, n, 1e300, BLOCK=1024)


@pytest.mark.parametrize("maxnreg", [None, 32, 64])
def test_maxnreg_launch_computes_the_same(maxnreg):
    import torch
    x = torch.randn(3 * 1024, device="cuda")
    out = torch.full((1024,), float("nan"), device="cuda")
    options = {} if maxnreg is None else {"maxnreg": maxnreg}
    register_pressure_kernel[(1,)](x, out, N=1024, num_warps=1, **options)
    a, b, c = x.double().view(3, 1024)
    want = torch.exp(a) * torch.sin(b) + torch.cos(c) * torch.log(a.abs() + 1) + a * b * c
    torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-4)
