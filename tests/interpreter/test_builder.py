"""NumpyBuilder through the semantic layer directly, for what no builtin exposes yet."""
from __future__ import annotations

import numpy as np
import pytest

import tilec.language as tl
from tilec.interpreter import Memory, NumpyBuilder
from tilec.language.core import TilecSemanticError, activate_semantic, block_type, tensor
from tilec.language.semantic import Semantic


@pytest.fixture
def sem():
    semantic = Semantic(NumpyBuilder(Memory({}), (1, 1, 1)))
    with activate_semantic(semantic), np.errstate(all="ignore"):
        yield semantic


def _block(values: np.ndarray, ty: tl.dtype) -> tensor:
    return tensor(values, block_type(ty, values.shape))


def test_two_input_reduction_argmax(sem, rng):
    values = rng.standard_normal((4, 16)).astype(np.float32)
    values[2, 3] = values[2, 9] = values[2].max() + 1  # a tie: the lower index wins
    indices = np.broadcast_to(np.arange(16, dtype=np.int32), (4, 16)).copy()

    def combine(lhs, rhs):
        (lv, li), (rv, ri) = lhs, rhs
        take_rhs = (rv > lv) | ((rv == lv) & (ri < li))
        return [tl.where(take_rhs, rv, lv), tl.where(take_rhs, ri, li)]

    best, where = sem.reduction([_block(values, tl.float32), _block(indices, tl.int32)], 1, combine)
    assert best.type == block_type(tl.float32, [4]) and where.type == block_type(tl.int32, [4])
    np.testing.assert_array_equal(best.handle, values.max(axis=1))
    np.testing.assert_array_equal(where.handle, values.argmax(axis=1))
    assert where.handle[2] == 3


def test_reduction_to_a_scalar_is_a_0d_array(sem, rng):
    values = rng.integers(-1000, 1000, 32).astype(np.int64)
    total = sem.sum(_block(values, tl.int64), 0)
    assert total.type == tl.int64 and total.handle.shape == () and total.handle.dtype == np.int64
    assert int(total.handle) == int(values.sum())


def test_combine_must_keep_types(sem, rng):
    values = _block(rng.standard_normal(8).astype(np.float32), tl.float32)
    with pytest.raises(TilecSemanticError, match="must return fp32 values, got fp64"):
        sem.reduction([values], 0, lambda a, b: [(a[0] + b[0]).to(tl.float64)])
    with pytest.raises(TilecSemanticError, match="returned 2 values; expected 1"):
        sem.reduction([values], 0, lambda a, b: [a[0], b[0]])


def test_scalars_stay_arrays_and_wrap_silently(sem):
    big = sem.to_tensor(2**31 - 1)
    wrapped = big + 1
    assert isinstance(wrapped.handle, np.ndarray) and wrapped.handle.dtype == np.int32
    assert int(wrapped.handle) == -2**31
    assert sem.to_python_int(wrapped) == -2**31
    half = sem.to_tensor(1.0, tl.float16) / sem.to_tensor(3.0, tl.float16)  # fp16 division happens in fp32
    assert half.dtype == tl.float32 and half.handle.dtype == np.float32
