"""tl.random (Philox) on both backends, against an independent reference.

The reference (`philox_reference.py`) implements Philox with Python ints from the
published algorithm and is itself checked against Random123's known-answer vectors, so
a match means the kernels give Random123's Philox under Triton's conventions for seeds,
offsets and the float mappings. Outputs are poisoned before every launch.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

import philox_reference as ref

POISON = 0x5A5A5A5A

# Random123's kat_vectors: (counter, key) -> output.
KAT_4x32_10 = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
KAT_4x32_7_ZERO = (0x5F6FB709, 0x0D893F64, 0x4F121F81, 0x4F730A48)
KAT_4x64_10_ZERO = (0x16554D9ECA36314C, 0xDB20FE9D672D0FDC, 0xD7E772CEE186176B, 0x7E68B68AEC7BA23B)


def test_reference_matches_random123_vectors():
    for counter, key, expected in KAT_4x32_10:
        assert ref.philox(counter, key) == expected
    assert ref.philox((0,) * 4, (0, 0), rounds=7) == KAT_4x32_7_ZERO
    assert ref.philox((0,) * 4, (0, 0), variant=ref.PHILOX_4x64) == KAT_4x64_10_ZERO


def _seed_of_key(key) -> int:
    """The 64-bit seed whose (low, high) words are `key`, as a signed int64."""
    seed = key[0] | (key[1] << 32)
    return seed - (1 << 64) if seed >= (1 << 63) else seed


# ----------------------------------------------------------------------------- tl.philox


@tilec.jit
def philox_kernel(seed_ptr, counter_ptr, out_ptr, N_ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    """One Philox block per lane: lane i has seed seed_ptr[i] and counter column i."""
    offs = tl.arange(0, BLOCK)
    seed = tl.load(seed_ptr + offs)
    c0 = tl.load(counter_ptr + offs)
    c1 = tl.load(counter_ptr + BLOCK + offs)
    c2 = tl.load(counter_ptr + 2 * BLOCK + offs)
    c3 = tl.load(counter_ptr + 3 * BLOCK + offs)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3, N_ROUNDS)
    tl.store(out_ptr + offs, r0)
    tl.store(out_ptr + BLOCK + offs, r1)
    tl.store(out_ptr + 2 * BLOCK + offs, r2)
    tl.store(out_ptr + 3 * BLOCK + offs, r3)


def _run_philox(backend, keys, counters, rounds, word_dtype):
    """Run philox_kernel on lanes (key, counter); returns the (4, lanes) output words."""
    lanes = len(keys)
    seeds = np.array([_seed_of_key(k) for k in keys], np.int64)
    bits = np.dtype(word_dtype).itemsize * 8
    counter = np.array([[c[j] for c in counters] for j in range(4)], np.uint64)
    counter = counter.astype(np.dtype(f"uint{bits}")).view(word_dtype)
    out = device_array(np.full(4 * lanes, POISON, word_dtype), backend)
    philox_kernel[(1,)](device_array(seeds, backend), device_array(counter.reshape(-1), backend), out,
                        N_ROUNDS=rounds, BLOCK=lanes)
    return to_numpy(out).view(f"uint{bits}").reshape(4, lanes)


@pytest.mark.parametrize("rounds", [10, 7])
def test_philox_4x32_known_answers(backend, rng, rounds):
    """Random123's vectors (10 rounds), then random counters and keys against the reference."""
    keys = [k for _, k, _ in KAT_4x32_10]
    counters = [c for c, _, _ in KAT_4x32_10]
    for _ in range(16 - len(keys)):
        keys.append(tuple(int(v) for v in rng.integers(0, 1 << 32, 2)))
        counters.append(tuple(int(v) for v in rng.integers(0, 1 << 32, 4)))
    got = _run_philox(backend, keys, counters, rounds, np.int32)
    expected = np.array([ref.philox(c, k, rounds) for c, k in zip(counters, keys)], np.uint64).T
    np.testing.assert_array_equal(got, expected.astype(np.uint32))
    if rounds == 10:
        for lane, (_, _, answer) in enumerate(KAT_4x32_10):
            assert tuple(int(v) for v in got[:, lane]) == answer
    else:
        assert tuple(int(v) for v in got[:, 0]) == KAT_4x32_7_ZERO


def test_philox_4x64_with_64_bit_counters(backend, rng):
    """64-bit counter words select Philox-4x64, keyed by (seed, 0) as in Triton."""
    keys = [(0, 0), (0xFFFFFFFF, 0xFFFFFFFF)] + [tuple(int(v) for v in rng.integers(0, 1 << 32, 2))
                                               for _ in range(14)]
    counters = [(0,) * 4, ((1 << 64) - 1,) * 4] + [tuple(int(v) for v in rng.integers(0, 1 << 64, 4, dtype=np.uint64))
                                                 for _ in range(14)]
    got = _run_philox(backend, keys, counters, 10, np.int64)
    seeds64 = [k[0] | (k[1] << 32) for k in keys]
    expected = [ref.philox(c, (s, 0), variant=ref.PHILOX_4x64) for c, s in zip(counters, seeds64)]
    assert [tuple(int(v) for v in got[:, lane]) for lane in range(len(keys))] == expected
    assert expected[0] == KAT_4x64_10_ZERO


# ----------------------------------------------------------------------------- randint, rand, randn


@tilec.jit
def random_kernel(seed, offset_ptr, out_ptr, n, WHAT: tl.constexpr, N_ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    """Row r of out_ptr (rows of n) gets output r of the generator WHAT at offset_ptr's offsets."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    offset = tl.load(offset_ptr + offs, mask=mask, other=0)
    if WHAT == "randint4x":
        r0, r1, r2, r3 = tl.randint4x(seed, offset, N_ROUNDS)
        tl.static_assert(r0.dtype == tl.uint32)
    elif WHAT == "rand4x":
        r0, r1, r2, r3 = tl.rand4x(seed, offset, N_ROUNDS)
        tl.static_assert(r0.dtype == tl.float32)
    elif WHAT == "randn4x":
        r0, r1, r2, r3 = tl.randn4x(seed, offset, n_rounds=N_ROUNDS)
        tl.static_assert(r0.dtype == tl.float32)
    elif WHAT == "randint":
        r0 = tl.randint(seed, offset, N_ROUNDS)
        tl.static_assert(r0.dtype == tl.uint32)
    elif WHAT == "rand":
        r0 = tl.rand(seed, offset, n_rounds=N_ROUNDS)
    else:
        r0 = tl.randn(seed, offset, N_ROUNDS)
    tl.store(out_ptr + offs, r0, mask=mask)
    if WHAT == "randint4x" or WHAT == "rand4x" or WHAT == "randn4x":
        tl.store(out_ptr + n + offs, r1, mask=mask)
        tl.store(out_ptr + 2 * n + offs, r2, mask=mask)
        tl.store(out_ptr + 3 * n + offs, r3, mask=mask)


N = 1000  # not a multiple of the block: the last program is masked
BLOCK = 128  # small blocks compile fast
ROWS = {"randint4x": 4, "rand4x": 4, "randn4x": 4, "randint": 1, "rand": 1, "randn": 1}


def _offsets(dtype, seed: int = 0) -> np.ndarray:
    """N offsets of `dtype`: the extremes, small ones, and random values of the full range."""
    info = np.iinfo(dtype)
    special = [0, 1, 2, 3, -1, info.min, info.max, info.min + 1, 1 << 20]
    if info.bits == 64:
        special += [1 << 32, (1 << 32) + 1, (1 << 32) - 1, -(1 << 32), 5 << 40]
    rng = np.random.default_rng(seed)
    rest = rng.integers(info.min, info.max, N - len(special) - 64, dtype=dtype, endpoint=True)
    return np.concatenate([np.array(special, dtype), np.arange(64, dtype=dtype) + 100, rest]).astype(dtype)


def _run(backend, what, seed, offsets, rounds=10):
    """The generator's outputs: uint32 (rows, N) for randint*, float32 otherwise."""
    integer = what.startswith("randint")
    poison = np.full(ROWS[what] * N, POISON if integer else np.nan, np.int32 if integer else np.float32)
    out = device_array(poison, backend)
    random_kernel[(tilec.cdiv(N, BLOCK),)](seed, device_array(offsets, backend), out, N, WHAT=what,
                                         N_ROUNDS=rounds, BLOCK=BLOCK)
    got = to_numpy(out).reshape(ROWS[what], N)
    return got.view(np.uint32) if integer else got


# Seeds passed as kernel arguments: int32 (zero, positive, negative: sign-extended to 64
# bits), 1 (specialised to a constant), int64 (a high word, a negative value) and uint64
# (above 2**63); with int32 and int64 offsets.
SEED_CASES = [
    (0, np.int32), (42, np.int64), (-7, np.int32), (1, np.int64), ((1 << 32) + 3, np.int32),
    (-0x2152411021524111, np.int64), (0xDEADBEEF12345678, np.int64), ((1 << 64) - 3, np.int32),
]


@pytest.mark.parametrize("seed,offset_dtype", SEED_CASES)
def test_randint4x_matches_reference(backend, seed, offset_dtype):
    offsets = _offsets(offset_dtype, seed & 0xFFFF)
    got = _run(backend, "randint4x", seed, offsets)
    np.testing.assert_array_equal(got, ref.randint4x(seed, offsets.tolist(), np.iinfo(offset_dtype).bits))


# One seed and offset type for the derived generators (their Philox part is the above).
SEED, OFFSET_DTYPE = -123456789, np.int64


@pytest.fixture(scope="module")
def reference_outputs():
    offsets = _offsets(OFFSET_DTYPE, 5)
    words = ref.randint4x(SEED, offsets.tolist(), 64)
    uniforms = ref.uniform(words)
    normals = np.stack(ref.box_muller(uniforms[0], uniforms[1]) + ref.box_muller(uniforms[2], uniforms[3]))
    return offsets, words, uniforms, normals


@pytest.mark.parametrize("what", ["randint", "rand", "rand4x", "randn", "randn4x"])
def test_generator_matches_reference(backend, reference_outputs, what):
    """randint is randint4x's first word; rand(4x) maps the words exactly (bit for bit);
    randn(4x) is Box-Muller of those uniforms, to fp32 accuracy. Also loose checks of the
    distributions' shapes."""
    offsets, words, uniforms, normals = reference_outputs
    got = _run(backend, what, SEED, offsets)
    rows = ROWS[what]
    if what == "randint":
        np.testing.assert_array_equal(got, words[:1])
    elif what in ("rand", "rand4x"):
        np.testing.assert_array_equal(got, uniforms[:rows])
        assert got.min() >= 0.0 and got.max() < 1.0
    else:
        np.testing.assert_allclose(got, normals[:rows], rtol=1e-5, atol=1e-5)
    # Loose sanity of the distributions (4000 samples for the 4x variants).
    values = got.ravel()
    if what == "rand4x":
        assert abs(values.mean() - 0.5) < 0.02 and abs(values.var() - 1 / 12) < 0.01
        counts = np.histogram(values, bins=10, range=(0, 1))[0]
        assert counts.min() > 0.8 * len(values) / 10 and counts.max() < 1.2 * len(values) / 10
    if what == "randn4x":
        assert np.isfinite(values).all()
        assert abs(values.mean()) < 0.06 and abs(values.var() - 1) < 0.08
        assert abs(np.mean(np.abs(values) < 1) - 0.6827) < 0.03


def test_n_rounds_7(backend):
    offsets = _offsets(np.int64, 7)
    got = _run(backend, "randint4x", 1234, offsets, rounds=7)
    np.testing.assert_array_equal(got, ref.randint4x(1234, offsets.tolist(), 64, rounds=7))
    assert not np.array_equal(got, ref.randint4x(1234, offsets.tolist(), 64, rounds=10))


def test_determinism_and_independence(backend):
    offsets = np.arange(N, dtype=np.int32)
    first = _run(backend, "randint4x", 2024, offsets)
    np.testing.assert_array_equal(_run(backend, "randint4x", 2024, offsets), first)  # same seed, offsets: same
    assert len(np.unique(first)) == 4 * N                    # different offsets and words differ
    other_seed = _run(backend, "randint4x", 2025, offsets)
    assert np.mean(other_seed == first) < 0.01                # another seed: another stream
    # Only offsets wider than 32 bits have a high counter word: int32 -1 and int64 2**32 - 1
    # are the same counter, int64 -1 is another.
    narrow = ref.randint4x(2024, [-1], 32)
    assert np.array_equal(narrow, ref.randint4x(2024, [(1 << 32) - 1], 64))
    assert not np.array_equal(narrow, ref.randint4x(2024, [-1], 64))


# ----------------------------------------------------------------------------- mappings


@tilec.jit
def uniform_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.uint_to_uniform_float(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("dtype", [np.int32, np.uint64])
def test_uint_to_uniform_float(backend, rng, dtype):
    """The edges of the mapping: 0 and -1 go to 0, MAX and MIN to the largest value below 1."""
    info = np.iinfo(dtype)
    bits = info.bits
    top = 1 << bits  # edges[i] and edges[i + 5] fold to the same value: v and -v - 1
    edges = [0, 1, 2, (1 << (bits - 1)) - 1, 12345, top - 1, top - 2, top - 3, 1 << (bits - 1), top - 12346]
    words = np.array(edges + [int(v) for v in rng.integers(0, 1 << 62, 64 - len(edges))], np.uint64)
    words = (words & np.uint64((1 << bits) - 1)).astype(f"uint{bits}").view(dtype)
    out = device_array(np.full(64, np.nan, np.float32), backend)
    uniform_kernel[(1,)](device_array(words, backend), out, BLOCK=64)
    got = to_numpy(out)
    expected = ref.uniform(words.view(f"uint{bits}"), bits)
    np.testing.assert_array_equal(got, expected)
    below_one = np.nextafter(np.float32(1), np.float32(0)) if bits == 32 else np.float32(1 - 2.0 ** -23)
    np.testing.assert_array_equal(got[:5], got[5:10])          # v and -v - 1 agree
    assert got[0] == 0 and got[3] == below_one                # 0 and -1 give 0; MAX and MIN the top
    assert got[1] > 0 and got[2] == 2 * got[1]
    assert (got >= 0).all() and (got < 1).all()


@tilec.jit
def scalar_offset_kernel(seed, out_ptr):
    """Scalar offsets: the program id (int32) and a 64-bit one with a high word."""
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.randint(seed, pid))
    tl.store(out_ptr + tl.num_programs(0) + pid, tl.randint(seed, pid.to(tl.int64) + (3 << 32)))


def test_scalar_offsets(backend):
    programs = 4
    out = device_array(np.full(2 * programs, POISON, np.int32), backend)
    scalar_offset_kernel[(programs,)](99, out)
    got = to_numpy(out).view(np.uint32)
    np.testing.assert_array_equal(got[:programs], ref.randint4x(99, range(programs), 32)[0])
    np.testing.assert_array_equal(got[programs:], ref.randint4x(99, [p + (3 << 32) for p in range(programs)], 64)[0])


@tilec.jit
def normal_kernel(u_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    n0, n1 = tl.pair_uniform_to_normal(tl.load(u_ptr + offs), tl.load(u_ptr + BLOCK + offs))
    tl.store(out_ptr + offs, n0)
    tl.store(out_ptr + BLOCK + offs, n1)


def test_pair_uniform_to_normal(backend, rng):
    """Box-Muller, with u1 clamped at 1e-7 (so u1 = 0 stays finite) and the angle 2 pi u2."""
    u1 = np.concatenate([[0.0, 1e-9, 5e-8, 1e-7, 3e-7, 1e-6, 0.5, 0.5, 0.5, 0.5, np.float32(1 - 2.0 ** -24)],
                         rng.random(21)]).astype(np.float32)
    u2 = np.concatenate([[0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.0, 0.25, 0.5, 0.75, 0.1],
                         rng.random(21)]).astype(np.float32)
    out = device_array(np.full(64, np.nan, np.float32), backend)
    normal_kernel[(1,)](device_array(np.concatenate([u1, u2]), backend), out, BLOCK=32)
    got = to_numpy(out).reshape(2, 32)
    expected = np.stack(ref.box_muller(u1, u2))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[:, 0], got[:, 3])       # u1 below 1e-7 acts as 1e-7
    assert got[0, 4] != got[0, 3]
