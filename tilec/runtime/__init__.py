"""Launching, caching and autotuning; `driver.active` answers Triton's device queries."""
from . import driver  # noqa: F401  (tilec.runtime.driver.active, as triton.runtime.driver.active)
