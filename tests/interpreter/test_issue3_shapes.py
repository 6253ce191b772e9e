"""Issue 3's shape operations and scans in the interpreter's builder: reshape, trans, join,
split, cat, gather, histogram, scan (called with tl.tensors under an active Semantic)."""
from __future__ import annotations

import numpy as np
import pytest
from interpreter_testing import BF16, block

import tilec
import tilec.language as tl
from tilec.interpreter import OutOfBoundsAccess
from tilec.interpreter.memory import MemoryFault
from tilec.language.core import TilecSemanticError, block_type


def test_reshape_and_trans(sem, rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    b = sem.builder
    np.testing.assert_array_equal(b.reshape(x, block_type(tl.float32, [2, 16])), x.reshape(2, 16))
    np.testing.assert_array_equal(b.reshape(x, block_type(tl.float32, [32])), x.reshape(-1))
    np.testing.assert_array_equal(b.trans(x, [1, 0], block_type(tl.float32, [8, 4])), x.T)
    y = rng.integers(-100, 100, (2, 4, 8)).astype(np.int16)
    got = b.trans(y, [2, 0, 1], block_type(tl.int16, [8, 2, 4]))
    np.testing.assert_array_equal(got, np.transpose(y, (2, 0, 1)))
    assert got[3, 1, 2] == y[1, 2, 3]


def test_join_split_cat(sem, rng):
    b = sem.builder
    x = rng.standard_normal((4, 8)).astype(np.float32)
    y = rng.standard_normal((4, 8)).astype(np.float32)
    joined = b.join(x, y, block_type(tl.float32, [4, 8, 2]))
    assert joined.shape == (4, 8, 2)
    np.testing.assert_array_equal(joined[..., 0], x)
    np.testing.assert_array_equal(joined[..., 1], y)
    lo, hi = b.split(joined, block_type(tl.float32, [4, 8]))
    np.testing.assert_array_equal(lo, x)
    np.testing.assert_array_equal(hi, y)
    pair = b.join(np.array(1.5, np.float32), np.array(-2.5, np.float32), block_type(tl.float32, [2]))
    np.testing.assert_array_equal(pair, [1.5, -2.5])
    first, second = b.split(pair, tl.float32)
    assert first.shape == () and first == 1.5 and second == -2.5
    catted = b.cat(x, y, block_type(tl.float32, [8, 8]))
    np.testing.assert_array_equal(catted, np.concatenate([x, y]))
    with pytest.raises(TilecSemanticError, match="last dimension of size 2"):
        b.split(x, block_type(tl.float32, [4]))


def test_gather_is_take_along_axis(sem, rng):
    b = sem.builder
    src = rng.standard_normal((4, 16)).astype(np.float32)
    index = rng.integers(0, 16, (4, 8)).astype(np.int32)
    got = b.gather(src, index, 1, block_type(tl.float32, [4, 8]))
    np.testing.assert_array_equal(got, np.take_along_axis(src, index, axis=1))
    index0 = rng.integers(0, 4, (2, 16)).astype(np.int64)
    np.testing.assert_array_equal(b.gather(src, index0, 0, block_type(tl.float32, [2, 16])),
                                  np.take_along_axis(src, index0, axis=0))
    unsigned = rng.integers(0, 16, (4, 16)).astype(np.uint64)
    np.testing.assert_array_equal(b.gather(src, unsigned, 1, block_type(tl.float32, [4, 16])),
                                  np.take_along_axis(src, unsigned.astype(np.intp), axis=1))


def test_gather_out_of_range_is_reported(sem, rng):
    src = rng.standard_normal(16).astype(np.float32)
    index = np.arange(8, dtype=np.int32)
    index[5] = 16
    with pytest.raises(MemoryFault, match="the first is 16 at lane 5, but axis 0 of the source has 16"):
        sem.builder.gather(src, index, 0, block_type(tl.float32, [8]))
    index[5] = -1
    with pytest.raises(MemoryFault, match="the first is -1 at lane 5"):
        sem.builder.gather(src, index, 0, block_type(tl.float32, [8]))


def test_histogram_ignores_values_outside_the_bins_and_masked_lanes(sem, rng):
    x = rng.integers(-4, 20, 256).astype(np.int32)
    mask = rng.random(256) < 0.7
    got = sem.builder.histogram(x, 16, None, block_type(tl.int32, [16]))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.bincount(x[(x >= 0) & (x < 16)], minlength=16))
    got = sem.builder.histogram(x, 16, mask, block_type(tl.int32, [16]))
    kept = x[mask]
    np.testing.assert_array_equal(got, np.bincount(kept[(kept >= 0) & (kept < 16)], minlength=16))
    u = np.array([0, 3, 3, 2**64 - 1, 15], dtype=np.uint64)
    got = sem.builder.histogram(u, 4, None, block_type(tl.int32, [4]))
    np.testing.assert_array_equal(got, [1, 0, 0, 2])


# ----------------------------------------------------------------------------- scans


def _scan(sem, values, ty, combine, axis=0, reverse=False):
    inputs = [block(v, ty) for v in values]
    return sem.builder.scan(inputs, axis, combine, reverse, [x.type for x in inputs])


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumsum_both_directions(sem, rng, axis, reverse):
    x = rng.integers(-1000, 1000, (8, 16)).astype(np.int32)
    (got,) = _scan(sem, [x], tl.int32, lambda a, b: [a[0] + b[0]], axis, reverse)
    flipped = np.flip(x, axis) if reverse else x
    expected = np.cumsum(flipped, axis=axis, dtype=np.int32)
    np.testing.assert_array_equal(got, np.flip(expected, axis) if reverse else expected)
    assert got.dtype == np.int32


def test_float_scan_within_tolerance_and_nan(sem, rng):
    x = rng.standard_normal(1024).astype(np.float32)
    (got,) = _scan(sem, [x], tl.float32, lambda a, b: [a[0] + b[0]])
    np.testing.assert_allclose(got, np.cumsum(x.astype(np.float64)), atol=1e-4)
    x[100] = np.nan
    (got,) = _scan(sem, [x], tl.float32, lambda a, b: [a[0] + b[0]])
    assert not np.isnan(got[:100]).any() and np.isnan(got[100:]).all()
    (rev,) = _scan(sem, [x], tl.float32, lambda a, b: [a[0] + b[0]], reverse=True)
    assert np.isnan(rev[:101]).all() and not np.isnan(rev[101:]).any()


def test_non_commutative_scan_keeps_the_operand_order(sem, rng):
    # Composition of affine maps x -> m*x + c is associative but not commutative;
    # combine(earlier, later) applies `earlier` first.
    m = rng.integers(1, 5, 16).astype(np.int64)
    c = rng.integers(-5, 5, 16).astype(np.int64)

    def compose(a, b):
        (m1, c1), (m2, c2) = a, b
        return [m2 * m1, m2 * c1 + c2]

    got_m, got_c = _scan(sem, [m, c], tl.int64, compose)
    for i in range(16):
        em, ec = 1, 0
        for j in range(i + 1):
            em, ec = m[j] * em, m[j] * ec + c[j]
        assert (got_m[i], got_c[i]) == (em, ec)
    rev_m, rev_c = _scan(sem, [m, c], tl.int64, compose, reverse=True)
    for i in range(16):
        em, ec = 1, 0
        for j in range(15, i - 1, -1):  # out[i] = combine(out[i + 1], x[i])
            em, ec = m[j] * em, m[j] * ec + c[j]
        assert (rev_m[i], rev_c[i]) == (em, ec)


def test_scan_max_of_bf16_and_combine_checks(sem, rng):
    x = rng.standard_normal(64).astype(BF16)
    # sem.maximum keeps bf16 (tl.maximum computes bf16 in fp32, as Triton's does)
    (got,) = _scan(sem, [x], tl.bfloat16, lambda a, b: [sem.maximum(a[0], b[0])])
    assert got.dtype == BF16
    np.testing.assert_array_equal(got.astype(np.float32), np.maximum.accumulate(x.astype(np.float32)))
    with pytest.raises(TilecSemanticError, match="must return bf16 values, got fp32"):
        _scan(sem, [x], tl.bfloat16, lambda a, b: [a[0].to(tl.float32)])
    with pytest.raises(TilecSemanticError, match="cannot scan a scalar"):
        sem.builder.scan([block(np.array(1, np.int32), tl.int32)], 0, lambda a, b: a, False, [tl.int32])


def test_scan_of_length_one(sem):
    (got,) = _scan(sem, [np.array([7], np.int32)], tl.int32, lambda a, b: [a[0] + b[0]])
    np.testing.assert_array_equal(got, [7])


# ----------------------------------------------------------------------------- through the language


@tilec.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.gather(tl.load(src_ptr + offs), tl.load(idx_ptr + offs), 0))


@pytest.mark.skipif(not hasattr(tl, "gather"), reason="tl.gather is not in the language yet")
def test_gather_out_of_range_in_a_kernel_names_the_line():
    src = np.arange(8, dtype=np.float32)
    idx = np.array([0, 1, 2, 9, 4, 5, 6, 7], dtype=np.int32)
    with pytest.raises(OutOfBoundsAccess, match="out-of-bounds gather in kernel `gather_kernel`") as info:
        gather_kernel[(1,)](src, idx, np.zeros(8, np.float32), BLOCK=8)
    assert "tl.gather" in info.value.source_line


@tilec.jit
def cumsum_kernel(x_ptr, out_ptr, REVERSE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), 0, reverse=REVERSE))


@pytest.mark.skipif(not hasattr(tl, "cumsum"), reason="tl.cumsum is not in the language yet")
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_kernel(rng, reverse):
    x = rng.integers(-100, 100, 128).astype(np.int32)
    out = np.zeros(128, np.int32)
    cumsum_kernel[(1,)](x, out, reverse, BLOCK=128)
    expected = np.cumsum(x[::-1])[::-1] if reverse else np.cumsum(x)
    np.testing.assert_array_equal(out, expected)


@tilec.jit
def reshape_trans_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M * N)
    x = tl.reshape(tl.load(x_ptr + offs), (M, N))
    y = tl.trans(x)
    tl.store(out_ptr + offs, tl.reshape(y, (M * N,)))


@pytest.mark.skipif(not (hasattr(tl, "reshape") and hasattr(tl, "trans")), reason="not in the language yet")
def test_reshape_trans_kernel(rng):
    x = rng.standard_normal(32).astype(np.float32)
    out = np.zeros(32, np.float32)
    reshape_trans_kernel[(1,)](x, out, M=4, N=8)
    np.testing.assert_array_equal(out, x.reshape(4, 8).T.reshape(-1))
