"""The globals a kernel reads are part of its disk cache key, tuples and module
attributes included (docs/language.md and docs/debugging.md say so): a program that
changes one between runs does not get the kernel compiled for the old value."""
from __future__ import annotations

import importlib
import sys
import textwrap

from tilec.runtime.jit import JITFunction


def test_tuple_globals_and_module_attributes_are_in_the_key(tmp_path):
    (tmp_path / "key_helpers.py").write_text("BLOCK = 32\n")
    (tmp_path / "key_kernel.py").write_text(textwrap.dedent("""
        import tilec
        import tilec.language as tl
        import key_helpers as helpers
        SIZES = (16, 32)

        @tilec.jit
        def kernel(p):
            offs = tl.arange(0, SIZES[1] + helpers.BLOCK)
            tl.store(p + offs, 1.0)
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("key_kernel")
    finally:
        sys.path.remove(str(tmp_path))

    def key() -> str:  # as a fresh process would compute it (the hash is kept per JITFunction)
        return JITFunction(module.kernel.fn).cache_hash()

    first = key()
    assert key() == first
    module.SIZES = (16, 96)
    with_other_tuple = key()
    module.helpers.BLOCK = 96
    with_other_attribute = key()
    assert len({first, with_other_tuple, with_other_attribute}) == 3
