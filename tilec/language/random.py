"""Random numbers in kernels: the Philox counter-based generator, as `triton.language.random`.

Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as
1, 2, 3", SC'11) turns a 128-bit counter and a 64-bit key into 128 random bits. It is
stateless: the same (seed, offset) always gives the same numbers, on any backend, so a
kernel can draw the random numbers of element `i` from offset `i` alone.

Conventions, chosen to give the same bits as Triton 3.x for the same arguments:

- the seed (any integer type, or a Python int) is first converted to uint64 (signed
  types sign-extend: seed -1 is 0xFFFF_FFFF_FFFF_FFFF); its low 32 bits are the key
  word k0, its high 32 bits k1;
- `randint4x(seed, offset)` runs Philox on the counter (c0, c1, c2, c3) =
  (low 32 bits of offset, high 32 bits of offset or 0, 0, 0). Only offsets of more than
  32 bits contribute a high word: an int32 offset of -1 is the counter
  (0xFFFF_FFFF, 0, 0, 0), while an int64 offset of -1 is (0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0);
- the outputs are uint32 tensors, the four words of the Philox block in order;
  `randint` returns the first word;
- each round computes, with M0 = 0xD2511F53 and M1 = 0xCD9E8D57,
  (c0, c1, c2, c3) <- (hi(M1*c2) ^ c1 ^ k0, lo(M1*c2), hi(M0*c0) ^ c3 ^ k1, lo(M0*c0)),
  then advances the key by the Weyl increments (0x9E3779B9, 0xBB67AE85);
- `uint_to_uniform_float` reads the word as a signed integer, folds negative values
  onto the non-negative ones with a bitwise NOT (x < 0 -> -x - 1, so INT_MIN -> INT_MAX),
  converts to fp32 and multiplies by the fp32 constant (1 - 2**-24) * 2**-31 (for 64-bit
  words (1 - 2**-23) * 2**-63), so the result lies in [0, 1), 1 excluded even after rounding;
- `randn` uses the Box-Muller transform of the first two uniforms (u1 clamped below
  at 1e-7): sqrt(-2 ln u1) * cos(2 pi u2); `randn4x` also returns the sine halves.

`philox` also accepts 64-bit counters, as Triton's does: then it runs Philox-4x64 with
the 64-bit seed as k0 and k1 = 0.
"""
from __future__ import annotations

import tilec.language as tl  # (still loading when this module is imported; read only inside kernels)

from .core import builtin, current_semantic, library_function

__all__ = ["pair_uniform_to_normal", "philox", "philox_impl", "rand", "rand4x", "randint", "randint4x", "randn",
           "randn4x", "uint_to_uniform_float"]

N_ROUNDS_DEFAULT = 10  # rounds of Philox; 10 is the published (crush-resistant) choice

# Philox-4x32 round multipliers and key (Weyl sequence) increments (annotated tl.constexpr:
# kernels read only constant globals).
PHILOX32_M0: tl.constexpr = 0xD2511F53
PHILOX32_M1: tl.constexpr = 0xCD9E8D57
PHILOX32_W0: tl.constexpr = 0x9E3779B9
PHILOX32_W1: tl.constexpr = 0xBB67AE85
# The same for Philox-4x64 (64-bit counters).
PHILOX64_M0: tl.constexpr = 0xD2E7470EE14C6C93
PHILOX64_M1: tl.constexpr = 0xCA5A826395121157
PHILOX64_W0: tl.constexpr = 0x9E3779B97F4A7C15
PHILOX64_W1: tl.constexpr = 0xBB67AE8584CAA73B

# uint_to_uniform_float's scales, as fp32: (1 - 2**-24) * 2**-31 (the largest fp32 below
# 2**-31; the decimal rounds to it) and (1 - 2**-23) * 2**-63, so that the largest folded
# word, which converts to 2**31 (2**63) in fp32, still maps below 1.0.
UNIFORM_SCALE_32: tl.constexpr = 4.6566127342e-10
UNIFORM_SCALE_64: tl.constexpr = 1.0842020432385337e-19


@builtin
def _as_tensor(value):
    """`value` if it is a tensor; a Python number (or constexpr) becomes a constant of its own type."""
    return current_semantic().to_tensor(value)


@library_function
def _umulhi(a, b):
    """The high word of the unsigned product a * b, for `b` a uint32 or uint64 tensor and
    `a` a constant or a tensor of the same type."""
    tl.static_assert((b.dtype == tl.uint32) or (b.dtype == tl.uint64), "_umulhi: expected uint32 or uint64 operands")
    return tl.umulhi(b, a)


@library_function
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """`n_rounds` rounds of Philox on the counter (c0, c1, c2, c3) with the key (k0, k1).

    All six are uint32 tensors (Philox-4x32) or all uint64 tensors (Philox-4x64); the
    result is the four words of the output block, of that type.
    """
    if c0.dtype == tl.uint32:
        m0 = PHILOX32_M0
        m1 = PHILOX32_M1
        w0 = PHILOX32_W0
        w1 = PHILOX32_W1
    else:
        tl.static_assert(c0.dtype == tl.uint64, "philox_impl: the counter must be uint32 or uint64")
        m0 = PHILOX64_M0
        m1 = PHILOX64_M1
        w0 = PHILOX64_W0
        w1 = PHILOX64_W1
    for _ in tl.static_range(n_rounds):
        old0 = c0
        old2 = c2
        c0 = _umulhi(m1, old2) ^ c1 ^ k0
        c2 = _umulhi(m0, old0) ^ c3 ^ k1
        c1 = old2 * m1  # the low words wrap, as unsigned arithmetic does
        c3 = old0 * m0
        k0 = k0 + w0
        k1 = k1 + w1
    return c0, c1, c2, c3


@library_function
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Philox of the counter (c0, c1, c2, c3) under `seed`: four uint32 tensors.

    The counter words are reinterpreted (bitcast) as unsigned; 32-bit words give
    Philox-4x32 with key (low, high) 32 bits of the seed, 64-bit words Philox-4x64 with
    key (seed, 0).
    """
    seed = _as_tensor(seed)
    tl.static_assert(seed.dtype.is_int(), "philox: the seed must be an integer")
    seed = seed.to(tl.uint64)
    c0 = _as_tensor(c0)
    c1 = _as_tensor(c1)
    c2 = _as_tensor(c2)
    c3 = _as_tensor(c3)
    if c0.dtype.primitive_bitwidth == 32:
        word = tl.uint32
        key_lo = (seed & 0xFFFFFFFF).to(tl.uint32)
        key_hi = (seed >> 32).to(tl.uint32)
    else:
        tl.static_assert(c0.dtype.primitive_bitwidth == 64, "philox: counter words must have 32 or 64 bits")
        word = tl.uint64
        key_lo = seed
        key_hi = tl.full((1,), 0, tl.uint64)  # a one-element block, as in Triton
    return philox_impl(c0.to(word, bitcast=True), c1.to(word, bitcast=True), c2.to(word, bitcast=True),
                       c3.to(word, bitcast=True), key_lo, key_hi, n_rounds)


@library_function
def randint4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for `seed` (a scalar) and the block `offset`.

    This is the cheapest way to get random bits: one Philox evaluation gives all four.
    """
    offset = _as_tensor(offset)
    low = offset.to(tl.uint32)
    zero = low * 0
    if offset.dtype.primitive_bitwidth > 32:
        high = (offset >> 32).to(tl.uint32)
    else:
        high = zero
    return philox(seed, low, high, zero, zero, n_rounds)


@library_function
def randint(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of random uint32 for `seed` and `offset`: the first word of randint4x."""
    first, _, _, _ = randint4x(seed, offset, n_rounds)
    return first


@library_function
def uint_to_uniform_float(x):
    """Random 32- or 64-bit integers (signed or not) to fp32 uniform in [0, 1)."""
    if x.dtype == tl.uint32 or x.dtype == tl.int32:
        x = x.to(tl.int32, bitcast=True)
        scale = UNIFORM_SCALE_32
    else:
        tl.static_assert(x.dtype == tl.uint64 or x.dtype == tl.int64,
                         "uint_to_uniform_float: expected a 32- or 64-bit integer")
        x = x.to(tl.int64, bitcast=True)
        scale = UNIFORM_SCALE_64
    folded = tl.where(x < 0, ~x, x)  # ~x == -x - 1: [MIN, -1] maps onto [0, MAX] one to one
    return folded * scale


@library_function
def rand(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of fp32 uniform in [0, 1) for `seed` and `offset`."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@library_function
def rand4x(seed, offsets, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of fp32 uniform in [0, 1), from the four words of randint4x."""
    r0, r1, r2, r3 = randint4x(seed, offsets, n_rounds)
    return (uint_to_uniform_float(r0), uint_to_uniform_float(r1), uint_to_uniform_float(r2),
            uint_to_uniform_float(r3))


@library_function
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two independent uniforms in [0, 1) to two independent standard normals."""
    u1 = tl.maximum(1.0e-7, u1)  # keeps log finite
    angle = 6.283185307179586 * u2
    radius = tl.sqrt(-2.0 * tl.log(u1))
    return radius * tl.cos(angle), radius * tl.sin(angle)


@library_function
def randn(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of fp32 standard normal numbers for `seed` and `offset`."""
    r0, r1, _, _ = randint4x(seed, offset, n_rounds)
    normal, _ = pair_uniform_to_normal(uint_to_uniform_float(r0), uint_to_uniform_float(r1))
    return normal


@library_function
def randn4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of fp32 standard normal numbers, from the four uniforms of rand4x."""
    u0, u1, u2, u3 = rand4x(seed, offset, n_rounds)
    n0, n1 = pair_uniform_to_normal(u0, u1)
    n2, n3 = pair_uniform_to_normal(u2, u3)
    return n0, n1, n2, n3
