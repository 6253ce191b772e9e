"""Triton's builtins take a `_semantic` keyword, and Triton programs pass it by hand in
the plain (not @jit) methods of their aggregates: `tl.arange(0, 4, _semantic=_semantic)`
in an `__init__(self, _semantic=None)`. tilec's builtins accept it and ignore it (they
use the active semantic layer); an aggregate's plain `__init__` with such a parameter
gets None for it."""
from __future__ import annotations

import numpy as np

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.aggregate
class Ramp:
    offs: tl.tensor

    def __init__(self, _semantic=None):  # as in Triton's own aggregate tests
        self.offs = tl.arange(0, 8, _semantic=_semantic)

    def scaled(self, factor, _semantic=None):
        widened = self.offs.to(tl.float32, _semantic=_semantic)
        return tl.fma(widened, tl.full((8,), factor, tl.float32, _semantic=_semantic), widened, _semantic=_semantic)


@tilec.aggregate
class Shifted:
    offs: tl.tensor

    def __init__(self, start, _semantic, _generator=None):  # no default: the constructor passes None
        self.offs = tl.arange(0, 8, _semantic=_semantic, _generator=_generator) + start


@tilec.jit
def semantic_keyword_kernel(x_ptr, out_ptr, start, factor):
    ramp = Ramp()
    shifted = Shifted(start)
    x = tl.load(x_ptr + ramp.offs)
    total = tl.sum(x, axis=0, _semantic=None)
    tl.store(out_ptr + ramp.offs, ramp.scaled(factor) + shifted.offs.to(tl.float32) + total)


def test_builtins_accept_and_ignore_the_semantic_keyword(backend, rng):
    x = rng.standard_normal(8).astype(np.float32)
    out = device_array(np.full(8, -1.0, np.float32), backend)
    semantic_keyword_kernel[(1,)](device_array(x, backend), out, 100, 2.5)
    offs = np.arange(8, dtype=np.float64)
    np.testing.assert_allclose(to_numpy(out), offs * 2.5 + offs + (offs + 100) + x.astype(np.float64).sum(),
                               rtol=1e-5)


def test_the_signature_shown_stays_the_builtins():
    import inspect
    assert "_semantic" not in inspect.signature(tl.arange).parameters
    assert list(inspect.signature(tl.arange).parameters)[:2] == ["start", "end"]
