"""Block pointers and tensor descriptors (filled in by their implementation)."""
__all__: list[str] = []
