"""`break` and `continue` in kernel loops (Triton refuses both): for over range,
tl.range and tl.static_range, while, nested loops, exits inside nested ifs, on both
backends against the same Python loop run on the host. Also early `return`s from `if`
branches, in kernels and in called @jit functions returning values."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def search_kernel(x_ptr, out_ptr, n, limit, KIND: tl.constexpr):
    """Per program: the first index whose value exceeds `limit` and the sum up to it."""
    pid = tl.program_id(0)
    base = x_ptr + pid * n
    total = 0.0
    found = -1
    if KIND == "for":
        for i in range(n):
            v = tl.load(base + i)
            if v > limit:
                found = i
                break
            total += v
    elif KIND == "tl.range":
        for i in tl.range(0, n, 1, num_stages=2):
            v = tl.load(base + i)
            if v > limit:
                found = i
                break
            total += v
    else:
        i = 0
        while i < n:
            v = tl.load(base + i)
            if v > limit:
                found = i
                break
            total += v
            i += 1
    tl.store(out_ptr + pid * 2, total)
    tl.store(out_ptr + pid * 2 + 1, found.to(tl.float32) if isinstance(found, tl.tensor) else found * 1.0)


def _search_reference(x, limit):
    out = []
    for row in x:
        total, found = 0.0, -1
        for i, v in enumerate(row):
            if v > limit:
                found = i
                break
            total += np.float32(v)
        out += [total, found]
    return np.array(out, np.float32)


@pytest.mark.parametrize("kind", ["for", "tl.range", "while"])
def test_break_stops_the_search(backend, kind):
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, (4, 40)).astype(np.float32)
    x[0, 7] = 5  # found early
    x[2, 39] = 5  # found last
    x[3, 0] = 5  # found first; row 1 never
    out = device_array(np.full(8, np.nan, np.float32), backend)
    search_kernel[(4,)](device_array(x, backend), out, 40, 2.0, KIND=kind)
    np.testing.assert_allclose(to_numpy(out), _search_reference(x, 2.0), rtol=1e-6)


@tilec.jit
def continue_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    skipped = 0
    for k in range(n):
        if k % 3 == 0:
            skipped += 1
            continue
        x = tl.load(x_ptr + k * BLOCK + offs)
        if k % 5 == 4:
            acc = acc - x
            continue
        elif k > 9:
            if k % 2 == 1:
                continue
            acc += 100 * x
        else:
            acc += x
    tl.store(out_ptr + offs, acc + skipped)


def test_continue_in_nested_branches(backend):
    rng = np.random.default_rng(5)
    n, block = 17, 64
    x = rng.standard_normal((n, block)).astype(np.float32)
    out = device_array(np.full(block, np.nan, np.float32), backend)
    continue_kernel[(1,)](device_array(x, backend), out, n, BLOCK=block)
    acc = np.zeros(block, np.float64)
    skipped = 0
    for k in range(n):
        if k % 3 == 0:
            skipped += 1
            continue
        if k % 5 == 4:
            acc -= x[k]
            continue
        elif k > 9:
            if k % 2 == 1:
                continue
            acc += 100 * x[k]
        else:
            acc += x[k]
    np.testing.assert_allclose(to_numpy(out), acc + skipped, rtol=1e-5, atol=1e-4)


@tilec.jit
def nested_kernel(out_ptr, n, m):
    count = 0
    for i in range(n):
        if i == 6:
            break
        j = 0
        while j < m:
            j += 1
            if j % 2 == 0:
                continue
            if j > i:
                break
            count += i * 100 + j
    for s in tl.static_range(5):
        if s == 3:
            break
        count += 1000
    for k in range(n, -3, -2):  # a negative step
        if k < 2:
            break
        count += k * 10000
    tl.store(out_ptr, count)


def test_nested_loops_exit_only_their_own_loop(backend):
    out = device_array(np.full(1, -1, np.int32), backend)
    nested_kernel[(1,)](out, 9, 7)
    count = 0
    for i in range(9):
        if i == 6:
            break
        j = 0
        while j < 7:
            j += 1
            if j % 2 == 0:
                continue
            if j > i:
                break
            count += i * 100 + j
    for k in range(9, -3, -2):
        if k < 2:
            break
        count += k * 10000
    assert int(to_numpy(out)[0]) == count + 3000


@tilec.jit
def reused_names_kernel(x_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    """Names first assigned inside one loop, assigned afresh in later loops and ifs (the
    layer-norm tutorial's `cols`)."""
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    for i in range(0, n, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += 2 * tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if flag > 0:
        offs = tl.arange(0, BLOCK)
        scale = 1.0
    else:
        offs = tl.arange(0, BLOCK)
        scale = -1.0
    j = 0
    while j < 3:
        step = j + 1  # first assigned in this loop ...
        acc += step
        j += 1
    while j < 5:
        step = 2 * j  # ... and again in this one
        acc += step
        j += 1
    tl.store(out_ptr + offs, acc * scale)


@pytest.mark.parametrize("flag", [1, 0])
def test_names_first_assigned_in_a_loop_can_be_assigned_again(backend, rng, flag):
    n, block = 100, 32
    x = rng.standard_normal(n).astype(np.float32)
    out = device_array(np.full(block, np.nan, np.float32), backend)
    reused_names_kernel[(1,)](device_array(x, backend), out, n, flag, BLOCK=block)
    column_sums = np.pad(x.astype(np.float64), (0, 4 * block - n)).reshape(4, block).sum(axis=0)
    expected = (3 * column_sums + (1 + 2 + 3) + (6 + 8)) * (1.0 if flag else -1.0)
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------- early returns


@tilec.jit
def pick(x, y, c):
    if c > 0:
        return x + 1
    elif c < -5:
        return x * 2
    return y


@tilec.jit
def clamp_first(x, lo):
    if x < lo:
        return lo
    if x > 100.0:
        if lo > 0:
            return 100.0 + lo
        return 100.0
    return x


@tilec.jit
def early_return_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    if row == 0:
        tl.store(out_ptr + row * n_cols + offs, x * 0 - 1, mask=offs < n_cols)
        return
    s = tl.sum(x, axis=0)
    v = pick(s, s * 0 + 7.0, row - 3)
    v = clamp_first(v, 1.5)
    tl.store(out_ptr + row * n_cols + offs, x + v, mask=offs < n_cols)


def test_early_returns_in_kernels_and_functions(backend, rng):
    # More programs than rows: the extra ones return at once (the usual row-kernel guard).
    n_rows, n_cols = 12, 20
    x = (rng.standard_normal((n_rows, n_cols)) * 20).astype(np.float32)
    out = device_array(np.full((n_rows, n_cols), np.nan, np.float32), backend)
    early_return_kernel[(n_rows + 3,)](device_array(x, backend), out, n_rows, n_cols, BLOCK=32)
    expected = np.empty_like(x)
    expected[0] = -1.0
    for r in range(1, n_rows):
        s = np.float32(x[r].astype(np.float64).sum())
        c = r - 3
        v = s + np.float32(1) if c > 0 else (s * np.float32(2) if c < -5 else np.float32(7.0))
        v = np.float32(1.5) if v < 1.5 else (np.float32(101.5) if v > 100 else v)
        expected[r] = x[r] + v
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-5, atol=1e-4)


@tilec.jit
def scaled_rows(x, row, n_rows, BLOCK: tl.constexpr):
    """Returns early with a scalar; later rebinds its parameter `x` to a block of pointers."""
    if row >= n_rows:
        return 0.0
    offs = tl.arange(0, BLOCK)
    x = x + row * BLOCK + offs
    return tl.sum(tl.load(x), axis=0)


@tilec.jit
def rebound_after_return_kernel(OUT, X, sums_ptr, n_rows, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # vLLM's rotary kernel: a guard returns, then the pointer parameters become blocks of
    # pointers. The returning path never reaches the end, so the two types never meet.
    pid = tl.program_id(0)
    total = scaled_rows(X, pid, n_rows, BLOCK_K)
    tl.store(sums_ptr + pid, total)
    if pid * BLOCK_M >= n_rows:
        return
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = tl.arange(0, BLOCK_K)
    X = X + rm[:, None] * BLOCK_K + rk[None, :]
    OUT = OUT + rm[:, None] * BLOCK_K + rk[None, :]
    tl.store(OUT, tl.load(X, mask=rm[:, None] < n_rows) * 2, mask=rm[:, None] < n_rows)


def test_names_rebound_after_an_early_return(backend, rng):
    n_rows, block_m, block_k = 13, 8, 32
    x = rng.standard_normal((n_rows, block_k)).astype(np.float32)
    out = device_array(np.full((n_rows, block_k), np.nan, np.float32), backend)
    sums = device_array(np.full(20, np.nan, np.float32), backend)
    rebound_after_return_kernel[(20,)](out, device_array(x, backend), sums, n_rows, BLOCK_M=block_m, BLOCK_K=block_k)
    np.testing.assert_array_equal(to_numpy(out), x * 2)  # programs 2..19 returned early
    expected_sums = np.concatenate([x.astype(np.float64).sum(axis=1), np.zeros(20 - n_rows)])
    np.testing.assert_allclose(to_numpy(sums), expected_sums, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------- while loops carrying condition-only values


@tilec.jit
def halve_until_small(x_ptr, y_ptr, iters_ptr, max_iters, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    done = False
    it = 0
    while (not done) and (it < max_iters):  # `done` is read only by the condition
        x = x * 0.5
        done = tl.max(tl.abs(x), axis=0) < 1.0
        it += 1
    tl.store(y_ptr + offs, x)
    tl.store(iters_ptr, it)


@tilec.jit
def condition_only_value(a_ptr, iters_ptr, tol):
    x = tl.load(a_ptr)
    y = x
    it = 0
    while y > tol:
        y = x  # y is overwritten before any read in the body
        x = x * 0.5
        it += 1
    tl.store(iters_ptr, it)


def test_while_loops_carrying_values_only_the_condition_reads(backend, rng):
    x = (rng.standard_normal(16) * 100).astype(np.float32)
    y = device_array(np.full(16, np.nan, np.float32), backend)
    iters = device_array(np.full(1, -1, np.int32), backend)
    halve_until_small[(1,)](device_array(x, backend), y, iters, 50, BLOCK=16)
    expected, count = x.copy(), 0
    while not (np.abs(expected).max() < 1.0) and count < 50:
        expected, count = expected * np.float32(0.5), count + 1
    np.testing.assert_array_equal(to_numpy(y), expected)
    assert to_numpy(iters)[0] == count

    a = np.array([37.5], np.float32)
    condition_only_value[(1,)](device_array(a, backend), iters, 0.1)
    xv, yv, count = a[0], a[0], 0
    while yv > np.float32(0.1):
        yv, xv, count = xv, xv * np.float32(0.5), count + 1
    assert to_numpy(iters)[0] == count
