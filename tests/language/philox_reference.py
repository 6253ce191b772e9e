"""An independent reference for tl.random: Philox with Python integers, and the mappings
Triton's random module applies on top of it, written from the published algorithm
(Salmon et al., SC'11, and the Random123 library) without tilec.

Everything works on Python ints (exact, no overflow), one element at a time.
"""
from __future__ import annotations

import math

import numpy as np

# (bits per word, round multipliers M0 and M1, key increments W0 and W1)
PHILOX_4x32 = (32, 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85)
PHILOX_4x64 = (64, 0xD2E7470EE14C6C93, 0xCA5A826395121157, 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)


def philox(counter, key, rounds=10, variant=PHILOX_4x32):
    """Philox-4xW-`rounds` of a 4-word counter under a 2-word key: the 4 output words."""
    bits, m0, m1, w0, w1 = variant
    mask = (1 << bits) - 1
    x0, x1, x2, x3 = (int(v) & mask for v in counter)
    k0, k1 = (int(v) & mask for v in key)
    for round_index in range(rounds):
        if round_index > 0:  # the key is bumped between rounds
            k0 = (k0 + w0) & mask
            k1 = (k1 + w1) & mask
        product0 = m0 * x0  # exact double-width products
        product1 = m1 * x2
        x0, x1, x2, x3 = ((product1 >> bits) ^ x1 ^ k0, product1 & mask,
                          (product0 >> bits) ^ x3 ^ k1, product0 & mask)
    return x0, x1, x2, x3


def key_of_seed(seed: int) -> tuple[int, int]:
    """Triton's key: the seed as a 64-bit two's complement number, split (low, high)."""
    seed &= (1 << 64) - 1
    return seed & 0xFFFFFFFF, seed >> 32


def counter_of_offset(offset: int, offset_bits: int) -> tuple[int, int, int, int]:
    """Triton's counter: (low word, high word if the offset type is wider than 32 bits, 0, 0)."""
    low = offset & 0xFFFFFFFF
    high = (offset >> 32) & 0xFFFFFFFF if offset_bits > 32 else 0
    return low, high, 0, 0


def randint4x(seed: int, offsets, offset_bits: int = 32, rounds: int = 10) -> np.ndarray:
    """uint32 array of shape (4, len(offsets)): the four words of each offset's block."""
    key = key_of_seed(seed)
    words = [philox(counter_of_offset(int(o), offset_bits), key, rounds) for o in offsets]
    return np.array(words, dtype=np.uint64).T.astype(np.uint32).reshape(4, len(words))


def uniform(words, bits: int = 32) -> np.ndarray:
    """Random words to fp32 in [0, 1), as Triton: read the word as signed, fold negative
    values onto non-negative ones (v -> -v - 1), convert to fp32 (nearest even), multiply
    by the fp32 scale, rounding the exact product once to fp32."""
    scale = float(np.float32(4.6566127342e-10 if bits == 32 else 1.0842020432385337e-19))
    shape = np.shape(words)
    out = []
    for w in np.asarray(words).ravel().tolist():
        w = int(w) & ((1 << bits) - 1)
        signed = w - (1 << bits) if w >= (1 << (bits - 1)) else w
        folded = -signed - 1 if signed < 0 else signed
        # Both factors have 24-bit significands: their double product is exact.
        out.append(np.float32(float(_int_to_f32(folded)) * scale))
    return np.array(out, dtype=np.float32).reshape(shape)


def _int_to_f32(value: int) -> np.float32:
    """A non-negative int rounded to fp32 (nearest, ties to even), exactly, whatever its size."""
    shift = max(value.bit_length() - 24, 0)
    mantissa, rest = value >> shift, value & ((1 << shift) - 1)
    if shift and (rest > (1 << (shift - 1)) or (rest == (1 << (shift - 1)) and mantissa & 1)):
        mantissa += 1
    return np.float32(math.ldexp(mantissa, shift))


def box_muller(u1: np.ndarray, u2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 Box-Muller of fp32 uniforms, with u1 clamped at fp32(1e-7)."""
    u1 = np.maximum(np.float64(np.float32(1e-7)), u1.astype(np.float64))
    radius = np.sqrt(-2.0 * np.log(u1))
    angle = 2.0 * math.pi * u2.astype(np.float64)
    return radius * np.cos(angle), radius * np.sin(angle)
