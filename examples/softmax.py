"""Row-wise fused softmax: one program per row, the row loaded once.

    python examples/softmax.py               # on the GPU when one answers, else interpreted

Rows are strided (the row stride is a kernel argument), masked loads fill the columns
past the end with -inf so they vanish in exp, and the maximum and sum are reductions
along the row. Checked against NumPy in float64 on random inputs, including row lengths
that are not powers of two.
"""
import numpy as np

import tilec
import tilec.language as tl


@tilec.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def num_warps_for(block_size: int) -> int:
    return 4 if block_size < 2048 else 8 if block_size < 4096 else 16


def row_stride(a) -> int:
    """Elements between consecutive rows (torch tensors and NumPy arrays)."""
    return a.stride(0) if callable(getattr(a, "stride", None)) else a.strides[0] // a.itemsize


def softmax(x, out):
    """Softmax of each row of the 2-D array `x` into `out` (same shape)."""
    n_rows, n_cols = x.shape
    block = tilec.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](out, x, row_stride(x), row_stride(out), n_cols,
                              BLOCK_SIZE=block, num_warps=num_warps_for(block))
    return out


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gpu_available() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def main() -> None:
    on_gpu = gpu_available() and not tilec.config.config.interpret
    if not on_gpu:
        tilec.config.config.interpret = True
    rng = np.random.default_rng(0)
    shapes = [(1, 1), (7, 100), (64, 1024), (1823, 781), (256, 4096)] if on_gpu else [(1, 1), (7, 100), (16, 1024), (9, 781)]
    for rows, cols in shapes:
        # A wider buffer makes the rows strided: the kernel must honour the row stride.
        storage = rng.standard_normal((rows, cols + 3), dtype=np.float32) * 4
        x = storage[:, :cols]
        expected = reference(x)
        if on_gpu:
            import torch
            xd = torch.from_numpy(storage).cuda()[:, :cols]
            out = torch.full((rows, cols), float("nan"), device="cuda")
            got = softmax(xd, out).cpu().numpy()
        else:
            out = np.full((rows, cols), np.nan, dtype=np.float32)
            got = softmax(x, out)
        assert np.isfinite(got).all(), "some outputs were not written"
        error = np.max(np.abs(got - expected))
        assert error < 1e-5, f"{rows}x{cols}: max error {error}"
        print(f"softmax {rows:>5}x{cols:<5}: max abs error {error:.2e}  ({'GPU' if on_gpu else 'interpreter'})")
    print("softmax: OK")


if __name__ == "__main__":
    main()
