"""Unit tests of tilec.layout.linear_layout.LinearLayout (pure Python, no IR, no GPU).

Expected values come from the GF(2) definition in the module docstring, evaluated here
by brute force (enumerating inputs, XOR-ing bases, enumerating spans), not from the
library's own elimination routines.
"""
from __future__ import annotations

import itertools
import random

import pytest

from tilec.layout.linear_layout import LinearLayout

R, L, W = "register", "lane", "warp"


# ----------------------------------------------------------------------------- helpers


def log2(n: int) -> int:
    assert n > 0 and n & (n - 1) == 0
    return n.bit_length() - 1


def all_inputs(layout: LinearLayout):
    """Every input assignment {dim: value} of `layout`."""
    dims = layout.in_dims
    ranges = [range(layout.in_dim_size(d)) for d in dims]
    for values in itertools.product(*ranges):
        yield dict(zip(dims, values))


def ref_apply(layout: LinearLayout, inputs) -> tuple[int, ...]:
    """XOR of the bases of the set bits (the definition), independent of `apply`."""
    out = [0] * len(layout.out_dims)
    for dim, vecs in layout.all_bases().items():
        value = inputs.get(dim, 0)
        for i, vec in enumerate(vecs):
            if (value >> i) & 1:
                out = [a ^ b for a, b in zip(out, vec)]
    return tuple(out)


def image(layout: LinearLayout) -> set[tuple[int, ...]]:
    return {ref_apply(layout, a) for a in all_inputs(layout)}


def span(vectors) -> set[int]:
    """The GF(2) span of ints, by closure (no elimination)."""
    result = {0}
    for v in vectors:
        result |= {x ^ v for x in result}
    return result


def gf2_rank(vectors) -> int:
    return log2(len(span(vectors)))


def flat(coords, sizes) -> int:
    """Mixed radix, first dimension least significant."""
    value, scale = 0, 1
    for c, s in zip(coords, sizes):
        value += c * scale
        scale *= s
    return value


def unflat(value, sizes) -> tuple[int, ...]:
    out = []
    for s in sizes:
        out.append(value % s)
        value //= s
    return tuple(out)


def layout_from_columns(in_spec, out_spec, columns) -> LinearLayout:
    """in_spec [(name, bits)], out_spec [(name, size)]; columns: one flat image per input bit."""
    sizes = [s for _, s in out_spec]
    it = iter(columns)
    bases = {name: [unflat(next(it), sizes) for _ in range(bits)] for name, bits in in_spec}
    return LinearLayout(bases, dict(out_spec))


def random_layout(rng: random.Random, in_spec, out_spec) -> LinearLayout:
    """Arbitrary bases (possibly zero, repeated, dependent)."""
    total = 1
    for _, s in out_spec:
        total *= s
    return layout_from_columns(in_spec, out_spec, [rng.randrange(total) for _ in range(sum(b for _, b in in_spec))])


def random_invertible(rng: random.Random, in_spec, out_spec) -> LinearLayout:
    n = sum(b for _, b in in_spec)
    total = 1
    for _, s in out_spec:
        total *= s
    assert total == 1 << n
    while True:
        cols = [rng.randrange(1 << n) for _ in range(n)]
        if gf2_rank(cols) == n:
            return layout_from_columns(in_spec, out_spec, cols)


def split_bits(rng: random.Random, names, n_bits):
    """Distributes n_bits over `names` at random (some may get 0)."""
    counts = [0] * len(names)
    for _ in range(n_bits):
        counts[rng.randrange(len(names))] += 1
    return list(zip(names, counts))


def random_invertible_case(seed: int) -> LinearLayout:
    rng = random.Random(seed)
    n = rng.randint(1, 8)
    in_spec = split_bits(rng, [R, L, W], n)
    out_spec = [(name, 1 << b) for name, b in split_bits(rng, ["dim0", "dim1"], n)]
    return random_invertible(rng, in_spec, out_spec)


# ----------------------------------------------------------------------------- construction


class TestConstruction:
    def test_bases_are_normalized_to_int_tuples(self):
        lay = LinearLayout({R: [[1, 0], [0, 2]]}, {"dim0": 2, "dim1": 4})
        assert lay.bases(R) == ((1, 0), (0, 2))
        assert all(isinstance(v, tuple) for v in lay.bases(R))
        assert lay.in_dims == (R,)
        assert lay.out_dims == ("dim0", "dim1")
        assert lay.out_dim_sizes == {"dim0": 2, "dim1": 4}

    @pytest.mark.parametrize("size", [0, 3, 6, 12, -4])
    def test_out_size_must_be_power_of_two(self, size):
        with pytest.raises(ValueError, match="power of two"):
            LinearLayout({}, {"dim0": size})

    def test_basis_with_wrong_number_of_coordinates(self):
        with pytest.raises(ValueError, match="coordinates"):
            LinearLayout({R: [(1,)]}, {"dim0": 2, "dim1": 2})
        with pytest.raises(ValueError, match="coordinates"):
            LinearLayout({R: [(1, 0, 0)]}, {"dim0": 2, "dim1": 2})

    @pytest.mark.parametrize("coord", [4, 5, -1])
    def test_coordinate_outside_out_dim(self, coord):
        with pytest.raises(ValueError, match="outside"):
            LinearLayout({L: [(1,), (coord,)]}, {"dim0": 4})

    def test_largest_legal_coordinate_is_accepted(self):
        lay = LinearLayout({L: [(3,)]}, {"dim0": 4})
        assert lay.bases(L) == ((3,),)

    def test_sizes(self):
        lay = LinearLayout({R: [(1,), (2,)], L: [(0,)] * 5, W: []}, {"dim0": 4})
        assert lay.in_dim_size(R) == 4 and lay.in_dim_bits(R) == 2
        assert lay.in_dim_size(L) == 32 and lay.in_dim_bits(L) == 5
        assert lay.in_dim_size(W) == 1 and lay.in_dim_bits(W) == 0
        assert lay.in_dim_size("absent") == 1 and lay.bases("absent") == ()
        assert lay.total_in_size() == 128
        assert lay.total_out_size() == 4
        assert lay.out_dim_size("dim0") == 4

    def test_empty(self):
        lay = LinearLayout.empty()
        assert lay.in_dims == () and lay.out_dims == ()
        assert lay.total_in_size() == 1 and lay.total_out_size() == 1
        assert lay.apply({}) == ()

    @pytest.mark.parametrize("size", [1, 2, 4, 32, 1024])
    def test_identity_1d(self, size):
        lay = LinearLayout.identity_1d(size, L, "dim0")
        assert lay.in_dims == (L,) and lay.out_dims == ("dim0",)
        assert lay.out_dim_size("dim0") == size and lay.in_dim_size(L) == size
        assert lay.bases(L) == tuple((1 << i,) for i in range(log2(size)))
        for x in range(size) if size <= 64 else (0, 1, size // 2, size - 1):
            assert lay.apply({L: x}) == (x,)

    @pytest.mark.parametrize("size,out_size", [(1, 1), (8, 1), (8, 4), (32, 16)])
    def test_zeros_1d(self, size, out_size):
        lay = LinearLayout.zeros_1d(size, W, "dim0", out_size)
        assert lay.in_dim_size(W) == size
        assert lay.out_dim_size("dim0") == out_size
        assert all(lay.apply({W: x}) == (0,) for x in range(size))

    @pytest.mark.parametrize("ctor", [LinearLayout.identity_1d, LinearLayout.zeros_1d])
    def test_1d_constructors_reject_non_powers_of_two(self, ctor):
        with pytest.raises(ValueError):
            ctor(6, R, "dim0")


# ----------------------------------------------------------------------------- apply


class TestApply:
    def test_xor_of_overlapping_bases(self):
        lay = LinearLayout({R: [(1,), (3,), (2,)]}, {"dim0": 4})
        # 1 ^ 3 == 2 (not 1 + 3 == 4, which does not even fit).
        assert lay.apply({R: 0b011}) == (2,)
        assert lay.apply({R: 0b101}) == (3,)
        assert lay.apply({R: 0b110}) == (1,)
        assert lay.apply({R: 0b111}) == (0,)

    def test_xor_per_coordinate_across_dims(self):
        lay = LinearLayout({R: [(1, 2)], L: [(3, 2), (0, 1)]}, {"dim0": 4, "dim1": 4})
        assert lay.apply({R: 1, L: 1}) == (1 ^ 3, 2 ^ 2)
        assert lay.apply({R: 1, L: 3}) == (2, 1)
        assert lay.apply({L: 2}) == (0, 1)

    def test_missing_inputs_are_zero(self):
        lay = LinearLayout({R: [(1,)], L: [(2,)]}, {"dim0": 4})
        assert lay.apply({}) == (0,)
        assert lay.apply({L: 1}) == (2,)

    @pytest.mark.parametrize("value", [4, 5, 1 << 20, -1])
    def test_input_outside_its_size_raises(self, value):
        lay = LinearLayout({R: [(1,), (2,)]}, {"dim0": 4})
        with pytest.raises(ValueError):
            lay.apply({R: value})

    @pytest.mark.parametrize("seed", range(10))
    def test_apply_matches_definition(self, seed):
        rng = random.Random(seed)
        lay = random_layout(rng, [(R, 3), (L, 2), (W, 2)], [("dim0", 8), ("dim1", 4)])
        for a in all_inputs(lay):
            assert lay.apply(a) == ref_apply(lay, a)

    @pytest.mark.parametrize("seed", range(5))
    def test_images_list_every_value_of_one_input(self, seed):
        rng = random.Random(50 + seed)
        lay = random_layout(rng, [(R, 4), (L, 2), (W, 1)], [("dim0", 8), ("dim1", 4)])
        for name in (R, L, W):
            assert lay.images(name) == tuple(ref_apply(lay, {R: 0, L: 0, W: 0, name: v})
                                             for v in range(lay.in_dim_size(name)))
        assert lay.images("absent") == ((0, 0),)

    @pytest.mark.parametrize("seed", range(5))
    def test_apply_is_linear(self, seed):
        rng = random.Random(100 + seed)
        lay = random_layout(rng, [(R, 2), (L, 3)], [("dim0", 4), ("dim1", 8)])
        inputs = list(all_inputs(lay))
        for a, b in itertools.product(inputs[::3], inputs[::5]):
            ab = {d: a[d] ^ b[d] for d in lay.in_dims}
            expected = tuple(x ^ y for x, y in zip(lay.apply(a), lay.apply(b)))
            assert lay.apply(ab) == expected


# ----------------------------------------------------------------------------- product


class TestProduct:
    def test_disjoint_dims(self):
        a = LinearLayout({R: [(1,), (3,)]}, {"dim0": 4})
        b = LinearLayout({L: [(2,), (1,)]}, {"dim1": 4})
        p = a * b
        assert p.in_dims == (R, L)
        assert p.out_dims == ("dim0", "dim1")
        assert p.out_dim_sizes == {"dim0": 4, "dim1": 4}
        for r, l in itertools.product(range(4), range(4)):
            assert p.apply({R: r, L: l}) == (a.apply({R: r})[0], b.apply({L: l})[0])

    def test_shared_out_dim_puts_right_operand_above(self):
        a = LinearLayout.identity_1d(4, R, "dim0")
        b = LinearLayout.identity_1d(8, L, "dim0")
        p = a * b
        assert p.out_dim_sizes == {"dim0": 32}
        assert p.bases(R) == ((1,), (2,))
        assert p.bases(L) == ((4,), (8,), (16,))
        for r, l in itertools.product(range(4), range(8)):
            assert p.apply({R: r, L: l}) == (r + 4 * l,)
        # Not commutative: the other order puts lanes below registers.
        q = b * a
        assert q.bases(L) == ((1,), (2,), (4,)) and q.bases(R) == ((8,), (16,))
        assert p != q

    def test_shared_in_dim_appends_right_operand_bits(self):
        a = LinearLayout.identity_1d(4, R, "dim0")
        b = LinearLayout.identity_1d(2, R, "dim1")
        p = a * b
        assert p.bases(R) == ((1, 0), (2, 0), (0, 1))
        assert p.apply({R: 0b101}) == (1, 1)

    def test_shared_in_and_out_dims_concatenate_identity(self):
        p = LinearLayout.identity_1d(4, R, "dim0") * LinearLayout.identity_1d(8, R, "dim0")
        assert p == LinearLayout.identity_1d(32, R, "dim0")

    def test_shared_out_dim_in_different_positions(self):
        a = LinearLayout({R: [(1, 0), (0, 1)]}, {"x": 2, "y": 2})
        b = LinearLayout({L: [(1, 0), (0, 1)]}, {"y": 2, "x": 2})  # y first here
        p = a * b
        assert p.out_dims == ("x", "y")
        assert p.out_dim_sizes == {"x": 4, "y": 4}
        # b's lane bit 0 moves y; lifted above a's y it lands on y == 2.
        assert p.apply({L: 1}) == (0, 2)
        assert p.apply({L: 2}) == (2, 0)

    @pytest.mark.parametrize("seed", range(8))
    def test_random_product_semantics(self, seed):
        rng = random.Random(seed)
        a = random_layout(rng, [(R, 2), (L, 1)], [("dim0", 4), ("dim1", 2)])
        b = random_layout(rng, [(L, 2), (W, 1)], [("dim1", 4), ("dim2", 2)])
        p = a * b
        assert p.in_dims == (R, L, W)
        assert p.out_dims == ("dim0", "dim1", "dim2")
        assert p.out_dim_sizes == {"dim0": 4, "dim1": 8, "dim2": 2}
        for r, la, lb, w in itertools.product(range(4), range(2), range(4), range(2)):
            a0, a1 = a.apply({R: r, L: la})
            b1, b2 = b.apply({L: lb, W: w})
            # The product's lane holds a's lane bits below b's.
            assert p.apply({R: r, L: la | (lb << 1), W: w}) == (a0, a1 | (b1 << 1), b2)

    @pytest.mark.parametrize("seed", range(4))
    def test_associative(self, seed):
        rng = random.Random(seed)
        a = random_layout(rng, [(R, 1), (L, 1)], [("dim0", 2)])
        b = random_layout(rng, [(L, 2)], [("dim0", 2), ("dim1", 2)])
        c = random_layout(rng, [(R, 1), (W, 2)], [("dim1", 4)])
        assert (a * b) * c == a * (b * c)

    def test_empty_is_the_unit(self):
        lay = LinearLayout({R: [(1, 1)], L: [(2, 0)]}, {"dim0": 4, "dim1": 2})
        assert LinearLayout.empty() * lay == lay
        assert lay * LinearLayout.empty() == lay


# ----------------------------------------------------------------------------- compose


class TestCompose:
    @pytest.mark.parametrize("seed", range(10))
    def test_compose_equals_applying_twice(self, seed):
        rng = random.Random(seed)
        inner = random_layout(rng, [(R, 2), (L, 3)], [("x", 8), ("y", 4)])
        outer = random_layout(rng, [("x", 3), ("y", 2)], [("dim0", 4), ("dim1", 8)])
        comp = inner.compose(outer)
        assert comp.in_dims == inner.in_dims
        assert comp.out_dims == outer.out_dims
        assert comp.out_dim_sizes == outer.out_dim_sizes
        for a in all_inputs(inner):
            mid = dict(zip(inner.out_dims, inner.apply(a)))
            assert comp.apply(a) == outer.apply(mid)

    def test_compose_with_outer_in_dims_in_other_order(self):
        inner = LinearLayout({R: [(1, 0), (0, 1), (1, 1)]}, {"x": 2, "y": 2})
        outer = LinearLayout({"y": [(4,)], "x": [(1,)]}, {"off": 8})
        comp = inner.compose(outer)
        assert comp.bases(R) == ((1,), (4,), (5,))

    def test_compose_into_larger_outer_domain(self):
        inner = LinearLayout.identity_1d(4, R, "x")
        outer = LinearLayout({"x": [(1,), (2,), (4,)]}, {"dim0": 8})
        assert inner.compose(outer) == LinearLayout({R: [(1,), (2,)]}, {"dim0": 8})

    def test_compose_with_identity_is_noop(self):
        rng = random.Random(7)
        lay = random_layout(rng, [(R, 2), (L, 2)], [("dim0", 4), ("dim1", 4)])
        ident = LinearLayout.identity_1d(4, "dim0", "dim0") * LinearLayout.identity_1d(4, "dim1", "dim1")
        assert lay.compose(ident) == lay

    def test_compose_rejects_mismatched_dims(self):
        inner = LinearLayout.identity_1d(4, R, "x")
        with pytest.raises(ValueError, match="cannot compose"):
            inner.compose(LinearLayout.identity_1d(4, "y", "dim0"))

    def test_compose_rejects_too_small_outer_domain(self):
        inner = LinearLayout.identity_1d(8, R, "x")
        with pytest.raises(ValueError, match="exceeds"):
            inner.compose(LinearLayout.identity_1d(4, "x", "dim0"))


# ----------------------------------------------------------------------------- reshaping


class TestReshape:
    def test_transpose_outs(self):
        lay = LinearLayout({R: [(1, 0, 2)], L: [(0, 3, 1)]}, {"a": 2, "b": 4, "c": 4})
        t = lay.transpose_outs(["c", "a", "b"])
        assert t.out_dims == ("c", "a", "b")
        assert t.out_dim_sizes == {"c": 4, "a": 2, "b": 4}
        for a in all_inputs(lay):
            x, y, z = lay.apply(a)
            assert t.apply(a) == (z, x, y)
        assert t.transpose_outs(["a", "b", "c"]) == lay

    @pytest.mark.parametrize("order", [["a"], ["a", "b", "b"], ["a", "b", "d"], []])
    def test_transpose_outs_rejects_non_permutation(self, order):
        lay = LinearLayout({R: [(1, 0, 2)]}, {"a": 2, "b": 4, "c": 4})
        with pytest.raises(ValueError):
            lay.transpose_outs(order)

    def test_transpose_ins(self):
        rng = random.Random(3)
        lay = random_layout(rng, [(R, 2), (L, 1), (W, 2)], [("dim0", 8)])
        t = lay.transpose_ins([W, R, L])
        assert t.in_dims == (W, R, L)
        for a in all_inputs(lay):
            assert t.apply(a) == lay.apply(a)
        assert t != lay  # equality is order-sensitive ...
        assert t.equivalent(lay)  # ... equivalence is not
        assert t.transpose_ins([R, L, W]) == lay
        with pytest.raises(ValueError):
            lay.transpose_ins([R, L])

    @pytest.mark.parametrize("seed", range(6))
    def test_flatten_outs(self, seed):
        rng = random.Random(seed)
        sizes = [("dim0", 4), ("dim1", 2), ("dim2", 8)]
        lay = random_layout(rng, [(R, 3), (L, 2)], sizes)
        f = lay.flatten_outs()
        assert f.out_dims == ("offset",) and f.out_dim_size("offset") == 64
        assert lay.flatten_outs("idx").out_dims == ("idx",)
        for a in all_inputs(lay):
            assert f.apply(a) == (flat(lay.apply(a), [4, 2, 8]),)

    @pytest.mark.parametrize("seed", range(6))
    def test_flatten_reshape_round_trip(self, seed):
        rng = random.Random(seed)
        lay = random_layout(rng, [(R, 3), (L, 3)], [("dim0", 2), ("dim1", 16), ("dim2", 4)])
        assert lay.flatten_outs().reshape_outs(lay.out_dim_sizes) == lay
        assert lay.reshape_outs(lay.out_dim_sizes) == lay

    @pytest.mark.parametrize("seed", range(6))
    def test_reshape_reinterprets_flat_offsets(self, seed):
        rng = random.Random(seed)
        lay = random_layout(rng, [(R, 2), (W, 3)], [("dim0", 8), ("dim1", 8)])
        new = {"p": 2, "q": 16, "s": 2}
        re = lay.reshape_outs(new)
        assert re.out_dim_sizes == new
        for a in all_inputs(lay):
            assert flat(re.apply(a), [2, 16, 2]) == flat(lay.apply(a), [8, 8])
        assert re.reshape_outs(lay.out_dim_sizes) == lay

    def test_reshape_rejects_size_mismatch(self):
        lay = LinearLayout.identity_1d(16, R, "dim0")
        with pytest.raises(ValueError, match="reshape"):
            lay.reshape_outs({"a": 4, "b": 8})

    def test_sublayout(self):
        rng = random.Random(11)
        lay = random_layout(rng, [(R, 2), (L, 2), (W, 1)], [("dim0", 4), ("dim1", 4), ("dim2", 2)])
        sub = lay.sublayout([L, R], ["dim2", "dim0"])
        assert sub.in_dims == (L, R)
        assert sub.out_dims == ("dim2", "dim0")
        assert sub.out_dim_sizes == {"dim2": 2, "dim0": 4}
        for r, l in itertools.product(range(4), range(4)):
            d0, _, d2 = lay.apply({R: r, L: l})
            assert sub.apply({R: r, L: l}) == (d2, d0)

    def test_sublayout_skips_unknown_in_dims(self):
        lay = LinearLayout({R: [(1,)]}, {"dim0": 2})
        assert lay.sublayout([R, "block"], ["dim0"]) == lay

    def test_remove_zero_bases(self):
        lay = LinearLayout({R: [(0, 0), (1, 0), (0, 0), (0, 2)], L: [(0, 0), (0, 1)]},
                           {"dim0": 2, "dim1": 4})
        out = lay.remove_zero_bases(R)
        assert out.bases(R) == ((1, 0), (0, 2))
        assert out.bases(L) == lay.bases(L)  # only the named dim is touched
        assert out.in_dim_size(R) == 4
        assert image(out) == image(lay)
        assert lay.remove_zero_bases(L).bases(L) == ((0, 1),)

    def test_with_bases_replaces_and_appends(self):
        lay = LinearLayout({R: [(1,)]}, {"dim0": 4})
        assert lay.with_bases(R, [(2,), (1,)]).bases(R) == ((2,), (1,))
        added = lay.with_bases(W, [(2,)])
        assert added.in_dims == (R, W) and added.apply({W: 1}) == (2,)
        with pytest.raises(ValueError):
            lay.with_bases(R, [(4,)])


# ----------------------------------------------------------------------------- properties


RANK_CASES = [
    # (bases, out sizes, rank, surjective, injective)
    ({R: [(1,), (2,)]}, {"dim0": 4}, 2, True, True),
    ({R: [(1,), (2,), (3,)]}, {"dim0": 4}, 2, True, False),
    ({R: [(1,)], L: [(1,)]}, {"dim0": 4}, 1, False, False),
    ({R: [(1,)]}, {"dim0": 4}, 1, False, True),
    ({R: [(0,), (0,)]}, {"dim0": 1}, 0, True, False),
    ({R: [(3,), (1,)]}, {"dim0": 4}, 2, True, True),
    ({R: [(1, 1), (1, 0)], L: [(0, 1)]}, {"a": 2, "b": 2}, 2, True, False),
    ({R: [(1, 1)]}, {"a": 2, "b": 2}, 1, False, True),
    ({}, {}, 0, True, True),
    ({R: []}, {"dim0": 2}, 0, False, True),
]


class TestProperties:
    @pytest.mark.parametrize("bases,outs,rank,surj,inj", RANK_CASES)
    def test_hand_cases(self, bases, outs, rank, surj, inj):
        lay = LinearLayout(bases, outs)
        assert lay.rank() == rank
        assert lay.is_surjective() is surj
        assert lay.is_injective() is inj
        assert lay.is_invertible() is (surj and inj)

    @pytest.mark.parametrize("seed", range(25))
    def test_against_brute_force(self, seed):
        rng = random.Random(seed)
        in_spec = split_bits(rng, [R, L, W], rng.randint(0, 6))
        out_spec = [(n, 1 << b) for n, b in split_bits(rng, ["dim0", "dim1"], rng.randint(0, 5))]
        if rng.random() < 0.5:
            # Sparse: many zero and repeated bases.
            total = 1
            for _, s in out_spec:
                total *= s
            pool = [0] + [rng.randrange(total) for _ in range(2)]
            lay = layout_from_columns(in_spec, out_spec, [rng.choice(pool) for _ in range(sum(b for _, b in in_spec))])
        else:
            lay = random_layout(rng, in_spec, out_spec)
        img = image(lay)
        n_in = lay.total_in_size()
        assert lay.rank() == log2(len(img))
        assert lay.is_surjective() == (len(img) == lay.total_out_size())
        outputs = [ref_apply(lay, a) for a in all_inputs(lay)]
        assert lay.is_injective() == (len(set(outputs)) == n_in)


# ----------------------------------------------------------------------------- invert


class TestInvert:
    @pytest.mark.parametrize("seed", range(30))
    def test_compose_with_inverse_is_identity(self, seed):
        lay = random_invertible_case(seed)
        assert lay.is_invertible()
        inv = lay.invert()
        assert inv.in_dims == lay.out_dims
        assert inv.out_dims == lay.in_dims
        assert inv.out_dim_sizes == {d: lay.in_dim_size(d) for d in lay.in_dims}
        round_trip = lay.compose(inv)
        for a in all_inputs(lay):
            assert round_trip.apply(a) == tuple(a[d] for d in lay.in_dims)
            assert inv.apply(dict(zip(lay.out_dims, lay.apply(a)))) == tuple(a[d] for d in lay.in_dims)
        # And the other way round: identity on outputs.
        back = inv.compose(lay)
        for c in all_inputs(inv):
            assert back.apply(c) == tuple(c[d] for d in inv.in_dims)

    def test_inverse_of_identity(self):
        lay = LinearLayout.identity_1d(8, R, "dim0")
        assert lay.invert() == LinearLayout.identity_1d(8, "dim0", R)

    def test_inverse_of_xor_layout(self):
        lay = LinearLayout({R: [(1,), (3,)]}, {"dim0": 4})
        inv = lay.invert()
        # 1 -> r=1; 2 = 1 ^ 3 -> r=0b11; 3 -> r=0b10.
        assert inv.apply({"dim0": 1}) == (1,)
        assert inv.apply({"dim0": 2}) == (3,)
        assert inv.apply({"dim0": 3}) == (2,)

    @pytest.mark.parametrize("bases,outs", [
        ({R: [(1,), (1,)]}, {"dim0": 4}),            # not injective, not surjective
        ({R: [(1,), (2,), (3,)]}, {"dim0": 4}),      # surjective, not injective
        ({R: [(1,)]}, {"dim0": 4}),                  # injective, not surjective
        ({L: [(0,)] * 5}, {"dim0": 1}),              # broadcast
    ])
    def test_invert_rejects_non_bijective(self, bases, outs):
        with pytest.raises(ValueError, match="not invertible"):
            LinearLayout(bases, outs).invert()


# ----------------------------------------------------------------------------- free variables


def ref_free_masks(lay: LinearLayout) -> dict[str, int]:
    """A bit is free when its basis lies in the span of all earlier bases (in-dim order)."""
    masks, earlier = {}, []
    sizes = [lay.out_dim_size(d) for d in lay.out_dims]
    for dim in lay.in_dims:
        mask = 0
        for i, vec in enumerate(lay.bases(dim)):
            v = flat(vec, sizes)
            if v in span(earlier):
                mask |= 1 << i
            earlier.append(v)
        masks[dim] = mask
    return masks


class TestFreeVariableMasks:
    def test_replicated_lanes_and_warps(self):
        # 16 elements over 4 registers x 32 lanes x 4 warps: lane bit 4 and all warps duplicate.
        lay = LinearLayout({R: [(1,), (2,)], L: [(4,), (8,), (0,), (0,), (0,)], W: [(0,), (0,)]},
                           {"dim0": 16})
        assert lay.free_variable_masks() == {R: 0, L: 0b11100, W: 0b11}

    def test_duplicates_of_earlier_bases_and_combinations(self):
        lay = LinearLayout({R: [(1,), (2,)], L: [(0,), (1,), (4,)], W: [(0,), (5,), (6,)]}, {"dim0": 8})
        # lane0 zero, lane1 == reg0; warp0 zero, warp1 == reg0 ^ lane2, warp2 == reg1 ^ lane2.
        assert lay.free_variable_masks() == {R: 0, L: 0b011, W: 0b111}

    def test_first_occurrence_is_kept(self):
        lay = LinearLayout({R: [(1,), (1,)], L: [(1,)]}, {"dim0": 2})
        assert lay.free_variable_masks() == {R: 0b10, L: 0b1}

    def test_no_free_bits_when_injective(self):
        lay = random_invertible_case(5)
        assert all(m == 0 for m in lay.free_variable_masks().values())

    @pytest.mark.parametrize("seed", range(15))
    def test_random(self, seed):
        rng = random.Random(seed)
        total_bits = rng.randint(1, 4)
        sizes = 1 << total_bits
        pool = [0] + [rng.randrange(sizes) for _ in range(3)]
        in_spec = [(R, rng.randint(0, 3)), (L, rng.randint(0, 3)), (W, rng.randint(0, 2))]
        lay = layout_from_columns(in_spec, [("dim0", sizes)],
                                  [rng.choice(pool) for _ in range(sum(b for _, b in in_spec))])
        masks = lay.free_variable_masks()
        assert masks == ref_free_masks(lay)
        # Keeping only the non-free bits is injective with the same image.
        kept = LinearLayout({d: [v for i, v in enumerate(lay.bases(d)) if not (masks[d] >> i) & 1]
                             for d in lay.in_dims}, lay.out_dim_sizes)
        assert kept.is_injective()
        assert image(kept) == image(lay)


# ----------------------------------------------------------------------------- invert_and_compose


def check_invert_and_compose(self_: LinearLayout, outer: LinearLayout):
    x = self_.invert_and_compose(outer)
    assert x.in_dims == self_.in_dims
    assert x.out_dims == outer.in_dims
    for a in all_inputs(self_):
        b = dict(zip(x.out_dims, x.apply(a)))
        got = dict(zip(outer.out_dims, outer.apply(b)))
        want = dict(zip(self_.out_dims, self_.apply(a)))
        assert got == want


class TestInvertAndCompose:
    @pytest.mark.parametrize("seed", range(20))
    def test_random_surjective_outer(self, seed):
        rng = random.Random(seed)
        out_spec = [("dim0", 1 << rng.randint(0, 3)), ("dim1", 1 << rng.randint(0, 2))]
        n = sum(log2(s) for _, s in out_spec)
        # outer: an invertible core plus extra (duplicate or zero) bits, so it is surjective.
        in_spec = split_bits(rng, [R, L, W], n)
        core = random_invertible(rng, in_spec, out_spec)
        total = 1 << n
        bases = {d: list(core.bases(d)) for d in core.in_dims}
        for d in (L, W):
            for _ in range(rng.randint(0, 2)):
                bases.setdefault(d, []).append(unflat(rng.choice([0, rng.randrange(total)]), [s for _, s in out_spec]))
        outer = LinearLayout(bases, dict(out_spec))
        assert outer.is_surjective()
        self_ = random_layout(rng, [(R, rng.randint(0, 3)), (L, rng.randint(0, 3))], out_spec)
        check_invert_and_compose(self_, outer)

    def test_conversion_between_blocked_like_layouts(self):
        # 16 elements: self has 4 contiguous elements per thread, outer 1 per thread, 16 lanes.
        self_ = LinearLayout({R: [(1,), (2,)], L: [(4,), (8,)]}, {"dim0": 16})
        outer = LinearLayout({L: [(1,), (2,), (4,), (8,)]}, {"dim0": 16})
        x = self_.invert_and_compose(outer)
        assert x.bases(R) == ((1,), (2,))
        assert x.bases(L) == ((4,), (8,))
        check_invert_and_compose(self_, outer)

    def test_out_dims_in_different_order(self):
        rng = random.Random(1)
        self_ = random_layout(rng, [(R, 2), (L, 2)], [("dim1", 4), ("dim0", 2)])
        outer = random_invertible(rng, [(L, 1), (W, 2)], [("dim0", 2), ("dim1", 4)])
        check_invert_and_compose(self_, outer)

    def test_outer_with_unit_bit_image_need_not_be_surjective(self):
        # outer reaches {0, 1} of dim0 (size 4); self only ever touches those.
        outer = LinearLayout({L: [(1,)]}, {"dim0": 4})
        self_ = LinearLayout({R: [(1,), (0,)]}, {"dim0": 4})
        check_invert_and_compose(self_, outer)

    def test_outer_covering_self_with_multi_bit_image(self):
        outer = LinearLayout({L: [(3,)]}, {"dim0": 4})
        self_ = LinearLayout({R: [(3,)]}, {"dim0": 4})
        check_invert_and_compose(self_, outer)

    def test_outer_covering_self_diagonal(self):
        outer = LinearLayout({L: [(1, 1)]}, {"a": 2, "b": 2})
        self_ = LinearLayout({R: [(1, 1)]}, {"a": 2, "b": 2})
        check_invert_and_compose(self_, outer)

    def test_error_when_outer_does_not_cover_self(self):
        outer = LinearLayout({L: [(1,), (0,)]}, {"dim0": 4})  # reaches only {0, 1}
        self_ = LinearLayout({R: [(1,), (2,)]}, {"dim0": 4})
        with pytest.raises(ValueError, match="does not reach"):
            self_.invert_and_compose(outer)

    def test_error_when_outer_misses_one_dim(self):
        outer = LinearLayout({L: [(1, 0), (2, 0)]}, {"dim0": 4, "dim1": 2})
        self_ = LinearLayout({R: [(0, 1)]}, {"dim0": 4, "dim1": 2})
        with pytest.raises(ValueError, match="does not reach"):
            self_.invert_and_compose(outer)

    def test_self_over_smaller_outputs_than_outer(self):
        # self lives in the first 4 elements of outer's 16.
        outer = LinearLayout({R: [(4,), (8,)], L: [(1,), (2,)]}, {"dim0": 16})
        self_ = LinearLayout({R: [(2,)], L: [(1,), (0,)]}, {"dim0": 4})
        x = self_.invert_and_compose(outer)
        for a in all_inputs(self_):
            assert outer.apply(dict(zip(x.out_dims, x.apply(a)))) == self_.apply(a)

    def test_error_when_self_outputs_exceed_outer(self):
        outer = LinearLayout.identity_1d(4, L, "dim0")
        self_ = LinearLayout.identity_1d(8, R, "dim0")
        with pytest.raises(ValueError):
            self_.invert_and_compose(outer)

    def test_error_when_output_dims_differ(self):
        outer = LinearLayout.identity_1d(4, L, "dim0")
        self_ = LinearLayout.identity_1d(4, R, "dim1")
        with pytest.raises(ValueError, match="same output dimensions"):
            self_.invert_and_compose(outer)


# ----------------------------------------------------------------------------- identity


class TestIdentity:
    def test_equal_layouts_built_separately(self):
        a = LinearLayout({R: [[1, 0]], L: [(0, 1)]}, {"x": 2, "y": 2})
        b = LinearLayout({R: [(1, 0)], L: [[0, 1]]}, {"x": 2, "y": 2})
        assert a == b and not (a != b)
        assert hash(a) == hash(b)
        assert len({a, b}) == 1
        assert {a: "v"}[b] == "v"

    @pytest.mark.parametrize("other", [
        LinearLayout({R: [(1, 0)], L: [(1, 1)]}, {"x": 2, "y": 2}),      # different basis
        LinearLayout({R: [(1, 0)], L: [(0, 1)]}, {"x": 2, "y": 4}),      # different out size
        LinearLayout({R: [(1, 0)], W: [(0, 1)]}, {"x": 2, "y": 2}),      # different in dim name
        LinearLayout({L: [(0, 1)], R: [(1, 0)]}, {"x": 2, "y": 2}),      # in dims reordered
        LinearLayout({R: [(1, 0)], L: [(0, 1), (0, 0)]}, {"x": 2, "y": 2}),  # extra bit
    ])
    def test_unequal(self, other):
        a = LinearLayout({R: [(1, 0)], L: [(0, 1)]}, {"x": 2, "y": 2})
        assert a != other

    def test_not_equal_to_other_types(self):
        a = LinearLayout.identity_1d(4, R, "dim0")
        assert a != "LinearLayout" and a != 4 and a != None  # noqa: E711

    def test_repr_mentions_dims(self):
        text = repr(LinearLayout({R: [(1,)]}, {"dim0": 2}))
        assert "register" in text and "dim0=2" in text

    def test_equivalent_ignores_empty_in_dims_and_unit_out_dims(self):
        a = LinearLayout({R: [(1,), (2,)], L: [(0,)]}, {"dim0": 4})
        b = LinearLayout({W: [], R: [(1, 0), (2, 0)], L: [(0, 0)]}, {"dim0": 4, "dim1": 1})
        assert a != b
        assert a.equivalent(b) and b.equivalent(a)

    @pytest.mark.parametrize("other", [
        LinearLayout({R: [(1,), (1,)], L: [(0,)]}, {"dim0": 4}),
        LinearLayout({R: [(1,), (2,)]}, {"dim0": 4}),            # zero lane bit is not "empty"
        LinearLayout({R: [(1,), (2,)], L: [(0,)]}, {"dim0": 8}),
        LinearLayout({R: [(1,), (2,)], L: [(0,)]}, {"dim1": 4}),
    ])
    def test_not_equivalent(self, other):
        a = LinearLayout({R: [(1,), (2,)], L: [(0,)]}, {"dim0": 4})
        assert not a.equivalent(other)
        assert not other.equivalent(a)

    def test_equivalent_distinguishes_maps_with_reordered_out_dims(self):
        a = LinearLayout({R: [(1, 0)]}, {"dim0": 2, "dim1": 2})  # register 1 -> dim0 = 1
        b = LinearLayout({R: [(1, 0)]}, {"dim1": 2, "dim0": 2})  # register 1 -> dim1 = 1
        assert a.apply({R: 1}) != tuple(reversed(b.apply({R: 1})))
        assert not a.equivalent(b)

    def test_equivalent_after_transpose_outs(self):
        a = LinearLayout({R: [(1, 0), (0, 2)], L: [(0, 1)]}, {"dim0": 2, "dim1": 4})
        assert a.equivalent(a.transpose_outs(["dim1", "dim0"]))
