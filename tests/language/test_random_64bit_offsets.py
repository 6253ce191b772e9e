"""tl.randint / randint4x / rand with 64-bit offsets run Philox-4x64, as Triton does.

A 64-bit offset is the counter (offset, 0, 0, 0) of Philox-4x64-10 under the key
(seed as uint64, 0); the words are uint64. NumPy's own Philox bit generator (which is
Philox-4x64-10, and advances its counter before each block) is the independent oracle.
32-bit offsets keep Philox-4x32 and uint32 words.
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

import philox_reference as ref

N = 200
BLOCK = 64


@tilec.jit
def bits_kernel(seed, offset_ptr, out_ptr, n, FOUR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    offset = tl.load(offset_ptr + offs, mask=mask, other=0)
    if FOUR:
        r0, r1, r2, r3 = tl.randint4x(seed, offset)
        tl.static_assert(r0.dtype == tl.uint64)
        tl.store(out_ptr + offs, r0, mask=mask)
        tl.store(out_ptr + n + offs, r1, mask=mask)
        tl.store(out_ptr + 2 * n + offs, r2, mask=mask)
        tl.store(out_ptr + 3 * n + offs, r3, mask=mask)
    else:
        r0 = tl.randint(seed, offset)
        tl.static_assert(r0.dtype == tl.uint64)
        tl.store(out_ptr + offs, r0, mask=mask)


def numpy_philox4x64(seed: int, offset: int) -> list[int]:
    """The Philox-4x64-10 block of counter (offset, 0, 0, 0) under key (seed, 0), by NumPy."""
    mask = (1 << 64) - 1
    # NumPy adds 1 to its 256-bit counter before computing a block: start one below.
    before = ((offset & mask) - 1) % (1 << 256)
    counter = np.array([(before >> (64 * word)) & mask for word in range(4)], np.uint64)
    generator = np.random.Philox(key=np.array([seed & mask, 0], np.uint64), counter=counter)
    return [int(v) for v in generator.random_raw(4)]


def test_numpy_oracle_agrees_with_the_reference():
    for seed, offset in [(0, 0), (42, 1), (-1, (1 << 63) + 5), (0x0000000FCAFEB0BA, 123456789)]:
        block = ref.randint4x(seed, [offset], 64)[:, 0]
        assert [int(v) for v in block] == numpy_philox4x64(seed, offset)


@pytest.mark.parametrize("offset_dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("seed", [0, 42, 0xFFFFFFFF, 0x0000000FCAFEB0BA, -3])
def test_randint4x_64bit_offsets_are_philox_4x64(backend, rng, offset_dtype, seed):
    info = np.iinfo(offset_dtype)
    special = np.array([0, 1, info.max, info.min, (1 << 32) - 1, 1 << 32], offset_dtype)
    offsets = np.concatenate([special, rng.integers(info.min, info.max, N - len(special), dtype=offset_dtype,
                                                    endpoint=True)]).astype(offset_dtype)
    out = device_array(np.full(4 * N, 0x5A5A5A5A5A5A5A5A, np.int64), backend)
    bits_kernel[(tilec.cdiv(N, BLOCK),)](seed, device_array(offsets, backend), out, N, FOUR=True, BLOCK=BLOCK)
    got = to_numpy(out).view(np.uint64).reshape(4, N)
    want = ref.randint4x(seed, offsets.tolist(), 64)
    np.testing.assert_array_equal(got, want)
    for lane in (0, 2, N - 1):  # spot checks against NumPy's Philox
        assert [int(v) for v in got[:, lane]] == numpy_philox4x64(seed, int(offsets[lane]))


def test_randint_64bit_offsets_with_a_constexpr_seed(backend, rng):
    """The first word of randint4x; a seed given as a constant takes the same path."""
    offsets = rng.integers(-(1 << 62), 1 << 62, N, dtype=np.int64)
    out = device_array(np.full(N, 0x5A5A5A5A5A5A5A5A, np.int64), backend)
    bits_kernel[(tilec.cdiv(N, BLOCK),)](tl.constexpr(124), device_array(offsets, backend), out, N, FOUR=False,
                                         BLOCK=BLOCK)
    np.testing.assert_array_equal(to_numpy(out).view(np.uint64), ref.randint4x(124, offsets.tolist(), 64)[0])


@tilec.jit
def uniform_kernel(seed, offset_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    u = tl.rand(seed, tl.load(offset_ptr + offs, mask=mask, other=0))
    tl.static_assert(u.dtype == tl.float32)
    tl.store(out_ptr + offs, u, mask=mask)


def test_rand_64bit_offsets_maps_the_64bit_word(backend, rng):
    offsets = rng.integers(0, 1 << 63, N, dtype=np.int64)
    out = device_array(np.full(N, np.nan, np.float32), backend)
    uniform_kernel[(tilec.cdiv(N, BLOCK),)](77, device_array(offsets, backend), out, N, BLOCK=BLOCK)
    got = to_numpy(out)
    np.testing.assert_array_equal(got, ref.uniform(ref.randint4x(77, offsets.tolist(), 64)[0], 64))
    assert got.min() >= 0.0 and got.max() < 1.0


@tilec.jit
def narrow_kernel(seed, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    r = tl.randint(seed, offs)  # int32 offsets: Philox-4x32
    tl.static_assert(r.dtype == tl.uint32)
    tl.store(out_ptr + offs, r)


def test_32bit_offsets_keep_philox_4x32(backend):
    out = device_array(np.full(BLOCK, 0x5A5A5A5A, np.int32), backend)
    narrow_kernel[(1,)](0x0000000FCAFEB0BA, out, BLOCK=BLOCK)
    np.testing.assert_array_equal(to_numpy(out).view(np.uint32),
                                  ref.randint4x(0x0000000FCAFEB0BA, range(BLOCK), 32)[0])
