"""wgmma shared-memory descriptors (tilec.layout.shared.wgmma_descriptor_fields), checked
against a model of the PTX ISA's canonical operand layouts written here: for every
element an instruction reads, the address the hardware forms from the descriptor (start
address, leading and stride byte offsets, then the swizzle applied to the address bits)
must be where tilec's NVMMA shared layout put that element."""
from __future__ import annotations

import itertools

import pytest

from tilec.layout.shared import (NVMMASharedEncoding, WgmmaDescriptorFields, shared_byte_offset,
                                 wgmma_descriptor_fields)


def swizzle(address: int, swizzle_bytes: int) -> int:
    """The hardware swizzle: 16-byte chunk bits [4, 4+b) XOR address bits [7, 7+b),
    b = log2(swizzle_bytes / 16)."""
    if not swizzle_bytes:
        return address
    mask = swizzle_bytes // 16 - 1
    return address ^ (((address >> 7) & mask) << 4)


def canonical(mn: int, k: int, f: WgmmaDescriptorFields, element_bytes: int, swizzle_bytes: int) -> int:
    """The unswizzled byte offset of element (mn, k) of one instruction's operand tile
    from its start address (PTX ISA, "Shared Memory Matrix Layout")."""
    per_chunk = 16 // element_bytes
    if f.k_major:
        if not swizzle_bytes:  # core matrices of 8 rows x 16 bytes
            return (mn // 8) * f.stride_byte_offset + (k // per_chunk) * f.leading_byte_offset \
                + (mn % 8) * 16 + (k % per_chunk) * element_bytes
        return (mn // 8) * f.stride_byte_offset + (mn % 8) * swizzle_bytes + k * element_bytes
    if not swizzle_bytes:  # M/N-major core matrices: the offsets' roles are swapped
        return (mn // per_chunk) * f.stride_byte_offset + (k // 8) * f.leading_byte_offset \
            + (k % 8) * 16 + (mn % per_chunk) * element_bytes
    per_row = swizzle_bytes // element_bytes
    return (mn // per_row) * f.leading_byte_offset + (k // 8) * f.stride_byte_offset + (k % 8) * swizzle_bytes \
        + (mn % per_row) * element_bytes


CASES = [
    # (swizzle bytes, element bits, transposed, shape, k_axis, rows of MN one instruction reads)
    (128, 16, False, (128, 64), 1, 64),    # A [M, K], K-major, BK = 64 f16 = one 128-byte row
    (128, 16, False, (64, 128), 1, 64),    # K = 128: two column blocks
    (128, 16, True, (64, 256), 0, 256),    # B [K, N] with K contiguous (transposed): K-major
    (128, 16, False, (64, 128), 0, 128),   # B [K, N] row-major (N contiguous): N-major, 2 blocks
    (64, 16, False, (64, 32), 1, 64),
    (32, 16, False, (64, 16), 1, 64),
    (0, 16, False, (64, 16), 1, 64),
    (128, 8, False, (64, 128), 1, 64),     # 8-bit operands: K = 32 per instruction
    (128, 32, False, (64, 32), 1, 64),     # tf32: K = 8 per instruction
    (64, 16, True, (32, 128), 0, 128),
    (0, 16, True, (32, 64), 0, 64),
]


@pytest.mark.parametrize("swizzle_bytes, bits, transposed, shape, k_axis, rows", CASES)
def test_descriptor_addresses_match_the_layout(swizzle_bytes, bits, transposed, shape, k_axis, rows):
    encoding = NVMMASharedEncoding(swizzle_bytes, bits, transposed)
    try:
        fields = wgmma_descriptor_fields(encoding, shape, k_axis)
    except ValueError:
        pytest.skip("shape narrower than one swizzle row")
    element_bytes = bits // 8
    instr_k = 32 // element_bytes  # one instruction reads 32 bytes of K
    mn_axis = 1 - k_axis
    checked = 0
    for mn0, k0 in itertools.product(range(0, shape[mn_axis], rows), range(0, shape[k_axis], instr_k)):
        start_coords = [0, 0]
        start_coords[mn_axis], start_coords[k_axis] = mn0, k0
        start = shared_byte_offset(encoding, shape, start_coords, bits)
        for mn, k in itertools.product(range(rows), range(instr_k)):
            coords = [0, 0]
            coords[mn_axis], coords[k_axis] = mn0 + mn, k0 + k
            want = shared_byte_offset(encoding, shape, coords, bits)
            got = swizzle(start + canonical(mn, k, fields, element_bytes, swizzle_bytes), swizzle_bytes)
            assert got == want, (coords, got, want, fields)
            checked += 1
    assert checked == shape[0] * shape[1]


def test_descriptor_encoding():
    fields = WgmmaDescriptorFields(leading_byte_offset=16, stride_byte_offset=1024, swizzle_mode=1, k_major=True)
    value = fields.encode(0x4400)
    assert value & 0x3FFF == 0x4400 >> 4
    assert (value >> 16) & 0x3FFF == 1 and (value >> 32) & 0x3FFF == 64 and value >> 62 == 1


def test_descriptor_fields_for_the_common_cases():
    # A tile [128, 64] of f16, K-major, 128-byte swizzle: 8-row groups 1024 bytes apart.
    a = wgmma_descriptor_fields(NVMMASharedEncoding(128, 16), (128, 64), 1)
    assert (a.k_major, a.stride_byte_offset, a.swizzle_mode) == (True, 1024, 1)
    # B tile [64, 256] of f16 stored row-major (N contiguous): N-major, 8 rows of K 1024
    # bytes apart, 64-column blocks 64 rows x 128 bytes apart.
    b = wgmma_descriptor_fields(NVMMASharedEncoding(128, 16, transposed=False), (64, 256), 0)
    assert (b.k_major, b.stride_byte_offset, b.leading_byte_offset) == (False, 1024, 64 * 128)
