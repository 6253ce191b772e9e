"""Block pointers (`tl.make_block_ptr`) and device-side tensor descriptors
(`tl.make_tensor_descriptor`), with the semantics of pointer loads and stores.

A block pointer describes a `block_shape` window at `offsets` into a strided tensor of
`shape` starting at `base`. Loading it is an ordinary masked load of

    base + sum_d (offsets[d] + arange(0, block_shape[d])) * strides[d]

(each term broadcast to the block's rank), masked by 0 <= index_d < shape[d] for the
dimensions listed in `boundary_check`. This is what Triton's RewriteTensorPointer pass
makes of block pointers when it does not use TMA: the index arithmetic is done in 64
bits (strides are int64 and offsets are widened before the multiplication), so tensors
of more than 2**31 elements work.

A tensor descriptor is the same idea with TMA's rules: every dimension is checked,
out-of-bounds elements read as the padding value (zero by default) and are skipped by
stores, and the last stride must be 1.

Both are `tl.aggregate`s whose fields are scalar tensors (plus compile-time block shape
and order), so the code generator carries them through loops and `if`s by their tensors.
Everything here is built from the language's own operations; no new IR operations.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from ..layout.shared import tma_copies
from ..specialization import recipe_arguments
from . import core
from .core import (ConstexprRequired, TilecSemanticError, _unwrap, aggregate, builtin, constexpr, current_semantic,
                   tensor)

__all__ = [
    "BlockPointer", "TensorDescriptor", "tensor_descriptor", "make_block_ptr", "advance",
    "make_tensor_descriptor", "load_tensor_descriptor", "store_tensor_descriptor",
]

_INT32_RANGE = (-(1 << 31), (1 << 31) - 1)
_INT64_RANGE = (-(1 << 63), (1 << 63) - 1)
_PADDING_OPTIONS = ("", "zero", "nan")


def _error(message: str) -> TilecSemanticError:
    return TilecSemanticError(message)


# ----------------------------------------------------------------------------- argument conversion


def _as_list(values: Any) -> list:
    """A shape/strides/offsets/block_shape/order argument as a list of (unwrapped) items.

    Like Triton, a single value stands for a one-element list.
    """
    values = _unwrap(values)
    if isinstance(values, (tuple, list)):
        return [_unwrap(v) for v in values]
    return [values]


def _index_scalar(sem, value: Any, what: str, wide: bool) -> tensor:
    """One element of shape/strides (wide: int64) or of offsets (int32), as a scalar tensor.

    Triton's rules (`_convert_elem_to_ir_value`): constants must fit the type; integer
    tensors are widened to int64 for shape and strides; offsets may not be int64 tensors.
    """
    value = _unwrap(value)
    target = core.int64 if wide else core.int32
    if isinstance(value, bool):
        raise _error(f"{what} must be integers, got the boolean {value}")
    if isinstance(value, int):
        lo, hi = _INT64_RANGE if wide else _INT32_RANGE
        if not lo <= value <= hi:
            bits = 64 if wide else 32
            raise _error(f"{what} must fit in {bits} bits, got {value}")
        return sem.to_tensor(value, target)
    if isinstance(value, tensor):
        if value.type.is_block():
            raise _error(f"{what} must be scalars, got a block of shape {list(value.type.shape)}")
        if not value.dtype.is_int() or value.dtype.is_bool():
            raise _error(f"{what} must be integers, got a {value.dtype} value")
        if not wide and value.dtype.int_bitwidth == 64:
            raise _error(f"{what} must be 32-bit integers, got an {value.dtype} value; add a `.to(tl.int32)` "
                         "(block pointer offsets are int32, as in Triton), or use a tensor of pointers "
                         "for 64-bit offsets")
        return sem.cast(value, target)
    got = type(value).__name__ if value is not None else "None"
    raise _error(f"{what} must be integers (constants or scalar integer tensors), got {got}")


def _index_scalars(sem, values: Sequence[Any], what: str, wide: bool) -> tuple[tensor, ...]:
    return tuple(_index_scalar(sem, v, what, wide) for v in values)


def _static_ints(values: Sequence[Any], what: str) -> tuple[int, ...]:
    out = []
    for v in values:
        if isinstance(v, tensor):
            raise ConstexprRequired(f"{what} must be compile-time constants (tl.constexpr), got a value known "
                                    "only at run time", v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise _error(f"{what} must be integers, got {v!r}")
        out.append(v)
    return tuple(out)


def _block_shape(sem, values: Sequence[Any], what: str) -> tuple[int, ...]:
    shape = _static_ints(values, what)
    if not shape:
        raise _error(f"{what} must have at least one dimension")
    for dim in shape:
        if not core.is_power_of_2(dim):
            raise _error(f"{what} {list(shape)}: every dimension must be a power of 2, and {dim} is not")
    return sem.validate_block_shape(shape)


def _scalar_pointer(base: Any, fn: str) -> tensor:
    base = _unwrap(base)
    if isinstance(base, aggregate):
        raise _error(f"{fn} expects a pointer as its base, got a {type(base).__name__}")
    if not isinstance(base, tensor) or not base.type.is_ptr():
        got = base.type if isinstance(base, tensor) else type(base).__name__
        raise _error(f"{fn} expects a scalar pointer as its base (a pointer argument, possibly offset), got {got}")
    return base


def _padding(padding_option: Any, elt: core.dtype, what: str) -> str:
    padding = _unwrap(padding_option)
    padding = "" if padding is None else padding
    if padding not in _PADDING_OPTIONS:
        raise _error(f"padding_option {padding!r} is not supported; use \"zero\" or \"nan\"")
    if padding == "nan" and not elt.is_floating():
        raise _error(f"padding_option \"nan\" needs floating-point elements, but {what} has {elt} elements")
    return padding


def _padding_value(sem, padding: str, elt: core.dtype) -> tensor | None:
    if padding == "zero":
        return sem.to_tensor(0.0 if elt.is_floating() else 0, elt)
    if padding == "nan":
        return sem.to_tensor(float("nan"), elt)
    return None  # "": masked-off elements are undefined; both backends read 0


def _boundary_check(boundary_check: Any, rank: int) -> tuple[int, ...]:
    """Triton's `_canonicalize_boundary_check`: sorted, in range, without duplicates."""
    boundary_check = _unwrap(boundary_check)
    if boundary_check is None or (isinstance(boundary_check, (tuple, list)) and not boundary_check):
        return ()
    dims = _as_list(boundary_check)
    for dim in dims:
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise _error(f"boundary_check must list dimensions (constant integers), got {dim!r}")
        if not 0 <= dim < rank:
            raise _error(f"boundary_check dimension {dim} is out of range for a block of rank {rank} "
                         f"(dimensions are 0 to {rank - 1})")
    if len(set(dims)) != len(dims):
        raise _error(f"boundary_check {tuple(dims)} lists a dimension twice")
    return tuple(sorted(dims))


def _block_access(sem, base: tensor, shape: Sequence[tensor], strides: Sequence[tensor],
                  offsets: Sequence[tensor], block_shape: Sequence[int],
                  checked: Sequence[int], int32_bounds: bool = False) -> tuple[tensor, tensor | None]:
    """(tensor of pointers, mask or None) for the block at `offsets`.

    Per dimension d, the int64 index `offsets[d] + arange(0, block_shape[d])` is laid
    along axis d of the block; pointers add index_d * strides[d] over all d and the mask
    keeps 0 <= index_d < shape[d] for d in `checked` (RewriteTensorPointer's expansion).
    With `int32_bounds` (a tensor descriptor: int32 offsets), the mask compares the index
    in int32 along a dimension whose shape is an int32, half the work of int64: an index
    past 2^31 - 1 wraps negative and is out of bounds, as it is beyond any int32 shape.
    """
    rank = len(block_shape)
    byte_offsets = None
    mask = None

    def along(value: tensor, d: int) -> tensor:
        for axis in range(rank):
            if axis != d:
                value = sem.expand_dims(value, axis)
        return value

    for d in range(rank):
        index = along(sem.add(sem.cast(sem.arange(0, block_shape[d]), core.int64), sem.cast(offsets[d], core.int64)), d)
        term = sem.mul(index, strides[d])
        byte_offsets = term if byte_offsets is None else sem.add(byte_offsets, term)
        if d in checked:
            narrow = int32_bounds and isinstance(shape[d], tensor) and shape[d].dtype.int_bitwidth == 32
            bounded = along(sem.add(sem.arange(0, block_shape[d]), offsets[d]), d) if narrow else index
            inside = sem.and_(sem.compare("ge", bounded, 0), sem.compare("lt", bounded, shape[d]))
            mask = inside if mask is None else sem.and_(mask, inside)
    byte_offsets = sem.broadcast_to(byte_offsets, block_shape)
    pointers = sem.add(base, byte_offsets)
    if mask is not None:
        mask = sem.broadcast_to(mask, block_shape)
    return pointers, mask


def _stored_value(sem, value: Any, elt: core.dtype, block_shape: tuple[int, ...], what: str,
                  broadcast_scalars: bool, cast: bool) -> tensor:
    value = _unwrap(value)
    if not isinstance(value, tensor):
        if not broadcast_scalars:
            raise _error(f"{what} needs a block of shape {list(block_shape)} to store, got a "
                         f"{type(value).__name__} constant; use tl.full")
        value = sem.to_tensor(value, elt)
    if not value.type.is_block():
        if not broadcast_scalars:
            raise _error(f"{what} needs a block of shape {list(block_shape)} to store, got a scalar; "
                         "use tl.full or tl.broadcast_to")
        value = sem.broadcast_to(value, block_shape)
    if tuple(value.type.shape) != tuple(block_shape):
        raise _error(f"{what}: the stored value has shape {list(value.type.shape)} but the block has shape "
                     f"{list(block_shape)}; they must be equal")
    if value.dtype != elt:
        if not cast:
            raise _error(f"{what}: the stored value has element type {value.dtype} but the block pointer points "
                         f"to {elt}; convert it with .to({elt!r})")
        value = sem.cast(value, elt)
    return value


# ----------------------------------------------------------------------------- block pointers


class BlockPointer(aggregate):
    """What `tl.make_block_ptr` returns: a `block_shape` window into a strided tensor.

    Fields: `base` (scalar pointer), `shape` and `strides` (tuples of int64 scalars),
    `offsets` (tuple of int32 scalars), `block_shape` and `order` (constexpr tuples).
    Load and store it with `tl.load`/`tl.store`; move it with `tl.advance`.
    """
    __tilec_fields__ = ("base", "shape", "strides", "offsets", "block_shape", "order", "recipe", "whole_rows")

    def __init__(self, base: tensor, shape: tuple, strides: tuple, offsets: tuple, block_shape: constexpr,
                 order: constexpr, recipe: constexpr = constexpr(None), whole_rows: constexpr = constexpr(False)):
        self.base = base
        self.shape = shape
        self.strides = strides
        self.offsets = offsets
        self.block_shape = block_shape
        self.order = order
        self.recipe = recipe
        self.whole_rows = whole_rows

    def _tensormap(self, sem, padding: str, store: bool = False):
        """On sm_90, the tensor-map parameter through which this access is a TMA copy
        (`tile.descriptor_load` / `descriptor_store`, with the pointer form as fallback),
        else None: the pointer's base, shape and strides are kernel parameters or
        constants the launcher can encode a map of (`recipe`, see `_kernel_tensormap`),
        its blocks are 2-D, and a store's rows are whole 16-byte runs. TMA checks every
        dimension's bounds: with dimensions left out of `boundary_check`, elements past
        the shape read the padding and are not written (the pointer form would touch the
        memory there; Triton leaves such accesses undefined)."""
        recipe = _unwrap(self.recipe)
        from ..config import config
        if (recipe is None or not config.tma or getattr(sem, "capability", None) != 90
                or not tma_copies(self.rank, self.element_ty.primitive_bitwidth, padding or "zero",
                                  _as_list(_unwrap(self.block_shape)))
                or (store and not _unwrap(self.whole_rows))):
            return None
        return sem.builder.tensormap_argument(json.dumps({**json.loads(recipe), "padding": padding or "zero"}))

    def __repr__(self) -> str:
        return f"BlockPointer({self.element_ty}, block_shape={list(_unwrap(self.block_shape))})"

    @property
    def element_ty(self) -> core.dtype:
        return self.base.dtype.element_ty

    @property
    def dtype(self) -> core.pointer_type:
        """As Triton's: a pointer to the block (`p.dtype.element_ty.element_ty` is the
        element type, `p.dtype.element_ty.shape` the block shape)."""
        return core.pointer_type(core.block_type(self.element_ty, _unwrap(self.block_shape)))

    type = dtype

    @property
    def rank(self) -> int:
        return len(_unwrap(self.block_shape))

    @builtin
    def advance(self, offsets) -> "BlockPointer":
        """The block pointer moved by `offsets` (one per dimension, in elements)."""
        return advance(self, offsets)

    # -- called by tl.load / tl.store
    def tilec_load(self, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
                   eviction_policy="", volatile=False) -> tensor:
        sem = current_semantic()
        if _unwrap(mask) is not None or _unwrap(other) is not None:
            raise _error("`mask` and `other` cannot be used when loading through a block pointer; use "
                         "boundary_check=(dims...) and padding_option instead")
        elt = self.element_ty
        padding = _padding(padding_option, elt, "this block pointer")
        block_shape = _unwrap(self.block_shape)
        checked = _boundary_check(boundary_check, len(block_shape))

        def with_pointers() -> tensor:
            pointers, in_bounds = _block_access(sem, self.base, self.shape, self.strides, self.offsets,
                                                block_shape, checked)
            fill = _padding_value(sem, padding, elt) if in_bounds is not None else None
            return sem.load(pointers, in_bounds, fill, cache_modifier, eviction_policy, volatile)
        tensormap = None if _unwrap(volatile) else self._tensormap(sem, padding)
        if tensormap is None:
            return with_pointers()
        ty = core.block_type(elt, block_shape)
        return tensor(sem.builder.descriptor_load(tensormap, [o.handle for o in self.offsets], ty, with_pointers), ty)

    def tilec_store(self, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="") -> None:
        sem = current_semantic()
        if _unwrap(mask) is not None:
            raise _error("`mask` cannot be used when storing through a block pointer; use boundary_check=(dims...)")
        block_shape = _unwrap(self.block_shape)
        value = _stored_value(sem, value, self.element_ty, block_shape, "tl.store to a block pointer",
                              broadcast_scalars=True, cast=False)
        checked = _boundary_check(boundary_check, len(block_shape))

        def with_pointers() -> None:
            pointers, in_bounds = _block_access(sem, self.base, self.shape, self.strides, self.offsets,
                                                block_shape, checked)
            sem.store(pointers, value, in_bounds, cache_modifier, eviction_policy)
        tensormap = self._tensormap(sem, "zero", store=True)
        if tensormap is None:
            with_pointers()
        else:
            sem.builder.descriptor_store(tensormap, value.handle, [o.handle for o in self.offsets], with_pointers)


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order) -> BlockPointer:
    """A block pointer to the `block_shape` block at `offsets` of the tensor at `base`.

    `shape` and `strides` (in elements) become int64, `offsets` int32, as in Triton;
    `block_shape` (powers of 2) and `order` (a permutation of the dimensions, the
    fastest-varying first) are compile-time constants.
    """
    sem = current_semantic()
    base = _scalar_pointer(base, "make_block_ptr")
    shape_items, stride_items, offset_items = _as_list(shape), _as_list(strides), _as_list(offsets)
    block_items, order_items = _as_list(block_shape), _as_list(order)
    order_values = _static_ints(order_items, "make_block_ptr's order")
    if sorted(order_values) != list(range(len(order_values))):
        raise _error(f"make_block_ptr's order {list(order_values)} must be a permutation of "
                     f"{list(range(len(order_values)))}")
    lengths = [len(shape_items), len(stride_items), len(offset_items), len(block_items), len(order_values)]
    if len(set(lengths)) != 1:
        raise _error("make_block_ptr's shape, strides, offsets, block_shape and order must have the same length "
                     f"(one entry per dimension), got {', '.join(map(str, lengths[:-1]))} and {lengths[-1]}")
    block = _block_shape(sem, block_items, "make_block_ptr's block_shape")
    shape_values = _index_scalars(sem, shape_items, "make_block_ptr's shape", wide=True)
    stride_values = _index_scalars(sem, stride_items, "make_block_ptr's strides", wide=True)
    offset_values = _index_scalars(sem, offset_items, "make_block_ptr's offsets", wide=False)
    if base.dtype.element_ty == core.int1:
        # As in Triton: booleans are bytes in memory, so a block pointer to int1 reads int8.
        base = sem.cast(base, core.pointer_type(core.int8))
    recipe, whole_rows = _kernel_tensormap(sem, base, shape_items, stride_items, block, "zero", shape_bits=64)
    return BlockPointer(base, shape_values, stride_values, offset_values, constexpr(block),
                        constexpr(order_values), constexpr(recipe), constexpr(whole_rows))


@builtin
def advance(base, offsets) -> BlockPointer:
    """`base` moved by `offsets` elements along each dimension (a new block pointer)."""
    sem = current_semantic()
    base = _unwrap(base)
    if not isinstance(base, BlockPointer):
        got = base.type if isinstance(base, tensor) else type(base).__name__
        raise _error(f"tl.advance expects a block pointer (from tl.make_block_ptr), got {got}")
    items = _as_list(offsets)
    if len(items) != base.rank:
        raise _error(f"tl.advance got {len(items)} offsets for a block pointer of rank {base.rank}")
    deltas = _index_scalars(sem, items, "tl.advance's offsets", wide=False)
    moved = tuple(sem.add(old, delta) for old, delta in zip(base.offsets, deltas))
    return base.tilec_replace([base.base, base.shape, base.strides, moved, base.block_shape, base.order,
                               base.recipe, base.whole_rows])


# ----------------------------------------------------------------------------- tensor descriptors


class TensorDescriptor(aggregate):
    """What `tl.make_tensor_descriptor` returns: a strided tensor read and written in
    `block_shape` blocks with TMA's rules (out-of-bounds elements read the padding value
    and are not written).

    Fields: `base` (scalar pointer), `shape` (tuple of int32 scalars), `strides` (tuple
    of int64 scalars), `block_shape` and `padding_option` (constexprs), `tensormap`: for
    a host-side descriptor (tilec.tools.tensor_descriptor), the address of its TMA tensor
    map, else None, `whole_rows` (a constexpr): whether the tensor's last dimension
    spans a multiple of 16 bytes, and `recipe` (a constexpr): for a descriptor made in
    the kernel whose map the launcher can encode, how (`_kernel_tensormap`), else None.
    With a tensor map (or a recipe) on sm_90, 2-D loads are TMA copies
    (`tile.descriptor_load`), and so are stores when `whole_rows` holds
    (`tile.descriptor_store`: TMA writes whole 16-byte runs of a row, so a row that ends
    inside one would be overrun); everything else, and every other target, uses the
    pointer form below.
    """
    __tilec_fields__ = ("base", "shape", "strides", "block_shape", "padding_option", "tensormap", "whole_rows",
                        "recipe", "round_tf32")

    def __init__(self, base: tensor, shape: tuple, strides: tuple, block_shape: constexpr,
                 padding_option: constexpr, tensormap: tensor | None = None, whole_rows: constexpr = constexpr(False),
                 recipe: constexpr = constexpr(None), round_tf32: constexpr = constexpr(False)):
        self.base = base
        self.shape = shape
        self.strides = strides
        self.block_shape = block_shape
        self.padding_option = padding_option
        self.tensormap = tensormap
        self.whole_rows = whole_rows
        self.recipe = recipe
        self.round_tf32 = round_tf32

    def _tma_offsets(self, sem, offsets: Any, what: str, store: bool = False) -> list | None:
        """The block's offsets as int32 IR values when this access is a TMA copy, else None."""
        block_shape = _unwrap(self.block_shape)
        from ..config import config
        if ((self.tensormap is None and _unwrap(self.recipe) is None) or not config.tma
                or getattr(sem, "capability", None) != 90
                or not tma_copies(len(block_shape), self.dtype.primitive_bitwidth, _unwrap(self.padding_option),
                                  block_shape)
                or (store and not _unwrap(self.whole_rows))):
            return None
        items = _as_list(offsets)
        if len(items) != len(block_shape):
            raise _error(f"{what} got {len(items)} offsets for a descriptor of rank {len(block_shape)}")
        return [o.handle for o in _index_scalars(sem, items, f"{what}'s offsets", wide=False)]

    def _tensormap(self, sem):
        """The tensor map's address: a host descriptor's, or the parameter the launcher
        fills for a descriptor made in the kernel (added at its first TMA copy)."""
        if self.tensormap is not None:
            return self.tensormap.handle
        return sem.builder.tensormap_argument(_unwrap(self.recipe))

    def __repr__(self) -> str:
        return f"TensorDescriptor({self.dtype}, block_shape={list(_unwrap(self.block_shape))})"

    @property
    def dtype(self) -> core.dtype:
        return self.base.dtype.element_ty

    @property
    def block_type(self) -> core.block_type:
        return core.block_type(self.dtype, _unwrap(self.block_shape))

    def _access(self, sem, offsets: Any, what: str) -> tuple[tensor, tensor]:
        block_shape = _unwrap(self.block_shape)
        items = _as_list(offsets)
        if len(items) != len(block_shape):
            raise _error(f"{what} got {len(items)} offsets for a descriptor of rank {len(block_shape)}")
        offset_values = _index_scalars(sem, items, f"{what}'s offsets", wide=False)
        return _block_access(sem, self.base, self.shape, self.strides, offset_values, block_shape,
                             tuple(range(len(block_shape))), int32_bounds=True)

    @builtin
    def load(self, offsets) -> tensor:
        """The block at `offsets`; elements outside the tensor read the padding value (0 by default)."""
        sem = current_semantic()

        def with_pointers() -> tensor:
            pointers, in_bounds = self._access(sem, offsets, "descriptor load")
            fill = _padding_value(sem, _unwrap(self.padding_option), self.dtype)
            return sem.load(pointers, in_bounds, fill)
        tma = self._tma_offsets(sem, offsets, "descriptor load")
        if tma is None:
            block = with_pointers()
        else:
            ty = self.block_type
            block = tensor(sem.builder.descriptor_load(self._tensormap(sem), tma, ty, with_pointers), ty)
        return _round_to_tf32(sem, block) if _unwrap(self.round_tf32) else block

    @builtin
    def store(self, offsets, value) -> None:
        """Writes `value` (a block of exactly `block_shape`, converted to the descriptor's
        type) at `offsets`; elements outside the tensor are not written."""
        sem = current_semantic()
        value = _stored_value(sem, value, self.dtype, _unwrap(self.block_shape), "descriptor store",
                              broadcast_scalars=False, cast=True)

        def with_pointers() -> None:
            pointers, in_bounds = self._access(sem, offsets, "descriptor store")
            sem.store(pointers, value, in_bounds)
        tma = self._tma_offsets(sem, offsets, "descriptor store", store=True)
        if tma is None:
            with_pointers()
        else:
            sem.builder.descriptor_store(self._tensormap(sem), value.handle, tma, with_pointers)


    # The element types a descriptor's atomics take: those TMA's reductions take, as in Triton.
    _ATOMIC_TYPES = {
        "add": ("uint32", "int32", "uint64", "fp32", "fp16", "bf16"),
        "min": ("uint32", "int32", "uint64", "int64", "fp16", "bf16"),
        "max": ("uint32", "int32", "uint64", "int64", "fp16", "bf16"),
        **{kind: ("uint32", "int32", "uint64", "int64") for kind in ("and", "or", "xor")},
    }

    def _atomic(self, kind: str, offsets, value) -> None:
        allowed = self._ATOMIC_TYPES[kind]
        if self.dtype.name not in allowed:
            raise _error(f"descriptor atomic_{kind} takes {', '.join(allowed)} elements, not {self.dtype.name} (the "
                         "element types of TMA's reductions, as in Triton)")
        sem = current_semantic()
        value = _stored_value(sem, value, self.dtype, _unwrap(self.block_shape), f"descriptor atomic_{kind}",
                              broadcast_scalars=False, cast=True)
        pointers, in_bounds = self._access(sem, offsets, f"descriptor atomic_{kind}")
        sem.atomic_rmw(kind, pointers, value, in_bounds, "relaxed", "gpu")

    @builtin
    def atomic_add(self, offsets, value) -> None:
        """Atomically adds `value` (a block) at `offsets` (relaxed; out-of-bounds elements
        are left alone). Like TMA's reductions it returns nothing."""
        self._atomic("add", offsets, value)

    @builtin
    def atomic_min(self, offsets, value) -> None:
        """As `atomic_add`, with the minimum."""
        self._atomic("min", offsets, value)

    @builtin
    def atomic_max(self, offsets, value) -> None:
        """As `atomic_add`, with the maximum."""
        self._atomic("max", offsets, value)

    @builtin
    def atomic_and(self, offsets, value) -> None:
        """As `atomic_add`, with bitwise and."""
        self._atomic("and", offsets, value)

    @builtin
    def atomic_or(self, offsets, value) -> None:
        """As `atomic_add`, with bitwise or."""
        self._atomic("or", offsets, value)

    @builtin
    def atomic_xor(self, offsets, value) -> None:
        """As `atomic_add`, with bitwise xor."""
        self._atomic("xor", offsets, value)

    def _rows(self, sem, x_offsets, y_offset, what: str) -> tuple[tensor, tensor, int]:
        """(pointers, in-bounds mask, row count) for rows `x_offsets` (a 1-D integer tensor)
        and block_shape[1] columns from `y_offset` of a 2-D descriptor with block_shape[0] 1."""
        block_shape = _unwrap(self.block_shape)
        if len(block_shape) != 2 or block_shape[0] != 1:
            raise _error(f"descriptor {what} needs a 2-D descriptor whose block_shape is [1, N], got "
                         f"{list(block_shape)}")
        rows = sem.to_tensor(_unwrap(x_offsets))
        if not rows.type.is_block() or len(rows.type.shape) != 1 or not rows.dtype.is_int():
            raise _error(f"descriptor {what}'s x_offsets must be a 1-D integer tensor, got {rows.type}")
        count = rows.type.shape[0]
        (column,) = _index_scalars(sem, [y_offset], f"descriptor {what}'s y_offset", wide=False)
        r = sem.expand_dims(sem.cast(rows, core.int64), 1)
        c = sem.expand_dims(sem.add(sem.cast(sem.arange(0, block_shape[1]), core.int64),
                                    sem.cast(column, core.int64)), 0)
        offsets = sem.add(sem.mul(r, self.strides[0]), sem.mul(c, self.strides[1]))
        shape = (count, block_shape[1])
        pointers = sem.add(self.base, sem.broadcast_to(offsets, shape))
        inside = sem.and_(sem.and_(sem.compare("ge", r, 0), sem.compare("lt", r, self.shape[0])),
                          sem.and_(sem.compare("ge", c, 0), sem.compare("lt", c, self.shape[1])))
        return pointers, sem.broadcast_to(inside, shape), count

    @builtin
    def gather(self, x_offsets, y_offset) -> tensor:
        """Rows `x_offsets` (a 1-D integer tensor of R row indices), block_shape[1]
        columns from `y_offset`: an [R, N] block (a 2-D descriptor with block_shape [1, N],
        as TMA's gather4); out-of-bounds elements read the padding value."""
        sem = current_semantic()
        pointers, in_bounds, _ = self._rows(sem, x_offsets, y_offset, "gather")
        fill = _padding_value(sem, _unwrap(self.padding_option), self.dtype)
        return sem.load(pointers, in_bounds, fill)

    @builtin
    def scatter(self, value, x_offsets, y_offset) -> None:
        """Writes the [R, N] block `value` to rows `x_offsets`, block_shape[1] columns from
        `y_offset` (the inverse of `gather`); out-of-bounds elements are not written."""
        sem = current_semantic()
        pointers, in_bounds, count = self._rows(sem, x_offsets, y_offset, "scatter")
        value = _stored_value(sem, value, self.dtype, (count, _unwrap(self.block_shape)[1]), "descriptor scatter",
                              broadcast_scalars=False, cast=True)
        sem.store(pointers, value, in_bounds)


tensor_descriptor = TensorDescriptor  # Triton's name for the type


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero") -> TensorDescriptor:
    """A tensor descriptor for the tensor at `base` (1 to 5 dimensions; the last stride
    must be 1), read and written in blocks of `block_shape` (powers of 2, at least 16
    bytes along the last dimension). Shapes are int32 and strides int64, as in Triton.
    """
    sem = current_semantic()
    base = _scalar_pointer(base, "make_tensor_descriptor")
    shape_items, stride_items, block_items = _as_list(shape), _as_list(strides), _as_list(block_shape)
    ndim = len(shape_items)
    if not 1 <= ndim <= 5:
        raise _error(f"make_tensor_descriptor supports 1 to 5 dimensions, got {ndim}")
    if len(stride_items) != ndim:
        raise _error(f"make_tensor_descriptor got {ndim} shape entries but {len(stride_items)} strides")
    if len(block_items) != ndim:
        raise _error(f"make_tensor_descriptor got {ndim} shape entries but a block_shape of "
                     f"{len(block_items)} dimensions")
    elt = base.dtype.element_ty
    block = _block_shape(sem, block_items, "make_tensor_descriptor's block_shape")
    row_bytes = block[-1] * elt.itemsize
    if row_bytes < 16:
        raise _error(f"a tensor descriptor's block must span at least 16 bytes along its last dimension, got "
                     f"{block[-1]} x {elt.itemsize} = {row_bytes} bytes (Descriptor block shape must have at least "
                     f"16 bytes in the last dimension, but got {block[-1]} * {elt.itemsize} = {row_bytes} bytes)")
    last_stride = stride_items[-1]
    if isinstance(last_stride, int) and not isinstance(last_stride, bool) and last_stride != 1:
        raise _error(f"a tensor descriptor's last stride must be 1 (the last dimension contiguous), "
                     f"got {last_stride}")
    padding = _padding(padding_option, elt, "this descriptor") or "zero"
    shape_values = tuple(_descriptor_dim(sem, v) for v in shape_items)
    stride_values = _index_scalars(sem, stride_items, "make_tensor_descriptor's strides", wide=True)
    _promise_descriptor_alignment(sem, base, stride_items, stride_values)
    recipe, whole_rows = _kernel_tensormap(sem, base, shape_items, stride_items, block, padding,
                                           strides_promised=True)
    return TensorDescriptor(base, shape_values, stride_values, constexpr(block), constexpr(padding), None,
                            constexpr(whole_rows), constexpr(recipe))


def _promise_descriptor_alignment(sem, base: tensor, stride_items: list, stride_values: tuple) -> None:
    """What make_tensor_descriptor requires of its arguments, as Triton documents it: a
    16-byte aligned base and leading strides that are multiples of 16 bytes (TMA's
    rules). A base or stride the kernel computes or loads (a grouped GEMM's pointers and
    leading dimensions, read from memory) is marked so (`tl.multiple_of`), and the
    pointer form of the descriptor's loads and stores then moves 16-byte vectors, as TMA
    would. Kernel parameters are left to what the specialisation proved of them: one
    that is not aligned keeps the element-wise pointer form, which stays correct."""
    builder = sem.builder
    if not hasattr(builder, "kernel_argument"):  # the interpreter: no alignment to derive
        return

    def computed(item: Any) -> bool:
        item = _unwrap(item)
        return (isinstance(item, tensor) and not item.type.is_block() and builder.kernel_argument(item.handle) is None
                and builder.constant_int(item.handle) is None)
    if computed(base):
        sem.hint("multiple_of", base, 16)
    per_stride = 16 // base.dtype.element_ty.itemsize
    if per_stride > 1:
        for item, value in zip(stride_items[:-1], stride_values[:-1]):
            if computed(item):
                sem.hint("multiple_of", value, per_stride)


def _kernel_tensormap(sem, base: tensor, shapes: list, strides: list, block: list, padding: str,
                      shape_bits: int = 32, strides_promised: bool = False) -> tuple[str | None, bool]:
    """How the launcher makes the tensor map of a descriptor made in the kernel (a
    recipe for IRBuilder.tensormap_argument, which its first TMA copy asks for), when it
    can (sm_90, TMA on): its base is one of the kernel's own parameters; its shape and
    strides are parameters, constants, or sums, differences and products of those
    (tutorial 06's `Z * H * N_CTX` rows, which the launcher computes as the kernel
    does); TMA's rules hold (a 16-byte aligned base, strides but the last multiples
    of 16 bytes, the last 1), and TMA copies its blocks. Else (None, False): the
    descriptor's loads and stores take the pointer form. Also whether its rows are whole
    16-byte runs (what TMA stores need).

    The base must be proven aligned by the specialisation. So must stride parameters,
    unless `strides_promised`: make_tensor_descriptor's contract (Triton's) requires
    strides of 16-byte multiples, and the specialisation only knows an integer divisible
    by 16 or 8 elements (a [M, 3004] fp16 tensor's row stride of 6008 bytes would keep
    pointers). The launcher, which reads the strides to encode the map, checks them at
    every launch instead (tma.kernel_map_values: a LaunchError where one breaks the
    contract). A block pointer has no such contract: it keeps what is proven, and keeps
    pointers when a shape entry reads a 64-bit parameter (TMA's dimensions end at 2^32).

    The map is then encoded on the host at each launch from the arguments (cached, as a
    host descriptor's is), instead of being built in the kernel by every program.
    `shape_bits`: the width the shape entries are read at (a descriptor's are int32, a
    block pointer's int64)."""
    from ..config import config
    builder = sem.builder
    elt = base.dtype.element_ty
    size = elt.primitive_bitwidth // 8
    if (not config.tma or getattr(sem, "capability", None) != 90 or not hasattr(builder, "tensormap_argument")
            or not tma_copies(len(block), elt.primitive_bitwidth, padding, block)):
        return None, False
    based = builder.kernel_argument(base.handle)
    if based is None or based[1] % 16:
        return None, False

    def entry(item: Any) -> tuple[list, int] | None:
        """(["arg", position], ["const", value] or an expression of those, the bytes it
        is known to divide by / the element size) of one shape or stride entry."""
        item = _unwrap(item)
        if isinstance(item, int) and not isinstance(item, bool):
            return ["const", item], item
        if not isinstance(item, tensor) or item.type.is_block() or not item.dtype.is_int() or item.dtype.is_bool():
            return None
        return builder.parameter_expression(item.handle)
    shape_entries = [entry(v) for v in shapes]
    stride_entries = [entry(v) for v in strides]
    if any(e is None for e in shape_entries + stride_entries) or stride_entries[-1][0] != ["const", 1]:
        return None, False
    if any((e[0] == "const" or not strides_promised) and divides * size % 16 or (e[0] == "const" and e[1] <= 0)
           for e, divides in stride_entries[:-1]):
        return None, False
    if any(e[0] == "const" and not 0 < e[1] < 1 << (shape_bits - 1) for e, _ in shape_entries):
        return None, False
    if shape_bits == 64 and any(builder.parameter_bits(position) > 32
                                for e, _ in shape_entries for position in recipe_arguments(e)):
        # A block pointer's extent read from a 64-bit parameter may pass TMA's 2^32
        # elements; its pointer form takes any int64 shape.
        return None, False
    recipe = json.dumps({"base": based[0], "shape": [e for e, _ in shape_entries],
                         "strides": [e for e, _ in stride_entries], "block": list(block), "bytes": size,
                         "padding": padding, "shape_bits": shape_bits})
    return recipe, shape_entries[-1][1] * size % 16 == 0


def _descriptor_dim(sem, value: Any) -> tensor:
    """A descriptor's shape entry as int32 (Triton: make_scalar(x, tl.int32))."""
    value = _unwrap(value)
    if isinstance(value, tensor) and not value.type.is_block() and value.dtype.is_int() \
            and not value.dtype.is_bool():
        return sem.cast(value, core.int32)
    return _index_scalar(sem, value, "make_tensor_descriptor's shape", wide=False)


@builtin
def load_tensor_descriptor(desc, offsets) -> tensor:
    """`desc.load(offsets)`."""
    return _descriptor(desc, "tl.load_tensor_descriptor").load(offsets)


@builtin
def store_tensor_descriptor(desc, offsets, value) -> None:
    """`desc.store(offsets, value)`."""
    return _descriptor(desc, "tl.store_tensor_descriptor").store(offsets, value)


def _descriptor(desc: Any, fn: str) -> TensorDescriptor:
    desc = _unwrap(desc)
    if not isinstance(desc, TensorDescriptor):
        got = desc.type if isinstance(desc, tensor) else type(desc).__name__
        raise _error(f"{fn} expects a tensor descriptor (from tl.make_tensor_descriptor), got {got}")
    return desc


def _round_to_tf32(sem, x: tensor) -> tensor:
    """fp32 values rounded to tf32 (10 mantissa bits), to nearest even, infinities and
    NaNs kept: what a host descriptor made with `round_f32_to_tf32=True` loads (a TMA
    load through a TFLOAT32 tensor map rounds so)."""
    def u32(value: int) -> tensor:
        return sem.to_tensor(value, core.uint32)

    bits = sem.cast(x, core.uint32, bitcast=True)
    special = sem.compare("eq", sem.and_(bits, u32(0x7F800000)), u32(0x7F800000))
    bias = sem.add(sem.and_(sem.shr(bits, u32(13)), u32(1)), u32(0xFFF))
    rounded = sem.and_(sem.add(bits, bias), u32(0xFFFFE000))
    return sem.cast(sem.where(special, bits, rounded), core.float32, bitcast=True)
