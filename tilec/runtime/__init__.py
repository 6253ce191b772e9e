"""Launching, caching and autotuning; `driver.active` answers Triton's device queries."""
from . import driver  # noqa: F401  (tilec.runtime.driver.active, as triton.runtime.driver.active)
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: F401  (as in triton.runtime)
from .errors import InterpreterError, OutOfResources  # noqa: F401  (as in triton.runtime)
from .jit import JITFunction, KernelInterface  # noqa: F401
