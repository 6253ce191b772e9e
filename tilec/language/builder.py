"""The interface between the semantic layer and a backend.

`Semantic` decides *what* to compute (types already promoted, shapes already
broadcast, every operand checked); a `Builder` only *emits* it. Two builders exist:

- `tilec.frontend.ir_builder.IRBuilder` emits ttir (MLIR) for the compiler;
- `tilec.interpreter.numpy_builder.NumpyBuilder` computes NumPy arrays at once.

Handles are whatever the builder uses for values (MLIR `Value`s, NumPy arrays). Types
passed in are tilec types (`tl.dtype`, `tl.pointer_type`, `tl.block_type`); operand
types always match what the operation needs, so a builder never promotes or checks.

Operation vocabulary (shared by both builders, named after the MLIR ops they become):

- `binary(op, ...)`: addi subi muli divsi divui remsi remui andi ori xori shli shrsi
  shrui maxsi maxui minsi minui addf subf mulf divf remf maxnumf minnumf maximumf
  minimumf
- `unary(op, ...)`: negf absf absi exp exp2 log log2 sqrt rsqrt sin cos floor ceil erf
- `compare(predicate, ...)`: for ints eq ne slt sle sgt sge ult ule ugt uge; for floats
  oeq une olt ole ogt oge (ordered except `une`, as C's `!=`)
- `cast(op, ...)`: extsi extui trunci sitofp uitofp fptosi fptoui extf truncf bitcast, and
  ptrtoint / inttoptr between pointers and 64-bit integers
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .core import block_type, dtype

Handle = Any


class Builder:
    """Abstract builder. Every method returns a handle (or None for stores)."""

    # -- constants and creation
    def constant(self, value: int | float | bool, ty: dtype) -> Handle:
        """A scalar constant of scalar type `ty`."""
        raise NotImplementedError

    def splat(self, scalar: Handle, ty: block_type) -> Handle:
        """A block of type `ty` filled with the scalar."""
        raise NotImplementedError

    def make_range(self, start: int, end: int, ty: block_type) -> Handle:
        """int32 block [start, start+1, ..., end-1]."""
        raise NotImplementedError

    def program_id(self, axis: int) -> Handle:
        raise NotImplementedError

    def num_programs(self, axis: int) -> Handle:
        raise NotImplementedError

    # -- elementwise
    def binary(self, op: str, lhs: Handle, rhs: Handle, ty: dtype) -> Handle:
        raise NotImplementedError

    def unary(self, op: str, x: Handle, ty: dtype) -> Handle:
        raise NotImplementedError

    def compare(self, predicate: str, lhs: Handle, rhs: Handle, is_float: bool, ty: dtype) -> Handle:
        raise NotImplementedError

    def select(self, cond: Handle, true_value: Handle, false_value: Handle, ty: dtype) -> Handle:
        raise NotImplementedError

    def cast(self, op: str, x: Handle, ty: dtype) -> Handle:
        raise NotImplementedError

    # -- shape
    def broadcast(self, x: Handle, ty: block_type) -> Handle:
        """Broadcast a block whose size-1 dimensions grow to `ty.shape` (same rank)."""
        raise NotImplementedError

    def expand_dims(self, x: Handle, axis: int, ty: block_type) -> Handle:
        raise NotImplementedError

    # -- memory
    def addptr(self, ptr: Handle, offset: Handle, ty: dtype) -> Handle:
        """`ptr + offset` elements; both already the same shape."""
        raise NotImplementedError

    def load(self, ptr: Handle, mask: Handle | None, other: Handle | None, ty: dtype, *,
             cache_modifier: str, eviction_policy: str, volatile: bool) -> Handle:
        raise NotImplementedError

    def store(self, ptr: Handle, value: Handle, mask: Handle | None, *,
              cache_modifier: str, eviction_policy: str) -> None:
        raise NotImplementedError

    # -- reductions
    def reduce(self, inputs: Sequence[Any], axis: int, combine: Callable, result_types: Sequence[dtype]) -> list[Handle]:
        """Reduce tensors `inputs` (tl.tensor) along `axis` with `combine`.

        `combine(lhs: list[tl.tensor], rhs: list[tl.tensor]) -> list[tl.tensor]` works on
        scalars when compiling (it builds the combiner region) and on NumPy arrays when
        interpreting; the semantic layer builds it from the language, so both agree.
        """
        raise NotImplementedError

    # -- host interaction (interpreter only)
    def to_python(self, x: Handle) -> Any:
        """The Python value of a scalar (the interpreter); the compiler refuses."""
        raise NotImplementedError
