"""What a corpus kernel file's `cases(device, size)` yields (see run.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Case:
    """One kernel at one shape: `inputs()` made once for both backends, `run(module,
    inputs)` the callable checked and timed, its result compared with `reference(inputs)`
    (or judged by `check(result, inputs)`: None when right), `bytes`/`flops` for the
    throughput, `needs` the least compute capability."""
    name: str
    shape: str
    inputs: Callable[[], dict]
    run: Callable[[Any, dict], Callable[[], Any]]   # (the backend's module, inputs) -> the call
    reference: Callable[[dict], Any] | None = None
    check: Callable[[Any, dict], str | None] | None = None
    atol: float = 1e-5
    rtol: float = 1e-5
    bytes: float | None = None
    flops: float | None = None
    needs: tuple | None = None
