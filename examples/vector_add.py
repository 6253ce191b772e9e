"""Vector addition with a masked tail: tilec's "hello world".

    python examples/vector_add.py            # on the GPU when one answers, else interpreted
    TILEC_INTERPRET=1 python examples/vector_add.py

Each program adds BLOCK_SIZE consecutive elements; the last program masks off the
elements past the end. The result is checked against NumPy on random inputs at sizes
that are and are not multiples of the block.
"""
import numpy as np

import tilec
import tilec.language as tl


@tilec.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out):
    """out = x + y for 1-D arrays (torch CUDA tensors, or NumPy arrays when interpreting)."""
    n = x.shape[0]
    grid = lambda meta: (tilec.cdiv(n, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    return out


def gpu_available() -> bool:
    """Whether torch can allocate GPU memory here; a GPU without torch is said so."""
    try:
        import torch
    except ImportError:
        from tilec.runtime import driver
        if not tilec.config.config.interpret and driver.is_available():
            print("A GPU answers, but torch is not installed: this example allocates its GPU arrays with torch, "
                  "so it runs in the interpreter instead (pip install torch to run it on the GPU).")
        return False
    return torch.cuda.is_available()


def main() -> None:
    on_gpu = gpu_available() and not tilec.config.config.interpret
    if not on_gpu:
        tilec.config.config.interpret = True
    rng = np.random.default_rng(0)
    sizes = [1, 1000, 1024, 98_432, 1 << 20] if on_gpu else [1, 1000, 1024, 5000]
    for n in sizes:
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        expected = x.astype(np.float64) + y.astype(np.float64)
        if on_gpu:
            import torch
            xd, yd = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
            out = torch.full((n,), float("nan"), device="cuda")
            got = add(xd, yd, out).cpu().numpy()
        else:
            out = np.full(n, np.nan, dtype=np.float32)
            got = add(x, y, out)
        error = np.max(np.abs(got - expected)) if n else 0.0
        assert np.isfinite(got).all(), "some outputs were not written"
        assert error <= 1e-6 * max(1.0, np.max(np.abs(expected))), f"n={n}: max error {error}"
        print(f"vector add n={n:>8}: max abs error {error:.2e}  ({'GPU' if on_gpu else 'interpreter'})")
    print("vector add: OK")


if __name__ == "__main__":
    main()
