"""The launch that TorchDynamo calls without tracing it (see `torch_compile`). Imports
torch: imported only once TorchDynamo traces a launch, so that creating the
`torch.compiler.disable` wrapper is not itself traced."""
from __future__ import annotations

import inspect
from typing import Any

import torch

from .errors import hide_internal_frames

_REASON = ("a tilec kernel launch runs outside torch.compile's graphs; to keep it in the graph, register the "
           "function that launches it as a torch.library custom op")


def launch_tilec_kernel(kernel: Any, grid: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return kernel[grid](*args, **kwargs)  # TorchDynamo is not tracing here: the usual launch
    except Exception as error:
        hide_internal_frames(error)  # the user's frames (and torch.compile's) end at the launch
        raise


# `reason` names the graph break in torch's logs (torch 2.7 and newer take it).
untraced_launch = (torch.compiler.disable(launch_tilec_kernel, reason=_REASON)
                   if "reason" in inspect.signature(torch.compiler.disable).parameters
                   else torch.compiler.disable(launch_tilec_kernel))
