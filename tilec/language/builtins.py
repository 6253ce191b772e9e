"""The functions of `tilec.language` that kernels call (`tl.load`, `tl.sum`, ...).

Each is a thin wrapper: unwrap constexprs, hand the work to the active semantic layer.
Names, parameters and defaults follow `triton.language`.
"""
from __future__ import annotations

import builtins as _py

from . import core
from .core import _unwrap, builtin, constexpr, current_semantic, float32, tensor


def _sem():
    return current_semantic()


# ----------------------------------------------------------------------------- programs


@builtin
def program_id(axis) -> tensor:
    """The index of this program along `axis` (0, 1 or 2) of the launch grid."""
    return _sem().program_id(axis)


@builtin
def num_programs(axis) -> tensor:
    """The number of programs along `axis` of the launch grid."""
    return _sem().num_programs(axis)


# ----------------------------------------------------------------------------- creation


@builtin
def arange(start, end) -> tensor:
    """int32 block [start, end); end - start must be a power of 2."""
    return _sem().arange(start, end)


@builtin
def full(shape, value, dtype) -> tensor:
    return _sem().full(shape, value, dtype)


@builtin
def zeros(shape, dtype) -> tensor:
    return _sem().full(shape, 0, dtype, "zeros")


@builtin
def zeros_like(input) -> tensor:
    return _sem().full(input.shape, 0, input.dtype, "zeros_like")


@builtin
def full_like(input, value, dtype=None) -> tensor:
    return _sem().full(input.shape, value, _unwrap(dtype) or input.dtype)


# ----------------------------------------------------------------------------- shape


@builtin(method=True)
def expand_dims(input, axis) -> tensor:
    axis = _unwrap(axis)
    sem = _sem()
    if not isinstance(input, tensor):  # a constexpr or Python number: its tensor, as in Triton
        input = sem.to_tensor(input)
    if isinstance(axis, (_py.tuple, list)):
        rank = len(input.type.shape) if isinstance(input, tensor) and input.type.is_block() else 0
        normalized = [a + rank + len(axis) if a < 0 else a for a in (_unwrap(a) for a in axis)]
        if len(set(normalized)) != len(normalized):
            raise core.TilecSemanticError(f"expand_dims got the same axis twice (duplicate axes, normalized axes = "
                                          f"{normalized})")
        for a in sorted(normalized):
            input = sem.expand_dims(input, a)
        return input
    return sem.expand_dims(input, axis)


@builtin(method=True)
def unsqueeze(x, dim) -> tensor:
    """`x` with a new dimension of size 1 at `dim` (tl.expand_dims; Triton 3.7's name)."""
    return expand_dims(x, dim)


@builtin(method=True)
def squeeze(x, dim) -> tensor:
    """`x` without its dimension `dim` (negative counts from the end), which must have
    size 1; the inverse of `unsqueeze`. A `[1]` block becomes a scalar."""
    dim = _unwrap(dim)
    if not isinstance(x, tensor) or not x.type.is_block():
        raise core.TilecSemanticError("squeeze needs a block, not a scalar")
    shape = list(x.type.shape)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise core.TilecSemanticError(f"squeeze's dim must be a constant int, got {dim!r}")
    if not -len(shape) <= dim < len(shape):
        raise core.TilecSemanticError(f"squeeze dimension {dim} is out of range for a tensor of rank {len(shape)}")
    if shape[dim] != 1:
        raise core.TilecSemanticError(f"squeeze can only remove a dimension of size 1; dimension {dim} of "
                                      f"{list(shape)} has size {shape[dim]}")
    del shape[dim]
    if not shape:
        return _sem().reshape_to_scalar(x)
    return _sem().reshape(x, shape)


@builtin(method=True)
def item(input) -> tensor:
    """The single element of a one-element tensor, as a scalar (a scalar is itself)."""
    if not isinstance(input, tensor):
        return input
    if not input.type.is_block():
        return input
    if input.type.numel != 1:
        raise core.TilecSemanticError(f"item() needs a tensor of one element, not of shape {list(input.type.shape)}")
    return _sem().reshape_to_scalar(input)


@builtin(method=True)
def broadcast_to(input, *shape) -> tensor:
    if len(shape) == 1 and isinstance(_unwrap(shape[0]), (_py.tuple, list)):
        shape = _unwrap(shape[0])
    return _sem().broadcast_to(_sem().to_tensor(input), core._unwrap_shape(shape))


def _shape_args(shape) -> tuple:
    if len(shape) == 1 and isinstance(_unwrap(shape[0]), (_py.tuple, list)):
        return _py.tuple(_unwrap(shape[0]))
    return _py.tuple(shape)


@builtin(method=True)
def reshape(input, *shape, can_reorder=False) -> tensor:
    """Row-major reshape to `shape` (same number of elements)."""
    return _sem().reshape(input, _shape_args(shape), bool(_unwrap(can_reorder)))


@builtin(method=True)
def view(input, *shape) -> tensor:
    """Same as reshape (tilec never reorders elements)."""
    return _sem().reshape(input, _shape_args(shape))


@builtin(method=True)
def ravel(x, can_reorder=False) -> tensor:
    """The elements of `x` as a 1-D tensor, in row-major order."""
    x = _sem().to_tensor(x)
    return _sem().reshape(x, (x.type.numel if x.type.is_block() else 1,))


@builtin(method=True)
def trans(input, *dims) -> tensor:
    """Permute the dimensions; with no dims, swap the last two (rank 2 or more)."""
    return _sem().trans(input, _shape_args(dims) if dims else ())


@builtin(method=True)
def permute(input, *dims) -> tensor:
    return _sem().permute(input, _shape_args(dims))


@builtin(method=True)
def join(a, b) -> tensor:
    """Stack two tensors along a new last dimension of size 2."""
    return _sem().join(a, b)


@builtin(method=True)
def split(a):
    """The two halves of a last dimension of size 2, as a tuple."""
    return core.tuple_value(_sem().split(a))


@builtin
def add(x, y, sanitize_overflow=True) -> tensor:
    """x + y; with `sanitize_overflow=False` a signed integer sum is not checked for
    overflow even in debug mode."""
    return _sem().add(x, y, bool(_unwrap(sanitize_overflow)))


@builtin
def sub(x, y, sanitize_overflow=True) -> tensor:
    """x - y (see `add` for `sanitize_overflow`)."""
    return _sem().sub(x, y, bool(_unwrap(sanitize_overflow)))


@builtin
def mul(x, y, sanitize_overflow=True) -> tensor:
    """x * y (see `add` for `sanitize_overflow`)."""
    return _sem().mul(x, y, bool(_unwrap(sanitize_overflow)))


@builtin
def cat(input, other, can_reorder=False, dim=0) -> tensor:
    """`input` then `other` along dimension `dim` (the first by default), always in order
    (`can_reorder` is accepted and ignored, as in Triton 3.9); both must have one type and
    one shape."""
    return _sem().cat(input, other, dim)


@builtin(method=True)
def interleave(a, b) -> tensor:
    """Interleave the elements of two tensors along their last dimension."""
    sem = _sem()
    joined = sem.join(a, b)
    shape = joined.type.shape
    if len(shape) == 1:  # two scalars: [a, b]
        return joined
    return sem.reshape(joined, shape[:-2] + (shape[-2] * 2,))


@builtin
def broadcast(input, other):
    return _py.tuple(_sem().broadcast_pair(_sem().to_tensor(input), _sem().to_tensor(other)))


# ----------------------------------------------------------------------------- memory


@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False) -> tensor:
    """Load the elements `pointer` points to; masked-off lanes read `other`.

    `pointer` may also be a block pointer (tl.make_block_ptr), which loads its block with
    `boundary_check` and `padding_option`.
    """
    target = _unwrap(pointer)
    if hasattr(target, "tilec_load"):
        return target.tilec_load(mask=mask, other=other, boundary_check=_unwrap(boundary_check),
                                 padding_option=_unwrap(padding_option), cache_modifier=cache_modifier,
                                 eviction_policy=eviction_policy, volatile=volatile)
    if _unwrap(boundary_check) or _unwrap(padding_option):
        raise core.TilecSemanticError("boundary_check and padding_option apply to block pointers "
                                      "(tl.make_block_ptr), not to tensors of pointers")
    return _sem().load(pointer, mask, other, cache_modifier, eviction_policy, volatile)


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="") -> None:
    """Store `value` where `pointer` points; masked-off lanes are skipped.

    `pointer` may also be a block pointer (tl.make_block_ptr).
    """
    target = _unwrap(pointer)
    if hasattr(target, "tilec_store"):
        return target.tilec_store(value, mask=mask, boundary_check=_unwrap(boundary_check),
                                  cache_modifier=cache_modifier, eviction_policy=eviction_policy)
    if _unwrap(boundary_check):
        raise core.TilecSemanticError("boundary_check applies to block pointers (tl.make_block_ptr), "
                                      "not to tensors of pointers")
    _sem().store(pointer, value, mask, cache_modifier, eviction_policy)


# ----------------------------------------------------------------------------- matrix product


@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=None) -> tensor:
    """acc + input @ other (see Semantic.dot for the types)."""
    return _sem().dot(input, other, acc, input_precision, allow_tf32, out_dtype, max_num_imprecise_acc)


@builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False, lhs_k_pack=True,
               rhs_k_pack=True, out_dtype=float32) -> tensor:
    """acc + (lhs * 2**(lhs_scale - 127)) @ (rhs * 2**(rhs_scale - 127)) for microscaled (MX)
    operands (see Semantic.dot_scaled for the formats and how it is computed)."""
    return _sem().dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, fast_math, lhs_k_pack,
                             rhs_k_pack, out_dtype)


# ----------------------------------------------------------------------------- atomics


def _make_atomic(kind: str, doc: str):
    @builtin(method=True)
    def fn(pointer, val, mask=None, sem=None, scope=None) -> tensor:
        return _sem().atomic_rmw(kind, pointer, val, mask, sem, scope)

    fn.__name__ = fn.__qualname__ = f"atomic_{kind}"
    fn.__doc__ = doc + " Returns the old values. sem: acq_rel (default), acquire, release, relaxed; " \
                       "scope: gpu (default), cta, sys."
    return fn


atomic_add = _make_atomic("add", "Atomically add `val` to *pointer.")
atomic_max = _make_atomic("max", "Atomically replace *pointer by max(*pointer, val).")
atomic_min = _make_atomic("min", "Atomically replace *pointer by min(*pointer, val).")
atomic_and = _make_atomic("and", "Atomically replace *pointer by *pointer & val.")
atomic_or = _make_atomic("or", "Atomically replace *pointer by *pointer | val.")
atomic_xor = _make_atomic("xor", "Atomically replace *pointer by *pointer ^ val.")
atomic_xchg = _make_atomic("xchg", "Atomically store `val` in *pointer.")


@builtin(method=True)
def atomic_cas(pointer, cmp, val, sem=None, scope=None) -> tensor:
    """Atomically store `val` where *pointer == cmp; returns the old values."""
    return _sem().atomic_cas(pointer, cmp, val, sem, scope)


@builtin(method=True)
def atomic_load(pointer, mask=None, sem=None, scope=None) -> tensor:
    """Atomically read *pointer (masked-off elements give 0). sem: acquire (default) or
    relaxed; scope: gpu (default), cta, sys."""
    return _sem().atomic_load(pointer, mask, sem, scope)


@builtin(method=True)
def atomic_store(pointer, val, mask=None, sem=None, scope=None) -> None:
    """Atomically write `val` to *pointer where `mask`. sem: release (default) or relaxed;
    scope: gpu (default), cta, sys."""
    _sem().atomic_store(pointer, val, mask, sem, scope)


@builtin(method=True)
def atomic_poll(pointer, expected_value, sem=None, scope=None, timeout_ns=None) -> tensor:
    """Waits until *pointer equals `expected_value` (every element), or until `timeout_ns`
    nanoseconds have passed; returns int1: whether each matched. sem: acquire (default)
    or relaxed; scope: gpu (default), cta, sys."""
    return _sem().atomic_poll(pointer, expected_value, sem, scope, timeout_ns)


# ----------------------------------------------------------------------------- elementwise


@builtin
def where(condition, x, y) -> tensor:
    """Elementwise `x if condition else y`; both sides are evaluated."""
    return _sem().where(condition, x, y)


@builtin
def maximum(x, y, propagate_nan=False) -> tensor:
    x, y = _tensor_operands(x, y, bf16_in_fp32=True)
    return _sem().maximum(x, y, _propagate_nan(propagate_nan))


@builtin
def minimum(x, y, propagate_nan=False) -> tensor:
    x, y = _tensor_operands(x, y, bf16_in_fp32=True)
    return _sem().minimum(x, y, _propagate_nan(propagate_nan))


def _tensor_operands(*values, bf16_in_fp32: bool) -> list[tensor]:
    """The operands of tl.maximum, tl.minimum, tl.clamp and tl.fma as Triton takes them:
    each number becomes a tensor of its own type first (`0.0` fp32, `2` int32), so it
    promotes like a tensor rather than taking the other operand's type as in `x + 2`
    (`tl.maximum(x_fp16, 0.0)` is fp32 and `tl.minimum(x_int8, 2)` int32, as in Triton),
    and with `bf16_in_fp32` a bf16 operand is compared in fp32 (Triton's min/max/clamp)."""
    sem = _sem()
    raw = [_unwrap(value) for value in values]
    unsigned = next((v.dtype for v in raw if isinstance(v, tensor) and v.dtype.is_int_unsigned()), None)
    negative = next((v for v in raw if isinstance(v, int) and not isinstance(v, bool) and v < 0), None)
    if unsigned is not None and negative is not None and unsigned.int_bitwidth >= (32 if negative >= -2**31 else 64):
        # the unsigned type wins, and Triton wraps the constant to a huge unsigned value: refused
        raise core.TilecSemanticError(f"cannot combine the negative constant {negative} with an unsigned {unsigned} "
                                      "value; cast one of them explicitly")
    tensors = [sem.to_tensor(value) for value in raw]
    if bf16_in_fp32:
        tensors = [sem.cast(t, float32) if t.dtype == core.bfloat16 else t for t in tensors]
    return tensors


def _propagate_nan(value) -> bool:
    """True for tl.PropagateNan.ALL (or True); False for .NONE, None or False."""
    value = _unwrap(value)
    if isinstance(value, PropagateNan):
        return value is PropagateNan.ALL
    if value is None or isinstance(value, (bool, int)):
        return bool(value)
    raise core.TilecSemanticError(f"propagate_nan must be tl.PropagateNan.ALL or tl.PropagateNan.NONE, got {value!r}")


class PropagateNan:
    """`tl.PropagateNan.ALL` / `.NONE`, as in Triton."""
    ALL: "PropagateNan"
    NONE: "PropagateNan"


PropagateNan.ALL = PropagateNan()
PropagateNan.NONE = PropagateNan()


def _make_math(name: str, doc: str):
    @builtin(method=True)
    def fn(x) -> tensor:
        return _sem().math_function(name, x)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


exp = _make_math("exp", "e ** x, elementwise.")
exp2 = _make_math("exp2", "2 ** x, elementwise.")
log = _make_math("log", "Natural logarithm, elementwise.")
log2 = _make_math("log2", "Base-2 logarithm, elementwise.")
sqrt = _make_math("sqrt", "Square root, elementwise (fp32: the hardware's fast approximation, as Triton; "
                          "tl.sqrt_rn is correctly rounded).")
rsqrt = _make_math("rsqrt", "1 / sqrt(x), elementwise.")
sin = _make_math("sin", "Sine, elementwise.")
cos = _make_math("cos", "Cosine, elementwise.")
floor = _make_math("floor", "Largest integer not greater than x, elementwise.")
ceil = _make_math("ceil", "Smallest integer not less than x, elementwise.")
erf = _make_math("erf", "The error function, elementwise.")


tan = _make_math("tan", "Tangent, elementwise.")
trunc = _make_math("trunc", "x rounded toward zero, elementwise.")
sqrt_rn = _make_math("sqrt_rn", "Square root rounded to nearest even (IEEE), elementwise.")


@builtin(method=True)
def abs(x) -> tensor:
    return _sem().abs(x)


@builtin
def umulhi(x, y) -> tensor:
    """The high half (32 or 64 bits) of the double-width product of two 32- or 64-bit
    integers, read as unsigned."""
    return _sem().umulhi(x, y)


@builtin
def fma(x, y, z) -> tensor:
    """x * y + z with a single rounding."""
    return _sem().fma(*_tensor_operands(x, y, z, bf16_in_fp32=False))


@builtin
def div_rn(x, y) -> tensor:
    """x / y with IEEE round-to-nearest (`/` may be approximate for fp32, as in Triton)."""
    return _sem().div_rn(x, y)


@builtin
def fdiv(x, y, ieee_rounding=False, approx=False) -> tensor:
    """x / y: fp32 as `/` (div.full.f32), IEEE-rounded with `ieee_rounding=True`, the
    hardware's fast approximation (div.approx.f32, fp32 only) with `approx=True`."""
    return _sem().fdiv(x, y, bool(_unwrap(ieee_rounding)), bool(_unwrap(approx)))


@builtin
def clamp(x, min, max, propagate_nan=PropagateNan.NONE) -> tensor:
    """min(max(x, min), max) elementwise, for floats and integers."""
    x = _sem().to_tensor(x)
    if x.dtype.is_floating():  # Triton 3.6's clamp (floats only); integer bounds adapt to x, as in arithmetic
        x, min, max = _tensor_operands(x, min, max, bf16_in_fp32=True)
    return _sem().clamp(x, min, max, _propagate_nan(propagate_nan))


@builtin(method=True)
def sigmoid(x) -> tensor:
    """1 / (1 + exp(-x)), elementwise."""
    sem = _sem()
    x = sem.to_tensor(x)
    return sem.truediv(1.0, sem.add(1.0, sem.math_unary("exp", sem.minus(x))))


@builtin
def extern_elementwise(lib_name, lib_path, args, arg_type_symbol_dict, is_pure, _builder=None):
    """Triton's low-level hook: call a libdevice function chosen by argument types.

    `arg_type_symbol_dict` maps tuples of dtypes to (symbol, result dtype).
    """
    return _sem().extern_elementwise(list(args), dict(_unwrap(arg_type_symbol_dict)), bool(_unwrap(is_pure)))


# ----------------------------------------------------------------------------- reductions


@builtin(method=True)
def sum(input, axis=None, keep_dims=False, dtype=None) -> tensor:
    """Sum along `axis`; small integer types accumulate in 32 bits, as in Triton."""
    return _sem().sum(input, axis, keep_dims, dtype)


@builtin(method=True)
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
        propagate_nan=None):
    """Maximum along `axis`; with return_indices, (maximum, its index). NaNs are ignored
    unless `propagate_nan=tl.PropagateNan.ALL`, where a NaN wins (and its index is kept)."""
    nan_wins = _propagate_nan(propagate_nan)
    if _unwrap(return_indices):
        return core.tuple_value(_sem().arg_reduction(input, axis, True, bool(_unwrap(return_indices_tie_break_left)),
                                                     bool(_unwrap(keep_dims)), nan_wins))
    return _sem().max(input, axis, keep_dims, nan_wins)


@builtin(method=True)
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
        propagate_nan=None):
    """Minimum along `axis`; with return_indices, (minimum, its index). NaNs are ignored
    unless `propagate_nan=tl.PropagateNan.ALL`, where a NaN wins (and its index is kept)."""
    nan_wins = _propagate_nan(propagate_nan)
    if _unwrap(return_indices):
        return core.tuple_value(_sem().arg_reduction(input, axis, False, bool(_unwrap(return_indices_tie_break_left)),
                                                     bool(_unwrap(keep_dims)), nan_wins))
    return _sem().min(input, axis, keep_dims, nan_wins)


@builtin(method=True)
def argmax(input, axis, tie_break_left=True, keep_dims=False) -> tensor:
    """Index of the maximum along `axis`, NaNs skipped: ties give the lowest index."""
    return _sem().arg_reduction(input, axis, True, bool(_unwrap(tie_break_left)), bool(_unwrap(keep_dims)))[1]


@builtin(method=True)
def argmin(input, axis, tie_break_left=True, keep_dims=False) -> tensor:
    """Index of the minimum along `axis`, NaNs skipped: ties give the lowest index."""
    return _sem().arg_reduction(input, axis, False, bool(_unwrap(tie_break_left)), bool(_unwrap(keep_dims)))[1]


@builtin(method=True)
def xor_sum(input, axis=None, keep_dims=False) -> tensor:
    return _sem().xor_sum(input, axis, keep_dims)


@builtin(method=True)
def cumsum(input, axis=0, reverse=False, dtype=None) -> tensor:
    """Inclusive prefix sum along `axis` (small integers accumulate in 32 bits)."""
    return _sem().cumsum(input, axis, reverse, dtype)


@builtin(method=True)
def cumprod(input, axis=0, reverse=False, dtype=None) -> tensor:
    """Inclusive prefix product along `axis`."""
    return _sem().cumprod(input, axis, reverse, dtype)


@builtin(method=True)
def associative_scan(input, axis, combine_fn, reverse=False):
    """Inclusive scan of `input` (a tensor or a tuple) along `axis` with a @jit `combine_fn`."""
    return _sem().associative_scan(_unwrap(input), axis, _unwrap(combine_fn), bool(_unwrap(reverse)))


@builtin(method=True)
def reduce(input, axis, combine_fn, keep_dims=False):
    """Reduce `input` (a tensor or a tuple of tensors) along `axis` with a @jit `combine_fn`."""
    return _sem().reduce_with(_unwrap(input), axis, _unwrap(combine_fn), bool(_unwrap(keep_dims)))


@builtin
def map_elementwise(scalar_fn, *args, pack=1):
    """`scalar_fn` (a @jit function of scalars, which may branch and loop) applied to each
    element of the broadcast `args`; one tensor per value it returns."""
    return _sem().map_elementwise(_unwrap(scalar_fn), [_unwrap(a) for a in args], pack)


# ----------------------------------------------------------------------------- misc


@builtin(method=True)
def cdiv(x, div):
    """ceil(x / div) for integers; folds when both are constants."""
    x, div = _unwrap(x), _unwrap(div)
    if isinstance(x, int) and isinstance(div, int):
        return constexpr((x + div - 1) // div)
    return (x + div - 1) // div


@builtin
def condition(arg, disable_licm=False):
    """A loop condition with hints for the compiler (`while tl.condition(i < n,
    disable_licm=True)`): the condition itself; the hint is accepted and has no effect."""
    return arg


@builtin
def static_assert(cond, msg="") -> None:
    """Fails compilation when the constexpr `cond` is false."""
    cond = _unwrap(cond)
    if isinstance(cond, tensor):
        raise core.ConstexprRequired("static_assert needs a compile-time (constexpr) condition", cond,
                                     hint="use tl.device_assert to check a value known only at run time")
    if not cond:
        raise core.StaticAssertionFailure(f"static_assert failed: {_unwrap(msg)}" if _unwrap(msg)
                                          else "static_assert failed")


# ----------------------------------------------------------------------------- gather, histogram, inline asm


@builtin(method=True)
def gather(src, index, axis):
    """out[i][j] = src[index[i][j]][j] for axis=0 (src[i][index[i][j]] for axis=1, and so
    on): `index` has the source's rank and shape except along `axis`."""
    return _sem().gather(src, index, axis)


@builtin(method=True)
def histogram(input, num_bins, mask=None):
    """int32 counts of the values of the 1-D integer `input` in bins 0 .. num_bins - 1
    (values outside, and masked-off elements, are not counted)."""
    return _sem().histogram(input, num_bins, mask)


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """Runs the PTX `asm` on every element of the (broadcast) `args`; `$0..` name the
    results then the arguments, `constraints` gives their LLVM constraint letters. With
    `pack` > 1 each instance handles that many consecutive elements, packed into each
    operand register. `dtype` (or a tuple of dtypes: one result each) types the results."""
    return _sem().inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)


@builtin(method=True)
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    """`input` converted to `dtype` (as `input.to(dtype, ...)`)."""
    return _sem().cast(input, dtype, bitcast=bool(_unwrap(bitcast)), fp_downcast_rounding=_unwrap(fp_downcast_rounding))


@builtin
def to_tensor(x):
    """A tensor for `x` (a Python scalar becomes a constant of its natural type)."""
    return _sem().to_tensor(x)


# ----------------------------------------------------------------------------- debugging


@builtin
def device_print(prefix, *args, hex=False) -> None:
    """Prints `prefix` and every element of each of `args` at run time, one line per
    element: `pid (x, y, z) idx (i, j) prefix value`. Python's `print` in a kernel is this."""
    _sem().device_print(prefix, args, hex)


@builtin
def device_assert(cond, msg="", mask=None) -> None:
    """In debug mode (`@jit(debug=True)`, `debug=True` at launch or TILEC_DEBUG=1), stops
    the kernel where `cond` is false; otherwise does nothing. Python's `assert` on a
    run-time value in a kernel is this."""
    _sem().device_assert(cond, msg, mask)


@builtin
def debug_barrier() -> None:
    """Waits until every thread of the program gets here (shared memory is consistent)."""
    _sem().debug_barrier()


@builtin
def assume(cond) -> None:
    """Lets the compiler assume `cond` holds; a false `cond` is undefined behaviour."""
    _sem().assume(cond)


@builtin
def multiple_of(input, values):
    """`input`, with the promise that its elements (the first of each run, for runs made
    by max_contiguous) are multiples of `values` (one per dimension, or one for all)."""
    return _sem().hint("multiple_of", input, values)


@builtin
def max_contiguous(input, values):
    """`input`, with the promise that it holds runs of `values` consecutive integers."""
    return _sem().hint("max_contiguous", input, values)


@builtin
def max_constancy(input, values):
    """`input`, with the promise that it holds runs of `values` equal elements."""
    return _sem().hint("max_constancy", input, values)


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False) -> None:
    """Prints at compile time (and once per program in the interpreter)."""
    print(*(_unwrap(v) for v in values), sep=_unwrap(sep), end=_unwrap(end), flush=True)


class range:
    """`for i in tl.range(start, end, step, num_stages=...)`: a loop kept as a loop."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False):
        if arg2 is None:
            self.start, self.end = constexpr(0), arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = step if step is not None else constexpr(1)
        self.num_stages = _unwrap(num_stages)
        self.loop_unroll_factor = _unwrap(loop_unroll_factor)
        self.flatten = bool(_unwrap(flatten))
        # tilec's warp specialisation of a persistent loop is fusing it with its inner loop
        # (the next tile's loads in flight during this tile's epilogue): see FLATTEN_ATTR.
        self.warp_specialize = bool(_unwrap(warp_specialize))
        for option in ("num_stages", "loop_unroll_factor"):
            value = getattr(self, option)
            if value is not None and (isinstance(value, _py.bool) or not isinstance(value, _py.int) or value < 0):
                raise core.TilecSemanticError(f"tl.{type(self).__name__}'s {option} must be a constexpr int >= 0, "
                                              f"got {value!r}")

    def __iter__(self):
        # Plain Python iteration (outside a `for` statement); loops in kernels, compiled or
        # interpreted, go through frontend/python_rules.Loop, which reads the fields.
        return iter(_py.range(int(_unwrap(self.start)), int(_unwrap(self.end)), int(_unwrap(self.step))))


class static_range(range):
    """`for i in tl.static_range(...)`: the compiler unrolls it; bounds must be constexpr."""


# ----------------------------------------------------------------------------- tuples


@builtin
def tuple(values=()) -> core.tuple_value:
    """A tuple of kernel values (`tl.tuple((a, b))`, `tl.tuple([a, b])`), as Triton's."""
    return core.tuple_value(_py.tuple(_unwrap(values)))
