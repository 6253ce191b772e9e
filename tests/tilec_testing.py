"""Helpers for tests that run on both backends (import as `from tilec_testing import ...`)."""
from __future__ import annotations

import numpy as np


def device_array(array: np.ndarray, backend: str):
    """`array` where kernels under `backend` can read and write it."""
    if backend == "gpu":
        import torch
        return torch.from_numpy(np.ascontiguousarray(array)).cuda()
    return np.ascontiguousarray(array).copy()


def to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)
