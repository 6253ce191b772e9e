"""The semantic layer: the one place that knows the rules of the language.

Builtins and tensor operators call methods here with user values (tensors, constexprs,
Python scalars). This layer converts them to tensors, applies Triton's type promotion
and broadcasting, checks legality (raising `TilecSemanticError` with one clear sentence;
the frontend adds the source location), and asks the builder to emit the result.

The rules are grouped by section, one mixin per module (conversions.py, shapes.py,
arithmetic.py, gather_histogram.py, debugging.py, casts.py, creation.py, math.py,
memory.py, matrix_product.py, atomics.py, reductions.py, hardware.py); `Semantic` below
combines them and holds the state they share. common.py has the promotion rules and
argument checks.
"""
from __future__ import annotations

import contextlib

from ...target import Target
from ..builder import Builder
from .common import MAX_TENSOR_NUMEL, computation_type, integer_promote, python_scalar_type
from .conversions import ConversionRules
from .shapes import ShapeRules
from .arithmetic import ArithmeticRules
from .gather_histogram import GatherHistogramRules
from .debugging import DebuggingRules
from .casts import CastRules
from .creation import CreationRules
from .math import MathRules
from .memory import MemoryRules
from .matrix_product import MatrixProductRules
from .atomics import AtomicRules
from .reductions import ReductionRules
from .hardware import HardwareRules


class Semantic(ConversionRules, ShapeRules, ArithmeticRules, GatherHistogramRules, DebuggingRules,
               CastRules, CreationRules, MathRules, MemoryRules, MatrixProductRules, AtomicRules,
               ReductionRules, HardwareRules):
    """Language rules over a builder; see the module docstring."""

    def __init__(self, builder: Builder, *, debug: bool = False, target: Target | None = None,
                 num_warps: int = 4):
        """`debug` turns on device_assert and the overflow checks; `target`, when
        known, lets rules that depend on the GPU fail early and clearly; `num_warps` is
        the launch's (tl.extra.cuda.num_warps())."""
        self.builder = builder
        self.debug = debug
        self.target = target
        self.capability = target.capability if target else None
        self.num_warps = num_warps
        self._combining = 0  # > 0 while a reduce/scan combine function is being built

    @contextlib.contextmanager
    def _combiner(self):
        """While a combine function is built: no debug checks inside it (a scan may run it
        on lanes whose results are thrown away)."""
        self._combining += 1
        try:
            yield
        finally:
            self._combining -= 1


__all__ = ["MAX_TENSOR_NUMEL", "Semantic", "computation_type", "integer_promote", "python_scalar_type"]
