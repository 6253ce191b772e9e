"""Random tilec programs with their reference results.

`generate(seed)` builds one `Program` from `random.Random(seed)`: a kernel's source text
(elementwise arithmetic, comparisons, bitwise ops, math, casts, reductions, scans, shape
ops, masked loads and stores with tails, `if`/`for`/`while` with carried values,
`break`), its launch (grid, num_warps, arguments with NaN, infinities, signed zeros,
subnormals, INT_MIN/INT_MAX...), and the statements' reference meaning
(fuzz_exprs/fuzz_reference), from which `Program.reference()` computes every output
with its error bound. The same seed always gives the same program and inputs.

Each program id works on one block: `[B]` elements of a 1-D problem of `n` elements,
or `[M, N]` of a `n_rows x n_cols` matrix with row stride `stride` (columns past
`n_cols` and rows past `n_rows` are the tails). Outputs are either stored through the
block's offsets and mask, or per program (`pid * size + offsets` of any shape).

`AVOID` lists generator features turned off because they meet a known divergence
(see the comments there); `generate(seed, avoid=frozenset())` turns them back on.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

import numpy as np

import fuzz_exprs as E
from fuzz_program import (Assign, BreakOrContinue, If, Loop, Output, Param, Program, Store, make_data, poison)
from fuzz_reference import constant
from fuzz_semantics import (ALL, BF16, BOOL, F16, F32, F64, I32, I64, DType, PromotionError, Val, convert,
                            exact_val, int_range, max_finite, round_to)

# Features left out because they hit a known divergence between the interpreter and the
# compiled kernel; each names the issue (reported with the fuzzer's findings).
AVOID = frozenset({
    # Interpreter: tl.rsqrt of fp16 is np.reciprocal(np.sqrt(x)) in fp16, rounded twice,
    # 1 ulp away from the once-rounded result (the GPU's: fp32 rsqrt, then fp16) for a
    # quarter of the inputs (e.g. x = 1.001: 1.0 instead of 0.9995). No fp16 rsqrt then.
    "fp16-rsqrt",
    # Interpreter: tl.maximum / tl.minimum (so clamp, and max/min reductions depending on
    # the pairing) of an fp32/fp64 signalling NaN and a number give NaN (NumPy's fmax is
    # IEEE 754-2008 maxNum on x86) where the language ignores the NaN. Inputs then hold
    # quiet NaNs only, and bitcasts never produce floats.
    "signalling-nan",
})

MAX_ELEMENTS = 2048


# ----------------------------------------------------------------------------- the generator

@dataclass
class PoolVar:
    name: str
    dt: DType
    shape: tuple
    loop_var: bool = False   # a for/while loop variable (an int32 scalar on both backends)

    def expr(self) -> E.Expr:
        return E.var(self.name, self.dt, self.shape)


FLOAT_LITERALS = [0.5, 2.0, -1.5, 3.0, 0.25, -4.0, 0.1, 1e-3, 100.0, 1.0, -0.0]
SPECIAL_FLOAT_LITERALS = [math.inf, -math.inf, math.nan, 1e30, 6e4]


class Generator:
    def __init__(self, seed: int, avoid: frozenset = AVOID):
        self.seed = seed
        self.r = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.avoid = avoid
        self.pool: list[PoolVar] = []
        self.count = 0
        self.combines: set[str] = set()
        self.features: set[str] = set()
        self.outputs: list[Output] = []

    # ------------------------------------------------------------------ names and pool
    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def add(self, name: str, dt: DType, shape: tuple, **kw) -> PoolVar:
        v = PoolVar(name, dt, tuple(shape), **kw)
        self.pool.append(v)
        return v

    def pick_var(self, pred=lambda v: True) -> PoolVar | None:
        candidates = [v for v in self.pool if pred(v)]
        if not candidates:
            return None
        recent = candidates[-6:]
        return self.r.choice(recent if self.r.random() < 0.5 else candidates)

    # ------------------------------------------------------------------ operands
    def operand(self, pred=lambda dt: True, depth: int = 1, shape_like: tuple | None = None) -> E.Expr | None:
        """A tensor operand whose dtype satisfies pred: a pool variable, or a small
        expression over them."""
        if depth > 0 and self.r.random() < 0.3:
            for _ in range(3):
                e = self.elementwise(depth - 1)
                if e is not None and pred(e.dt) and (shape_like is None or self._compatible(e.shape, shape_like)):
                    return e
        v = self.pick_var(lambda v: pred(v.dt) and (shape_like is None or self._compatible(v.shape, shape_like)))
        return v.expr() if v else None

    def _compatible(self, a: tuple, b: tuple) -> bool:
        try:
            s = np.broadcast_shapes(a, b)
        except ValueError:
            return False
        return len(s) <= 3 and math.prod(s) <= MAX_ELEMENTS

    def literal_for(self, dt: DType) -> E.Expr:
        r = self.r
        if dt.is_float:
            if r.random() < 0.1:
                return E.lit(r.choice(SPECIAL_FLOAT_LITERALS))
            if r.random() < 0.2:
                return E.lit(r.randint(-5, 9))
            return E.lit(r.choice(FLOAT_LITERALS))
        if dt.is_bool:
            return E.lit(r.randint(0, 1))
        lo, hi = int_range(dt)
        choices = [0, 1, 2, 3, 5, 7, 16, 100]
        if dt.signed:
            choices += [-1, -2, -7]
        if r.random() < 0.1:
            choices = [lo, hi]
        value = r.choice([c for c in choices if lo <= c <= hi])
        if r.random() < 0.05:
            value = r.choice([2 ** 31 - 1, 2 ** 32 - 1, 2 ** 31, -(2 ** 31) if dt.signed else 7, 1.5])
        return E.lit(value)

    def partner(self, a: E.Expr, pred=lambda dt: True, literal_p: float = 0.25) -> E.Expr | None:
        """A second operand for a: same shape mostly, else broadcastable; or a literal."""
        if self.r.random() < literal_p:
            return self.literal_for(a.dt)
        same = self.r.random() < 0.6
        e = self.operand(pred, depth=1, shape_like=a.shape)
        if e is not None and same and e.shape != a.shape:
            alt = self.pick_var(lambda v: pred(v.dt) and v.shape == a.shape)
            if alt is not None:
                e = alt.expr()
        return e

    # ------------------------------------------------------------------ expressions
    def elementwise(self, depth: int = 1) -> E.Expr | None:
        r = self.r
        kind = r.choices(
            ["arith", "compare", "where", "unary", "math", "cast", "extremum", "bitwise", "shift", "intdiv",
             "truediv", "special"],
            weights=[24, 8, 8, 6, 10, 10, 6, 5, 4, 4, 5, 5])[0]
        try:
            return getattr(self, "_" + kind)(depth)
        except PromotionError:
            return None

    def _arith(self, depth):
        a = self.operand(lambda dt: not dt.is_bool, depth)
        if a is None:
            return None
        b = self.partner(a, lambda dt: not dt.is_bool)
        if b is None:
            return None
        op = self.r.choice(["add", "sub", "mul"])
        if self.r.random() < 0.3:
            a, b = b, a
        if a.literal is not None and b.literal is not None:
            return None
        return E.arith(op, a, b)

    def _compare(self, depth):
        a = self.operand(lambda dt: True, depth)
        if a is None:
            return None
        b = self.partner(a)
        if b is None:
            return None
        return E.comparison(self.r.choice(["lt", "le", "gt", "ge", "eq", "ne"]), a, b)

    def _condition(self, depth, shape_like=None) -> E.Expr | None:
        if self.r.random() < 0.6:
            try:
                c = self._compare(depth)
            except PromotionError:
                c = None
            if c is not None and (shape_like is None or self._compatible(c.shape, shape_like)):
                return c
        return self.operand(lambda dt: dt.is_bool, depth, shape_like)

    def _where(self, depth):
        a = self.operand(lambda dt: True, depth)
        if a is None:
            return None
        c = self._condition(depth, a.shape)
        if c is None:
            return None
        b = self.partner(a, literal_p=0.35)
        if b is None:
            return None
        if self.r.random() < 0.5:
            a, b = b, a
        if a.literal is not None and b.literal is not None:
            return None
        return E.where(c, a, b)

    def _unary(self, depth):
        a = self.operand(lambda dt: True, depth)
        if a is None:
            return None
        op = self.r.choice(["neg", "invert", "abs", "abs_py", "abs_method"])
        if op == "neg":
            return E.negate(a)
        if op == "invert":
            return E.invert(a)
        return E.absolute(a, {"abs": "tl", "abs_py": "python", "abs_method": "method"}[op])

    def _math(self, depth):
        a = self.operand(lambda dt: dt.is_float, depth)
        if a is None:
            return None
        self.features.add("math")
        name = self.r.choice(E.MATH_FUNCTIONS)
        if name == "rsqrt" and a.dt is F16 and "fp16-rsqrt" in self.avoid:
            name = "sqrt"
        return E.math_fn(name, a, method=self.r.random() < 0.2)

    def _cast(self, depth):
        a = self.operand(lambda dt: True, depth)
        if a is None:
            return None
        self.features.add("cast")
        r = self.r.random()
        if r < 0.1:
            dt = self.r.choice([t for t in ALL if t.bits == a.dt.bits and t != a.dt and not t.is_bool
                                and not (t.is_float and "signalling-nan" in self.avoid)] or [a.dt])
            return E.bitcast_to(a, dt)
        if r < 0.18 and a.dt in (F32, F64):
            return E.cast_rtz(a, self.r.choice([F16, BF16]) if a.dt is F32 else F32)
        dt = self.r.choice(ALL)
        return E.cast(a, dt, "to" if self.r.random() < 0.7 else "cast")

    def _extremum(self, depth):
        a = self.operand(lambda dt: not dt.is_bool, depth)
        if a is None:
            return None
        b = self.partner(a, lambda dt: not dt.is_bool)
        if b is None:
            return None
        op = self.r.choice(["max", "min"])
        if a.literal is None and b.literal is None and self.r.random() < 0.2:
            return E.extremum(op, a, b, spelling="python")
        return E.extremum(op, a, b, propagate_nan=self.r.random() < 0.25 and (a.dt.is_float or
                                                                             (b.dt and b.dt.is_float)))

    def _bitwise(self, depth):
        a = self.operand(lambda dt: dt.is_int, depth)
        if a is None:
            return None
        b = self.partner(a, lambda dt: dt.is_int)
        if b is None:
            return None
        if b.literal is not None and isinstance(b.literal, float):
            return None
        return E.bitwise(self.r.choice(["and", "or", "xor"]), a, b)

    def _shift(self, depth):
        a = self.operand(lambda dt: dt.is_int and not dt.is_bool, depth)
        if a is None:
            return None
        op = self.r.choice(["shl", "shr"])
        if self.r.random() < 0.4:
            amount = E.lit(self.r.randint(0, a.dt.bits - 1))
        else:
            b = self.operand(lambda dt: dt.is_int and not dt.is_bool, 1, a.shape)
            if b is None:
                return None
            from fuzz_semantics import computation_type
            bits = computation_type(a.dt, b.dt).bits
            amount = E.bitwise("and", b, E.lit(bits - 1))
        return E.shift(op, a, amount)

    def _intdiv(self, depth):
        a = self.operand(lambda dt: dt.is_int and not dt.is_bool, depth)
        if a is None:
            return None
        op = self.r.choice(["floordiv", "mod"])
        if self.r.random() < 0.4:
            value = self.r.choice([3, 7, 2, 16] + ([-3, -2] if a.dt.signed else []))
            return E.int_divide(op, a, E.lit(value))
        b = self.operand(lambda dt: dt.is_int and not dt.is_bool and dt.signed == a.dt.signed, 1,
                                     a.shape)
        if b is None:
            return None
        # keep the divisor away from 0 (and -1: INT_MIN // -1), both undefined
        bad = E.comparison("eq", b, E.lit(0))
        if b.dt.signed:
            bad = E.bitwise("or", bad, E.comparison("eq", b, E.lit(-1)))
        safe = E.where(bad, E.lit(3), b)
        return E.int_divide(op, a, safe)

    def _truediv(self, depth):
        a = self.operand(lambda dt: not dt.is_bool, depth)
        if a is None:
            return None
        b = self.partner(a, lambda dt: not dt.is_bool)
        if b is None:
            return None
        if b.literal is not None and b.literal == 0:
            return None
        r = self.r.random()
        if r < 0.15:
            return E.div_rn(a, b, spelling=self.r.choice(["div_rn", "fdiv_ieee"]))
        floats = a.dt is not None and a.dt.is_float and (b.literal is not None or b.dt.is_float)
        return E.truediv(a, b, "fdiv" if r > 0.85 and floats else "/")

    def _special(self, depth):
        which = self.r.choice(["fma", "clamp", "umulhi", "sigmoid"])
        if which == "fma":
            a = self.operand(lambda dt: dt.is_float, depth)
            if a is None:
                return None
            b = self.operand(lambda dt: dt.is_float, 0, a.shape)
            c = self.operand(lambda dt: dt.is_float, 0, a.shape)
            if b is None or c is None:
                return None
            return E.fma(a, b, c)
        if which == "clamp":
            a = self.operand(lambda dt: dt.is_float, depth)
            if a is None:
                return None
            lo, hi = sorted(self.r.sample([-2.0, -0.5, 0.0, 0.5, 1.0, 4.0, 100.0], 2))
            if self.r.random() < 0.15:
                lo, hi = hi, lo
            return E.clamp(a, E.lit(lo), E.lit(hi))
        if which == "umulhi":
            a = self.operand(lambda dt: dt.is_int and dt.bits in (32, 64), depth)
            if a is None:
                return None
            b = self.operand(lambda dt: dt.is_int and dt.bits in (32, 64) and dt.signed == a.dt.signed,
                                         0, a.shape)
            if b is None:
                return None
            return E.umulhi(a, b)
        a = self.operand(lambda dt: dt.is_float, depth)
        if a is None:
            return None
        return E.sigmoid(a)

    # ------------------------------------------------------------------ non-elementwise values
    def block_value(self) -> tuple[list[str], E.Expr | str, object] | None:
        """A reduction, scan, shape op or creation: returns an Expr, or a multi-result
        (text, [(dtype, shape)], fn)."""
        r = self.r
        kind = r.choices(["reduce", "scan", "shape", "create", "multi"], weights=[10, 6, 12, 3, 3])[0]
        try:
            return getattr(self, "_" + kind)()
        except PromotionError:
            return None

    def _ranked(self, min_rank=1) -> E.Expr | None:
        v = self.pick_var(lambda v: len(v.shape) >= min_rank and math.prod(v.shape) > 1)
        return v.expr() if v else None

    def _axis(self, rank: int, allow_none: bool = True):
        if allow_none and self.r.random() < 0.2:
            return None
        axis = self.r.randrange(rank)
        return axis - rank if self.r.random() < 0.2 else axis

    def _reduce(self):
        a = self._ranked()
        if a is None:
            return None
        self.features.add("reduce")
        kind = self.r.choices(["sum", "max", "min", "argmax", "argmin", "xor_sum", "combine"],
                              weights=[8, 4, 4, 3, 3, 2, 3])[0]
        axis = self._axis(len(a.shape), kind not in ("argmax", "argmin"))
        keep = self.r.random() < 0.3
        if kind == "combine":
            c = self.r.choice(["add", "max", "min"])
            self.combines.add(c)
            return E.reduce_combine(c, a, axis, keep)
        return E.reduction(kind, a, axis, keep, method=self.r.random() < 0.25)

    def _scan(self):
        a = self._ranked()
        if a is None:
            return None
        self.features.add("scan")
        axis = self._axis(len(a.shape), allow_none=False)
        reverse = self.r.random() < 0.3
        kind = self.r.choices(["cumsum", "cumprod", "assoc"], weights=[6, 3, 3])[0]
        if kind == "assoc":
            c = self.r.choice(["add", "max", "min"])
            self.combines.add(c)
            return E.associative_scan(c, a, axis, reverse)
        return E.scan(kind, a, axis, reverse, method=self.r.random() < 0.25)

    def _shape(self):
        r = self.r
        op = r.choice(["reshape", "trans", "trans", "expand", "broadcast", "join", "interleave", "cat", "ravel",
                       "flip", "sort", "index"])
        a = self._ranked(2 if op == "trans" else 1)
        if a is None:
            return None
        self.features.add("shape")
        rank = len(a.shape)
        if op == "reshape":
            n = math.prod(a.shape)
            shape = self._factor(n)
            return E.reshape(a, shape, r.choice(["tl", "method", "view"]))
        if op == "trans":
            if rank == 1:
                return None
            dims = list(range(rank))
            while dims == list(range(rank)):
                r.shuffle(dims)
            spelling = "trans" if rank == 2 and r.random() < 0.5 else ("T" if rank == 2 and r.random() < 0.3
                                                                        else "permute")
            if spelling == "permute" and r.random() < 0.3:
                spelling = "trans"
            return E.permute(a, tuple(dims), spelling)
        if op in ("expand", "index"):
            if rank >= 3:
                return None
            axis = r.randrange(rank + 1)
            return E.expand_dims(a, axis, "index" if op == "index" else "tl")
        if op == "broadcast":
            if rank >= 3:
                return None
            e = E.expand_dims(a, r.randrange(rank + 1))
            shape = tuple(r.choice([2, 4]) if s == 1 else s for s in e.shape)
            if math.prod(shape) > MAX_ELEMENTS:
                return None
            return E.broadcast_to(e, shape)
        if op in ("join", "interleave"):
            b = self.operand(lambda dt: True, 0, a.shape)
            if b is None:
                return None
            if b.dt != a.dt:
                b = E.cast(b, a.dt)
            if math.prod(a.shape) * 2 > MAX_ELEMENTS:
                return None
            return E.join(a, b) if op == "join" else E.interleave(a, b)
        if op == "cat":
            v = self.pick_var(lambda v: v.shape == a.shape)
            b = v.expr() if v else a
            if b.dt != a.dt:
                b = E.cast(b, a.dt)
            if math.prod(a.shape) * 2 > MAX_ELEMENTS:
                return None
            return E.cat(a, b)
        if op == "ravel":
            return E.ravel(a)
        if op == "flip":
            return E.flip(a, self._axis(rank, allow_none=False))
        if op == "sort":
            if math.prod(a.shape) > 256:  # a bitonic network: slow to compile beyond that
                return None
            self.features.add("sort")
            return E.sort(a, self._axis(rank, allow_none=False), r.random() < 0.5)
        return None

    def _factor(self, n: int) -> tuple:
        """A random shape of rank 1-3 with n elements (powers of two)."""
        k = int(math.log2(n))
        rank = self.r.choice([1, 2, 2, 3]) if k >= 2 else 1
        cuts = sorted(self.r.randint(0, k) for _ in range(rank - 1))
        parts = [b - a for a, b in zip([0] + cuts, cuts + [k])]
        return tuple(2 ** p for p in parts)

    def _create(self):
        r = self.r
        self.features.add("create")
        shape = r.choice([self.block_shape, (), self.block_shape[-1:]])
        dt = r.choice(ALL)
        which = r.choice(["full", "zeros", "arange"])
        if which == "arange":
            n = r.choice([self.block_shape[-1], 2 ** r.randint(0, 6)])
            return E.arange(n)
        if which == "zeros":
            e = E.full(shape, 0, dt)
            return E.Expr(dt, e.shape, f"tl.zeros({E.shape_text(shape) if shape else '()'}, {dt.tl})", e.fn)
        value = self.literal_for(dt).literal
        if isinstance(value, float) and dt.is_int:
            value = 3
        if isinstance(value, int) and dt.is_int:
            lo, hi = int_range(dt)
            if not lo <= value <= hi:
                value = 1
        if isinstance(value, float) and dt.is_float and math.isfinite(value) and abs(value) > max_finite(dt):
            value = 2.0
        return E.full(shape, value, dt)

    def _multi(self):
        r = self.r
        if r.random() < 0.5:
            a = self.pick_var(lambda v: v.shape and v.shape[-1] == 2)
            if a is None:
                return None
            self.features.add("shape")
            return E.split_parts(a.expr())
        a = self._ranked()
        if a is None:
            return None
        self.features.add("reduce")
        return E.reduction_with_indices(r.choice(["max", "min"]), a, self._axis(len(a.shape), False),
                                        r.random() < 0.3)

    # ------------------------------------------------------------------ statements
    def assign(self, stmts: list) -> None:
        r = self.r
        e = None
        for _ in range(8):
            roll = r.random()
            e = self.elementwise(depth=2) if roll < 0.6 else self.helper_call(1) if roll < 0.65 else \
                self.block_value()
            if e is None:
                continue
            if isinstance(e, tuple):
                text, types, fn = e
                names = [self.fresh() for _ in types]
                stmts.append(Assign(names, text, fn, [dt if r.random() < 0.5 else None for dt, _ in types]))
                for name, (dt, shape) in zip(names, types):
                    self.add(name, dt, shape)
                return
            if math.prod(e.shape) > MAX_ELEMENTS or len(e.shape) > 3:
                continue
            break
        else:
            return
        name = self.fresh()
        stmts.append(Assign([name], e.text, e.fn, [e.dt if r.random() < 0.5 else None]))
        self.add(name, e.dt, e.shape)

    def update(self, target: PoolVar) -> Assign | None:
        """`target = <expression using target>` keeping its type and shape."""
        for _ in range(6):
            try:
                t = target.expr()
                other = self.operand(lambda dt: True, 1, target.shape)
                if other is None:
                    return None
                if target.dt.is_bool:
                    e = E.bitwise(self.r.choice(["xor", "or", "and"]), t, E.cast(other, BOOL)
                                  if other.dt != BOOL else other)
                elif self.r.random() < 0.7:
                    e = E.arith(self.r.choice(["add", "mul", "sub"]), t, other)
                else:
                    e = E.where(E.comparison("gt", other, E.lit(0)) if not other.dt.is_bool else other,
                                t, E.cast(other, target.dt))
                if e.dt != target.dt:
                    e = E.cast(e, target.dt)
                if e.shape != target.shape:
                    e = E.broadcast_to(e, target.shape)
                return Assign([target.name], e.text, e.fn)
            except PromotionError:
                continue
        return None

    def body(self, n: int, stmts: list, depth: int) -> None:
        r = self.r
        for _ in range(n):
            nested = depth > 0
            choice = r.choices(["assign", "if", "loop", "load", "store"],
                               weights=[14, 2 if depth < 2 else 0, 2 if depth < 2 else 0, 1 if nested else 0,
                                        1 if nested else 0])[0]
            if choice == "load":
                p, kind = r.choice(self.inputs)
                self.load(stmts, p, kind)
            elif choice == "store":
                v = self.pick_var(lambda v: not v.loop_var and v.name != "pid")
                if v is not None:
                    self.store(stmts, v, extra_mask=False)
            elif choice == "assign":
                self.assign(stmts)
            elif choice == "if":
                self.if_stmt(stmts, depth)
            else:
                self.loop_stmt(stmts, depth)

    def scalar_condition(self) -> E.Expr | None:
        for _ in range(6):
            try:
                a = self.operand(lambda dt: True, 0, ())
                if a is None or a.shape != ():
                    v = self.pick_var(lambda v: v.shape == ())
                    if v is None:
                        return None
                    a = v.expr()
                if a.dt.is_bool and self.r.random() < 0.5:
                    return a
                b = self.literal_for(a.dt) if self.r.random() < 0.6 else self.operand(lambda dt: True, 0, ())
                if b is None or b.shape != ():
                    continue
                return E.comparison(self.r.choice(["lt", "le", "gt", "ge", "eq", "ne"]), a, b)
            except PromotionError:
                continue
        return None

    def _scoped(self, fn):
        """Runs fn (which adds to the pool); the names it adds leave the pool afterwards."""
        before = len(self.pool)
        fn()
        del self.pool[before:]

    def if_stmt(self, stmts: list, depth: int) -> None:
        cond = self.scalar_condition()
        if cond is None:
            return
        self.features.add("if")
        targets = self._targets()
        then, other = [], []
        for branch in (then, other):
            def fill(branch=branch):
                self.body(self.r.randint(0, 2), branch, depth + 1)
                for t in targets:
                    if self.r.random() < 0.8:
                        u = self.update(t)
                        if u is not None:
                            branch.append(u)
            self._scoped(fill)
        if not then and not other:
            return
        stmts.append(If(cond, then, other))

    def _targets(self) -> list[PoolVar]:
        # loop bounds (int_params) stay as they are, so that trip counts stay small
        candidates = [v for v in self.pool if not v.loop_var and v.name not in self.reserved
                      and v.name not in self.int_params]
        k = min(len(candidates), self.r.randint(1, 2))
        return self.r.sample(candidates[-8:], k) if candidates and k else []

    def loop_stmt(self, stmts: list, depth: int) -> None:
        r = self.r
        kind = r.choices(["range", "tl.range", "static_range", "while"], weights=[4, 2, 2, 2])[0]
        self.features.add("loop")
        var = self.fresh("i")
        step = 1
        if kind == "static_range":
            start, stop = E.lit(r.randint(0, 1)), E.lit(r.randint(0, 3))
        else:
            bound = self.pick_var(lambda v: v.name in self.int_params)
            if bound is not None and r.random() < 0.5:
                stop = bound.expr()
                start = E.lit(0)
            else:
                start, stop = E.lit(r.randint(0, 1)), E.lit(r.randint(2, 4) if r.random() < 0.85 else 0)
            if kind != "while" and r.random() < 0.2:
                step = r.choice([2, -1])
                if step == -1:
                    start, stop = (E.lit(r.randint(1, 4)), E.lit(-1)) if stop.literal is not None else (stop, start)
        targets = self._targets()
        body: list = []

        def fill():
            if kind != "static_range":  # a static_range variable is a Python int: left out
                self.add(var, I32, (), loop_var=True)
            exit_if = None
            if r.random() < 0.3:
                cond = self.scalar_condition()
                if cond is not None:
                    self.features.add("break")
                    word = "break" if r.random() < 0.6 else "continue"
                    exit_if = If(cond, [BreakOrContinue(word)], [])
            self.body(r.randint(1, 3), body, depth + 1)
            for t in targets:
                u = self.update(t)
                if u is not None:
                    body.append(u)
            if exit_if is not None:
                body.insert(r.randint(0, len(body)), exit_if)
        self._scoped(fill)
        if kind == "static_range" or kind == "while":
            step = 1
        stmts.append(Loop(kind, var, start, stop, step, body))

    # ------------------------------------------------------------------ program
    def generate(self) -> Program:
        r = self.r
        self.num_warps = r.choice([1, 2, 4, 4, 8, 8, 16])
        self.rank = 1 if r.random() < 0.4 else 2
        self.reserved = {"pid", "offs", "mask", "rows", "cols", "col_idx"}
        self.int_params: set[str] = set()
        self.views: dict[str, View] = {}
        self.helpers: list[str] = []
        self.grid = r.choice([1, 1, 2, 2, 3, 4])
        if self.rank == 1:
            self.B = 2 ** r.choices(range(11), weights=[1, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1])[0]
            self.block_shape = (self.B,)
            full = self.grid * self.B
            self.n = full if r.random() < 0.3 else r.randint(max(1, full - self.B + 1), full)
            self.tile_length = full
        else:
            while True:
                self.M = 2 ** r.randint(0, 5)
                self.N = 2 ** r.randint(0, 7)
                if 2 <= self.M * self.N <= 1024:
                    break
            self.block_shape = (self.M, self.N)
            rows_full = self.grid * self.M
            self.n_rows = rows_full if r.random() < 0.3 else r.randint(max(1, rows_full - self.M + 1), rows_full)
            self.n_cols = self.N if r.random() < 0.4 else r.randint(1, self.N)
            self.stride = self.n_cols if r.random() < 0.7 else self.n_cols + r.randint(1, 8)
            self.stride_literal = self.stride == self.N and r.random() < 0.5
            self.int64_offsets = r.random() < 0.15
            self.tile_length = (rows_full - 1) * self.stride + self.N
        self.add("pid", I32, ())
        if self.rank == 2:
            self.add("rows", I32, (self.M, 1))
            self.add("cols", I32, (1, self.N))
            self.add("col_idx", I32, (self.N,))
        self.view("plain")
        self.inputs: list[tuple[Param, str]] = []
        body: list = []
        for _ in range(r.randint(1, 3)):
            self._input(body)
        self._scalar_params()
        self.body(r.randint(4, 14), body, 0)
        self._outputs(body)
        return self._program(body)

    # ------------------------------------------------------------------ addressing
    def view(self, kind: str) -> "View":
        """The offsets and mask of this program's block, visited in some order: "plain"
        (offs, mask), "rev" (reversed along the last dimension), "xor" (1-D: lanes swapped
        by an xor), "pairs" (1-D: every other element twice; loads only)."""
        if kind in self.views:
            return self.views[kind]
        r = self.r
        prefix = {"plain": "", "rev": "r", "xor": "x", "pairs": "p"}[kind]
        offs, mask = prefix + "offs", prefix + "mask"
        int64 = self.rank == 2 and self.int64_offsets
        if self.rank == 1:
            B, n = self.B, self.n
            lane = {"plain": f"tl.arange(0, {B})", "rev": f"({B - 1} - tl.arange(0, {B}))",
                    "xor": f"(tl.arange(0, {B}) ^ {r.randint(1, max(1, B - 1))})",
                    "pairs": f"(tl.arange(0, {B}) // 2 * 2)"}[kind]
            lines = [f"{offs} = pid * {B} + {lane}", f"{mask} = {offs} < n"]
            xor_c = int(lane.split("^ ")[1].rstrip(")")) if kind == "xor" else 0

            def arrays(pid, kind=kind, xor_c=xor_c):
                lane_v = np.arange(B)
                lane_v = {"plain": lane_v, "rev": B - 1 - lane_v, "xor": lane_v ^ xor_c,
                          "pairs": lane_v // 2 * 2}[kind]
                index = pid * B + lane_v
                return index, index < n
        else:
            M, N, n_rows, n_cols, stride = self.M, self.N, self.n_rows, self.n_cols, self.stride
            stride_text = str(N) if self.stride_literal else "stride"
            rows = "rows.to(tl.int64)" if int64 else "rows"
            col = {"plain": "cols", "rev": f"({N - 1} - cols)"}[kind]
            lines = [f"{offs} = {rows} * {stride_text} + {col}", f"{mask} = (rows < n_rows) & ({col} < n_cols)"]

            def arrays(pid, kind=kind):
                rows_v = (pid * M + np.arange(M))[:, None]
                cols_v = np.arange(N)[None, :]
                if kind == "rev":
                    cols_v = N - 1 - cols_v
                return rows_v * stride + cols_v, (rows_v < n_rows) & (cols_v < n_cols)
        v = View(offs, mask, lines, arrays, I64 if int64 else I32)
        self.views[kind] = v
        self.add(offs, v.dt, self.block_shape)
        self.add(mask, BOOL, self.block_shape)
        self.reserved |= {offs, mask}
        return v

    def _view_kind(self, for_store: bool) -> str:
        kinds = ["plain", "plain", "plain", "rev"]
        if self.rank == 1 and self.B > 1:
            kinds += ["xor"] + ([] if for_store else ["pairs"])
        return self.r.choice(kinds)

    # ------------------------------------------------------------------ loads
    def _profile(self) -> str:
        return self.r.choices(["small", "normal", "wild"], weights=[3, 3, 4])[0]

    def _input(self, body: list) -> None:
        r = self.r
        dt = r.choice(ALL)
        name = f"x{len(self.inputs)}"
        kind = r.choices(["tile", "row", "scalar"], weights=[8, 2 if self.rank == 2 else 0, 1])[0]
        length = {"tile": self.tile_length, "row": getattr(self, "N", 0), "scalar": self.grid}[kind]
        p = Param(name, "in", dt, make_data(self.np_rng, dt, length, self._profile(),
                                            signalling="signalling-nan" not in self.avoid))
        self.inputs.append((p, kind))
        for _ in range(1 if r.random() < 0.8 else 2):
            self.load(body, p, kind)

    def _load_options(self) -> str:
        r = self.r.random()
        if r < 0.8:
            return ""
        return self.r.choice([', cache_modifier=".ca"', ', cache_modifier=".cg"', ', cache_modifier=".cv"',
                              ', eviction_policy="evict_first"', ', eviction_policy="evict_last"',
                              ", volatile=True"])

    def load(self, stmts: list, p: Param, kind: str) -> None:
        """`v = tl.load(x + offsets, mask=..., other=...)` of input p."""
        r = self.r
        dt, data = p.dt, p.value
        masked = r.random() < 0.7
        other, other_expr = None, None
        if masked and r.random() < 0.6:
            if r.random() < 0.2:
                v = self.pick_var(lambda v: v.shape == () and not v.loop_var and v.name != "pid")
                other_expr = v.expr() if v is not None else None
            if other_expr is None:
                other = self.literal_for(dt)
                if isinstance(other.literal, float) and dt.is_int:
                    other = E.lit(3 if not dt.is_bool else 1)
                if dt.is_int and isinstance(other.literal, int):
                    lo, hi = int_range(dt)
                    if not lo <= other.literal <= hi:
                        other = E.lit(1)
        if kind == "tile":
            view = self.view(self._view_kind(for_store=False))
            pointer, shape, mask_text = view.offs, self.block_shape, view.mask
        elif kind == "row":
            view, pointer, shape, mask_text = None, "col_idx", (self.N,), "col_idx < n_cols"
        else:  # one value per program (or the first one), never masked
            view, shape, mask_text = None, (), None
            pointer = "pid" if r.random() < 0.7 else "0"
            masked = False
        name = self.fresh()
        text = f"tl.load({p.name} + {pointer}"
        if masked:
            text += f", mask={mask_text}"
            if other is not None:
                text += f", other={other.text}"
            elif other_expr is not None:
                text += f", other={other_expr.text}"
        text += self._load_options() + ")"
        n_cols = getattr(self, "n_cols", 0)
        other_value = other.literal if other is not None else 0
        other_fn = other_expr.fn if other_expr is not None else None

        def fn(env, view=view, kind=kind, masked=masked, pointer=pointer):
            pid = int(np.asarray(env["pid"].value))
            if kind == "tile":
                index, mask = view.arrays(pid)
            elif kind == "row":
                index = np.arange(len(data))
                mask = index < n_cols
            else:
                index, mask = np.asarray(pid if pointer == "pid" else 0), np.ones((), bool)
            if not masked:
                mask = np.ones(np.shape(index), bool)
            values = exact_val(data[np.where(mask, index, 0)], dt)
            if other_fn is not None:
                fill = convert(other_fn(env), dt)
            else:
                fill = constant(other_value, dt, np.shape(index))
            fill_e = np.broadcast_to(fill.err, np.shape(index))
            return Val(np.where(mask, values.value, fill.value).astype(dt.np), np.where(mask, 0.0, fill_e), dt)
        stmts.append(Assign([name], text, fn, [dt if r.random() < 0.3 else None]))
        self.add(name, dt, shape)
        self.features.add("masked-load" if masked else "load")

    # ------------------------------------------------------------------ stores
    def store(self, stmts: list, v: PoolVar, extra_mask: bool = True) -> None:
        """`tl.store(out + offsets, v, ...)` into a new output: through the block's
        offsets (a view, masked) when v broadcasts to the block, else per program."""
        r = self.r
        name = f"out{len(self.outputs)}"
        dt = v.dt if r.random() < 0.85 else r.choice(ALL)
        expr = v.expr()
        options = "" if r.random() < 0.85 else r.choice([', cache_modifier=".wb"', ', cache_modifier=".cg"',
                                                          ', cache_modifier=".cs"', ', cache_modifier=".wt"',
                                                          ', eviction_policy="evict_first"'])
        try:
            tile_ok = np.broadcast_shapes(v.shape, self.block_shape) == self.block_shape
        except ValueError:
            tile_ok = False
        if tile_ok and r.random() < 0.7:
            missing = len(self.block_shape) - len(v.shape)
            for _ in range(missing if v.shape else 0):  # a stored block has the pointers' rank (as in Triton)
                expr = E.expand_dims(expr, 0)
            out = Output(name, dt, self.tile_length, "tile")
            view = self.view(self._view_kind(for_store=True))
            extra = None
            if extra_mask and r.random() < 0.2:
                extra = self._condition(0, self.block_shape)
                if extra is not None and np.broadcast_shapes(extra.shape, self.block_shape) != self.block_shape:
                    extra = None
            mask_text = view.mask if extra is None else f"{view.mask} & ({extra.text})"

            def address(env, ctx, extra=extra, view=view):
                index, mask = view.arrays(ctx.pid)
                unsure = np.zeros(mask.shape, bool)
                if extra is not None:
                    c = extra.fn(env)
                    cv = np.broadcast_to(np.asarray(c.value, bool), mask.shape)
                    ce = np.broadcast_to(c.err, mask.shape)
                    unsure = mask & (ce > 0)
                    mask = mask & cv & ~unsure
                return np.asarray(index, dtype=np.int64), mask, unsure
            stmts.append(Store(out, expr, view.offs, mask_text, address, options))
        else:
            size = math.prod(v.shape)
            out = Output(name, dt, self.grid * size, "program", v.shape)
            local = self._local_offsets(v.shape)
            pointer = f"pid * {size} + {local}" if v.shape else "pid"

            def address(env, ctx, shape=v.shape, size=size):
                index = ctx.pid * size + np.arange(size).reshape(shape)
                return np.asarray(index, dtype=np.int64), None, None
            stmts.append(Store(out, expr, pointer, None, address, options))
        self.outputs.append(out)
        self.features.add("store")

    def _outputs(self, body: list) -> None:
        r = self.r
        candidates = [v for v in self.pool if v.name not in ("pid",)]
        chosen = []
        for v in candidates[-4:][::-1]:
            if len(chosen) < 2 and r.random() < 0.8:
                chosen.append(v)
        others = [v for v in candidates if v not in chosen]
        chosen += r.sample(others, min(len(others), r.randint(0, 2)))
        if not chosen and not self.outputs:
            chosen = [candidates[-1]]
        for v in chosen:
            self.store(body, v)

    def _local_offsets(self, shape: tuple) -> str:
        """Row-major offsets of a block of `shape`, as source text."""
        rank = len(shape)
        if rank == 0:
            return ""
        parts = []
        for d, n in enumerate(shape):
            stride = math.prod(shape[d + 1:])
            index = [":" if k == d else "None" for k in range(rank)]
            ar = f"tl.arange(0, {n})" + (f"[{', '.join(index)}]" if rank > 1 else "")
            parts.append(ar if stride == 1 else f"{ar} * {stride}")
        return " + ".join(parts)

    # ------------------------------------------------------------------ @jit helpers
    def helper_call(self, depth: int) -> E.Expr | None:
        """An elementwise expression moved into a @jit function of its variables."""
        e = self.elementwise(depth)
        if e is None or not e.uses or len(e.uses) > 3:
            return None
        import re
        names = sorted(e.uses)
        body = e.text
        for k, name in enumerate(names):
            body = re.sub(rf"\b{name}\b", f"a{k}", body)
        fname = f"helper{len(self.helpers)}"
        params = ", ".join(f"a{k}" for k in range(len(names)))
        self.helpers.append(f"@tilec.jit\ndef {fname}({params}):\n    return {body}\n")
        self.features.add("call")
        return E.Expr(e.dt, e.shape, f"{fname}({', '.join(names)})", e.fn, uses=e.uses)

    # ------------------------------------------------------------------ the program
    def _scalar_params(self) -> None:
        r = self.r
        self.scalar_params: list[Param] = []
        for k in range(r.choices([0, 1, 2], weights=[2, 3, 2])[0]):
            name = f"s{k}"
            if r.random() < 0.6:
                value = r.choice([0, 2, 3, 5, 16, 32, -1, -7, 100, 2 ** 31 - 1, -(2 ** 31), 2 ** 33, 1])
                if value == 1:
                    self.scalar_params.append(Param(name, "int", None, value))
                    continue  # a constant 1 in the kernel: not a tensor
                dt = I32 if -(2 ** 31) <= value < 2 ** 31 else I64
                self.scalar_params.append(Param(name, "int", dt, value))
                self.add(name, dt, ())
                if 0 <= value <= 4:
                    self.int_params.add(name)
            else:
                value = r.choice([0.5, -2.0, 1.0, 3.25, 1e-3, 1e20, -0.0, math.inf, math.nan, 1e-40])
                self.scalar_params.append(Param(name, "float", F32, value))
                self.add(name, F32, ())

    def _program(self, body: list) -> Program:
        params = [p for p, _ in self.inputs]
        for out in self.outputs:
            params.append(Param(out.name, "out", out.dt, poison(out.dt, out.length)))
        if self.rank == 1:
            params.append(Param("n", "int", I32, self.n))
        else:
            params += [Param("n_rows", "int", I32, self.n_rows), Param("n_cols", "int", I32, self.n_cols),
                       Param("stride", "int", I32, self.stride)]
        params += self.scalar_params
        lines = ["import tilec", "import tilec.language as tl", "", ""]
        for c in sorted(self.combines):
            lines += E.COMBINE_SOURCE[c].splitlines() + ["", ""]
        for h in self.helpers:
            lines += h.splitlines() + ["", ""]
        lines.append("@tilec.jit")
        lines.append(f"def kernel({', '.join(p.name for p in params)}):")
        prologue = ["pid = tl.program_id(0)"]
        if self.rank == 2:
            prologue += [f"rows = pid * {self.M} + tl.arange(0, {self.M})[:, None]",
                         f"col_idx = tl.arange(0, {self.N})",
                         "cols = col_idx[None, :]"]
        for v in self.views.values():
            prologue += v.lines
        for line in prologue:
            lines.append("    " + line)
        header = list(lines)
        for s in body:
            for line in s.lines():
                lines.append("    " + line)
        source = "\n".join(lines) + "\n"
        scalars = [p for p in self.scalar_params if p.dt is not None]
        views = list(self.views.values())
        rank, M, N = self.rank, getattr(self, "M", 0), getattr(self, "N", 0)

        def prologue_env(pid: int) -> dict:
            env = {"pid": exact_val(np.int32(pid), I32)}
            if rank == 2:
                col_idx = np.arange(N, dtype=np.int32)
                env["rows"] = exact_val((pid * M + np.arange(M, dtype=np.int32))[:, None], I32)
                env["col_idx"], env["cols"] = exact_val(col_idx, I32), exact_val(col_idx[None, :], I32)
            for v in views:
                index, mask = v.arrays(pid)
                env[v.offs], env[v.mask] = exact_val(index, v.dt), exact_val(mask, BOOL)
            for p in scalars:
                value = round_to(np.float64(p.value), F32) if p.dt is F32 else p.dt.np.type(p.value)
                env[p.name] = exact_val(value, p.dt)
            return env
        return Program(self.seed, source, params, self.grid, self.num_warps, body, prologue_env, self.outputs,
                       self.features, header)


@dataclass
class View:
    """One way of addressing the program's block: its offsets and mask."""
    offs: str
    mask: str
    lines: list
    arrays: Callable       # pid -> (index array, mask array)
    dt: DType


def generate(seed: int, avoid: frozenset = AVOID) -> Program:
    return Generator(seed, avoid).generate()
