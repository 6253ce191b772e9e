"""fp16 sums taken in fp32 and stored as fp16 are computed in fp16 (tile-narrow-float).

Tutorial 05's backward keeps its partial db in fp32 (`dy.to(tl.float32)`, plus a loaded
fp16 partial in one branch of an if) and stores it as fp16, inside the lock every
program waits for. tilec converted each element up, added in fp32 and converted down (80
SASS instructions a thread for 32 elements), where Triton adds two halves per add.f16x2
(16); the lock was held that much longer. The results are the same bits (fp32 holds
more than twice fp16's significand plus one, so the double rounding is innocuous), which
the test checks on both backends against numpy's fp32 sums rounded to fp16.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec_testing import device_array, to_numpy


@tilec.jit
def partial_sum_kernel(db_ptr, dy_ptr, flag_ptr, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    partial = tl.load(dy_ptr + cols, mask=mask, other=0).to(tl.float32)
    if tl.load(flag_ptr) == 0:
        tl.store(flag_ptr, 1)
    else:
        partial += tl.load(db_ptr + cols, mask=mask)
    tl.store(db_ptr + cols, partial, mask=mask)


@tilec.jit
def difference_kernel(out_ptr, x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + cols, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + cols, mask=mask).to(tl.float32)
    tl.store(out_ptr + cols, x - y, mask=mask)


def _ptx(kernel, signature):
    return tilec.compile(kernel, signature=signature, constexprs={"BLOCK": 1024}, target="sm_90", num_warps=4).asm["ptx"]


def test_fp16_sum_through_an_if_is_added_in_fp16():
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
        pytest.skip("ptxas is not available")
    ptx = _ptx(partial_sum_kernel, {"db_ptr": "*fp16:16", "dy_ptr": "*fp16:16", "flag_ptr": "*i32:16", "N": "i32:16"})
    assert ptx.count("add.f16x2") == 4  # 8 fp16 a thread: 4 pairs
    assert "cvt.f32.f16" not in ptx and "add.f32" not in ptx and "add.rn.f32" not in ptx
    ptx = _ptx(difference_kernel, {"out_ptr": "*fp16:16", "x_ptr": "*fp16:16", "y_ptr": "*fp16:16", "N": "i32:16"})
    assert ptx.count("sub.f16x2") == 4 and "cvt.f32.f16" not in ptx


@pytest.mark.parametrize("first", [True, False])
def test_fp16_sum_through_an_if_matches_fp32_rounded(backend, rng, first):
    n = 1000
    # Wide-ranging magnitudes, so that roundings, cancellations and fp16 subnormals occur.
    dy = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 8, n))).astype(np.float16)
    db = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 8, n))).astype(np.float16)
    db[:8] = -dy[:8]  # exact cancellation
    want = dy if first else (dy.astype(np.float32) + db.astype(np.float32)).astype(np.float16)
    db_device = device_array(db, backend)
    flag = device_array(np.array([0 if first else 1], dtype=np.int32), backend)
    partial_sum_kernel[(1,)](db_device, device_array(dy, backend), flag, n, BLOCK=1024)
    np.testing.assert_array_equal(to_numpy(db_device).view(np.uint16), want.view(np.uint16))
    assert int(to_numpy(flag)[0]) == 1

    out = device_array(np.full(n, np.nan, dtype=np.float16), backend)
    difference_kernel[(1,)](out, device_array(dy, backend), device_array(db, backend), n, BLOCK=1024)
    want = (dy.astype(np.float32) - db.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(to_numpy(out).view(np.uint16), want.view(np.uint16))
