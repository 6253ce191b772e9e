"""Tensor layout encodings, each a constructor of a `LinearLayout`.

- `BlockedEncoding`: each thread holds `size_per_thread` contiguous elements, lanes
  and then warps tile the tensor along `order` (fastest dimension first); a tensor
  larger than one tile repeats it in registers, a smaller one is replicated.
- `SliceEncoding`: the layout of a tensor produced by removing dimension `dim` of a
  tensor laid out by `parent` (reductions; `expand_dims` reverses it).
- `LinearEncoding`: any layout, given by its linear map's bases (where each register,
  lane and warp bit puts an element); what a shape op (trans, reshape, join, split) makes
  of its operand's layout when no blocked layout says the same (`shape_layouts.py`).
- `DotOperandEncoding`: the layout of an operand of a dot whose result has layout
  `parent`. A blocked parent gives the FMA path's layout (below); a parent that lays out
  its own operands (`MmaEncoding` in `mma.py`, the tensor-core fragments) is asked for it.

Tensor-core layouts live in `mma.py`, shared-memory layouts in `shared.py`.

Output dimensions are named dim0..dim{rank-1}; input dimensions are register, lane,
warp. These classes hold no IR; `tilec.dialects.tilegpu` maps them to attributes.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence, Union

from .linear_layout import LinearLayout

if TYPE_CHECKING:
    from .mma import MmaEncoding

REGISTER, LANE, WARP = "register", "lane", "warp"
THREADS_PER_WARP = 32


def dim_names(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


@dataclass(frozen=True)
class BlockedEncoding:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]

    def __post_init__(self):
        rank = len(self.order)
        if not (len(self.size_per_thread) == len(self.threads_per_warp) == len(self.warps_per_cta) == rank):
            raise ValueError("blocked encoding fields must all have the rank's length")
        if sorted(self.order) != list(range(rank)):
            raise ValueError(f"order {self.order} is not a permutation of 0..{rank - 1}")

    @property
    def rank(self) -> int:
        return len(self.order)

    @property
    def num_warps(self) -> int:
        return math.prod(self.warps_per_cta)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        return _blocked_to_linear(self, tuple(shape))


@dataclass(frozen=True)
class SliceEncoding:
    dim: int
    parent: "Encoding"

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    @property
    def num_warps(self) -> int:
        return self.parent.num_warps

    def parent_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        shape = list(shape)
        shape.insert(self.dim, 1)
        return tuple(shape)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        return _slice_to_linear(self, tuple(shape))


@dataclass(frozen=True)
class DotOperandEncoding:
    """The layout of operand `op_idx` (0: A [M, K], 1: B [K, N]) of a dot whose result has
    layout `parent`: the parent's distribution of M (for A) or N (for B), with the whole
    K dimension in each thread's registers, replicated over the threads that split the
    other result dimension. Each thread then holds every operand element its result
    elements need (the FMA lowering).

    A parent that defines `dot_operand_to_linear(op_idx, k_width, shape)` (the mma
    encodings of `mma.py`) lays its operands out itself; `k_width` is then the number of
    consecutive K elements in one 32-bit operand register (2 for 16-bit types, 1 for
    tf32, 4 for 8-bit types). For any other parent `k_width` must stay 0."""
    op_idx: int
    parent: "Encoding"
    k_width: int = 0

    def __post_init__(self):
        if self.op_idx not in (0, 1):
            raise ValueError(f"dot operand index {self.op_idx} must be 0 (A) or 1 (B)")
        if not hasattr(self.parent, "dot_operand_to_linear") and self.k_width != 0:
            raise ValueError(f"k_width {self.k_width} needs an mma parent; "
                             f"{type(self.parent).__name__} operands take k_width 0")

    @property
    def rank(self) -> int:
        return self.parent.rank

    @property
    def num_warps(self) -> int:
        return self.parent.num_warps

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        return _dot_operand_to_linear(self, tuple(shape))


@dataclass(frozen=True)
class LinearEncoding:
    """A layout given by the bases of its linear map: `register[i]` is the coordinates of
    the element that register bit i selects (lane and warp likewise). A tensor of a
    smaller shape (a broadcast's operand, with dimensions of size 1) takes the same map
    with the coordinates past its size dropped: those bits then select replicas."""
    register: tuple[tuple[int, ...], ...]
    lane: tuple[tuple[int, ...], ...]
    warp: tuple[tuple[int, ...], ...]

    def __post_init__(self):
        ranks = {len(v) for v in self.register + self.lane + self.warp}
        if len(ranks) > 1:
            raise ValueError(f"linear encoding bases of different ranks: {sorted(ranks)}")
        if len(self.lane) != THREADS_PER_WARP.bit_length() - 1:
            raise ValueError(f"a linear encoding needs {THREADS_PER_WARP.bit_length() - 1} lane bases, "
                             f"got {len(self.lane)}")

    @staticmethod
    def of(layout: LinearLayout) -> "LinearEncoding":
        return LinearEncoding(*(tuple(tuple(v) for v in layout.bases(name)) for name in (REGISTER, LANE, WARP)))

    @property
    def rank(self) -> int:
        vectors = self.register + self.lane + self.warp
        return len(vectors[0]) if vectors else 0

    @property
    def num_warps(self) -> int:
        return 1 << len(self.warp)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        return _linear_to_linear(self, tuple(shape))


@functools.lru_cache(maxsize=4096)
def _linear_to_linear(enc: LinearEncoding, shape: tuple[int, ...]) -> LinearLayout:
    if len(shape) != enc.rank:
        raise ValueError(f"linear layout of rank {enc.rank} applied to shape {list(shape)}")
    names = dim_names(len(shape))

    def fit(vectors):
        return [tuple(c & (size - 1) for c, size in zip(v, shape)) for v in vectors]

    layout = LinearLayout({REGISTER: fit(enc.register), LANE: fit(enc.lane), WARP: fit(enc.warp)},
                          {names[d]: shape[d] for d in range(len(shape))})
    if not layout.is_surjective():
        raise ValueError(f"linear layout {enc} does not cover shape {list(shape)}")
    return layout


# MmaEncoding is defined in mma.py (which builds on this module); named here for types.
Encoding = Union[BlockedEncoding, SliceEncoding, DotOperandEncoding, LinearEncoding, "MmaEncoding"]


def default_blocked(shape: Sequence[int], num_warps: int, size_per_thread: Sequence[int] | None = None,
                    order: Sequence[int] | None = None, threads_per_warp: int = THREADS_PER_WARP) -> BlockedEncoding:
    """A blocked layout spreading lanes and warps over `shape`, fastest dimension first.

    Lanes and warps go to each dimension (in `order`, except the slowest) as far as that
    dimension has room; whatever remains goes to the slowest dimension, where it either
    covers more rows or replicates data when the tensor is small.
    """
    rank = len(shape)
    order = tuple(order) if order is not None else tuple(reversed(range(rank)))
    spt = tuple(size_per_thread) if size_per_thread is not None else (1,) * rank
    if len(spt) != rank or sorted(order) != list(range(rank)):
        raise ValueError(f"default_blocked: size_per_thread {list(spt)} and order {list(order)} must match "
                         f"the rank of shape {list(shape)}")
    tpw = [1] * rank
    wpc = [1] * rank
    lanes_left, warps_left, threads_left = threads_per_warp, num_warps, threads_per_warp * num_warps
    lanes_used, warps_used = 1, 1
    for d in order[:-1]:
        threads_here = min(max(threads_left, 1), max(1, shape[d] // spt[d]))
        tpw[d] = min(max(threads_here, 1), lanes_left)
        wpc[d] = min(max(threads_here // tpw[d], 1), warps_left)
        lanes_left //= tpw[d]
        warps_left //= wpc[d]
        threads_left //= max(threads_here, 1)
        lanes_used *= tpw[d]
        warps_used *= wpc[d]
    tpw[order[-1]] = threads_per_warp // lanes_used
    wpc[order[-1]] = num_warps // warps_used
    return BlockedEncoding(spt, tuple(tpw), tuple(wpc), order)


@functools.lru_cache(maxsize=4096)
def _blocked_to_linear(enc: BlockedEncoding, shape: tuple[int, ...]) -> LinearLayout:
    rank = enc.rank
    if len(shape) != rank:
        raise ValueError(f"blocked layout of rank {rank} applied to shape {list(shape)}")
    names = dim_names(rank)
    regs = LinearLayout.empty()
    lanes = LinearLayout.empty()
    warps = LinearLayout.empty()
    for d in enc.order:
        regs = regs * LinearLayout.identity_1d(enc.size_per_thread[d], REGISTER, names[d])
        lanes = lanes * LinearLayout.identity_1d(enc.threads_per_warp[d], LANE, names[d])
        warps = warps * LinearLayout.identity_1d(enc.warps_per_cta[d], WARP, names[d])
    tile = (regs * lanes * warps).transpose_outs(names)
    return fit_to_shape(tile, shape, enc.order)


def fit_to_shape(layout: LinearLayout, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Adapts a layout tile to a tensor shape.

    Where the tensor is smaller than the tile, coordinates past its end are folded to 0:
    registers holding them are dropped, lanes and warps holding them become replicas.
    Where it is larger, the tile repeats in registers (dimensions in `order`).
    """
    names = list(layout.out_dims)
    bases = {name: [list(v) for v in layout.bases(name)] for name in layout.in_dims}
    for d, size in enumerate(shape):
        if layout.out_dim_size(names[d]) > size:
            for vecs in bases.values():
                for v in vecs:
                    if v[d] >= size:
                        v[d] = 0
    if REGISTER in bases:
        bases[REGISTER] = [v for v in bases[REGISTER] if any(v)]
    else:
        bases[REGISTER] = []
    for d in order:
        tile = layout.out_dim_size(names[d])
        repeat = tile
        while repeat < shape[d]:
            v = [0] * len(shape)
            v[d] = repeat
            bases[REGISTER].append(v)
            repeat *= 2
    ordered = {REGISTER: bases.pop(REGISTER)}
    ordered.update(bases)
    for name in (LANE, WARP):
        ordered.setdefault(name, [])
    return LinearLayout(ordered, {names[d]: shape[d] for d in range(len(shape))})


@functools.lru_cache(maxsize=4096)
def _slice_to_linear(enc: SliceEncoding, shape: tuple[int, ...]) -> LinearLayout:
    parent = enc.parent.to_linear(enc.parent_shape(shape))
    names = list(parent.out_dims)
    kept = [n for i, n in enumerate(names) if i != enc.dim]
    projected = parent.sublayout(parent.in_dims, kept).remove_zero_bases(REGISTER)
    # Rename the remaining dims to dim0..dim{rank-1}.
    renamed = {name: [tuple(v) for v in projected.bases(name)] for name in projected.in_dims}
    return LinearLayout(renamed, {f"dim{i}": shape[i] for i in range(len(shape))}) if shape \
        else LinearLayout(renamed, {})


@functools.lru_cache(maxsize=4096)
def _dot_operand_to_linear(enc: DotOperandEncoding, shape: tuple[int, ...]) -> LinearLayout:
    """A [..., M, K] (op 0) or B [..., K, N] (op 1). An mma parent builds its fragments;
    otherwise (FMA): the result layout evaluated with the K position collapsed to size 1
    (so the threads splitting the other result dimension become replicas), then K added
    in registers."""
    if hasattr(enc.parent, "dot_operand_to_linear"):
        return enc.parent.dot_operand_to_linear(enc.op_idx, enc.k_width, shape)
    rank = len(shape)
    if rank < 2:
        raise ValueError("dot operands have rank 2 or more")
    k_dim = rank - 1 if enc.op_idx == 0 else rank - 2
    collapsed = list(shape)
    collapsed[k_dim] = 1
    parent = enc.parent.to_linear(tuple(collapsed))
    bases = {name: list(parent.bases(name)) for name in parent.in_dims}
    registers = [v for v in bases.pop(REGISTER, []) if any(v)]
    k = 1
    while k < shape[k_dim]:
        v = [0] * rank
        v[k_dim] = k
        registers.append(tuple(v))
        k *= 2
    return LinearLayout({REGISTER: registers, **bases}, {f"dim{d}": shape[d] for d in range(rank)})


def to_linear(enc: Encoding, shape: Sequence[int]) -> LinearLayout:
    """The linear layout of `enc` over a tensor of `shape`."""
    return enc.to_linear(tuple(shape))
