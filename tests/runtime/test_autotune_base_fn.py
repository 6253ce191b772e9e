"""`base_fn` of autotuned and heuristics-wrapped kernels: the plain Python function under
the @jit function, however the wrappers nest (Triton's test_decorator reads
`kernel.base_fn.__name__`)."""
from __future__ import annotations

import numpy as np

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


def _plain(out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 2 + EVEN, mask=offs < n)


jitted = tilec.jit(_plain)
with_heuristics = tilec.heuristics({"EVEN": lambda args: args["n"] % 2 == 0})(jitted)
tuned = tilec.autotune(configs=[tilec.Config({"BLOCK": 32}), tilec.Config({"BLOCK": 64})], key=["n"])(with_heuristics)


def test_base_fn_is_the_plain_function():
    for wrapper in (with_heuristics, tuned):
        assert wrapper.base_fn is _plain
        assert wrapper.base_fn.__name__ == "_plain"
        assert wrapper.kernel is jitted
    assert tuned.fn is with_heuristics and with_heuristics.fn is jitted


def test_wrapped_kernel_still_runs(backend):
    n = 100
    out = device_array(np.full(n + 4, -1, np.int32), backend)
    tuned[lambda meta: (tilec.cdiv(n, meta["BLOCK"]),)](out, n)
    got = to_numpy(out)
    np.testing.assert_array_equal(got[:n], np.arange(n) * 2 + 1)  # n even: EVEN = 1
    assert (got[n:] == -1).all()
