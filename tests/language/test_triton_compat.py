"""Spellings of `triton.language` that real Triton tests use, on both backends (the
`backend` fixture: the interpreter, compiled to a cubin as well, and the GPU)."""
from __future__ import annotations

import collections
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy


def launch(kernel, backend, out: np.ndarray, *inputs, **constexprs) -> np.ndarray:
    y = device_array(out, backend)
    kernel[(1,)](*(device_array(x, backend) for x in inputs), y, **constexprs)
    return to_numpy(y)


@tilec.jit
def methods_kernel(x_ptr, y_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    first = tl.load(x_ptr + tl.arange(0, 1)).item()          # a one-element block's element
    row = tl.unsqueeze(x, 0)                                  # [1, 8]
    back = row.squeeze(0)                                     # [8]
    tl.store(y_ptr + tl.arange(0, 8), back.cast(tl.int32) + first.cast(tl.int32))


def test_tensor_methods_cast_item_squeeze(backend, rng):
    x = rng.uniform(-50, 50, 8).astype(np.float32)
    got = launch(methods_kernel, backend, np.zeros(8, np.int32), x)
    np.testing.assert_array_equal(got, np.trunc(x).astype(np.int32) + np.int32(np.trunc(x[0])))


@tilec.jit
def shape_kernel(y_ptr, N: tl.constexpr):
    x = tl.arange(0, N)
    tl.static_assert(x.shape == [N])          # a list, as Triton's tests write it
    tl.static_assert(x[None, :].shape == (1, N))
    tl.static_assert(x.shape != [N, 1])
    pair = tl.tuple((x, x + 1))
    tl.store(y_ptr + x, pair[0] + pair[1])


def test_shape_compares_with_lists_and_tl_tuple(backend):
    got = launch(shape_kernel, backend, np.zeros(16, np.int32), N=16)
    np.testing.assert_array_equal(got, 2 * np.arange(16) + 1)


@tilec.jit
def scalar_shapes_kernel(x_ptr, y_ptr, C: tl.constexpr):
    c = tl.expand_dims(C, 0)                     # a constexpr becomes a [1] block
    p = x_ptr[None, None, :]                     # a scalar pointer takes any `:`
    v = tl.load(p)                               # [1, 1]
    tl.store(y_ptr + tl.arange(0, 1)[:, None] + tl.zeros((1, 1), tl.int32), v + c[None, :])


def test_constexpr_expand_dims_and_scalar_subscript(backend):
    got = launch(scalar_shapes_kernel, backend, np.zeros(1, np.float32), np.array([2.5], np.float32), C=3)
    np.testing.assert_array_equal(got, [5.5])


@tilec.jit
def one_element_if_kernel(x_ptr, y_ptr):
    v = tl.load(x_ptr + tl.arange(0, 1))
    r = 0.0
    if v > 0:                                    # a one-element block is its element
        r = 1.0
    tl.store(y_ptr, r)


@pytest.mark.parametrize("value,expected", [(3.0, 1.0), (-3.0, 0.0)])
def test_if_on_a_one_element_block(backend, value, expected):
    got = launch(one_element_if_kernel, backend, np.full(1, np.nan, np.float32), np.array([value], np.float32))
    np.testing.assert_array_equal(got, [expected])


@tilec.jit
def topk_kernel(x_ptr, y_ptr, N: tl.constexpr, K: tl.constexpr, DESCENDING: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(y_ptr + tl.arange(0, K), tl.topk(x, K, descending=DESCENDING))


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8])
@pytest.mark.parametrize("descending", [True, False])
def test_topk_descending(backend, rng, dtype, descending):
    x = (rng.permutation(64) * (1 if dtype is np.uint8 else 3) - (0 if dtype is np.uint8 else 90)).astype(dtype)
    out_dtype = {np.float32: np.float32, np.int16: np.int32, np.uint8: np.int32}[dtype]
    got = launch(topk_kernel, backend, np.zeros(8, out_dtype), x, N=64, K=8, DESCENDING=descending)
    ordered = np.sort(x.astype(np.int64) if dtype is not np.float32 else x)
    expected = ordered[::-1][:8] if descending else ordered[:8]
    np.testing.assert_array_equal(got, expected.astype(out_dtype))


def test_type_helpers():
    assert tl.pi32_t == tl.pointer_type(tl.int32)
    assert [t.fp_mantissa_width for t in (tl.float16, tl.bfloat16, tl.float32, tl.float64)] == [10, 7, 23, 52]
    assert tl.float8e4nv.fp_mantissa_width == 3 and tl.float8e5.fp_mantissa_width == 2
    with pytest.raises(TypeError, match="not a floating-point type"):
        tl.int32.fp_mantissa_width


@tilec.jit
def dtype_of_constants_kernel(x_ptr, y_ptr):
    a = 3
    big = 2 ** 40
    half = 0.5
    tl.static_assert(a.dtype == tl.int32 and big.dtype == tl.int64 and half.dtype == tl.float32)
    p = tl.make_block_ptr(x_ptr, (8,), (1,), (0,), (8,), (0,))
    tl.static_assert(p.dtype.element_ty.element_ty == tl.float32)
    tl.static_assert(p.dtype.element_ty.shape == (8,))
    tl.store(y_ptr + tl.arange(0, 8), tl.load(p) * half + a)


def test_dtype_of_a_literal_and_of_a_block_pointer(backend, rng):
    x = rng.standard_normal(8).astype(np.float32)
    got = launch(dtype_of_constants_kernel, backend, np.zeros(8, np.float32), x)
    np.testing.assert_array_equal(got, x * np.float32(0.5) + 3)


@tilec.jit
def const_kernel(x_ptr: tl.const, y_ptr, WRITE_INPUT: tl.constexpr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    if WRITE_INPUT:
        tl.store(x_ptr + offs, x + 1)
    tl.store(y_ptr + offs, x * 2)


def test_a_const_pointer_is_read_only(backend, rng):
    x = rng.standard_normal(8).astype(np.float32)
    np.testing.assert_array_equal(launch(const_kernel, backend, np.zeros(8, np.float32), x, WRITE_INPUT=False), 2 * x)
    with pytest.raises(tilec.CompilationError, match="Cannot store to a constant pointer"):
        launch(const_kernel, backend, np.zeros(8, np.float32), x, WRITE_INPUT=True)


@tilec.jit
def grid_sum_kernel(x_ptr, total_ptr, arrived_ptr, out_ptr, N: tl.constexpr):
    """Every program adds its block to a total; the last program waits for all the others
    and writes it out: on the GPU every program must be resident at once for that spin,
    which a cooperative launch guarantees (the interpreter runs programs in order)."""
    pid = tl.program_id(0)
    tl.atomic_add(total_ptr, tl.sum(tl.load(x_ptr + pid * N + tl.arange(0, N))))
    tl.atomic_add(arrived_ptr, 1)
    if pid == tl.num_programs(0) - 1:
        while tl.atomic_add(arrived_ptr, 0) < tl.num_programs(0):
            pass
        tl.store(out_ptr, tl.atomic_add(total_ptr, 0.0))


def test_launch_cooperative_grid(backend, rng):
    x = rng.integers(-8, 8, 8 * 64).astype(np.float32)
    total = device_array(np.zeros(1, np.float32), backend)
    arrived = device_array(np.zeros(1, np.int32), backend)
    out = device_array(np.full(1, np.nan, np.float32), backend)
    grid_sum_kernel[(8,)](device_array(x, backend), total, arrived, out, N=64, launch_cooperative_grid=True)
    np.testing.assert_array_equal(to_numpy(out), [x.sum()])


@pytest.mark.gpu
def test_a_cooperative_grid_too_large_for_the_gpu_is_refused():
    import torch
    x = torch.zeros(64 * 100_000, device="cuda")
    with pytest.raises(RuntimeError, match="does not fit on the GPU at once"):
        grid_sum_kernel[(100_000,)](x, torch.zeros(1, device="cuda"), torch.zeros(1, dtype=torch.int32, device="cuda"),
                                    torch.zeros(1, device="cuda"), N=64, launch_cooperative_grid=True)


Scaled = collections.namedtuple("Scaled", ["ptr", "scale"])


@tilec.jit
def tuple_args_kernel(pair, scaled, nested, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(pair[0] + offs) * pair[1]                   # (pointer, float)
    b = tl.load(scaled.ptr + offs) * scaled.scale           # a namedtuple's fields
    c = tl.load(nested[1][0] + offs) + nested[0]            # (int, (pointer,))
    tl.static_assert(len(pair) == 2)
    tl.store(out_ptr + offs, a + b + c)


def test_tuples_and_namedtuples_as_arguments(backend, rng):
    x, y, z = (rng.standard_normal(16).astype(np.float32) for _ in range(3))
    dx, dy, dz = (device_array(v, backend) for v in (x, y, z))
    out = device_array(np.full(16, np.nan, np.float32), backend)
    tuple_args_kernel[(1,)]((dx, 2.0), Scaled(dy, 3.0), (5, (dz,)), out, N=16)
    np.testing.assert_allclose(to_numpy(out), x * 2 + y * 3 + (z + 5), rtol=1e-6)


def test_a_tuple_argument_compiles_from_its_types():
    compiled = tuple_args_kernel.warmup(("*fp32:16", "fp32"), Scaled("*fp32:16", "fp32"), ("i32", ("*fp32:16",)),
                                        "*fp32:16", N=16, grid=(1,))
    assert [name for name, _ in compiled.metadata.params] == ["pair.0", "pair.1", "scaled.0", "scaled.1", "nested.0",
                                                              "nested.1.0", "out_ptr"]


from tilec.language.extra.cuda import libdevice as cuda_libdevice  # noqa: E402  (Triton's other spelling)


@tilec.jit
def extra_cuda_kernel(x_ptr, y_ptr):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, cuda_libdevice.fast_expf(tl.load(x_ptr + offs)))


def test_libdevice_from_extra_cuda(backend, rng):
    x = rng.uniform(-3, 3, 16).astype(np.float32)
    got = launch(extra_cuda_kernel, backend, np.zeros(16, np.float32), x)
    np.testing.assert_allclose(got, np.exp(x.astype(np.float64)), rtol=2e-6)


@tilec.jit
def cat_dim_kernel(x_ptr, y_ptr, out0_ptr, out1_ptr):
    r, c = tl.arange(0, 4), tl.arange(0, 8)
    x = tl.load(x_ptr + r[:, None] * 8 + c[None, :])
    y = tl.load(y_ptr + r[:, None] * 8 + c[None, :])
    a = tl.cat(x, y, dim=0)                      # [8, 8]
    b = tl.cat(x, y, can_reorder=False, dim=1)   # [4, 16]
    r8, c16 = tl.arange(0, 8), tl.arange(0, 16)
    tl.store(out0_ptr + r8[:, None] * 8 + c[None, :], a)
    tl.store(out1_ptr + r[:, None] * 16 + c16[None, :], b)


def test_cat_along_a_dimension(backend, rng):
    x = rng.integers(-100, 100, (4, 8)).astype(np.int32)
    y = rng.integers(-100, 100, (4, 8)).astype(np.int32)
    out0 = device_array(np.full((8, 8), -1, np.int32), backend)
    out1 = device_array(np.full((4, 16), -1, np.int32), backend)
    cat_dim_kernel[(1,)](device_array(x, backend), device_array(y, backend), out0, out1)
    np.testing.assert_array_equal(to_numpy(out0), np.concatenate([x, y], axis=0))
    np.testing.assert_array_equal(to_numpy(out1), np.concatenate([x, y], axis=1))


@tilec.jit
def member_functions_kernel(x_ptr, i_ptr, counts_ptr, sums_ptr, y_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    idx = tl.load(i_ptr + offs)
    g = x.gather(idx, 0)                               # tl.gather as a method
    h = idx.histogram(16)                              # tl.histogram as a method
    tl.store(counts_ptr + offs, h)
    (sums_ptr + idx % 4).atomic_add(x, sem="relaxed")  # the atomics as methods of pointers
    old = (sums_ptr + 4).atomic_cas(0, 7)
    tl.store(y_ptr + offs, tl.add(g, old) + tl.mul(tl.sub(x, x), 3, sanitize_overflow=False))


def test_gather_histogram_and_atomics_as_methods(backend, rng):
    x = rng.integers(-50, 50, 16).astype(np.int32)
    idx = rng.integers(0, 16, 16).astype(np.int32)
    counts = device_array(np.full(16, -1, np.int32), backend)
    sums = device_array(np.zeros(5, np.int32), backend)
    y = device_array(np.full(16, -1, np.int32), backend)
    member_functions_kernel[(1,)](device_array(x, backend), device_array(idx, backend), counts, sums, y)
    np.testing.assert_array_equal(to_numpy(counts), np.bincount(idx, minlength=16))
    np.testing.assert_array_equal(to_numpy(sums)[:4], [x[idx % 4 == k].sum() for k in range(4)])
    assert to_numpy(sums)[4] == 7
    np.testing.assert_array_equal(to_numpy(y), x[idx])  # the old value read by the CAS was 0


@tilec.jit
def wrapping_add_kernel(x_ptr, y_ptr, CHECKED: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    if CHECKED:
        tl.store(y_ptr + tl.arange(0, 4), tl.add(x, 2147483600))
    else:
        tl.store(y_ptr + tl.arange(0, 4), tl.add(x, 2147483600, sanitize_overflow=False))


def test_add_sanitize_overflow_false_skips_the_debug_check(monkeypatch):
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    x = np.array([0, 47, 48, 100], np.int32)
    y = np.zeros(4, np.int32)
    wrapping_add_kernel[(1,)](x, y, CHECKED=False, debug=True)
    np.testing.assert_array_equal(y, (x.astype(np.int64) + 2147483600 + 2**31) % 2**32 - 2**31)
    with pytest.raises(Exception, match="overflow in add"):
        wrapping_add_kernel[(1,)](x, y, CHECKED=True, debug=True)


@tilec.jit
def selu_scalar(x, alpha):
    if x > 0:
        return x
    else:
        return alpha * (tl.exp(x) - 1)


@tilec.jit
def divmod_scalar(a, b):
    q = 0
    r = a
    while r >= b:      # a loop whose trip count differs from element to element
        r -= b
        q += 1
    return q, r


@tilec.jit
def map_elementwise_kernel(x_ptr, a_ptr, b_ptr, y_ptr, q_ptr, r_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.map_elementwise(selu_scalar, x, 1.5))
    a = tl.load(a_ptr + offs[:, None] * 4 + tl.arange(0, 4)[None, :])   # [N, 4]
    b = tl.load(b_ptr + tl.arange(0, 4))                                 # [4], broadcast
    q, r = tl.map_elementwise(divmod_scalar, a, b[None, :])
    tl.store(q_ptr + offs[:, None] * 4 + tl.arange(0, 4)[None, :], q)
    tl.store(r_ptr + offs[:, None] * 4 + tl.arange(0, 4)[None, :], r)


def test_map_elementwise_branches_and_loops_per_element(backend, rng):
    x = rng.standard_normal(64).astype(np.float32)
    a = rng.integers(0, 200, (64, 4)).astype(np.int32)
    b = np.array([3, 7, 11, 50], np.int32)
    y = device_array(np.full(64, np.nan, np.float32), backend)
    q = device_array(np.full((64, 4), -1, np.int32), backend)
    r = device_array(np.full((64, 4), -1, np.int32), backend)
    map_elementwise_kernel[(1,)](device_array(x, backend), device_array(a, backend), device_array(b, backend),
                                 y, q, r, N=64)
    want = np.where(x > 0, x, 1.5 * (np.exp(x.astype(np.float64)) - 1))
    np.testing.assert_allclose(to_numpy(y), want, rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(to_numpy(q), a // b)
    np.testing.assert_array_equal(to_numpy(r), a % b)


@tilec.jit
def bad_map_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if CASE == 0:
        tl.map_elementwise(selu_scalar, x, 1.0, pack=2)
    else:
        tl.map_elementwise(block_returning, x)


@tilec.jit
def block_returning(v):
    return tl.zeros([4], tl.float32) + v


@pytest.mark.parametrize("case, message", [(0, r"selu_scalar\(\) takes 2 arguments but 4 were given"),
                                           (1, "block_returning must return scalars")])
def test_map_elementwise_errors(case, message):
    with pytest.raises(tilec.CompilationError, match=message):
        bad_map_kernel.warmup("*fp32", CASE=case, grid=(1,))


# ----------------------------------------------------------------------------- found by running Triton's own tests


def test_dtype_name_lists_concatenate_as_triton_s():
    names = tl.dtype.SINT_TYPES + tl.dtype.UINT_TYPES + tl.dtype.STANDARD_FP_TYPES
    assert names[:4] == ["int8", "int16", "int32", "int64"] and names[-4:] == ["fp16", "bf16", "fp32", "fp64"]
    assert set(tl.dtype.FP_TYPES) == set(tl.dtype.STANDARD_FP_TYPES) | {"fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5",
                                                                       "fp8e5b16"}


@tilec.jit
def annotated_scalars_kernel(out_ptr, small_ptr, val: tl.float16, v: tl.uint8, acc_start):
    tl.static_assert(val.dtype == tl.float16)
    tl.static_assert(v.dtype == tl.uint8)
    acc = 0
    acc = acc.to(tl.int64)               # a number has a tensor's methods
    acc += acc_start
    big = 1e+50                          # outside fp32's range: fp64
    tl.static_assert(big.dtype == tl.float64)
    tl.store(out_ptr, acc + v)
    tl.store(small_ptr, val.to(tl.float32) + (big / 1e+50))


def test_annotated_scalars_number_methods_and_fp64_literals(backend):
    out = device_array(np.zeros(1, np.int64), backend)
    small = device_array(np.zeros(1, np.float32), backend)
    annotated_scalars_kernel[(1,)](out, small, 0.1, 200, 2 ** 40)
    assert to_numpy(out)[0] == 2 ** 40 + 200
    assert to_numpy(small)[0] == np.float32(np.float16(0.1)) + 1  # rounded to fp16 when passed


def test_annotated_scalar_arguments_are_checked():
    with pytest.raises(tilec.LaunchError, match="'v' of annotated_scalars_kernel.* 300, which does not fit"):
        annotated_scalars_kernel.warmup("*i64", "*fp32", 0.5, 300, 1, grid=(1,))


@tilec.jit
def pid_kernel(dst):
    tl.store(dst, tl.program_id(20))


@tilec.jit
def empty_kernel(value, x):
    pass


def test_errors_carry_triton_s_types_and_words(monkeypatch):
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    with pytest.raises(tilec.CompilationError) as info:
        pid_kernel[(1,)](np.zeros(1, np.int32))
    assert "program_id axis must be 0, 1, or 2 but got 20" in str(info.value.__cause__)
    assert info.value.error_message == str(info.value.__cause__)
    with pytest.raises(OverflowError, match="does not fit in 64 bits"):
        empty_kernel[(1,)](2 ** 64, np.zeros(1))
    with pytest.raises(AssertionError, match="must be a power of 2"):
        empty_kernel.warmup(1, "*fp32", grid=(1,), num_warps=3)


@tilec.jit
def expand_scalar_kernel(out_ptr, AXIS: tl.constexpr):
    s = tl.sum(tl.arange(0, 4))
    tl.store(out_ptr + tl.arange(0, 1), tl.expand_dims(s, AXIS))


def test_expand_dims_of_a_scalar_takes_axis_0_or_minus_1_only():
    with pytest.raises(tilec.CompilationError, match="invalid axis 1"):
        expand_scalar_kernel.warmup("*i32", AXIS=1, grid=(1,))
    expand_scalar_kernel.warmup("*i32", AXIS=-1, grid=(1,))


@tilec.jit
def slices_and_conditions_kernel(out_ptr, n, X: tl.constexpr):
    data = tl.arange(0, X)
    t = data[None, None:]                 # a None slice bound is `:`
    tl.static_assert(t.shape == [1, X])
    i = 0
    while tl.condition(i < n, disable_licm=True):
        i = i + 1
    tl.store(out_ptr + data[None, :], t + i)


def test_none_slice_bounds_and_tl_condition(backend):
    out = device_array(np.zeros(8, np.int32), backend)
    slices_and_conditions_kernel[(1,)](out, 5, X=8)
    np.testing.assert_array_equal(to_numpy(out), np.arange(8) + 5)


def test_reinterpret_takes_numpy_and_torch_dtypes():
    x = np.zeros(4, np.uint8)
    assert tilec.reinterpret(x, np.int8).dtype == tl.int8           # a NumPy dtype
    assert tilec.reinterpret(x, "float8_e4m3fn").dtype == tl.float8e4nv  # torch's name for it


def test_reinterpreted_arrays_make_new_ones_of_their_type(backend):
    """Triton's TensorWrapper: `new_empty` keeps the element type; `.data` is the array's
    (Triton's descriptor tests allocate outputs this way)."""
    x = tilec.reinterpret(device_array(np.arange(6, dtype=np.uint8), backend), tl.float8e4nv)
    made = x.new_empty((2, 3))
    assert made.dtype == tl.float8e4nv and tuple(made.shape) == (2, 3)
    assert x.data is not None and tuple(x.data.shape) == (6,)


@tilec.jit
def incremented(values):
    return tl.tuple([v + 1 for v in values])


@tilec.jit
def comprehension_kernel(ptrs, values, out_ptr):
    values = incremented(values)
    for i in tl.static_range(len(values)):
        tl.store(ptrs[i], values[i])
    evens = [k * 10 for k in range(6) if k % 2 == 0]          # [0, 20, 40], unrolled when compiling
    pairs = [a * b for a in (1, 2) for b in (3, 4)]            # [3, 4, 6, 8]
    total = 0
    for i in tl.static_range(len(evens)):
        total += evens[i]
    for i in tl.static_range(len(pairs)):
        total += pairs[i]
    tl.store(out_ptr, total)


def test_list_comprehensions_unroll_when_compiling(backend):
    first = device_array(np.zeros(1, np.int32), backend)
    second = device_array(np.zeros(1, np.int32), backend)
    out = device_array(np.zeros(1, np.int32), backend)
    comprehension_kernel[(1,)]((first, second), (5, 7), out)
    assert to_numpy(first)[0] == 6 and to_numpy(second)[0] == 8
    assert to_numpy(out)[0] == 60 + 21


@tilec.jit
def runtime_comprehension_kernel(out_ptr, n):
    values = [i for i in range(n)]
    tl.store(out_ptr, values[0])


def test_list_comprehension_over_a_runtime_range_is_refused():
    with pytest.raises(tilec.CompilationError, match="iterates over a tuple, list or range known when compiling"):
        runtime_comprehension_kernel.warmup("*i32", "i32", grid=(1,))


@tilec.jit
def fp8_abs_kernel(x_ptr, y_ptr, FMT: tl.constexpr):
    offs = tl.arange(0, 256)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.abs(x.to(tl.uint8, bitcast=True).to(FMT, bitcast=True)).to(tl.uint8, bitcast=True))


@pytest.mark.parametrize("fmt, nan", [(tl.float8e4nv, None), (tl.float8e5, None), (tl.float8e4b15, None),
                                      (tl.float8e4b8, 0x80), (tl.float8e5b16, 0x80)])
def test_abs_of_fp8_clears_the_sign_bit(backend, fmt, nan):
    codes = np.arange(256, dtype=np.uint8)
    out = device_array(np.zeros(256, np.uint8), backend)
    fnuz = fmt in (tl.float8e4b8, tl.float8e5b16)  # AMD's formats: compiling them is refused, as in Triton
    try:
        fp8_abs_kernel[(1,)](device_array(codes, backend), out, FMT=fmt)
    except tilec.CompilationError as error:  # (the interpreter ran before the fixture's compilation)
        if not (fnuz and "not supported in this architecture" in str(error)):
            raise
        if backend == "gpu":
            return
    assert not (fnuz and backend == "gpu")
    want = codes & 0x7F
    if nan is not None:
        want[nan] = nan  # the fnuz NaN stays NaN
    np.testing.assert_array_equal(to_numpy(out), want)


@tilec.jit
def duplicate_axes_kernel(x_ptr):
    t = tl.expand_dims(tl.arange(0, 8), (0, -3))


def test_expand_dims_duplicate_axes_and_str_to_ty():
    with pytest.raises(tilec.CompilationError, match=r"duplicate axes, normalized axes = \[0, 0\]"):
        duplicate_axes_kernel.warmup("*i32", grid=(1,))
    assert tl.str_to_ty("fp16", None) == tl.float16 and tl.str_to_ty("*i8") == tl.pointer_type(tl.int8)
    tilec.set_allocator(lambda size, alignment, stream: None)  # accepted, as Triton's
    from tilec.runtime.jit import TensorWrapper, reinterpret, type_canonicalisation_dict  # where Triton has them
    assert tl.str_to_ty(type_canonicalisation_dict["bfloat16"], None) == tl.bfloat16
    assert type_canonicalisation_dict["float8_e4m3fnuz"] == "fp8e4b8" and reinterpret is tilec.reinterpret
    assert TensorWrapper is tilec.TensorWrapper


@tilec.jit
def hasattr_kernel(x, out_ptr):
    if (x is not None) and hasattr(x, "dtype") and isinstance(x.dtype, tl.pointer_type):
        tl.store(x, 42)
    tl.store(out_ptr, 7)


def test_hasattr_with_a_literal_name(backend):
    target = device_array(np.zeros(1, np.int32), backend)
    out = device_array(np.zeros(1, np.int32), backend)
    hasattr_kernel[(1,)](target, out)       # a pointer: stored through
    hasattr_kernel[(1,)](1, out)            # the constant 1: no dtype, nothing stored
    assert to_numpy(target)[0] == 42 and to_numpy(out)[0] == 7


@tilec.jit
def void_ifexp_kernel(ret_ptr, xt_ptr, xf_ptr):
    pid = tl.program_id(0)
    tl.store(ret_ptr + pid, tl.load(xt_ptr)) if pid % 2 == 0 else tl.store(ret_ptr + pid, tl.load(xf_ptr))


def test_conditional_expression_of_void_calls(backend):
    ret = device_array(np.zeros(4, np.float32), backend)
    void_ifexp_kernel[(4,)](ret, device_array(np.array([3.0], np.float32), backend),
                            device_array(np.array([1.0], np.float32), backend))
    np.testing.assert_array_equal(to_numpy(ret), [3.0, 1.0, 3.0, 1.0])


class Shape(tuple):
    """A tuple subclass that is not a namedtuple (as torch.Size)."""


@tilec.jit
def shape_arg_kernel(shape, out_ptr):
    tl.store(out_ptr, shape[0] * shape[1])


def test_tuple_subclass_argument_is_a_tuple(backend):
    out = device_array(np.zeros(1, np.int32), backend)
    shape_arg_kernel[(1,)](Shape((4, 5)), out)
    assert to_numpy(out)[0] == 20


@tilec.jit
def int_load_with_float_other_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0))


def test_integer_load_takes_a_float_other(backend, rng):
    """`tl.load(int8_ptr, mask=..., other=0.0)`, as Triton takes it: 0.0 becomes 0."""
    x = rng.integers(-128, 127, 16).astype(np.int8)
    out = device_array(np.full(32, 7, np.int8), backend)
    int_load_with_float_other_kernel[(1,)](device_array(x, backend), out, 16, BLOCK=32)
    np.testing.assert_array_equal(to_numpy(out), np.concatenate([x, np.zeros(16, np.int8)]))


@tilec.jit
def annotated_stride_kernel(x_ptr, out_ptr, stride: tl.int64, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + tl.program_id(0) * stride + offs))


@pytest.mark.parametrize("stride, marked", [(4096, True), (4100, False), (1, False)])
def test_annotated_integers_keep_their_divisibility(stride, marked):
    """`stride: tl.int64` is specialised on divisibility by 16 as an unannotated integer
    is (Triton keeps it: the annotation replaces only the type), so the loads it offsets
    stay 16-byte vectors; a 1 is not folded into a constant (Triton passes it as the
    annotated type too)."""
    compiled = annotated_stride_kernel.warmup("*fp32:16", "*fp32:16", stride, BLOCK=128, grid=(1,),
                                              target="sm_90")
    ttir = compiled.asm["ttir"]
    assert (re.search(r"%arg2: i64 \{tile\.divisibility = 16 : i32\}", ttir) is not None) == marked, ttir[:600]
    assert "%arg2: i64" in ttir  # never folded, 1 included


# ----------------------------------------------------------------------------- FlagGems' spellings

import tilec.language.core as core  # noqa: E402  (Triton code imports triton.language.core as core)
import tilec.language.standard as standard  # noqa: E402

@tl.constexpr
def accumulator_type(dt):
    """A plain function kept as a constant (`@tl.constexpr def`): kernels call it now."""
    return tl.float32 if (dt.is_fp16() or dt.is_bf16()) else dt


@tilec.jit
def flaggems_spellings_kernel(x_ptr, i_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    xb = tl.make_block_ptr(x_ptr, (BLOCK,), (1,), (0,), (BLOCK,), order=(0,))
    yb = tl.make_block_ptr(y_ptr, (BLOCK,), (1,), (0,), (BLOCK,), order=(0,))
    acc: tl.constexpr = accumulator_type(x_ptr.type.element_ty)
    x = tl.load(xb).to(acc)
    ints = tl.load(i_ptr + offs)
    wide: tl.constexpr = ints.dtype.is_int64() or ints.dtype.is_uint64()
    narrow: tl.constexpr = ints.dtype.is_int32() and not ints.dtype.is_int8()
    bits: tl.constexpr = core.get_int_dtype(32, True)
    total = standard.zeros_like(x)
    for i in core.static_range(1, 3):
        total += x * i
    total += ints.to(bits).to(acc) * (2 if wide else 1) * (10 if narrow else 1)
    tl.store(yb, total.to(yb.type.element_ty))  # a block pointer's element type: its scalar, as in Triton


@pytest.mark.parametrize("int_type", [np.int32, np.int64])
def test_flaggems_spellings(backend, rng, int_type):
    """`x.to(block_ptr.type.element_ty)`, a `@tl.constexpr` helper, `dtype.is_int64()`,
    `tl.core.static_range` / `get_int_dtype`, `tl.standard.zeros_like` (FlagGems 5.0)."""
    x = rng.standard_normal(64).astype(np.float16)
    ints = rng.integers(-50, 50, 64).astype(int_type)
    y = device_array(np.full(64, np.nan, np.float16), backend)
    flaggems_spellings_kernel[(1,)](device_array(x, backend), device_array(ints, backend), y, BLOCK=64)
    factor = 2 if int_type == np.int64 else 10
    want = (x.astype(np.float32) * 3 + ints.astype(np.float32) * factor).astype(np.float16)
    np.testing.assert_allclose(to_numpy(y).astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-2)


@tilec.autotune(configs=[tilec.Config({"BLOCK": 128}), tilec.Config({"BLOCK": 32})], key=["n"])
@tilec.jit
def asserting_kernel(x_ptr, y_ptr, n, HEAD: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= HEAD)  # the first config cannot run
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_autotuning_skips_a_config_that_fails_a_static_assert(backend, rng):
    """On the GPU it times as infinite; the interpreter, which times nothing, runs the
    first config that can run (FlagGems' attention: `tl.static_assert(BLOCK_N <= HEAD_DIM)`)."""
    x = rng.standard_normal(100).astype(np.float32)
    y = device_array(np.full(100, np.nan, np.float32), backend)
    asserting_kernel[lambda meta: (tilec.cdiv(100, meta["BLOCK"]),)](device_array(x, backend), y, 100, HEAD=64)
    np.testing.assert_array_equal(to_numpy(y), x + 1)
    assert asserting_kernel.best_config.kwargs == {"BLOCK": 32}


@tilec.jit
def lowest_of(dtype):
    d = dtype.value  # a dtype a @jit function receives is a constant (FlagGems' utils/limits.py)
    if d.is_floating():
        v: tl.constexpr = float("-inf")
        return v
    else:
        v: tl.constexpr = -(2 ** (d.int_bitwidth - 1))
        return v


@tilec.jit
def masked_max_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=lowest_of(x_ptr.type.element_ty))
    tl.store(y_ptr, tl.max(x, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_a_dtype_argument_has_a_value(backend, rng, dtype):
    x = (rng.standard_normal(50) * 100 - 500).astype(dtype)
    y = device_array(np.zeros(1, dtype), backend)
    masked_max_kernel[(1,)](device_array(x, backend), y, 50, BLOCK=64)
    assert to_numpy(y)[0] == x.max()


@tilec.jit
def squared_error_kernel(inp, target, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    d = tl.load(inp + offs, mask=offs < n) - tl.load(target + offs, mask=offs < n)
    tl.store(out, tl.sum(d * d, 0))


def test_a_parameter_named_like_a_launch_option(backend, rng):
    """FlagGems' mse_loss names a parameter `target`: passed positionally it is the
    argument, and `target=` besides it is the compile target (warmup for another GPU)."""
    x, y = rng.standard_normal(10).astype(np.float32), rng.standard_normal(10).astype(np.float32)
    out = device_array(np.full(1, np.nan, np.float32), backend)
    squared_error_kernel[(1,)](device_array(x, backend), device_array(y, backend), out, 10, BLOCK=16)
    np.testing.assert_allclose(to_numpy(out)[0], ((x.astype(np.float64) - y) ** 2).sum(), rtol=1e-5)
    if backend == "interpreter":
        compiled = squared_error_kernel.warmup(x, y, np.zeros(1, np.float32), 10, BLOCK=16, grid=(1,), target="sm_80")
        assert ".target sm_80" in compiled.asm["ptx"]
