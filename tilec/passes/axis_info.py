"""Axis info: what is known about the values of an integer or pointer tensor, per dimension.

For each dimension d of a value:

- contiguity[d]: the values form runs of this many consecutive integers (addresses
  one element apart) along d, each run starting at an index that is a multiple of it;
- divisibility[d]: the first value of every such run is divisible by this power of two
  (in bytes for pointers, in units for integers);
- constancy[d]: the values are constant over aligned runs of this many elements.

Scalars are treated as one-element tensors. The facts are seeded by the `%16`
specialisation of kernel arguments (`tile.divisibility`) and by constants, and
propagated forward through the ops the frontend emits; an `scf.for`'s loop-carried
values (a pointer advanced by `p += BLOCK * stride`) get what their initial and
yielded values share, as an `scf.if`'s results get what both branches yield. The
coalescing pass uses them to choose layouts, and the lowering to size vector loads and
stores: a load can be `vec` wide when the pointers are contiguous and aligned over `vec`
elements and the mask is constant over them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from mlir import ir

from ..dialects._mlir import block_ops, int_attr_value, is_tensor
from ..dialects.tile import element_type, memory_bits, pointee_type, shape_of

# "Divisible by everything": the divisibility of 0.
MAX_DIVISIBILITY = 1 << 30


def highest_power_of_2_divisor(value: int) -> int:
    if value == 0:
        return MAX_DIVISIBILITY
    return min(value & -value, MAX_DIVISIBILITY)


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    value: int | None = None  # the constant value, when every element is the same known integer

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @staticmethod
    def unknown(rank: int) -> "AxisInfo":
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)

    @staticmethod
    def constant(shape: tuple[int, ...], value: int) -> "AxisInfo":
        shape = shape or (1,)
        div = highest_power_of_2_divisor(value)
        return AxisInfo((1,) * len(shape), (div,) * len(shape), tuple(shape), value)


def _rank_shape(value: ir.Value) -> tuple[int, ...]:
    return shape_of(value.type) or (1,)


def _elem_bytes(ty: ir.Type) -> int:
    """Bytes per element of a pointer (tensor) type's pointee."""
    return memory_bits(pointee_type(element_type(ty))) // 8


gcd = math.gcd


class AxisInfoAnalysis:
    """Computes AxisInfo for every integer/pointer value of a function."""

    def __init__(self, func_op: ir.Operation):
        self.info: dict[ir.Value, AxisInfo] = {}
        entry = func_op.regions[0].blocks[0]
        arg_attrs = None
        if "arg_attrs" in func_op.attributes:
            arg_attrs = ir.ArrayAttr(func_op.attributes["arg_attrs"])
        for i, arg in enumerate(entry.arguments):
            div = 1
            if arg_attrs is not None:
                attrs = ir.DictAttr(arg_attrs[i])
                if "tile.divisibility" in attrs:
                    div = ir.IntegerAttr(attrs["tile.divisibility"]).value
            self.info[arg] = AxisInfo((1,), (div,), (1,))
        self._visit_block(entry)

    def get(self, value: ir.Value) -> AxisInfo:
        found = self.info.get(value)
        if found is None:
            return AxisInfo.unknown(len(_rank_shape(value)))
        return found

    # ------------------------------------------------------------------ propagation
    def _visit_block(self, block: ir.Block) -> None:
        for op in block_ops(block):
            self._visit(op)

    def _visit(self, op: ir.Operation) -> None:
        if op.name == "scf.for":
            self._visit_for(op)
            return
        for region in op.regions:
            for block in region.blocks:
                self._visit_block(block)
        rule = _RULES.get(op.name)
        if rule is None:
            rule = _unknown
        results = rule(self, op)
        if len(op.results) == 1 and any(name in op.attributes for name in _HINTS):
            results = [_apply_hints(op, results[0])]
        for result, info in zip(op.results, results):
            self.info[result] = info

    def _visit_for(self, op: ir.Operation) -> None:
        """A loop-carried value holds its initial value or a yielded one: its facts are
        what both share, found by revisiting the body until they stop weakening (joins
        only lose bits of contiguity, divisibility and constancy, so this ends)."""
        lower, _, step = (self.get(v) for v in list(op.operands)[:3])
        body = op.regions[0].blocks[0]
        self.info[body.arguments[0]] = AxisInfo((1,), (gcd(lower.divisibility[0], step.divisibility[0]),), (1,))
        carried = list(zip(body.arguments[1:], list(op.operands)[3:]))
        for index, (arg, init) in enumerate(carried, start=1):
            self.info[arg] = _apply_hints(op, self.get(init), suffix=f"_arg{index}")
        yielded = list(block_ops(body)[-1].operands)
        for _ in range(_MAX_LOOP_ROUNDS):
            self._visit_block(body)
            joined = [_apply_hints(op, _join(self.get(arg), self.get(value)), suffix=f"_arg{index}")
                      for index, ((arg, _), value) in enumerate(zip(carried, yielded), start=1)]
            if all(new == self.get(arg) for (arg, _), new in zip(carried, joined)):
                break
            for (arg, _), new in zip(carried, joined):
                self.info[arg] = new
        else:  # not settled (deep nests): assume nothing of the carried values
            for arg, _ in carried:
                self.info[arg] = AxisInfo.unknown(len(_rank_shape(arg)))
            self._visit_block(body)
        for result, (arg, _) in zip(op.results, carried):
            self.info[result] = self.get(arg)


# Rounds of a loop body before its carried values are given up as unknown.
_MAX_LOOP_ROUNDS = 8


def _join(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """The facts that hold of a value that is either `a`'s or `b`'s."""
    if a.rank != b.rank:
        return AxisInfo.unknown(a.rank)
    return AxisInfo(tuple(gcd(x, y) for x, y in zip(a.contiguity, b.contiguity)),
                    tuple(gcd(x, y) for x, y in zip(a.divisibility, b.divisibility)),
                    tuple(gcd(x, y) for x, y in zip(a.constancy, b.constancy)),
                    a.value if a.value == b.value else None)


def _divisibility_over_runs(info: AxisInfo, d: int, run: int) -> int:
    """What divides the first element of every aligned run of `run` elements along `d`.

    Inside one of `info`'s own runs the values step by one, so where a result's runs are
    shorter than the operand's, a run starts `k * run` past the operand's run start: only
    the power of two of `run` is shared by every such start.
    """
    if info.contiguity[d] <= run:
        return info.divisibility[d]
    return gcd(info.divisibility[d], highest_power_of_2_divisor(run))


_RULES: dict[str, Callable[[AxisInfoAnalysis, ir.Operation], list[AxisInfo]]] = {}

# Hint attributes (tl.multiple_of, max_contiguous, max_constancy) and the field each sets.
_HINTS = {"tile.divisibility": "divisibility", "tile.contiguity": "contiguity", "tile.constancy": "constancy"}


def _unknown(analysis: "AxisInfoAnalysis", op: ir.Operation) -> list[AxisInfo]:
    return [AxisInfo.unknown(len(_rank_shape(result))) for result in op.results]


def _apply_hints(op: ir.Operation, info: AxisInfo, suffix: str = "") -> AxisInfo:
    """The user's promises replace what the analysis derived: of `op`'s result, or with
    `suffix` "_arg<N>", of a loop's carried block argument N (frontend's _hint_argument)."""
    fields = {"contiguity": info.contiguity, "divisibility": info.divisibility, "constancy": info.constancy}
    for hint, field in _HINTS.items():
        attr = hint + suffix
        if attr in op.attributes:
            values = tuple(ir.DenseI32ArrayAttr(op.attributes[attr]))
            if field == "divisibility":  # the analysis tracks powers of two
                values = tuple(highest_power_of_2_divisor(v) for v in values)
            if len(values) == info.rank:
                fields[field] = values
    return AxisInfo(fields["contiguity"], fields["divisibility"], fields["constancy"], info.value)


def rule(*names: str):
    def register(fn):
        for name in names:
            _RULES[name] = fn
        return fn
    return register


@rule("scf.if")
def _if(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    """A result is one branch's yielded value or the other's: what both share (a branch
    with no block, an `if` without else, yields nothing)."""
    yields = [block_ops(region.blocks[0])[-1] for region in op.regions if len(region.blocks)]
    if len(yields) != 2:
        return _unknown(analysis, op)
    return [_join(analysis.get(a), analysis.get(b)) for a, b in zip(yields[0].operands, yields[1].operands)]


@rule("arith.constant")
def _constant(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    result = op.results[0]
    shape = _rank_shape(result)
    attr = op.attributes["value"]
    if is_tensor(result.type):
        dense = ir.DenseElementsAttr(attr)
        if not dense.is_splat:
            return [AxisInfo.unknown(len(shape))]
        attr = dense.get_splat_value()
    if isinstance(attr, ir.IntegerAttr) or str(attr.type).startswith("i"):
        try:
            return [AxisInfo.constant(shape, ir.IntegerAttr(attr).value)]
        except (ValueError, TypeError):
            pass
    return [AxisInfo((1,) * len(shape), (1,) * len(shape), shape)]


@rule("tile.make_range")
def _make_range(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    start, end = int_attr_value(op, "start"), int_attr_value(op, "end")
    return [AxisInfo((end - start,), (highest_power_of_2_divisor(start),), (1,))]


@rule("tile.splat")
def _splat(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    src = analysis.get(op.operands[0])
    shape = _rank_shape(op.results[0])
    return [AxisInfo((1,) * len(shape), (src.divisibility[0],) * len(shape), shape, src.value)]


@rule("tile.get_program_id", "tile.get_num_programs")
def _program_id(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    return [AxisInfo((1,), (1,), (1,))]


def _add_like(a: AxisInfo, b: AxisInfo, scale_b: int = 1, subtract: bool = False) -> AxisInfo:
    contiguity, divisibility, constancy = [], [], []
    for d in range(a.rank):
        contig = gcd(a.contiguity[d], b.constancy[d])
        if not subtract:
            contig = max(contig, gcd(a.constancy[d], b.contiguity[d]))
        contiguity.append(contig)
        b_div = min(_divisibility_over_runs(b, d, contig) * scale_b, MAX_DIVISIBILITY)
        divisibility.append(gcd(_divisibility_over_runs(a, d, contig), b_div))
        constancy.append(gcd(a.constancy[d], b.constancy[d]))
    value = None
    if a.value is not None and b.value is not None:
        value = a.value - b.value * scale_b if subtract else a.value + b.value * scale_b
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), value)


@rule("arith.addi")
def _addi(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    return [_add_like(analysis.get(op.operands[0]), analysis.get(op.operands[1]))]


@rule("arith.subi")
def _subi(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    return [_add_like(analysis.get(op.operands[0]), analysis.get(op.operands[1]), subtract=True)]


@rule("tile.addptr")
def _addptr(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    ptr, offset = op.operands[0], op.operands[1]
    return [_add_like(analysis.get(ptr), analysis.get(offset), scale_b=_elem_bytes(ptr.type))]


@rule("arith.muli")
def _muli(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    a, b = analysis.get(op.operands[0]), analysis.get(op.operands[1])
    contiguity, divisibility, constancy = [], [], []
    for d in range(a.rank):
        contig = 1
        if b.value == 1:
            contig = a.contiguity[d]
        elif a.value == 1:
            contig = b.contiguity[d]
        contiguity.append(contig)
        divisibility.append(min(_divisibility_over_runs(a, d, contig) * _divisibility_over_runs(b, d, contig),
                                MAX_DIVISIBILITY))
        constancy.append(gcd(a.constancy[d], b.constancy[d]))
    value = a.value * b.value if a.value is not None and b.value is not None else None
    return [AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), value)]


@rule("arith.divsi", "arith.divui")
def _div(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    a, b = analysis.get(op.operands[0]), analysis.get(op.operands[1])
    constancy, divisibility = [], []
    for d in range(a.rank):
        const = gcd(a.constancy[d], b.constancy[d])
        if b.value is not None and b.value > 0 and b.constancy[d] > 1:
            # x // c is constant over aligned runs of gcd(contiguous run, c).
            const = max(const, gcd(gcd(a.contiguity[d], a.divisibility[d]), highest_power_of_2_divisor(b.value)))
        constancy.append(const)
        div = 1
        if b.value is not None and b.value > 0 and a.divisibility[d] % b.value == 0 and a.contiguity[d] == 1:
            div = max(1, a.divisibility[d] // b.value)
        divisibility.append(div)
    value = None
    if a.value is not None and b.value:
        value = int(a.value / b.value)
    return [AxisInfo((1,) * a.rank, tuple(divisibility), tuple(constancy), value)]


@rule("arith.remsi", "arith.remui")
def _rem(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    a, b = analysis.get(op.operands[0]), analysis.get(op.operands[1])
    contiguity, divisibility, constancy = [], [], []
    for d in range(a.rank):
        contig = 1
        if b.constancy[d] > 1 or b.value is not None:
            # Runs wrap only at multiples of the divisor.
            contig = gcd(gcd(a.contiguity[d], b.divisibility[d]), b.constancy[d])
        contiguity.append(contig)
        divisibility.append(gcd(_divisibility_over_runs(a, d, contig), b.divisibility[d]))
        constancy.append(gcd(a.constancy[d], b.constancy[d]))
    return [AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy))]


# arith.cmpi predicates (arith::CmpIPredicate) of the form `run < bound` or `run >= bound`
# when the run is the left operand, and when it is the right one.
_CMPI_SLT, _CMPI_SLE, _CMPI_SGT, _CMPI_SGE, _CMPI_ULT, _CMPI_ULE, _CMPI_UGT, _CMPI_UGE = range(2, 10)
_RUN_ON_LEFT = {_CMPI_SLT, _CMPI_SGE, _CMPI_ULT, _CMPI_UGE}
_RUN_ON_RIGHT = {_CMPI_SGT, _CMPI_SLE, _CMPI_UGT, _CMPI_ULE}


@rule("arith.cmpi")
def _cmpi(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    a, b = analysis.get(op.operands[0]), analysis.get(op.operands[1])
    predicate = int_attr_value(op, "predicate")
    orders = []
    if predicate in _RUN_ON_LEFT:
        orders.append((a, b))
    if predicate in _RUN_ON_RIGHT:
        orders.append((b, a))
    constancy = []
    for d in range(a.rank):
        const = gcd(a.constancy[d], b.constancy[d])
        # `run < bound` (or >=) for an aligned run of consecutive values and a bound that is
        # constant over the run and divisible by its length: the run lies wholly below or
        # wholly at or above the bound. Not so for <=, >, == or != (the run [4, 8) against 4).
        for run_info, bound in orders:
            run = gcd(run_info.contiguity[d], run_info.divisibility[d])
            const = max(const, gcd(run, gcd(bound.constancy[d], bound.divisibility[d])))
        constancy.append(const)
    return [AxisInfo((1,) * a.rank, (1,) * a.rank, tuple(constancy))]


@rule("arith.andi", "arith.ori", "arith.xori")
def _bitwise(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    a, b = analysis.get(op.operands[0]), analysis.get(op.operands[1])
    constancy = tuple(gcd(x, y) for x, y in zip(a.constancy, b.constancy))
    return [AxisInfo((1,) * a.rank, (1,) * a.rank, constancy)]


@rule("arith.select")
def _select(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    c, a, b = (analysis.get(v) for v in op.operands)
    rank = a.rank
    if c.rank != rank:  # scalar condition
        c = AxisInfo((1,) * rank, (1,) * rank, tuple(_rank_shape(op.results[0])), c.value)
    constancy = tuple(gcd(gcd(x, y), z) for x, y, z in zip(c.constancy, a.constancy, b.constancy))
    contiguity = tuple(gcd(gcd(x, y), z) for x, y, z in zip(c.constancy, a.contiguity, b.contiguity))
    divisibility = tuple(gcd(_divisibility_over_runs(a, d, run), _divisibility_over_runs(b, d, run))
                         for d, run in enumerate(contiguity))
    return [AxisInfo(contiguity, divisibility, constancy)]


@rule("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "tilegpu.convert_layout",
      "tile.bitcast", "tile.int_to_ptr", "tile.ptr_to_int")
def _same(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    return [analysis.get(op.operands[0])]


@rule("tile.broadcast")
def _broadcast(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    src = analysis.get(op.operands[0])
    src_shape, dst_shape = _rank_shape(op.operands[0]), _rank_shape(op.results[0])
    contiguity, constancy = list(src.contiguity), list(src.constancy)
    for d, (s, t) in enumerate(zip(src_shape, dst_shape)):
        if s != t:
            contiguity[d], constancy[d] = 1, t
    return [AxisInfo(tuple(contiguity), src.divisibility, tuple(constancy), src.value)]


def _every_element_divisibility(info: AxisInfo) -> int:
    """A power of two dividing every element (not only the first of each run).

    Along a dimension of contiguity 1 every element starts a run, so each is divisible by
    that dimension's divisibility; inside a longer run the elements step by one, so a
    dimension of contiguity above 1 promises nothing for the ones after the first.
    """
    if info.value is not None:
        return highest_power_of_2_divisor(info.value)
    return max((div for contig, div in zip(info.contiguity, info.divisibility) if contig == 1), default=1)


@rule("tile.expand_dims")
def _expand_dims(analysis: AxisInfoAnalysis, op: ir.Operation) -> list[AxisInfo]:
    src = analysis.get(op.operands[0])
    axis = int_attr_value(op, "axis")
    contiguity, divisibility, constancy = list(src.contiguity), list(src.divisibility), list(src.constancy)
    if not is_tensor(op.operands[0].type):
        contiguity, divisibility, constancy = [], [], []
    contiguity.insert(axis, 1)
    divisibility.insert(axis, _every_element_divisibility(src))
    constancy.insert(axis, 1)
    return [AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), src.value)]
