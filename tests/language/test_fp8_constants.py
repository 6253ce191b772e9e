"""fp8 constants (Triton 3.7 creates them directly): tl.full / tl.zeros / tl.full_like of
an fp8 type, a constexpr or a scalar converted to fp8, a Python float stored through an
fp8 pointer, `other=` of an fp8 load, a float selected into an fp8 tensor. Each value is
rounded to nearest even and saturated at the largest finite value (infinities included),
NaN staying NaN, as conversions of run-time values are. Arithmetic on fp8 stays refused
(docs/language.md, "Refused on purpose"). On both backends."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

FORMATS = {"fp8e4nv": (tl.float8e4nv, ml_dtypes.float8_e4m3fn, 448.0),
           "fp8e5": (tl.float8e5, ml_dtypes.float8_e5m2, 57344.0)}
# Inexact, halfway, overflowing, infinite, tiny and NaN constants.
VALUES = (1.1, -2.7, 0.3, 465.0, 1e6, -float("inf"), 1e-9, float("nan"))


def reference(values, fmt: str) -> np.ndarray:
    """Each value as the format holds it: saturated, then rounded to nearest even."""
    _, np_dtype, largest = FORMATS[fmt]
    v = np.asarray(values, np.float64)
    return np.where(np.isnan(v), v, np.clip(v, -largest, largest)).astype(np_dtype)


@tilec.jit
def constants_kernel(x_ptr, out_ptr, DT: tl.constexpr, V0: tl.constexpr, V1: tl.constexpr, V2: tl.constexpr,
                     V3: tl.constexpr, V4: tl.constexpr, V5: tl.constexpr, V6: tl.constexpr, V7: tl.constexpr):
    i = tl.arange(0, 8)
    # One block per constant: tl.full of the fp8 type.
    tl.store(out_ptr + 0 * 8 + i, tl.full((8,), V0, DT))
    tl.store(out_ptr + 1 * 8 + i, tl.full((8,), V1, DT))
    tl.store(out_ptr + 2 * 8 + i, tl.full((8,), V2, DT))
    tl.store(out_ptr + 3 * 8 + i, tl.full((8,), V3, DT))
    tl.store(out_ptr + 4 * 8 + i, tl.full((8,), V4, DT))
    tl.store(out_ptr + 5 * 8 + i, tl.full((8,), V5, DT))
    tl.store(out_ptr + 6 * 8 + i, tl.full((8,), V6, DT))
    tl.store(out_ptr + 7 * 8 + i, tl.full((8,), V7, DT))
    # Scalars: tl.full((), ...), a constexpr converted, a Python float stored as it is.
    tl.store(out_ptr + 64, tl.full((), V3, DT))
    tl.store(out_ptr + 65, tl.constexpr(V0).to(DT))
    tl.store(out_ptr + 66, V1)
    tl.store(out_ptr + 67, tl.cast(V4, DT))
    # Next to fp8 values read at run time.
    x = tl.load(x_ptr + i, mask=i < 4, other=V2)         # the masked-off lanes read V2
    tl.store(out_ptr + 72 + i, x)
    tl.store(out_ptr + 80 + i, tl.where(i % 2 == 0, x, V0))
    tl.store(out_ptr + 88 + i, tl.full_like(x, V5))
    tl.store(out_ptr + 96 + i, tl.zeros_like(x))


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_fp8_constants(backend, rng, fmt):
    dt, np_dtype, _ = FORMATS[fmt]
    x = reference(rng.uniform(-8, 8, 8), fmt)
    out = device_array(np.full(104, 0x55, np.uint8), backend)  # poison (a finite value in both formats)
    constants_kernel[(1,)](tilec.reinterpret(device_array(x.view(np.uint8), backend), dt), tilec.reinterpret(out, dt),
                           DT=dt, **{f"V{k}": v for k, v in enumerate(VALUES)})
    got = to_numpy(out).view(np_dtype).astype(np.float64)
    want = reference(VALUES, fmt).astype(np.float64)
    np.testing.assert_array_equal(got[:64].reshape(8, 8), np.repeat(want[:, None], 8, axis=1))
    np.testing.assert_array_equal(got[64:68], want[[3, 0, 1, 4]])
    x64 = x.astype(np.float64)
    lanes = np.arange(8)
    np.testing.assert_array_equal(got[72:80], np.where(lanes < 4, x64, want[2]))
    np.testing.assert_array_equal(got[80:88], np.where(lanes % 2 == 0, np.where(lanes < 4, x64, want[2]), want[0]))
    np.testing.assert_array_equal(got[88:96], np.full(8, want[5]))
    np.testing.assert_array_equal(got[96:104], np.zeros(8))


def test_reference_rounds_and_saturates():
    """The values the kernels must give, as the formats' definitions say."""
    e4 = reference(VALUES, "fp8e4nv").astype(np.float64)
    e5 = reference(VALUES, "fp8e5").astype(np.float64)
    np.testing.assert_array_equal(e4[:7], [1.125, -2.75, 0.3125, 448, 448, -448, 0])
    np.testing.assert_array_equal(e5[:7], [1.0, -2.5, 0.3125, 448, 57344, -57344, 0])
    assert np.isnan(e4[7]) and np.isnan(e5[7])


@tilec.jit
def fp8_arithmetic_kernel(out_ptr):
    i = tl.arange(0, 8)
    tl.store(out_ptr + i, tl.full((8,), 1.5, tl.float8e4nv) * 2.0)


def test_arithmetic_on_fp8_constants_stays_refused(backend):
    out = device_array(np.zeros(8, np.uint8), backend)
    with pytest.raises(tilec.CompilationError, match="arithmetic on fp8e4nv values is not supported"):
        fp8_arithmetic_kernel[(1,)](tilec.reinterpret(out, tl.float8e4nv))


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_fp8_constants_need_no_conversion_instruction(fmt):
    """Every constant above is converted at compile time: the kernel compiles for sm_80,
    which has no fp8 conversion instructions, and holds none."""
    from tilec.backend import toolkit
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:
        pytest.skip("ptxas is not available")
    dt = FORMATS[fmt][0]
    kernel = tilec.compile(constants_kernel, signature={"x_ptr": f"*{fmt}:16", "out_ptr": f"*{fmt}:16"},
                           constexprs={"DT": dt, **{f"V{k}": v for k, v in enumerate(VALUES)}}, target="sm_80")
    ptx = kernel.asm["ptx"]
    assert kernel.asm["cubin"] and not any(word in ptx for word in ("satfinite", "e4m3", "e5m2")), ptx
