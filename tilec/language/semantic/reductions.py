"""The reductions rules of the semantic layer: reductions and scans: sum, max/min,
argmax/argmin, cumsum/cumprod, xor_sum, and user combine functions (tl.reduce,
tl.associative_scan).

One section of `Semantic` (see __init__.py), as a mixin.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import core as tl
from ..core import _unwrap, block_type, tensor
from .common import SemanticState, _axis_arg, _error


class ReductionRules(SemanticState):
    """Reductions and scans: sum, max, argmax, cumsum, user combine functions."""

    def reduction(self, inputs: Sequence[tensor], axis: Any, combine: Callable,
                  keep_dims: bool = False) -> list[tensor]:
        """Reduce `inputs` (same shape) along `axis` with `combine(lhs_list, rhs_list)`."""
        inputs = [self.to_tensor(x) for x in inputs]
        axis = _unwrap(axis)
        keep_dims = bool(_unwrap(keep_dims))
        first = inputs[0]
        if not first.type.is_block():
            raise _error("cannot reduce a scalar; reductions need a tensor")
        for x in inputs:
            if x.dtype.is_ptr():
                raise _error(f"cannot reduce a tensor of pointers ({x.type}); load the values first")
        for x in inputs[1:]:
            if x.type.shape != first.type.shape:
                raise _error(f"all reduced tensors must have the same shape, got {list(first.type.shape)} "
                             f"and {list(x.type.shape)}")
        shape = first.type.shape
        if axis is None:
            # Over every element: reduce the flattened tensor; keep_dims keeps a 1 per dimension.
            flat = [self.reshape(x, (x.type.numel,)) for x in inputs]
            results = self.reduction(flat, 0, combine, False)
            if keep_dims:
                results = [self.reshape(self.splat(r, (1,)), (1,) * len(shape)) for r in results]
            return results
        axis = _axis_arg(axis, "reduction")
        rank = len(shape)
        if not -rank <= axis < rank:
            raise _error(f"reduction axis {axis} is out of range for a tensor of rank {rank}")
        axis %= rank
        out_shape = shape[:axis] + shape[axis + 1:]
        result_types = [block_type(x.dtype, out_shape) if out_shape else x.dtype for x in inputs]
        with self._combiner():
            handles = self.builder.reduce(inputs, axis, combine, result_types)
        results = [tensor(h, t) for h, t in zip(handles, result_types)]
        if keep_dims:
            results = [self.expand_dims(r, axis) for r in results]
        return results

    def scan(self, inputs: Sequence[tensor], axis: Any, combine: Callable, reverse: bool = False) -> list[tensor]:
        """Inclusive scan of `inputs` (same shape) along `axis`: result[i] combines elements
        0..i in order (i..n-1 with `reverse`), with `combine(earlier, later)`."""
        inputs = [self.to_tensor(x) for x in inputs]
        first = inputs[0]
        if not first.type.is_block():
            raise _error("cannot scan a scalar; scans need a tensor")
        for x in inputs:
            if x.dtype.is_ptr():
                raise _error(f"cannot scan a tensor of pointers ({x.type}); load the values first")
        for x in inputs[1:]:
            if x.type.shape != first.type.shape:
                raise _error(f"all scanned tensors must have the same shape, got {list(first.type.shape)} "
                             f"and {list(x.type.shape)}")
        axis = _unwrap(axis)
        if axis is None:
            raise _error("a scan needs an axis")
        rank = len(first.type.shape)
        axis = _axis_arg(axis, "scan")
        if not -rank <= axis < rank:
            raise _error(f"scan axis {axis} is out of range for a tensor of rank {rank}")
        axis %= rank
        result_types = [x.type for x in inputs]
        with self._combiner():
            handles = self.builder.scan(inputs, axis, combine, bool(_unwrap(reverse)), result_types)
        return [tensor(h, t) for h, t in zip(handles, result_types)]

    def _accumulation_type(self, x: tensor, out_dtype: Any) -> tensor:
        out = _unwrap(out_dtype)
        if out is None and x.dtype.is_int() and x.dtype.int_bitwidth < 32:
            out = tl.int32 if x.dtype.is_int_signed() else tl.uint32
        return self.cast(x, out) if out is not None else x

    def _bf16_to_fp32(self, x: Any) -> tensor:
        """Triton computes these reductions and scans of bf16 values in fp32."""
        x = self.to_tensor(x)
        return self.cast(x, tl.float32) if x.dtype.is_bf16() else x

    def cumsum(self, x: Any, axis: Any = 0, reverse: bool = False, out_dtype: Any = None) -> tensor:
        x = self._accumulation_type(self._bf16_to_fp32(x), out_dtype)
        return self.scan([x], axis, lambda a, b: [self.add(a[0], b[0])], reverse)[0]

    def cumprod(self, x: Any, axis: Any = 0, reverse: bool = False, out_dtype: Any = None) -> tensor:
        """As Triton: bf16 in fp32, other types as they are (narrow integers wrap)."""
        x = self._bf16_to_fp32(x)
        if _unwrap(out_dtype) is not None:
            x = self.cast(x, _unwrap(out_dtype))
        return self.scan([x], axis, lambda a, b: [self.mul(a[0], b[0])], reverse)[0]

    def _user_combiner(self, combine_fn: Any) -> Callable[[list[tensor], list[tensor]], list[tensor]]:
        """The combine callback of tl.reduce / tl.associative_scan for a user @jit function
        taking the lhs values then the rhs values: one result per input, each converted
        to its input's type."""
        def combine(a: list[tensor], b: list[tensor]) -> list[tensor]:
            result = tl.call_kernel_function(combine_fn, a + b)
            results = list(result) if isinstance(result, (tuple, list)) else [result]
            if len(results) != len(a):
                name = getattr(combine_fn, "__name__", "the combine function")
                raise _error(f"{name} returned {len(results)} value{'s' if len(results) != 1 else ''} for "
                             f"{len(a)} input{'s' if len(a) != 1 else ''}; a combine function returns one value "
                             "per input")
            return [self.cast(self.to_tensor(r, v.dtype) if not isinstance(r, tensor) else r, v.dtype)
                    for r, v in zip(results, a)]
        return combine

    def map_elementwise(self, scalar_fn: Any, args: Any, pack: Any = 1) -> Any:
        """`tl.map_elementwise(scalar_fn, *args, pack=1)`: the @jit `scalar_fn` applied to each
        element of the (broadcast) `args`, which may branch and loop on its scalars; returns
        one tensor per value it returns (a tuple when it returns several). With `pack` > 1,
        each call takes `pack` elements of every argument (argument by argument) and
        returns `pack` values of every result (result by result), and the results always
        come as a tuple, as in Triton."""
        pack = _unwrap(pack)
        if isinstance(pack, bool) or not isinstance(pack, int) or pack < 1 or pack & (pack - 1):
            raise _error(f"map_elementwise's pack must be a power of 2, got {pack!r}")
        values = [self.to_tensor(a) for a in args]
        if not values:
            raise _error("map_elementwise needs at least one tensor argument")
        if not any(v.type.is_block() for v in values):
            if pack != 1:
                raise _error(f"map_elementwise with pack={pack} needs a block argument; its arguments are scalars")
            result = tl.call_kernel_function(scalar_fn, values)
            return result
        shape: tuple[int, ...] = ()
        for v in values:
            if v.type.is_block():
                shape = self.broadcast_shapes(shape, tuple(v.type.shape))
        if pack > 1 and max(shape) < pack:
            raise _error(f"map_elementwise with pack={pack} needs a block with a dimension of at least {pack} "
                         f"elements, got shape {list(shape)}")
        values = [self.broadcast_to(v, shape) for v in values]
        name = getattr(scalar_fn, "__name__", "the mapped function")
        returns_tuple = []

        def body(scalars: list[tensor]) -> list[tensor]:
            result = tl.call_kernel_function(scalar_fn, scalars)
            returns_tuple[:] = [isinstance(result, (tuple, list))]
            results = list(result) if returns_tuple[0] else [result]
            out = []
            for r in results:
                r = self.to_tensor(r)
                if r.type.is_block():
                    raise _error(f"{name} must return scalars, got a {r.type} tensor")
                out.append(r)
            if not out:
                raise _error(f"{name} returned no values")
            if len(out) % pack:
                raise _error(f"{name} returned {len(out)} value{'s' if len(out) != 1 else ''}; with pack={pack} it "
                             f"returns {pack} values per result (result by result)")
            for first in range(0, len(out), pack):
                types = {str(r.dtype) for r in out[first:first + pack]}
                if len(types) > 1:
                    raise _error(f"{name} returned values {first} to {first + pack - 1} of types "
                                 f"{', '.join(sorted(types))}; with pack={pack} the {pack} values of one result "
                                 "must have one type")
            return out

        with self._combiner():
            results = self.builder.map_elementwise(values, body, shape, pack)
        return tl.tuple_value(results) if returns_tuple[0] else results[0]

    def associative_scan(self, inputs: Any, axis: Any, combine_fn: Any, reverse: bool = False) -> Any:
        single = not isinstance(inputs, (tuple, list))
        values = [inputs] if single else list(inputs)
        results = self.scan(values, axis, self._user_combiner(combine_fn), reverse)
        return results[0] if single else tl.tuple_value(results)

    def sum(self, x: Any, axis: Any, keep_dims: bool = False, out_dtype: Any = None) -> tensor:
        x = self.to_tensor(x)
        out = _unwrap(out_dtype)
        if out is None:
            if x.dtype.is_int() and x.dtype.int_bitwidth < 32:
                out = tl.int32 if x.dtype.is_int_signed() else tl.uint32
        if out is not None:
            x = self.cast(x, out)
        return self.reduction([x], axis, lambda a, b: [self.add(a[0], b[0])], keep_dims)[0]

    def xor_sum(self, x: Any, axis: Any, keep_dims: bool = False) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise _error(f"xor_sum needs integer values, got {x.dtype}")
        return self.reduction([x], axis, lambda a, b: [self.xor_(a[0], b[0])], keep_dims)[0]

    def _axis_indices(self, x: tensor, axis: int | None) -> tensor:
        """int32 positions along `axis` (flat positions for axis=None), shaped like x."""
        shape = x.type.shape
        if axis is None:
            return self.reshape(self.arange(0, x.type.numel), shape)
        axis %= len(shape)
        index = self.arange(0, shape[axis])
        for d in range(len(shape)):
            if d != axis:
                index = self.expand_dims(index, d)
        return self.broadcast_to(index, shape)

    def arg_reduction(self, x: Any, axis: Any, largest: bool, tie_break_left: bool = True,
                      keep_dims: bool = False, nan_wins: bool = False) -> tuple[tensor, tensor]:
        """(extreme value, its index) along `axis`: NaNs are skipped, as by `tl.max`/`tl.min`
        and Triton 3.8's argmax/argmin (a NaN ranks below every number for argmax, above for
        argmin); with `nan_wins` (propagate_nan=ALL) a NaN ranks above every number for both.
        Ties go to the lowest index (the highest without `tie_break_left`); NaNs tie with each
        other, so a line with NaNs gives its first NaN (its last) when they win, or when the
        line holds nothing else."""
        x = self._bf16_to_fp32(x)
        if x.dtype.is_fp8():  # fp8 values compare exactly in fp32
            x = self.cast(x, tl.float32)
        if not x.type.is_block():
            raise _error("argmax/argmin need a tensor")
        axis = _unwrap(axis)
        index = self._axis_indices(x, axis if axis is None else _axis_arg(axis, "argmax/argmin"))
        is_float = x.dtype.is_floating()

        def beats(x: tensor, y: tensor) -> tensor:
            """x ranks strictly above y. For floats, "not (x <= y)" (not (x >= y) for
            argmin) is true when x is beyond y or either is a NaN; of the NaN cases it keeps
            only those where the NaN wins: x a NaN and y a number with nan_wins, else x a
            number and y a NaN. Two NaNs tie. (One unordered compare and one NaN test:
            cheaper than testing both NaNs separately.)"""
            if not is_float:
                return self.compare("gt" if largest else "lt", x, y)
            beyond_or_nan = self.logical_not(self.compare("le" if largest else "ge", x, y))
            loser_is_number = self.compare("eq", y, y) if nan_wins else self.compare("eq", x, x)
            return self.and_(beyond_or_nan, loser_is_number)

        def combine(a: list[tensor], b: list[tensor]) -> list[tensor]:
            # a wins when b does not rank above it and it ranks above b or comes first
            # (a total order on values, ties broken by index)
            (va, ia), (vb, ib) = a, b
            earlier = self.compare("lt" if tie_break_left else "gt", ia, ib)
            take_a = self.and_(self.or_(earlier, beats(va, vb)), self.logical_not(beats(vb, va)))
            return [self.where(take_a, va, vb), self.where(take_a, ia, ib)]

        value, where = self.reduction([x, index], axis, combine, keep_dims)
        return value, where

    def reduce_with(self, inputs: Any, axis: Any, combine_fn: Any, keep_dims: bool = False) -> Any:
        """`tl.reduce(input, axis, combine_fn)`: a reduction with a user @jit combine function
        taking the lhs values then the rhs values, returning one value or a tuple."""
        single = not isinstance(inputs, (tuple, list))
        values = [inputs] if single else list(inputs)
        results = self.reduction(values, axis, self._user_combiner(combine_fn), keep_dims)
        return results[0] if single else tl.tuple_value(results)

    def _widen_for_extremum(self, x: Any) -> tensor:
        """Triton's max/min (without indices) work on at least 32 bits: narrower floats in
        fp32, narrower integers in int32."""
        x = self._bf16_to_fp32(x)
        if x.dtype.primitive_bitwidth < 32:
            x = self.cast(x, tl.float32 if x.dtype.is_floating() else tl.int32)
        return x

    def max(self, x: Any, axis: Any, keep_dims: bool = False, propagate_nan: bool = False) -> tensor:
        """Maximum along `axis`: NaNs ignored (a line of NaNs gives NaN), or with
        `propagate_nan` any NaN makes the result NaN."""
        x = self._widen_for_extremum(x)
        return self.reduction([x], axis, lambda a, b: [self.maximum(a[0], b[0], propagate_nan)], keep_dims)[0]

    def min(self, x: Any, axis: Any, keep_dims: bool = False, propagate_nan: bool = False) -> tensor:
        x = self._widen_for_extremum(x)
        return self.reduction([x], axis, lambda a, b: [self.minimum(a[0], b[0], propagate_nan)], keep_dims)[0]
