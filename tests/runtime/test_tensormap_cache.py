"""`tma.KernelTensorMaps`: the tensor maps of descriptors a kernel makes
(`tl.make_tensor_descriptor` of its parameters), remembered per loaded kernel so that a
launch of the same tensors and sizes costs one lookup, not the recipes' checks.

Without a GPU: the device's cache of encoded maps is replaced by one that hands out
distinct bytes per map key and counts its lookups, so a test sees which map each launch
gets and whether the recipes were read again. The GPU test launches one compiled kernel
with tensors of several addresses, shapes and strides. Also the cache itself: one
encoding per map, a bounded size.
"""
from __future__ import annotations

import ctypes
import threading
import types

import numpy as np
import pytest

import tilec
from tilec.errors import LaunchError
from tilec.runtime import specialize, tma
from tilec.runtime.kernel import LoadedKernel
from tilec_testing import assert_block_written, device_array, to_numpy, descriptor_scale_kernel as scale_kernel

DEVICE = 7  # a device no other test has a cache for

# Two descriptors as scale_kernel (tilec_testing.descriptor_scale_kernel) makes them:
# x [M, N] (row stride stride_x), out [M, N] (row stride stride_out); the values are
# (x_ptr, out_ptr, M, N, stride_x, stride_out).
RECIPES = (
    {"base": 0, "shape": [["arg", 2], ["arg", 3]], "strides": [["arg", 4], ["const", 1]], "block": [32, 32],
     "bytes": 4, "padding": "zero", "shape_bits": 32, "name": "x_ptr"},
    {"base": 1, "shape": [["arg", 2], ["arg", 3]], "strides": [["arg", 5], ["const", 1]], "block": [32, 64],
     "bytes": 4, "padding": "zero", "shape_bits": 32, "name": "out_ptr"},
)


class FakeCache:
    """A device's cache of maps without a device: distinct bytes per key, lookups counted."""

    def __init__(self):
        self.slots: dict[tuple, bytes] = {}
        self.lookups = 0
        self.lock = threading.Lock()

    def bytes_of(self, key: tuple, encode) -> bytes:
        with self.lock:
            self.lookups += 1
            return self.slots.setdefault(key, len(self.slots).to_bytes(8, "little") * 16)


class DeviceArray:
    """A GPU array as the slow launch path passes it: something with data_ptr()."""

    def __init__(self, address: int):
        self.address = address

    def data_ptr(self) -> int:
        return self.address


@pytest.fixture
def pool(monkeypatch):
    fake = FakeCache()
    monkeypatch.setitem(tma._CACHES, DEVICE, fake)
    return fake


def uncached(values) -> tuple[int, ...]:
    return tma.kernel_tensor_maps(RECIPES, values, DEVICE)


def test_same_maps_as_the_uncached_path(pool):
    maps = tma.KernelTensorMaps(RECIPES, DEVICE)
    for values in [(4096, 8192, 100, 64, 64, 80), (DeviceArray(4096), DeviceArray(8192), 100, 64, 64, 80),
                   (4096, 8192, (1 << 32) + 100, 64, 64, 80),  # M is int32 in the kernel: 100 rows
                   (4096, 1 << 40, 3, 16, 16, 16)]:
        assert maps(values) == uncached(values)
        assert maps(values) == uncached(values)  # remembered: still the same
    # An address given as an int and the array at that address describe one tensor.
    assert maps((4096, 8192, 100, 64, 64, 80)) == maps((DeviceArray(4096), DeviceArray(8192), 100, 64, 64, 80))
    # What the cache was asked for: exactly the maps' fields.
    assert (DEVICE, 4096, 4, (100, 64), (64, 1), (32, 32), "zero") in pool.slots
    assert (DEVICE, 8192, 4, (100, 64), (80, 1), (32, 64), "zero") in pool.slots


def test_a_launch_seen_before_reads_no_recipe(pool, monkeypatch):
    maps = tma.KernelTensorMaps(RECIPES, DEVICE)
    values = (4096, 8192, 100, 64, 64, 80)
    first = maps(values)
    lookups = pool.lookups

    def refuse(*args):
        raise AssertionError("the recipes were read again")
    monkeypatch.setattr(tma, "kernel_tensor_maps", refuse)
    assert maps(values) == first
    assert maps((DeviceArray(4096), DeviceArray(8192), 100, 64, 64, 80)) == first
    assert maps([4096, 8192, 100, 64, 64, 80]) == first  # a list of the same values
    assert pool.lookups == lookups


@pytest.mark.parametrize("index, value", [(0, 4096 + 1024), (1, 8192 + 2048), (2, 99), (3, 32), (4, 128),
                                          (5, 96)])
def test_a_new_address_shape_or_stride_is_a_new_map(pool, index, value):
    maps = tma.KernelTensorMaps(RECIPES, DEVICE)
    values = [4096, 8192, 100, 64, 64, 80]
    before = maps(values)
    values[index] = value
    after = maps(values)
    assert after == uncached(values)
    changed = {0: [0], 1: [1], 2: [0, 1], 3: [0, 1], 4: [0], 5: [1]}[index]
    for i in range(len(RECIPES)):
        assert (after[i] != before[i]) == (i in changed), (index, i)
    values[index] = [4096, 8192, 100, 64, 64, 80][index]
    assert maps(values) == before  # and back


@pytest.mark.parametrize("values, words", [
    ((4096, 8192, 0, 64, 64, 80), "'x_ptr' has shape [0, 64]"),
    ((4096, 8192, 100, 64, 66, 80), "'x_ptr' has strides [66, 1] of 4-byte elements"),
    ((4096, 8192, 100, 64, 64, 1 << 40), "'out_ptr' has shape [100, 64] and strides [1099511627776, 1]"),
])
def test_bad_values_are_refused_every_time(pool, values, words):
    maps = tma.KernelTensorMaps(RECIPES, DEVICE)
    maps((4096, 8192, 100, 64, 64, 80))
    with pytest.raises(LaunchError) as expected:
        uncached(values)
    for _ in range(2):  # refused values are not remembered
        with pytest.raises(LaunchError) as caught:
            maps(values)
        assert str(caught.value) == str(expected.value) and words in str(caught.value)


def test_values_not_remembered_still_get_their_maps(pool):
    """Integers of other types (NumPy's), unhashable values and arrays known only by
    their CUDA array interface take the uncached path: the same maps each time."""
    class InterfaceArray:
        __cuda_array_interface__ = {"data": (4096, False)}
    maps = tma.KernelTensorMaps(RECIPES, DEVICE)
    for values in [(4096, 8192, np.int64(100), 64, 64, 80), [InterfaceArray(), 8192, 100, 64, 64, 80]]:
        assert maps(values) == maps(values) == uncached(values)
    assert len(maps._maps) == 0
    maps((4096, 8192, 100, 64, 64, 80))
    assert maps((4096, 8192, np.int64(100), 64, 64, 80)) == uncached((4096, 8192, 100, 64, 64, 80))


def test_many_launches_keep_the_memory_bounded(pool):
    maps = tma.KernelTensorMaps(RECIPES, DEVICE)
    for i in range(3 * maps._ENTRIES):
        values = (4096 + 1024 * i, 8192, 100, 64, 64, 80)
        assert maps(values) == uncached(values)
        assert len(maps._maps) <= maps._ENTRIES


def test_threads_get_the_maps_of_their_own_values(pool, monkeypatch):
    """Threads launching with different values at once, through misses, hits and the
    dictionary starting over: each gets its values' maps, and what is remembered is right."""
    monkeypatch.setattr(tma.KernelTensorMaps, "_ENTRIES", 16)
    maps = tma.KernelTensorMaps(RECIPES, DEVICE)
    calls = [(4096 + 1024 * (i % 40), 8192 + 2048 * (i % 7), 64 + i % 5, 64, 64, 80) for i in range(400)]
    expected = {values: uncached(values) for values in calls}
    wrong = []
    start = threading.Barrier(4)

    def launch(offset: int) -> None:
        start.wait()
        for i in range(len(calls)):
            values = calls[(i * 7 + offset) % len(calls)]
            if maps(values) != expected[values]:
                wrong.append(values)
    threads = [threading.Thread(target=launch, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong
    for key, found in dict(maps._maps).items():
        assert found == expected[key]


def test_a_loaded_kernel_launches_with_its_remembered_maps(pool):
    kernel = object.__new__(LoadedKernel)  # what with_tensormaps reads of a kernel loaded on DEVICE
    kernel.device, kernel.tensormaps = DEVICE, RECIPES
    kernel.tensormap_cache = tma.KernelTensorMaps(RECIPES, DEVICE)
    values = (4096, 8192, 100, 64, 64, 80)
    assert kernel.with_tensormaps(values, (4, 2, 1)) == (*values, *uncached(values))
    assert kernel.with_tensormaps(values, (0, 2, 1)) == (*values, None, None)  # nothing runs: no maps


def test_one_kernel_launched_with_new_tensors_shapes_and_strides(backend, rng):
    """One compiled kernel (the same specialisation each time) over tensors at other
    addresses, of other shapes and strides, and the first again: each launch reads
    and writes through its own maps."""
    cases = [(37, 48, 64, 80), (53, 80, 96, 96), (37, 48, 64, 80), (21, 48, 48, 112)]
    inputs = [rng.standard_normal((m, sx)).astype(np.float32) for m, _, sx, _ in cases[:2]]
    inputs += [inputs[0], rng.standard_normal((21, 48)).astype(np.float32)]
    x_devs = [device_array(x, backend) for x in inputs[:2]]
    x_devs += [x_devs[0], device_array(inputs[3], backend)]
    for (m, n, sx, so), x, x_dev in zip(cases, inputs, x_devs):
        out = device_array(np.full((m + 3, so), -12345.0, np.float32), backend)
        scale_kernel[(tilec.cdiv(m, 16), tilec.cdiv(n, 32))](x_dev, out, m, n, sx, so, BM=16, BN=32)
        assert_block_written(to_numpy(out), x[:, :n] * 2 + 1, -12345.0, f"a descriptor store of {m}x{n}")


def test_the_cache_encodes_each_map_once_and_stays_bounded(monkeypatch):
    monkeypatch.setattr(tma, "_CACHED_MAPS", 4)
    cache = tma._Cache()
    encoded = []

    def encoder(n):
        def encode():
            encoded.append(n)
            return bytes([n]) * 128
        return encode
    assert cache.bytes_of(("a",), encoder(1)) == bytes([1]) * 128
    assert cache.bytes_of(("a",), encoder(2)) == bytes([1]) * 128 and encoded == [1]  # found: not encoded again
    for n in range(2, 7):
        assert cache.bytes_of(("map", n), encoder(n)) == bytes([n]) * 128
        assert len(cache.maps) <= 4


def test_host_descriptor_maps_are_encoded_once_and_passed_by_value(monkeypatch):
    """A TensorMap's bytes: its key read once (the base let go), the encoding cached;
    zeros where tilec makes no TMA copies (a 3-D block); data_ptr() is 0 (kernels before sm_90 have
    a pointer parameter there that they never read)."""
    from tilec.tools.tensor_descriptor import TensorDescriptor
    calls = []
    monkeypatch.setattr(tma, "_device_of", lambda base: DEVICE)
    monkeypatch.setattr(tma, "_encode", lambda *args: calls.append(args) or b"m" * 128)
    monkeypatch.setitem(tma._CACHES, DEVICE, tma._Cache())
    monkeypatch.setattr(specialize, "data_pointer", lambda base: base.ctypes.data)
    x = np.zeros((64, 64), np.float32)
    tensor_map = tma.TensorMap(TensorDescriptor.from_tensor(x, [32, 32]))
    assert tensor_map.data_ptr() == 0
    assert tensor_map.map_bytes() == b"m" * 128 and tensor_map.map_bytes() == b"m" * 128
    assert len(calls) == 1 and tensor_map.base is None
    again = tma.TensorMap(TensorDescriptor.from_tensor(x, [32, 32]))  # the same tensor and block: cached
    assert again.map_bytes() == b"m" * 128 and len(calls) == 1
    cube = tma.TensorMap(TensorDescriptor.from_tensor(np.zeros((4, 8, 8), np.float32), [2, 4, 4]))  # 3-D: none
    assert cube.map_bytes() == bytes(128) and len(calls) == 1


class _Names:
    """Stand-in for one of cuda-python's enums: each member is its own name."""

    def __getattr__(self, name):
        return name


@pytest.mark.parametrize("address, row_bytes, promotion", [
    (1 << 20, 8192, "L2_256B"),        # rows on 256-byte boundaries
    (1 << 20, 6000, "L2_128B"),        # fp16 rows of K = 3000: 256 ran 15% slower on an H200
    ((1 << 20) + 128, 8192, "L2_128B"),  # a tensor starting between boundaries
])
def test_maps_of_unaligned_rows_promote_128_bytes(monkeypatch, address, row_bytes, promotion):
    """The L2 promotion a map asks for: 256 bytes where the tensor and every row start on
    a 256-byte boundary, else 128 (as Triton always does)."""
    from tilec.runtime import driver
    calls = []

    class Map:
        def getPtr(self):
            return ctypes.addressof(buffer)
    buffer = ctypes.create_string_buffer(128)
    cuda = types.SimpleNamespace(
        CUtensorMapDataType=_Names(), CUtensorMapInterleave=_Names(), CUtensorMapSwizzle=_Names(),
        CUtensorMapL2promotion=_Names(), CUtensorMapFloatOOBfill=_Names(), cuuint32_t=int, cuuint64_t=int,
        CUresult=types.SimpleNamespace(CUDA_SUCCESS=0),
        cuTensorMapEncodeTiled=lambda *args: calls.append(args) or (0, Map()))
    monkeypatch.setattr(driver, "_bindings", lambda: cuda)
    tma._encode(address, 2, (1000, row_bytes // 2), (row_bytes // 2, 1), (128, 64), "zero")
    assert calls[0][2] == address and calls[0][4] == [row_bytes]
    assert calls[0][9] == f"CU_TENSOR_MAP_L2_PROMOTION_{promotion}"
