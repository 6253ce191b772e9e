"""Codegen, without a GPU, of scans whose threads hold runs of one element along the
axis, with lanes, warps and repeats of the tile after them (a cumsum down the rows of a
64x32 strip, the corpus's k_scans; a 4096-long row over 8 warps).

- A run of one element takes the lanes' inclusive scan as its value: no extra shuffle
  for the total of the earlier lanes (it was one more shfl.sync.idx per run).
- The thread's partial totals go to shared memory at one base address plus immediate
  offsets: the addresses of 16 slots were 16 64-bit registers, hoisted out of the loop
  and held through it.
- The slots are slot-major (one slot of every column together): a thread's 4 columns
  share a 16-byte vector and the lanes of a warp touch consecutive words. Row-major
  slots cost 16 scalar stores and 8-way bank conflicts on every slot access."""
from __future__ import annotations

import re

import pytest

import tilec
import tilec.language as tl
from scan_ttgir import STRIP, scan_kernel
from scan_ttgir import ptx as scan_ptx
from tilec.backend import toolkit
from tilec_testing import cumsum_cols_kernel as cumsum_cols

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def cumsum_of_range(out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.cumsum((offs % 7).to(tl.float32), axis=0))


def _scan_layout(kernel) -> str:
    """The encoding of the scan's operand, as the ttgir prints it."""
    ttgir = kernel.asm["ttgir"]
    operand = re.search(r'"tile\.scan"\(%\w+\).*?: \(tensor<[^,]*, (#\w+)>\)', ttgir, re.S).group(1)
    return re.search(rf"^{operand} = (.*)$", ttgir, re.M).group(1)


def test_run_of_one_takes_the_lane_scan():
    kernel = tilec.compile(cumsum_of_range, signature={"out_ptr": "*fp32:16"}, target="sm_90a", num_warps=8,
                           constexprs={"N": 4096})
    layout = _scan_layout(kernel)
    assert "sizePerThread = array<i32: 1>" in layout and "threadsPerWarp = array<i32: 32>" in layout, layout
    # 4096 = 16 repeats of (1 element x 32 lanes x 8 warps): 5 shuffle steps per run
    shuffles = re.findall(r"shfl\.sync\.idx", kernel.asm["ptx"])
    assert len(shuffles) == 16 * 5, len(shuffles)


@pytest.fixture(scope="module")
def cols_kernel():
    return tilec.compile(cumsum_cols, signature={"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "M": "i32:16",
                                                 "N": "i32:16", "stride": "i32:16"},
                         target="sm_90a", num_warps=4, constexprs={"BLOCK_M": 64, "BLOCK_N": 32})


def test_partial_totals_share_one_address():
    # The corpus's strip in the layout coalescing gives it today (STRIP): a thread's 16
    # run totals (4 columns x 4 repeats), stored by the last lane along the axis into its
    # warp's slot of each repeat. One slot of the strip's 32 columns is 128 bytes, a
    # repeat's 4 warps 512: one vector of the thread's 4 columns a repeat, from one base
    # register.
    ptx = scan_ptx(scan_kernel(STRIP, 64, 32, 0, False))
    stores = re.findall(r"^\s*(?:@%p\d+ )?st\.shared\.v4\.b32\s+\[(%r\w+)(?:\+(\d+))?\], \{", ptx, re.M)
    assert len({base for base, _ in stores}) == 1 and sorted(int(o or 0) for _, o in stores) == [0, 512, 1024, 1536], \
        stores
    assert not re.search(r"st\.shared\.b32", ptx)
    # Every lane loads the totals before its own (up to repeat 3's warp 2: 15 slots), the
    # same 4 columns, 128 bytes apart, from one base.
    loads = re.findall(r"^\s*ld\.shared\.v4\.b32\s+\{[^}]*\}, \[(%r\w+)(?:\+(\d+))?\];", ptx, re.M)
    assert len({base for base, _ in loads}) == 1 and sorted(int(o or 0) for _, o in loads) == \
        list(range(0, 15 * 128, 128)), loads


def test_no_spills(cols_kernel):
    assert cols_kernel.n_spills == 0
