"""The matrix product rules of the semantic layer: tl.dot: operand types and shapes,
accumulator and input precision.

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any

from .. import core as tl
from ..core import _unwrap, block_type, tensor
from .common import SemanticState, _error


# The input precisions of an fp32 dot: tf32 (operands rounded to tf32), ieee (full fp32),
# and fp32 emulated with three tf32 products or three / six bf16 products.
_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")


class MatrixProductRules(SemanticState):
    """tl.dot: operand types, shapes and precisions."""

    def dot(self, a: Any, b: Any, acc: Any = None, input_precision: Any = None, allow_tf32: Any = None,
            out_dtype: Any = None) -> tensor:
        """acc + a @ b for [M, K] x [K, N] (or batched [B, M, K] x [B, K, N]) tensors, K at
        least 16 (4 for fp64). fp16/fp8 accumulate in fp32 (or out_dtype fp16), bf16 in
        fp32, int8 in int32, fp32 in fp32 (input_precision tf32, tf32x3, bf16x3, bf16x6 or ieee), fp64 in
        fp64."""
        a, b = self._block(a, "dot"), self._block(b, "dot")
        if len(a.type.shape) != len(b.type.shape) or len(a.type.shape) not in (2, 3):
            raise _error(f"dot needs two 2-D (or two 3-D, batched) tensors, got shapes {list(a.type.shape)} "
                         f"and {list(b.type.shape)}")
        (*batch_a, m, k), (*batch_b, k2, n) = a.type.shape, b.type.shape
        if k != k2 or batch_a != batch_b:
            raise _error(f"dot shapes do not match: {list(a.type.shape)} @ {list(b.type.shape)}")
        ta, tb = a.dtype, b.dtype
        min_k = 4 if ta.is_fp64() else 16  # as Triton on NVIDIA GPUs (M and N from 1: a matrix-vector dot)
        if k < min_k:
            raise _error(f"dot needs K of at least {min_k}, got M={m}, N={n}, K={k} "
                         f"(Input shapes should have M >= 1, N >= 1 and K >= {min_k})")
        if ta != tb:
            if ta.is_fp8() and tb.is_fp8():
                pass
            else:
                raise _error(f"dot operands must have one type, got {ta} and {tb}")
        if ta.is_fp8():  # every fp8 value is exact in fp16, and so is the product sum in fp32
            a, b = self.cast(a, tl.float16), self.cast(b, tl.float16)
        if ta.is_int():
            if not (ta.int_bitwidth == 8 and ta.is_int_signed()):
                raise _error(f"integer dot needs int8 operands, got {ta}")
            default_out = tl.int32
        elif ta.is_fp64():
            default_out = tl.float64
        elif ta.is_floating():
            default_out = tl.float32
        else:
            raise _error(f"dot does not support {ta}")
        precision = _unwrap(input_precision)
        if precision is None:
            tf32 = _unwrap(allow_tf32)
            precision = "tf32" if tf32 is None or tf32 else "ieee"
        if precision not in _PRECISIONS:
            raise _error(f"input_precision must be one of {', '.join(repr(p) for p in _PRECISIONS)}, got {precision!r}")
        # As Triton: out_dtype chooses the accumulator of fp16 (and fp8) dots only; integer,
        # fp32, bf16 and fp64 dots accumulate in int32, fp32, fp32 and fp64 whatever it says,
        # and a bf16 accumulator is refused.
        asked = _unwrap(out_dtype)
        if asked == tl.bfloat16 and not ta.is_int():
            raise _error("out_dtype=bfloat16 is unsupported. Please use out_dtype=float32/float16 and cast "
                         "with `.to(tl.bfloat16)`")
        chooses = ta.is_fp16() or ta.is_fp8()
        out = (asked if chooses else None) or default_out
        shape = tuple(batch_a) + (m, n)
        acc = _unwrap(acc)
        if acc is None:
            acc = self.full(shape, 0, out)
        else:
            acc = self.to_tensor(acc)
            if acc.type.shape != shape:
                raise _error(f"dot accumulator has shape {list(acc.type.shape)}; expected {list(shape)}")
            if chooses and asked is not None and acc.dtype != out:
                raise _error(f"dot accumulator is {acc.dtype} but out_dtype is {out}")
            out = acc.dtype
        allowed = {tl.int32} if ta.is_int() else {tl.float64} if ta.is_fp64() else \
            {tl.float32, tl.float16} if ta.is_fp16() or ta.is_fp8() else {tl.float32}
        if out not in allowed:
            raise _error(f"a dot of {ta} values accumulates in {' or '.join(sorted(str(t) for t in allowed))}, "
                         f"not {out}")
        ty = block_type(out, shape)
        return tensor(self.builder.dot(a.handle, b.handle, acc.handle, precision if ta.is_fp32() else "ieee", ty), ty)
