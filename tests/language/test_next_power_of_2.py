"""`tilec.next_power_of_2(n)` is Triton's: the smallest power of 2 at least `n`, and 0 for
n <= 0 (where Triton's bit trick gives 0), on the host and folded in kernels."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@pytest.mark.parametrize("n, want", [(-5, 0), (-1, 0), (0, 0), (1, 1), (2, 2), (3, 4), (17, 32), (1024, 1024),
                                     (1025, 2048), (2**40 + 1, 2**41)])
def test_on_the_host(n, want):
    assert tilec.next_power_of_2(n) == want


@tilec.jit
def next_power_kernel(out_ptr, N: tl.constexpr):
    tl.static_assert(tilec.next_power_of_2(0) == 0)
    tl.store(out_ptr, tilec.next_power_of_2(N) + tilec.next_power_of_2(N - N))


@pytest.mark.parametrize("n", [0, 5, 64])
def test_folded_in_kernels(backend, n):
    out = device_array(np.full(1, -1, np.int32), backend)
    next_power_kernel[(1,)](out, N=n)
    assert to_numpy(out)[0] == (0 if n == 0 else 1 << (n - 1).bit_length())
