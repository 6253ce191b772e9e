"""The result of a path that ends without `return` in a @jit function whose other paths
return a value (Triton's *poison*), made the same on both backends.

    @jit
    def doubled_if_positive(x, flag):
        if flag > 0:
            return x * 2.0
        # no `return`: the result here is undefined, of the type the other path returns

The code generator meets such a path where a run-time `if` joins it with one that
returns: the undefined value takes that path's type, and is zeros (`undefined_like`).
Where only such paths are compiled (a constant condition) the result is None.

The interpreter runs one path only, so it cannot see the other path's type. But the
compiler's frontend runs over each specialisation before the interpreter runs it
(interpreter/launcher.py), inlining every call: for each function with paths without
`return`, it records the type of the result per call signature (`record_result`: the
types of the tensors among the arguments, the values of the constants). The
interpreter, reaching the end of such a path, makes zeros of the type recorded for the
call it is in (`recorded_result`, `undefined_like`); without a record (the frontend
failed on a bug of its own, and the compiled path reports it) the result is None.
"""
from __future__ import annotations

import ast
from typing import Any, Hashable

from ..language import core as tl
from ..language.core import _unwrap, tensor
from .early_returns import NO_RESULT_FUNCTION
from .kernel_function import KernelFunction

# A record of a call whose compiled result was None (no path returned a value).
NOTHING = ("nothing",)


class _TensorSlot:
    """Where a recorded result holds a tensor of type `type`."""

    def __init__(self, type: Any):
        self.type = type


def has_paths_without_return(fn: KernelFunction) -> bool:
    """Whether `fn` returns a value on some paths and reaches its end on others
    (early_returns.py ended those with a NO_RESULT_FUNCTION call)."""
    found = fn.__dict__.get("_tilec_no_result_paths")
    if found is None or found[0] is not fn.parse():
        calls = any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == NO_RESULT_FUNCTION for node in ast.walk(fn.parse()))
        found = fn.__dict__["_tilec_no_result_paths"] = (fn.parse(), calls)
    return found[1]


def call_key(fn: KernelFunction, args: list, kwargs: dict) -> Hashable | None:
    """What the type of `fn(*args, **kwargs)`'s result depends on: each parameter's
    tensor types and constants, defaults applied; None when the arguments do not bind."""
    try:
        bound = fn.signature.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return fn.source_hash(), tuple(_value_key(value) for value in bound.arguments.values())


def _value_key(value: Any) -> Hashable:
    if isinstance(value, tensor):
        return "tensor", value.type
    if isinstance(value, tl.aggregate):
        return type(value), tuple(_value_key(field) for field in value.tilec_fields())
    if isinstance(value, tuple):
        return type(value).__name__, tuple(_value_key(item) for item in value)
    if getattr(value, "__tilec_jit__", False):  # a @jit function (the interpreter's stand-in has its `fn`)
        return "jit", id(value.fn)
    raw = _unwrap(value)
    try:
        hash(raw)
    except TypeError:
        return "constant", type(raw).__name__, repr(raw)
    return "constant", type(raw).__name__, raw


def record_result(fn: KernelFunction, key: Hashable | None, result: Any) -> None:
    """Remembers the type of the result the code generator gave a call of `fn`."""
    if key is None:
        return
    records = fn.__dict__.setdefault("_tilec_result_types", {})
    if len(records) >= 4096:  # many specialisations in one process: start again
        records.clear()
    records[key] = NOTHING if _unwrap(result) is None else _map_tensors(result, lambda t: _TensorSlot(t.type))


def recorded_result(fn: KernelFunction, key: Hashable | None) -> Any:
    """What `record_result` remembered for this call: a template (tensors as their
    types), NOTHING, or None when nothing was recorded."""
    if key is None:
        return None
    return fn.__dict__.get("_tilec_result_types", {}).get(key)


def undefined_like(value: Any, semantic: Any) -> Any:
    """`value` (or a recorded template) with each tensor replaced by zeros of its type;
    constants stay (they need no value at run time)."""
    return _map_tensors(value, lambda t: zeros(semantic, t.type))


def zeros(semantic: Any, ty: Any) -> tensor:
    """A tensor of type `ty` holding zeros (null pointers for a pointer type)."""
    scalar = ty.scalar
    if scalar.is_ptr():
        return semantic.cast(zeros(semantic, tl.block_type(tl.int64, ty.shape) if ty.is_block() else tl.int64),
                             scalar)
    if ty.is_block():
        return semantic.full(ty.shape, 0, scalar)
    return semantic.to_tensor(0, scalar)


def _map_tensors(value: Any, leaf: Any) -> Any:
    """`value` with `leaf(t)` for each tensor (or template slot) `t` inside it."""
    if isinstance(value, (tensor, _TensorSlot)):
        return leaf(value)
    if isinstance(value, tl.aggregate):
        return value.tilec_replace([_map_tensors(field, leaf) for field in value.tilec_fields()])
    if isinstance(value, tuple):
        items = [_map_tensors(item, leaf) for item in value]
        if hasattr(value, "_fields"):
            return type(value)(*items)
        return type(value)(items) if isinstance(value, (tl.tuple_value, tl.list_value)) else tuple(items)
    return value


__all__ = ["NOTHING", "call_key", "has_paths_without_return", "record_result", "recorded_result", "undefined_like",
           "zeros"]
