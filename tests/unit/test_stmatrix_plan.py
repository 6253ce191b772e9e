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
from tilec.layout.shared import NVMMASharedEncoding, SwizzledSharedEncoding, exchange_shared_encoding
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
            plan = ldmatrix.plan_stmatrix(layout, shared, shape, 16, num_warps)
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


def _chunk(offset: int) -> int:
    """The 16-byte bank group (of 8 in a 128-byte line) of a 16-bit element offset."""
    return offset * 2 // 16 % 8


@pytest.mark.parametrize("num_warps", [4, 8])
def test_accumulator_exchange_through_stmatrix_is_exact_and_conflict_free(num_warps):
    """convert_layout of a 16-bit accumulator into a layout that reads 16 bytes at a time
    (a matmul's pointer-store epilogue) goes through exchange_shared_encoding's buffer
    where stmatrix_exchange_encoding accepts: stmatrix writes every element where the
    buffer keeps it, each thread reads its own elements back as 16-byte vectors from
    those places, and neither side has a bank conflict (each matrix of an stmatrix, and
    each 8-lane phase of a 16-byte load, reaches 8 distinct bank groups). Where a load
    would conflict, it declines."""
    from tilec.passes.convert_tilegpu_to_llvm.convert_layout import stmatrix_exchange_encoding

    f16 = type("F16", (), {"width": 16})()
    accepted, declined = 0, 0
    for name, src, shape in _layouts(num_warps):
        if name.startswith("blocked"):
            continue
        for lanes_per_row in (32, 16, 8, 4):
            threads = (32 // lanes_per_row, lanes_per_row)
            if shape[1] < 8 * lanes_per_row or shape[0] < threads[0] * num_warps:
                continue
            dst = BlockedEncoding((1, 8), threads, (num_warps, 1), (1, 0)).to_linear(list(shape))
            shared = stmatrix_exchange_encoding(src, dst, shape, f16, num_warps)
            starts = _vector_reads(dst, shape, num_warps, shared or exchange_shared_encoding(shape, 16))
            conflicts = any(len({_chunk(s) for s in group[8 * p:8 * p + 8]}) < 8 for group in starts for p in range(4))
            if shared is None:
                declined += 1
                assert conflicts or ldmatrix.plan_stmatrix(src, exchange_shared_encoding(shape, 16), shape, 16,
                                                           num_warps) is None, (name, threads)
                continue
            accepted += 1
            assert not conflicts, (name, threads)
            plan = ldmatrix.plan_stmatrix(src, shared, shape, 16, num_warps)
            written = _simulate(src, shared, shape, num_warps, *plan)
            offsets = shared.offset_layout(list(shape))
            for warp in range(num_warps):
                for lane in range(32):
                    for register in range(dst.in_dim_size(REGISTER)):
                        coords = dst.apply({REGISTER: register, LANE: lane, WARP: warp})
                        place = offsets.apply({f"dim{d}": c for d, c in enumerate(coords)})[0]
                        assert {src.apply({REGISTER: r, LANE: l, WARP: w}) for r, l, w in written[place]} == \
                            {coords}, (name, threads)
            lanes, warps, groups = ldmatrix.address_plan(src, shared, tuple(shape), (0, 0), 16, *plan)
            for warp in range(num_warps):
                for _, constant in groups:
                    for i in range(plan[1]):
                        rows = [_bits(8 * i + j, lanes) ^ _bits(warp, warps) ^ constant for j in range(8)]
                        assert len({_chunk(r) for r in rows}) == 8, (name, "stmatrix conflict")
    assert accepted >= 6 and declined >= 1, (accepted, declined)


def _vector_reads(dst, shape, num_warps, shared):
    """For each warp and each run of 8 registers: the element offset each lane's 16-byte
    load starts at (checked to cover 8 consecutive elements)."""
    offsets = shared.offset_layout(list(shape))
    at = lambda coords: offsets.apply({f"dim{d}": c for d, c in enumerate(coords)})[0]
    reads = []
    for warp in range(num_warps):
        for first in range(0, dst.in_dim_size(REGISTER), 8):
            starts = []
            for lane in range(32):
                places = [at(dst.apply({REGISTER: first + e, LANE: lane, WARP: warp})) for e in range(8)]
                assert places == list(range(places[0], places[0] + 8))
                starts.append(places[0])
            reads.append(starts)
    return reads
