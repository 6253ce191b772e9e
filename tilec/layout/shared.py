"""Shared-memory layouts: where each element of a tensor lives in a shared buffer.

A shared layout is a `LinearLayout` from one input dimension, `offset` (the element's
index in the buffer, in elements), to the tensor's coordinates dim0..dim{rank-1}; it is
a bijection, and `offset_layout` gives its inverse (coordinates -> offset). Both
encodings below are one *swizzle* over the two fastest dimensions of `order` (fastest
first): call the fastest the columns and the next the rows. Rows are `row_elements`
wide; element (r, c) of a row sits at column

    ((c // vec) ^ ((r // per_phase) % max_phase)) * vec + c % vec

(the XOR limited to the columns a row has), so `vec` consecutive elements stay together
and rows `per_phase` apart start their vectors at different columns. Offsets run through
a row's columns, then the rows, then (for an NVMMA layout whose tensor is wider than one
swizzle row) the further blocks of columns, then the other dimensions in `order`. Over
GF(2) this is linear: a row bit XORs a fixed column pattern, so offset -> coordinates has
one basis per offset bit.

- `SwizzledSharedEncoding(vec, per_phase, max_phase, order)`: rows as wide as the tensor.
  What `mma.sync` operands are staged in (written by `cp.async`, read by `ldmatrix`);
  `mma_operand_shared_encoding` picks one free of bank conflicts.
- `NVMMASharedEncoding(swizzle_bytes, element_bits, transposed)`: the layouts `wgmma`
  descriptors and TMA use. Rows are `swizzle_bytes` wide (16 bytes with no swizzle),
  16-byte chunks are XORed with the row within groups of 8 rows: 128B: chunk ^= row % 8;
  64B: chunk ^= (row // 2) % 4; 32B: chunk ^= (row // 4) % 2; 0: none. That is the swizzle
  above with vec = 16 bytes, per_phase = 128 / swizzle_bytes, max_phase = swizzle_bytes / 16.

Bank conflicts. Shared memory has 32 banks of 4 bytes: a 128-byte line. `ldmatrix` reads
8x8 matrices of 16-bit elements, each of its 8 rows 16 bytes given by one lane; a phase
of 8 lanes is conflict-free when the 8 row addresses fall in 8 distinct 16-byte bank
groups ((address // 16) % 8). The rows a matrix reads are 8 consecutive rows (r0 a
multiple of 8) at one 16-byte column chunk. With rows of R bytes, take vec = 16 bytes,
per_phase = max(1, 128 / R) (rows sharing one 128-byte line need no XOR: their
positions already differ) and max_phase = max(1, 8 / per_phase). Then for R >= 128,
the group is (chunk ^ r) % 8, distinct over 8 rows; for 16 <= R < 128, with n = R / 16
chunks per row and r = per_phase * a + b (b < per_phase, a < n), the group is
b * n + (chunk ^ a): distinct again. Rows narrower than 16 bytes cannot be read by
`ldmatrix`; they get no swizzle.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence, Union

from .encodings import LANE, REGISTER, WARP, DotOperandEncoding, dim_names
from .linear_layout import LinearLayout
from .mma import MmaEncoding

OFFSET = "offset"
BANK_BYTES = 4
NUM_BANKS = 32
# ldmatrix moves rows of 16 bytes; a bank group is 16 bytes; 8 groups make the 128-byte line.
LDMATRIX_ROW_BYTES = 16
BANK_GROUPS = NUM_BANKS * BANK_BYTES // LDMATRIX_ROW_BYTES


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


def _check_order(order: Sequence[int], rank: int) -> None:
    if sorted(order) != list(range(rank)):
        raise ValueError(f"order {list(order)} is not a permutation of 0..{rank - 1}")


@functools.lru_cache(maxsize=4096)
def _swizzled_to_linear(shape: tuple[int, ...], order: tuple[int, ...], vec: int, per_phase: int, max_phase: int,
                        row_elements: int | None) -> LinearLayout:
    """offset -> coordinates for the swizzle of the module docstring (row_elements None:
    rows as wide as the tensor)."""
    rank = len(shape)
    _check_order(order, rank)
    for size in shape:
        _log2(size)
    names = dim_names(rank)

    def unit(d: int, value: int) -> list[int]:
        v = [0] * rank
        v[d] = value
        return v

    bases: list[list[int]] = []
    col = order[0]
    width = shape[col] if row_elements is None else min(row_elements, shape[col])
    bases += [unit(col, 1 << i) for i in range(_log2(width))]
    rest = list(order[1:])
    if rest:
        row = rest.pop(0)
        phase_bits = _log2(per_phase)
        for i in range(_log2(shape[row])):
            phase = ((1 << i) >> phase_bits) % max_phase
            v = unit(row, 1 << i)
            v[col] = (phase * vec) & (width - 1)
            bases.append(v)
    bases += [unit(col, width << i) for i in range(_log2(shape[col] // width))]
    for d in rest:
        bases += [unit(d, 1 << i) for i in range(_log2(shape[d]))]
    return LinearLayout({OFFSET: bases}, {names[d]: shape[d] for d in range(rank)})


@dataclass(frozen=True)
class SwizzledSharedEncoding:
    """A swizzled shared layout, rows as wide as the tensor; see the module docstring.
    `vec`, `per_phase` and `max_phase` are powers of two; vec 1 and max_phase 1 give a
    plain row-major (in `order`) buffer."""
    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]

    def __post_init__(self):
        object.__setattr__(self, "order", tuple(int(d) for d in self.order))
        for name in ("vec", "per_phase", "max_phase"):
            value = getattr(self, name)
            if value <= 0 or value & (value - 1):
                raise ValueError(f"swizzle {name} {value} must be a power of two")
        _check_order(self.order, len(self.order))

    @property
    def rank(self) -> int:
        return len(self.order)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """offset -> coordinates."""
        shape = tuple(shape)
        if len(shape) != self.rank:
            raise ValueError(f"shared layout of rank {self.rank} applied to shape {list(shape)}")
        return _swizzled_to_linear(shape, self.order, self.vec, self.per_phase, self.max_phase, None)

    def offset_layout(self, shape: Sequence[int]) -> LinearLayout:
        """coordinates -> offset (the inverse of `to_linear`)."""
        return _inverse(self.to_linear(shape))


NVMMA_SWIZZLE_BYTES = (0, 32, 64, 128)


@dataclass(frozen=True)
class NVMMASharedEncoding:
    """The shared layouts of `wgmma` operands and TMA boxes; see the module docstring.

    `transposed` False: the last dimension is contiguous (order [rank-1, rank-2, ...]);
    True: the second-to-last is (order [rank-2, rank-1, ...]); a batch dimension is
    slowest. The contiguous dimension must be at least one swizzle row (`swizzle_bytes`)
    wide; wider tensors continue with further column blocks after all rows."""
    swizzle_bytes: int
    element_bits: int
    transposed: bool = False

    def __post_init__(self):
        if self.swizzle_bytes not in NVMMA_SWIZZLE_BYTES:
            raise ValueError(f"swizzle_bytes {self.swizzle_bytes} must be one of {list(NVMMA_SWIZZLE_BYTES)}")
        if self.element_bits not in (8, 16, 32):
            raise ValueError(f"element_bits {self.element_bits} must be 8, 16 or 32")

    @property
    def vec(self) -> int:
        """Elements per 16-byte chunk."""
        return LDMATRIX_ROW_BYTES * 8 // self.element_bits

    @property
    def per_phase(self) -> int:
        return 128 // self.swizzle_bytes if self.swizzle_bytes else 1

    @property
    def max_phase(self) -> int:
        return self.swizzle_bytes // 16 if self.swizzle_bytes else 1

    @property
    def row_elements(self) -> int:
        """Elements in one swizzle row (a 16-byte core-matrix row when unswizzled)."""
        return max(LDMATRIX_ROW_BYTES, self.swizzle_bytes) * 8 // self.element_bits

    def order(self, rank: int) -> tuple[int, ...]:
        if rank < 2:
            raise ValueError("NVMMA shared layouts have rank 2 or more")
        inner = (rank - 2, rank - 1) if self.transposed else (rank - 1, rank - 2)
        return inner + tuple(reversed(range(rank - 2)))

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """offset -> coordinates."""
        shape = tuple(shape)
        order = self.order(len(shape))
        if shape[order[0]] < self.row_elements:
            raise ValueError(f"the contiguous dimension of {list(shape)} ({shape[order[0]]} elements) is narrower "
                             f"than one {self.swizzle_bytes}-byte swizzle row ({self.row_elements} elements)")
        return _swizzled_to_linear(shape, order, self.vec, self.per_phase, self.max_phase, self.row_elements)

    def offset_layout(self, shape: Sequence[int]) -> LinearLayout:
        """coordinates -> offset (the inverse of `to_linear`)."""
        return _inverse(self.to_linear(shape))


SharedEncoding = Union[SwizzledSharedEncoding, NVMMASharedEncoding]


def transposed_2d(encoding) -> SharedEncoding | None:
    """The layout of a 2-D buffer's bytes seen as the transposed tensor: the contiguous
    dimension and the swizzle stay with the same elements, so the swizzled order flips
    (NVMMA: its `transposed` flag). None for anything but a 2-D shared layout."""
    if isinstance(encoding, NVMMASharedEncoding):
        return NVMMASharedEncoding(encoding.swizzle_bytes, encoding.element_bits, not encoding.transposed)
    if not isinstance(encoding, SwizzledSharedEncoding) or encoding.rank != 2:
        return None
    return SwizzledSharedEncoding(encoding.vec, encoding.per_phase, encoding.max_phase, encoding.order[::-1])


@functools.lru_cache(maxsize=4096)
def _inverse(layout: LinearLayout) -> LinearLayout:
    return layout.invert()


# ----------------------------------------------------------------------------- choosing a swizzle


def mma_operand_shared_encoding(operand: DotOperandEncoding, shape: Sequence[int], order: Sequence[int],
                                element_bits: int) -> SwizzledSharedEncoding:
    """A swizzled layout for staging an mma v2 operand of `shape`, stored in `order`
    (fastest first), from which `ldmatrix` reads free of bank conflicts.

    vec = 16 bytes (4 * k_width elements: one `ldmatrix` row, also one `cp.async`
    16-byte copy), per_phase = max(1, 128 / row bytes), max_phase = max(1, 8 / per_phase),
    where a row is the tensor's extent along order[0]; the module docstring shows that
    every 8x8 matrix `ldmatrix` reads (8 consecutive rows along order[1]) then hits 8
    distinct 16-byte bank groups. That holds for A or B, K-major (`ldmatrix`) or M/N-major
    (`ldmatrix.trans`, 16-bit types only): the rows read are always consecutive rows of
    the buffer at one column chunk.
    """
    parent = operand.parent
    if not isinstance(parent, MmaEncoding):
        raise ValueError(f"mma_operand_shared_encoding needs an mma parent, not {type(parent).__name__}")
    if operand.k_width * element_bits != 32:
        raise ValueError(f"k_width {operand.k_width} does not fill a 32-bit register with {element_bits}-bit "
                         "elements")
    shape, order = tuple(shape), tuple(order)
    if len(shape) != len(order):
        raise ValueError(f"order {list(order)} does not match shape {list(shape)}")
    _check_order(order, len(shape))
    return _spread_rows(shape, order, element_bits)


def _spread_rows(shape: tuple[int, ...], order: tuple[int, ...], element_bits: int) -> SwizzledSharedEncoding:
    """vec = 16 bytes; rows sharing a 128-byte line form a phase (per_phase = 128 / row
    bytes), and 8 / per_phase phases XOR the 16-byte chunks: 8 consecutive rows read or
    written at one chunk fall in 8 distinct bank groups."""
    vec = LDMATRIX_ROW_BYTES * 8 // element_bits
    row_bytes = shape[order[0]] * element_bits // 8
    per_phase = max(1, 128 // row_bytes)
    max_phase = max(1, BANK_GROUPS // per_phase)
    return SwizzledSharedEncoding(vec, per_phase, max_phase, order)


def exchange_shared_encoding(shape: Sequence[int], element_bits: int) -> SwizzledSharedEncoding | None:
    """The layout a tensor of `shape` takes in shared memory while it moves between two
    register layouts (a layout conversion): row-major, last dimension fastest, with the
    chunks of `mma_operand_shared_encoding`'s swizzle. An mma accumulator's thread
    group writes one column of 8 consecutive rows (4 lanes per row); row-major rows of
    128 bytes or more would put all 8 in one bank group, 8 ways of conflict.

    None where a swizzle does not apply: rank 1, an extent that is not a power of two,
    or rows under 32 bytes (two 16-byte chunks: nothing to permute)."""
    shape = tuple(shape)
    if len(shape) < 2 or any(size <= 0 or size & (size - 1) for size in shape) or element_bits % 8:
        return None
    if shape[-1] * element_bits // 8 < 2 * LDMATRIX_ROW_BYTES:
        return None
    return _spread_rows(shape, tuple(reversed(range(len(shape)))), element_bits)


# ----------------------------------------------------------------------------- ldmatrix addresses


def ldmatrix_row_coordinates(operand: LinearLayout, element_bits: int, words: Sequence[int], trans: bool,
                             warp: int = 0) -> list[tuple[int, ...]]:
    """The tensor coordinate of the first element of each 16-byte row an `ldmatrix` loads
    into an operand layout's registers: lane 8 * i + j gives row j of matrix i.

    `words` lists the 32-bit destination registers (1, 2 or 4: `.x1`, `.x2`, `.x4`) by
    their index w, which holds the layout's registers [w * k, (w + 1) * k) with k = 32 /
    element_bits. Without `trans`, row j of matrix i holds what lanes 4j..4j+3 keep in
    word words[i], in order; with `trans` (16-bit only) it holds element (j % 2) of word
    words[i] of the lanes j // 2 + 4 * c, c = 0..7. These are the coordinates the lanes'
    addresses must point at; `ldmatrix_row_offsets` turns them into offsets and checks
    that each row is 16 contiguous bytes.
    """
    per_word = 32 // element_bits
    if trans and element_bits != 16:
        raise ValueError("ldmatrix.trans moves 16-bit elements only")
    if len(words) not in (1, 2, 4):
        raise ValueError(f"ldmatrix loads 1, 2 or 4 matrices, not {len(words)}")
    rows = []
    for w in words:
        for j in range(8):
            if trans:
                coords = operand.apply({REGISTER: w * per_word + j % 2, LANE: j // 2, WARP: warp})
            else:
                coords = operand.apply({REGISTER: w * per_word, LANE: 4 * j, WARP: warp})
            rows.append(coords)
    return rows


def ldmatrix_row_elements(operand: LinearLayout, element_bits: int, word: int, row: int, trans: bool,
                          warp: int = 0) -> list[tuple[int, ...]]:
    """The coordinates of all elements of row `row` of the matrix an `ldmatrix` loads into
    32-bit register `word`, in memory order (see `ldmatrix_row_coordinates`)."""
    per_word = 32 // element_bits
    if trans:
        return [operand.apply({REGISTER: word * per_word + row % 2, LANE: row // 2 + 4 * c, WARP: warp})
                for c in range(8)]
    return [operand.apply({REGISTER: word * per_word + e, LANE: 4 * row + t, WARP: warp})
            for t in range(4) for e in range(per_word)]


def ldmatrix_row_offsets(operand: LinearLayout, shared: SharedEncoding, shape: Sequence[int], element_bits: int,
                         words: Sequence[int], trans: bool, warp: int = 0) -> list[int]:
    """The shared-memory offset (in elements) each lane of an `ldmatrix` passes, for
    loading registers `words` of `operand` from a buffer laid out by `shared`.

    Raises ValueError when a row is not 16 contiguous, 16-byte aligned bytes of the
    buffer (then `ldmatrix` cannot produce this register layout from this buffer).
    """
    to_offset = shared.offset_layout(shape)
    offsets = []
    for i, w in enumerate(words):
        for j in range(8):
            elements = ldmatrix_row_elements(operand, element_bits, w, j, trans, warp)
            at = [to_offset.apply(dict(zip(to_offset.in_dims, c)))[0] for c in elements]
            start = at[0]
            if at != list(range(start, start + len(at))) or (start * element_bits // 8) % LDMATRIX_ROW_BYTES:
                raise ValueError(f"ldmatrix row {j} of word {w} is not 16 contiguous aligned bytes of the "
                                 f"shared buffer (offsets {at})")
            offsets.append(start)
    return offsets


def bank_group(offset: int, element_bits: int) -> int:
    """The 16-byte bank group ((byte address // 16) % 8) of an element offset."""
    return (offset * element_bits // 8 // LDMATRIX_ROW_BYTES) % BANK_GROUPS


# ----------------------------------------------------------------------------- wgmma descriptors

# The descriptor's swizzle field (bits 62-63) by swizzle width in bytes.
WGMMA_SWIZZLE_MODE = {0: 0, 128: 1, 64: 2, 32: 3}


@dataclass(frozen=True)
class WgmmaDescriptorFields:
    """The constant fields of a `wgmma` shared-memory matrix descriptor for one operand
    buffer: byte offsets as the PTX ISA defines them, before the >> 4 of the encoding.

    K-major operands (K contiguous): `stride_byte_offset` separates consecutive groups of
    8 rows along M (or N); `leading_byte_offset` separates consecutive K blocks, one
    16-byte core-matrix column (no swizzle) or one swizzle row wide (unused when one
    instruction's K fits in a swizzle row: then 16, the smallest). M/N-major operands
    with a swizzle: `stride_byte_offset` separates groups of 8 rows along K,
    `leading_byte_offset` blocks one swizzle row wide along M/N; without a swizzle the
    two trade places (`leading_byte_offset` along K, `stride_byte_offset` between 16-byte
    blocks along M/N), which is what the hardware reads (tests/gpu/test_wgmma_fragments.py).
    """
    leading_byte_offset: int
    stride_byte_offset: int
    swizzle_mode: int
    k_major: bool

    def encode(self, address: int) -> int:
        """The 64-bit descriptor of the matrix starting at shared byte `address` (the base
        offset field, bits 49-51, is 0: buffers are aligned to the swizzle's 1024-byte
        repeat)."""
        return (((address & 0x3FFFF) >> 4) | ((self.leading_byte_offset >> 4) & 0x3FFF) << 16
                | ((self.stride_byte_offset >> 4) & 0x3FFF) << 32 | self.swizzle_mode << 62)


def shared_byte_offset(encoding: SharedEncoding, shape: Sequence[int], coords: Sequence[int],
                       element_bits: int) -> int:
    """The byte offset of the element at `coords` in a buffer of `shape` laid out by
    `encoding`."""
    to_offset = encoding.offset_layout(shape)
    (offset,) = to_offset.apply(dict(zip(to_offset.in_dims, coords)))
    return offset * element_bits // 8


def wgmma_descriptor_fields(encoding: NVMMASharedEncoding, shape: Sequence[int], k_axis: int) -> WgmmaDescriptorFields:
    """The descriptor fields of a 2-D operand buffer of `shape` whose reduction dimension
    is `k_axis` (1 for A [M, K], 0 for B [K, N]), read off the layout itself: the byte
    offsets of the elements one 8-row group and one block away from the origin."""
    shape = tuple(shape)
    if len(shape) != 2 or k_axis not in (0, 1):
        raise ValueError(f"wgmma operands are 2-D with K along axis 0 or 1, not shape {list(shape)}, k_axis {k_axis}")
    contiguous = encoding.order(2)[0]
    k_major = contiguous == k_axis
    mn_axis = 1 - k_axis
    bits = encoding.element_bits

    def at(mn: int, k: int) -> int:
        coords = [0, 0]
        coords[mn_axis], coords[k_axis] = mn, k
        if coords[0] >= shape[0] or coords[1] >= shape[1]:
            return 0
        return shared_byte_offset(encoding, shape, coords, bits)

    block = encoding.row_elements  # one swizzle row (or 16-byte core-matrix row) of elements
    if k_major:
        stride, leading = at(8, 0), at(0, block)
    elif encoding.swizzle_bytes:
        stride, leading = at(0, 8), at(block, 0)
    else:  # M/N-major without swizzle: the two offsets trade places (measured on an H100)
        stride, leading = at(block, 0), at(0, 8)
    return WgmmaDescriptorFields(leading or 16, stride or 16, WGMMA_SWIZZLE_MODE[encoding.swizzle_bytes], k_major)


# The descriptor blocks TMA copies (runtime/tma.py encodes maps for these, the language
# emits tile.descriptor_load/store for them): 2-D, of 8-, 16- or 32-bit elements; NaN
# padding only for 16- and 32-bit floats (the fills a tensor map can make).
TMA_RANKS = (2,)
TMA_ELEMENT_BITS = (8, 16, 32)


def tma_copies(rank: int, element_bits: int, padding: str, block_shape: Sequence[int] = ()) -> bool:
    """Whether a descriptor of this rank, element width, padding and block uses TMA. A
    tensor map's box spans at most 256 elements per dimension; only the last dimension
    is split into several copies (`tma_box`), so a wider outer dimension keeps pointers,
    and so does a thin block whose copies would not land 128-byte aligned."""
    block = [int(b) for b in block_shape]
    return (rank in TMA_RANKS and element_bits in TMA_ELEMENT_BITS and (padding != "nan" or element_bits >= 16)
            and all(b <= TMA_MAX_BOX for b in block[:-1]) and _columns_aligned(block, element_bits))


def _columns_aligned(block: list[int], element_bits: int) -> bool:
    """Whether each copy of a block lands 128-byte aligned, as TMA requires: a block whose
    rows span several 128-byte swizzle columns is copied one column block after another,
    each `rows` x 128 bytes, so its rows must come in eights ([1, 1024] uint8 may not)."""
    if not block or block[-1] * element_bits // 8 <= 128:
        return True
    return math.prod(block[:-1]) % 8 == 0


def _swizzle_fits(swizzle: int, row_bytes: int, rows: int) -> bool:
    """Whether a block whose rows are cut into columns `swizzle` bytes wide can use that
    swizzle. TMA swizzles a 16-byte chunk by the address bits above the swizzle row
    (its phase repeats every 8 rows of 128 bytes); the layout swizzles by the row within
    a column block. The two agree for a block that is one column wide, or whose column
    blocks hold a multiple of 8 rows (a [1, 1024] uint8 block does not: unswizzled)."""
    return swizzle == 0 or row_bytes <= swizzle or rows % 8 == 0


# The most elements a tensor map's box spans along one dimension.
TMA_MAX_BOX = 256


def tma_box(block_shape: Sequence[int], element_bits: int) -> tuple[NVMMASharedEncoding, list[int]]:
    """How a TMA copy moves a block of `block_shape` (outermost first): the NVMMA layout
    it lands in (the widest swizzle its rows fill, the last dimension contiguous) and the
    box of one copy, which is the block but for the last dimension, cut to one swizzle
    row (one 16-byte column when unswizzled); the block takes block[-1] / box[-1] copies,
    landing one after another, as the layout's column blocks. The runtime encodes the
    tensor map with the same box and swizzle (runtime/tma.py)."""
    row_bytes = block_shape[-1] * element_bits // 8
    rows = math.prod(block_shape[:-1])
    swizzle = next(s for s in (128, 64, 32, 0) if s <= row_bytes and _swizzle_fits(s, row_bytes, rows))
    encoding = NVMMASharedEncoding(swizzle, element_bits, False)
    return encoding, list(block_shape[:-1]) + [min(block_shape[-1], encoding.row_elements)]
