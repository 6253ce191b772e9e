"""What passes may assume about an op, recorded once, beside the op's definition.

IRDL ops carry no traits, so MLIR cannot tell the passes which tile ops are pure or
elementwise. Each dialect module declares one `OpFacts` per op it defines (`define_op`,
next to its IRDL text), and passes ask here instead of keeping lists of op names:

- `pure`: no effect besides the results (an unused one may be erased, a used one
  recomputed elsewhere);
- `elementwise`: each result element depends only on the operand elements at the same
  position, so the op runs in whatever layout its tensor operands share;
- `any_layout_operands`: operands the lowering reads in whatever layout they come in
  (through shared memory), so no conversion is needed before them;
- `verifier`: the shape and type rules IRDL cannot state (a message, or None when fine);
- `reads_memory`: a pure op whose result depends on memory (a load), which may be erased
  when unused but not recomputed elsewhere.

`pure` and `elementwise` may be functions of the op when an attribute decides (a
volatile load, an impure inline asm). Upstream `arith` and `math` ops are described
by family here; structural ops (scf, func, gpu) have no facts: passes handle them
explicitly, and `facts_of` returns None for them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Union

from mlir import ir

Verifier = Callable[[ir.Operation], Union[str, None]]
Fact = Union[bool, Callable[[ir.Operation], bool]]


@dataclass(frozen=True)
class OpFacts:
    name: str
    pure: Fact = False
    elementwise: Fact = False
    any_layout_operands: frozenset[int] | Callable[[ir.Operation], frozenset[int]] = field(default_factory=frozenset)
    verifier: Verifier | None = None
    reads_memory: bool = False  # pure, yet its result depends on memory: not to be recomputed elsewhere


OPS: dict[str, OpFacts] = {}

# Upstream families: every arith/math op is pure and elementwise, except the constant
# (a source: it has no operands to take a layout from).
_ARITH = OpFacts("arith.*", pure=True, elementwise=True)
_ARITH_CONSTANT = OpFacts("arith.constant", pure=True)
_MATH = OpFacts("math.*", pure=True, elementwise=True)


def define_op(name: str, *, pure: Fact = False, elementwise: Fact = False,
              any_layout_operands: tuple[int, ...] | Callable[[ir.Operation], frozenset[int]] = (),
              reads_memory: bool = False) -> OpFacts:
    """Records the facts of op `name` (once: a second definition is a bug)."""
    if name in OPS:
        raise ValueError(f"op {name} defined twice")
    operands = any_layout_operands if callable(any_layout_operands) else frozenset(any_layout_operands)
    facts = OpFacts(name, pure, elementwise, operands, reads_memory=reads_memory)
    OPS[name] = facts
    return facts


def verifier(*names: str) -> Callable[[Verifier], Verifier]:
    """Attaches the decorated function as the verifier of the named (defined) ops."""

    def attach(fn: Verifier) -> Verifier:
        for name in names:
            OPS[name] = replace(OPS[name], verifier=fn)
        return fn

    return attach


def facts_of(op: ir.Operation) -> OpFacts | None:
    name = op.name
    facts = OPS.get(name)
    if facts is not None:
        return facts
    if name == "arith.constant":
        return _ARITH_CONSTANT
    if name.startswith("arith."):
        return _ARITH
    if name.startswith("math."):
        return _MATH
    return None


def _holds(fact: Fact, op: ir.Operation) -> bool:
    return fact(op) if callable(fact) else fact


def is_pure(op: ir.Operation) -> bool:
    """True when erasing `op` (its results unused) changes nothing."""
    facts = facts_of(op)
    return facts is not None and _holds(facts.pure, op)


def is_elementwise(op: ir.Operation) -> bool:
    facts = facts_of(op)
    return facts is not None and _holds(facts.elementwise, op)


def reads_any_layout(op: ir.Operation, operand: int) -> bool:
    facts = facts_of(op)
    if facts is None:
        return False
    operands = facts.any_layout_operands
    return operand in (operands(op) if callable(operands) else operands)


def reads_memory(op: ir.Operation) -> bool:
    """True for an op whose result depends on memory (a load): pure, so removable when
    unused, but not to be moved across writes or recomputed in another iteration."""
    facts = facts_of(op)
    return facts is not None and facts.reads_memory


def verifier_of(op: ir.Operation) -> Verifier | None:
    facts = facts_of(op)
    return None if facts is None else facts.verifier
