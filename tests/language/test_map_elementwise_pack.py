"""tl.map_elementwise with pack > 1: the function takes `pack` elements of every argument
(argument by argument: a0, a1, b0, b1 for pack=2) and returns `pack` values of every
result (result by result), which come back as a tuple. Which elements share a call is not
specified, so the functions here pair the i-th element of each argument with the i-th
value of each result, and the tests check that pairing."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def divmod2(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@tilec.jit
def scaled4(x0, x1, x2, x3, s0, s1, s2, s3):
    # x: uint8 (four share a 32-bit register on the GPU), s: fp32; the first result is
    # fp32, the second uint8 (the lane's position in the pack, to see each value land once)
    return (x0.to(tl.float32) * s0, x1.to(tl.float32) * s1, x2.to(tl.float32) * s2, x3.to(tl.float32) * s3,
            x0 ^ 1, x1 ^ 2, x2 ^ 4, x3 ^ 8)


@tilec.jit
def pack_kernel(a_ptr, b_ptr, q_ptr, r_ptr, x_ptr, s_ptr, y_ptr, t_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + tl.arange(0, COLS))                           # broadcast along the rows
    q, r = tl.map_elementwise(divmod2, a, b[None, :], pack=2)
    tl.store(q_ptr + offs, q)
    tl.store(r_ptr + offs, r)
    x = tl.load(x_ptr + offs)
    y, t = tl.map_elementwise(scaled4, x, tl.load(s_ptr + offs), pack=4)
    tl.store(y_ptr + offs, y)
    tl.store(t_ptr + offs, t)


@pytest.mark.parametrize("rows, cols, num_warps", [(16, 32, 4), (1, 8, 4), (64, 4, 2), (8, 128, 8)])
def test_pack_pairs_arguments_with_results(backend, rng, rows, cols, num_warps):
    a = rng.integers(-1000, 1000, (rows, cols)).astype(np.int32)
    b = rng.integers(1, 40, cols).astype(np.int32)
    x = rng.integers(0, 256, (rows, cols)).astype(np.uint8)
    s = rng.standard_normal((rows, cols)).astype(np.float32)
    q, r = (device_array(np.full((rows, cols), -77, np.int32), backend) for _ in range(2))
    y = device_array(np.full((rows, cols), np.nan, np.float32), backend)
    t = device_array(np.full((rows, cols), 0xEE, np.uint8), backend)
    pack_kernel[(1,)](device_array(a, backend), device_array(b, backend), q, r, device_array(x, backend),
                      device_array(s, backend), y, t, ROWS=rows, COLS=cols, num_warps=num_warps)
    want_q = np.trunc(a / b).astype(np.int32)                          # C division: toward zero
    np.testing.assert_array_equal(to_numpy(q), want_q)
    np.testing.assert_array_equal(to_numpy(r), a - want_q * b)
    np.testing.assert_array_equal(to_numpy(y), x.astype(np.float32) * s)
    # which lane of its pack each element was: x ^ t is 1, 2, 4 or 8, each pack holding all four
    lanes = to_numpy(t) ^ x
    assert set(np.unique(lanes)) <= {1, 2, 4, 8}
    counts = [int((lanes == k).sum()) for k in (1, 2, 4, 8)]
    assert counts == [rows * cols // 4] * 4


def test_interpreter_packs_consecutive_elements(monkeypatch):
    """In the interpreter (a documented choice, not a promise of the language), a pack is
    `pack` consecutive elements in row-major order."""
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    x = np.arange(32, dtype=np.uint8)
    t = np.zeros(32, np.uint8)
    pack_kernel[(1,)](np.ones((1, 32), np.int32), np.ones(32, np.int32), np.zeros(32, np.int32),
                      np.zeros(32, np.int32), x, np.ones(32, np.float32), np.zeros(32, np.float32), t,
                      ROWS=1, COLS=32)
    np.testing.assert_array_equal(t ^ x, np.tile([1, 2, 4, 8], 8))


def test_the_ttgir_keeps_whole_packs_per_thread():
    k = tilec.compile(pack_kernel, signature={n: t for n, t in zip(
        ["a_ptr", "b_ptr", "q_ptr", "r_ptr", "x_ptr", "s_ptr", "y_ptr", "t_ptr"],
        ["*i32", "*i32", "*i32", "*i32", "*u8", "*fp32", "*fp32", "*u8"])}, constexprs={"ROWS": 1, "COLS": 8})
    assert '"tile.map_elementwise"' in k.asm["ttgir"] and "pack = 4 : i32" in k.asm["ttgir"]


@tilec.jit
def one_value(x0, x1):
    return x0 + x1


@tilec.jit
def mixed_types(x0, x1):
    return x0, x1.to(tl.float32)


@tilec.jit
def identity(x):
    return x


@tilec.jit
def bad_pack_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if CASE == 0:
        tl.map_elementwise(one_value, x, pack=3)
    elif CASE == 1:
        tl.map_elementwise(one_value, x, pack=2)
    elif CASE == 2:
        tl.map_elementwise(mixed_types, x, pack=2)
    elif CASE == 3:
        tl.map_elementwise(identity, tl.load(x_ptr), pack=2)
    else:
        tl.map_elementwise(one_value, x.reshape(4, 4), pack=8)


@pytest.mark.parametrize("case, message", [
    (0, "map_elementwise's pack must be a power of 2, got 3"),
    (1, "one_value returned 1 value; with pack=2 it returns 2 values per result"),
    (2, "mixed_types returned values 0 to 1 of types fp32, int32; with pack=2"),
    (3, "map_elementwise with pack=2 needs a block argument"),
    (4, "needs a block with a dimension of at least 8 elements, got shape \\[4, 4\\]"),
])
def test_pack_errors(case, message):
    with pytest.raises(tilec.CompilationError, match=message):
        bad_pack_kernel.warmup("*i32", CASE=case, grid=(1,))
