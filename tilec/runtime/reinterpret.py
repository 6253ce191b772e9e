"""`tilec.reinterpret(array, dtype)`: an array's memory passed to a kernel as another
element type of the same width (int8 bytes as `tl.float8e4b15`, say, a format no array
library has).

A `TensorWrapper` holds the array (`.base`) and the element type (`.dtype`, a tilec
dtype). Launches read the element type from it and the address from the base; the
interpreter reads and writes the base's memory.
"""
from __future__ import annotations

from typing import Any

from ..language import core as tl


class TensorWrapper:
    """An array whose elements a kernel sees as `dtype` (made by `reinterpret`)."""

    def __init__(self, base: Any, dtype: tl.dtype):
        self.base = base
        self.dtype = dtype

    # -- what launches and tests read
    def data_ptr(self) -> int:
        if hasattr(self.base, "data_ptr") or hasattr(self.base, "__cuda_array_interface__"):
            from .specialize import data_pointer
            return data_pointer(self.base)
        return int(self.base.ctypes.data)  # a NumPy array (for the interpreter)

    @property
    def is_cuda(self) -> bool:
        return bool(getattr(self.base, "is_cuda", hasattr(self.base, "__cuda_array_interface__")))

    @property
    def shape(self):
        return self.base.shape

    @property
    def device(self):
        return getattr(self.base, "device", "cpu")

    def numel(self) -> int:
        size = getattr(self.base, "numel", None)
        return int(size()) if callable(size) else int(self.base.size)

    def element_size(self) -> int:
        return self.dtype.itemsize

    def stride(self, *args):
        return self.base.stride(*args)

    def dim(self) -> int:
        return len(self.base.shape)

    def size(self, *args):
        return self.base.size(*args)

    # -- copies keep the element type
    def clone(self) -> "TensorWrapper":
        return TensorWrapper(self.base.clone() if hasattr(self.base, "clone") else self.base.copy(), self.dtype)

    def cpu(self) -> "TensorWrapper":
        return TensorWrapper(self.base.cpu(), self.dtype)

    def to(self, *args, **kwargs) -> "TensorWrapper":
        return TensorWrapper(self.base.to(*args, **kwargs), self.dtype)

    def new_empty(self, sizes) -> "TensorWrapper":
        """An uninitialised array of `sizes` like the one wrapped, read as the same type."""
        if hasattr(self.base, "new_empty"):  # torch
            return TensorWrapper(self.base.new_empty(sizes), self.dtype)
        import numpy
        return TensorWrapper(numpy.empty(sizes, self.base.dtype), self.dtype)

    @property
    def data(self) -> Any:
        """The wrapped array's data (torch's `.data`: the tensor without autograd history)."""
        return getattr(self.base, "data", self.base)

    @data.setter
    def data(self, array: Any) -> None:
        """Wraps `array` instead (a view of the old one, say), read as the same type."""
        self.base = array

    def copy_(self, other: Any) -> "TensorWrapper":
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)
        return self

    def __repr__(self) -> str:
        return f"TensorWrapper({self.base!r}, dtype={self.dtype!r})"

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype!r}]({self.base})"


def reinterpret(array: Any, dtype: tl.dtype) -> Any:
    """`array`'s memory seen as elements of `dtype` (the same width) by the kernels it is
    passed to; `array` itself is unchanged. A wrapper of a wrapper wraps the base."""
    dtype = _tilec_dtype(dtype)
    if isinstance(array, TensorWrapper):
        return array.base if _same_type(array.base, dtype) else TensorWrapper(array.base, dtype)
    from .specialize import dtype_of_array
    current = dtype_of_array(array)
    if current is None:
        raise TypeError(f"reinterpret takes an array (a torch tensor or NumPy array), got {type(array).__name__}")
    if current.itemsize != dtype.itemsize or current.is_bool() != dtype.is_bool():
        raise TypeError(f"cannot reinterpret an array of {current!r} as {dtype!r}: the element sizes differ "
                        f"({current.itemsize} and {dtype.itemsize} bytes)")
    return array if current == dtype else TensorWrapper(array, dtype)


def _tilec_dtype(dtype: Any) -> tl.dtype:
    """A tilec dtype, or a torch / NumPy dtype of the same element (torch.float8_e4m3fn is
    tl.float8e4nv), as Triton's reinterpret takes either."""
    if isinstance(dtype, tl.dtype) and not isinstance(dtype, (tl.pointer_type, tl.block_type)):
        return dtype
    from .specialize import _DTYPE_NAMES
    name = str(dtype).replace("torch.", "")
    if name not in _DTYPE_NAMES:
        try:
            import numpy as np
            name = np.dtype(dtype).name  # np.int8, "int8", ml_dtypes' float8 types
        except TypeError:
            pass
    found = _DTYPE_NAMES.get(name)
    if found is None:
        raise TypeError(f"reinterpret takes a scalar element type such as tl.float8e4b15 (or a torch dtype), "
                        f"got {dtype!r}")
    return found


def _same_type(array: Any, dtype: tl.dtype) -> bool:
    from .specialize import dtype_of_array
    return dtype_of_array(array) == dtype
