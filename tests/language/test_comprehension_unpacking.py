"""List comprehensions unpacking their items (`[a + b for a, b in zip(xs, ys)]`) over
tuples of tensors and constants, `zip`, `enumerate` and nested tuples, unrolled when the
kernel is compiled; unpacking errors carry Python's (and Triton's) words."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -111.0


@tilec.jit
def unpacking_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    xs = tl.tuple([tl.load(x_ptr + i * BLOCK + offs) for i in range(3)])
    weights = (1.0, 10.0, 100.0)
    scaled = [x * w for x, w in zip(xs, weights)]                    # tensors with constants
    shifted = [x + i for i, x in enumerate(scaled)]                  # enumerate
    pairs = ((0, 1), (1, 2), (2, 0))
    mixed = [shifted[a] - shifted[b] for a, b in pairs]              # a tuple of constant pairs
    nested = [a + b * c for a, (b, c) in ((1, (2, 3)), (4, (5, 6)))]  # nested targets: 7, 34
    tl.static_assert(len(mixed) == 3 and nested[0] == 7 and nested[1] == 34)
    total = mixed[0] + mixed[1] * 2 + mixed[2] * 3
    for x, w in zip(xs, weights):                                    # and in an unrolled loop
        total += x * w
    tl.store(out_ptr + offs, total + nested[1])


def test_unpacking_comprehensions(backend, rng):
    block = 16
    x = rng.standard_normal(3 * block).astype(np.float32)
    out = device_array(np.full(block + 2, POISON, np.float32), backend)
    unpacking_kernel[(1,)](device_array(x, backend), out, BLOCK=block)
    xs = x.reshape(3, block).astype(np.float64)
    shifted = [xs[i] * w + i for i, w in enumerate((1.0, 10.0, 100.0))]
    mixed = [shifted[a] - shifted[b] for a, b in ((0, 1), (1, 2), (2, 0))]
    want = mixed[0] + 2 * mixed[1] + 3 * mixed[2] + xs[0] + 10 * xs[1] + 100 * xs[2] + 34
    got = to_numpy(out)
    np.testing.assert_allclose(got[:block], want, rtol=1e-5, atol=1e-4)
    assert (got[block:] == POISON).all()


@tilec.jit
def too_many_kernel(out_ptr):
    vals = [a + b for a, b in ((1, 2, 3),)]


@tilec.jit
def too_few_kernel(out_ptr):
    a, b, c = (1, 2)


@tilec.jit
def not_a_tuple_kernel(out_ptr):
    vals = [a + b for a, b in (1, 2)]


@tilec.jit
def starred_kernel(out_ptr):
    vals = [a for a, *rest in ((1, 2, 3),)]


@pytest.mark.parametrize("kernel, phrase", [
    (too_many_kernel, "too many values to unpack"),
    (too_few_kernel, "not enough values to unpack (expected 3, got 2)"),
    (not_a_tuple_kernel, "cannot unpack non-iterable value"),
    (starred_kernel, "starred assignment targets are not supported"),
])
def test_unpacking_errors(kernel, phrase):
    with pytest.raises(tilec.CompilationError) as info:
        tilec.compile(kernel, signature={"out_ptr": "*fp32"})
    assert phrase in info.value.message
