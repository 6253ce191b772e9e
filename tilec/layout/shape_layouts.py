"""Layouts through the shape ops (trans, reshape, join, split), kept in registers.

A shape op moves no data when its result takes the layout its operand's layout becomes
under the op: each thread then already holds the elements its result needs, and the op
is a renumbering of its registers. For linear layouts that layout is always at hand —
the op relabels the coordinates bit by bit (a transpose permutes the output dimensions,
a row-major reshape regroups their bits, a join adds a dimension of size 2 held in
registers, a split removes one that is) — except for a split whose halves lie in
different threads.

`result_layouts` gives those layouts; `register_sources` checks that a result layout
lets each thread find its elements in its own registers and says where; `encoding_of`
writes a layout as a blocked encoding when one says the same (the readable form), as a
linear encoding otherwise.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .encodings import (LANE, REGISTER, WARP, BlockedEncoding, Encoding, LinearEncoding, dim_names,
                        to_linear)
from .linear_layout import LinearLayout

Coords = tuple[int, ...]
# A result element's coordinates -> (which operand holds it, its coordinates there).
SourceMap = Callable[[Coords], tuple[int, Coords]]


def _renamed(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """`layout`'s map with its outputs named dim0.. over `shape` (same number of dims)."""
    names = dim_names(len(shape))
    return LinearLayout({name: list(layout.bases(name)) for name in layout.in_dims},
                        {names[d]: shape[d] for d in range(len(shape))})


def trans_layout(layout: LinearLayout, order: Sequence[int]) -> LinearLayout:
    """Result dimension i is operand dimension order[i]."""
    names = list(layout.out_dims)
    moved = layout.transpose_outs([names[d] for d in order])
    return _renamed(moved, [moved.out_dim_size(n) for n in moved.out_dims])


def reshape_layout(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """The same elements in row-major order, regrouped into `shape` (powers of two)."""
    names = list(layout.out_dims)
    flat = layout.transpose_outs(list(reversed(names))).flatten_outs()   # last dim least significant
    new_names = dim_names(len(shape))
    regrouped = flat.reshape_outs({new_names[d]: shape[d] for d in reversed(range(len(shape)))})
    return regrouped.transpose_outs(new_names)


def join_layout(layout: LinearLayout) -> LinearLayout:
    """A new last dimension of size 2 whose bit is the first register bit: each thread
    holds both operands' elements side by side."""
    shape = [layout.out_dim_size(n) for n in layout.out_dims] + [2]
    widen = lambda vectors: [tuple(v) + (0,) for v in vectors]  # noqa: E731
    bases = {name: widen(layout.bases(name)) for name in layout.in_dims}
    bases[REGISTER] = [(0,) * (len(shape) - 1) + (1,)] + bases.get(REGISTER, [])
    names = dim_names(len(shape))
    return LinearLayout(bases, {names[d]: shape[d] for d in range(len(shape))})


def split_layout(layout: LinearLayout) -> LinearLayout | None:
    """The operand's layout without its last dimension (of size 2), when that dimension
    is one register bit; None when its halves lie in different threads."""
    rank = len(layout.out_dims)
    last = (0,) * (rank - 1) + (1,)
    registers = list(layout.bases(REGISTER))
    if last not in registers:
        return None
    registers.remove(last)
    bases = {name: registers if name == REGISTER else list(layout.bases(name)) for name in layout.in_dims}
    if any(v[-1] for vectors in bases.values() for v in vectors):
        return None   # another bit also moves along the last dimension
    names = dim_names(rank - 1)
    return LinearLayout({name: [tuple(v[:-1]) for v in vectors] for name, vectors in bases.items()},
                        {names[d]: layout.out_dim_size(f"dim{d}") for d in range(rank - 1)})


def result_layouts(op_name: str, operand: LinearLayout, result_shape: Sequence[int],
                   order: Sequence[int] = ()) -> list[LinearLayout] | None:
    """The register-only layouts of a shape op's results given its (first) operand's
    layout, or None when the op must move data between threads."""
    if op_name == "tile.trans":
        return [trans_layout(operand, order)]
    if op_name == "tile.reshape":
        return [reshape_layout(operand, result_shape)]
    if op_name == "tile.join":
        return [join_layout(operand)]
    if op_name == "tile.split":
        half = split_layout(operand)
        return None if half is None else [half, half]
    return None


def source_map(op_name: str, operand_shape: Sequence[int], result_shape: Sequence[int],
               order: Sequence[int] = (), result: int = 0) -> SourceMap:
    """Where result `result`'s element at given coordinates comes from."""
    if op_name == "tile.trans":
        def from_trans(c: Coords) -> tuple[int, Coords]:
            src = [0] * len(order)
            for i, d in enumerate(order):
                src[d] = c[i]
            return 0, tuple(src)
        return from_trans
    if op_name == "tile.reshape":
        def from_reshape(c: Coords) -> tuple[int, Coords]:
            index = 0
            for value, size in zip(c, result_shape):
                index = index * size + value
            src = []
            for size in reversed(operand_shape):
                src.append(index % size)
                index //= size
            return 0, tuple(reversed(src))
        return from_reshape
    if op_name == "tile.join":
        return lambda c: (c[-1], tuple(c[:-1]))
    if op_name == "tile.split":
        return lambda c: (0, tuple(c) + (result,))
    raise ValueError(f"{op_name} is not a shape op")


def register_sources(result: LinearLayout, operands: Sequence[LinearLayout],
                     source: SourceMap) -> list[tuple[int, int]] | None:
    """For each register of `result`: (operand, register) of the same thread holding its
    element; None when some element lies in another thread.

    Every map involved is linear, so checking the lane and warp bits one by one suffices:
    each must select, in the operand, the same thread bit (and operand 0 of a join, whose
    operand bit lives in registers)."""
    base_operand, base = source((0,) * len(result.out_dims))   # the map is affine: take its linear part
    for name in (LANE, WARP):
        theirs = operands[0].bases(name) if name in operands[0].in_dims else ()
        mine = result.bases(name) if name in result.in_dims else ()
        if len(mine) != len(theirs) or any(tuple(o.bases(name)) != tuple(theirs) for o in operands[1:]):
            return None
        for vector, expected in zip(mine, theirs):
            operand, coords = source(tuple(vector))
            if operand != base_operand or tuple(a ^ b for a, b in zip(coords, base)) != tuple(expected):
                return None
    zero = {name: 0 for name in result.in_dims}
    tables = []
    for layout in operands:
        table: dict[Coords, int] = {}
        others = {name: 0 for name in layout.in_dims}
        for r in range(layout.in_dim_size(REGISTER)):
            table.setdefault(tuple(layout.apply({**others, REGISTER: r})), r)
        tables.append(table)
    found = []
    for r in range(result.in_dim_size(REGISTER)):
        coords = result.apply({**zero, REGISTER: r})
        operand, src = source(tuple(coords))
        register = tables[operand].get(src) if operand < len(tables) else None
        if register is None:
            return None
        found.append((operand, register))
    return found


def encoding_of(layout: LinearLayout, shape: Sequence[int], candidates: Sequence[Encoding] = ()) -> Encoding:
    """The first candidate encoding whose layout over `shape` is `layout`, else `layout`
    as a linear encoding."""
    for candidate in candidates:
        try:
            if to_linear(candidate, shape) == layout:
                return candidate
        except ValueError:
            continue
    return LinearEncoding.of(layout)


def blocked_candidates(op_name: str, operand: Encoding, order: Sequence[int] = ()) -> list[BlockedEncoding]:
    """Blocked encodings that may say what `result_layouts` computes for a blocked
    operand (checked by `encoding_of`): the fields permuted (trans), a size-2 dimension
    added in registers (join) or removed (split)."""
    if not isinstance(operand, BlockedEncoding):
        return []
    spt, tpw, wpc, fast = (operand.size_per_thread, operand.threads_per_warp, operand.warps_per_cta,
                           operand.order)
    rank = operand.rank
    if op_name == "tile.trans":
        where = {d: i for i, d in enumerate(order)}
        return [BlockedEncoding(tuple(spt[d] for d in order), tuple(tpw[d] for d in order),
                                tuple(wpc[d] for d in order), tuple(where[d] for d in fast))]
    if op_name == "tile.join":
        return [BlockedEncoding(spt + (2,), tpw + (1,), wpc + (1,), (rank,) + fast)]
    if op_name == "tile.split" and rank > 1:
        return [BlockedEncoding(spt[:-1], tpw[:-1], wpc[:-1], tuple(d for d in fast if d != rank - 1))]
    return []


def infer_encodings(op_name: str, operand: Encoding, operand_shape: Sequence[int], result_shape: Sequence[int],
                    num_warps: int, order: Sequence[int] = ()) -> list[Encoding] | None:
    """The encodings of a shape op's results that keep it in registers given its operand's
    encoding (blocked where a blocked encoding says the same), or None."""
    from .encodings import default_blocked
    layouts = result_layouts(op_name, to_linear(operand, operand_shape), result_shape, order)
    if layouts is None:
        return None
    candidates = blocked_candidates(op_name, operand, order) + [default_blocked(list(result_shape), num_warps)]
    return [encoding_of(layout, result_shape, candidates) for layout in layouts]
