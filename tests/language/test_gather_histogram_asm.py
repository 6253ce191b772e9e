"""tl.gather, tl.histogram and tl.inline_asm_elementwise (the latter on the GPU only:
the interpreter cannot run PTX, and says so)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.interpreter import DeviceAssertionError
from tilec_testing import device_array, to_numpy

TL = {"float32": tl.float32, "float16": tl.float16, "bfloat16": tl.bfloat16, "int64": tl.int64, "int8": tl.int8,
      "int32": tl.int32, "uint8": tl.uint8, "int16": tl.int16, "uint32": tl.uint32}
NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "int64": np.int64,
      "int8": np.int8, "int32": np.int32, "uint8": np.uint8, "int16": np.int16, "uint32": np.uint32}


def _values(rng, shape, name):
    if name in ("float32", "float16", "bfloat16"):
        return rng.standard_normal(shape).astype(NP[name])
    info = np.iinfo(NP[name])
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(NP[name])


# ----------------------------------------------------------------------------- gather


@tilec.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, SM: tl.constexpr, SN: tl.constexpr, IM: tl.constexpr,
                  IN: tl.constexpr, AXIS: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, SM)[:, None] * SN + tl.arange(0, SN)[None, :])
    offs = tl.arange(0, IM)[:, None] * IN + tl.arange(0, IN)[None, :]
    index = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(src, index, AXIS))


@tilec.jit
def gather_1d_kernel(src_ptr, idx_ptr, out_ptr, N: tl.constexpr, K: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, N))
    index = tl.load(idx_ptr + tl.arange(0, K))
    tl.store(out_ptr + tl.arange(0, K), tl.gather(src, index, 0) * 2)


@pytest.mark.parametrize("src_dtype", ["float32", "float16", "bfloat16", "int64", "int8"])
@pytest.mark.parametrize("idx_dtype", ["int32", "int64", "uint8", "int16"])
@pytest.mark.parametrize("shape, axis, length", [((16, 32), 1, 64), ((16, 32), 0, 8), ((4, 128), 1, 128),
                                                  ((64, 4), 0, 64), ((1, 16), 1, 2)])
def test_gather_2d(backend, src_dtype, idx_dtype, shape, axis, length):
    rng = np.random.default_rng(hash((src_dtype, idx_dtype, shape, axis)) % 2**32)
    src = _values(rng, shape, src_dtype)
    index_shape = list(shape)
    index_shape[axis] = length
    index = rng.integers(0, shape[axis], index_shape).astype(NP[idx_dtype])
    poison = np.full(index_shape, 77, NP[src_dtype])
    out = device_array(poison, backend)
    gather_kernel[(1,)](device_array(src, backend), device_array(index, backend), out, SM=shape[0], SN=shape[1],
                        IM=index_shape[0], IN=index_shape[1], AXIS=axis)
    want = np.take_along_axis(src, index.astype(np.int64), axis=axis)
    np.testing.assert_array_equal(to_numpy(out).astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("n, k", [(16, 16), (32, 128), (1024, 64), (2, 512)])
def test_gather_1d(backend, n, k):
    rng = np.random.default_rng(n * k)
    src = rng.standard_normal(n).astype(np.float32)
    index = rng.integers(0, n, k).astype(np.int32)
    out = device_array(np.full(k, np.nan, np.float32), backend)
    gather_1d_kernel[(1,)](device_array(src, backend), device_array(index, backend), out, N=n, K=k)
    np.testing.assert_array_equal(to_numpy(out), src[index] * 2)


@tilec.jit
def bad_gather(x_ptr, WHICH: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    if WHICH == 0:
        tl.gather(x, tl.arange(0, 16), 0)
    elif WHICH == 1:
        tl.gather(x, tl.zeros((8, 8), tl.int32), 1)
    elif WHICH == 2:
        tl.gather(x, x, 1)
    else:
        tl.gather(x, tl.zeros((16, 4), tl.int32), 2)


@pytest.mark.parametrize("which, message", [(0, r"one rank, got \[16, 16\] and \[16\]"),
                                            (1, r"index's dimension 0 \(8\) must equal the source's \(16\)"),
                                            (2, r"needs an integer index, got fp32"),
                                            (3, r"axis must be an int in \[-2, 2\), got 2")])
def test_gather_errors(backend, which, message):
    x = device_array(np.ones(256, np.float32), backend)
    with pytest.raises(tilec.CompilationError, match=message):
        bad_gather[(1,)](x, WHICH=which)


def test_gather_out_of_range_is_caught_in_the_interpreter(monkeypatch):
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    src = np.arange(32, dtype=np.float32)
    index = np.arange(16, dtype=np.int32)
    index[5] = 40
    out = np.zeros(16, np.float32)
    with pytest.raises(DeviceAssertionError, match=r"element 5.*gather index out of range \[0, 32\)"):
        gather_1d_kernel[(1,)](src, index, out, N=32, K=16, debug=True)
    with pytest.raises(tilec.interpreter.OutOfBoundsAccess, match="outside the source"):
        gather_1d_kernel[(1,)](src, index, out, N=32, K=16)


# ----------------------------------------------------------------------------- histogram


@tilec.jit
def histogram_kernel(x_ptr, out_ptr, n, N: tl.constexpr, BINS: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if MASKED:
        h = tl.histogram(x, BINS, mask=offs < n)
    else:
        h = tl.histogram(x, BINS)
    tl.store(out_ptr + tl.arange(0, BINS), h)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "uint8", "uint32"])
@pytest.mark.parametrize("n, bins", [(16, 8), (128, 16), (1024, 256), (64, 512), (2048, 32)])
@pytest.mark.parametrize("masked", [False, True])
def test_histogram(backend, dtype, n, bins, masked):
    rng = np.random.default_rng(n * bins + masked)
    info = np.iinfo(NP[dtype])
    lo, hi = max(info.min, -bins // 2), min(info.max, bins + bins // 2)
    x = rng.integers(lo, hi, n, endpoint=True).astype(NP[dtype])
    edges = [v for v in (info.min, info.max, 0, bins - 1, -1, bins) if info.min <= v <= info.max]
    x[:len(edges)] = edges  # the extremes, both ends of the bins and just outside them
    out = device_array(np.full(bins, -5, np.int32), backend)
    limit = n * 2 // 3
    histogram_kernel[(1,)](device_array(x, backend), out, limit, N=n, BINS=bins, MASKED=masked)
    counted = x[:limit] if masked else x
    wide = counted.astype(np.int64)
    wide = wide[(wide >= 0) & (wide < bins)]
    np.testing.assert_array_equal(to_numpy(out), np.bincount(wide, minlength=bins)[:bins])


@tilec.jit
def bad_histogram(x_ptr, WHICH: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if WHICH == 0:
        tl.histogram(x.to(tl.float32), 8)
    elif WHICH == 1:
        tl.histogram(x, 12)
    else:
        tl.histogram(tl.reshape(x, (4, 4)), 8)


@pytest.mark.parametrize("which, message", [(0, "needs integer values, got fp32"),
                                            (1, "num_bins must be a constexpr power of two, got 12"),
                                            (2, r"needs a 1-D tensor, got shape \[4, 4\]")])
def test_histogram_errors(backend, which, message):
    with pytest.raises(tilec.CompilationError, match=message):
        bad_histogram[(1,)](device_array(np.ones(16, np.int32), backend), WHICH=which)


# ----------------------------------------------------------------------------- inline asm


@tilec.jit
def asm_pack4_kernel(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)  # uint8
    b = tl.load(b_ptr + offs)  # float32
    c, d = tl.inline_asm_elementwise(
        asm="""
        {
            .reg .b8 t<4>;
            mov.b32 {t0, t1, t2, t3}, $8;
            cvt.u32.u8 $0, t0;
            cvt.u32.u8 $1, t1;
            cvt.u32.u8 $2, t2;
            cvt.u32.u8 $3, t3;
        }
        cvt.rn.f32.s32 $4, $0;
        cvt.rn.f32.s32 $5, $1;
        cvt.rn.f32.s32 $6, $2;
        cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9;
        max.f32 $5, $5, $10;
        max.f32 $6, $6, $11;
        max.f32 $7, $7, $12;
        """,
        constraints="=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r",
        args=[a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


@tilec.jit
def asm_simple_kernel(x_ptr, y_ptr, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mad.lo.s32 $0, $1, 3, $2;", "=r,r,r", [x, s], dtype=tl.int32, is_pure=True,
                                  pack=1)
    h = tl.inline_asm_elementwise("add.f16x2 $0, $1, $1;", "=r,r", [x.to(tl.float16)], dtype=tl.float16,
                                  is_pure=True, pack=2)
    tl.store(y_ptr + offs, y + h.to(tl.int32))


@pytest.mark.gpu
def test_inline_asm_pack4_mixed_widths():
    import torch
    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, 1024).astype(np.uint8)
    b = (rng.standard_normal(1024) * 200).astype(np.float32)
    c = torch.full((1024,), -1, dtype=torch.int32, device="cuda")
    d = torch.full((1024,), float("nan"), device="cuda")
    asm_pack4_kernel[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, d, BLOCK=1024)
    np.testing.assert_array_equal(c.cpu().numpy(), a.astype(np.int32))
    np.testing.assert_array_equal(d.cpu().numpy(), np.maximum(a.astype(np.float32), b))


@pytest.mark.gpu
def test_inline_asm_scalar_operand_and_half_pairs():
    import torch
    x = torch.randint(-1000, 1000, (256,), dtype=torch.int32, device="cuda")
    y = torch.zeros(256, dtype=torch.int32, device="cuda")
    asm_simple_kernel[(1,)](x, y, 11, BLOCK=256)
    xs = x.cpu().numpy().astype(np.int64)
    np.testing.assert_array_equal(y.cpu().numpy(), xs * 3 + 11 + 2 * xs)


def test_inline_asm_compiles_to_ptx():
    kernel = tilec.compile(asm_pack4_kernel, signature={"a_ptr": "*u8:16", "b_ptr": "*fp32:16", "c_ptr": "*i32:16",
                                                        "d_ptr": "*fp32:16"}, constexprs={"BLOCK": 512})
    assert kernel.asm["ptx"].count("max.f32") >= 4


def test_the_interpreter_refuses_inline_asm(monkeypatch):
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    with pytest.raises(tilec.CompilationError, match="runs PTX, which the interpreter cannot execute"):
        asm_simple_kernel[(1,)](np.ones(16, np.int32), np.ones(16, np.int32), 1, BLOCK=16)


@tilec.jit
def bad_asm_kernel(x_ptr, WHICH: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    if WHICH == 0:
        tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    elif WHICH == 1:
        tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=3)
    else:
        tl.inline_asm_elementwise("mov.b32 $0, $1;", "r,=r", [x], dtype=tl.int32, is_pure=True, pack=1)


@pytest.mark.parametrize("which, message", [(0, r"need 1 output register.*and the arguments \(int32\) 1 input"),
                                            (1, "pack must be a power of two, got 3"),
                                            (2, "do not fit")])
def test_inline_asm_errors(which, message):
    with pytest.raises(tilec.CompilationError, match=message):
        tilec.compile(bad_asm_kernel, signature={"x_ptr": "*i32"}, constexprs={"WHICH": which})
