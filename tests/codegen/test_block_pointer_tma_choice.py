"""Which block pointers take TMA on sm_90 (compiled without a GPU).

A block pointer whose base is a 16-byte aligned parameter and whose row stride is proven
a multiple of 16 bytes (here an fp32 stride specialised as divisible by 8 or by 16) is
copied by TMA, its tensor map encoded by the launcher. TMA's dimensions end at 2^32 elements:
a shape read from a 64-bit parameter (an argument beyond int32) keeps the pointer form,
which takes any int64 shape, instead of failing at launch."""
from __future__ import annotations

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def copy_rows(x_ptr, out_ptr, rows, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (rows, N), (stride, 1), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (rows, N), (stride, 1), (pid * BM, 0), (BM, BN), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1)), boundary_check=(0, 1))


def _ptx(rows: str, stride: str) -> str:
    kernel = tilec.compile(copy_rows, signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "rows": rows,
                                                 "N": "i32", "stride": stride},
                           constexprs={"BM": 32, "BN": 32}, target="sm_90a")
    return kernel.asm["ptx"]


@pytest.mark.parametrize("stride", ["i32:16", "i32:8"])
def test_an_aligned_stride_takes_tma(stride):
    assert "cp.async.bulk.tensor" in _ptx("i32", stride)


def test_an_unaligned_stride_keeps_pointers():
    assert "cp.async.bulk.tensor" not in _ptx("i32", "i32")


def test_a_64_bit_shape_keeps_pointers():
    assert "cp.async.bulk.tensor" not in _ptx("i64", "i32:8")
