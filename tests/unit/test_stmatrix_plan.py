"""stmatrix (local_memory.write_view on sm_90): a simulation of the instruction, lane by
lane, from the row addresses ldmatrix.address_plan gives each lane, must put every
16-bit element of a tile where the buffer's layout says it lives, for the layouts
plan_stmatrix accepts: mma.sync and wgmma accumulators stored into the NVMMA layouts of
TMA boxes and wgmma operands, and into swizzled or row-major buffers. The simulated
hardware: lane 8i + j of an stmatrix.xN gives the address of row j of matrix i; that
row's 8 elements come from lanes 4j .. 4j+3, two each, from their register i of the
group (`.trans`: the matrix transposed, row j from the j % 2 half of lanes j // 2 + 4c)."""
import pytest

from tilec.layout.encodings import BlockedEncoding, LANE, REGISTER, WARP
from tilec.layout.mma import MmaEncoding, mma_warps_per_cta
from tilec.layout.shared import NVMMASharedEncoding, SwizzledSharedEncoding
from tilec.passes.convert_tilegpu_to_llvm import ldmatrix


def _bits(index: int, components: list[int]) -> int:
    offset = 0
    for bit, component in enumerate(components):
        if index >> bit & 1:
            offset ^= component
    return offset


def _simulate(layout, shared, shape, num_warps, trans, num):
    """{element offset: (register, lane, warp)} written by the plan's stmatrix instructions."""
    lanes, warps, groups = ldmatrix.address_plan(layout, shared, tuple(shape), (0,) * len(shape), 16, trans, num)
    written = {}
    for warp in range(num_warps):
        for first, constant in groups:
            for i in range(num):
                for j in range(8):
                    row = _bits(8 * i + j, lanes) ^ _bits(warp, warps) ^ constant
                    if trans:  # row j of the transposed matrix: element c from lane j // 2 + 4c
                        sources = [(2 * (first + i) + j % 2, j // 2 + 4 * c) for c in range(8)]
                    else:
                        sources = [(2 * (first + i) + e, 4 * j + t) for t in range(4) for e in range(2)]
                    for k, (register, lane) in enumerate(sources):
                        written.setdefault(row + k, set()).add((register, lane, warp))
    return written


def _layouts(num_warps):
    for m, n in ((16, 64), (64, 64), (128, 128), (64, 256)):
        yield f"mma2 {m}x{n}", MmaEncoding(2, mma_warps_per_cta([m, n], num_warps)).to_linear([m, n]), (m, n)
    for m, n in ((64, 128), (128, 128), (128, 256)):
        if m % (16 * num_warps) == 0 or num_warps == 4:
            warps = (num_warps, 1) if m >= 16 * num_warps else (4, num_warps // 4)
            layout = MmaEncoding(3, warps, (64, min(n, 256 // (num_warps // warps[0])))).to_linear([m, n])
            yield f"mma3 {m}x{n} warps {warps}", layout, (m, n)
    yield "blocked 64x64", BlockedEncoding((1, 8), (4, 8), (num_warps, 1), (1, 0)).to_linear([64, 64]), (64, 64)


@pytest.mark.parametrize("num_warps", [4, 8])
def test_stmatrix_writes_every_element_where_the_buffer_keeps_it(num_warps):
    planned, transposed = 0, 0
    for name, layout, shape in _layouts(num_warps):
        for shared in (NVMMASharedEncoding(128, 16), NVMMASharedEncoding(64, 16), NVMMASharedEncoding(32, 16),
                       NVMMASharedEncoding(128, 16, True), SwizzledSharedEncoding(8, 1, 8, (1, 0)),
                       SwizzledSharedEncoding(8, 1, 8, (0, 1)), SwizzledSharedEncoding(1, 1, 1, (1, 0))):
            plan = ldmatrix.plan_stmatrix(layout, shared, type("B", (), {"shape": shape})(), 16, num_warps)
            if plan is None:
                continue
            planned += 1
            transposed += plan[0]
            offsets = shared.offset_layout(list(shape))
            expected = {}
            for warp in range(num_warps):
                for lane in range(32):
                    for register in range(layout.in_dim_size(REGISTER)):
                        coords = layout.apply({REGISTER: register, LANE: lane, WARP: warp})
                        at = offsets.apply({f"dim{d}": c for d, c in enumerate(coords)})[0]
                        expected.setdefault(at, set()).add((register, lane, warp))
            written = _simulate(layout, shared, shape, num_warps, *plan)
            assert written == expected, (name, shared, plan)
    assert planned >= 8 and transposed  # accumulators into NVMMA layouts, and .trans into transposed ones
