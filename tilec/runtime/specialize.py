"""From launch arguments to the types a kernel is compiled for.

Every runtime argument gets a tilec type and a specialisation:

- integers: int32 when the value fits, else int64 (uint64 past int64); equal to 1 ->
  folded into the code as a constant; divisible by 16 -> marked so (axis info);
- floats: fp32; bools: int1;
- arrays (torch tensors, objects with `__cuda_array_interface__` or `data_ptr()`):
  pointers to their element type; 16-byte aligned -> marked so;
- None: a constant None (an unused pointer).
"""
from __future__ import annotations

from typing import Any

from ..errors import ArgumentOverflowError, LaunchError
from ..language import core as tl

# torch / NumPy dtype names -> tilec dtypes
_DTYPE_NAMES: dict[str, tl.dtype] = {
    "bool": tl.int1, "int8": tl.int8, "int16": tl.int16, "int32": tl.int32, "int64": tl.int64,
    "uint8": tl.uint8, "uint16": tl.uint16, "uint32": tl.uint32, "uint64": tl.uint64,
    "float16": tl.float16, "bfloat16": tl.bfloat16, "float32": tl.float32, "float64": tl.float64,
    "float8_e4m3fn": tl.float8e4nv, "float8_e5m2": tl.float8e5, "float8_e4m3fnuz": tl.float8e4b8,
    "float8_e5m2fnuz": tl.float8e5b16, "half": tl.float16, "float": tl.float32,
    "double": tl.float64,
}

# __cuda_array_interface__ typestr (without byte order) -> tilec dtype
_TYPESTR: dict[str, tl.dtype] = {
    "b1": tl.int1, "i1": tl.int8, "i2": tl.int16, "i4": tl.int32, "i8": tl.int64,
    "u1": tl.uint8, "u2": tl.uint16, "u4": tl.uint32, "u8": tl.uint64,
    "f2": tl.float16, "f4": tl.float32, "f8": tl.float64,
}


def dtype_of_array(obj: Any) -> tl.dtype | None:
    """The element type of an array-like argument, or None if `obj` is not one."""
    dtype = getattr(obj, "dtype", None)
    if isinstance(dtype, tl.dtype) and hasattr(obj, "base"):  # tilec.reinterpret's TensorWrapper
        return dtype
    if dtype is not None and (hasattr(obj, "data_ptr") or hasattr(obj, "__cuda_array_interface__")
                              or hasattr(obj, "__array_interface__")):
        name = str(dtype).replace("torch.", "")
        found = _DTYPE_NAMES.get(name)
        if found is not None:
            return found
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _TYPESTR.get(cai["typestr"][1:])
    return None


def data_pointer(obj: Any) -> int:
    """The device address of an array argument."""
    data_ptr = getattr(obj, "data_ptr", None)
    if data_ptr is not None:
        return int(data_ptr())
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    raise TypeError(f"{type(obj).__name__} is not a GPU array")


def scalar_int_type(value: int) -> tl.dtype:
    if -(1 << 31) <= value < (1 << 31):
        return tl.int32
    if -(1 << 63) <= value < (1 << 63):
        return tl.int64
    if 0 <= value < (1 << 64):
        return tl.uint64
    raise ArgumentOverflowError(f"integer {value} does not fit in 64 bits")


def scalar_type(value: Any) -> tl.dtype | None:
    """The tilec type of a Python or NumPy scalar argument (None if not a scalar).

    Python floats (and NumPy float64 scalars, a float subclass) are fp32, as in Triton.
    """
    if isinstance(value, bool):
        return tl.int1
    if isinstance(value, int):
        return scalar_int_type(value)
    if isinstance(value, float):
        return tl.float32
    if getattr(value, "shape", None) == () and hasattr(value, "dtype") and not hasattr(value, "data_ptr"):
        return _DTYPE_NAMES.get(str(value.dtype))  # NumPy scalars: np.int64(3), np.True_
    return None


def annotated_scalar(annotated: tl.dtype, value: Any, name: str, kernel: str) -> tl.dtype:
    """The type of a scalar argument whose parameter is annotated with `annotated`: that
    type, when the value is a number it can take (a float for a float type, an int in
    range for an integer type, a bool for tl.int1)."""
    if annotated.is_floating():
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) or hasattr(value, "__float__")
    elif annotated.is_bool():
        ok = isinstance(value, (bool, int))
    else:
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok:
            bits = annotated.int_bitwidth
            low, high = (-(1 << (bits - 1)), 1 << (bits - 1)) if annotated.is_int_signed() else (0, 1 << bits)
            if not low <= int(value) < high:
                raise LaunchError(f"argument '{name}' of {kernel}() is {value}, which does not fit its annotated "
                                  f"type {annotated!r}")
    if not ok:
        raise LaunchError(f"argument '{name}' of {kernel}() is a {type(value).__name__}, which its annotated type "
                          f"{annotated!r} cannot take")
    return annotated


def is_folded_one(ty: tl.dtype | None, value: Any) -> bool:
    """Whether an argument of scalar type `ty` is compiled as the constant 1 (an integer
    equal to 1, where the parameter is specialised): the kernel then sees the Python
    number 1, on both backends, with a Python number's promotion rules."""
    return ty is not None and ty.is_int() and not ty.is_bool() and int(value) == 1


def describe(value: Any) -> str:
    """A short description of an argument for error messages (one line)."""
    if value is None:
        return "None"
    dtype = dtype_of_array(value)
    if dtype is not None:
        device = getattr(value, "device", None)
        return f"{type(value).__name__} of {dtype}" + (f" on {device}" if device is not None else "")
    element = getattr(value, "dtype", None)
    if element is not None and hasattr(value, "shape") and getattr(value, "shape", ()) != ():
        return (f"{type(value).__name__} of {str(element).replace('torch.', '')}, an element type tilec does not "
                "support (it takes bool, int8-int64, uint8-uint64, float8, float16, bfloat16, float32, float64)")
    text = " ".join(f"{type(value).__name__} {value!r}".split())
    return text if len(text) <= 80 else text[:77] + "..."


def is_pinned_host_tensor(value: Any) -> bool:
    """A torch tensor in pinned (page-locked) host memory: the GPU reaches it at its host
    address (unified addressing), so a kernel may take it as a pointer argument."""
    is_pinned = getattr(value, "is_pinned", None)
    if is_pinned is None or getattr(value, "is_cuda", True) is not False:
        return False
    try:
        return bool(is_pinned())
    except Exception:  # a torch without CUDA
        return False
