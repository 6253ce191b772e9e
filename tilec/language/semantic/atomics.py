"""The atomics rules of the semantic layer: atomic read-modify-write and compare-and-swap:
operands, types, memory order and scope.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any

from ..core import _unwrap, tensor
from .common import SemanticState, _error


class AtomicRules(SemanticState):
    """Atomic read-modify-write and compare-and-swap."""

    _ATOMIC_SEM = {None: "acq_rel", "": "acq_rel", "acq_rel": "acq_rel", "acquire": "acquire",
                   "release": "release", "relaxed": "relaxed"}
    _ATOMIC_SCOPE = {None: "gpu", "": "gpu", "gpu": "gpu", "cta": "cta", "sys": "sys"}

    def _atomic_options(self, sem: Any, scope: Any) -> tuple[str, str]:
        sem, scope = _unwrap(sem), _unwrap(scope)
        if sem not in self._ATOMIC_SEM:
            raise _error(f"atomic sem must be one of 'acq_rel', 'acquire', 'release', 'relaxed', got {sem!r}")
        if scope not in self._ATOMIC_SCOPE:
            raise _error(f"atomic scope must be one of 'gpu', 'cta', 'sys', got {scope!r}")
        return self._ATOMIC_SEM[sem], self._ATOMIC_SCOPE[scope]

    def _atomic_operands(self, ptr: Any, value: Any, mask: Any, what: str) -> tuple[tensor, tensor, tensor | None]:
        ptr, mask = self._memory_operands(ptr, mask, what)
        self._check_writable(ptr, f"apply {what} to")
        elt = ptr.dtype.element_ty
        value = self.to_tensor(value, elt) if not isinstance(_unwrap(value), tensor) else _unwrap(value)
        if value.type.is_block() and not ptr.type.is_block():
            ptr = self.broadcast_to(ptr, value.type.shape)
            if mask is not None:
                mask = self.broadcast_to(mask, value.type.shape)
        if ptr.type.is_block():
            value = self.broadcast_to(value, ptr.type.shape)
        return ptr, self.cast(value, elt), mask

    def atomic_rmw(self, kind: str, ptr: Any, value: Any, mask: Any = None, sem: Any = None,
                   scope: Any = None) -> tensor:
        """Atomic read-modify-write; returns the old values. kind: add max min and or xor xchg."""
        sem, scope = self._atomic_options(sem, scope)
        ptr, value, mask = self._atomic_operands(ptr, value, mask, f"atomic_{kind}")
        elt = ptr.dtype.element_ty
        bits = elt.primitive_bitwidth
        if kind == "add":
            if elt.is_floating():
                if elt.is_fp8():
                    raise _error(f"atomic_add does not support {elt}")
                op = "fadd"
            elif bits in (32, 64):
                op = "add"
            else:
                raise _error(f"atomic_add needs 32- or 64-bit integers or floats, got {elt}")
        elif kind in ("max", "min"):
            if elt.is_floating():
                if bits not in (32, 64):
                    raise _error(f"atomic_{kind} supports fp32 and fp64 floats, got {elt}")
                op = "f" + kind
            elif bits in (32, 64):
                op = kind if elt.is_int_signed() else "u" + kind
            else:
                raise _error(f"atomic_{kind} needs 32- or 64-bit integers or floats, got {elt}")
        elif kind in ("and", "or", "xor"):
            if not elt.is_int() or bits not in (32, 64):
                raise _error(f"atomic_{kind} needs 32- or 64-bit integers, got {elt}")
            op = kind
        elif kind == "xchg":
            if bits not in (32, 64):
                raise _error(f"atomic_xchg needs 32- or 64-bit values, got {elt}")
            op = "xchg"
        else:
            raise _error(f"unknown atomic operation {kind!r}")
        ty = value.type
        handle = self.builder.atomic_rmw(op, ptr.handle, value.handle, None if mask is None else mask.handle,
                                         sem, scope, ty)
        return tensor(handle, ty)

    def atomic_cas(self, ptr: Any, cmp: Any, value: Any, sem: Any = None, scope: Any = None) -> tensor:
        """Atomic compare-and-swap: where *ptr == cmp, store value; returns the old values."""
        sem, scope = self._atomic_options(sem, scope)
        ptr, value, _ = self._atomic_operands(ptr, value, None, "atomic_cas")
        elt = ptr.dtype.element_ty
        if elt.primitive_bitwidth not in (16, 32, 64):
            raise _error(f"atomic_cas needs 16-, 32- or 64-bit values, got {elt}")
        cmp = _unwrap(cmp)
        cmp = self.to_tensor(cmp, elt) if not isinstance(cmp, tensor) else self.cast(cmp, elt)
        if ptr.type.is_block():
            cmp = self.broadcast_to(cmp, ptr.type.shape)
        ty = value.type
        return tensor(self.builder.atomic_cas(ptr.handle, cmp.handle, value.handle, sem, scope, ty), ty)
