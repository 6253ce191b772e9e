"""The layouts shape ops take (tilec.layout.shape_layouts), checked element by element:
for every register, lane and warp of a result, the element the inferred layout puts
there must be the one the op takes from the operand element that the same thread holds
in the register `register_sources` names. No GPU needed: this is the whole contract of
the register-only lowering (convert_tilegpu_to_llvm/shape.py just indexes)."""
from __future__ import annotations

import itertools
import random

import pytest

from tilec.layout.encodings import (LANE, REGISTER, WARP, BlockedEncoding, LinearEncoding, SliceEncoding,
                                    default_blocked, to_linear)
from tilec.layout.mma import MmaEncoding
from tilec.layout.shape_layouts import (infer_encodings, register_sources, result_layouts, source_map,
                                        split_layout)
from tilec.layout.syntax import encoding_text, parse_encoding
from tilec.layout.triton_syntax import parse_triton_encoding


def _elements(layout):
    """{(register, lane, warp): coordinates} of every element a layout places."""
    sizes = [layout.in_dim_size(name) if name in layout.in_dims else 1 for name in (REGISTER, LANE, WARP)]
    return {(r, l, w): layout.apply({REGISTER: r, LANE: l, WARP: w})
            for r, l, w in itertools.product(*(range(s) for s in sizes))}


def _check(op, operand_layouts, operand_shape, result_shape, result_layouts_, order=()):
    """Every result element is the operand element of the same thread that the plan names."""
    for index, result in enumerate(result_layouts_):
        source = source_map(op, operand_shape, result_shape, order, index)
        plan = register_sources(result, operand_layouts, source)
        assert plan is not None, f"{op}: result {index} not in registers"
        placed = [_elements(layout) for layout in operand_layouts]
        for (r, l, w), coords in _elements(result).items():
            operand, register = plan[r]
            assert source(tuple(coords)) == (operand, tuple(placed[operand][(register, l, w)])), (op, r, l, w)
        # And the result covers its whole shape.
        assert set(map(tuple, _elements(result).values())) == set(itertools.product(*(range(s) for s in result_shape)))


LAYOUTS_2D = [
    (default_blocked([16, 64], 4, size_per_thread=[1, 4]), [16, 64]),
    (default_blocked([64, 64], 4, size_per_thread=[1, 8]), [64, 64]),
    (default_blocked([128, 16], 8, size_per_thread=[4, 1], order=[0, 1]), [128, 16]),
    (default_blocked([4, 8], 4), [4, 8]),                               # replicated over lanes and warps
    (MmaEncoding(3, (4, 1), (64, 64)), [128, 64]),                  # a wgmma accumulator
    (MmaEncoding(2, (2, 2)), [64, 64]),                                  # an mma.sync accumulator
    (SliceEncoding(1, default_blocked([32, 4, 16], 4, size_per_thread=[1, 1, 4])), [32, 16]),
]


@pytest.mark.parametrize("enc, shape", LAYOUTS_2D, ids=lambda x: str(x)[:40])
def test_trans_keeps_elements_in_their_threads(enc, shape):
    operand = to_linear(enc, shape)
    (result,) = result_layouts("tile.trans", operand, shape[::-1], (1, 0))
    _check("tile.trans", [operand], shape, shape[::-1], [result], (1, 0))


@pytest.mark.parametrize("enc, shape", LAYOUTS_2D, ids=lambda x: str(x)[:40])
@pytest.mark.parametrize("regroup", ["pairs", "flat", "split_rows"])
def test_reshape_keeps_elements_in_their_threads(enc, shape, regroup):
    m, n = shape
    new = {"pairs": [m, n // 2, 2], "flat": [m * n], "split_rows": [2, m // 2, n]}[regroup]
    operand = to_linear(enc, shape)
    (result,) = result_layouts("tile.reshape", operand, new)
    _check("tile.reshape", [operand], shape, new, [result])


@pytest.mark.parametrize("enc, shape", LAYOUTS_2D, ids=lambda x: str(x)[:40])
def test_join_then_split_round_trip(enc, shape):
    operand = to_linear(enc, shape)
    (joined,) = result_layouts("tile.join", operand, shape + [2])
    _check("tile.join", [operand, operand], shape, shape + [2], [joined])
    halves = result_layouts("tile.split", joined, shape)
    _check("tile.split", [joined], shape + [2], shape, halves)
    assert halves[0] == operand


def test_epilogue_subtile_chain_stays_in_registers():
    """Tutorial 09's epilogue: a wgmma accumulator reshaped to (BM, 2, BN/2), permuted
    to (BM, BN/2, 2) and split in two: every step renumbers registers."""
    acc = to_linear(MmaEncoding(3, (8, 1), (64, 128)), [128, 128])
    (r3,) = result_layouts("tile.reshape", acc, [128, 2, 64])
    _check("tile.reshape", [acc], [128, 128], [128, 2, 64], [r3])
    (p,) = result_layouts("tile.trans", r3, [128, 64, 2], (0, 2, 1))
    _check("tile.trans", [r3], [128, 2, 64], [128, 64, 2], [p], (0, 2, 1))
    halves = result_layouts("tile.split", p, [128, 64])
    assert halves is not None
    _check("tile.split", [p], [128, 64, 2], [128, 64], halves)


def test_split_across_threads_is_refused():
    """The size-2 dimension across lanes (one element per thread): no register-only split."""
    across = to_linear(default_blocked([8, 2], 4), [8, 2])
    assert split_layout(across) is None
    assert infer_encodings("tile.split", default_blocked([8, 2], 4), [8, 2], [8], 4) is None


def test_register_sources_refuses_another_threads_element():
    operand = to_linear(default_blocked([32, 32], 4), [32, 32])
    other = to_linear(default_blocked([32, 32], 4, order=[0, 1]), [32, 32])
    assert register_sources(other, [operand], source_map("tile.trans", [32, 32], [32, 32], (0, 1))) is None


@pytest.mark.parametrize("seed", range(20))
def test_random_blocked_chains(seed):
    """Random blocked layouts through random shape ops: each step infers a layout that
    keeps the elements in place (blocked where a blocked encoding says the same)."""
    rng = random.Random(seed)
    rank = rng.choice([2, 3])
    shape = [rng.choice([2, 4, 8, 16, 32]) for _ in range(rank)]
    spt = [rng.choice([1, 2, 4]) for _ in range(rank)]
    spt = [min(s, d) for s, d in zip(spt, shape)]
    order = list(range(rank))
    rng.shuffle(order)
    enc = default_blocked(shape, rng.choice([1, 2, 4, 8]), size_per_thread=spt, order=order)
    for _ in range(4):
        op = rng.choice(["tile.trans", "tile.reshape", "tile.join", "tile.split"])
        perm = tuple(rng.sample(range(len(shape)), len(shape)))
        if op == "tile.trans":
            new = [shape[d] for d in perm]
        elif op == "tile.reshape":
            new = [s for s in shape]
            if len(new) > 1 and rng.random() < 0.5:
                new = [new[0] * new[1]] + new[2:]
            elif new[-1] >= 4:
                new = new[:-1] + [2, new[-1] // 2]
        elif op == "tile.join":
            new = shape + [2]
        else:
            if shape[-1] != 2 or len(shape) < 2:
                continue
            new = shape[:-1]
        found = infer_encodings(op, enc, shape, new, enc.num_warps, perm if op == "tile.trans" else ())
        if found is None:
            assert op == "tile.split"
            continue
        operand = to_linear(enc, shape)
        operands = [operand, operand] if op == "tile.join" else [operand]
        _check(op, operands, shape, new, [to_linear(e, new) for e in found], perm if op == "tile.trans" else ())
        if op in ("tile.trans", "tile.join") and isinstance(enc, BlockedEncoding):
            assert isinstance(found[0], BlockedEncoding), found[0]
        enc, shape = found[0], new


def test_linear_encoding_text_round_trip_and_broadcast_shapes():
    layout = to_linear(MmaEncoding(3, (4, 1), (64, 64)), [128, 64])
    enc = LinearEncoding.of(layout)
    assert parse_encoding(encoding_text(enc)) == enc
    assert enc.to_linear([128, 64]) == layout
    row = enc.to_linear([1, 64])          # a broadcast operand: the dim-0 bits select replicas
    assert all(v[0] == 0 for name in row.in_dims for v in row.bases(name))
    with pytest.raises(ValueError):
        enc.to_linear([256, 64])          # more elements than the map places


def test_triton_linear_encoding_is_read():
    """Triton's #ttg.linear (lists of bases) as a tilegpu linear encoding; a cluster's block
    bases are refused."""
    text = ("#ttg.linear<{register = [[0, 1], [8, 0], [16, 0]], lane = [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]], "
            "warp = [[2, 0], [4, 0]], block = []}>")
    enc = parse_triton_encoding(text)
    assert enc == LinearEncoding(((0, 1), (8, 0), (16, 0)), ((0, 2), (0, 4), (0, 8), (0, 16), (1, 0)), ((2, 0), (4, 0)))
    assert enc.to_linear([32, 32]).is_surjective()
    with pytest.raises(ValueError, match="cluster"):
        parse_triton_encoding(text.replace("block = []", "block = [[1, 0]]"))
