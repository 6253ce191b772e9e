"""Values of dot operands whose K bound cuts their 16-byte runs, on both backends.

Compiled, such loads are copied 16 bytes at a time with cp.async's source size: the
run's elements below the bound are read and the rest of the 16 bytes zero-filled
(tilec/passes/bounded_runs.py; codegen in tests/codegen/test_bounded_copies_codegen.py). The
rows here are padded past K with NaN: an element past the bound that reached a dot would
turn its row of the result into NaN. Outputs are poisoned, wider than the result, so
that a write past N shows.
"""
from __future__ import annotations

import numpy as np
import pytest

from tilec_testing import device_array, grouped_descriptor_matmul, k_tail_matmul, to_numpy

POISON = -7777.0


def _padded(rng, rows: int, cols: int, row_stride: int) -> np.ndarray:
    """A [rows, row_stride] fp16 array: random values in the first `cols` columns, NaN
    after them."""
    array = np.full((rows, row_stride), np.nan, dtype=np.float16)
    array[:, :cols] = rng.uniform(-1.0, 1.0, (rows, cols)).astype(np.float16)
    return array


def _address(array) -> int:
    return array.data_ptr() if hasattr(array, "data_ptr") else array.ctypes.data


def _check(got: np.ndarray, a: np.ndarray, b: np.ndarray, what: str) -> None:
    """got[:, :N] is a @ b.T (float64 reference, fp16 result); columns past N still hold
    POISON."""
    want = a.astype(np.float64) @ b.astype(np.float64).T
    n = want.shape[1]
    np.testing.assert_allclose(got[:, :n].astype(np.float64), want, rtol=1e-2, atol=2e-2, err_msg=what)
    assert (got[:, n:] == np.float16(POISON)).all(), f"{what}: written past N"


@pytest.mark.parametrize("k", [100, 37, 64, 8])
def test_k_tail_matmul(backend, rng, k):
    m, n, stride = 70, 40, 112  # row strides of 112 halves: 16-element (32-byte) multiples
    a = _padded(rng, m, k, stride)
    b = _padded(rng, n, k, stride)
    c = np.full((m, 48), POISON, dtype=np.float16)
    a_dev, b_dev, c_dev = (device_array(x, backend) for x in (a, b, c))
    k_tail_matmul[(2, 2)](a_dev, b_dev, c_dev, m, n, k, stride, stride, 48, BM=64, BN=32, BK=32)
    _check(to_numpy(c_dev), a[:, :k], b[:, :k], f"K={k}")


def test_grouped_gemm_with_descriptors_from_loaded_bases(backend, rng):
    # (M, N, K) per problem; A [M, K] and B [N, K] in rows of 104 halves (208 bytes: the
    # descriptor contract's multiple of 16 bytes), C [M, N] in rows of N + 8.
    problems = [(96, 80, 100), (40, 48, 24), (64, 64, 72)]
    lda = ldb = 104
    a_list = [_padded(rng, m, k, lda) for m, _, k in problems]
    b_list = [_padded(rng, n, k, ldb) for _, n, k in problems]
    c_list = [np.full((m, n + 8), POISON, dtype=np.float16) for m, n, _ in problems]
    a_dev = [device_array(x, backend) for x in a_list]
    b_dev = [device_array(x, backend) for x in b_list]
    c_dev = [device_array(x, backend) for x in c_list]
    tables = [device_array(np.array([_address(x) for x in arrays], dtype=np.uint64), backend)
              for arrays in (a_dev, b_dev, c_dev)]
    sizes = device_array(np.array(problems, dtype=np.int32).reshape(-1), backend)
    lds = device_array(np.array([(lda, ldb, n + 8) for _, n, _ in problems], dtype=np.int32).reshape(-1), backend)
    programs = 5  # fewer than the 10 tiles: programs take several, across problems
    grouped_descriptor_matmul[(programs,)](*tables, sizes, lds, len(problems), NUM_PROGRAMS=programs,
                                           BM=64, BN=32, BK=32)
    for index, ((m, n, k), a, b, c) in enumerate(zip(problems, a_list, b_list, c_dev)):
        _check(to_numpy(c), a[:, :k], b[:, :k], f"problem {index} ({m}x{n}x{k})")
