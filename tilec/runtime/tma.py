"""TMA tensor maps of host tensor descriptors (tilec.tools.tensor_descriptor).

A host descriptor argument is passed, besides its base, shape and strides, as the
address of a 128-byte `CUtensorMap` in device memory, which kernels compiled for sm_90
hand to `cp.async.bulk.tensor` for their 2-D descriptor loads and stores. The map is
encoded by `cuTensorMapEncodeTiled` with the box and swizzle the compiler's layouts use
(`layout.shared.tma_box`: both sides apply that one rule), copied to device memory,
and cached per (device, address, element size, shape, strides, block, padding): a
descriptor made anew for every call of the same tensors costs a dictionary lookup.

Maps live in one pool of slots per device. When it is full, the device is synchronised
(no kernel can still be reading a map) and the pool starts over.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any

from ..layout.shared import tma_copies

_MAP_BYTES = 128
_POOL_SLOTS = 1024


class TensorMap:
    """The tensor-map parameter of one host descriptor argument. The launcher reads its
    address through `data_ptr()` (encoding the map on first use); it is 0 where no
    kernel can use a map (a GPU before sm_90, a rank or element size TMA does not take)."""

    def __init__(self, desc: Any):
        self.base = desc.base
        self.shape = tuple(int(v) for v in desc.shape)
        self.strides = tuple(int(v) for v in desc.strides)
        self.block_shape = tuple(int(v) for v in desc.block_shape)
        self.padding = str(getattr(desc, "padding", "zero"))

    def __repr__(self) -> str:
        return f"TensorMap(shape={list(self.shape)}, strides={list(self.strides)}, block={list(self.block_shape)})"

    def data_ptr(self) -> int:
        size = _element_bytes(self.base)
        if not tma_copies(len(self.shape), 8 * size, self.padding):
            return 0
        from . import driver, specialize
        address = specialize.data_pointer(self.base)
        device = _device_of(self.base)
        if not driver.target_of(device).startswith("sm_90"):
            return 0
        key = (device, address, size, self.shape, self.strides, self.block_shape, self.padding)
        return _pool(device).address_of(key, lambda: self._encode(address, size))

    def _encode(self, address: int, size: int) -> bytes:
        from ..layout.shared import tma_box
        from .driver import _bindings, _error_name
        cuda = _bindings()
        encoding, box = tma_box(self.block_shape, 8 * size)
        types = cuda.CUtensorMapDataType
        if self.padding == "nan":  # NaN fill needs a floating-point element type
            data_type = {2: types.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4: types.CU_TENSOR_MAP_DATA_TYPE_FLOAT32}[size]
        else:
            data_type = {1: types.CU_TENSOR_MAP_DATA_TYPE_UINT8, 2: types.CU_TENSOR_MAP_DATA_TYPE_UINT16,
                         4: types.CU_TENSOR_MAP_DATA_TYPE_UINT32}[size]
        swizzle = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}[encoding.swizzle_bytes]
        fill = "NAN_REQUEST_ZERO_FMA" if self.padding == "nan" else "NONE"
        rank = len(self.shape)
        # The driver counts dimensions innermost first; strides in bytes, the innermost's implied.
        status, tensor_map = cuda.cuTensorMapEncodeTiled(
            data_type, rank, address,
            [cuda.cuuint64_t(v) for v in reversed(self.shape)],
            [cuda.cuuint64_t(v * size) for v in reversed(self.strides[:-1])],
            [cuda.cuuint32_t(v) for v in reversed(box)],
            [cuda.cuuint32_t(1)] * rank,
            cuda.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(cuda.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{swizzle}"),
            cuda.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            getattr(cuda.CUtensorMapFloatOOBfill, f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{fill}"))
        if status != cuda.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuTensorMapEncodeTiled failed for {self!r}: {_error_name(cuda, status)}")
        return ctypes.string_at(tensor_map.getPtr(), _MAP_BYTES)


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


class _Pool:
    """Device memory for tensor maps: slots of 128 bytes, handed out in order."""

    def __init__(self, device: int):
        from . import driver
        self.device = device
        with driver.using_device(device):
            self.memory = int(driver._call("cuMemAlloc", _POOL_SLOTS * _MAP_BYTES))
        self.slots: dict[tuple, int] = {}
        self.lock = threading.Lock()

    def address_of(self, key: tuple, encode) -> int:
        with self.lock:
            found = self.slots.get(key)
            if found is not None:
                return found
            from . import driver
            data = encode()
            with driver.using_device(self.device):
                if len(self.slots) == _POOL_SLOTS:  # full: no kernel may still read a map we overwrite
                    driver._call("cuCtxSynchronize")
                    self.slots.clear()
                address = self.memory + len(self.slots) * _MAP_BYTES
                driver._call("cuMemcpyHtoD", address, data, _MAP_BYTES)
                driver._call("cuCtxSynchronize")  # the copy has landed before any launch reads it
            self.slots[key] = address
            return address


_POOLS: dict[int, _Pool] = {}
_POOLS_LOCK = threading.Lock()


def _pool(device: int) -> _Pool:
    with _POOLS_LOCK:
        if device not in _POOLS:
            _POOLS[device] = _Pool(device)
        return _POOLS[device]
