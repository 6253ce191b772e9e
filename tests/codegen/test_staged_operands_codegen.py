"""Codegen, without a GPU, of a masked matmul on sm_90 whose row strides rule out cp.async
for one operand or both (the corpus' 1000x2000x3000 and 4099x4093x4091 shapes): each
such tile is loaded into registers and staged in shared memory for wgmma.

- Each tile is staged right after its load (tilegpu-pipeline), not at the dot: with both
  loads first, the loaded A lived across B's loads and ptxas spilled more than Triton
  (128x128x32: 264 B against Triton's 104).
- One fence.proxy.async per iteration, after the last staged tile, as in Triton (it was
  one per tile: an extra MEMBAR.ALL.CTA every iteration).
- Where B is streamed by cp.async and A is not, the wait for B's copies comes after A's
  loads and stores (it came before A's loads, which then could not overlap it)."""
from __future__ import annotations

import re

import pytest

import tilec
from tilec_testing import masked_matmul_kernel as matmul_kernel
from tilec_testing import ptx_loops
from tilec.backend import toolkit

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


def _compile(dtype: str, b_streams: bool, block_m: int, block_n: int, block_k: int, num_warps: int):
    # A's rows an odd number of elements apart (its runs are single elements, too short
    # for cp.async); B's either too (nothing streams) or 16-aligned (B streams).
    b_stride = "i32:16" if b_streams else "i32"
    signature = {"a_ptr": f"*{dtype}:16", "b_ptr": f"*{dtype}:16", "c_ptr": f"*{dtype}:16", "M": "i32", "N": "i32",
                 "K": "i32", "stride_am": "i32", "stride_bk": b_stride, "stride_cm": "i32"}
    return tilec.compile(matmul_kernel, signature=signature, target="sm_90", num_warps=num_warps, num_stages=4,
                         constexprs={"stride_ak": 1, "stride_bn": 1, "BLOCK_M": block_m, "BLOCK_N": block_n,
                                     "BLOCK_K": block_k})


def _ttgir_loop(ttgir: str) -> list[str]:
    start = ttgir.index("scf.for")
    body = ttgir[start:ttgir.index("scf.yield", start)]
    return [line.strip() for line in body.splitlines()[1:]]


def _ptx_loop(ptx: str) -> str:
    """The PTX of the loop holding the wgmma."""
    loops = [body for body in ptx_loops(ptx) if "wgmma.mma_async" in body]
    assert loops, "no loop around the wgmma"
    return loops[0]


def _staged_right_after_loads(loop: list[str]) -> int:
    """How many local_allocs of the loop directly follow the load of the tile they stage
    (and asserts that every one does)."""
    staged = 0
    for previous, line in zip(loop, loop[1:]):
        alloc = re.match(r'%\S+ = "tilegpu\.local_alloc"\((%\S+)\)', line)
        if alloc:
            assert previous.startswith(f'{alloc.group(1)} = "tile.load"'), (previous, line)
            staged += 1
    return staged


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("block_m,block_n,block_k,num_warps", [(128, 128, 32, 4), (64, 128, 64, 4)])
def test_tiles_loaded_into_registers_are_staged_at_their_loads(dtype, block_m, block_n, block_k, num_warps):
    kernel = _compile(dtype, False, block_m, block_n, block_k, num_warps)
    assert _staged_right_after_loads(_ttgir_loop(kernel.asm["ttgir"])) == 2
    loop = _ptx_loop(kernel.asm["ptx"])
    assert "cp.async" not in loop
    assert len(re.findall(r"fence\.proxy\.async", loop)) == 1
    # The fence comes after every store of both tiles, before the barrier ahead of the dot.
    assert loop.rindex("st.shared") < loop.index("fence.proxy.async") < loop.index("wgmma.fence")
    if (block_m, block_n) == (128, 128):
        spilled = toolkit.assemble(kernel.asm["ptx"], "sm_90a", "matmul_kernel").n_spills
        assert spilled < 200, spilled  # 264 B with both tiles staged at the dot; Triton 104


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_wait_for_streamed_b_comes_after_a_is_staged(dtype):
    kernel = _compile(dtype, True, 64, 128, 64, 4)
    ttgir_loop = _ttgir_loop(kernel.asm["ttgir"])
    assert any("tilegpu.async_copy_global_to_local" in line for line in ttgir_loop)  # B streams
    assert _staged_right_after_loads(ttgir_loop) == 1  # A does not
    loop = _ptx_loop(kernel.asm["ptx"])
    wait = loop.index("cp.async.wait_group")
    assert loop.rindex("ld.global", 0, wait) > loop.index("ld.global")  # A's loads come first
    assert "ld.global" not in loop[wait:]
    assert loop.rindex("st.shared", 0, wait) > loop.index("st.shared")  # and its stores
    assert "st.shared" not in loop[wait:loop.index("wgmma.fence")]
