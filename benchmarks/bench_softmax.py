"""Row-wise softmax, f32: tilec vs Triton vs torch, in TB/s (input read once, output written once)."""
from __future__ import annotations

import torch

import tilec
from common import Row, have_triton, print_table, time_gpu
from softmax import softmax_kernel as softmax_tilec  # examples/softmax.py


def make_triton_kernel():
    """The same kernel with only its imports changed to Triton's."""
    import triton
    import triton.language as ttl

    @triton.jit
    def softmax_triton(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: ttl.constexpr):
        row_idx = ttl.program_id(0)
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = ttl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = ttl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - ttl.max(row, axis=0)
        numerator = ttl.exp(row_minus_max)
        denominator = ttl.sum(numerator, axis=0)
        ttl.store(output_ptr + row_idx * output_row_stride + col_offsets, numerator / denominator, mask=mask)

    return softmax_triton


def num_warps_for(block: int) -> int:
    return 4 if block < 2048 else 8 if block < 4096 else 16


def run(shapes=((4096, 4096), (16384, 1024), (8192, 781)), warps=None) -> list[Row]:
    triton_kernel = make_triton_kernel() if have_triton() else None
    rows = []
    for m, n in shapes:
        x = torch.randn(m, n, device="cuda")
        out = torch.empty_like(x)
        block = tilec.next_power_of_2(n)
        w = warps or num_warps_for(block)
        args = (out, x, x.stride(0), out.stride(0), n)
        contenders = {"tilec": lambda: softmax_tilec[(m,)](*args, BLOCK_SIZE=block, num_warps=w),
                      "torch": lambda: torch.softmax(x, dim=1)}
        if triton_kernel is not None:
            contenders["triton"] = lambda: triton_kernel[(m,)](*args, BLOCK_SIZE=block, num_warps=w)
        expected = torch.softmax(x.double(), dim=1).float()
        results = {}
        for name, fn in contenders.items():
            out.fill_(float("nan"))
            got = fn()
            got = got if name == "torch" else out
            torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)
            ms = time_gpu(fn)
            results[name] = 2 * m * n * 4 / (ms * 1e-3) / 1e12
        rows.append(Row(f"softmax f32 {m}x{n} w{w}", results, "TB/s"))
    return rows


if __name__ == "__main__":
    print_table("softmax (TB/s, higher is better)", run())
