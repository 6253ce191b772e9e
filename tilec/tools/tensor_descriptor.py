"""`TensorDescriptor`: a tensor described for block-wise access, passed to a kernel.

    from tilec.tools.tensor_descriptor import TensorDescriptor

    desc = TensorDescriptor.from_tensor(x, block_shape=[64, 64])
    kernel[grid](desc, ...)            # in the kernel: desc.load([i, j]), desc.store(...)

In the kernel the parameter is a `tl.tensor_descriptor`, exactly what
`tl.make_tensor_descriptor(base, shape, strides, block_shape, padding_option)` returns
on the device: blocks read outside the tensor hold the padding value ("zero" or "nan"),
and elements stored outside it are dropped. The launch passes the base pointer, the
shape and the strides as ordinary parameters (specialised like any integer argument:
a stride of 1 is a constant, one divisible by 16 is known to be), and `block_shape` and
`padding` are part of the compiled kernel's key.

The fields may be changed after construction (Triton's tutorials make a descriptor with
a placeholder `block_shape=[1, 1]` and set the real one in an autotuner pre-hook). So
construction checks what cannot change meaning later (ranks, strides, alignment, block
entries powers of two), and the launch checks everything, the 16-byte minimum span of a
block's row included; a bad field then is a `LaunchError` naming the argument.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List


# The most elements one block may hold (Triton's TRITON_MAX_TENSOR_NUMEL).
MAX_BLOCK_ELEMENTS = 1 << 20


@dataclass
class TensorDescriptor:
    """A tensor (`base`: a GPU tensor, or a host array for the interpreter) of `shape`
    and `strides` (in elements; the last must be 1), read and written in blocks of
    `block_shape` (powers of two, at least 16 bytes along the last dimension; a block
    wider than 256 elements along an outer dimension is read through pointers, not
    TMA). The base address and every stride but the last must be multiples of 16
    bytes, as the hardware's tensor maps need."""
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"
    round_f32_to_tf32: bool = False  # loads round fp32 to tf32 (nearest even), as Triton 3.9's

    def __post_init__(self):
        problem = descriptor_problem(self, at_launch=False)
        if problem is not None:
            raise ValueError(f"TensorDescriptor: {problem}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding: str = "zero",
                    round_f32_to_tf32: bool = False) -> "TensorDescriptor":
        """The descriptor of all of `tensor` (its own shape and strides; a torch tensor,
        or a NumPy array for the interpreter)."""
        if callable(getattr(tensor, "stride", None)):
            strides = list(tensor.stride())
        else:  # NumPy: strides in bytes
            strides = [s // tensor.itemsize for s in tensor.strides]
        return TensorDescriptor(tensor, list(tensor.shape), strides, block_shape, padding, round_f32_to_tf32)


def is_tensor_descriptor(value: Any) -> bool:
    """A host descriptor argument: this class, or one of that name with its fields
    (Triton's). Asked of every argument of a launch, so kept cheap."""
    return type(value).__name__ == "TensorDescriptor" and hasattr(value, "block_shape") and hasattr(value, "base")


def whole_rows(desc: Any) -> bool:
    """Whether the descriptor's last dimension spans a multiple of 16 bytes (what a TMA
    store needs to write exactly its elements: it writes whole 16-byte runs)."""
    size = getattr(getattr(desc.base, "dtype", None), "itemsize", 0) or 0
    return int(desc.shape[-1]) * int(size) % 16 == 0


def _element_bytes(base: Any) -> int | None:
    dtype = getattr(base, "dtype", None)
    size = getattr(dtype, "itemsize", None)
    return int(size) if size is not None else None


def _address(base: Any) -> int | None:
    if hasattr(base, "data_ptr"):
        return int(base.data_ptr())
    if hasattr(base, "ctypes"):
        return int(base.ctypes.data)
    return None


def descriptor_problem(desc: Any, at_launch: bool = True) -> str | None:
    """What is wrong with a descriptor's fields, in a sentence, or None. (Checked at
    every construction and launch, so the common case is kept short; `at_launch=False`
    is _describe_problem's.)"""
    try:
        shape, strides, block = list(map(int, desc.shape)), list(map(int, desc.strides)), \
            list(map(int, desc.block_shape))
        base = desc.base
        size = base.dtype.itemsize
        address = base.data_ptr() if hasattr(base, "data_ptr") else base.ctypes.data
    except (TypeError, AttributeError, ValueError):
        return _describe_problem(desc, at_launch)
    rank = len(shape)
    if 1 <= rank <= 5 and len(strides) == rank == len(block) and strides[-1] == 1 and not address % 16:
        elements = 1
        for b in block:  # powers of two
            if b <= 0 or b & (b - 1):
                return _describe_problem(desc, at_launch)
            elements *= b
        for stride in strides[:-1]:
            if (stride * size) % 16:
                return _describe_problem(desc, at_launch)
        if (elements <= MAX_BLOCK_ELEMENTS and (block[-1] * size >= 16 or not at_launch)
                and getattr(desc, "padding", "zero") in ("zero", "nan")
                and (size == 4 or not getattr(desc, "round_f32_to_tf32", False))):
            return None
    return _describe_problem(desc, at_launch)


def _describe_problem(desc: Any, at_launch: bool = True) -> str | None:
    """The sentence of descriptor_problem. `at_launch=False` (construction) skips the
    block's minimum span, which a placeholder block may not have yet."""
    shape, strides, block = list(desc.shape), list(desc.strides), list(desc.block_shape)
    rank = len(shape)
    if not 1 <= rank <= 5:
        return f"a descriptor has 1 to 5 dimensions, got shape {shape}"
    if len(strides) != rank or len(block) != rank:
        return f"shape {shape}, strides {strides} and block_shape {block} must have one entry per dimension"
    if any(not isinstance(v, int) and not hasattr(v, "__index__") for v in shape + strides + block):
        return f"shape {shape}, strides {strides} and block_shape {block} must be integers"
    shape, strides, block = ([int(v) for v in values] for values in (shape, strides, block))
    if int(strides[-1]) != 1:
        return f"the last dimension must be contiguous (stride 1), got strides {strides}"
    bad = [b for b in block if b < 1 or b & (b - 1)]
    if bad:
        return f"block_shape {block} must hold powers of two (Shape element must be a power of 2)"
    if math.prod(block) > MAX_BLOCK_ELEMENTS:
        return f"block_shape {block} holds {math.prod(block)} elements, more than a block may ({MAX_BLOCK_ELEMENTS})"
    if getattr(desc, "padding", "zero") not in ("zero", "nan"):
        return f"padding must be 'zero' or 'nan', got {desc.padding!r}"
    size = _element_bytes(desc.base)
    if getattr(desc, "round_f32_to_tf32", False) and size not in (None, 4):
        return "round_f32_to_tf32 applies to float32 tensors only (round_f32_to_tf32 is only supported for float32 tensors)"
    if size is not None:
        if at_launch and block[-1] * size < 16:
            return (f"the block must span at least 16 bytes along the last dimension, got {block[-1]} x {size} = "
                    f"{block[-1] * size} bytes")
        unaligned = [s for s in strides[:-1] if (s * size) % 16]
        if unaligned:
            return f"strides {strides} (elements of {size} bytes) must be multiples of 16 bytes but the last"
    address = _address(desc.base)
    if address is not None and address % 16:
        return f"the base address must be a multiple of 16 bytes, got {address:#x}"
    return None
