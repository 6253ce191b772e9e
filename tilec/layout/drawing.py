"""Pictures of layouts: which warp, thread and register holds each element of a tensor,
or, for a shared-memory layout, at which offset and bank each element is stored.

    from tilec.layout import draw, save
    print(draw("#tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, "
               "warpsPerCTA = array<i32: 2, 2>}>", (32, 16)))
    save(encoding, (64, 64), "layout.svg")           # or .png, .txt

Everything is read off the encoding's `LinearLayout` (`to_linear(shape)`), the same map
the lowering uses, by evaluating it at every input: (register, lane, warp) for a
distributed layout, `offset` for a shared one. A picture is a grid per 2-D slice of the
tensor (rows: the second-to-last dimension, columns: the last; a 1-D tensor is wrapped
into rows of 16), one cell per element, saying

    W<warp> T<lane> R<register>     a distributed layout (blocked, slice, mma, dot_op);
                                    T is the lane in the warp: thread id = 32 * W + T
    <offset>b<bank>                 a shared layout: the element's offset in the buffer
                                    (in elements) and its 4-byte bank (0..31)

An element held by several threads (a replicated layout) shows its first holder; the
header says how the others differ (e.g. `lane^4`: the lane with bit 2 flipped), and in an
SVG each cell's tooltip lists them all. Images colour cells by warp (by lane in a
one-warp layout) or, for shared layouts, by 16-byte bank group, which makes the swizzle
visible. Large tensors are elided in the middle of each dimension.

The text output is for a terminal, SVG is written by hand, PNG by `_raster` (zlib and a
5x7 bitmap font with lower case): no imaging library is needed.
"""
from __future__ import annotations

import colorsys
import itertools
import math
import os
from dataclasses import dataclass, field
from typing import Sequence, Union

from . import _raster
from .encodings import LANE, REGISTER, THREADS_PER_WARP, WARP, BlockedEncoding, DotOperandEncoding, SliceEncoding
from .mma import MmaEncoding
from .shared import BANK_BYTES, LDMATRIX_ROW_BYTES, NUM_BANKS, OFFSET, NVMMASharedEncoding, \
    SwizzledSharedEncoding
from .syntax import encoding_text, parse_encoding
from .triton_syntax import is_triton_encoding, parse_triton_encoding

FORMATS = ("text", "svg", "png")
REGISTER_FIELDS = ("warp", "lane", "thread", "register")
SHARED_FIELDS = ("offset", "bank", "group")
COLOR_BY = {"registers": REGISTER_FIELDS, "shared": ("bank", "group", "offset")}
ROW_WRAP = 16          # elements per row when a 1-D tensor is drawn
MAX_INPUTS = 1 << 22   # (register, lane, warp) triples evaluated at most

AnyEncoding = Union[BlockedEncoding, SliceEncoding, DotOperandEncoding, MmaEncoding, SwizzledSharedEncoding,
                    NVMMASharedEncoding]
Coord = tuple[int, ...]


# ----------------------------------------------------------------------------- the map


@dataclass(frozen=True, order=True)
class Holder:
    """One place a distributed layout keeps an element: register `register` of lane
    `lane` of warp `warp`."""
    warp: int
    lane: int
    register: int

    @property
    def thread(self) -> int:
        """The thread's index in the block (tid.x)."""
        return self.warp * THREADS_PER_WARP + self.lane

    def __str__(self) -> str:
        return f"warp {self.warp} lane {self.lane} register {self.register}"


@dataclass
class LayoutMap:
    """Where every element of a tensor of `shape` lives under `encoding`.

    kind "registers": `holders[coord]` lists the (warp, lane, register) holding it,
    lowest first. kind "shared": `offsets[coord]` is its offset in the buffer, in
    elements of `element_bits` bits."""
    encoding: AnyEncoding
    shape: tuple[int, ...]
    kind: str
    element_bits: int
    num_warps: int = 1
    num_lanes: int = 1
    num_registers: int = 1
    holders: dict[Coord, list[Holder]] = field(default_factory=dict)
    offsets: dict[Coord, int] = field(default_factory=dict)
    replicas: list[Holder] = field(default_factory=list)  # generators: XOR one onto a holder, get another

    def elements_of(self, warp: int = 0, lane: int = 0) -> list[Coord]:
        """The elements lane `lane` of warp `warp` holds, in register order."""
        held = {h.register: coord for coord, hs in self.holders.items() for h in hs
                if h.warp == warp and h.lane == lane}
        return [held[r] for r in sorted(held)]

    def bank(self, coord: Sequence[int]) -> int:
        """The 4-byte shared-memory bank (0..31) of an element's first byte."""
        return (self.offsets[tuple(coord)] * self.element_bits // 8 // BANK_BYTES) % NUM_BANKS

    def bank_group(self, coord: Sequence[int]) -> int:
        """The 16-byte bank group (0..7) of an element: what `ldmatrix` and vector
        accesses conflict on."""
        groups = NUM_BANKS * BANK_BYTES // LDMATRIX_ROW_BYTES
        return (self.offsets[tuple(coord)] * self.element_bits // 8 // LDMATRIX_ROW_BYTES) % groups


def layout_map(encoding: AnyEncoding | str, shape: Sequence[int] | str, element_bits: int | None = None) -> LayoutMap:
    """Evaluates `encoding` over a tensor of `shape` (see `LayoutMap`).

    `encoding` may be an encoding object or its text as ttgir prints it (tilec's, or
    Triton's: `#ttg.blocked<{...}>`); `shape` a sequence or text such as "32x16".
    `element_bits` sizes shared-memory elements for the banks (default: an NVMMA
    layout's own, else 16)."""
    encoding = as_encoding(encoding)
    shape = parse_shape(shape)
    if isinstance(encoding, NVMMASharedEncoding):
        bits = element_bits or encoding.element_bits
    else:
        bits = element_bits or 16
    linear = encoding.to_linear(shape)
    if OFFSET in linear.in_dims:
        result = LayoutMap(encoding, shape, "shared", bits)
        for offset, flat in enumerate(_images(linear.bases(OFFSET), shape)):
            result.offsets[_unflatten(flat, shape)] = offset
        return result
    registers = _images(linear.bases(REGISTER), shape)
    lanes = _images(linear.bases(LANE), shape)
    warps = _images(linear.bases(WARP), shape)
    if len(registers) * len(lanes) * len(warps) > MAX_INPUTS:
        raise ValueError(f"{len(registers)} registers x {len(lanes)} lanes x {len(warps)} warps is too many to draw")
    result = LayoutMap(encoding, shape, "registers", bits, len(warps), len(lanes), len(registers))
    by_flat: list[list[Holder]] = [[] for _ in range(math.prod(shape))]
    for w, at_warp in enumerate(warps):
        for lane, at_lane in enumerate(lanes):
            base = at_warp ^ at_lane
            for r, at_register in enumerate(registers):
                by_flat[base ^ at_register].append(Holder(w, lane, r))
    result.holders = {_unflatten(flat, shape): holders for flat, holders in enumerate(by_flat)}
    result.replicas = _generators(by_flat[0])  # the holders of element 0 are the kernel of the map
    return result


def _images(bases: Sequence[Sequence[int]], shape: Sequence[int]) -> list[int]:
    """The (flattened, row-major) image of every input 0 .. 2^len(bases) - 1. Sizes are
    powers of two, so coordinates sit in disjoint bits and XOR commutes with flattening."""
    packed = [_flatten(b, shape) for b in bases]
    images = [0] * (1 << len(packed))
    for i in range(1, len(images)):
        low = i & -i
        images[i] = images[i ^ low] ^ packed[low.bit_length() - 1]
    return images


def _flatten(coord: Sequence[int], shape: Sequence[int]) -> int:
    flat = 0
    for c, size in zip(coord, shape):
        flat = flat * size + c
    return flat


def _unflatten(flat: int, shape: Sequence[int]) -> Coord:
    coord = []
    for size in reversed(shape):
        flat, c = divmod(flat, size)
        coord.append(c)
    return tuple(reversed(coord))


def _generators(kernel: list[Holder]) -> list[Holder]:
    """A smallest set of holders whose XOR combinations give `kernel` (which is closed
    under XOR and contains the zero holder): how replicas of one element differ."""
    span, generators = {(0, 0, 0)}, []
    for h in sorted(kernel, key=lambda h: (h.warp, h.lane, h.register)):
        key = (h.warp, h.lane, h.register)
        if key not in span:
            generators.append(h)
            span |= {(a ^ h.warp, b ^ h.lane, c ^ h.register) for a, b, c in span}
    return generators


def as_encoding(encoding: AnyEncoding | str) -> AnyEncoding:
    """An encoding object, from its text if it is a string: as tilec's ttgir prints it,
    or as Triton's does (`#ttg.blocked<{sizePerThread = [1, 4], ...}>`)."""
    if not isinstance(encoding, str):
        return encoding
    return parse_triton_encoding(encoding) if is_triton_encoding(encoding) else parse_encoding(encoding)


def parse_shape(shape: Sequence[int] | str) -> tuple[int, ...]:
    """(32, 16) from "32x16", "32,16", "[32, 16]" or a sequence."""
    if isinstance(shape, str):
        text = shape.strip().strip("[]()").replace("x", ",").replace("X", ",").replace("*", ",")
        try:
            shape = [int(part) for part in text.split(",") if part.strip()]
        except ValueError:
            raise ValueError(f"cannot read the shape {shape!r}; write it as 32x16") from None
    shape = tuple(int(s) for s in shape)
    if not shape or any(s <= 0 or s & (s - 1) for s in shape):
        raise ValueError(f"shape {list(shape)}: every dimension must be a power of two")
    return shape


# ----------------------------------------------------------------------------- what the picture says


def describe(encoding: AnyEncoding) -> str:
    """One line naming the encoding and its parameters."""
    if isinstance(encoding, BlockedEncoding):
        return (f"blocked: sizePerThread {list(encoding.size_per_thread)}, threadsPerWarp "
                f"{list(encoding.threads_per_warp)}, warpsPerCTA {list(encoding.warps_per_cta)}, "
                f"order {list(encoding.order)}")
    if isinstance(encoding, SliceEncoding):
        return f"slice (dimension {encoding.dim} removed) of {describe(encoding.parent)}"
    if isinstance(encoding, MmaEncoding):
        instruction = "mma.sync" if encoding.version == 2 else "wgmma"
        return (f"mma v{encoding.version} accumulator ({instruction} m{encoding.instr_shape[0]}n{encoding.instr_shape[1]}), "
                f"warpsPerCTA {list(encoding.warps_per_cta)}")
    if isinstance(encoding, DotOperandEncoding):
        k_width = f", kWidth {encoding.k_width}" if encoding.k_width else ""
        return f"dot operand {'AB'[encoding.op_idx]}{k_width} of {describe(encoding.parent)}"
    if isinstance(encoding, SwizzledSharedEncoding):
        return (f"swizzled shared: vec {encoding.vec}, perPhase {encoding.per_phase}, maxPhase {encoding.max_phase}, "
                f"order {list(encoding.order)}")
    if isinstance(encoding, NVMMASharedEncoding):
        return (f"NVMMA shared: {encoding.swizzle_bytes}-byte swizzle, {encoding.element_bits}-bit elements"
                + (", transposed" if encoding.transposed else ""))
    return type(encoding).__name__


def _header(m: LayoutMap, fields: Sequence[str]) -> list[str]:
    lines = [encoding_text(m.encoding), f"{describe(m.encoding)}; shape {list(m.shape)}"]
    if m.kind == "shared":
        bytes_ = math.prod(m.shape) * m.element_bits // 8
        lines.append(f"{math.prod(m.shape)} elements of {m.element_bits} bits, {bytes_} bytes")
        enc = m.encoding
        if enc.max_phase > 1:
            lines.append(f"swizzle: vector v ({enc.vec} elements) of row r is stored at vector "
                         f"v ^ ((r // {enc.per_phase}) % {enc.max_phase})")
        lines.append("cells: " + "".join(_FIELD_LEGEND[f] for f in fields) + " (offset in elements, 4-byte bank)"
                     * (tuple(fields) == ("offset", "bank")))
        return lines
    lines.append(f"{_count(m.num_warps, 'warp')} x {_count(m.num_lanes, 'lane')} x "
                 f"{_count(m.num_registers, 'register')} per thread; {math.prod(m.shape)} elements")
    lines.append("cells: " + " ".join(_FIELD_LEGEND[f] for f in fields)
                 + ("  (thread id = 32 * W + T)" if "lane" in fields else ""))
    if m.replicas:
        copies = 1 << len(m.replicas)
        lines.append(f"replicated: each element is held {copies} times; copies differ by "
                     + ", ".join(_replica_text(h) for h in m.replicas) + " (the first is shown)")
    held = m.elements_of(0, 0)
    shown = " ".join(_coord_text(c) for c in held[:16])
    lines.append(f"warp 0 lane 0 holds, by register: {shown}" + (f" ... ({len(held)} in all)" if len(held) > 16 else ""))
    return lines


_FIELD_LEGEND = {"warp": "W<warp>", "lane": "T<lane>", "thread": "T<thread id>", "register": "R<register>",
                 "offset": "<offset>", "bank": "b<bank>", "group": "g<16-byte bank group>"}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _replica_text(h: Holder) -> str:
    parts = [f"{name}^{value}" for name, value in (("warp", h.warp), ("lane", h.lane), ("register", h.register))
             if value]
    return "+".join(parts)


def _coord_text(coord: Coord) -> str:
    return "(" + ", ".join(str(c) for c in coord) + ")"


def _default_fields(m: LayoutMap) -> tuple[str, ...]:
    if m.kind == "shared":
        return ("offset", "bank")
    return tuple(f for f, needed in (("warp", m.num_warps > 1), ("lane", True), ("register", m.num_registers > 1))
                 if needed)


def _cell_text(m: LayoutMap, coord: Coord, fields: Sequence[str]) -> str:
    if m.kind == "shared":
        values = {"offset": str(m.offsets[coord]), "bank": f"b{m.bank(coord)}", "group": f"g{m.bank_group(coord)}"}
        return "".join(values[f] for f in fields)
    h = m.holders[coord][0]
    values = {"warp": f"W{h.warp}", "lane": f"T{h.lane}", "thread": f"T{h.thread}", "register": f"R{h.register}"}
    return "".join(values[f] for f in fields)


def _tooltip(m: LayoutMap, coord: Coord) -> str:
    if m.kind == "shared":
        offset = m.offsets[coord]
        return (f"{_coord_text(coord)}: offset {offset}, byte {offset * m.element_bits // 8}, bank {m.bank(coord)}, "
                f"16-byte group {m.bank_group(coord)}")
    return f"{_coord_text(coord)}: " + "; ".join(str(h) for h in m.holders[coord])


def _color_key(m: LayoutMap, coord: Coord, color_by: str) -> tuple[int, int]:
    """(category, number of categories) of an element's colour."""
    if m.kind == "shared":
        if color_by == "bank":
            return m.bank(coord), NUM_BANKS
        if color_by == "offset":
            return m.offsets[coord] % 64, 64
        return m.bank_group(coord), NUM_BANKS * BANK_BYTES // LDMATRIX_ROW_BYTES
    h = m.holders[coord][0]
    return {"warp": (h.warp, m.num_warps), "lane": (h.lane, m.num_lanes),
            "thread": (h.thread, m.num_warps * m.num_lanes), "register": (h.register, m.num_registers)}[color_by]


# ----------------------------------------------------------------------------- grids


@dataclass
class _Cell:
    text: str
    color: tuple[int, int] | None = None  # (category, categories)
    tooltip: str = ""


@dataclass
class _Panel:
    title: str
    row_labels: list[str | None]    # None: an elided run of rows
    col_labels: list[str | None]
    cells: list[list[_Cell | None]]  # None: elided


@dataclass
class _Figure:
    header: list[str]
    panels: list[_Panel]
    color_by: str                               # images only: what the colours mean,
    legend: list[tuple[str, tuple[int, int]]]   # and a swatch (label, colour) for each


def _pick(n: int, limit: int | None) -> list[int | None]:
    """Indices 0..n-1, or the first and last `limit` of them around a gap (None)."""
    if limit is None or n <= limit:
        return list(range(n))
    head = (limit + 1) // 2
    return list(range(head)) + [None] + list(range(n - (limit - head), n))


def _grid_shape(shape: tuple[int, ...]) -> tuple[list[tuple[int, ...]], int, int]:
    """(leading indices of each panel, rows, columns) of the picture of `shape`."""
    if len(shape) == 1:
        cols = min(shape[0], ROW_WRAP)
        return [()], shape[0] // cols, cols
    return list(itertools.product(*(range(s) for s in shape[:-2]))), shape[-2], shape[-1]


def _coord(shape: tuple[int, ...], lead: tuple[int, ...], row: int, col: int, cols: int) -> Coord:
    return (row * cols + col,) if len(shape) == 1 else lead + (row, col)


def _figure(m: LayoutMap, fields: Sequence[str], color_by: str, max_rows: int | None, max_cols: int | None,
            max_panels: int | None, tooltips: bool) -> _Figure:
    leads, rows, cols = _grid_shape(m.shape)
    panels = []
    for p in _pick(len(leads), max_panels):
        if p is None:
            panels.append(_Panel(f"... {len(leads) - (max_panels or 0)} more", [], [], []))
            continue
        lead = leads[p]
        title = "[" + ", ".join([str(i) for i in lead] + [":", ":"]) + "]" if lead else ""
        row_ids, col_ids = _pick(rows, max_rows), _pick(cols, max_cols)
        cells = []
        for r in row_ids:
            line = []
            for c in col_ids:
                if r is None or c is None:
                    line.append(None)
                    continue
                coord = _coord(m.shape, lead, r, c, cols)
                line.append(_Cell(_cell_text(m, coord, fields), _color_key(m, coord, color_by),
                                  _tooltip(m, coord) if tooltips else ""))
            cells.append(line)
        row_labels = [None if r is None else str(r * cols if len(m.shape) == 1 else r) for r in row_ids]
        col_labels = [None if c is None else str(c) for c in col_ids]
        panels.append(_Panel(title, row_labels, col_labels, cells))
    categories = _color_key(m, next(iter(m.offsets or m.holders)), color_by)[1]
    names = {"warp": "W", "lane": "T", "thread": "T", "register": "R", "bank": "b", "group": "g", "offset": "@"}
    legend = [(f"{names[color_by]}{i}", (i, categories)) for i in range(min(categories, 32))]
    return _Figure(_header(m, fields), panels, color_by, legend)


# ----------------------------------------------------------------------------- text


def _text(figure: _Figure) -> str:
    lines = list(figure.header)
    for panel in figure.panels:
        lines.append("")
        if panel.title:
            lines.append(panel.title)
        if not panel.cells:
            continue
        cell_w = max([len(c.text) for row in panel.cells for c in row if c] + [len(l or "") for l in panel.col_labels]
                     + [3])
        label_w = max(len(l or "...") for l in panel.row_labels)

        def line(label: str, items: list[str]) -> str:
            return (label.rjust(label_w) + " " + " ".join(i.rjust(cell_w) for i in items)).rstrip()

        lines.append(line("", [l if l is not None else "..." for l in panel.col_labels]))
        for label, row in zip(panel.row_labels, panel.cells):
            lines.append(line("..." if label is None else label, ["..." if c is None else c.text for c in row]))
    return "\n".join(lines) + "\n"


def _columns_that_fit(m: LayoutMap, fields: Sequence[str], width: int) -> int:
    """How many cell columns a `width`-character terminal line holds (at least 2)."""
    texts = [_cell_text(m, coord, fields) for coord in (m.offsets or m.holders)]
    cell_w = max([len(t) for t in texts] + [3, len(str(m.shape[-1] - 1))])
    _, rows, cols = _grid_shape(m.shape)
    label_w = max(3, len(str(rows * (cols if len(m.shape) == 1 else 1))))
    return max(2, (width - label_w - 1) // (cell_w + 1) - 1)


# ----------------------------------------------------------------------------- images


@dataclass(frozen=True)
class _Metrics:
    char_w: int     # pixels per character
    line_h: int     # pixels per line of header text
    cell_h: int
    pad: int        # space around the text in a cell, and between parts


_SVG_METRICS = _Metrics(char_w=7, line_h=16, cell_h=20, pad=6)
_PNG_SCALE = 2
_PNG_METRICS = _Metrics(char_w=_raster.CHAR_ADVANCE * _PNG_SCALE, line_h=_raster.LINE_ADVANCE * _PNG_SCALE + 4,
                        cell_h=_raster.GLYPH_HEIGHT * _PNG_SCALE + 10, pad=6)


@dataclass
class _Scene:
    """What an image holds, in pixels: filled boxes and lines of text."""
    width: int = 0
    height: int = 0
    boxes: list[tuple[int, int, int, int, tuple[int, int] | None, str]] = field(default_factory=list)
    texts: list[tuple[int, int, str, bool]] = field(default_factory=list)  # (x, top, text, centred)


def _scene(figures: Sequence[_Figure], k: _Metrics) -> _Scene:
    """The figures one below the other."""
    scene = _Scene()
    y = 0
    for figure in figures:
        y = _place(figure, k, scene, y + k.pad)
    scene.height = y + k.pad
    return scene


def _place(figure: _Figure, k: _Metrics, scene: _Scene, y: int) -> int:
    """Adds `figure` to `scene` from height `y` down; returns where it ends."""
    for line in figure.header + [f"colour: {figure.color_by}"]:
        scene.texts.append((k.pad, y, line, False))
        y += k.line_h
    x = k.pad
    swatch = max(len(label) for label, _ in figure.legend) * k.char_w + 2 * k.pad
    for label, color in figure.legend:  # one swatch per colour
        scene.boxes.append((x, y, swatch, k.cell_h, color, ""))
        scene.texts.append((x + swatch // 2, y + (k.cell_h - k.line_h) // 2 + 2, label, True))
        x += swatch
    widest = x
    y += k.cell_h + k.pad
    for panel in figure.panels:
        y += k.pad
        if panel.title:
            scene.texts.append((k.pad, y, panel.title, False))
            y += k.line_h
        if not panel.cells:
            continue
        cell_w = max([len(c.text) for row in panel.cells for c in row if c] + [3]) * k.char_w + 2 * k.pad
        label_w = max(len(l or "...") for l in panel.row_labels) * k.char_w + 2 * k.pad
        for i, label in enumerate(panel.col_labels):
            scene.texts.append((k.pad + label_w + i * cell_w + cell_w // 2, y, "..." if label is None else label, True))
        y += k.line_h
        text_dy = (k.cell_h - k.line_h) // 2 + 2
        for label, row in zip(panel.row_labels, panel.cells):
            scene.texts.append((k.pad + label_w - k.pad - len(label or "...") * k.char_w, y + text_dy,
                                "..." if label is None else label, False))
            for i, cell in enumerate(row):
                left = k.pad + label_w + i * cell_w
                if cell is None:
                    scene.texts.append((left + cell_w // 2, y + text_dy, "...", True))
                    continue
                scene.boxes.append((left, y, cell_w, k.cell_h, cell.color, cell.tooltip))
                scene.texts.append((left + cell_w // 2, y + text_dy, cell.text, True))
            y += k.cell_h
        widest = max(widest, k.pad + label_w + len(panel.col_labels) * cell_w)
    widest = max([widest] + [k.pad + len(line) * k.char_w for line in figure.header])
    scene.width = max(scene.width, widest + k.pad)
    return y + k.pad


def _rgb(color: tuple[int, int] | None) -> tuple[int, int, int]:
    """A light colour for category i of n: hues spread by the golden ratio, so
    neighbouring categories differ clearly."""
    if color is None:
        return (255, 255, 255)
    i, n = color
    hue = (i * 0.6180339887) % 1.0
    lightness = 0.80 if n <= 32 else 0.72 + 0.16 * ((i // 32) % 2)
    r, g, b = colorsys.hls_to_rgb(hue, lightness, 0.65)
    return round(r * 255), round(g * 255), round(b * 255)


def _escape(text: str) -> str:
    """`text` as SVG character data. (xml.sax.saxutils.escape does the same, but importing
    it pulls in urllib and email: a fifth of `import tilec`, for a picture seldom drawn.)"""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _svg(figures: Sequence[_Figure]) -> str:
    k = _SVG_METRICS
    scene = _scene(figures, k)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{scene.width}" height="{scene.height}" '
           f'viewBox="0 0 {scene.width} {scene.height}" font-family="monospace" font-size="11">',
           f'<rect width="{scene.width}" height="{scene.height}" fill="white"/>']
    for x, y, w, h, color, tooltip in scene.boxes:
        fill = "#%02x%02x%02x" % _rgb(color)
        rect = f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" stroke="#888" stroke-width="0.5"'
        out.append(f"{rect}><title>{_escape(tooltip)}</title></rect>" if tooltip else rect + "/>")
    for x, y, text, centred in scene.texts:
        anchor = ' text-anchor="middle"' if centred else ""
        out.append(f'<text x="{x}" y="{y + k.line_h - 4}"{anchor} xml:space="preserve">{_escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _png(figures: Sequence[_Figure]) -> bytes:
    k = _PNG_METRICS
    scene = _scene(figures, k)
    canvas = _raster.Canvas(scene.width, scene.height)
    for x, y, w, h, color, _ in scene.boxes:
        canvas.fill(x, y, w, h, _rgb(color))
        canvas.frame(x, y, w + 1, h + 1, (136, 136, 136))
    top = (k.line_h - _raster.CAP_HEIGHT * _PNG_SCALE) // 2  # capitals centred; descenders hang below
    for x, y, text, centred in scene.texts:
        left = x - _raster.text_width(text, _PNG_SCALE) // 2 if centred else x
        canvas.text(left, y + top, text, scale=_PNG_SCALE)
    return canvas.png()


# ----------------------------------------------------------------------------- entry points


def draw(encoding: AnyEncoding | str | Sequence[AnyEncoding | str], shape: Sequence[int] | str,
         format: str = "text", *, show: Sequence[str] | str | None = None, color_by: str | None = None,
         element_bits: int | None = None, max_rows: int | None = 64, max_cols: int | None = None,
         max_panels: int | None = 4, width: int = 120) -> str | bytes:
    """A picture of `encoding` over a tensor of `shape`: text or SVG (str), PNG (bytes).
    A list of encodings draws each of them, one below the other (the two sides of a
    layout conversion, say).

    show:       the fields each cell gives, from "warp", "lane", "thread" (32 * warp +
                lane), "register" (default: warp, lane, register, leaving out a warp or
                register that is always 0) or, for shared layouts, "offset", "bank",
                "group" (default: offset, bank); a list or "warp,lane".
    color_by:   one field (images); default warp, lane for one-warp layouts, group
                (the 16-byte bank group) for shared layouts.
    element_bits: the element size of shared layouts, for banks (default: an NVMMA
                layout's own, else 16).
    max_rows, max_cols, max_panels: elide beyond these (None: draw everything); text
                fits its columns to `width` characters unless max_cols is given;
                images draw at most 64 columns by default.
    """
    if format not in FORMATS:
        raise ValueError(f"format {format!r}: expected one of {', '.join(FORMATS)}")
    encodings = [encoding] if isinstance(encoding, str) or not isinstance(encoding, (list, tuple)) else encoding
    figures = []
    for one in encodings:
        m = layout_map(one, shape, element_bits)
        fields = _fields(m, show)
        allowed = COLOR_BY[m.kind]
        colors = color_by or ("group" if m.kind == "shared" else "warp" if m.num_warps > 1 else "lane")
        if colors not in allowed:
            raise ValueError(f"color_by {colors!r}: a {m.kind} layout is coloured by one of {', '.join(allowed)}")
        if format == "text":
            cols = max_cols if max_cols is not None else _columns_that_fit(m, fields, width)
        else:
            cols = max_cols if max_cols is not None else 64
        figures.append(_figure(m, fields, colors, max_rows, cols, max_panels, format == "svg"))
    if format == "text":
        return "\n".join(_text(figure) for figure in figures)
    return _svg(figures) if format == "svg" else _png(figures)


def _fields(m: LayoutMap, show: Sequence[str] | str | None) -> tuple[str, ...]:
    if show is None:
        return _default_fields(m)
    fields = tuple(f.strip() for f in (show.split(",") if isinstance(show, str) else show) if f.strip())
    allowed = SHARED_FIELDS if m.kind == "shared" else REGISTER_FIELDS
    wrong = [f for f in fields if f not in allowed]
    if wrong or not fields:
        raise ValueError(f"cannot show {', '.join(wrong) or 'nothing'}: a {m.kind} layout's cells show "
                         f"{', '.join(allowed)}")
    return fields


def format_of_path(path: str) -> str:
    """The picture format a file name asks for: .svg, .png, else text."""
    suffix = os.path.splitext(path)[1].lower()
    return {".svg": "svg", ".png": "png"}.get(suffix, "text")


def save(encoding: AnyEncoding | str, shape: Sequence[int] | str, path: str, **options) -> str:
    """Writes `draw(encoding, shape, format, **options)` to `path`, the format chosen by
    its suffix (.svg, .png; anything else is text). Returns the path."""
    picture = draw(encoding, shape, format_of_path(path), **options)
    with open(path, "wb" if isinstance(picture, bytes) else "w") as f:
        f.write(picture)
    return path
