"""TMA tensor maps of host tensor descriptors (tilec.tools.tensor_descriptor), and of
descriptors a kernel makes from its own parameters.

A host descriptor argument is passed, besides its base, shape and strides, as its
128-byte `CUtensorMap` itself: kernels compiled for sm_90 take each map as a by-value,
grid-constant parameter (`.param .align 64 .b8 [128]`, the launcher's type code `M`) and
hand its address in parameter space to `cp.async.bulk.tensor`, as Triton and CUTLASS
do. A descriptor made in the kernel (`tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1],
...)`) of parameters and constants only gets the same: the compiler appends a parameter
for its map and records how to make it (`KernelMetadata.tensormaps`), and the launcher
encodes it from the call's values (`kernel_tensor_maps`, remembered per kernel by
`KernelTensorMaps`), so no program builds a map. The map is encoded by
`cuTensorMapEncodeTiled` with the box and swizzle the compiler's layouts use
(`layout.shared.tma_box`: both sides apply that one rule), an L2 promotion of 256 bytes
only where rows start on 256-byte boundaries (`l2_promotion`), and cached per (device,
address, element size, shape, strides, block, padding): a descriptor made anew for every
call of the same tensors costs a dictionary lookup. Nothing goes to device memory: the
driver copies the parameters at each launch, so a map can neither be overwritten while a
kernel reads it nor cost a copy to the device when it is new.
"""
from __future__ import annotations

import ctypes
import functools
import operator
import threading
from typing import Any, Sequence

from ..layout.shared import tma_copies
from ..specialization import recipe_arguments

_MAP_BYTES = 128
_CACHED_MAPS = 4096  # encoded maps a device's cache holds before it starts over
_NO_MAP = bytes(_MAP_BYTES)  # what a launch passes where no map can be made (sm_90 only reads maps)


_UNKNOWN = object()


class TensorMap:
    """The tensor-map parameter of one host descriptor argument. The launcher reads its
    bytes through `map_bytes()` (a kernel compiled for sm_90 takes them by value; zeros
    where no map can be made: a rank or element size TMA does not take). What the map is
    made of is read off the descriptor once, at the first call (the base tensor is not
    held after that), so one object can serve every launch of the same descriptor
    (JITFunction remembers them). `data_ptr()` is 0: a kernel compiled for a GPU before
    sm_90 has a pointer parameter there that it never reads."""

    def __init__(self, desc: Any):
        self.base = desc.base
        self.shape = tuple(int(v) for v in desc.shape)
        self.strides = tuple(int(v) for v in desc.strides)
        self.block_shape = tuple(int(v) for v in desc.block_shape)
        self.padding = str(getattr(desc, "padding", "zero"))
        self._key: Any = _UNKNOWN
        self._bytes: bytes | None = None

    def __repr__(self) -> str:
        return f"TensorMap(shape={list(self.shape)}, strides={list(self.strides)}, block={list(self.block_shape)})"

    def key(self) -> tuple | None:
        """map_bytes' arguments for this map, or None where there is none to make."""
        if self._key is _UNKNOWN:
            self._key = self._read_key()
            self.base = None
        return self._key

    def _read_key(self) -> tuple | None:
        size = _element_bytes(self.base)
        if not tma_copies(len(self.shape), 8 * size, self.padding, self.block_shape):
            return None
        from . import specialize
        return (_device_of(self.base), specialize.data_pointer(self.base), size, self.shape, self.strides,
                self.block_shape, self.padding)

    def map_bytes(self) -> bytes:
        if self._bytes is None:
            key = self.key()
            self._bytes = _NO_MAP if key is None else map_bytes(*key)
        return self._bytes

    def data_ptr(self) -> int:
        return 0


def map_bytes(device: int, address: int, size: int, shape: tuple[int, ...], strides: tuple[int, ...],
              block: tuple[int, ...], padding: str) -> bytes:
    """The tensor map of the tensor at `address` on `device` (elements of `size` bytes;
    shape and strides in elements), read in `block`s, encoded at first use."""
    key = (device, address, size, shape, strides, block, padding)
    return _cache(device).bytes_of(key, lambda: _encode(address, size, shape, strides, block, padding))


def _encode(address: int, size: int, shape: tuple[int, ...], strides: tuple[int, ...], block: tuple[int, ...],
            padding: str) -> bytes:
    from ..layout.shared import tma_box
    from .driver import _bindings, _error_name
    cuda = _bindings()
    encoding, box = tma_box(block, 8 * size)
    types = cuda.CUtensorMapDataType
    if padding == "nan":  # NaN fill needs a floating-point element type
        data_type = {2: types.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4: types.CU_TENSOR_MAP_DATA_TYPE_FLOAT32}[size]
    else:
        data_type = {1: types.CU_TENSOR_MAP_DATA_TYPE_UINT8, 2: types.CU_TENSOR_MAP_DATA_TYPE_UINT16,
                     4: types.CU_TENSOR_MAP_DATA_TYPE_UINT32}[size]
    swizzle = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}[encoding.swizzle_bytes]
    fill = "NAN_REQUEST_ZERO_FMA" if padding == "nan" else "NONE"
    promotion = l2_promotion(address, [v * size for v in strides[:-1]])
    rank = len(shape)
    # The driver counts dimensions innermost first; strides in bytes, the innermost's implied.
    status, tensor_map = cuda.cuTensorMapEncodeTiled(
        data_type, rank, address,
        [cuda.cuuint64_t(v) for v in reversed(shape)],
        [cuda.cuuint64_t(v * size) for v in reversed(strides[:-1])],
        [cuda.cuuint32_t(v) for v in reversed(box)],
        [cuda.cuuint32_t(1)] * rank,
        cuda.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(cuda.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{swizzle}"),
        getattr(cuda.CUtensorMapL2promotion, f"CU_TENSOR_MAP_L2_PROMOTION_L2_{promotion}B"),
        getattr(cuda.CUtensorMapFloatOOBfill, f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{fill}"))
    if status != cuda.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuTensorMapEncodeTiled failed for a tensor of shape {list(shape)}, strides "
                           f"{list(strides)}, block {list(block)}: {_error_name(cuda, status)}")
    return ctypes.string_at(tensor_map.getPtr(), _MAP_BYTES)


def l2_promotion(address: int, byte_strides: Sequence[int]) -> int:
    """The bytes a copy's L2 misses fetch around each row it reads: 256 when the tensor
    starts and every row starts on a 256-byte boundary, else 128. Measured on an H200
    (persistent fp16 matmul, 128x128x64 tiles, one program per tile): 256 is 1-2% faster
    than 128 where rows are aligned (4096^3: 193 against 198 us), and 15% slower where
    they are not (K = 3000, rows 6000 bytes apart: 34 against 29 us); Triton always asks
    for 128."""
    aligned = address % 256 == 0 and all(stride % 256 == 0 for stride in byte_strides)
    return 256 if aligned else 128


# TMA's limits on what a map describes: dimensions of 1 to 2^32 elements, strides below
# 2^40 bytes (and multiples of 16, checked as well: a descriptor's are promised, not proven).
_MAX_DIM = 1 << 32
_MAX_STRIDE_BYTES = 1 << 40


def _wrap(value: int, bits: int) -> int:
    """`value` as a `bits`-wide two's-complement integer reads it."""
    half = 1 << (bits - 1)
    return (value + half) % (2 * half) - half


_RECIPE_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}


def recipe_value(entry: list, bits: int, values: Sequence[Any]) -> int:
    """A recipe's shape or stride `entry` for a call's `values`, read at `bits`:
    ["arg", index], ["const", value], or [op, width, left, right], the kernel's own
    `width`-bit arithmetic on its parameters (IRBuilder.parameter_expression)."""
    kind = entry[0]
    if kind == "arg":
        value = int(values[entry[1]])
    elif kind == "const":
        value = int(entry[1])
    else:
        width = entry[1]
        value = _wrap(_RECIPE_OPS[kind](recipe_value(entry[2], width, values), recipe_value(entry[3], width, values)),
                      width)
    return _wrap(value, bits)


def kernel_map_values(recipe: dict, values: Sequence[Any]) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(base address, shape, strides) of a descriptor made in the kernel, from the
    call's `values` as `recipe` (KernelMetadata.tensormaps) reads them; LaunchError when
    TMA cannot describe them. Shape entries are int32 as make_tensor_descriptor takes
    them (a block pointer's, `shape_bits` 64, are int64)."""
    from ..errors import LaunchError
    from . import specialize
    read = functools.partial(recipe_value, values=values)
    base = values[recipe["base"]]
    address = base if isinstance(base, int) else specialize.data_pointer(base)
    shape = tuple(read(e, recipe.get("shape_bits", 32)) for e in recipe["shape"])
    strides = tuple(read(e, 64) for e in recipe["strides"])
    size = recipe["bytes"]
    what = "block pointer" if recipe.get("shape_bits", 32) == 64 else "tensor descriptor"
    if not all(0 < d < _MAX_DIM for d in shape) or not all(0 < s * size < _MAX_STRIDE_BYTES for s in strides[:-1]):
        raise LaunchError(f"the {what} the kernel makes for argument '{recipe['name']}' has shape "
                          f"{list(shape)} and strides {list(strides)}: TMA (which it was compiled to use) needs "
                          f"every dimension 1 to 2^32 elements long and strides from 1 element to 2^40 bytes")
    # A descriptor's stride parameters are compiled on make_tensor_descriptor's promise
    # (block_pointer._kernel_tensormap); a block pointer's were proven so.
    if any(s * size % 16 for s in strides[:-1]):
        raise LaunchError(f"the {what} the kernel makes for argument '{recipe['name']}' has strides "
                          f"{list(strides)} of {size}-byte elements: make_tensor_descriptor needs every stride but "
                          f"the last to be a multiple of 16 bytes (TMA's rule, as in Triton)")
    return address, shape, strides


def kernel_tensor_maps(recipes: Sequence[dict], values: Sequence[Any], device: int) -> tuple[bytes, ...]:
    """The tensor maps a kernel's `recipes` make of the call's `values` (the parameters
    tilec.backend.compiler appended for descriptors made in the kernel)."""
    maps = []
    for recipe in recipes:
        address, shape, strides = kernel_map_values(recipe, values)
        maps.append(map_bytes(device, address, recipe["bytes"], shape, strides, tuple(recipe["block"]),
                              recipe["padding"]))
    return tuple(maps)


class KernelTensorMaps:
    """`kernel_tensor_maps` of one loaded kernel's `recipes` on `device`, remembered:
    called with a launch's values, it returns the maps, encoding and checking them
    (kernel_map_values) only for values it has not seen.

    A map depends on its base address, its shape and strides (the integer arguments its
    recipe reads; the rest of a recipe is fixed at compile time), so that is the key: a
    launch of the same tensors costs one dictionary lookup, and a launch whose addresses
    or sizes changed encodes new maps as the uncached path does. Values that were refused
    are never remembered, so they are refused, with the same error, every time. Hits read
    the dictionary without a lock; misses are inserted under one (a full dictionary starts
    over), and the maps themselves come from the devices' caches, which are safe across
    threads."""

    _ENTRIES = 256  # distinct (addresses, sizes) per kernel kept at once

    def __init__(self, recipes: Sequence[dict], device: int):
        self.recipes = tuple(recipes)
        self.device = device
        self._bases = tuple(sorted({recipe["base"] for recipe in self.recipes}))
        self._ints = tuple(sorted(set().union(*(recipe_arguments(entry) for recipe in self.recipes
                                                for entry in (*recipe["shape"], *recipe["strides"])))))
        self._maps: dict[tuple, tuple[bytes, ...]] = {}
        self._lock = threading.Lock()

    def __call__(self, values: Sequence[Any]) -> tuple[bytes, ...]:
        try:  # bases as the generated launcher passes them (addresses) or torch tensors, and integers
            key = (*[base if (base := values[i]).__class__ is int else base.data_ptr() for i in self._bases],
                   *[values[i] for i in self._ints])
            found = self._maps.get(key)
        except (AttributeError, TypeError):  # other arrays, unhashable values: not remembered
            key = found = None
        if found is not None:
            return found
        maps = kernel_tensor_maps(self.recipes, values, self.device)  # checks, and raises for bad values
        if key is not None and all(values[i].__class__ is int for i in self._ints):
            with self._lock:
                if len(self._maps) >= self._ENTRIES:
                    self._maps.clear()
                self._maps[key] = maps
        return maps


def _element_bytes(base: Any) -> int:
    size = getattr(getattr(base, "dtype", None), "itemsize", None)
    return int(size) if size is not None else 0


def _device_of(base: Any) -> int:
    get_device = getattr(base, "get_device", None)
    if get_device is not None:
        return int(get_device())
    from . import driver, specialize
    cuda = driver._bindings()
    status, ordinal = cuda.cuPointerGetAttribute(cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                                 specialize.data_pointer(base))
    return int(ordinal) if status == cuda.CUresult.CUDA_SUCCESS else driver.current_device()


class _Cache:
    """A device's encoded maps by key, up to _CACHED_MAPS of them (then it starts over:
    a launch copies the bytes it is given, so no kernel can still need an old entry)."""

    def __init__(self):
        self.maps: dict[tuple, bytes] = {}
        self.lock = threading.Lock()

    def bytes_of(self, key: tuple, encode) -> bytes:
        found = self.maps.get(key)
        if found is not None:
            return found
        data = encode()
        with self.lock:
            if len(self.maps) >= _CACHED_MAPS:
                self.maps.clear()
            self.maps[key] = data
        return data


_CACHES: dict[int, _Cache] = {}
_CACHES_LOCK = threading.Lock()


def _cache(device: int) -> _Cache:
    with _CACHES_LOCK:
        if device not in _CACHES:
            _CACHES[device] = _Cache()
        return _CACHES[device]
