"""tilec kernels inside functions compiled by `torch.compile`.

TorchDynamo, the tracer of `torch.compile`, follows every Python call it meets. A tilec
launch (`kernel[grid](...)`) is Python down to the C launcher -- binding, specialisation,
the cache, the interpreter -- and traced, it would run on fake tensors, which have no
memory. So a launch met while TorchDynamo traces is a graph break: the graph before it is
compiled, the launch runs as plain Python runs it, on real tensors, and tracing resumes
after it. The launch entry points (`kernel[grid]` of a @jit function, an autotuned or
heuristics-wrapped kernel, a compiled kernel) ask `launched_in_torch_compile()` first (a
@jit function asks torch's own function, kept by `torch_compile_check`: a launch makes no
Python call of tilec's more) and, when it says yes, launch through
`launch_outside_graphs`: a function marked with `torch.compiler.disable`, which
TorchDynamo calls without tracing it or anything it calls.
Host-side helpers such as `tilec.cdiv` ask it too, and are traced as the plain functions
they are there (no graph break for the grid's arithmetic).

For a compiled graph without that break (`fullgraph=True`, or to let the compiler work
across the kernel), register the function that launches the kernel as a `torch.library`
custom operator with a fake implementation (docs/debugging.md, "tilec kernels in
torch.compile"): the graph then calls the operator like any other.

Nothing here imports torch: `_torch_untraced`, which does, is imported only once
TorchDynamo traces a launch.
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable


def launched_in_torch_compile() -> bool:
    """Whether TorchDynamo is tracing the code that launches a kernel. False where torch
    is not imported; asked while tracing (TorchDynamo answers True for it), not when the
    compiled code runs."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        return torch.compiler.is_dynamo_compiling()  # asked at every launch: kept to one call
    except AttributeError:  # torch older than 2.3 (torch.compile then traces the launch), or half imported
        return False


def torch_compile_check(torch: Any) -> Callable[[], bool]:
    """`launched_in_torch_compile` for a launch path made for this `torch` module (None
    where torch is not imported) that costs no Python call of tilec's: torch's own
    function, or a builtin answering False."""
    try:
        return torch.compiler.is_dynamo_compiling
    except AttributeError:  # no torch, or one older than 2.3
        return False.__bool__


def launch_outside_graphs(kernel: Any, grid: Any) -> Callable[..., Any]:
    """`kernel[grid]` as a callable TorchDynamo does not trace: calling it breaks the
    graph and launches the kernel on real tensors."""
    from ._torch_untraced import untraced_launch
    return functools.partial(untraced_launch, kernel, grid)
