"""Launches on a machine with two GPUs or more (skipped elsewhere): a kernel launched on
tensors on cuda:1 runs there, whatever the current device; torch's current stream of
that device is used; each device gets its own loaded kernel, and launching alternately on
both stays right; arrays on two devices in one launch are refused, naming both."""
from __future__ import annotations

import pytest

import tilec
import tilec.language as tl
from tilec import LaunchError


@tilec.jit
def axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def _torch_with_two_gpus():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    return torch


def _launch(torch, device: str, n: int = 10_007, a: float = 1.5):
    x = torch.randn(n, device=device)
    y = torch.randn(n, device=device)
    out = torch.full((n,), float("nan"), device=device)
    axpy[(tilec.cdiv(n, 256),)](x, y, out, a, n, BLOCK=256)
    return out, (a * x.double() + y.double())


@pytest.mark.gpu
def test_launch_on_the_second_gpu_from_the_first():
    torch = _torch_with_two_gpus()
    with torch.cuda.device(0):
        out, want = _launch(torch, "cuda:1")
        assert torch.cuda.current_device() == 0  # the launch left the current device alone
    torch.cuda.synchronize(1)
    assert out.device.index == 1
    torch.testing.assert_close(out.double(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_alternating_devices_each_get_their_kernel():
    torch = _torch_with_two_gpus()
    for device in ("cuda:0", "cuda:1", "cuda:0", "cuda:1"):
        out, want = _launch(torch, device)
        torch.cuda.synchronize(device)
        torch.testing.assert_close(out.double(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_the_second_gpus_current_stream_is_used():
    torch = _torch_with_two_gpus()
    with torch.cuda.device(1):
        stream = torch.cuda.Stream()
        n = 1 << 20
        x = torch.randn(n, device="cuda:1")
        y = torch.randn(n, device="cuda:1")
        out = torch.full((n,), float("nan"), device="cuda:1")
        torch.cuda.synchronize(1)
        with torch.cuda.stream(stream):
            torch.cuda._sleep(50_000_000)  # keeps the stream busy: a launch on it waits
            axpy[(tilec.cdiv(n, 1024),)](x, y, out, 2.0, n, BLOCK=1024)
            doubled = out * 2  # ordered after the launch only if the launch is on this stream
        stream.synchronize()
    torch.testing.assert_close(doubled.double(), 2 * (2.0 * x.double() + y.double()), rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_arrays_on_two_gpus_are_refused():
    torch = _torch_with_two_gpus()
    x = torch.randn(16, device="cuda:0")
    y = torch.randn(16, device="cuda:1")
    with pytest.raises(LaunchError, match="cuda:1.*cuda:0|cuda:0.*cuda:1"):
        axpy[(1,)](x, y, x, 1.0, 16, BLOCK=16)
