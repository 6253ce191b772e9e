"""Random numbers in kernels: Philox 4x32-10 (filled in by its implementation)."""
__all__: list[str] = []
