"""Vector add, f32: tilec vs Triton vs torch, in TB/s (3 arrays of n floats moved)."""
from __future__ import annotations

import torch

from common import Row, have_triton, print_table, time_gpu
from vector_add import add_kernel as add_tilec  # examples/vector_add.py


def make_triton_kernel():
    """The same kernel with only its imports changed to Triton's."""
    import triton
    import triton.language as ttl

    @triton.jit
    def add_triton(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: ttl.constexpr):
        pid = ttl.program_id(axis=0)
        offsets = pid * BLOCK_SIZE + ttl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = ttl.load(x_ptr + offsets, mask=mask)
        y = ttl.load(y_ptr + offsets, mask=mask)
        ttl.store(out_ptr + offsets, x + y, mask=mask)

    return add_triton


def run(sizes=(1 << 20, 1 << 24, 1 << 28)) -> list[Row]:
    triton_kernel = make_triton_kernel() if have_triton() else None
    rows = []
    for n in sizes:
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        out = torch.empty_like(x)
        grid = (triton_cdiv(n, 1024),)
        contenders = {"tilec": lambda: add_tilec[grid](x, y, out, n, BLOCK_SIZE=1024),
                      "torch": lambda: torch.add(x, y, out=out)}
        if triton_kernel is not None:
            contenders["triton"] = lambda: triton_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
        results = {}
        for name, fn in contenders.items():
            out.fill_(float("nan"))
            fn()
            torch.testing.assert_close(out, x + y)
            ms = time_gpu(fn)
            results[name] = 3 * n * 4 / (ms * 1e-3) / 1e12
        rows.append(Row(f"add f32 n=2^{n.bit_length() - 1}", results, "TB/s"))
    return rows


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


if __name__ == "__main__":
    print_table("vector add (TB/s, higher is better)", run())
