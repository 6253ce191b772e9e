"""Expressions of the language, each with its source spelling and its reference meaning.

An `Expr` is built from operand Exprs by one of the functions below, which applies the
language's typing rules (fuzz_semantics), spells the call as kernel source and keeps a
closure evaluating it on reference values (fuzz_reference). The generator only chooses
what to build; a combination the language refuses raises `PromotionError` here, before
any source is written.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import fuzz_reference as ref
from fuzz_semantics import (BOOL, F32, F64, I32, DType, PromotionError, Val, bitcast, computation_type, contiguous,
                            convert, extremum_type, python_scalar_type, sum_type)

Env = dict


@dataclass
class Expr:
    dt: DType | None           # None for a Python number (its type depends on the other operand)
    shape: tuple
    text: str
    fn: Callable[[Env], Val] | None
    literal: object = None     # the Python number of a literal
    atomic: bool = False       # the text needs no parentheses
    uses: frozenset = field(default_factory=frozenset)  # variable names read


def var(name: str, dt: DType, shape: tuple) -> Expr:
    return Expr(dt, tuple(shape), name, lambda env: env[name], atomic=True, uses=frozenset([name]))


def lit(value, text: str | None = None) -> Expr:
    """A Python number in the source (`text` names a parameter specialised to it)."""
    if text is None:
        if isinstance(value, float) and not math.isfinite(value):
            text = f'float("{value}")'
        else:
            text = repr(value)
    return Expr(None, (), text, None, literal=value, atomic=not text.startswith("-"))


def paren(e: Expr) -> str:
    return e.text if e.atomic else f"({e.text})"


def _uses(*es: Expr) -> frozenset:
    out = frozenset()
    for e in es:
        out |= e.uses
    return out


def broadcast_shape(*shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise PromotionError(f"shapes {shapes} do not broadcast") from None


def value_as(e: Expr, dt: DType) -> Callable[[Env], Val]:
    """A closure giving e's value converted to dt (a literal is made directly in dt, as
    the language does)."""
    if e.literal is not None:
        value = e.literal
        return lambda env: ref.constant(value, dt)
    fn = e.fn
    if e.dt == dt:
        return fn
    return lambda env: convert(fn(env), dt)


def _types(a: Expr, b: Expr, div_or_mod: bool = False) -> DType:
    if a.literal is not None and b.literal is not None:
        raise PromotionError("two Python numbers fold at compile time")
    ta = python_scalar_type(a.literal, b.dt) if a.literal is not None else a.dt
    tb = python_scalar_type(b.literal, a.dt) if b.literal is not None else b.dt
    ct = computation_type(ta, tb, div_or_mod)
    for e in (a, b):  # rule 1's range checks apply to the computation type too
        if e.literal is not None and isinstance(e.literal, int) and not isinstance(e.literal, bool) and ct.is_int:
            python_scalar_type(e.literal, ct)
    return ct


# ----------------------------------------------------------------------------- elementwise

ARITH_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "and": "&",
                "or": "|", "xor": "^", "shl": "<<", "shr": ">>", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
                "eq": "==", "ne": "!="}


def arith(op: str, a: Expr, b: Expr) -> Expr:
    """a + b, a - b, a * b on numbers (not int1)."""
    ct = _types(a, b)
    if ct.is_bool:
        raise PromotionError("int1 arithmetic")
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    if ct.is_int:
        fn = lambda env: ref.int_binary(op, fa(env), fb(env))  # noqa: E731
    else:
        fn = lambda env: ref.float_binary(op, fa(env), fb(env))  # noqa: E731
    return Expr(ct, shape, f"{paren(a)} {ARITH_SYMBOL[op]} {paren(b)}", fn, uses=_uses(a, b))


def truediv(a: Expr, b: Expr, spelling: str = "/") -> Expr:
    """a / b: two integers divide in fp32; otherwise rule 4's type (fp16/bf16 in fp32).
    spelling: "/" or "fdiv" (tl.fdiv, the same operation)."""
    ta = python_scalar_type(a.literal, b.dt) if a.literal is not None else a.dt
    tb = python_scalar_type(b.literal, a.dt) if b.literal is not None else b.dt
    if a.literal is not None and b.literal is not None:
        raise PromotionError("two Python numbers")
    if ta.is_int and tb.is_int and ta.signed != tb.signed and not (ta.is_bool or tb.is_bool):
        # refused, as in Triton (language.md's rule 5 does not say so)
        raise PromotionError("/ between integers of different signedness")
    ct = F32 if (ta.is_int and tb.is_int) else computation_type(ta, tb, div_or_mod=True)
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    text = f"{paren(a)} / {paren(b)}" if spelling == "/" else f"tl.fdiv({a.text}, {b.text})"
    return Expr(ct, shape, text, lambda env: ref.float_binary("div", fa(env), fb(env)), uses=_uses(a, b))


def div_rn(a: Expr, b: Expr, spelling: str = "div_rn") -> Expr:
    """tl.div_rn / tl.fdiv(ieee_rounding=True): IEEE division of fp32 or fp64."""
    ct = _types(a, b, div_or_mod=True)
    if ct not in (F32, F64):
        raise PromotionError("div_rn takes fp32 and fp64")
    if a.literal is not None or b.literal is not None:
        raise PromotionError("keep tl.div_rn's operands tensors")
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    text = f"tl.div_rn({a.text}, {b.text})" if spelling == "div_rn" else \
        f"tl.fdiv({a.text}, {b.text}, ieee_rounding=True)"
    return Expr(ct, shape, text, lambda env: ref.float_binary("div", fa(env), fb(env), approx_div=False),
                uses=_uses(a, b))


def int_divide(op: str, a: Expr, b: Expr) -> Expr:
    """a // b or a % b on integers; the caller makes b nonzero (and not -1)."""
    ct = _types(a, b, div_or_mod=True)
    if not ct.is_int or ct.is_bool:
        raise PromotionError("// and % on integers here")
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    return Expr(ct, shape, f"{paren(a)} {ARITH_SYMBOL[op]} {paren(b)}",
                lambda env: ref.int_binary(op, fa(env), fb(env)), uses=_uses(a, b))


def bitwise(op: str, a: Expr, b: Expr) -> Expr:
    ct = _types(a, b)
    if not ct.is_int:
        raise PromotionError("bitwise ops take integers")
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    return Expr(ct, shape, f"{paren(a)} {ARITH_SYMBOL[op]} {paren(b)}",
                lambda env: ref.int_binary(op, fa(env), fb(env)), uses=_uses(a, b))


def shift(op: str, a: Expr, b: Expr) -> Expr:
    """a << b, a >> b; the caller keeps b within [0, bits). `>>` is arithmetic when a is
    signed, whatever the promoted type."""
    if a.literal is not None:
        raise PromotionError("keep the shifted operand a tensor")
    ct = _types(a, b)
    if not ct.is_int or ct.is_bool or a.dt.is_bool:
        raise PromotionError("shifts take integers")
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    left_signed = a.dt.signed
    return Expr(ct, shape, f"{paren(a)} {ARITH_SYMBOL[op]} {paren(b)}",
                lambda env: ref.int_binary(op, fa(env), fb(env), left_signed=left_signed), uses=_uses(a, b))


def comparison(op: str, a: Expr, b: Expr) -> Expr:
    ct = _types(a, b)
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    return Expr(BOOL, shape, f"{paren(a)} {ARITH_SYMBOL[op]} {paren(b)}",
                lambda env: ref.compare(op, fa(env), fb(env)), uses=_uses(a, b))


def _extremum_types(a: Expr, b: Expr) -> DType:
    """tl.maximum / tl.minimum's computation type: as Triton's, a Python number is a tensor
    of its own type (no rule 1), and bf16 is compared in fp32."""
    if a.literal is not None and b.literal is not None:
        raise PromotionError("two Python numbers fold at compile time")
    own = [python_scalar_type(e.literal, BOOL) if e.literal is not None else e.dt for e in (a, b)]
    own = [F32 if t.name == "bf16" else t for t in own]
    ct = computation_type(own[0], own[1])
    if ct.is_int and not ct.signed and any(isinstance(e.literal, int) and e.literal < 0 for e in (a, b)):
        raise PromotionError("a negative number with an unsigned type is refused")
    return ct


def extremum(op: str, a: Expr, b: Expr, propagate_nan: bool = False, spelling: str = "tl") -> Expr:
    """tl.maximum / tl.minimum (or Python's max / min on tensors)."""
    ct = _extremum_types(a, b)
    if ct.is_bool:
        raise PromotionError("max of int1")
    if propagate_nan and not ct.is_float:
        raise PromotionError("propagate_nan is for floats")
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    name = "maximum" if op == "max" else "minimum"
    if spelling == "python":
        text = f"{op}({a.text}, {b.text})"
    elif propagate_nan:
        text = f"tl.{name}({a.text}, {b.text}, propagate_nan=tl.PropagateNan.ALL)"
    else:
        text = f"tl.{name}({a.text}, {b.text})"
    return Expr(ct, shape, text, lambda env: ref.extremum(op, fa(env), fb(env), propagate_nan), uses=_uses(a, b))


def where(c: Expr, a: Expr, b: Expr) -> Expr:
    if c.literal is not None:
        raise PromotionError("a constant condition")
    ct = _types(a, b)
    shape = broadcast_shape(c.shape, a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    fc = c.fn if c.dt.is_bool else (lambda env, f=c.fn: ref.compare("ne", f(env), ref.constant(0, c.dt)))
    return Expr(ct, shape, f"tl.where({c.text}, {a.text}, {b.text})",
                lambda env: ref.where(fc(env), fa(env), fb(env)), uses=_uses(c, a, b))


def negate(a: Expr) -> Expr:
    if a.dt.is_bool:
        raise PromotionError("-int1")
    fn = a.fn
    if a.dt.is_float:
        return Expr(a.dt, a.shape, f"-{paren(a)}", lambda env: ref.float_neg(fn(env)), uses=a.uses)
    return Expr(a.dt, a.shape, f"-{paren(a)}", lambda env: ref.int_unary("neg", fn(env)), uses=a.uses)


def invert(a: Expr) -> Expr:
    if not a.dt.is_int:
        raise PromotionError("~ of a float")
    fn = a.fn
    return Expr(a.dt, a.shape, f"~{paren(a)}", lambda env: ref.int_unary("invert", fn(env)), uses=a.uses)


def absolute(a: Expr, spelling: str = "tl") -> Expr:
    if a.dt.is_bool:
        raise PromotionError("abs of int1")
    fn = a.fn
    text = f"tl.abs({a.text})" if spelling == "tl" else f"abs({a.text})" if spelling == "python" \
        else f"{paren(a)}.abs()"
    if a.dt.is_float:
        return Expr(a.dt, a.shape, text, lambda env: ref.float_abs(fn(env)), uses=a.uses)
    return Expr(a.dt, a.shape, text, lambda env: ref.int_unary("abs", fn(env)), uses=a.uses)


MATH_FUNCTIONS = ("exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "sqrt_rn", "rsqrt", "floor", "ceil", "trunc",
                  "erf")


# tilec's own math functions, which take 16-bit floats; Triton's refuse them.
MATH_OF_HALVES = ("trunc",)


def math_fn(name: str, a: Expr, method: bool = False, internal: bool = False) -> Expr:
    """tl.<name>(a); `internal` for the exp inside tl.sigmoid, which widens 16-bit floats."""
    if not a.dt.is_float:
        raise PromotionError("math on an integer")
    if a.dt.name in ("fp16", "bf16") and name not in MATH_OF_HALVES and not internal:
        raise PromotionError("math on a 16-bit float (refused, as in Triton)")
    fn = a.fn
    text = f"{paren(a)}.{name}()" if method else f"tl.{name}({a.text})"
    return Expr(a.dt, a.shape, text, lambda env: ref.math_unary(name, fn(env)), uses=a.uses)


def sigmoid(a: Expr) -> Expr:
    """1 / (1 + exp(-x)), spelled and promoted as the language defines it."""
    if not a.dt.is_float:
        raise PromotionError("sigmoid of an integer")
    e = math_fn("exp", negate(a), internal=True)
    d = arith("add", lit(1), e)
    r = truediv(lit(1), d)
    return Expr(r.dt, a.shape, f"tl.sigmoid({a.text})", r.fn, uses=a.uses)


def fma(a: Expr, b: Expr, c: Expr) -> Expr:
    if any(e.literal is not None for e in (a, b, c)):
        raise PromotionError("keep fma's operands tensors")
    ct = computation_type(computation_type(a.dt, b.dt), c.dt)
    if not ct.is_float:
        raise PromotionError("fma of integers")
    shape = broadcast_shape(a.shape, b.shape, c.shape)
    fa, fb, fc = value_as(a, ct), value_as(b, ct), value_as(c, ct)
    return Expr(ct, shape, f"tl.fma({a.text}, {b.text}, {c.text})",
                lambda env: ref.fma(fa(env), fb(env), fc(env)), uses=_uses(a, b, c))


def clamp(x: Expr, lo: Expr, hi: Expr) -> Expr:
    """minimum(maximum(x, lo), hi) for a float x."""
    if x.literal is not None or not x.dt.is_float:
        raise PromotionError("clamp of a float tensor")
    inner = extremum("max", x, lo)
    outer = extremum("min", inner, hi)
    return Expr(outer.dt, outer.shape, f"tl.clamp({x.text}, {lo.text}, {hi.text})", outer.fn, uses=_uses(x, lo, hi))


def umulhi(a: Expr, b: Expr) -> Expr:
    if a.literal is not None or b.literal is not None:
        raise PromotionError("umulhi of tensors")
    ct = _types(a, b)
    if not ct.is_int or ct.bits not in (32, 64) or a.dt.bits not in (32, 64) or b.dt.bits not in (32, 64):
        raise PromotionError("umulhi of 32/64-bit integers")
    shape = broadcast_shape(a.shape, b.shape)
    fa, fb = value_as(a, ct), value_as(b, ct)
    return Expr(ct, shape, f"tl.umulhi({a.text}, {b.text})", lambda env: ref.int_binary("umulhi", fa(env), fb(env)),
                uses=_uses(a, b))


def cast(a: Expr, dt: DType, spelling: str = "to") -> Expr:
    fn = a.fn
    text = f"{paren(a)}.to({dt.tl})" if spelling == "to" else f"tl.cast({a.text}, {dt.tl})"
    return Expr(dt, a.shape, text, lambda env: convert(fn(env), dt), uses=a.uses)


def cast_rtz(a: Expr, dt: DType) -> Expr:
    if not ((a.dt.name == "fp32" and dt.name in ("fp16", "bf16")) or (a.dt.name == "fp64" and dt.name == "fp32")):
        raise PromotionError("rtz is for fp32 -> fp16/bf16 and fp64 -> fp32")
    fn = a.fn
    return Expr(dt, a.shape, f'tl.cast({a.text}, {dt.tl}, fp_downcast_rounding="rtz")',
                lambda env: convert(fn(env), dt, rtz=True), uses=a.uses)


def bitcast_to(a: Expr, dt: DType) -> Expr:
    if a.dt.bits != dt.bits or a.dt.is_bool or dt.is_bool:
        raise PromotionError("bitcast between equal widths")
    fn = a.fn
    return Expr(dt, a.shape, f"{paren(a)}.to({dt.tl}, bitcast=True)", lambda env: bitcast(fn(env), dt), uses=a.uses)


# ----------------------------------------------------------------------------- creation

def full(shape: tuple, value, dt: DType) -> Expr:
    """tl.full(shape, value, dtype) of a Python number."""
    if dt.is_int and isinstance(value, float):
        raise PromotionError("keep integer fills integral")
    shape_text = "()" if not shape else f"({', '.join(str(s) for s in shape)},)"
    v = lit(value).text
    return Expr(dt, tuple(shape), f"tl.full({shape_text}, {v}, {dt.tl})",
                lambda env: ref.constant(value, dt, shape))


def arange(n: int) -> Expr:
    values = np.arange(n, dtype=np.int32)
    return Expr(I32, (n,), f"tl.arange(0, {n})", lambda env: Val(values, np.zeros(n), I32), atomic=True)


# ----------------------------------------------------------------------------- reductions and scans

def _axis_text(axis, keep_dims: bool) -> str:
    parts = [f"axis={axis}"]
    if keep_dims:
        parts.append("keep_dims=True")
    return ", ".join(parts)


def _reduced_shape(shape: tuple, axis, keep_dims: bool) -> tuple:
    if axis is None:
        return (1,) * len(shape) if keep_dims else ()
    axis %= len(shape)
    if keep_dims:
        return shape[:axis] + (1,) + shape[axis + 1:]
    return shape[:axis] + shape[axis + 1:]


def reduction(kind: str, a: Expr, axis, keep_dims: bool, method: bool = False) -> Expr:
    """tl.sum / tl.max / tl.min / tl.argmax / tl.argmin / tl.xor_sum over `axis`."""
    if not a.shape:
        raise PromotionError("reducing a scalar")
    if kind in ("argmax", "argmin") and axis is None:
        raise PromotionError("keep argmax's axis explicit")
    if kind == "xor_sum" and (not a.dt.is_int or a.dt.is_bool):
        raise PromotionError("xor_sum of integers")
    shape = _reduced_shape(a.shape, axis, keep_dims)
    norm_axis = None if axis is None else axis % len(a.shape)
    fn = a.fn
    if kind == "sum":
        dt = sum_type(a.dt)
        body = lambda env: ref.reduce_sum(convert(fn(env), dt), norm_axis, keep_dims)  # noqa: E731
    elif kind in ("max", "min"):
        dt = extremum_type(a.dt)
        body = lambda env: ref.reduce_extremum(kind, convert(fn(env), dt), norm_axis, keep_dims)  # noqa: E731
    elif kind in ("argmax", "argmin"):
        dt = I32
        vt = F32 if a.dt.name == "bf16" else a.dt
        op = kind[3:]
        body = lambda env: ref.reduce_arg(op, convert(fn(env), vt), norm_axis, keep_dims)[1]  # noqa: E731
    elif kind == "xor_sum":
        dt = a.dt
        body = lambda env: ref.reduce_xor(fn(env), norm_axis, keep_dims)  # noqa: E731
    else:
        raise ValueError(kind)
    args = _axis_text(axis, keep_dims)
    text = f"{paren(a)}.{kind}({args})" if method else f"tl.{kind}({a.text}, {args})"
    return Expr(dt, shape, text, body, uses=a.uses)


def reduction_with_indices(kind: str, a: Expr, axis: int, keep_dims: bool) -> tuple[str, list, Callable]:
    """tl.max / tl.min with return_indices=True: (text, [(dtype, shape)] * 2, fn -> [Val, Val])."""
    if not a.shape:
        raise PromotionError("reducing a scalar")
    shape = _reduced_shape(a.shape, axis, keep_dims)
    vt = F32 if a.dt.name == "bf16" else a.dt
    norm_axis = axis % len(a.shape)
    fn = a.fn
    text = f"tl.{kind}({a.text}, {_axis_text(axis, keep_dims)}, return_indices=True)"
    return text, [(vt, shape), (I32, shape)], \
        lambda env: list(ref.reduce_arg(kind, convert(fn(env), vt), norm_axis, keep_dims))


def scan(kind: str, a: Expr, axis: int, reverse: bool, method: bool = False) -> Expr:
    """tl.cumsum / tl.cumprod."""
    if not a.shape:
        raise PromotionError("scanning a scalar")
    fn = a.fn
    norm_axis = axis % len(a.shape)
    widened = F32 if a.dt.name == "bf16" else a.dt
    if kind == "cumsum":
        dt = sum_type(widened)
        body = lambda env: ref.scan_sum(convert(fn(env), dt), norm_axis, reverse)  # noqa: E731
    else:
        dt = widened
        body = lambda env: ref.scan_prod(convert(fn(env), dt), norm_axis, reverse)  # noqa: E731
    args = f"axis={axis}" + (", reverse=True" if reverse else "")
    text = f"{paren(a)}.{kind}({args})" if method else f"tl.{kind}({a.text}, {args})"
    return Expr(dt, a.shape, text, body, uses=a.uses)


# The @jit combine functions a program may call; the generator emits their source.
COMBINE_SOURCE = {
    "add": "@tilec.jit\ndef combine_add(a, b):\n    return a + b\n",
    "max": "@tilec.jit\ndef combine_max(a, b):\n    return tl.maximum(a, b)\n",
    "min": "@tilec.jit\ndef combine_min(a, b):\n    return tl.minimum(a, b)\n",
}


def associative_scan(kind: str, a: Expr, axis: int, reverse: bool) -> Expr:
    """tl.associative_scan with combine_add / combine_max / combine_min: the result keeps
    the input's type (narrow integers wrap)."""
    if not a.shape:
        raise PromotionError("scanning a scalar")
    if a.dt.is_bool:
        raise PromotionError("scans of int1")
    if kind != "add" and a.dt.name == "bf16":
        raise PromotionError("tl.maximum of bf16 is fp32, not the scan's bf16")
    fn = a.fn
    norm_axis = axis % len(a.shape)
    if kind == "add":
        body = lambda env: ref.scan_sum(fn(env), norm_axis, reverse)  # noqa: E731
    else:
        body = lambda env: ref.scan_max(kind, fn(env), norm_axis, reverse)  # noqa: E731
    rev = ", reverse=True" if reverse else ""
    return Expr(a.dt, a.shape, f"tl.associative_scan({a.text}, {axis}, combine_{kind}{rev})", body, uses=a.uses)


def reduce_combine(kind: str, a: Expr, axis, keep_dims: bool) -> Expr:
    """tl.reduce with combine_add / combine_max / combine_min (the input's own type)."""
    if not a.shape or a.dt.is_bool:
        raise PromotionError("tl.reduce of a scalar or int1")
    if kind != "add" and a.dt.name == "bf16":
        raise PromotionError("tl.maximum of bf16 is fp32, not the reduction's bf16")
    shape = _reduced_shape(a.shape, axis, keep_dims)
    norm_axis = None if axis is None else axis % len(a.shape)
    fn = a.fn
    if kind == "add":
        body = lambda env: ref.reduce_sum(fn(env), norm_axis, keep_dims)  # noqa: E731
    else:
        body = lambda env: ref.reduce_extremum(kind, fn(env), norm_axis, keep_dims)  # noqa: E731
    keep = ", keep_dims=True" if keep_dims else ""
    return Expr(a.dt, shape, f"tl.reduce({a.text}, {axis}, combine_{kind}{keep})", body, uses=a.uses)


def sort(a: Expr, dim: int, descending: bool) -> Expr:
    if not a.shape or a.dt.is_bool:
        raise PromotionError("sort of a block of numbers")
    fn = a.fn
    norm = dim % len(a.shape)
    desc = ", descending=True" if descending else ""
    return Expr(a.dt, a.shape, f"tl.sort({a.text}, dim={dim}{desc})",
                lambda env: ref.sort_lines(fn(env), norm, descending), uses=a.uses)


# ----------------------------------------------------------------------------- shapes

def _map_arrays(fn: Callable[[Env], Val], transform: Callable[[np.ndarray], np.ndarray]):
    def run(env):
        v = fn(env)
        return Val(contiguous(transform(np.asarray(v.value))), contiguous(transform(v.err)), v.dt)
    return run


def shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def reshape(a: Expr, shape: tuple, spelling: str = "tl") -> Expr:
    if math.prod(shape) != math.prod(a.shape) or not a.shape:
        raise PromotionError("reshape keeps the element count")
    text = {"tl": f"tl.reshape({a.text}, {shape_text(shape)})", "method": f"{paren(a)}.reshape({shape_text(shape)})",
            "view": f"tl.view({a.text}, {shape_text(shape)})"}[spelling]
    return Expr(a.dt, tuple(shape), text, _map_arrays(a.fn, lambda v: np.reshape(v, shape)), uses=a.uses)


def ravel(a: Expr) -> Expr:
    if not a.shape:
        raise PromotionError("ravel of a scalar")
    return Expr(a.dt, (math.prod(a.shape),), f"tl.ravel({a.text})", _map_arrays(a.fn, np.ravel), uses=a.uses)


def permute(a: Expr, dims: tuple, spelling: str = "permute") -> Expr:
    if len(dims) != len(a.shape) or len(dims) < 2:
        raise PromotionError("permute needs every dimension")
    shape = tuple(a.shape[d] for d in dims)
    if spelling == "T":
        text = f"{paren(a)}.T"
    elif spelling == "trans":
        text = f"tl.trans({a.text})" if len(dims) == 2 else f"tl.trans({a.text}, {shape_text(dims)})"
    else:
        text = f"tl.permute({a.text}, {shape_text(dims)})"
    return Expr(a.dt, shape, text, _map_arrays(a.fn, lambda v: np.transpose(v, dims)), uses=a.uses)


def expand_dims(a: Expr, axis: int, spelling: str = "tl") -> Expr:
    rank = len(a.shape) + 1
    if rank > 3:
        raise PromotionError("rank above 3")
    norm = axis % rank
    shape = a.shape[:norm] + (1,) + a.shape[norm:]
    if spelling == "index":
        if len(a.shape) == 0:
            raise PromotionError("indexing a scalar")
        parts = [":"] * len(a.shape)
        parts.insert(norm, "None")
        text = f"{paren(a)}[{', '.join(parts)}]"
    else:
        text = f"tl.expand_dims({a.text}, {axis})"
    return Expr(a.dt, shape, text, _map_arrays(a.fn, lambda v: np.expand_dims(v, norm)), uses=a.uses)


def broadcast_to(a: Expr, shape: tuple) -> Expr:
    if broadcast_shape(a.shape, shape) != tuple(shape):
        raise PromotionError("broadcast_to cannot shrink")
    return Expr(a.dt, tuple(shape), f"tl.broadcast_to({a.text}, {shape_text(shape)})",
                _map_arrays(a.fn, lambda v: np.broadcast_to(v, shape)), uses=a.uses)


def join(a: Expr, b: Expr) -> Expr:
    if a.dt != b.dt or a.literal is not None or b.literal is not None:
        raise PromotionError("join needs one element type")
    base = broadcast_shape(a.shape, b.shape)
    if len(base) >= 3:
        raise PromotionError("rank above 3")
    fa, fb = a.fn, b.fn

    def run(env):
        x, y = fa(env), fb(env)
        xv, yv = np.broadcast_to(x.value, base), np.broadcast_to(y.value, base)
        xe, ye = np.broadcast_to(x.err, base), np.broadcast_to(y.err, base)
        return Val(np.stack([xv, yv], axis=-1), np.stack([xe, ye], axis=-1), a.dt)
    return Expr(a.dt, base + (2,), f"tl.join({a.text}, {b.text})", run, uses=_uses(a, b))


def interleave(a: Expr, b: Expr) -> Expr:
    j = join(a, b)
    if not j.shape[:-1]:
        shape = (2,)
    else:
        shape = j.shape[:-2] + (j.shape[-2] * 2,)
    inner = j.fn
    return Expr(a.dt, shape, f"tl.interleave({a.text}, {b.text})", _map_arrays(inner, lambda v: np.reshape(v, shape)),
                uses=j.uses)


def split_parts(a: Expr) -> tuple[str, list, Callable]:
    if not a.shape or a.shape[-1] != 2:
        raise PromotionError("split needs a last dimension of 2")
    shape = a.shape[:-1]
    fn = a.fn

    def run(env):
        v = fn(env)
        x, e = np.asarray(v.value), v.err
        return [Val(contiguous(x[..., k]), contiguous(e[..., k]), v.dt) for k in (0, 1)]
    return f"tl.split({a.text})", [(a.dt, shape), (a.dt, shape)], run


def cat(a: Expr, b: Expr) -> Expr:
    if a.dt != b.dt or not a.shape or a.shape != b.shape:
        raise PromotionError("cat of two blocks of one type and shape")
    shape = (a.shape[0] * 2,) + a.shape[1:]
    fa, fb = a.fn, b.fn

    def run(env):
        x, y = fa(env), fb(env)
        return Val(np.concatenate([x.value, y.value]), np.concatenate([x.err, y.err]), a.dt)
    return Expr(a.dt, shape, f"tl.cat({a.text}, {b.text}, can_reorder=True)", run, uses=_uses(a, b))


def flip(a: Expr, dim: int) -> Expr:
    if not a.shape:
        raise PromotionError("flip of a scalar")
    norm = dim % len(a.shape)
    return Expr(a.dt, a.shape, f"tl.flip({a.text}, dim={dim})", _map_arrays(a.fn, lambda v: np.flip(v, norm)),
                uses=a.uses)
