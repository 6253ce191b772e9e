"""wgmma on the GPU, from hand-written PTX, against tilec's layout algebra (before any
compiler pass emits it): operands are laid out in shared memory by the NVMMA layouts,
the descriptors come from `wgmma_descriptor_fields`, and the accumulator registers are
read back through the mma version 3 layout. A wrong descriptor field, swizzle model or
fragment layout gives a wrong product here.

Each thread of one warpgroup copies the operands' bytes (arranged on the host in shared
memory order) to shared memory, the warpgroup runs one wgmma per 16 columns of K, and
every thread writes its accumulator registers in order.
"""
from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

from tilec.layout.encodings import LANE, REGISTER, WARP
from tilec.layout.mma import MmaEncoding
from tilec.layout.shared import NVMMASharedEncoding, shared_byte_offset, wgmma_descriptor_fields

pytestmark = pytest.mark.gpu

M = 64


def _gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("wgmma needs an sm_90 GPU")
    return torch


def arrange(values: np.ndarray, encoding: NVMMASharedEncoding) -> np.ndarray:
    """`values` (2-D f16) as the bytes of a shared buffer laid out by `encoding`."""
    out = np.zeros(values.size, np.float16)
    for coords in itertools.product(*(range(s) for s in values.shape)):
        out[shared_byte_offset(encoding, values.shape, coords, 16) // 2] = values[coords]
    return out


def probe_ptx(n: int, k: int, a_bytes: int, b_bytes: int, a_desc: list[int], b_desc: list[int],
              trans_a: int, trans_b: int) -> str:
    """One warpgroup: copy A then B (16 bytes per thread per step) to shared memory, one
    wgmma.m64n{n}k16 per K step with the given descriptors (shared offsets added at run
    time), then every thread stores its n/2 f32 registers."""
    regs = n // 2
    d = ", ".join(f"%d{i}" for i in range(regs))
    steps = []
    for s in range(k // 16):
        steps.append(f"""
    add.u64 %da, %abase, {a_desc[s]};
    add.u64 %db, %bbase, {b_desc[s]};
    wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{d}}}, %da, %db, %p{1 if s else 0}, 1, 1, {trans_a}, {trans_b};""")
    stores = "\n".join(f"    st.global.f32 [%out+{4 * i}], %d{i};" for i in range(regs))
    total = a_bytes + b_bytes
    return f""".version 8.0
.target sm_90a
.address_size 64
.visible .entry probe(.param .u64 src, .param .u64 dst)
{{
    .reg .b32 %t, %i, %sa, %tmp;
    .reg .b64 %src, %dst, %g, %abase, %bbase, %da, %db, %out, %w;
    .reg .pred %p0, %p1, %loop;
    .reg .f32 %d<{regs}>;
    .shared .align 1024 .b8 smem[{total}];
    ld.param.u64 %src, [src];
    ld.param.u64 %dst, [dst];
    mov.u32 %t, %tid.x;
    mov.u32 %sa, smem;
    shl.b32 %i, %t, 4;
COPY:
    cvt.u64.u32 %w, %i;
    add.u64 %g, %src, %w;
    ld.global.v2.u64 {{%abase, %bbase}}, [%g];
    add.u32 %tmp, %sa, %i;
    st.shared.v2.u64 [%tmp], {{%abase, %bbase}};
    add.u32 %i, %i, 2048;
    setp.lt.u32 %loop, %i, {total};
    @%loop bra COPY;
    bar.sync 0;
    fence.proxy.async.shared::cta;
    setp.ne.u32 %p0, 0, 0;
    setp.eq.u32 %p1, 0, 0;
    cvt.u64.u32 %abase, %sa;
    shr.u64 %abase, %abase, 4;
    add.u32 %tmp, %sa, {a_bytes};
    cvt.u64.u32 %bbase, %tmp;
    shr.u64 %bbase, %bbase, 4;
    wgmma.fence.sync.aligned;{''.join(steps)}
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
    mul.wide.u32 %w, %t, {4 * regs};
    add.u64 %out, %dst, %w;
{stores}
    ret;
}}
"""


def descriptors(encoding: NVMMASharedEncoding, shape: tuple[int, int], k_axis: int, k: int) -> list[int]:
    """Per K step: the descriptor without its address bits plus the step's start offset
    >> 4 (the kernel adds the buffer's address >> 4)."""
    fields = wgmma_descriptor_fields(encoding, shape, k_axis)
    out = []
    for k0 in range(0, k, 16):
        coords = [0, 0]
        coords[k_axis] = k0
        out.append(fields.encode(0) + (shared_byte_offset(encoding, shape, coords, 16) >> 4))
    return out


CASES = [
    # (N, K, A swizzle, B swizzle, B stored [K, N] with N contiguous (True) or K contiguous)
    (64, 64, 128, 128, True),
    (128, 64, 128, 128, False),
    (256, 32, 64, 128, True),
    (32, 32, 32, 64, False),
    (64, 64, 128, 0, True),
    (64, 32, 64, 0, True),
    (64, 32, 64, 0, False),
    (16, 16, 0, 0, False),
]


@pytest.mark.parametrize("n, k, a_swizzle, b_swizzle, b_n_major", CASES)
def test_wgmma_product_through_layouts(n, k, a_swizzle, b_swizzle, b_n_major):
    torch = _gpu()
    from tilec.backend import toolkit
    from tilec.runtime import driver
    rng = np.random.default_rng(n + k)
    a = rng.standard_normal((M, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    a_enc = NVMMASharedEncoding(a_swizzle, 16, transposed=False)          # A [M, K], K contiguous
    b_enc = NVMMASharedEncoding(b_swizzle, 16, transposed=not b_n_major)   # B [K, N]
    try:
        a_desc = descriptors(a_enc, (M, k), 1, k)
        b_desc = descriptors(b_enc, (k, n), 0, k)
    except ValueError as error:
        pytest.skip(str(error))
    b_fields = wgmma_descriptor_fields(b_enc, (k, n), 0)
    src = np.concatenate([arrange(a, a_enc), arrange(b, b_enc)])
    ptx = probe_ptx(n, k, a.nbytes, b.nbytes, a_desc, b_desc, 0, 0 if b_fields.k_major else 1)
    cubin = toolkit.assemble(ptx, "sm_90a", "probe").cubin
    loaded = driver.load_cubin(cubin, "probe", 0, torch.cuda.current_device())
    src_d = torch.from_numpy(src.view(np.uint8).copy()).cuda()
    out_d = torch.full((128 * n // 2,), float("nan"), dtype=torch.float32, device="cuda")
    cuda = driver._bindings()
    params = ((src_d.data_ptr(), out_d.data_ptr()), (ctypes.c_void_p, ctypes.c_void_p))
    status, = cuda.cuLaunchKernel(cuda.CUfunction(loaded.function), 1, 1, 1, 128, 1, 1, 0,
                                  cuda.CUstream(torch.cuda.current_stream().cuda_stream), params, 0)
    assert status == cuda.CUresult.CUDA_SUCCESS, status
    torch.cuda.synchronize()
    registers = out_d.cpu().numpy().reshape(128, n // 2)
    layout = MmaEncoding(3, (4, 1), (M, n)).to_linear((M, n))
    got = np.full((M, n), np.nan, np.float32)
    for thread, i in itertools.product(range(128), range(n // 2)):
        row, col = layout.apply({REGISTER: i, LANE: thread % 32, WARP: thread // 32})
        got[row, col] = registers[thread, i]
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * (np.abs(a).astype(np.float64) @ np.abs(b)).max())
