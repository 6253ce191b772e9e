"""Grid dependency control (`tl.extra.cuda.gdc_wait`, `gdc_launch_dependents`): the
device side of programmatic dependent launch (a kernel launched with `launch_pdl=True`
may start before the kernel it follows on the stream has finished). PTX's griddepcontrol
instructions, sm_90 and newer; both do nothing when the kernel was launched without PDL,
and in the interpreter, which runs kernels one after another.
"""
from __future__ import annotations

from ...core import builtin, current_semantic


@builtin
def gdc_wait():
    """Waits until the grids this one depends on have finished and their memory writes
    are visible (griddepcontrol.wait). Put it before the first read of what the previous
    kernel wrote."""
    current_semantic().grid_dependency("wait", "gdc_wait")


@builtin
def gdc_launch_dependents():
    """Lets the dependent grid (the next kernel launched with launch_pdl=True) start once
    every program of this grid has called this or finished
    (griddepcontrol.launch_dependents); later calls in a program change nothing. A hint:
    the dependent still waits in its gdc_wait for this grid's writes."""
    current_semantic().grid_dependency("launch_dependents", "gdc_launch_dependents")
