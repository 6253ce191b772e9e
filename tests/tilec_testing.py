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


def _bounded_copy_kernels():
    import tilec
    import tilec.language as tl

    @tilec.jit
    def k_tail_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        """C = A @ B.T, A [M, K] and B [N, K] both K-contiguous, every access masked."""
        offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
        offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
        offs_k = tl.arange(0, BK)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
        b_ptrs = b_ptr + offs_n[:, None] * stride_bn + offs_k[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            k_left = K - k * BK
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_n[:, None] < N) & (offs_k[None, :] < k_left), other=0.0)
            acc += tl.dot(a, b.T)
            a_ptrs += BK
            b_ptrs += BK
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
        tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))

    @tilec.jit
    def grouped_descriptor_matmul(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_sizes, group_lds, group_count,
                                  NUM_PROGRAMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        """Tutorial 08's in-kernel descriptor variant, in short: each problem's A [M, K],
        B [N, K], C [M, N] addresses and leading dimensions read from tables, a descriptor
        made per problem, C = A @ B.T tile by tile, programs NUM_PROGRAMS tiles apart."""
        tile = tl.program_id(0)
        first_tile = 0
        for g in range(group_count):
            m = tl.load(group_sizes + g * 3)
            n = tl.load(group_sizes + g * 3 + 1)
            k = tl.load(group_sizes + g * 3 + 2)
            n_tiles_n = tl.cdiv(n, BN)
            n_tiles = tl.cdiv(m, BM) * n_tiles_n
            if tile >= first_tile and tile < first_tile + n_tiles:
                a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
                b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
                c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
                a_desc = tl.make_tensor_descriptor(a_ptr, shape=[m, k], strides=[tl.load(group_lds + g * 3), 1],
                                                   block_shape=[BM, BK])
                b_desc = tl.make_tensor_descriptor(b_ptr, shape=[n, k], strides=[tl.load(group_lds + g * 3 + 1), 1],
                                                   block_shape=[BN, BK])
                c_desc = tl.make_tensor_descriptor(c_ptr, shape=[m, n], strides=[tl.load(group_lds + g * 3 + 2), 1],
                                                   block_shape=[BM, BN])
                while tile >= first_tile and tile < first_tile + n_tiles:
                    row = (tile - first_tile) // n_tiles_n * BM
                    col = (tile - first_tile) % n_tiles_n * BN
                    acc = tl.zeros((BM, BN), dtype=tl.float32)
                    for kk in range(0, tl.cdiv(k, BK)):
                        acc += tl.dot(a_desc.load([row, kk * BK]), b_desc.load([col, kk * BK]).T)
                    c_desc.store([row, col], acc.to(tl.float16))
                    tile += NUM_PROGRAMS
            first_tile += n_tiles

    return k_tail_matmul, grouped_descriptor_matmul


# Dot operands whose K bound cuts their 16-byte runs (tilec/passes/bounded_runs.py), shared
# by the codegen and language tests of bounded copies: a K-tail matmul, and tutorial 08's
# grouped GEMM with descriptors made from base pointers read from memory.
k_tail_matmul, grouped_descriptor_matmul = _bounded_copy_kernels()


def _row_kernels():
    import tilec
    import tilec.language as tl

    @tilec.jit
    def swiglu_bwd(DC, A, B, DA, DB, stride, n_cols, BLOCK: tl.constexpr):
        """SwiGLU's backward over one row (the corpus's k_swiglu)."""
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        dc = tl.load(DC + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        a = tl.load(A + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(B + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        sig = tl.sigmoid(a)
        silu = a * sig
        db = dc * silu
        da = dc * b * (sig + silu * (1.0 - sig))
        tl.store(DA + row * stride + cols, da.to(DA.dtype.element_ty), mask=mask)
        tl.store(DB + row * stride + cols, db.to(DB.dtype.element_ty), mask=mask)

    @tilec.jit
    def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_N: tl.constexpr):
        """LayerNorm's forward over one row, with a tail mask (the corpus's k_layernorm)."""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row.to(tl.int64) * stride + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        diff = tl.where(mask, x - mean, 0.0)
        var = tl.sum(diff * diff, axis=0) / N
        rstd = 1.0 / tl.sqrt(var + eps)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row.to(tl.int64) * stride + cols, (diff * rstd * w + b).to(Y.dtype.element_ty), mask=mask)
        tl.store(Mean + row, mean)
        tl.store(Rstd + row, rstd)

    return swiglu_bwd, layer_norm_fwd


# Memory-bound row kernels shared by the codegen and language tests of tail masks and
# tilegpu-order-pure-ops.
swiglu_bwd_kernel, layer_norm_fwd_kernel = _row_kernels()


def _descriptor_scale_kernel():
    import tilec
    import tilec.language as tl

    @tilec.jit
    def scale_kernel(x_ptr, out_ptr, M, N, stride_x, stride_out, BM: tl.constexpr, BN: tl.constexpr):
        """out = 2x + 1 through two descriptors the kernel makes of its parameters."""
        src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN])
        dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[stride_out, 1], block_shape=[BM, BN])
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        dst.store([pid_m * BM, pid_n * BN], src.load([pid_m * BM, pid_n * BN]) * 2.0 + 1.0)

    return scale_kernel


# Device descriptors of kernel parameters (their maps encoded by the launcher), shared by
# the descriptor tests and those of the launcher's tensor-map cache.
descriptor_scale_kernel = _descriptor_scale_kernel()


def _register_pressure_kernel():
    import tilec
    import tilec.language as tl

    @tilec.jit
    def pressure_kernel(x_ptr, y_ptr, N: tl.constexpr):
        """y from x's three N-long rows; with one warp and N = 1024, 96 floats a thread
        are live at once: far more than 32 registers (the maxnreg tests)."""
        offs = tl.arange(0, N)
        a = tl.load(x_ptr + offs)
        b = tl.load(x_ptr + N + offs)
        c = tl.load(x_ptr + 2 * N + offs)
        tl.store(y_ptr + offs, tl.exp(a) * tl.sin(b) + tl.cos(c) * tl.log(tl.abs(a) + 1.0) + a * b * c)

    return pressure_kernel


register_pressure_kernel = _register_pressure_kernel()


def _scan_kernels():
    import tilec
    import tilec.language as tl

    @tilec.jit
    def cumsum_cols(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        """A running cumsum down the rows of a strip of columns (the corpus's k_scans)."""
        cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        col_mask = cols < N
        running = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, M, BLOCK_M):
            rows = start + tl.arange(0, BLOCK_M)
            mask = (rows[:, None] < M) & col_mask[None, :]
            offsets = rows.to(tl.int64)[:, None] * stride + cols[None, :]
            x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
            tl.store(out_ptr + offsets, tl.cumsum(x, axis=0) + running[None, :], mask=mask)
            running += tl.sum(x, axis=0)

    @tilec.jit
    def cumsum_rows(x_ptr, out_ptr, N, stride, REVERSE: tl.constexpr, BLOCK_N: tl.constexpr):
        """A cumsum along each row in blocks of BLOCK_N, forwards or reversed (k_scans)."""
        row = tl.program_id(0).to(tl.int64)
        running = 0.0
        num_blocks = tl.cdiv(N, BLOCK_N)
        for i in range(0, num_blocks):
            if REVERSE:
                start = (num_blocks - 1 - i) * BLOCK_N
            else:
                start = i * BLOCK_N
            cols = start + tl.arange(0, BLOCK_N)
            mask = cols < N
            x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
            tl.store(out_ptr + row * stride + cols, tl.cumsum(x, axis=0, reverse=REVERSE) + running, mask=mask)
            running += tl.sum(x, axis=0)

    return cumsum_cols, cumsum_rows


# Blocked scans as the corpus writes them, shared by the scan lowering, codegen and
# language tests.
cumsum_cols_kernel, cumsum_rows_kernel = _scan_kernels()


# ----------------------------------------------------------------------------- located errors
# Kernels in error tests mark the line an error must point at with this comment.
MARK = "# <-"


def ptx_loops(ptx: str) -> list[str]:
    """The PTX of every loop: from a label to a backward branch to it, in program order."""
    import re
    lines = ptx.splitlines()
    labels = {line.strip()[:-1]: i for i, line in enumerate(lines) if re.match(r"\$L__\w+:$", line.strip())}
    loops = []
    for end, line in enumerate(lines):
        jump = re.search(r"bra(?:\.uni)?\s+(\$L__\w+);", line)
        if jump and labels.get(jump.group(1), end) < end:
            loops.append("\n".join(lines[labels[jump.group(1)]:end + 1]))
    return loops


def marked_line(fn) -> tuple[int, str]:
    """The line number and stripped text of the one line of `fn` (a @jit function or a
    plain one) marked with MARK."""
    import inspect
    lines, first = inspect.getsourcelines(getattr(fn, "fn", fn))
    hits = [i for i, line in enumerate(lines) if MARK in line]
    assert len(hits) == 1, f"{fn.__name__} must mark exactly one line with {MARK!r}"
    return first + hits[0], lines[hits[0]].strip()


def assert_points_at(text: str, fn, *, role: str = "at", caret_at: str | None = None) -> None:
    """`text` has a `role FILE:LINE:COL in NAME:` header naming `fn`'s marked line, the line
    quoted, then a caret line (the caret under `caret_at`'s first character when given)."""
    import inspect
    import re
    path = inspect.getsourcefile(getattr(fn, "fn", fn))
    lineno, code = marked_line(fn)
    lines = text.splitlines()
    header = re.compile(rf"{role} {re.escape(path)}:{lineno}:\d+ in {fn.__name__}:")
    found = [i for i, line in enumerate(lines) if header.fullmatch(line)]
    assert found, f"no line '{header.pattern}' in:\n{text}"
    i = found[0]
    assert lines[i + 1] == "    " + code, f"the source line is not quoted after the header:\n{text}"
    assert re.fullmatch(r" +\^", lines[i + 2]), f"no caret line under the source line:\n{text}"
    if caret_at is not None:
        assert lines[i + 2].index("^") == lines[i + 1].index(caret_at), \
            f"the caret does not point at {caret_at!r}:\n{text}"


def assert_located(err, kernel, sentence: str, caret_at: str | None = None) -> None:
    """`err`, a CompilationError, points at `kernel`'s marked line (assert_points_at), says
    `sentence` (a regular expression) and shows no traceback or tilec source path."""
    import inspect
    import os
    import re
    import tilec
    text = str(err)
    assert_points_at(text, kernel, caret_at=caret_at)
    assert (err.location.filename, err.location.lineno) == (inspect.getsourcefile(getattr(kernel, "fn", kernel)),
                                                             marked_line(kernel)[0])
    assert re.search(sentence, err.message), f"{sentence!r} not in the message:\n{text}"
    tilec_dir = os.path.dirname(tilec.__file__)
    assert "Traceback" not in text and tilec_dir not in text, f"tilec internals leak into the error:\n{text}"
