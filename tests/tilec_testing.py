"""Helpers for tests that run on both backends (import as `from tilec_testing import ...`)."""
from __future__ import annotations

import numpy as np

# ml_dtypes NumPy types torch cannot import directly: moved through their bit patterns.
_TORCH_NAMES = {"bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}


def device_array(array: np.ndarray, backend: str):
    """`array` where kernels under `backend` can read and write it."""
    array = np.ascontiguousarray(array)
    if backend != "gpu":
        return array.copy()
    import torch
    name = str(array.dtype)
    if name in _TORCH_NAMES:
        bits = array.view(np.uint16 if array.dtype.itemsize == 2 else np.uint8)
        return torch.from_numpy(bits.copy()).cuda().view(getattr(torch, _TORCH_NAMES[name]))
    return torch.from_numpy(array).cuda()


def to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):
        import torch
        value = value.detach().cpu()
        name = str(value.dtype).replace("torch.", "")
        if name in _TORCH_NAMES:
            import ml_dtypes
            bits = value.view(torch.int16 if value.element_size() == 2 else torch.uint8).numpy()
            return bits.view(getattr(ml_dtypes, name))
        return value.numpy()
    return np.asarray(value)


def assert_block_written(got: np.ndarray, want: np.ndarray, poison: float, what: str = "a store") -> None:
    """`got`'s leading block (the shape of `want`) equals `want`, and every element
    outside it still holds `poison`: nothing was written past the block."""
    rows, cols = want.shape
    np.testing.assert_array_equal(got[:rows, :cols], want)
    outside = np.ones(got.shape, bool)
    outside[:rows, :cols] = False
    assert (got[outside] == poison).all(), f"{what} wrote outside the described tensor"
