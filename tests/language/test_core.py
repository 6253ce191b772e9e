"""The language features of the walking skeleton, on both backends.

Each test runs in the interpreter and, where a GPU answers, compiled on the GPU (the
`backend` fixture). Inputs are random, outputs are poisoned before the run, references
are computed by NumPy in float64.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

# Tolerances per op family (relative to the reference's scale): exact for integer,
# compare and select ops; fp32 rounding for arithmetic; the hardware's approximate
# exp2 (as Triton uses) for tl.exp.
FP32_ARITH = 2e-7
FP32_EXP = 2e-6


@tilec.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    elif OP == "mul":
        z = x * y
    elif OP == "div":
        z = x / y
    elif OP == "max":
        z = tl.maximum(x, y)
    elif OP == "min":
        z = tl.minimum(x, y)
    elif OP == "where":
        z = tl.where(x > y, x, y * 2)
    else:
        z = x + y * 3 - 1
    tl.store(out_ptr + offs, z, mask=mask)


_NUMPY_OPS = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y, "max": np.maximum, "min": np.minimum,
    "where": lambda x, y: np.where(x > y, x, y * 2), "mixed": lambda x, y: x + y * 3 - 1,
}


@pytest.mark.parametrize("n", [1, 127, 1024, 3000])
@pytest.mark.parametrize("op", list(_NUMPY_OPS))
def test_binary_f32(backend, rng, op, n):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    if op == "div":
        y = np.where(np.abs(y) < 0.1, 0.5, y).astype(np.float32)
    out = device_array(np.full(n, np.nan, np.float32), backend)
    binary_kernel[(tilec.cdiv(n, 256),)](device_array(x, backend), device_array(y, backend), out, n,
                                         OP=op, BLOCK=256)
    expected = _NUMPY_OPS[op](x.astype(np.float64), y.astype(np.float64))
    np.testing.assert_allclose(to_numpy(out), expected, rtol=FP32_ARITH * 2, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "max", "min", "where", "mixed"])
def test_binary_int(backend, rng, op, dtype):
    n = 1000
    x = rng.integers(-1000, 1000, n).astype(dtype)
    y = rng.integers(-1000, 1000, n).astype(dtype)
    out = device_array(np.full(n, -7, dtype), backend)
    binary_kernel[(tilec.cdiv(n, 512),)](device_array(x, backend), device_array(y, backend), out, n,
                                         OP=op, BLOCK=512)
    np.testing.assert_array_equal(to_numpy(out), _NUMPY_OPS[op](x, y).astype(dtype))


@tilec.jit
def exp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.exp(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def test_exp(backend, rng):
    n = 5000
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    x[:4] = [0.0, -0.0, -100.0, 80.0]
    out = device_array(np.full(n, np.nan, np.float32), backend)
    exp_kernel[(tilec.cdiv(n, 1024),)](device_array(x, backend), out, n, BLOCK=1024)
    expected = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(to_numpy(out), expected, rtol=FP32_EXP, atol=1e-37)


@tilec.jit
def reduce_kernel(x_ptr, out_ptr, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    if KIND == "sum":
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        r = tl.sum(x, axis=0)
    elif KIND == "max":
        x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
        r = tl.max(x, axis=0)
    else:
        x = tl.load(x_ptr + offs, mask=mask, other=float("inf"))
        r = tl.min(x, axis=0)
    tl.store(out_ptr + tl.program_id(0), r)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("block,n", [(32, 32), (128, 100), (1024, 1000), (4096, 4096)])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_reduce_1d(backend, rng, kind, block, n, num_warps):
    x = rng.standard_normal(n).astype(np.float32)
    out = device_array(np.full(1, np.nan, np.float32), backend)
    reduce_kernel[(1,)](device_array(x, backend), out, n, KIND=kind, BLOCK=block, num_warps=num_warps)
    expected = {"sum": np.sum, "max": np.max, "min": np.min}[kind](x.astype(np.float64))
    tolerance = 1e-6 * np.sum(np.abs(x)) if kind == "sum" else 0
    np.testing.assert_allclose(to_numpy(out)[0], expected, atol=tolerance, rtol=0)


@tilec.jit
def scalar_kernel(out_ptr, a, b, c):
    pid = tl.program_id(0)
    value = a * 3 + b
    if pid == 0:
        value = value + c
    tl.store(out_ptr + pid, value)


def test_scalar_args_and_runtime_if(backend):
    out = device_array(np.full(3, -1, np.int32), backend)
    scalar_kernel[(3,)](out, 5, 7, 100)
    np.testing.assert_array_equal(to_numpy(out), [122, 22, 22])


@tilec.jit
def int64_kernel(out_ptr, big):
    tl.store(out_ptr, big + 1)


def test_large_int_is_int64(backend):
    out = device_array(np.zeros(1, np.int64), backend)
    big = (1 << 40) + 3
    int64_kernel[(1,)](out, big)
    assert int(to_numpy(out)[0]) == big + 1


@tilec.jit
def loop_kernel(x_ptr, out_ptr, n_chunks, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(n_chunks):
        acc += tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def test_loop_carried_tensor(backend, rng):
    chunks, block = 5, 256
    x = rng.standard_normal(chunks * block).astype(np.float32)
    out = device_array(np.full(block, np.nan, np.float32), backend)
    loop_kernel[(1,)](device_array(x, backend), out, chunks, BLOCK=block)
    expected = x.astype(np.float64).reshape(chunks, block).sum(axis=0)
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-6, atol=1e-6)


@tilec.jit
def grid2d_kernel(out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, row * 1000 + cols, mask=mask)


def test_2d_grid_and_callable_grid(backend):
    rows, cols = 5, 300
    out = device_array(np.full(rows * cols, -1, np.int32), backend)
    grid = lambda meta: (rows, tilec.cdiv(meta["n_cols"], meta["BLOCK"]))
    grid2d_kernel[grid](out, cols, BLOCK=128)
    expected = (np.arange(rows)[:, None] * 1000 + np.arange(cols)[None, :]).reshape(-1)
    np.testing.assert_array_equal(to_numpy(out), expected)


@tilec.jit
def bias_activation_kernel(x_ptr, bias_ptr, y_ptr, stride, M: tl.constexpr, N: tl.constexpr, ROW_BIAS: tl.constexpr):
    """A fused epilogue: a tile plus a broadcast bias (one value per column, or per row),
    then a leaky ReLU."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :])
    if ROW_BIAS:
        y = x + tl.load(bias_ptr + rm)[:, None]
    else:
        y = x + tl.load(bias_ptr + rn)[None, :]
    y = tl.where(y > 0, y, 0.01 * y)
    tl.store(y_ptr + rm[:, None] * stride + rn[None, :], y)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("m,n,num_warps,row_bias", [(64, 256, 8, False), (64, 256, 8, True), (32, 128, 4, False),
                                                   (128, 64, 4, True)])
def test_broadcast_bias_activation(backend, rng, dtype, m, n, num_warps, row_bias):
    stride = n + 8
    x = rng.standard_normal((m, stride)).astype(dtype)
    bias = rng.standard_normal(m if row_bias else n).astype(dtype)
    y = device_array(np.full((m, stride), np.nan, dtype), backend)
    bias_activation_kernel[(1,)](device_array(x, backend), device_array(bias, backend), y, stride, M=m, N=n,
                                 ROW_BIAS=row_bias, num_warps=num_warps)
    ref = x[:, :n].astype(np.float64) + (bias[:, None] if row_bias else bias[None, :]).astype(np.float64)
    ref = np.where(ref > 0, ref, 0.01 * ref)
    got = to_numpy(y)
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(got[:, :n].astype(np.float64), ref, rtol=tol, atol=tol)
    assert np.isnan(got[:, n:]).all()  # the padding columns are left alone


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("row_bias", [False, True])
@pytest.mark.parametrize("m,n,num_warps", [(64, 256, 8), (32, 128, 4), (128, 64, 4)])
def test_broadcast_bias_needs_no_shared_memory(dtype, row_bias, m, n, num_warps):
    """Compiled, that kernel runs in the tile's vectorised layout throughout: the bias is
    loaded straight into the broadcast's layout, nothing is exchanged between threads,
    and no shared memory is used."""
    from tilec.backend import toolkit
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:
        pytest.skip("ptxas is not available")
    k = tilec.compile(bias_activation_kernel,
                      signature={"x_ptr": f"*{dtype}:16", "bias_ptr": f"*{dtype}:16", "y_ptr": f"*{dtype}:16",
                                 "stride": "i32:16"},
                      constexprs={"M": m, "N": n, "ROW_BIAS": row_bias}, target="sm_90", num_warps=num_warps)
    assert k.shared == 0 and "tilegpu.convert_layout" not in k.asm["ttgir"]
    assert "bar.sync" not in k.asm["ptx"] and k.n_spills == 0


@tilec.jit
def broadcast_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows)          # [M]
    y = tl.load(y_ptr + cols)          # [N]
    z = x[:, None] * 10 + y[None, :]   # [M, N]
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], z)
    tl.store(out_ptr + M * N + rows, tl.sum(z, axis=1))
    tl.store(out_ptr + M * N + M + cols, tl.max(z, axis=0))


@pytest.mark.parametrize("m,n", [(4, 64), (32, 32), (64, 16)])
def test_2d_broadcast_and_reductions(backend, rng, m, n):
    x = rng.standard_normal(m).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = device_array(np.full(m * n + m + n, np.nan, np.float32), backend)
    broadcast_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, M=m, N=n)
    z = x.astype(np.float64)[:, None] * 10 + y.astype(np.float64)[None, :]
    got = to_numpy(out)
    np.testing.assert_allclose(got[:m * n].reshape(m, n), z, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[m * n:m * n + m], z.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[m * n + m:], z.max(axis=0), rtol=1e-6, atol=1e-6)
