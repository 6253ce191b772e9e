"""The device pool of TMA tensor maps (`tma._Pool`), run against a stand-in for the driver:
slots are handed out in chunks allocated as they are first needed, a map already in the
pool costs no copy, and only a pool holding its maximum starts over (after synchronising
the device), reusing its chunks and bumping the generation so that remembered addresses
are looked up again."""
from __future__ import annotations

import contextlib

import pytest

from tilec.runtime import driver, tma


class FakeDriver:
    """Records the driver calls the pool makes; device memory is addresses only."""

    def __init__(self):
        self.calls: list[tuple] = []
        self.next_address = 0x7000_0000

    def call(self, name: str, *args):
        self.calls.append((name, *args))
        if name == "cuMemAlloc":
            address, self.next_address = self.next_address, self.next_address + 2 * args[0]
            return address
        return None

    def count(self, name: str) -> int:
        return sum(1 for call in self.calls if call[0] == name)


@pytest.fixture
def fake(monkeypatch):
    fake = FakeDriver()
    monkeypatch.setattr(driver, "_call", fake.call)
    monkeypatch.setattr(driver, "using_device", lambda device: contextlib.nullcontext(device))
    monkeypatch.setattr(tma, "_CHUNK_SLOTS", 4)
    monkeypatch.setattr(tma, "_POOL_SLOTS", 12)
    return fake


def _encode(n: int):
    return lambda: bytes([n % 256]) * tma._MAP_BYTES


def test_chunks_are_allocated_as_slots_are_needed(fake):
    pool = tma._Pool(device=0)
    assert fake.count("cuMemAlloc") == 0  # nothing before the first map
    addresses = [pool.address_of(("map", n), _encode(n)) for n in range(9)]
    assert fake.count("cuMemAlloc") == 3  # 4 + 4 + 1 slots used
    assert all(call[1] == 4 * tma._MAP_BYTES for call in fake.calls if call[0] == "cuMemAlloc")
    assert len(set(addresses)) == 9
    chunks = [call for call in fake.calls if call[0] == "cuMemAlloc"]
    for n, address in enumerate(addresses):  # slot n: chunk n // 4, place n % 4
        assert address == pool.chunks[n // 4] + (n % 4) * tma._MAP_BYTES
    copies = [call for call in fake.calls if call[0] == "cuMemcpyHtoD"]
    assert [call[1] for call in copies] == addresses and all(call[2] == _encode(n)() for n, call in enumerate(copies))
    assert len(chunks) == len(pool.chunks)


def test_a_map_already_in_the_pool_costs_no_copy(fake):
    pool = tma._Pool(device=0)
    first = pool.address_of(("a",), _encode(1))
    before = list(fake.calls)
    assert pool.address_of(("a",), _encode(2)) == first
    assert fake.calls == before


def test_only_a_full_pool_starts_over(fake):
    pool = tma._Pool(device=0)
    generation = tma._GENERATION
    addresses = [pool.address_of(("map", n), _encode(n)) for n in range(12)]
    assert tma._GENERATION == generation and fake.count("cuMemAlloc") == 3
    syncs = fake.count("cuCtxSynchronize")
    again = pool.address_of(("map", 12), _encode(12))  # the 13th map: the pool starts over
    assert tma._GENERATION == generation + 1
    assert fake.count("cuCtxSynchronize") == syncs + 2  # before overwriting, and after the copy
    assert fake.count("cuMemAlloc") == 3 and again == addresses[0]  # its chunks are reused
    assert pool.address_of(("map", 0), _encode(0)) == addresses[1]  # an old map is a new slot now
