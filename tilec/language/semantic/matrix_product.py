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


# The fp8 formats Hopper's tensor cores multiply (wgmma .e4m3 / .e5m2).
_WGMMA_FP8 = {tl.float8e4nv, tl.float8e5}


class MatrixProductRules(SemanticState):
    """tl.dot: operand types, shapes and precisions."""

    def dot(self, a: Any, b: Any, acc: Any = None, input_precision: Any = None, allow_tf32: Any = None,
            out_dtype: Any = None, max_num_imprecise_acc: Any = None) -> tensor:
        """acc + a @ b for [M, K] x [K, N] tensors, or batches of them ([..., M, K] x
        [..., K, N], the leading dimensions equal), any M, N and K from 1. fp16/fp8
        accumulate in fp32 (or out_dtype fp16), bf16 in fp32, int8 in int32, fp32 in fp32
        (input_precision tf32, tf32x3, bf16x3, bf16x6 or ieee), fp64 in fp64.

        More than one batch dimension (as Triton since 3.6) is one batch dimension to the
        builders: the batch dimensions are merged by a reshape, and split again after.

        `max_num_imprecise_acc` (how many products of an fp8 dot Hopper may add in its
        reduced-precision accumulator before adding them into the fp32 one) is checked as
        Triton checks it, at most K for fp8 operands, and given to the builder for fp8
        operands that stay fp8 (sm_90's wgmma), where it splits K into chunks of that many
        products, each summed apart and added in fp32. None (the default) sets no limit,
        as Triton's default on sm_90 (2**30); other operand types ignore it."""
        a, b = self._block(a, "dot"), self._block(b, "dot")
        rank = len(a.type.shape)
        if len(b.type.shape) != rank or rank < 2:
            raise _error(f"dot needs two tensors of one rank, 2 or more ([M, K] @ [K, N], or batches of them), "
                         f"got shapes {list(a.type.shape)} and {list(b.type.shape)}")
        (*batch_a, m, k), (*batch_b, k2, n) = a.type.shape, b.type.shape
        if k != k2 or batch_a != batch_b:
            raise _error(f"dot shapes do not match: {list(a.type.shape)} @ {list(b.type.shape)}")
        imprecise = _unwrap(max_num_imprecise_acc)
        if imprecise is not None and a.dtype.is_fp8() and b.dtype.is_fp8():
            if imprecise > k:
                raise _error(f"max_num_imprecise_acc ({imprecise}) must be <= K ({k})")
            if imprecise < 0:
                raise _error(f"max_num_imprecise_acc must not be negative, got {imprecise}")
        if rank > 3:
            return self._dot_of_batches(a, b, acc, input_precision, allow_tf32, out_dtype, imprecise)
        ta, tb = a.dtype, b.dtype
        # Any K >= 1, M >= 1, N >= 1: a K below the tensor-core instruction's keeps the dot on
        # the FMA path (tilegpu-accelerate-matmul), where every K computes exactly.
        if min(m, n, k) < 1:
            raise _error(f"dot needs M, N and K of at least 1, got M={m}, N={n}, K={k}")
        if ta != tb:
            if ta.is_fp8() and tb.is_fp8():
                pass
            else:
                raise _error(f"dot operands must have one type, got {ta} and {tb}")
        if ta.is_fp8() and not (self.capability == 90 and {ta, tb} <= _WGMMA_FP8):
            # Every fp8 value is exact in fp16, and so is the product sum in fp32. On sm_90
            # e4m3 and e5m2 stay: wgmma multiplies them (accelerate-matmul widens them
            # itself where it cannot).
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
            acc = self._accumulator(acc, shape)
            if chooses and asked is not None and acc.dtype != out:
                raise _error(f"dot accumulator is {acc.dtype} but out_dtype is {out}")
            out = acc.dtype
        allowed = {tl.int32} if ta.is_int() else {tl.float64} if ta.is_fp64() else \
            {tl.float32, tl.float16} if ta.is_fp16() or ta.is_fp8() else {tl.float32}
        if out not in allowed:
            raise _error(f"a dot of {ta} values accumulates in {' or '.join(sorted(str(t) for t in allowed))}, "
                         f"not {out}")
        ty = block_type(out, shape)
        # Only a dot that stays fp8 (wgmma on sm_90) sums in a reduced-precision accumulator.
        limit = imprecise if imprecise is not None and a.dtype.is_fp8() else None
        return tensor(self.builder.dot(a.handle, b.handle, acc.handle, precision if ta.is_fp32() else "ieee", ty,
                                       limit), ty)

    def _accumulator(self, acc: Any, shape: tuple) -> tensor:
        """A dot's given accumulator as a tensor, which must have the result's `shape`."""
        acc = self.to_tensor(acc)
        if not acc.type.is_block():
            raise _error(f"dot accumulator is a scalar ({acc.type}); expected a tensor of shape {list(shape)}, "
                         "such as tl.zeros(...)")
        if acc.type.shape != shape:
            raise _error(f"dot accumulator has shape {list(acc.type.shape)}; expected {list(shape)}")
        return acc

    def _dot_of_batches(self, a: tensor, b: tensor, acc: Any, input_precision: Any, allow_tf32: Any,
                        out_dtype: Any, max_num_imprecise_acc: int | None) -> tensor:
        """`dot` of [B1, ..., Bj, M, K] and [B1, ..., Bj, K, N] (j > 1): a 3-D dot of
        [B1 * ... * Bj, M, K] and [B1 * ... * Bj, K, N], reshaped back."""
        *batch, m, k = a.type.shape
        n = b.type.shape[-1]
        count = 1
        for size in batch:
            count *= size
        acc = _unwrap(acc)
        if acc is not None:
            acc = self.reshape(self._accumulator(acc, tuple(batch) + (m, n)), (count, m, n))
        flat = self.dot(self.reshape(a, (count, m, k)), self.reshape(b, (count, k, n)), acc, input_precision,
                        allow_tf32, out_dtype, max_num_imprecise_acc)
        return self.reshape(flat, tuple(batch) + (m, n))

    # ------------------------------------------------------------------ microscaled dot
    def dot_scaled(self, lhs: Any, lhs_scale: Any, lhs_format: Any, rhs: Any, rhs_scale: Any, rhs_format: Any,
                   acc: Any = None, fast_math: Any = False, lhs_k_pack: Any = True, rhs_k_pack: Any = True,
                   out_dtype: Any = tl.float32) -> tensor:
        """acc + (lhs * 2**(lhs_scale - 127)) @ (rhs * 2**(rhs_scale - 127)), the OCP
        microscaling (MX) product.

        lhs is [M, K] (rhs [K, N]) elements of `lhs_format`: "e2m1" (fp4, two to a uint8,
        the first in the low bits, packed along K, or along M / N when `*_k_pack` is
        False), "e4m3" / "e5m2" (fp8, as uint8 bits or float8e4nv / float8e5), "bf16" or
        "fp16" (as themselves or uint16 bits). A scale is None, a uint8 tensor of e8m0
        exponents, [M, K // 32] for lhs and [N, K // 32] for rhs: one per 32 elements
        along K (255 is NaN and makes its group NaN), or float8e4nv factors (NVFP4),
        one per 16 (or 32) elements along K.

        There is no scaled instruction before Blackwell, so both backends compute it as
        Triton's emulation does: each operand is decoded and scaled in fp32 and rounded to
        bf16 (fp16 when either format is "fp16"), then multiplied by `tl.dot` with an fp32
        accumulator. Every fp4 and fp8 value, scaled, is exact in bf16 unless it overflows or
        falls below bf16's smallest subnormal. `fast_math` is accepted; NaN scales give NaN
        either way.
        """
        formats = (_unwrap(lhs_format), _unwrap(rhs_format))
        for fmt in formats:
            if fmt not in _MX_FORMATS:
                raise _error(f"dot_scaled formats are {', '.join(repr(f) for f in _MX_FORMATS)}, got {fmt!r}")
        compute = tl.float16 if "fp16" in formats else tl.bfloat16
        a = self._mx_operand(lhs, lhs_scale, formats[0], bool(_unwrap(lhs_k_pack)), compute, "lhs")
        b = self._mx_operand(rhs, rhs_scale, formats[1], bool(_unwrap(rhs_k_pack)), compute, "rhs")
        out = _unwrap(out_dtype)
        if out != tl.float32 and not (out == tl.float16 and compute == tl.float16):
            raise _error(f"dot_scaled accumulates in float32 (float16 too when a format is 'fp16'), not {out}")
        result = self.dot(a, b, acc, out_dtype=out)
        return result

    def _mx_operand(self, x: Any, scale: Any, fmt: str, k_pack: bool, compute: tl.dtype, side: str) -> tensor:
        """One dot_scaled operand as a [..., M, K] (lhs) or [..., K, N] (rhs) tensor of
        `compute`: unpacked, decoded, scaled."""
        x = self._block(x, "dot_scaled")
        rank = len(x.type.shape)
        if rank not in (2, 3):
            raise _error(f"dot_scaled needs 2-D (or batched 3-D) operands; {side} has shape {list(x.type.shape)}")
        k_axis = rank - 1 if side == "lhs" else rank - 2
        if not k_pack and fmt != "e2m1":
            raise _error(f"only e2m1 operands can be packed along a dimension other than K ({side}_k_pack=False "
                         f"with {side}_format={fmt!r})")
        if fmt == "e2m1":
            if x.dtype != tl.uint8:
                raise _error(f"e2m1 values are packed two to a uint8; {side} is {x.dtype}")
            packed_axis = k_axis if k_pack else rank - 2 if side == "lhs" else rank - 1  # else along M / N
            value = self._unpack_e2m1(x, packed_axis)
        else:
            storage = {"e4m3": tl.float8e4nv, "e5m2": tl.float8e5, "bf16": tl.bfloat16, "fp16": tl.float16}[fmt]
            if x.dtype != storage:
                bits = tl.uint8 if storage.is_fp8() else tl.uint16
                if x.dtype != bits:
                    raise _error(f"a {fmt} operand is {storage} or its {bits} bits; {side} is {x.dtype}")
                x = self.cast(x, storage, bitcast=True)
            value = self.cast(x, tl.float32)
        if _unwrap(scale) is not None:
            value = self.mul(value, self._mx_scale_factors(scale, value, k_axis, side))
        return self.cast(value, compute)

    def _unpack_e2m1(self, x: tensor, axis: int) -> tensor:
        """uint8 [..., D, ...] holding two fp4 e2m1 codes each (low bits first) -> fp32
        values [..., 2D, ...] along `axis`."""
        codes = self.join(self.and_(x, 15), self.shr(x, 4))  # [..., 2]: low nibble first
        rank = len(x.type.shape)
        order = list(range(axis + 1)) + [rank] + list(range(axis + 1, rank))
        codes = self.permute(codes, order)  # the pair's axis right after `axis`
        shape = list(x.type.shape)
        shape[axis] *= 2
        c = self.cast(self.reshape(codes, shape), tl.int32)
        exponent, mantissa = self.and_(self.shr(c, 1), 3), self.and_(c, 1)
        # (1 + m/2) * 2**(e - 1) for e > 0, m/2 for e == 0: assembled as fp32 bits
        normal = self.or_(self.shl(self.add(exponent, 126), 23), self.shl(mantissa, 22))
        bits = self.where(self.compare("eq", exponent, 0), self.mul(mantissa, 0x3F000000), normal)
        bits = self.or_(bits, self.shl(self.shr(c, 3), 31))
        return self.cast(bits, tl.float32, bitcast=True)

    def _mx_scale_factors(self, scale: Any, value: tensor, k_axis: int, side: str) -> tensor:
        """Scales [..., R, K // G] -> fp32 factors in the operand's layout, one per group of
        G elements along K. uint8 (or int8) scales are e8m0 exponents, 2**(s - 127) (255: NaN), for
        groups of 32 (the MX formats) or 16; float8e4nv scales (NVFP4, groups of 16, or 32)
        are the factors themselves."""
        scale = self._block(scale, "dot_scaled")
        shape = list(value.type.shape)
        rank = len(shape)
        rows = shape[-2] if side == "lhs" else shape[-1]  # M or N
        k = shape[k_axis]
        batch = shape[:-2]
        if scale.dtype == tl.int8:  # the same e8m0 bits (Triton takes int8 scales too)
            scale = self.cast(scale, tl.uint8, bitcast=True)
        if scale.dtype not in (tl.uint8, tl.float8e4nv):
            raise _error(f"dot_scaled scales are uint8 (or int8) e8m0 exponents or float8e4nv factors; {side}_scale "
                         f"is {scale.dtype}")
        groups = scale.type.shape[-1] if scale.type.shape else 0
        group = k // groups if groups and k % groups == 0 else 0
        if group not in (16, 32) or list(scale.type.shape) not in (batch + [rows, groups], [rows, groups]):
            raise _error(f"{side}_scale has shape {list(scale.type.shape)}; with {side} of {k} elements along K it "
                         f"must be {batch + [rows, k // 32]} (one scale per 32 elements of K) or "
                         f"{batch + [rows, k // 16]} (one per 16)")
        if scale.dtype == tl.float8e4nv:
            factor = self.cast(scale, tl.float32)
        else:
            s = self.cast(scale, tl.int32)
            bits = self.where(self.compare("eq", s, 0), 0x00400000, self.shl(s, 23))  # 2**-127 is subnormal
            bits = self.where(self.compare("eq", s, 255), 0x7FC00000, bits)
            factor = self.cast(bits, tl.float32, bitcast=True)
        factor = self.reshape(self.broadcast_to(self.expand_dims(factor, len(scale.type.shape)),
                                                list(scale.type.shape) + [group]),
                              list(scale.type.shape[:-1]) + [k])  # [..., R, K]
        if len(factor.type.shape) < rank:
            factor = self.broadcast_to(factor, batch + list(factor.type.shape))
        if side == "rhs":
            factor = self.trans(factor, batch_order(rank))  # [..., K, N]
        return factor


def batch_order(rank: int) -> list[int]:
    """The permutation swapping the last two axes."""
    return list(range(rank - 2)) + [rank - 1, rank - 2]


_MX_FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
