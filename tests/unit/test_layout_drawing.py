"""Pictures of layouts (tilec.layout.drawing): the element maps agree with the layout
algebra and with the PTX fragment tables, and the text, SVG and PNG outputs are well
formed."""
from __future__ import annotations

import random
import struct
import xml.etree.ElementTree as ET
import zlib

import pytest

from tilec.layout import draw, layout_map, save
from tilec.layout.drawing import Holder, parse_shape
from tilec.layout.encodings import BlockedEncoding, DotOperandEncoding, SliceEncoding
from tilec.layout.mma import MmaEncoding
from tilec.layout.shared import NVMMASharedEncoding, SwizzledSharedEncoding
from tilec.layout.syntax import encoding_text

BLOCKED = BlockedEncoding((1, 4), (8, 4), (4, 1), (1, 0))
MMA = MmaEncoding(2, (2, 2))


def _fragment(lane: int) -> list[tuple[int, int]]:
    """c0..c3 of mma.sync m16n8 for `lane`, from the PTX ISA's table."""
    g, t = lane // 4, lane % 4
    return [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]


def test_mma_accumulator_fragments():
    m = layout_map(MmaEncoding(2, (1, 1)), (16, 8))
    assert m.elements_of(0, 0) == [(0, 0), (0, 1), (8, 0), (8, 1)]
    for lane in range(32):
        assert m.elements_of(0, lane) == _fragment(lane)


def test_mma_accumulator_fragments_in_every_tile():
    m = layout_map(MMA, (64, 32))
    assert not m.replicas and all(len(h) == 1 for h in m.holders.values())
    for warp in range(4):
        for lane in range(32):
            held = m.elements_of(warp, lane)
            assert len(held) == 16  # 64x32 / (4 warps x 32 lanes)
            for i in range(0, len(held), 4):  # each instruction's four registers: one 16x8 tile
                tile = (held[i][0] // 16 * 16, held[i][1] // 8 * 8)
                assert [(r - tile[0], c - tile[1]) for r, c in held[i:i + 4]] == _fragment(lane)
    # warps tile N first: warp 1 starts at column 8, warp 2 at row 16
    assert m.holders[(0, 8)] == [Holder(1, 0, 0)] and m.holders[(16, 0)] == [Holder(2, 0, 0)]


def test_mma_operand_a_fragments_and_replicas():
    m = layout_map(DotOperandEncoding(0, MMA, 2), (32, 16))
    g, t = 1, 2  # lane 6: a0,a1 at (g, 2t..2t+1); a2,a3 at (g+8, ...); a4..a7 the same at K + 8
    assert m.elements_of(0, 6) == [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1),
                                   (g, 2 * t + 8), (g, 2 * t + 9), (g + 8, 2 * t + 8), (g + 8, 2 * t + 9)]
    assert m.replicas == [Holder(1, 0, 0)]  # A is replicated over the warps along N
    assert m.holders[(0, 0)] == [Holder(0, 0, 0), Holder(1, 0, 0)]


def test_blocked_and_slice():
    m = layout_map(BLOCKED, (32, 16))
    assert m.elements_of(0, 0) == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert m.elements_of(0, 1) == [(0, 4), (0, 5), (0, 6), (0, 7)]
    assert m.elements_of(0, 4) == [(1, 0), (1, 1), (1, 2), (1, 3)]
    assert m.elements_of(1, 0)[0] == (8, 0)
    sliced = layout_map(SliceEncoding(1, BLOCKED), (32,))
    assert sliced.replicas == [Holder(0, 1, 0), Holder(0, 2, 0)]  # the 4 lanes along the removed columns
    assert [h.lane for h in sliced.holders[(1,)]] == [4, 5, 6, 7]


@pytest.mark.parametrize("encoding,shape", [
    (BLOCKED, (32, 16)), (BLOCKED, (8, 8)), (MMA, (32, 64)), (DotOperandEncoding(1, MMA, 2), (32, 32)),
    (DotOperandEncoding(0, BLOCKED), (32, 8)), (SliceEncoding(0, MMA), (32,)),
    (BlockedEncoding((1, 1, 4), (2, 4, 4), (1, 4, 1), (2, 1, 0)), (4, 16, 16)),
])
def test_map_agrees_with_the_linear_layout(encoding, shape):
    linear = encoding.to_linear(shape)
    m = layout_map(encoding, shape)
    assert (m.num_registers, m.num_lanes, m.num_warps) == tuple(linear.in_dim_size(d)
                                                                 for d in ("register", "lane", "warp"))
    assert sum(len(h) for h in m.holders.values()) == m.num_registers * m.num_lanes * m.num_warps
    rng = random.Random(0)
    for _ in range(200):
        h = Holder(rng.randrange(m.num_warps), rng.randrange(m.num_lanes), rng.randrange(m.num_registers))
        assert h in m.holders[linear.apply({"register": h.register, "lane": h.lane, "warp": h.warp})]


def test_swizzled_shared_offsets_and_banks():
    m = layout_map(SwizzledSharedEncoding(8, 1, 8, (1, 0)), (16, 64))  # 16-bit: 128-byte rows, 16-byte vectors
    for (r, c), offset in m.offsets.items():
        assert offset == r * 64 + ((c // 8) ^ (r % 8)) * 8 + c % 8
    assert m.bank((1, 0)) == (72 * 2 // 4) % 32 and m.bank_group((1, 0)) == 1
    # the 8 rows an ldmatrix reads at one column hit 8 different 16-byte bank groups
    assert sorted(m.bank_group((r, 0)) for r in range(8)) == list(range(8))
    row_major = layout_map(SwizzledSharedEncoding(1, 1, 1, (0, 1)), (4, 8))  # column-major, no swizzle
    assert row_major.offsets[(3, 1)] == 1 * 4 + 3


def test_nvmma_shared_offsets():
    m = layout_map(NVMMASharedEncoding(128, 16), (8, 128))  # rows of 64 elements, then the next 64 columns
    for (r, c), offset in m.offsets.items():
        block, col = divmod(c, 64)
        assert offset == block * 8 * 64 + r * 64 + ((col // 8) ^ r) * 8 + col % 8
    assert m.element_bits == 16


def test_text_picture():
    text = draw(BLOCKED, (32, 16), max_cols=16)
    lines = text.splitlines()
    assert lines[0] == encoding_text(BLOCKED)
    assert "4 warps x 32 lanes x 4 registers per thread; 512 elements" in text
    assert "warp 0 lane 0 holds, by register: (0, 0) (0, 1) (0, 2) (0, 3)" in text
    grid = lines[lines.index("") + 1:]
    assert grid[0].split() == [str(c) for c in range(16)]
    assert grid[1].split()[:6] == ["0", "W0T0R0", "W0T0R1", "W0T0R2", "W0T0R3", "W0T1R0"]
    assert grid[9].split()[:2] == ["8", "W1T0R0"]


def test_text_picture_from_the_ir_text_with_fields():
    text = draw(encoding_text(MmaEncoding(2, (1, 1))), "16x8", show="lane,register")
    assert "cells: T<lane> R<register>" in text
    row = text.splitlines()[-8].split()  # row 8: c2, c3 of lanes 0..3
    assert row == ["8", "T0R2", "T0R3", "T1R2", "T1R3", "T2R2", "T2R3", "T3R2", "T3R3"]


def test_text_elides_to_the_width_and_rows():
    text = draw(MMA, (64, 64), width=80, max_rows=8)
    grid = text.split("\n\n", 1)[1].splitlines()
    assert all(len(line) <= 80 for line in grid)
    assert len(grid) == 1 + 8 + 1 and grid[5].startswith("...")
    assert "..." in grid[0].split() and grid[-1].split()[0] == "63"


def test_shared_text_and_replicated_header():
    text = draw("#tilegpu.shared<{maxPhase = 8 : i32, order = array<i32: 1, 0>, perPhase = 1 : i32, vec = 8 : i32}>",
                (16, 64), max_cols=8)
    assert "swizzle: vector v (8 elements) of row r is stored at vector v ^ ((r // 1) % 8)" in text
    assert text.splitlines()[-15].split()[:3] == ["1", "72b4", "73b4"]
    assert "replicated: each element is held 2 times; copies differ by warp^1" in draw(
        DotOperandEncoding(0, MMA, 2), (32, 16))


def test_several_encodings_and_panels():
    text = draw([BLOCKED, MMA], (32, 16))
    assert text.count("#tilegpu.") == 2
    panels = draw(BlockedEncoding((1, 1, 4), (2, 4, 4), (1, 4, 1), (2, 1, 0)), (16, 16, 16), max_panels=2)
    assert "[0, :, :]" in panels and "[15, :, :]" in panels and "... 14 more" in panels


def test_svg_is_well_formed():
    svg = draw(MMA, (32, 16), "svg")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    cells = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(cells) == 32 * 16
    tooltips = {r.find(f"{ns}title").text for r in cells}
    assert "(8, 1): warp 0 lane 0 register 3" in tooltips
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "W0T0R3" in texts and "W3T31R3" in texts
    shared = ET.fromstring(draw(NVMMASharedEncoding(64, 16), (16, 32), "svg"))
    assert len([r for r in shared.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]) == 16 * 32


def _png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        tag, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF
        chunks.append((tag, body))
        at += 12 + length
    return chunks


def test_png_is_well_formed(tmp_path):
    data = draw(BLOCKED, (32, 16), "png")
    chunks = _png_chunks(data)
    assert [tag for tag, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, color_type = struct.unpack(">IIBB", chunks[0][1][:10])
    assert (depth, color_type) == (8, 2) and width > 16 * 20 and height > 32 * 10
    raw = zlib.decompress(chunks[1][1])
    assert len(raw) == height * (1 + 3 * width)
    assert all(raw[row * (1 + 3 * width)] == 0 for row in range(height))
    colors = {raw[i:i + 3] for i in range(1, len(raw), 3)}
    assert len(colors) > 4  # four warps' colours, grid lines, text
    path = save(MMA, (32, 16), str(tmp_path / "mma.png"))
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    svg = save(MMA, (32, 16), str(tmp_path / "mma.svg"))
    ET.parse(svg)


@pytest.mark.parametrize("call,message", [
    (lambda: draw(BLOCKED, (32, 16), show="offset"), "cannot show offset"),
    (lambda: draw(BLOCKED, (32, 16), "svg", color_by="bank"), "color_by 'bank'"),
    (lambda: draw(BLOCKED, (32, 16), "jpeg"), "format 'jpeg'"),
    (lambda: draw(BLOCKED, "30x16"), "power of two"),
    (lambda: draw(BLOCKED, "32 by 16"), "cannot read the shape"),
    (lambda: draw("#tilegpu.blocked<{}>", (32, 16)), "malformed blocked encoding .* missing sizePerThread"),
    (lambda: draw(BLOCKED, (32, 16, 4)), "rank"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_shapes():
    assert parse_shape("32x16") == parse_shape("[32, 16]") == parse_shape((32, 16)) == (32, 16)
