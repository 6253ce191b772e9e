"""tilec's MLIR dialects (tile = ttir, tilegpu = ttgir) and the seam over the bindings."""
from ._mlir import make_context  # noqa: F401
from .verify import IRVerificationError, verify_module  # noqa: F401
