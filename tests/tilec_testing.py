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


def _masked_matmul():
    import tilec
    import tilec.language as tl

    @tilec.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        """C = A @ B with every load and the store masked, the result in C's type."""
        offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))

    return matmul_kernel


# A masked matmul shared by the codegen and language tests of small-M and fp8 dots.
masked_matmul_kernel = _masked_matmul()
