"""`NumpyBuilder`: the `Builder` of the interpreter, computing with NumPy arrays at once.

The semantic layer (tilec/language/semantic/) has already promoted types, broadcast
shapes and checked legality, so this builder only has to compute each operation the way
the GPU does. That is mostly NumPy, except where NumPy's semantics differ from MLIR's
arith dialect, which the compiled code follows:

- integers wrap in their own width (NumPy arrays already do; 0-d results are kept as
  arrays, never NumPy scalars, whose arithmetic warns on overflow). The launcher runs
  kernels under `np.errstate(all="ignore")`, so no operation warns;
- `//` and `%` on signed integers truncate toward zero, as in C, where NumPy floors;
- integer division by zero is undefined on the GPU; here it gives a deterministic value:
  the quotient has every bit set (-1 when signed), the remainder is the dividend. The
  signed overflow case MIN // -1 wraps to MIN, remainder 0;
- shifts by the bit width or more give 0 (`<<`, unsigned `>>`) or the sign fill (signed
  `>>`), as the GPU's shift instructions clamp;
- `int1` is arithmetic modulo 2 (addi is xor), where NumPy's bool `+` is `or`;
- float-to-int conversions saturate, NaN converts to 0 (PTX `cvt.rzi` does the same);
- float results keep their element type: fp32 math stays in fp32; bf16 and fp8 values
  (ml_dtypes arrays) are computed in fp32 and rounded once to their type, and narrowing
  conversions round to nearest even, to fp8 saturating (see numpy_common.py);
- `fma` rounds once, `divf_rn`/`sqrt_rn` are IEEE's (as are `divf`/`sqrt` here, which
  may be approximate on the GPU); libdevice calls (`extern_elementwise`) run the NumPy
  functions of `libdevice_numpy.NUMPY_IMPLEMENTATIONS`, found by symbol.

Handles are NumPy arrays: 0-d arrays for scalars, arrays of the block shape for blocks,
uint64 virtual addresses (see memory.py) for pointers.
"""
from __future__ import annotations

import dis
import functools
import math
import types
from typing import Any, Callable, Sequence

import numpy as np

from ..language.builder import Builder
from ..language.core import TilecSemanticError, block_type, dtype, tensor
from . import libdevice_numpy, nvvm_numpy
from .memory import Memory
from .numpy_common import (as_array as _array, check_combined as _check_combined, compute_dtype, fma, is_float,
                           is_narrow, kernel_frame, numpy_dtype, round_to, signed as _signed, unsigned as _unsigned)
from .numpy_ops_atomic import AtomicOps
from .numpy_ops_misc import MiscOps
from .numpy_ops_shape import ShapeOps


# ----------------------------------------------------------------------------- integer arithmetic


def _int_divide(a: np.ndarray, b: np.ndarray, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """C-style (quotient, remainder): truncating, with the division-by-zero rule above."""
    dt = a.dtype
    zero = b == 0
    # -1 is special too: MIN % -1 traps in C (and so inside NumPy) on x86.
    minus_one = (b == -1) if signed else np.zeros(b.shape, dtype=bool)
    safe = np.where(zero | minus_one, 1, b).astype(dt)
    if signed:
        remainder = np.fmod(a, safe)  # fmod takes the dividend's sign: C's %
        quotient = (a - remainder) // safe  # exact, so flooring is truncating
    else:
        quotient, remainder = a // safe, a % safe
    all_ones = np.array(-1, dtype=dt) if signed else np.array(np.iinfo(dt).max, dtype=dt)
    quotient = np.where(zero, all_ones, np.where(minus_one, np.negative(a), quotient))
    remainder = np.where(zero, a, np.where(minus_one, 0, remainder))
    return quotient.astype(dt, copy=False), remainder.astype(dt, copy=False)


def _shift(op: str, a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    """Shifts with the amount taken as unsigned and clamped at the bit width."""
    dt = a.dtype
    udt = _unsigned(dt)
    amount = b.astype(dt, copy=False).view(udt)
    too_far = amount >= width
    amount = np.where(too_far, 0, amount).astype(udt)
    if op == "shrsi":
        # Arithmetic shift of the signed value; a too-far shift leaves only the sign.
        amount = np.where(too_far, width - 1, amount).astype(dt)
        return np.right_shift(a, amount)
    # Shift the unsigned bits, so left shifts of negative numbers are well defined.
    bits = a.view(udt)
    shifted = np.left_shift(bits, amount) if op == "shli" else np.right_shift(bits, amount)
    return np.where(too_far, 0, shifted).astype(udt).view(dt)


def _mulhi_unsigned(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high half of the unsigned product of two same-type unsigned arrays."""
    width = a.dtype.itemsize * 8
    if width < 64:
        wide = a.astype(np.uint64) * b.astype(np.uint64)
        return (wide >> np.uint64(width)).astype(a.dtype)
    # 64 x 64 -> 128 bits from four 32 x 32 -> 64-bit partial products.
    low = np.uint64(0xFFFFFFFF)
    shift = np.uint64(32)
    al, ah, bl, bh = a & low, a >> shift, b & low, b >> shift
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    middle = (ll >> shift) + (lh & low) + (hl & low)  # < 3 * 2**32: no overflow
    return hh + (lh >> shift) + (hl >> shift) + (middle >> shift)


_INT_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "addi": np.add, "subi": np.subtract, "muli": np.multiply,
    "andi": np.bitwise_and, "ori": np.bitwise_or, "xori": np.bitwise_xor,
    "maxsi": np.maximum, "maxui": np.maximum, "minsi": np.minimum, "minui": np.minimum,
}

_FLOAT_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
    "remf": np.fmod,  # arith.remf is C's fmod: the result takes the dividend's sign
    "maxnumf": np.fmax, "minnumf": np.fmin,  # ignore a NaN operand
    "maximumf": lambda a, b: _ordered_zeros(np.maximum, a, b, True),  # propagate NaN; -0 < +0
    "minimumf": lambda a, b: _ordered_zeros(np.minimum, a, b, False),
    "divf_rn": np.divide,  # NumPy's division is IEEE's (`divf` is too, here: the GPU's may be approximate)
    "divf_approx": np.divide,  # the GPU's div.approx.f32 is within 2 ulp of this, for |y| below 2**126
    "powf": np.power,
}


def _int_binary(op: str, a: np.ndarray, b: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt == np.bool_:
        # int1 arithmetic is modulo 2: compute in uint8, keep the low bit.
        result = _int_binary_wide(op, a.astype(np.uint8), b.astype(np.uint8), width=1)
        return (result & 1).astype(np.bool_)
    return _int_binary_wide(op, a, b, width=dt.itemsize * 8)


def _int_binary_wide(op: str, a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    fn = _INT_BINARY.get(op)
    if fn is not None:
        if op in ("maxsi", "minsi"):
            a, b = a.view(_signed(a.dtype)), b.view(_signed(b.dtype))
        elif op in ("maxui", "minui"):
            a, b = a.view(_unsigned(a.dtype)), b.view(_unsigned(b.dtype))
        return fn(a, b)
    if op in ("divsi", "remsi", "divui", "remui"):
        signed = op.endswith("si")
        view = _signed if signed else _unsigned
        quotient, remainder = _int_divide(a.view(view(a.dtype)), b.view(view(b.dtype)), signed)
        return quotient if op.startswith("div") else remainder
    if op in ("shli", "shrsi", "shrui"):
        if op == "shrsi":
            a = a.view(_signed(a.dtype))
        return _shift(op, a, b, width)
    if op == "mulhiui":
        udt = _unsigned(a.dtype)
        return _mulhi_unsigned(a.view(udt), b.view(udt)).view(a.dtype)
    raise TilecSemanticError(f"the interpreter does not implement the integer operation {op!r}")


# ----------------------------------------------------------------------------- unary and casts

_erf = np.vectorize(math.erf, otypes=[np.float64])

_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "negf": np.negative, "absf": np.abs, "absi": np.abs,  # abs(MIN) wraps to MIN, as on the GPU
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: np.reciprocal(np.sqrt(x)), "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "tan": np.tan,
    "sqrt_rn": np.sqrt,  # NumPy's square root is IEEE's (`sqrt` is too, here: the GPU's may be approximate)
    # No float32 erf in NumPy: compute exactly in float64, round once to the element type.
    "erf": lambda x: _erf(x.astype(np.float64)) if x.size else x.astype(np.float64),
}


def _float_to_int(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Saturating truncation toward zero; NaN -> 0 (PTX cvt.rzi semantics), without warnings."""
    if dt == np.bool_:
        return x != 0
    info = np.iinfo(dt)
    wide = np.trunc(x.astype(np.float64))  # exact for fp16/fp32/fp64
    bits = dt.itemsize * 8
    lo, hi = (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1)) if info.min < 0 else (0.0, 2.0 ** bits)
    below, above = wide < lo, wide >= hi
    in_range = np.where(np.isnan(wide) | below | above, 0, wide).astype(dt)
    result = np.where(below, np.array(info.min, dt), np.where(above, np.array(info.max, dt), in_range))
    return result.astype(dt, copy=False)


def testing_an_assert() -> bool:
    """Whether the innermost kernel frame (outside tilec) is testing an `assert`: its
    current instruction is the truth test or conditional jump that skips raising
    AssertionError (also in the form pytest rewrites asserts to)."""
    frame = kernel_frame()
    return frame is not None and frame.f_lasti in _assert_tests(frame.f_code)


@functools.lru_cache(maxsize=256)
def _assert_tests(code: types.CodeType) -> frozenset[int]:
    instructions = list(dis.get_instructions(code))
    tests = set()
    for i, ins in enumerate(instructions):
        if not (ins.opname.startswith("POP_JUMP") and "IF_TRUE" in ins.opname):
            continue
        failure = [n for n in instructions[i + 1:] if n.offset < ins.argval]  # falls through when false
        raises = any(n.opname == "RAISE_VARARGS" for n in failure)
        if raises and any(n.opname == "LOAD_ASSERTION_ERROR" or n.argval == "AssertionError" for n in failure):
            tests.add(ins.offset)
            if i and instructions[i - 1].opname == "TO_BOOL":  # Python 3.13 tests truth first
                tests.add(instructions[i - 1].offset)
    return frozenset(tests)


def _ordered_zeros(fn: Callable, a: np.ndarray, b: np.ndarray, larger: bool) -> np.ndarray:
    """np.maximum/np.minimum (NaN propagating) with -0.0 ordered below +0.0, as IEEE
    754-2019 maximum/minimum (MLIR's maximumf/minimumf, PTX max.NaN) require."""
    result = fn(a, b)
    both_zero = (a == 0) & (b == 0)
    if np.any(both_zero):
        negative = (np.signbit(a) & np.signbit(b)) if larger else (np.signbit(a) | np.signbit(b))
        zero = np.where(negative, -0.0, 0.0).astype(result.dtype)
        result = np.where(both_zero, zero, result)
    return result


def _round_toward_zero(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """x narrowed to `dt`, rounding toward zero: the nearest value, stepped one unit
    toward zero where it rounded away (the formats are sign-magnitude, so that step is
    the bit pattern minus one); an overflow lands on the largest finite value."""
    nearest = np.asarray(round_to(x, dt))
    # x is fp32 or fp64 (the semantic layer's rtz pairs), which holds every value of `dt`
    # exactly, so the comparison is made in x's own type.
    away = np.abs(nearest.astype(x.dtype)) > np.abs(x)  # false for NaN
    unsigned = np.dtype(f"u{dt.itemsize}")
    return (nearest.view(unsigned) - away.astype(unsigned)).view(dt)


def _int_cast(op: str, x: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt == np.bool_:  # trunci to i1 keeps the low bit
        return (x & 1).astype(np.bool_) if x.dtype != np.bool_ else x.copy()
    if op == "extsi" and x.dtype != np.bool_:
        x = x.view(_signed(x.dtype))
    elif op == "extui" and x.dtype != np.bool_:
        x = x.view(_unsigned(x.dtype))
    return x.astype(dt)  # NumPy's integer astype wraps (trunci) or extends as C does


# ----------------------------------------------------------------------------- the builder


class NumpyBuilder(ShapeOps, AtomicOps, MiscOps, Builder):
    """Computes every operation of one program immediately; see the module docstring.

    Shapes and scans (numpy_ops_shape.py), atomics (numpy_ops_atomic.py), `dot` and
    debugging (numpy_ops_misc.py) live in mixins.
    """

    reports_warnings = False  # the frontend check before the run reports them (see Builder)

    def __init__(self, memory: Memory, grid: tuple[int, int, int], kernel_name: str = "kernel",
                 debug: bool = False):
        self.memory = memory
        self.grid = tuple(int(g) for g in grid)
        self.program = (0, 0, 0)  # set by the launcher before each program runs
        self.kernel_name = kernel_name  # for device_assert's message
        self.debug = debug  # whether a Python `assert` on a tensor checks (as device_assert)
        self.failed_assert: tuple[Any, int] | None = None  # (first failing index, count)

    # -- constants and creation
    def constant(self, value: int | float | bool, ty: dtype) -> np.ndarray:
        dt = numpy_dtype(ty)
        if is_float(dt):
            return round_to(np.array(value, dtype=np.float64), dt)
        return np.array(value, dtype=dt)

    def splat(self, scalar: np.ndarray, ty: block_type) -> np.ndarray:
        return np.full(ty.shape, scalar, dtype=numpy_dtype(ty))

    def make_range(self, start: int, end: int, ty: block_type) -> np.ndarray:
        return np.arange(start, end, dtype=np.int32)

    def program_id(self, axis: int) -> np.ndarray:
        return np.array(self.program[axis], dtype=np.int32)

    def num_programs(self, axis: int) -> np.ndarray:
        return np.array(self.grid[axis], dtype=np.int32)

    # -- elementwise
    def binary(self, op: str, lhs: np.ndarray, rhs: np.ndarray, ty: dtype) -> np.ndarray:
        dt = numpy_dtype(ty)
        fn = _FLOAT_BINARY.get(op)
        if fn is not None:
            # bf16/fp8 compute in float32 and round once: the correctly rounded result.
            work = compute_dtype(dt)
            return round_to(fn(round_to(_array(lhs, dt), work), round_to(_array(rhs, dt), work)), dt)
        return _array(_int_binary(op, _array(lhs, dt), _array(rhs, dt), dt), dt)

    def unary(self, op: str, x: np.ndarray, ty: dtype) -> np.ndarray:
        fn = _UNARY.get(op)
        if fn is None:
            raise TilecSemanticError(f"the interpreter does not implement the operation {op!r}")
        dt = numpy_dtype(ty)
        x = _array(x, dt)
        if is_float(dt):
            return round_to(fn(round_to(x, compute_dtype(dt))), dt)
        return _array(fn(x), dt)

    def ternary(self, op: str, a: np.ndarray, b: np.ndarray, c: np.ndarray, ty: dtype) -> np.ndarray:
        if op != "fma":
            raise TilecSemanticError(f"the interpreter does not implement the operation {op!r}")
        return fma(a, b, c, numpy_dtype(ty))

    def extern_elementwise(self, symbol: str, args: Sequence[np.ndarray], ty: dtype, pure: bool = True) -> np.ndarray:
        fn = _extern_function(symbol)
        arrays = [np.asarray(a) for a in args]
        result = round_to(np.asarray(fn(*arrays)), numpy_dtype(ty))
        shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
        return result if result.shape == shape else np.broadcast_to(result, shape).copy()

    def compare(self, predicate: str, lhs: np.ndarray, rhs: np.ndarray, is_float: bool, ty: dtype) -> np.ndarray:
        lhs, rhs = np.asarray(lhs), np.asarray(rhs)
        if is_narrow(lhs.dtype):  # bf16/fp8: compare the (exact) float32 values
            lhs, rhs = round_to(lhs, np.float32), round_to(rhs, np.float32)
        kind = predicate
        if not is_float and predicate not in ("eq", "ne"):
            # The predicate, not the arrays' dtype, says how to read the bits.
            if lhs.dtype != np.bool_:
                view = _signed if predicate[0] == "s" else _unsigned
                lhs, rhs = lhs.view(view(lhs.dtype)), rhs.view(view(rhs.dtype))
            kind = predicate[1:]
        elif is_float:
            # Ordered predicates are false on NaN, as NumPy's; `une` (!=) is true on NaN.
            kind = {"oeq": "eq", "une": "ne", "olt": "lt", "ole": "le", "ogt": "gt", "oge": "ge"}[predicate]
        fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
              "gt": np.greater, "ge": np.greater_equal}[kind]
        return np.asarray(fn(lhs, rhs), dtype=np.bool_)

    def select(self, cond: np.ndarray, true_value: np.ndarray, false_value: np.ndarray, ty: dtype) -> np.ndarray:
        return _array(np.where(cond, true_value, false_value), numpy_dtype(ty))

    def cast(self, op: str, x: np.ndarray, ty: dtype) -> np.ndarray:
        x = np.asarray(x)
        dt = numpy_dtype(ty)
        if op in ("extsi", "extui", "trunci"):
            result = _int_cast(op, x, dt)
        elif op == "sitofp":
            result = round_to(x if x.dtype == np.bool_ else x.view(_signed(x.dtype)), dt)
        elif op == "uitofp":
            result = round_to(x if x.dtype == np.bool_ else x.view(_unsigned(x.dtype)), dt)
        elif op in ("fptosi", "fptoui"):
            result = _float_to_int(x, dt)
        elif op in ("extf", "truncf"):
            result = round_to(x, dt)  # nearest even; fp16/bf16 overflow to inf, fp8 saturates
        elif op == "truncf_rtz":
            result = _round_toward_zero(x, dt)
        elif op == "bitcast":
            result = x.copy() if x.dtype == np.bool_ or dt == np.bool_ else x.view(dt).copy()
        elif op in ("ptrtoint", "inttoptr"):
            result = x.astype(np.uint64).view(dt) if dt.itemsize == 8 else x.astype(dt)
        else:
            raise TilecSemanticError(f"the interpreter does not implement the conversion {op!r}")
        if ty.scalar.is_ptr():  # an integer made a pointer: a host address (data_ptr()) is mapped
            result = self.memory.pointers_from_integers(result)
        return _array(result, dt)

    # -- shape
    def broadcast(self, x: np.ndarray, ty: block_type) -> np.ndarray:
        return np.broadcast_to(x, ty.shape).copy()

    def expand_dims(self, x: np.ndarray, axis: int, ty: block_type) -> np.ndarray:
        return np.expand_dims(x, axis)

    # -- memory
    def addptr(self, ptr: np.ndarray, offset: np.ndarray, ty: dtype) -> np.ndarray:
        itemsize = ty.scalar.element_ty.itemsize
        # Offsets of any integer type become 64-bit byte counts (signed types sign-extend,
        # unsigned ones zero-extend); the uint64 sum wraps like the GPU's 64-bit address
        # arithmetic, so a negative offset moves backwards.
        delta = np.asarray(np.asarray(offset).astype(np.int64) * np.int64(itemsize)).view(np.uint64)
        return np.asarray(np.asarray(ptr, dtype=np.uint64) + delta, dtype=np.uint64)

    def load(self, ptr: np.ndarray, mask: np.ndarray | None, other: np.ndarray | None, ty: dtype, *,
             cache_modifier: str, eviction_policy: str, volatile: bool) -> np.ndarray:
        values = self.memory.load(np.asarray(ptr, dtype=np.uint64), None if mask is None else np.asarray(mask),
                                  other, numpy_dtype(ty))
        if ty.scalar.is_ptr():  # pointers read from memory hold host addresses: map them
            values = self.memory.pointers_from_integers(values)
        return values

    def store(self, ptr: np.ndarray, value: np.ndarray, mask: np.ndarray | None, *,
              cache_modifier: str, eviction_policy: str) -> None:
        self.memory.store(np.asarray(ptr, dtype=np.uint64), np.asarray(value),
                          None if mask is None else np.asarray(mask))

    # -- reductions (scans are in numpy_ops_shape.py)
    def reduce(self, inputs: Sequence[tensor], axis: int, combine: Callable,
               result_types: Sequence[dtype]) -> list[np.ndarray]:
        """Pairwise tree: combine the two halves of `axis` until one element is left.

        `combine` goes through the semantic layer, so its operands must be well-typed
        tensors: blocks of the current half shape (the axis never disappears inside the
        loop, so every shape stays a valid block shape).
        """
        values = [np.asarray(x.handle) for x in inputs]
        elements = [x.dtype for x in inputs]
        length = values[0].shape[axis]
        while length > 1:
            if length % 2:
                raise TilecSemanticError(f"cannot reduce an axis of length {length}: not a power of 2")
            half = length // 2
            lower = [slice(None)] * values[0].ndim
            upper = list(lower)
            lower[axis], upper[axis] = slice(0, half), slice(half, length)
            shape = values[0][tuple(lower)].shape
            lhs = [tensor(v[tuple(lower)], block_type(e, shape)) for v, e in zip(values, elements)]
            rhs = [tensor(v[tuple(upper)], block_type(e, shape)) for v, e in zip(values, elements)]
            combined = list(combine(lhs, rhs))
            _check_combined(combined, lhs)
            values = [np.asarray(t.handle) for t in combined]
            length = half
        return [_array(np.squeeze(v, axis=axis), numpy_dtype(rt)) for v, rt in zip(values, result_types)]

    def map_elementwise(self, inputs: Sequence[tensor], body: Callable, shape: Sequence[int],
                        pack: int = 1) -> list[tensor]:
        """`body` on the elements one at a time (scalar tensors), as the compiled body runs
        per element; with `pack` > 1, on `pack` consecutive elements (in row-major order)
        at a time, each input's in turn, and the results come back result by result."""
        arrays = [np.asarray(x.handle).reshape(-1) for x in inputs]
        count = int(np.prod(shape, dtype=np.int64))
        outputs: list[np.ndarray] | None = None
        result_types: list = []
        for start in range(0, count, pack):
            group = range(start, start + pack)
            results = body([tensor(np.asarray(a[i]), x.dtype) for a, x in zip(arrays, inputs) for i in group])
            if outputs is None:
                result_types = [r.dtype for r in results[::pack]]
                outputs = [np.empty(count, numpy_dtype(t)) for t in result_types]
            for k, r in enumerate(results):
                outputs[k // pack][start + k % pack] = np.asarray(r.handle)
        return [tensor(out.reshape(tuple(shape)), block_type(t, shape)) for out, t in zip(outputs, result_types)]

    # -- host interaction
    def _assert_statement(self, condition: np.ndarray) -> bool:
        """The kernel's `assert cond, msg` on a tensor: what the compiler makes of it, a
        device assert (checked in debug mode only). On failure Python raises the
        AssertionError itself; the launcher adds where (`failed_assert`)."""
        if not self.debug:
            return True
        failing = condition == 0
        if not failing.any():
            return True
        first = tuple(int(i) for i in np.argwhere(failing)[0]) if condition.ndim else ()
        self.failed_assert = (first[0] if len(first) == 1 else first, int(failing.sum()))
        return False

    def to_python(self, x: np.ndarray) -> Any:
        x = np.asarray(x)
        if testing_an_assert():
            return self._assert_statement(x)
        if x.ndim != 0 and x.size == 1:  # a one-element block, as in `if` (compiled: its only element)
            x = x.reshape(())
        if x.ndim != 0:
            # The rules of python_rules.py never ask a block for one value; Python's own
            # bool(), int() or float() of a tensor in kernel code can.
            raise TilecSemanticError(f"a block of shape {list(x.shape)} has no single Python value; reduce it "
                                     "first (tl.max, tl.sum) or use tl.where")
        if is_narrow(x.dtype):
            return float(round_to(x, np.float32))
        return x.item()


# ----------------------------------------------------------------------------- libdevice

# IEEE-rounded division and square root, in case `libdevice_numpy.NUMPY_IMPLEMENTATIONS` lacks them
# (NumPy's are correctly rounded in the arguments' own type).
_EXTERN_FALLBACKS: dict[str, Callable[..., np.ndarray]] = {
    "__nv_fdiv_rn": lambda x, y: np.divide(np.asarray(x, np.float32), np.asarray(y, np.float32)),
    "__nv_ddiv_rn": lambda x, y: np.divide(np.asarray(x, np.float64), np.asarray(y, np.float64)),
    "__nv_fsqrt_rn": lambda x: np.sqrt(np.asarray(x, np.float32)),
    "__nv_dsqrt_rn": lambda x: np.sqrt(np.asarray(x, np.float64)),
}


def _extern_function(symbol: str) -> Callable[..., np.ndarray]:
    """The NumPy version of libdevice function `symbol`, found by its name (the table is
    read at each call, so tests can stand in their own)."""
    fn = (libdevice_numpy.NUMPY_IMPLEMENTATIONS.get(symbol) or _EXTERN_FALLBACKS.get(symbol)
          or nvvm_numpy.NUMPY_IMPLEMENTATIONS.get(symbol))
    if fn is None:
        raise TilecSemanticError(f"the interpreter has no implementation of the libdevice function {symbol!r} "
                                 "(add it to tilec.interpreter.libdevice_numpy.NUMPY_IMPLEMENTATIONS)")
    return fn
