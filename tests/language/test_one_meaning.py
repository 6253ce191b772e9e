"""Python syntax whose meaning in a kernel is not Python's: the interpreter runs the
frontend's rewritten kernel (tilec/frontend/interpretable.py) and both backends follow
python_rules.py, so these agree with the compiled kernels (the `backend` fixture runs
each test in the interpreter, compiled to a cubin, and on the GPU)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def logic_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    both = (x > 0) and (y > 0)
    either = (x > 0) or not (y > 0)
    between = -1 < x < y <= 2          # a chained comparison of blocks
    picked = x if x > y else y         # a block condition selects elementwise
    code = both.to(tl.int32) + 2 * either.to(tl.int32) + 4 * between.to(tl.int32)
    tl.store(out_ptr + offs, code.to(tl.float32) + 8 * picked)


def test_and_or_not_chained_and_conditional_expressions_on_blocks(backend, rng):
    x = rng.uniform(-3, 3, 64).astype(np.float32)
    y = rng.uniform(-3, 3, 64).astype(np.float32)
    out = device_array(np.full(64, np.nan, np.float32), backend)
    logic_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, N=64)
    code = ((x > 0) & (y > 0)) + 2 * ((x > 0) | ~(y > 0)) + 4 * ((-1 < x) & (x < y) & (y <= 2))
    np.testing.assert_array_equal(to_numpy(out), code.astype(np.float32) + 8 * np.where(x > y, x, y))


@tilec.jit
def carried_number_kernel(out_ptr, n):
    acc = 2147483000          # a Python number, carried by the loop as an int32
    scale = 1.5
    for i in range(n):
        acc += 400
        scale = scale * 2
    tl.store(out_ptr, acc.to(tl.float32))
    tl.store(out_ptr + 1, scale)


def test_a_number_reassigned_in_a_loop_is_a_tensor(backend):
    out = device_array(np.full(2, np.nan, np.float32), backend)
    carried_number_kernel[(1,)](out, 3)
    wrapped = np.int32(np.int64(2147483000 + 1200) - 2 ** 32)  # int32 wrap-around, as compiled
    np.testing.assert_array_equal(to_numpy(out), [np.float32(wrapped), 12.0])


@tilec.jit
def loop_variable_kernel(out_ptr, n, BIG: tl.constexpr):
    total = tl.zeros((), tl.int32)
    for i in range(n):                 # i is an int32 scalar, as compiled
        total += i * BIG               # wraps in int32
    tl.store(out_ptr, total)
    for j in tl.static_range(3):       # j is a constant
        tl.store(out_ptr + 1 + j, tl.full((), j * BIG, tl.int64).to(tl.int32))


def test_the_loop_variable_has_the_bounds_type(backend):
    out = device_array(np.zeros(4, np.int32), backend)
    loop_variable_kernel[(1,)](out, 5, BIG=2 ** 30)
    total = np.int64(sum(i * 2 ** 30 for i in range(5)))
    expected = [np.int64(total).astype(np.int32)] + [np.int64(j * 2 ** 30).astype(np.int32) for j in range(3)]
    np.testing.assert_array_equal(to_numpy(out), np.array(expected, np.int32))


@tilec.jit
def early_exit_kernel(x_ptr, out_ptr, n, limit):
    total = 0.0
    for i in range(n):
        v = tl.load(x_ptr + i)
        if v < 0:
            continue
        if total > limit:
            break
        total += v
    tl.store(out_ptr, total)


@pytest.mark.parametrize("limit", [1.0, 100.0])
def test_break_and_continue_run_as_rewritten(backend, rng, limit):
    x = rng.uniform(-1, 2, 32).astype(np.float32)
    out = device_array(np.full(1, np.nan, np.float32), backend)
    early_exit_kernel[(1,)](device_array(x, backend), out, 32, limit)
    total = np.float32(0)
    for v in x:
        if v < 0:
            continue
        if total > limit:
            break
        total = np.float32(total + v)
    np.testing.assert_allclose(to_numpy(out)[0], total, rtol=1e-6)
