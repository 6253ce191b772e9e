"""Cache modifiers of tl.load and tl.store (Triton 3.9's: loads ".ca", ".cg", ".cv",
".cs"; stores ".wb", ".cg", ".cs", ".wt"): the values are those of a plain access, the
PTX carries the cache operator, and a modifier of the other kind is refused."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

LOAD_MODIFIERS = ["", ".ca", ".cg", ".cv", ".cs"]
STORE_MODIFIERS = ["", ".wb", ".cg", ".cs", ".wt"]


@tilec.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, LOAD: tl.constexpr, STORE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=-1.0, cache_modifier=LOAD)
    tl.store(y_ptr + offs, x * 2.0 + 1.0, mask=mask, cache_modifier=STORE)


@pytest.mark.parametrize("load, store", list(zip(LOAD_MODIFIERS, STORE_MODIFIERS)))
def test_values_under_every_modifier(backend, rng, load, store):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = device_array(np.full(1024, np.nan, np.float32), backend)
    copy_kernel[(4,)](device_array(x, backend), y, n, BLOCK=256, LOAD=load, STORE=store)
    got = to_numpy(y)
    np.testing.assert_array_equal(got[:n], x * np.float32(2) + np.float32(1))
    assert np.isnan(got[n:]).all()


@pytest.mark.parametrize("load, store", [(".cs", ".cs"), (".cv", ".wt"), (".cg", ".cg")])
def test_the_ptx_cache_operator(load, store):
    ptx = tilec.compile(copy_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "n": "i32"},
                        constexprs={"BLOCK": 256, "LOAD": load, "STORE": store}).asm["ptx"]
    assert f"ld.global{load}.v4.b32" in ptx or f"ld.global{load}.b32" in ptx
    assert f"st.global{store}.v4.b32" in ptx or f"st.global{store}.b32" in ptx


@pytest.mark.parametrize("load, store, message", [
    (".wb", "", "load's cache_modifier '.wb' is not one of \\['', '.ca', '.cg', '.cv', '.cs'\\]"),
    ("", ".cv", "store's cache_modifier '.cv' is not one of"),
    (".lu", "", "load's cache_modifier '.lu'"),
])
def test_modifiers_of_the_other_kind_are_refused(load, store, message):
    with pytest.raises(tilec.CompilationError, match=message):
        copy_kernel.warmup("*fp32", "*fp32", "i32", BLOCK=256, LOAD=load, STORE=store, grid=(1,))
