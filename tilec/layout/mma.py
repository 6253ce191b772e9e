"""Tensor-core layouts: the register fragments of `mma.sync` (mma version 2, sm_80+).

`MmaEncoding` is the layout of a dot's accumulator C/D, and `DotOperandEncoding(op_idx,
MmaEncoding, k_width)` (in `encodings.py`, built here) the layout of its operands A and B,
each exactly as `mma.sync.aligned.m16n8k{8,16,32}` holds them. Everything is a
`LinearLayout` from (register, lane, warp) to tensor coordinates; below, `g` is a lane's
group (lane // 4) and `t` its index in the group (lane % 4), as in the PTX ISA.

One instruction (m16 n8, K = 8 * k_width):

  C [16, 8]   register bits: col+1, row+8
              lane bits:     col+2, col+4, row+1, row+2, row+4
              (c0,c1 at (g, 2t+{0,1}); c2,c3 at (g+8, 2t+{0,1}))
  A [16, K]   register bits: col+1, .., col+k_width/2 (the k_width elements of one
              32-bit register), row+8, col+4*k_width
              lane bits:     col+k_width, col+2*k_width, row+1, row+2, row+4
  B [K, 8]    register bits: row+1, .., row+k_width/2, row+4*k_width
              lane bits:     row+k_width, row+2*k_width, col+1, col+2, col+4

so the register index of one instruction's fragment *is* the PTX element index: a0..a7 /
b0..b3 for f16 and bf16 (k_width 2, m16n8k16), a0..a3 / b0..b1 for tf32 (k_width 1,
m16n8k8), a0..a15 / b0..b7 for 8-bit types (k_width 4, m16n8k32), and one 32-bit operand
register holds the k_width registers [w * k_width, (w + 1) * k_width).

Warps tile the tensor by `warps_per_cta`, N fastest, then M, then the batch dimension:
warp id = w_n + W_n * (w_m + W_m * w_batch). A warp that splits N holds a replica of A
(its A warp bits are zero), one that splits M a replica of B.

A tensor larger than the warps' tile repeats it in registers, above the instruction's
bits, in this order (fastest first):

  C: N repeats, then M repeats, then batch   register = c + 4 * (n + REP_N * (m + REP_M * bt))
  A: K repeats, then M repeats, then batch   register = a + 4*k_width * (k + REP_K * (m + REP_M * bt))
  B: K repeats, then N repeats, then batch   register = b + 2*k_width * (k + REP_K * (n + REP_N * bt))

(c, a, b: the instruction's own register index; 4, 4*k_width and 2*k_width registers per
instruction). So the lowering's loop `for bt, m, n, k: mma(A tile (m, k), B tile (k, n),
C tile (m, n))` finds each tile at a fixed register offset, and B's N repeats run in the
same order as C's. A tensor smaller than the warps' tile is handled as `fit_to_shape`
does for blocked layouts: coordinates past its end fold to 0, their registers are
dropped (the formulas above then count only the registers that remain) and their lanes
and warps become replicas.

Version 3 (`wgmma.mma_async.m64nNk*`, sm_90a) runs on a warpgroup: 4 consecutive warps,
each holding 16 of its 64 rows. `instr_shape` is (64, N) for one instruction, N a
multiple of 8 up to 256. Per warp the accumulator fragment is mma.sync's C tile repeated
N / 8 times along the columns, registers in the PTX order d0 .. d{N/2 - 1}:

  C [16, N] (per warp)  register bits: col+1, row+8, col+8, col+16, .., col+N/2
                        lane bits:     col+2, col+4, row+1, row+2, row+4

(d_i at row 16 * (warp % 4) + g + 8 * ((i // 2) % 2), column 8 * (i // 4) + 2t + i % 2).
Warps go along M first (the warpgroup's rows 0, 16, 32, 48, then further warpgroups along
M, 64 rows apart), then along N, one instruction's N apart: warp id = w_m + W_m * w_n.
Instruction tiles beyond the warps' repeat as for version 2 (N fastest, then M), so
each instruction's registers are contiguous: register = d + N/2 * (n + REP_N * m).
Operand A from registers has mma.sync's A fragment per warp (f16/bf16: k_width 2, one
m16n8k16 A tile per 16 columns of K), with the same warp order, replicated over the
warps along N; operand B is read from shared memory by the instruction (no register
layout). Rank 2 only (a batched dot stays on version 2).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

from .encodings import LANE, REGISTER, WARP, dim_names, fit_to_shape
from .linear_layout import LinearLayout

# mma.sync's instruction tile: M rows by N columns; K = 8 * k_width.
MMA_V2_INSTR_SHAPE = (16, 8)
# wgmma: a warpgroup of 4 warps computes 64 rows; N is a multiple of 8 up to 256.
WARPGROUP_WARPS = 4
WGMMA_M = 64
WGMMA_MAX_N = 256
# Elements of one operand per 32-bit register, by element width in bits.
_K_WIDTH_BY_BITS = {8: 4, 16: 2, 32: 1}


def mma_v2_k_width(element_bits: int) -> int:
    """k_width of an mma v2 operand of `element_bits`-bit elements: how many consecutive
    K elements fill one 32-bit register (4 for 8-bit types, 2 for f16/bf16, 1 for tf32)."""
    if element_bits not in _K_WIDTH_BY_BITS:
        raise ValueError(f"mma.sync has no operands of {element_bits}-bit elements")
    return _K_WIDTH_BY_BITS[element_bits]


def mma_v2_instr_k(k_width: int) -> int:
    """The K of one mma.sync instruction: 8 (tf32, m16n8k8), 16 (f16/bf16, m16n8k16) or
    32 (8-bit, m16n8k32)."""
    _check_k_width(k_width)
    return 8 * k_width


def _check_k_width(k_width: int) -> None:
    if k_width not in _K_WIDTH_BY_BITS.values():
        raise ValueError(f"k_width {k_width} must be 1 (tf32), 2 (16-bit) or 4 (8-bit) for mma v2")


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


@dataclass(frozen=True)
class MmaEncoding:
    """The accumulator layout of `mma.sync` (version 2); see the module docstring.

    `warps_per_cta` has one entry per tensor dimension (rank 2: [M, N]; rank 3: a leading
    batch dimension). `instr_shape` is the (M, N) of one instruction."""
    version: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, int] = MMA_V2_INSTR_SHAPE

    def __post_init__(self):
        object.__setattr__(self, "warps_per_cta", tuple(int(w) for w in self.warps_per_cta))
        object.__setattr__(self, "instr_shape", tuple(int(s) for s in self.instr_shape))
        if self.version not in (2, 3):
            raise ValueError(f"mma version {self.version} is not supported (2: mma.sync, 3: wgmma)")
        if self.version == 2 and tuple(self.instr_shape) != MMA_V2_INSTR_SHAPE:
            raise ValueError(f"mma v2 instruction shape is {list(MMA_V2_INSTR_SHAPE)}, not {list(self.instr_shape)}")
        if self.version == 3:
            m, n = self.instr_shape
            if m != WGMMA_M or n % 8 or not 8 <= n <= WGMMA_MAX_N:
                raise ValueError(f"mma v3 instruction shape must be [64, N] with N a multiple of 8 up to "
                                 f"{WGMMA_MAX_N}, not {list(self.instr_shape)}")
            if len(self.warps_per_cta) != 2 or self.warps_per_cta[0] % WARPGROUP_WARPS:
                raise ValueError(f"mma v3 warps_per_cta {list(self.warps_per_cta)} must be [M, N] with M a "
                                 f"multiple of {WARPGROUP_WARPS} (whole warpgroups along M)")
        if len(self.warps_per_cta) not in (2, 3):
            raise ValueError(f"mma warps_per_cta {list(self.warps_per_cta)} must have rank 2 or 3")
        for w in self.warps_per_cta:
            _log2(w)
        if self.version == 3:
            _log2(self.instr_shape[1])

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def num_warps(self) -> int:
        return math.prod(self.warps_per_cta)

    @property
    def warp_order(self) -> tuple[int, ...]:
        """Dimensions fastest first in the warp id: N, then M, then batch (version 2); M,
        then N (version 3: a warpgroup's 4 warps are consecutive along M)."""
        if self.version == 3:
            return (0, 1)
        return tuple(reversed(range(self.rank)))

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """The accumulator layout over a [..., M, N] tensor."""
        return _accumulator_to_linear(self, tuple(shape))

    def dot_operand_to_linear(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """The layout of operand A ([..., M, K], op_idx 0) or B ([..., K, N], op_idx 1)."""
        return _operand_to_linear(self, op_idx, k_width, tuple(shape))


# ----------------------------------------------------------------------------- one instruction
# Each tile is (register bases, lane bases) over (row, col) of the 2-D instruction tile.
Tile2D = tuple[list[tuple[int, int]], list[tuple[int, int]]]


def _accumulator_tile(n: int = MMA_V2_INSTR_SHAPE[1]) -> Tile2D:
    """The accumulator of one warp: mma.sync's [16, 8] C tile, repeated along N in
    registers for a wider (wgmma) instruction."""
    registers = [(0, 1), (8, 0)] + [(0, 8 << i) for i in range(_log2(n // 8))]
    lanes = [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)]
    return registers, lanes


def _operand_a_tile(k_width: int) -> Tile2D:
    """A [16, 8 * k_width]: lane (g, t) holds rows g and g+8, columns
    k_width*t + [0, k_width) and the same plus 4*k_width."""
    registers = [(0, 1 << i) for i in range(_log2(k_width))] + [(8, 0), (0, 4 * k_width)]
    lanes = [(0, k_width), (0, 2 * k_width), (1, 0), (2, 0), (4, 0)]
    return registers, lanes


def _operand_b_tile(k_width: int) -> Tile2D:
    """B [8 * k_width, 8]: lane (g, t) holds column g, rows k_width*t + [0, k_width) and
    the same plus 4*k_width."""
    registers = [(1 << i, 0) for i in range(_log2(k_width))] + [(4 * k_width, 0)]
    lanes = [(k_width, 0), (2 * k_width, 0), (0, 1), (0, 2), (0, 4)]
    return registers, lanes


def _lift(vec2d: tuple[int, int], rank: int) -> tuple[int, ...]:
    """A (row, col) basis of the instruction tile as a basis of a rank-`rank` tensor."""
    return (0,) * (rank - 2) + tuple(vec2d)


def _warp_bases(enc: MmaEncoding, tile: Sequence[int], replicated_dim: int | None) -> list[tuple[int, ...]]:
    """Warp bases in `enc.warp_order`: warps along dim d step by the tile's extent in d;
    those along `replicated_dim` hold replicas (zero bases)."""
    bases = []
    for d in enc.warp_order:
        for i in range(_log2(enc.warps_per_cta[d])):
            v = [0] * enc.rank
            if d != replicated_dim:
                v[d] = tile[d] << i
            bases.append(tuple(v))
    return bases


def _build(enc: MmaEncoding, instr: Tile2D, instr_extent: tuple[int, int], replicated_dim: int | None,
           shape: tuple[int, ...], repeat_order: Sequence[int]) -> LinearLayout:
    rank = enc.rank
    if len(shape) != rank:
        raise ValueError(f"mma layout of rank {rank} applied to shape {list(shape)}")
    registers, lanes = instr
    tile = [1] * (rank - 2) + list(instr_extent)
    warps = _warp_bases(enc, tile, replicated_dim)
    cta_tile = [tile[d] * (1 if d == replicated_dim else enc.warps_per_cta[d]) for d in range(rank)]
    names = dim_names(rank)
    layout = LinearLayout({REGISTER: [_lift(v, rank) for v in registers],
                           LANE: [_lift(v, rank) for v in lanes],
                           WARP: warps},
                          {names[d]: cta_tile[d] for d in range(rank)})
    return fit_to_shape(layout, shape, repeat_order)


@functools.lru_cache(maxsize=4096)
def _accumulator_to_linear(enc: MmaEncoding, shape: tuple[int, ...]) -> LinearLayout:
    rank = enc.rank
    # Repeats: N fastest, then M, then batch.
    if enc.version == 3:  # one warp's share of an instruction: 16 rows, all its N columns
        n = enc.instr_shape[1]
        return _build(enc, _accumulator_tile(n), (MMA_V2_INSTR_SHAPE[0], n), None, shape, (1, 0))
    return _build(enc, _accumulator_tile(), MMA_V2_INSTR_SHAPE, None, shape, tuple(reversed(range(rank))))


@functools.lru_cache(maxsize=4096)
def _operand_to_linear(enc: MmaEncoding, op_idx: int, k_width: int, shape: tuple[int, ...]) -> LinearLayout:
    _check_k_width(k_width)
    rank = enc.rank
    m_dim, n_dim = rank - 2, rank - 1
    batch = list(reversed(range(rank - 2)))
    instr_k = mma_v2_instr_k(k_width)
    if op_idx == 0:
        # A [.., M, K]: K repeats, then M, then batch; replicated over the warps along N.
        return _build(enc, _operand_a_tile(k_width), (MMA_V2_INSTR_SHAPE[0], instr_k), n_dim, shape,
                      [n_dim, m_dim] + batch)
    if op_idx == 1 and enc.version == 3:
        raise ValueError("wgmma reads operand B from shared memory: it has no register layout")
    if op_idx == 1:
        # B [.., K, N]: K repeats, then N, then batch; replicated over the warps along M.
        return _build(enc, _operand_b_tile(k_width), (instr_k, MMA_V2_INSTR_SHAPE[1]), m_dim, shape,
                      [m_dim, n_dim] + batch)
    raise ValueError(f"dot operand index {op_idx} must be 0 (A) or 1 (B)")


# ----------------------------------------------------------------------------- choosing warps


def mma_v3_warps_per_cta(shape: Sequence[int], num_warps: int) -> tuple[int, int] | None:
    """`warps_per_cta` for a wgmma accumulator of `shape` [M, N], or None when `num_warps`
    has no whole warpgroup (fewer than 4). Warpgroups go along M while M has 64 rows for
    each, then along N."""
    if len(shape) != 2 or num_warps < WARPGROUP_WARPS:
        return None
    _log2(num_warps)
    m = shape[0]
    wm, wn = WARPGROUP_WARPS, 1
    while wm * wn < num_warps:
        if m >= WGMMA_M * (wm // WARPGROUP_WARPS) * 2:
            wm *= 2
        else:
            wn *= 2
    return wm, wn


def wgmma_instr_k(element_bits: int) -> int:
    """The K of one wgmma instruction: 32 bytes of each operand row (k16 for 16-bit
    types, k32 for 8-bit, k8 for tf32)."""
    if element_bits not in _K_WIDTH_BY_BITS:
        raise ValueError(f"wgmma has no operands of {element_bits}-bit elements")
    return 256 // element_bits


def mma_v3_instr_n(n: int, warps_n: int) -> int | None:
    """The N of one wgmma instruction for a tile N columns wide split over `warps_n`
    warpgroups: each warpgroup's share, capped at 256 (a wider share takes several
    instructions); None when a share is narrower than 8 columns."""
    share = n // warps_n
    if share < 8:
        return None
    return min(share, WGMMA_MAX_N)


def mma_warps_per_cta(shape: Sequence[int], num_warps: int) -> tuple[int, ...]:
    """`warps_per_cta` for an mma accumulator of `shape` ([M, N] or [B, M, N]).

    A batch dimension takes warps first, as far as it has room (batches share no operand
    data, so splitting them costs nothing). The rest go, one doubling at a time, to M or
    N: to M while each warp's share of M, counted in 16-row instruction tiles, is at least
    its share of N counted in 8-column instruction tiles and M still has a tile per warp;
    otherwise to N. Ties go to M ([2, 2] for 128x128 with 4 warps); a tile with fewer
    16-row than 8-column steps splits N first ([1, 4] for 32x64 and 64x128, as Triton
    3.6 does: B, read with byte loads where it is an 8-bit N-major operand, is then
    split four ways and read once per warp instead of twice). Warps beyond what both
    dimensions can use go to N, where they hold replicas.
    """
    rank = len(shape)
    if rank not in (2, 3):
        raise ValueError(f"mma accumulators have rank 2 or 3, not {rank} ({list(shape)})")
    _log2(num_warps)
    left = num_warps
    batch_warps = 1
    if rank == 3:
        while batch_warps * 2 <= left and batch_warps * 2 <= shape[0]:
            batch_warps *= 2
        left //= batch_warps
    m, n = shape[-2], shape[-1]
    instr_m, instr_n = MMA_V2_INSTR_SHAPE
    wm = wn = 1
    while wm * wn < left:
        m_share = m // (instr_m * wm)
        n_share = n // (instr_n * wn)
        m_has_room = instr_m * wm < m
        if m_has_room and m_share >= n_share:
            wm *= 2
        else:
            wn *= 2
    return ((batch_warps,) if rank == 3 else ()) + (wm, wn)
