"""NVIDIA libdevice functions (filled in by their implementation)."""
__all__: list[str] = []
NUMPY_IMPLEMENTATIONS: dict = {}
