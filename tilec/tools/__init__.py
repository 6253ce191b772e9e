"""Host-side helpers that kernels' launchers use (`tilec.tools.tensor_descriptor`)."""
