"""tl.fdiv's three divisions, as Triton 3.9 maps them to PTX: the default (as `/`, fp32
`div.full.f32`), `ieee_rounding=True` (IEEE's, `div.rn`) and `approx=True` (fp32 only,
`div.approx.f32`), on both backends, with the instruction each compiles to."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


@tilec.jit
def fdiv_kernel(x_ptr, y_ptr, out_ptr, MODE: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    if MODE == "approx":
        z = tl.fdiv(x, y, approx=True)
    elif MODE == "ieee":
        z = tl.fdiv(x, y, ieee_rounding=True)
    else:
        z = tl.fdiv(x, y)
    tl.static_assert(z.dtype == x.dtype)
    tl.store(out_ptr + i, z)
    # A scalar operand (a Python float) too.
    tl.store(out_ptr + N + tl.arange(0, 1), tl.math.fdiv(tl.load(x_ptr + tl.arange(0, 1)), 3.0, approx=True))


def _ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """How many fp32 values lie between got and want (both fp32, same sign here)."""
    return np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))


@pytest.mark.parametrize("mode,ulps", [("approx", 2), ("full", 2), ("ieee", 0)])
def test_fp32_division_modes(backend, rng, mode, ulps):
    n = 256
    x = (rng.uniform(0.5, 2.0, n) * 10.0 ** rng.integers(-15, 15, n)).astype(np.float32)
    y = (rng.uniform(0.5, 2.0, n) * 10.0 ** rng.integers(-15, 15, n)).astype(np.float32)
    out = device_array(np.full(n + 1, np.nan, np.float32), backend)
    fdiv_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, MODE=mode, N=n)
    got = to_numpy(out)
    want = (x.astype(np.float64) / y.astype(np.float64)).astype(np.float32)  # correctly rounded
    # The interpreter divides exactly in every mode; the GPU within the instruction's ulps.
    allowed = 0 if backend == "interpreter" else ulps
    assert _ulp_distance(got[:n], want).max() <= allowed
    # The scalar division is approx=True in every mode.
    assert _ulp_distance(got[n:], np.float32(x[0] / np.float64(3.0)).reshape(1)).max() <= (
        0 if backend == "interpreter" else 2)


@tilec.jit
def fdiv_fp64_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    tl.store(out_ptr + i, tl.fdiv(x, y, ieee_rounding=True))
    tl.store(out_ptr + N + i, tl.fdiv(x, y))


def test_fp64_division_is_ieee_either_way(backend, rng):
    n = 64
    x = rng.standard_normal(n) * 1e5
    y = rng.uniform(0.5, 3.0, n) * np.sign(rng.standard_normal(n))
    out = device_array(np.full(2 * n, np.nan), backend)
    fdiv_fp64_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, N=n)
    np.testing.assert_array_equal(to_numpy(out), np.concatenate([x / y, x / y]))


def _ptx(mode: str) -> str:
    from tilec.backend import toolkit
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:
        pytest.skip("ptxas is not available")
    kernel = tilec.compile(fdiv_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16"},
                           constexprs={"MODE": mode, "N": 128}, target="sm_90")
    assert kernel.asm["cubin"]
    return kernel.asm["ptx"]


@pytest.mark.parametrize("mode,instruction", [("approx", "div.approx.f32"), ("full", "div.full.f32"),
                                              ("ieee", "div.rn.f32")])
def test_each_mode_compiles_to_its_instruction(mode, instruction):
    ptx = _ptx(mode)
    vector = [line.split()[0] for line in ptx.splitlines() if line.strip().startswith("div.")]
    # The block's divisions all use the mode's instruction; the scalar one is div.approx.
    assert vector.count(instruction) >= 1
    assert set(vector) == {instruction, "div.approx.f32"}, vector


@tilec.jit
def bad_fdiv_kernel(x_ptr, out_ptr, KIND: tl.constexpr):
    i = tl.arange(0, 16)
    x = tl.load(x_ptr + i)
    if KIND == "both":
        z = tl.fdiv(x, x, ieee_rounding=True, approx=True)
    elif KIND == "same":
        z = tl.fdiv(x, x, approx=True)
    else:
        z = tl.fdiv(x, 3.0, approx=True)
    tl.store(out_ptr + i, z)


@pytest.mark.parametrize("dtype,kind,message", [
    (np.float32, "both", r"fdiv cannot be both approximate and IEEE-rounded"),
    (np.float64, "approx", r"fdiv with approx=True divides fp32 values \(div.approx.f32\), got fp64"),
    (np.int32, "same", r"fdiv needs floating-point operands, got int32"),
])
def test_approx_refuses_what_it_cannot_do(backend, dtype, kind, message):
    x = np.arange(1, 17).astype(dtype)
    with pytest.raises(tilec.CompilationError, match=message):
        bad_fdiv_kernel[(1,)](device_array(x, backend), device_array(np.zeros(16, dtype), backend), KIND=kind)
