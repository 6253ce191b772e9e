"""The memory rules of the semantic layer: loads and stores: pointer and mask operands, cache
modifiers, eviction policies.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any

from ..core import _unwrap, block_type, dtype, tensor
from .common import SemanticState, _error

_CACHE_MODIFIERS = {"load": ("", ".ca", ".cg", ".cv", ".cs"), "store": ("", ".wb", ".cg", ".cs", ".wt")}
_EVICTION_POLICIES = ("", "evict_normal", "evict_first", "evict_last")


class MemoryRules(SemanticState):
    """Loads and stores: pointers, masks, cache modifiers."""

    def _check_cache_options(self, what: str, cache_modifier: str, eviction_policy: str) -> tuple[str, str]:
        cache_modifier = _unwrap(cache_modifier) or ""
        eviction_policy = _unwrap(eviction_policy) or ""
        allowed = _CACHE_MODIFIERS[what]
        if cache_modifier not in allowed:
            raise _error(f"{what}'s cache_modifier {cache_modifier!r} is not one of {list(allowed)}")
        if eviction_policy not in _EVICTION_POLICIES:
            raise _error(f"unknown eviction_policy {eviction_policy!r}; expected one of {list(_EVICTION_POLICIES)}")
        if cache_modifier and eviction_policy in ("evict_first", "evict_last"):
            raise _error(f"{what}: cache_modifier {cache_modifier!r} and eviction_policy {eviction_policy!r} cannot "
                         "be combined; a PTX memory access takes a cache operator or an eviction priority, not both")
        return cache_modifier, eviction_policy

    @staticmethod
    def _check_storage_type(ty: dtype, what: str) -> None:
        """Every element type can be loaded and stored (fp8 included)."""

    def _memory_operands(self, ptr: Any, mask: Any, what: str) -> tuple[tensor, tensor | None]:
        ptr = _unwrap(ptr)
        if not isinstance(ptr, tensor) or not ptr.dtype.is_ptr():
            got = ptr.dtype if isinstance(ptr, tensor) else type(ptr).__name__
            raise _error(f"{what} expects a pointer or a tensor of pointers, got {got}")
        mask = _unwrap(mask)
        if mask is None:
            return ptr, None
        mask = self.to_tensor(mask)
        if not mask.dtype.is_bool():
            raise _error(f"{what}'s mask must be boolean (int1), got {mask.dtype}")
        if mask.type.is_block() and not ptr.type.is_block():
            raise _error(f"{what}'s mask is a block of shape {list(mask.type.shape)} but the pointer is a scalar; "
                         "give the pointer that shape too (e.g. ptr + tl.arange(0, N)) or use a scalar mask")
        if ptr.type.is_block():
            if mask.type.is_block() and self.broadcast_shapes(mask.type.shape, ptr.type.shape) != ptr.type.shape:
                raise _error(f"{what}'s mask has shape {list(mask.type.shape)}, which does not broadcast to "
                             f"the pointer shape {list(ptr.type.shape)}")
            mask = self.broadcast_to(mask, ptr.type.shape)
        return ptr, mask

    def load(self, ptr: Any, mask: Any = None, other: Any = None, cache_modifier: str = "",
             eviction_policy: str = "", volatile: bool = False) -> tensor:
        cache_modifier, eviction_policy = self._check_cache_options("load", cache_modifier, eviction_policy)
        if _unwrap(volatile) and (cache_modifier or eviction_policy in ("evict_first", "evict_last")):
            raise _error("a volatile load takes no cache_modifier or eviction_policy (PTX's ld.volatile has neither)")
        ptr, mask = self._memory_operands(ptr, mask, "load")
        self._check_storage_type(ptr.dtype.element_ty, "load")
        elt = ptr.dtype.element_ty
        ty = block_type(elt, ptr.type.shape) if ptr.type.is_block() else elt
        other = _unwrap(other)
        if other is not None:
            if mask is None:
                raise _error("load's `other` needs a `mask`: it is the value of masked-off elements")
            if not isinstance(other, tensor):
                # A float for an integer element is converted as Triton does (`other=0.0`
                # of an int8 load is 0); any other number is made of the element type.
                floating_into_int = isinstance(other, float) and not elt.is_floating()
                other = self.to_tensor(other) if floating_into_int else self.to_tensor(other, elt)
            other = self.cast(other, elt)
            if ptr.type.is_block():
                other = self.broadcast_to(other, ptr.type.shape)
            elif other.type.is_block():
                raise _error("load's `other` is a block but the pointer is a scalar")
        handle = self.builder.load(ptr.handle, None if mask is None else mask.handle,
                                   None if other is None else other.handle, ty,
                                   cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                                   volatile=bool(_unwrap(volatile)))
        return tensor(handle, ty)

    def _check_writable(self, ptr: tensor, what: str) -> None:
        if ptr.dtype.is_ptr() and getattr(ptr.dtype, "const", False):
            raise _error(f"cannot {what} a pointer to constant data (its parameter is annotated tl.const) "
                         "(Cannot store to a constant pointer)")

    def store(self, ptr: Any, value: Any, mask: Any = None, cache_modifier: str = "",
              eviction_policy: str = "") -> None:
        cache_modifier, eviction_policy = self._check_cache_options("store", cache_modifier, eviction_policy)
        ptr, mask = self._memory_operands(ptr, mask, "store")
        self._check_writable(ptr, "store through")
        self._check_storage_type(ptr.dtype.element_ty, "store")
        value = _unwrap(value)
        elt = ptr.dtype.element_ty
        value = self.to_tensor(value, elt) if not isinstance(value, tensor) else value
        if value.type.is_block() and not ptr.type.is_block():
            raise _error(f"cannot store a block of shape {list(value.type.shape)} through a scalar pointer")
        if value.type.is_block() and value.type.numel > 1 and len(value.type.shape) != len(ptr.type.shape):
            # As Triton: a block of lower rank would be repeated along new leading
            # dimensions, most often a pointer expression one dimension too wide (a
            # one-element block is stored as its element).
            raise _error(f"cannot store a block of shape {list(value.type.shape)} through pointers of shape "
                         f"{list(ptr.type.shape)}: a stored block has the pointers' rank (Cannot broadcast, rank "
                         f"mismatch: {list(value.type.shape)}, {list(ptr.type.shape)})")
        if ptr.type.is_block():
            value = self.broadcast_to(value, ptr.type.shape)
        value = self.cast(value, elt)
        self.builder.store(ptr.handle, value.handle, None if mask is None else mask.handle,
                           cache_modifier=cache_modifier, eviction_policy=eviction_policy)

