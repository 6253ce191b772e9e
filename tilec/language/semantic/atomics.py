"""The atomics rules of the semantic layer: atomic read-modify-write and compare-and-swap,
atomic loads and stores, and polling: operands, types, memory order and scope.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any

from .. import core as tl
from ..core import _unwrap, block_type, tensor
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
                if elt.is_fp8():
                    raise _error(f"atomic_{kind} supports fp16, bf16, fp32 and fp64 floats, got {elt}")
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
        if cmp.type.is_block() and not ptr.type.is_block():  # a block of compares at one address
            ptr = self.broadcast_to(ptr, cmp.type.shape)
            value = self.broadcast_to(value, cmp.type.shape)
        if ptr.type.is_block():
            cmp = self.broadcast_to(cmp, ptr.type.shape)
        ty = value.type
        return tensor(self.builder.atomic_cas(ptr.handle, cmp.handle, value.handle, sem, scope, ty), ty)

    # -- atomic accesses that are not read-modify-writes (tl.atomic_load / atomic_store / atomic_poll)

    def _access_options(self, what: str, sem: Any, scope: Any, allowed: tuple[str, str]) -> tuple[str, str]:
        """(sem, scope) of an atomic load, store or poll: `allowed` are its memory orders,
        the first the default."""
        sem, scope = _unwrap(sem), _unwrap(scope)
        if sem in (None, ""):
            sem = allowed[0]
        if sem not in allowed:
            raise _error(f"{what}'s sem must be {allowed[0]!r} (the default) or {allowed[1]!r}, got {sem!r}")
        if scope not in self._ATOMIC_SCOPE:
            raise _error(f"atomic scope must be one of 'gpu', 'cta', 'sys', got {scope!r}")
        return sem, self._ATOMIC_SCOPE[scope]

    def atomic_load(self, ptr: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> tensor:
        """`tl.atomic_load`: every element read atomically; masked-off elements give 0."""
        sem, scope = self._access_options("atomic_load", sem, scope, ("acquire", "relaxed"))
        ptr, mask = self._memory_operands(ptr, mask, "atomic_load")
        elt = ptr.dtype.element_ty
        ty = block_type(elt, ptr.type.shape) if ptr.type.is_block() else elt
        handle = self.builder.atomic_load(ptr.handle, None if mask is None else mask.handle, sem, scope, ty)
        return tensor(handle, ty)

    def atomic_store(self, ptr: Any, value: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> None:
        """`tl.atomic_store`: every (unmasked) element written atomically."""
        sem, scope = self._access_options("atomic_store", sem, scope, ("release", "relaxed"))
        ptr, mask = self._memory_operands(ptr, mask, "atomic_store")
        self._check_writable(ptr, "apply atomic_store to")
        elt = ptr.dtype.element_ty
        value = _unwrap(value)
        value = self.to_tensor(value, elt) if not isinstance(value, tensor) else value
        if value.type.is_block() and not ptr.type.is_block():
            raise _error(f"cannot atomic_store a block of shape {list(value.type.shape)} through a scalar pointer")
        if ptr.type.is_block():
            value = self.broadcast_to(value, ptr.type.shape)
        value = self.cast(value, elt)
        self.builder.atomic_store(ptr.handle, value.handle, None if mask is None else mask.handle, sem, scope)

    def atomic_poll(self, ptr: Any, expected: Any, sem: Any = None, scope: Any = None,
                    timeout_ns: Any = None) -> tensor:
        """`tl.atomic_poll`: waits until every element of *ptr equals `expected`, or until
        `timeout_ns` nanoseconds have passed; int1 per element: whether it matched."""
        sem, scope = self._access_options("atomic_poll", sem, scope, ("acquire", "relaxed"))
        ptr, _ = self._memory_operands(ptr, None, "atomic_poll")
        elt = ptr.dtype.element_ty
        if not elt.is_int() or elt.int_bitwidth not in (16, 32, 64):
            raise _error(f"atomic_poll needs a pointer to a 16-, 32- or 64-bit integer, got a pointer to {elt}")
        expected = _unwrap(expected)
        expected = self.to_tensor(expected, elt) if not isinstance(expected, tensor) else self.cast(expected, elt)
        if expected.type.is_block():
            if not ptr.type.is_block():
                raise _error(f"atomic_poll's expected value is a block of shape {list(expected.type.shape)} but the "
                             "pointer is a scalar; poll a tensor of pointers of that shape")
            if self.broadcast_shapes(tuple(expected.type.shape), tuple(ptr.type.shape)) != tuple(ptr.type.shape):
                raise _error(f"atomic_poll's expected value has shape {list(expected.type.shape)}, which does not "
                             f"broadcast to the pointer shape {list(ptr.type.shape)}")
        if ptr.type.is_block():
            expected = self.broadcast_to(expected, ptr.type.shape)
        timeout = self._poll_timeout(_unwrap(timeout_ns))
        ty = block_type(tl.int1, ptr.type.shape) if ptr.type.is_block() else tl.int1
        handle = self.builder.atomic_poll(ptr.handle, expected.handle, None if timeout is None else timeout.handle,
                                          sem, scope, ty)
        return tensor(handle, ty)

    def _poll_timeout(self, timeout: Any) -> tensor | None:
        """atomic_poll's `timeout_ns` as a uint64 scalar (None: no timeout)."""
        if timeout is None:
            return None
        if isinstance(timeout, tensor):
            if timeout.type.is_block() or not timeout.dtype.is_int():
                raise _error(f"atomic_poll's timeout_ns must be an integer scalar (nanoseconds), got {timeout.type}")
            return self.cast(timeout, tl.uint64)
        if isinstance(timeout, bool) or not isinstance(timeout, int):
            raise _error(f"atomic_poll's timeout_ns must be an integer number of nanoseconds, got {timeout!r}")
        if not 0 <= timeout < 1 << 64:
            raise _error(f"atomic_poll's timeout_ns must be between 0 and 2**64 - 1 nanoseconds, got {timeout}")
        return self.to_tensor(timeout, tl.uint64)
