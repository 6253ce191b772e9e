"""The shared-memory layout of a layout conversion: where each element sits in the scratch
space while it moves from one register layout to another.

Every thread stores the elements its source layout gives it, a barrier, every thread loads
the elements its result layout gives it. How many instructions that takes, and how many
shared-memory cycles each costs, depends only on the scratch layout S: a bijection from
the tensor's coordinates to element offsets, linear over GF(2) like the register layouts
(a thread's element is its register part XOR its lane/warp part, so its offset is
S(register part) XOR S(thread part)). We work on coordinates flattened row-major (the
last dimension in the low bits), so that a layout's basis vectors and S's columns are
plain integers.

**Vectors.** A thread moves 2^k elements with one access when offset bits 0..k-1 are
images of its own registers (S maps k register bases to offsets 1, 2, 4, ...) and its
lane/warp part never sets those bits (the access stays aligned). For the same k on both
sides, the k coordinate vectors must lie in both layouts' register spans: the
intersection V of the two spans, as much of it as 16 bytes allow and as stays clear of
every thread basis. An mma accumulator (pairs of columns, rows 8 apart) converted into a
blocked layout with rows in registers shares rows 8 and 64 of a 128-row tile: 4 f32
elements per access on both sides, where a row-major buffer gives the accumulator
pairs and the blocked layout single elements.

**Banks.** Shared memory serves 128 bytes (32 banks of 4 bytes) per cycle. An access of
2^v bytes per lane runs in phases of 128 / 2^v lanes (at most 32): a phase is free of
conflicts when its lanes reach distinct banks, i.e. when the offset bits [k, b) (b: the
bits of 128 bytes) tell its lanes apart. Write Y_src = V + the source phase's lane
vectors, Y_dst likewise, and R for the offset columns from bit b up ("rows"); the
lanes of a phase are told apart exactly when Y ∩ span(V, R) = 0. So R must be a common
complement of Y_src and Y_dst, which exists for two subspaces of one dimension: pair a
basis a_i of Y_src off their intersection with one d_i of Y_dst, take the sums
a_i ^ d_i, and complete with vectors outside Y_src + Y_dst. The bank columns [k, b) are
whatever completes the basis (the source's lanes first). Last, every column outside V
drops its V component (it was free: it changes no bank property), which puts every
thread basis in their span and keeps the vectors aligned.

This is the idea of Triton's "optimal swizzling" for convert_layout (the linear-layouts
paper), in our own construction. `choose_exchange` also weighs the plain row-major
buffer and the swizzled row-major one (`exchange_shared_encoding`), in which each side
vectorizes on its own (a row-major buffer lets a side whose registers run along the last
dimension write whole rows even when the other side reads single elements), by counting
instructions and bank cycles of one warp (`exchange_cost`), and keeps the cheapest.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from .encodings import LANE, REGISTER, WARP
from .linear_layout import LinearLayout
from .shared import exchange_shared_encoding

# The widest shared-memory access: 16 bytes (ld/st.shared.v4.b32).
MAX_ACCESS_BYTES = 16
# Bytes the 32 banks serve in one cycle.
BANK_LINE_BYTES = 128
BANK_WORD_BYTES = 4
BANKS = 32


# ----------------------------------------------------------------------------- GF(2) spans


class Span:
    """A subspace of GF(2)^n given by an echelon basis, keyed by each pivot's top bit."""

    def __init__(self, vectors: Iterable[int] = ()):
        self._pivots: dict[int, int] = {}
        for v in vectors:
            self.add(v)

    def reduce(self, v: int) -> int:
        while v:
            top = v.bit_length() - 1
            pivot = self._pivots.get(top)
            if pivot is None:
                return v
            v ^= pivot
        return 0

    def add(self, v: int) -> bool:
        """Adds `v`; False when it was already in the span."""
        v = self.reduce(v)
        if not v:
            return False
        self._pivots[v.bit_length() - 1] = v
        return True

    def __contains__(self, v: int) -> bool:
        return self.reduce(v) == 0

    def __len__(self) -> int:
        return len(self._pivots)

    def copy(self) -> "Span":
        span = Span()
        span._pivots = dict(self._pivots)
        return span


def _independent(vectors: Iterable[int], span: Span | None = None) -> list[int]:
    """The vectors, in order, each kept when independent of `span` and the ones kept."""
    span = Span() if span is None else span.copy()
    return [v for v in vectors if span.add(v)]


def _intersection(a: Sequence[int], b: Sequence[int], bits: int) -> list[int]:
    """A basis of span(a) ∩ span(b) (Zassenhaus: reduce the rows (x, x) for x in a and
    (y, 0) for y in b on their left half; rows left with a zero left half span it)."""
    rows = Span([(x << bits) | x for x in a] + [y << bits for y in b])
    return [row for row in rows._pivots.values() if row >> bits == 0]


def _solve(columns: Sequence[int], target: int) -> int:
    """The coefficients (a bit per column) that combine the independent `columns` into
    `target`, which their span must contain."""
    rows: dict[int, tuple[int, int]] = {}  # top bit -> (vector, combination)
    for i, column in enumerate(columns):
        v, combo = column, 1 << i
        while v:
            top = v.bit_length() - 1
            if top not in rows:
                rows[top] = (v, combo)
                break
            v, combo = v ^ rows[top][0], combo ^ rows[top][1]
    result, v = 0, target
    while v:
        top = v.bit_length() - 1
        if top not in rows:
            raise ValueError(f"{target:#x} is outside the span of the columns")
        v, result = v ^ rows[top][0], result ^ rows[top][1]
    return result


# ----------------------------------------------------------------------------- flattening


def _flat(coords: Sequence[int], shape: Sequence[int]) -> int:
    """The row-major index of `coords`: for power-of-two extents, their bits side by side."""
    index = 0
    for c, size in zip(coords, shape):
        index = index * size + c
    return index


def _flat_bases(layout: LinearLayout, in_dim: str, shape: Sequence[int]) -> list[int]:
    return [_flat(v, shape) for v in layout.bases(in_dim)] if in_dim in layout.in_dims else []


def offsets_from_columns(columns: Sequence[int], shape: Sequence[int]) -> LinearLayout:
    """The layout coordinates -> offset of the buffer whose offset bit j holds the flat
    coordinate vector columns[j]."""
    bases = {}
    at = sum(int(math.log2(size)) for size in shape)
    for d, size in enumerate(shape):
        bits = int(math.log2(size))
        at -= bits
        bases[f"dim{d}"] = [[_solve(columns, 1 << (at + b))] for b in range(bits)]
    return LinearLayout(bases, {"offset": math.prod(shape)})


def _flat_offsets(offsets: LinearLayout, shape: Sequence[int]) -> list[int]:
    """S as a list: the offset of each flat coordinate bit (lowest first)."""
    out = []
    for d in reversed(range(len(shape))):
        out += [basis[0] for basis in offsets.bases(f"dim{d}")]
    return out


def _apply(flat_offsets: Sequence[int], v: int) -> int:
    result, bit = 0, 0
    while v:
        if v & 1:
            result ^= flat_offsets[bit]
        v >>= 1
        bit += 1
    return result


# ----------------------------------------------------------------------------- cost


@dataclass(frozen=True)
class SideCost:
    """One side of an exchange (the stores or the loads) in one warp."""
    vector: int        # elements per access
    instructions: int  # accesses per thread
    wavefronts: int    # shared-memory cycles of the warp's accesses, conflicts included
    addresses: int     # distinct thread-dependent address values (each an xor, a multiply, an add)

    @property
    def total(self) -> int:
        return self.instructions + self.wavefronts + self.addresses


def vector_width(layout: LinearLayout, offsets: LinearLayout, shape: Sequence[int], element_bytes: int) -> int:
    """The elements one access of a thread holding `layout` moves in the buffer `offsets`:
    2^k where offset bits 0..k-1 are images of its registers and no lane or warp basis
    sets them (at most 16 bytes)."""
    flat_offsets = _flat_offsets(offsets, shape)
    registers = Span(_flat_bases(layout, REGISTER, shape))
    thread_offsets = [_apply(flat_offsets, v) for v in _flat_bases(layout, LANE, shape) + _flat_bases(layout, WARP, shape)]
    # The flat coordinate at offset 1, 2, 4, ...: solving S's columns (one per coordinate
    # bit) for an offset gives the coordinate's bits.
    columns = [_solve(flat_offsets, 1 << j) for j in range(len(flat_offsets))]
    total_bits = len(flat_offsets)
    k = 0
    while ((element_bytes << (k + 1)) <= MAX_ACCESS_BYTES and k < total_bits and columns[k] in registers
           and not any(o & (1 << k) for o in thread_offsets)):
        k += 1
    return 1 << k


def side_cost(layout: LinearLayout, offsets: LinearLayout, shape: Sequence[int], element_bytes: int,
              registers: Sequence[int] | None = None) -> SideCost:
    """Accesses and bank cycles of warp 0 moving `layout`'s elements to or from the
    buffer `offsets` with the widest vectors it allows (`registers`: the ones touched;
    default all). A cycle serves one word per bank; lanes reading or writing the same
    word share it."""
    vector = vector_width(layout, offsets, shape, element_bytes)
    flat_offsets = _flat_offsets(offsets, shape)
    reg_images = layout.images(REGISTER)
    lane_images = layout.images(LANE) if LANE in layout.in_dims else [(0,) * len(shape)]
    lanes = [_apply(flat_offsets, _flat(c, shape)) for c in lane_images]
    thread_bits = 0
    for v in _flat_bases(layout, LANE, shape) + _flat_bases(layout, WARP, shape):
        thread_bits |= _apply(flat_offsets, v)
    groups = sorted({_apply(flat_offsets, _flat(reg_images[r], shape)) // vector
                     for r in (range(len(reg_images)) if registers is None else registers)})
    access_bytes = vector * element_bytes
    wavefronts = 0
    for group in groups:
        words_per_bank: dict[int, set[int]] = {}
        for lane in lanes:
            start = ((group * vector) ^ lane) * element_bytes
            for word in range(start // BANK_WORD_BYTES, (start + access_bytes - 1) // BANK_WORD_BYTES + 1):
                words_per_bank.setdefault(word % BANKS, set()).add(word)
        wavefronts += max(len(words) for words in words_per_bank.values())
    addresses = len({(group * vector) & thread_bits for group in groups})
    return SideCost(vector, len(groups), wavefronts, addresses)


def exchange_cost(src: LinearLayout, dst: LinearLayout, offsets: LinearLayout, shape: Sequence[int],
                  element_bytes: int, src_registers: Sequence[int] | None = None) -> tuple[SideCost, SideCost]:
    return (side_cost(src, offsets, shape, element_bytes, src_registers),
            side_cost(dst, offsets, shape, element_bytes))


def _total(cost: tuple[SideCost, SideCost]) -> int:
    return sum(side.total for side in cost)


# ----------------------------------------------------------------------------- the layout


def swizzled_offsets(src: LinearLayout, dst: LinearLayout, shape: Sequence[int], element_bytes: int) -> LinearLayout:
    """The scratch layout built for the pair (see the module docstring)."""
    shape = list(shape)
    bits = sum(int(math.log2(size)) for size in shape)
    src_regs, dst_regs = _flat_bases(src, REGISTER, shape), _flat_bases(dst, REGISTER, shape)
    src_lanes, dst_lanes = _flat_bases(src, LANE, shape), _flat_bases(dst, LANE, shape)
    threads = Span(src_lanes + dst_lanes + _flat_bases(src, WARP, shape) + _flat_bases(dst, WARP, shape))

    # V: shared register vectors, the source's order first, clear of every thread basis.
    dst_span = Span(dst_regs)
    candidates = [v for v in src_regs if v and v in dst_span] + _intersection(src_regs, dst_regs, bits)
    max_vector = max(0, int(math.log2(MAX_ACCESS_BYTES // element_bytes)))
    vector: list[int] = []
    clear = threads.copy()
    for v in candidates:
        if len(vector) == max_vector:
            break
        if clear.add(v):
            vector.append(v)
    k = len(vector)

    # R: a common complement of V + each side's first phase of lanes.
    line_bits = int(math.log2(BANK_LINE_BYTES // element_bytes))  # b: offset bits of a 128-byte line
    access_bits = int(math.log2(element_bytes)) + k
    phase_lanes = min(5, 7 - max(2, access_bits))
    src_phase = _independent(src_lanes[:phase_lanes], Span(vector))
    dst_phase = _independent(dst_lanes[:phase_lanes], Span(vector))
    preferred = _independent(_flat_bases(src, WARP, shape) + _flat_bases(dst, WARP, shape)
                             + src_lanes[phase_lanes:] + dst_lanes[phase_lanes:] + [1 << b for b in range(bits)])
    rows = _common_complement(vector + src_phase, vector + dst_phase, preferred, bits)
    rows = rows[:max(0, bits - line_bits)]
    banks = _independent(src_lanes + dst_lanes + [1 << b for b in range(bits)], Span(vector + rows))

    # Drop each non-vector column's V component: the columns then span the threads too.
    complement = _independent(list(threads._pivots.values()) + [1 << b for b in range(bits)], Span(vector))
    basis = vector + complement

    def without_vector(c: int) -> int:
        combo = _solve(basis, c)
        for i in range(k):
            if combo >> i & 1:
                c ^= vector[i]
        return c

    columns = vector + [without_vector(c) for c in banks + rows]
    return offsets_from_columns(columns, shape)


def _common_complement(a: list[int], d: list[int], preferred: list[int], bits: int) -> list[int]:
    """Independent vectors R with span(R) ∩ span(a) = span(R) ∩ span(d) = 0 completing
    span(a) + span(d) (plus the pairing sums) to the whole space: the pairing sums first,
    then `preferred` vectors in order."""
    both = Span(_intersection(a, d, bits))
    a_rest = _independent(a, both)
    d_rest = _independent(d, both)
    union = Span(a + d)
    # Pad the shorter list with vectors outside span(a) + span(d): avoiding a larger
    # space is avoiding the smaller one too.
    for v in preferred:
        if len(a_rest) == len(d_rest):
            break
        if union.add(v):
            (a_rest if len(a_rest) < len(d_rest) else d_rest).append(v)
    rows = [x ^ y for x, y in zip(a_rest, d_rest)]
    whole = Span(list(union._pivots.values()) + rows)
    rows += [v for v in preferred if whole.add(v)]
    return rows


@dataclass(frozen=True)
class ExchangePlan:
    offsets: LinearLayout  # coordinates -> element offset in the scratch space
    src: SideCost
    dst: SideCost
    name: str              # which candidate: "swizzled", "row-major swizzled", "row-major"


@functools.lru_cache(maxsize=512)
def choose_exchange(src: LinearLayout, dst: LinearLayout, shape: tuple[int, ...], element_bytes: int,
                    src_registers: tuple[int, ...] | None = None) -> ExchangePlan | None:
    """The cheapest scratch layout for converting `src` to `dst` (see the module
    docstring), or None where the tensor's extents are not powers of two."""
    if any(size <= 0 or size & (size - 1) for size in shape):
        return None
    candidates = [("swizzled", swizzled_offsets(src, dst, shape, element_bytes))]
    encoding = exchange_shared_encoding(shape, 8 * element_bytes)
    if encoding is not None:
        candidates.append(("row-major swizzled", encoding.offset_layout(shape)))
    candidates.append(("row-major", row_major_offsets(shape)))
    best = None
    for name, offsets in candidates:
        cost = exchange_cost(src, dst, offsets, shape, element_bytes, src_registers)
        if best is None or _total(cost) < _total((best.src, best.dst)):
            best = ExchangePlan(offsets, cost[0], cost[1], name)
    return best


def row_major_offsets(shape: Sequence[int]) -> LinearLayout:
    bits = sum(int(math.log2(size)) for size in shape)
    return offsets_from_columns([1 << b for b in range(bits)], shape)


__all__ = ["ExchangePlan", "SideCost", "choose_exchange", "exchange_cost", "row_major_offsets", "side_cost",
           "swizzled_offsets", "vector_width"]
