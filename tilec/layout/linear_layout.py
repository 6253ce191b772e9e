"""Linear layouts: the one algebra under every tensor layout.

A linear layout is a map from the bits of some named *input* dimensions (register,
lane, warp) to coordinates of named *output* dimensions (the tensor's dims), linear
over GF(2): the image of an input is the XOR of the images ("bases") of its set bits.

    L(r, l, w) = XOR_i [bit i of r] * B_register[i]
               ^ XOR_i [bit i of l] * B_lane[i]
               ^ XOR_i [bit i of w] * B_warp[i]

Every size is a power of two. A basis vector is a tuple with one coordinate per output
dimension. A zero basis means that input bit does not move the element: the data is
duplicated (broadcast) along that bit.

Blocked, slice, mma and shared layouts are constructors producing one of these (see
`encodings.py`); the lowering asks its questions — which elements a thread owns, how
many are contiguous, which lanes a reduction combines, whether a conversion is free —
of this class alone. The idea follows Triton's LinearLayout; this is an independent,
small implementation over Python ints.
"""
from __future__ import annotations

import functools
from typing import Iterable, Mapping, Sequence

Basis = tuple[int, ...]


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


class LinearLayout:
    """Immutable linear map; see the module docstring."""

    __slots__ = ("_bases", "_out_dims", "_hash")

    def __init__(self, bases: Mapping[str, Sequence[Sequence[int]]], out_dims: Mapping[str, int]):
        self._out_dims: tuple[tuple[str, int], ...] = tuple((name, int(size)) for name, size in out_dims.items())
        for name, size in self._out_dims:
            _log2(size)
        n_out = len(self._out_dims)
        normalized: list[tuple[str, tuple[Basis, ...]]] = []
        for name, vectors in bases.items():
            vecs = tuple(tuple(int(c) for c in v) for v in vectors)
            for v in vecs:
                if len(v) != n_out:
                    raise ValueError(f"basis {v} of {name!r} has {len(v)} coordinates; expected {n_out}")
                for c, (out_name, size) in zip(v, self._out_dims):
                    if not 0 <= c < size:
                        raise ValueError(f"basis {v} of {name!r}: coordinate {c} outside {out_name} of size {size}")
            normalized.append((name, vecs))
        self._bases: tuple[tuple[str, tuple[Basis, ...]], ...] = tuple(normalized)
        self._hash = hash((self._bases, self._out_dims))

    # ------------------------------------------------------------------ constructors
    @staticmethod
    def empty() -> "LinearLayout":
        return LinearLayout({}, {})

    @staticmethod
    def identity_1d(size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """in_dim -> out_dim, x -> x, over `size` elements."""
        return LinearLayout({in_dim: [(1 << i,) for i in range(_log2(size))]}, {out_dim: size})

    @staticmethod
    def zeros_1d(size: int, in_dim: str, out_dim: str, out_size: int = 1) -> "LinearLayout":
        """in_dim (of `size`) -> always 0 in out_dim: every input holds the same element."""
        return LinearLayout({in_dim: [(0,)] * _log2(size)}, {out_dim: out_size})

    # ------------------------------------------------------------------ shape
    @property
    def in_dims(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self._bases)

    @property
    def out_dims(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self._out_dims)

    @property
    def out_dim_sizes(self) -> dict[str, int]:
        return dict(self._out_dims)

    def bases(self, in_dim: str) -> tuple[Basis, ...]:
        for name, vecs in self._bases:
            if name == in_dim:
                return vecs
        return ()

    def all_bases(self) -> dict[str, tuple[Basis, ...]]:
        return dict(self._bases)

    def in_dim_size(self, in_dim: str) -> int:
        return 1 << len(self.bases(in_dim))

    def in_dim_bits(self, in_dim: str) -> int:
        return len(self.bases(in_dim))

    def out_dim_size(self, out_dim: str) -> int:
        return dict(self._out_dims)[out_dim]

    def total_in_size(self) -> int:
        return 1 << sum(len(v) for _, v in self._bases)

    def total_out_size(self) -> int:
        size = 1
        for _, s in self._out_dims:
            size *= s
        return size

    # ------------------------------------------------------------------ evaluation
    def apply(self, inputs: Mapping[str, int]) -> tuple[int, ...]:
        """The output coordinates of `inputs` (missing input dims are 0)."""
        out = [0] * len(self._out_dims)
        used = 0
        for name, vecs in self._bases:
            value = inputs.get(name, 0)
            if name in inputs:
                used += 1
            if not value:
                continue
            if value >> len(vecs):
                raise ValueError(f"input {name}={value} exceeds its size {1 << len(vecs)}")
            if len(vecs) <= _TABLE_BITS:  # the lowering's common case: one lookup
                for d, c in enumerate(_images(self, name)[value]):
                    out[d] ^= c
                continue
            i = 0
            while value:
                if value & 1:
                    for d, c in enumerate(vecs[i]):
                        out[d] ^= c
                value >>= 1
                i += 1
        if used != len(inputs):
            unknown = set(inputs) - set(self.in_dims)
            raise ValueError(f"unknown input dimension(s) {sorted(unknown)}; this layout has {list(self.in_dims)}")
        return tuple(out)

    # Flattened views over the bits of all outputs: the first out dim is least significant.
    def _out_shifts(self) -> list[int]:
        shifts, at = [], 0
        for _, size in self._out_dims:
            shifts.append(at)
            at += _log2(size)
        return shifts

    def _flat(self, vec: Basis) -> int:
        value = 0
        for c, s in zip(vec, self._out_shifts()):
            value |= c << s
        return value

    def _unflat(self, value: int) -> Basis:
        out = []
        for (_, size), s in zip(self._out_dims, self._out_shifts()):
            out.append((value >> s) & (size - 1))
        return tuple(out)

    # ------------------------------------------------------------------ algebra
    def __mul__(self, other: "LinearLayout") -> "LinearLayout":
        """Direct product: `other` occupies the higher bits of shared dimensions.

        Input dims present in both get self's bases first, then other's; output dims
        present in both multiply in size, with other's coordinates shifted above self's.
        """
        out_dims: dict[str, int] = dict(self._out_dims)
        for name, size in other._out_dims:
            out_dims[name] = out_dims.get(name, 1) * size
        names = list(out_dims)

        def lift(layout: "LinearLayout", vec: Basis, shift_by_self: bool) -> Basis:
            coords = dict(zip(layout.out_dims, vec))
            result = []
            for name in names:
                c = coords.get(name, 0)
                if shift_by_self:
                    c *= self.out_dim_sizes.get(name, 1)
                result.append(c)
            return tuple(result)

        bases: dict[str, list[Basis]] = {}
        for name, vecs in self._bases:
            bases.setdefault(name, []).extend(lift(self, v, False) for v in vecs)
        for name, vecs in other._bases:
            bases.setdefault(name, []).extend(lift(other, v, True) for v in vecs)
        return LinearLayout(bases, out_dims)

    def compose(self, outer: "LinearLayout") -> "LinearLayout":
        """outer ∘ self: self maps A -> B, outer maps B -> C; the result maps A -> C."""
        if set(self.out_dims) != set(outer.in_dims):
            raise ValueError(f"cannot compose: outputs {self.out_dims} are not the inputs {outer.in_dims}")
        for name in self.out_dims:
            if self.out_dim_size(name) > outer.in_dim_size(name):
                raise ValueError(f"cannot compose: {name} of size {self.out_dim_size(name)} exceeds "
                                 f"{outer.in_dim_size(name)}")
        bases = {name: [outer.apply(dict(zip(self.out_dims, v))) for v in vecs] for name, vecs in self._bases}
        return LinearLayout(bases, dict(outer._out_dims))

    def transpose_outs(self, order: Sequence[str]) -> "LinearLayout":
        """Reorders the output dimensions (no change to the map)."""
        if sorted(order) != sorted(self.out_dims):
            raise ValueError(f"{order} is not a permutation of {self.out_dims}")
        index = [self.out_dims.index(name) for name in order]
        bases = {name: [tuple(v[i] for i in index) for v in vecs] for name, vecs in self._bases}
        return LinearLayout(bases, {name: self.out_dim_size(name) for name in order})

    def transpose_ins(self, order: Sequence[str]) -> "LinearLayout":
        if sorted(order) != sorted(self.in_dims):
            raise ValueError(f"{order} is not a permutation of {self.in_dims}")
        return LinearLayout({name: self.bases(name) for name in order}, dict(self._out_dims))

    def flatten_outs(self, name: str = "offset") -> "LinearLayout":
        """One output dimension; the first out dim is the least significant."""
        bases = {n: [(self._flat(v),) for v in vecs] for n, vecs in self._bases}
        return LinearLayout(bases, {name: self.total_out_size()})

    def reshape_outs(self, out_dims: Mapping[str, int]) -> "LinearLayout":
        """Reinterprets the flattened output bits as new output dims (first least significant)."""
        total = 1
        for size in out_dims.values():
            total *= size
        if total != self.total_out_size():
            raise ValueError(f"cannot reshape {self.total_out_size()} outputs into {dict(out_dims)}")
        target = LinearLayout({}, out_dims)
        bases = {n: [target._unflat(self._flat(v)) for v in vecs] for n, vecs in self._bases}
        return LinearLayout(bases, out_dims)

    def sublayout(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> "LinearLayout":
        """Restriction to some inputs, projected onto some outputs."""
        in_dims, out_dims = list(in_dims), list(out_dims)
        index = [self.out_dims.index(n) for n in out_dims]
        bases = {n: [tuple(v[i] for i in index) for v in self.bases(n)] for n in in_dims if n in self.in_dims}
        return LinearLayout(bases, {n: self.out_dim_size(n) for n in out_dims})

    def with_bases(self, in_dim: str, vectors: Sequence[Basis]) -> "LinearLayout":
        bases = dict(self._bases)
        bases[in_dim] = tuple(tuple(v) for v in vectors)
        return LinearLayout(bases, dict(self._out_dims))

    def remove_zero_bases(self, in_dim: str) -> "LinearLayout":
        """Drops zero bases of `in_dim` (used for registers: duplicates are not stored)."""
        return self.with_bases(in_dim, [v for v in self.bases(in_dim) if any(v)])

    # ------------------------------------------------------------------ properties
    def _flat_bases(self) -> list[int]:
        return [self._flat(v) for _, vecs in self._bases for v in vecs]

    def rank(self) -> int:
        """Dimension of the image over GF(2)."""
        return len(_row_reduce(self._flat_bases()))

    def is_surjective(self) -> bool:
        return self.rank() == sum(_log2(s) for _, s in self._out_dims)

    def is_injective(self) -> bool:
        return self.rank() == sum(len(v) for _, v in self._bases)

    def is_invertible(self) -> bool:
        return self.is_surjective() and self.is_injective()

    def free_variable_masks(self) -> dict[str, int]:
        """Per input dim, the bits whose flipping never changes the output (duplicates).

        A bit is free when its basis is a combination of *earlier* bases (in the order
        registers, lanes, warps), so exactly one representative of each element stays.
        """
        masks: dict[str, int] = {}
        pivots: list[int] = []
        for name, vecs in self._bases:
            mask = 0
            for i, v in enumerate(vecs):
                reduced = _reduce_against(self._flat(v), pivots)
                if reduced == 0:
                    mask |= 1 << i
                else:
                    pivots = _insert_pivot(pivots, reduced)
            masks[name] = mask
        return masks

    def invert(self) -> "LinearLayout":
        """The inverse map (outputs -> inputs); the layout must be bijective."""
        if not self.is_invertible():
            raise ValueError("layout is not invertible")
        return self._pseudo_inverse()

    def _pseudo_inverse(self) -> "LinearLayout":
        """A map from outputs to inputs: for each output bit, an input whose image it is
        (zero when that bit alone is not in the image)."""
        rows = self._elimination_rows()
        bases: dict[str, list[Basis]] = {}
        for name, size in self._out_dims:
            shift = self._out_shifts()[self.out_dims.index(name)]
            vecs = []
            for b in range(_log2(size)):
                combo = _solve(rows, 1 << (shift + b))
                vecs.append(_combo_to_inputs(combo, self._bases) if combo is not None
                            else (0,) * len(self._bases))
            bases[name] = vecs
        return LinearLayout(bases, {name: 1 << len(vecs) for name, vecs in self._bases})

    def invert_and_compose(self, outer: "LinearLayout") -> "LinearLayout":
        """A map X with outer(X(a)) == self(a), where self: A -> C and outer: B -> C.

        Used to express one layout's inputs in terms of another's (for conversions).
        Every output self reaches must be reachable through outer (outer need not be
        surjective); among several preimages, one is chosen.
        """
        if set(self.out_dims) != set(outer.out_dims):
            raise ValueError("layouts must have the same output dimensions")
        for name in self.out_dims:
            if self.out_dim_size(name) > outer.out_dim_size(name):
                raise ValueError(f"output {name} of size {self.out_dim_size(name)} exceeds outer's "
                                 f"{outer.out_dim_size(name)}")
        aligned = LinearLayout({n: self.bases(n) for n in self.in_dims},
                               {name: outer.out_dim_size(name) for name in self.out_dims}).transpose_outs(outer.out_dims)
        rows = outer._elimination_rows()
        bases: dict[str, list[Basis]] = {}
        for name, vecs in aligned._bases:
            out = []
            for v in vecs:
                combo = _solve(rows, outer._flat(v))
                if combo is None:
                    raise ValueError("invert_and_compose: outer does not reach every output of self")
                out.append(_combo_to_inputs(combo, outer._bases))
            bases[name] = out
        return LinearLayout(bases, {name: 1 << len(vecs) for name, vecs in outer._bases})

    def _elimination_rows(self) -> list[tuple[int, int]]:
        """Row-reduced (image, input combination) pairs spanning this layout's image."""
        in_shifts, at = {}, 0
        for name, vecs in self._bases:
            in_shifts[name] = at
            at += len(vecs)
        rows: list[tuple[int, int]] = []
        for name, vecs in self._bases:
            for i, v in enumerate(vecs):
                image, combo = self._flat(v), 1 << (in_shifts[name] + i)
                for r_img, r_combo in rows:
                    if image & _top_bit(r_img):
                        image ^= r_img
                        combo ^= r_combo
                if image:
                    rows.append((image, combo))
                    rows.sort(key=lambda r: -r[0])
        return _fully_reduce(rows)

    def images(self, in_dim: str) -> tuple[tuple[int, ...], ...]:
        """The output of every value of `in_dim` (the other inputs 0), in order: the
        coordinates register 0, 1, 2, ... holds for in_dim "register". Computed once per
        layout and input dim; the lowering asks for the same tables many times."""
        return _images(self, in_dim)

    # ------------------------------------------------------------------ identity
    def __eq__(self, other) -> bool:
        return isinstance(other, LinearLayout) and self._bases == other._bases and self._out_dims == other._out_dims

    def __hash__(self) -> int:
        return self._hash

    def equivalent(self, other: "LinearLayout") -> bool:
        """The same map, ignoring empty input dims, outputs of size 1 and the order of dims."""
        def canon(layout):
            outs = sorted(n for n, s in layout._out_dims if s > 1)
            keep = layout.sublayout([n for n, v in layout._bases if v], outs)
            return tuple(sorted(keep._bases)), keep._out_dims
        return canon(self) == canon(other)

    def __repr__(self) -> str:
        ins = ", ".join(f"{name}: {list(list(v) for v in vecs)}" for name, vecs in self._bases)
        outs = ", ".join(f"{name}={size}" for name, size in self._out_dims)
        return f"LinearLayout({{{ins}}} -> [{outs}])"


# ----------------------------------------------------------------------------- GF(2) helpers


def _top_bit(x: int) -> int:
    return 1 << (x.bit_length() - 1)


def _reduce_against(value: int, pivots: list[int]) -> int:
    for p in pivots:
        if value & _top_bit(p):
            value ^= p
    return value


def _insert_pivot(pivots: list[int], value: int) -> list[int]:
    return sorted(pivots + [value], reverse=True)


def _row_reduce(vectors: Iterable[int]) -> list[int]:
    """An echelon basis of the span of `vectors`."""
    pivots: list[int] = []
    for v in vectors:
        v = _reduce_against(v, pivots)
        if v:
            pivots = _insert_pivot(pivots, v)
    return pivots


def _fully_reduce(rows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    rows = sorted(rows, key=lambda r: -r[0])
    for i in range(len(rows)):
        top = _top_bit(rows[i][0])
        for j in range(len(rows)):
            if j != i and rows[j][0] & top:
                rows[j] = (rows[j][0] ^ rows[i][0], rows[j][1] ^ rows[i][1])
    return rows


def _solve(rows: list[tuple[int, int]], target: int) -> int | None:
    """A combination of inputs whose image is `target`, or None if unreachable."""
    combo = 0
    value = target
    for image, c in rows:
        if value & _top_bit(image):
            value ^= image
            combo ^= c
    return combo if value == 0 else None


def _combo_to_inputs(combo: int, bases) -> Basis:
    coords = []
    at = 0
    for _, vecs in bases:
        n = len(vecs)
        coords.append((combo >> at) & ((1 << n) - 1))
        at += n
    return tuple(coords)


# Input dims of at most this many bits are evaluated by table (see `images`).
_TABLE_BITS = 10


@functools.lru_cache(maxsize=1024)
def _images(layout: LinearLayout, in_dim: str) -> tuple[tuple[int, ...], ...]:
    # Values 2^i .. 2^(i+1)-1 are those below 2^i with bit i set: their images are the
    # earlier ones XOR basis vector i.
    vecs = layout.bases(in_dim)
    images = [(0,) * len(layout.out_dims)]
    for basis in vecs:
        images += [tuple(a ^ b for a, b in zip(image, basis)) for image in images]
    return tuple(images)
