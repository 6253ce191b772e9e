"""Atomic operations of the interpreter's builder (a mixin of `NumpyBuilder`).

The interpreter runs one program at a time, so atomics only have to be atomic within a
program: every active lane applies its update in lane order (row-major over the block),
and lanes with the same address each apply theirs, seeing the previous lane's write (as
`numpy.add.at` would, and as the GPU's serialised atomics do in some order). Each lane
returns the value it read before its own update; masked-off lanes return 0 and touch
nothing. Addresses are bounds-checked like loads and stores (`Memory`).

Atomic loads and stores are plain loads and stores here (nothing runs concurrently).
`atomic_poll` reads each element once: no other program runs while it waits, so a value
that does not match never will. With a timeout it sleeps until the timeout has passed
(so a kernel timing itself with globaltimer sees the wait) and reports the mismatch;
without one it would wait forever, which is an error.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from ..language.core import TilecSemanticError, dtype
from .numpy_common import compute_dtype, is_float, numpy_dtype, round_to, signed, unsigned


def _fadd(old: np.ndarray, value: np.ndarray) -> np.ndarray:
    work = compute_dtype(old.dtype)  # bf16: float32, then one rounding
    return round_to(old.astype(work) + value.astype(work), old.dtype)


def _fmax(old: np.ndarray, value: np.ndarray, larger: bool) -> np.ndarray:
    """Float atomic max/min as the GPU does them (and Triton): on the bit patterns. A
    value whose sign bit is clear takes the signed-integer max (min) of the bits, one
    whose sign bit is set (-0.0 included) the unsigned min (max): exact for ordinary
    numbers and signed zeros, and a NaN behaves as its bits dictate."""
    old, value = np.asarray(old), np.asarray(value)
    signed, unsigned = np.dtype(f"i{old.itemsize}"), np.dtype(f"u{old.itemsize}")
    old_s, value_s = old.view(signed), value.view(signed)
    nonnegative = value_s >= 0  # the sign bit, not the float comparison (-0.0 >= 0)
    old_u, value_u = old.view(unsigned), value.view(unsigned)
    by_signed = np.maximum(old_s, value_s) if larger else np.minimum(old_s, value_s)
    by_unsigned = np.minimum(old_u, value_u) if larger else np.maximum(old_u, value_u)
    return np.where(nonnegative, by_signed.view(old.dtype), by_unsigned.view(old.dtype))


def _int_view(fn: Callable, view: Callable[[np.dtype], np.dtype]) -> Callable:
    def apply(old: np.ndarray, value: np.ndarray) -> np.ndarray:
        dt = old.dtype
        if dt == np.bool_:
            return fn(old, value)
        return fn(old.view(view(dt)), value.view(view(dt))).astype(view(dt)).view(dt)
    return apply


def _same(dt: np.dtype) -> np.dtype:
    return dt


# op -> (function of (old, value), which element types it accepts: "int", "float" or "any")
_RMW: dict[str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], str]] = {
    "add": (_int_view(np.add, _same), "int"),
    "fadd": (_fadd, "float"),
    "max": (_int_view(np.maximum, signed), "int"),
    "min": (_int_view(np.minimum, signed), "int"),
    "umax": (_int_view(np.maximum, unsigned), "int"),
    "umin": (_int_view(np.minimum, unsigned), "int"),
    "fmax": (lambda old, value: _fmax(old, value, True), "float"),
    "fmin": (lambda old, value: _fmax(old, value, False), "float"),
    "and": (_int_view(np.bitwise_and, _same), "int"),
    "or": (_int_view(np.bitwise_or, _same), "int"),
    "xor": (_int_view(np.bitwise_xor, _same), "int"),
    "xchg": (lambda old, value: value, "any"),
}


def _bits(x: np.ndarray) -> np.ndarray:
    """The bit patterns of `x` (atom.cas compares bits: -0 != +0, a NaN equals itself)."""
    return x if x.dtype == np.bool_ else x.view(unsigned(x.dtype))


class AtomicOps:
    """atomic_rmw and atomic_cas; `self.memory` is the launch's `Memory`."""

    def atomic_rmw(self, op: str, ptr: np.ndarray, value: np.ndarray, mask: np.ndarray | None, sem: str, scope: str,
                   ty: dtype) -> np.ndarray:
        dt = numpy_dtype(ty)
        entry = _RMW.get(op)
        if entry is None:
            raise TilecSemanticError(f"unknown atomic operation {op!r}; expected one of {sorted(_RMW)}")
        fn, accepts = entry
        if (accepts == "int" and is_float(dt)) or (accepts == "float" and not is_float(dt)):
            raise TilecSemanticError(f"atomic {op} does not apply to {ty.scalar} elements")
        ptr = np.asarray(ptr, dtype=np.uint64)
        values = np.broadcast_to(np.asarray(value).astype(dt, copy=False), ptr.shape).reshape(-1)
        if mask is not None:
            mask = np.broadcast_to(np.asarray(mask, dtype=bool), ptr.shape)
            values = values[np.flatnonzero(mask.reshape(-1))]
        return self.memory.read_modify_write("atomic_rmw", ptr, mask, dt,
                                             lambda old, lanes: fn(old, values[lanes]))

    def atomic_cas(self, ptr: np.ndarray, cmp: np.ndarray, value: np.ndarray, sem: str, scope: str,
                   ty: dtype) -> np.ndarray:
        dt = numpy_dtype(ty)
        ptr = np.asarray(ptr, dtype=np.uint64)
        expected = np.broadcast_to(np.asarray(cmp).astype(dt, copy=False), ptr.shape).reshape(-1)
        values = np.broadcast_to(np.asarray(value).astype(dt, copy=False), ptr.shape).reshape(-1)

        def update(old: np.ndarray, lanes: np.ndarray) -> np.ndarray:
            return np.where(_bits(old) == _bits(expected[lanes]), values[lanes], old)

        return self.memory.read_modify_write("atomic_cas", ptr, None, dt, update)

    def atomic_load(self, ptr: np.ndarray, mask: np.ndarray | None, sem: str, scope: str, ty: dtype) -> np.ndarray:
        return self.memory.load(np.asarray(ptr, dtype=np.uint64), None if mask is None else np.asarray(mask), None,
                                numpy_dtype(ty), access="atomic_load")

    def atomic_store(self, ptr: np.ndarray, value: np.ndarray, mask: np.ndarray | None, sem: str, scope: str) -> None:
        self.memory.store(np.asarray(ptr, dtype=np.uint64), np.asarray(value),
                          None if mask is None else np.asarray(mask), access="atomic_store")

    def atomic_poll(self, ptr: np.ndarray, expected: np.ndarray, timeout: np.ndarray | None, sem: str, scope: str,
                    ty: dtype) -> np.ndarray:
        start = time.monotonic_ns()
        expected = np.asarray(expected)
        ptr = np.asarray(ptr, dtype=np.uint64)
        current = self.memory.load(ptr, None, None, expected.dtype, access="atomic_poll")
        matched = np.asarray(_bits(current) == _bits(np.broadcast_to(expected, ptr.shape)))
        if matched.all():
            return matched
        first = tuple(int(i) for i in np.argwhere(~matched)[0]) if matched.ndim else ()
        if timeout is None:
            where = f"element {first[0] if len(first) == 1 else first}" if first else "*pointer"
            raise TilecSemanticError(
                f"atomic_poll would wait forever: {where} holds {current[first].item()}, not the expected "
                f"{np.broadcast_to(expected, ptr.shape)[first].item()}, and the interpreter runs one program at a time, "
                "so no other program can store it while this one waits; give atomic_poll a timeout_ns, or let a "
                "program that runs earlier (a lower program id) store the value")
        remaining = int(np.asarray(timeout).astype(np.uint64)) - (time.monotonic_ns() - start)
        if remaining > 0:
            time.sleep(remaining / 1e9)
        return matched


__all__ = ["AtomicOps"]
