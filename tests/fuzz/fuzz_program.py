"""Programs as statements: their source text and their reference run.

A `Program` is a kernel's source (its header, then one line or block per statement) and
the statements themselves (`Assign`, `Store`, `If`, `Loop`, `BreakOrContinue`), each
able to print itself and to run on reference values (fuzz_semantics.Val): running the
body once per program id gives every output's values and error bounds. Where a branch or
a loop's trip count is not determined (an uncertain condition), what it assigns and
stores becomes "not determined" too. Also the inputs' data (`make_data`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import fuzz_exprs as E
from fuzz_semantics import (I32, INF, DType, Val, convert, exact_val, f64, int_range, max_finite, min_normal,
                            min_subnormal, round_to, wrap_ints)

POISON_FLOAT = -1234.0
POISON_INT = 0x5A


# ----------------------------------------------------------------------------- statements

class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Diverged(Exception):
    """A loop exit whose condition is not determined: what follows is not either."""


@dataclass
class Output:
    name: str
    dt: DType
    length: int
    kind: str              # "tile" or "program"
    shape: tuple = ()      # the stored value's shape for "program" outputs


class Context:
    """The state of one reference program run: outputs and the program id."""

    def __init__(self, outputs: dict, pid: int):
        self.outputs = outputs  # name -> (values, errs) arrays
        self.pid = pid
        self.unsure = False     # inside a branch that may or may not run


class Stmt:
    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self, env: dict, ctx: Context) -> None:
        raise NotImplementedError


@dataclass
class Assign(Stmt):
    names: list[str]
    text: str
    fn: Callable
    check_types: list = field(default_factory=list)  # dtypes to static_assert, per name

    def lines(self) -> list[str]:
        out = [f"{', '.join(self.names)} = {self.text}"]
        for name, dt in zip(self.names, self.check_types):
            if dt is not None:
                out.append(f'tl.static_assert({name}.dtype == {dt.tl}, "{name} should be {dt.name}")')
        return out

    def run(self, env, ctx):
        result = self.fn(env)
        if len(self.names) == 1:
            env[self.names[0]] = result
        else:
            for name, value in zip(self.names, result):
                env[name] = value


@dataclass
class Store(Stmt):
    output: Output
    value: E.Expr
    pointer_text: str
    mask_text: str | None
    address: Callable      # (env, ctx) -> (flat index array, mask array or None, mask uncertain array)
    options: str = ""

    def lines(self) -> list[str]:
        mask = f", mask={self.mask_text}" if self.mask_text else ""
        return [f"tl.store({self.output.name} + {self.pointer_text}, {self.value.text}{mask}{self.options})"]

    def forget(self, env, ctx):
        """Marks what this store may write as not determined."""
        index, mask, unsure = self.address(env, ctx)
        written = np.ones(index.shape, bool) if mask is None else np.broadcast_to(mask | unsure, index.shape)
        ctx.outputs[self.output.name][1][index[written]] = INF

    def run(self, env, ctx):
        if ctx.unsure:
            self.forget(env, ctx)
            return
        index, mask, unsure = self.address(env, ctx)
        v = convert(self.value.fn(env), self.output.dt)
        values = np.broadcast_to(np.asarray(v.value), index.shape)
        errs = np.broadcast_to(v.err, index.shape)
        out_v, out_e = ctx.outputs[self.output.name]
        if mask is None:
            mask = np.ones(index.shape, bool)
            unsure = np.zeros(index.shape, bool)
        mask = np.broadcast_to(mask, index.shape)
        unsure = np.broadcast_to(unsure, index.shape)
        written = mask | unsure
        out_v[index[written]] = values[written]
        out_e[index[written]] = np.where(unsure[written], INF, errs[written])


@dataclass
class If(Stmt):
    cond: E.Expr
    then: list
    other: list

    def lines(self) -> list[str]:
        out = [f"if {self.cond.text}:"]
        out += ["    " + line for s in self.then for line in s.lines()] or ["    pass"]
        if self.other:
            out.append("else:")
            out += ["    " + line for s in self.other for line in s.lines()]
        return out

    def run(self, env, ctx):
        c = self.cond.fn(env)
        if c.err.max(initial=0) > 0:
            if any(isinstance(s, (BreakOrContinue,)) for s in self.then + self.other):
                raise _Diverged()
            saved = ctx.unsure
            ctx.unsure = True
            try:
                for body in (self.then, self.other):
                    scratch = dict(env)
                    run_block(body, scratch, ctx)
                    for name in assigned_names(body):  # nested blocks included
                        if name in scratch:
                            v = scratch[name]
                            env[name] = Val(v.value, np.full(v.shape, INF), v.dt)
            finally:
                ctx.unsure = saved
            return
        run_block(self.then if bool(np.asarray(c.value)) else self.other, env, ctx)


@dataclass
class BreakOrContinue(Stmt):
    word: str   # "break" or "continue"

    def lines(self) -> list[str]:
        return [self.word]

    def run(self, env, ctx):
        raise _Break() if self.word == "break" else _Continue()


@dataclass
class Loop(Stmt):
    """`for v in range(...)`, `for v in tl.range(...)`, `for v in tl.static_range(...)`,
    or a `while` loop counting `v` up from `start` by one."""
    kind: str              # "range", "tl.range", "static_range" or "while"
    var: str
    start: E.Expr
    stop: E.Expr
    step: int
    body: list

    def lines(self) -> list[str]:
        inner = ["    " + line for s in self.body for line in s.lines()]
        if self.kind == "while":  # counted at the top, so that `continue` moves on too
            return [f"{self.var} = {self.start.text}", f"while {self.var} < {self.stop.text}:",
                    f"    {self.var} += 1"] + inner
        args = f"{self.start.text}, {self.stop.text}" + (f", {self.step}" if self.step != 1 else "")
        loop = {"range": "range", "tl.range": "tl.range", "static_range": "tl.static_range"}[self.kind]
        return [f"for {self.var} in {loop}({args}):"] + (inner or ["    pass"])

    def _bound(self, e: E.Expr, env) -> int | None:
        if e.literal is not None:
            return int(e.literal)
        v = e.fn(env)
        if v.err.max(initial=0) > 0:
            return None
        return int(np.asarray(v.value))

    def run(self, env, ctx):
        lo, hi = self._bound(self.start, env), self._bound(self.stop, env)
        if lo is None or hi is None:
            self._give_up(env, ctx)
            return
        for i in range(lo, hi, self.step):
            env[self.var] = exact_val(np.int32(i + 1 if self.kind == "while" else i), I32)
            try:
                run_block(self.body, env, ctx)
            except _Continue:
                continue
            except _Break:
                break
            except _Diverged:
                self._give_up(env, ctx)
                return

    def _give_up(self, env, ctx):
        """The iterations run are not determined: neither are the carried values, nor
        what the body's stores write (their addresses do not depend on the iteration)."""
        for name in assigned_names(self.body):  # nested blocks included
            if name in env:
                v = env[name]
                env[name] = Val(v.value, np.full(v.shape, INF), v.dt)
        for store in nested_stores(self.body):
            store.forget(env, ctx)


def run_block(stmts: list, env: dict, ctx: Context) -> None:
    for s in stmts:
        s.run(env, ctx)


def assigned_names(stmts: list) -> set:
    """Every name a block assigns, in nested blocks too."""
    out = set()
    for s in stmts:
        if isinstance(s, Assign):
            out |= set(s.names)
        elif isinstance(s, If):
            out |= assigned_names(s.then) | assigned_names(s.other)
        elif isinstance(s, Loop):
            out |= {s.var} | assigned_names(s.body)
    return out


def nested_stores(stmts: list) -> list:
    out = []
    for s in stmts:
        if isinstance(s, Store):
            out.append(s)
        elif isinstance(s, If):
            out += nested_stores(s.then) + nested_stores(s.other)
        elif isinstance(s, Loop):
            out += nested_stores(s.body)
    return out


# ----------------------------------------------------------------------------- programs

@dataclass
class Param:
    name: str
    kind: str              # "in", "out", "int", "float"
    dt: DType | None = None
    value: object = None   # the input array, the output's poison array, or the scalar


@dataclass
class Program:
    seed: int
    source: str
    params: list[Param]
    grid: int
    num_warps: int
    body: list
    prologue: Callable[[int], dict]
    outputs: list[Output]
    features: set
    header: list = field(default_factory=list)   # the source's lines before the body

    def with_body(self, body: list) -> "Program":
        """The same program (arguments, prologue) with another body: for minimising."""
        source = "\n".join(self.header + ["    " + line for s in body for line in s.lines()]) + "\n"
        return dataclasses.replace(self, body=body, source=source)

    def reference(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """name -> (values, error bounds) of every output after the whole grid ran."""
        outs = {}
        for p in self.params:
            if p.kind == "out":
                outs[p.name] = (np.array(p.value, copy=True), np.zeros(len(p.value)))
        with np.errstate(all="ignore"):
            for pid in range(self.grid):
                env = self.prologue(pid)
                run_block(self.body, env, Context(outs, pid))
        return outs

    def arguments(self) -> list:
        """The launch's positional arguments (arrays as NumPy, copies of the originals)."""
        return [np.array(p.value, copy=True) if p.kind in ("in", "out") else p.value for p in self.params]


# ----------------------------------------------------------------------------- input data

def float_specials(dt: DType) -> list[float]:
    sub, normal, big = min_subnormal(dt), min_normal(dt), max_finite(dt)
    return [0.0, -0.0, INF, -INF, math.nan, sub, -sub, normal, -normal, big, -big, 1.0, -1.0, 0.5, -2.0]


def int_specials(dt: DType) -> list[int]:
    lo, hi = int_range(dt)
    if dt.signed:
        return [lo, lo + 1, -1, 0, 1, 2, hi - 1, hi]
    return [0, 1, 2, hi >> 1, (hi >> 1) + 1, hi - 1, hi]


def make_data(rng: np.random.Generator, dt: DType, n: int, profile: str, signalling: bool = False) -> np.ndarray:
    """n values of dt: "small" (small integers / halves: exact arithmetic), "normal"
    (normally distributed floats, moderate integers) or "wild" (specials, any bits)."""
    if dt.is_bool:
        return rng.integers(0, 2, n).astype(bool)
    if dt.is_float:
        if profile == "small":
            return round_to(rng.integers(-16, 17, n) / rng.choice([1.0, 2.0, 4.0], n), dt)
        if profile == "normal":
            return round_to(rng.standard_normal(n) * 10.0 ** rng.uniform(-2, 2, n), dt)
        bits = {16: np.uint16, 32: np.uint32, 64: np.uint64}[dt.bits]
        raw = rng.integers(0, np.iinfo(bits).max, n, dtype=np.uint64, endpoint=True).astype(bits).view(dt.np)
        out = f64(raw)  # NaN patterns become quiet NaNs here
        normal = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
        pick_normal = rng.random(n) < 0.5
        out = np.where(pick_normal, normal, out)
        specials = np.array(float_specials(dt))
        pick_special = rng.random(n) < 0.3
        out = round_to(np.where(pick_special, specials[rng.integers(0, len(specials), n)], out), dt)
        if signalling:  # keep the random NaN bit patterns, signalling ones included
            keep = ~pick_normal & ~pick_special & np.isnan(f64(raw))
            out = np.where(keep, raw, out)
        return out
    lo, hi = int_range(dt)
    if profile == "small":
        values = rng.integers(max(lo, -8), min(hi, 8) + 1, n)
        return values.astype(dt.np)
    if profile == "normal":
        values = rng.integers(max(lo, -1000), min(hi, 1000) + 1, n)
        return values.astype(dt.np)
    raw = rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    out = wrap_ints(np.array([int(v) for v in raw], dtype=object), dt)
    specials = int_specials(dt)
    pick = rng.random(n) < 0.3
    for i in np.flatnonzero(pick):
        out[i] = specials[rng.integers(0, len(specials))]
    return out


def poison(dt: DType, n: int) -> np.ndarray:
    if dt.is_bool:
        return np.ones(n, bool)
    if dt.is_float:
        return round_to(np.full(n, POISON_FLOAT), dt)
    return wrap_ints(np.full(n, POISON_INT, dtype=object), dt)
