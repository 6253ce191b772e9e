"""`@tilec.aggregate` classes (Triton's `triton.aggregate` / `tl.core._aggregate`): fields
with annotations, inherited fields and defaults, the generated constructor, immutability
(`tl.aggregate_replace` makes changed copies), @jit / constexpr / plain methods, operator
methods, aggregates passed to and returned from @jit functions and carried through loops
and `if`s, constexpr fields used as shapes."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -333.0


@tilec.aggregate
class Window:
    offs: tl.tensor
    n: tl.constexpr

    @tilec.jit
    def load(self, ptr):
        return tl.load(ptr + self.offs, mask=self.offs < self.n, other=0.0)

    @tilec.constexpr_function
    def doubled_n(self):
        return self.n * 2

    def width(self):  # a plain method: runs while compiling, on the kernel's values
        return self.offs.shape[0]


@tilec.aggregate
class ScaledWindow(Window):  # fields: offs, n (inherited), scale, bias
    scale: tl.tensor
    bias: tl.constexpr = 0.25

    @tilec.jit
    def load(self, ptr):
        return Window.load(self, ptr) * self.scale + self.bias  # the base's method, read from its class

    @tilec.jit
    def __add__(self, other):
        return tl.aggregate_replace(self, scale=self.scale + other)

    @tilec.jit
    def __radd__(self, other):
        return tl.aggregate_replace(self, scale=self.scale + other * 10)

    @tilec.jit
    def __lt__(self, other):
        return self.scale < other

    @tilec.jit
    def __getitem__(self, index):
        return self.offs + index


@tilec.jit
def _make_window(offs, n: tl.constexpr, scale):
    return ScaledWindow(offs, n, scale=scale)  # built in a @jit function and returned


@tilec.jit
def _total(window, ptr):
    return tl.sum(window.load(ptr), axis=0)


@tilec.jit
def aggregate_kernel(x_ptr, out_ptr, scale, flag, BLOCK: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    w = _make_window(offs, N, scale)
    tl.static_assert(w.doubled_n() == 2 * N and w.width() == BLOCK and w.bias == 0.25)
    w = w + 1.0                            # __add__
    w = 2.0 + w                            # __radd__ of a constant
    w = tl.full([], 3.0, tl.float32) + w   # __radd__ ahead of the tensor's own __add__
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(3):                     # carried through a loop (its tensors)
        acc += w.load(x_ptr)
        w = tl.aggregate_replace(w, scale=w.scale * 2)
    if flag > 0:                           # merged across a run-time `if`
        w = tl.aggregate_replace(w, scale=-w.scale)
    small = w < 0.0                        # __lt__
    tl.store(out_ptr + offs, acc + _total(w, x_ptr) + small.to(tl.float32) * 1000 + w[1].to(tl.float32))
    tl.store(out_ptr + BLOCK + tl.arange(0, w.n // 3), tl.zeros([w.n // 3], tl.float32) + w.doubled_n())


@pytest.mark.parametrize("flag", [0, 1])
def test_aggregates_in_kernels(backend, rng, flag):
    block, n = 16, 12
    x = rng.standard_normal(block).astype(np.float32)
    scale = float(rng.uniform(0.5, 1.5))
    out = device_array(np.full(block + n + 4, POISON, np.float32), backend)
    aggregate_kernel[(1,)](device_array(x, backend), out, scale, flag, BLOCK=block, N=n)
    masked = np.where(np.arange(block) < n, x, 0).astype(np.float64)
    s = np.float32(scale) + 1 + 20 + 30
    acc = sum(masked * s * 2 ** i + 0.25 for i in range(3))
    final = s * 8 * (-1 if flag else 1)
    total = (masked * final + 0.25).sum()
    want = acc + total + (1000 if flag else 0) + np.arange(block) + 1
    got = to_numpy(out)
    np.testing.assert_allclose(got[:block], want, rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(got[block:block + n // 3], 2 * n)
    assert (got[block + n // 3:] == POISON).all()


# ----------------------------------------------------------------------------- constructors


@tilec.aggregate
class Pair:
    first: tl.tensor
    second: tl.tensor

    def __init__(self, value):  # a constructor of its own: it must set every field
        self.first = value
        self.second = value * 2


@tilec.aggregate
class Config:
    rows: tl.constexpr
    cols: tl.constexpr

    @tilec.constexpr_function
    def __init__(self, size):
        self.rows = tl.constexpr(size)
        self.cols = tl.constexpr(size * 2)


@tl.core._aggregate  # Triton's spelling of the decorator
class Counter:
    count: tl.tensor


@tilec.jit
def constructors_kernel(out_ptr, v, SIZE: tl.constexpr):
    pair = Pair(v)                     # a run-time scalar in tensor fields
    config = Config(SIZE)
    c = Counter(7)                     # a number in a tensor field becomes an int32 scalar
    tl.static_assert(c.count.dtype == tl.int32)
    block = tl.arange(0, config.cols)  # constexpr fields are shapes
    tl.store(out_ptr + block, (pair.first + pair.second + c.count + block).to(tl.float32))


def test_user_constructors(backend, rng):
    v = int(rng.integers(1, 100))
    out = device_array(np.full(16, POISON, np.float32), backend)
    constructors_kernel[(1,)](out, v, SIZE=4)
    got = to_numpy(out)
    np.testing.assert_array_equal(got[:8], 3 * v + 7 + np.arange(8))
    assert (got[8:] == POISON).all()


def test_generated_constructor_on_the_host():
    @tilec.aggregate
    class State:
        x: tl.constexpr
        y: tl.constexpr = 42

    @tilec.aggregate
    class Child(State):
        z: tl.constexpr

    state = State(3)
    assert isinstance(state.x, tl.constexpr) and state.x.value == 3 and state.y.value == 42
    assert State(3, y=7).y.value == 7 and State(x=1, y=2).x.value == 1
    child = Child(1, 2, 3)
    assert Child.__tilec_fields__ == ("x", "y", "z") and (child.x.value, child.y.value, child.z.value) == (1, 2, 3)
    with pytest.raises(TypeError, match="missing argument 'x'"):
        Child(z=5)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        State(1, 2, 3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'w'"):
        State(1, w=2)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        State(1, x=2)


def test_immutability_and_replace_on_the_host():
    @tilec.aggregate
    class State:
        x: tl.constexpr
        y: tl.constexpr

    state = State(10, 20)
    with pytest.raises(AttributeError, match="cannot assign to field 'x' on immutable aggregate State"):
        state.x = tl.constexpr(99)
    with pytest.raises(AttributeError, match="has no field 'z'"):
        state.z = 1
    copy = tl.aggregate_replace(state, x=30)
    assert (copy.x.value, copy.y.value) == (30, 20) and (state.x.value, state.y.value) == (10, 20)
    with pytest.raises(TypeError, match="has no field 'z'"):
        tl.aggregate_replace(state, z=99)
    with pytest.raises(TypeError, match="expects an aggregate instance"):
        tl.aggregate_replace(42, x=1)


def test_only_aggregates_can_be_inherited():
    class Base:
        pass

    with pytest.raises(TypeError, match="Aggregates can only inherit from other aggregates"):
        @tilec.aggregate
        class Child(Base):
            x: tl.constexpr


def test_a_jit_constructor_is_refused():
    with pytest.raises(TypeError, match="the __init__ of aggregate Made cannot be a @jit function"):
        @tilec.aggregate
        class Made:
            x: tl.tensor

            @tilec.jit
            def __init__(self, x):
                pass


# ----------------------------------------------------------------------------- refused in kernels


@tilec.jit
def assign_field_kernel(out_ptr):
    w = Window(tl.arange(0, 8), 8)
    w.n = 4
    tl.store(out_ptr, 0)


@tilec.jit
def runtime_constexpr_field_kernel(out_ptr, n):
    w = Window(tl.arange(0, 8), n)
    tl.store(out_ptr, 0)


@tilec.jit
def missing_field_kernel(out_ptr):
    w = Window(tl.arange(0, 8))
    tl.store(out_ptr, 0)


@pytest.mark.parametrize("kernel, message", [
    (assign_field_kernel, "attribute assignment is not supported in kernels; an aggregate is immutable"),
    (runtime_constexpr_field_kernel, "field 'n' of Window is tl.constexpr, but its value is only known when the "
                                     "kernel runs"),
    (missing_field_kernel, "Window() is missing argument 'n'"),
])
def test_refused_in_kernels(kernel, message, monkeypatch):
    signature = {"out_ptr": "*i32", "n": "i32"} if kernel is runtime_constexpr_field_kernel else {"out_ptr": "*i32"}
    with pytest.raises(tilec.CompilationError) as info:
        tilec.compile(kernel, signature=signature)
    assert message in info.value.message
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    args = (np.zeros(1, np.int32), 3) if kernel is runtime_constexpr_field_kernel else (np.zeros(1, np.int32),)
    with pytest.raises(tilec.CompilationError, match=message.split(" (")[0].replace("(", r"\(").replace(")", r"\)")):
        kernel[(1,)](*args)


# ----------------------------------------------------------------------------- the cache key


@tilec.aggregate
class Doubler:
    value: tl.tensor

    @tilec.jit
    def twice(self):
        return self.value * 2


@tilec.jit
def doubler_kernel(out_ptr):
    tl.store(out_ptr, Doubler(tl.load(out_ptr)).twice())


def test_editing_a_method_changes_the_kernels_cache_key():
    method = Doubler.twice
    before = doubler_kernel.cache_hash()
    original = method.src
    try:
        method.update_src(original.replace("* 2", "* 3"))
        assert doubler_kernel.cache_hash() != before
    finally:
        method.update_src(original)
    assert doubler_kernel.cache_hash() == before
