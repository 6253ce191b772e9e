"""The allocator Triton asks for global scratch memory (`triton.set_allocator`), here so
that code written against Triton's module finds its names. tilec's kernels need no
such memory: the allocator is kept (`tilec.set_allocator`) but not called."""
from __future__ import annotations

from typing import Any


class NullAllocator:
    """The allocator in place when none was set: asking it for memory is an error."""

    def __call__(self, size: int, alignment: int, stream: Any) -> Any:
        raise RuntimeError("no allocator was set (tilec.set_allocator); tilec's kernels do not ask for one")


def set_allocator(allocator: Any) -> None:
    from .. import set_allocator as _set
    _set(allocator)
