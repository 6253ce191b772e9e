"""Kernels whose source is not in a file: built with exec() from a template, given with
`src=`, or replaced at run time (`update_src`, Triton's `_unsafe_update_src`). Each runs
in the interpreter and compiled (the `backend` fixture), and compiled kernels follow the
source they were made from."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

TEMPLATE = textwrap.dedent('''
    import tilec
    import tilec.language as tl

    @tilec.jit
    def {name}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, {expression}, mask=mask)
''')

SIGNATURE = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "n": "i32"}


def kernel_from_template(name: str, expression: str):
    """As code generators and test suites make kernels: a string, exec'd."""
    source = TEMPLATE.format(name=name, expression=expression)
    namespace: dict = {}
    exec(source, namespace)
    return namespace[name]


def run(kernel, backend, x: np.ndarray) -> np.ndarray:
    y = device_array(np.full_like(x, np.nan), backend)
    kernel[(2,)](device_array(x, backend), y, x.size, BLOCK=64)
    return to_numpy(y)


@pytest.mark.parametrize("expression,reference", [("tl.load(x_ptr + offs, mask=mask) * 2 + 1", lambda x: x * 2 + 1),
                                                  ("tl.abs(tl.load(x_ptr + offs, mask=mask))", np.abs)])
def test_a_kernel_made_by_exec_runs(backend, rng, expression, reference):
    kernel = kernel_from_template("templated", expression)
    x = rng.standard_normal(100).astype(np.float32)
    np.testing.assert_allclose(run(kernel, backend, x), reference(x), rtol=1e-6)


def test_exec_of_a_literal_string(backend, rng):
    """The definition is a constant of the calling code (no variable holds it)."""
    namespace = {"tilec": tilec, "tl": tl}
    exec(compile("@tilec.jit\ndef scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
                 "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                 "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 4, mask=offs < n)\n",
                 "<string>", "exec"), namespace)
    x = rng.standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(run(namespace["scale"], backend, x), x * 4)


def _lost_text() -> str:
    return "def lost(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n" + "".join(
        f"    {line}\n" for line in ["offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
                                     "tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) - 1, "
                                     "mask=offs < n)"])


def _function_without_source():
    """A function whose defining string is gone by the time @jit sees it."""
    namespace = {"tl": tl}
    exec(_lost_text(), namespace)
    return namespace["lost"]


def test_a_function_without_source_asks_for_src(backend, rng):
    fn = _function_without_source()
    with pytest.raises(ValueError, match=r"@jit needs the source of lost.*@tilec\.jit\(src=\.\.\.\)"):
        tilec.jit(fn)
    kernel = tilec.jit(fn, src=_lost_text())
    x = rng.standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(run(kernel, backend, x), x - 1)


def test_update_src_replaces_what_both_backends_run(backend, rng):
    kernel = kernel_from_template("updated", "tl.load(x_ptr + offs, mask=mask) + 1")
    x = rng.standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(run(kernel, backend, x), x + 1)
    kernel.update_src(kernel.src.replace("+ 1", "* 5"))
    np.testing.assert_array_equal(run(kernel, backend, x), x * 5)
    kernel.src = kernel.src.replace("* 5", "- 2")  # the attribute, as Triton's JITFunction
    np.testing.assert_array_equal(run(kernel, backend, x), x - 2)
    kernel._unsafe_update_src(kernel.src.replace("- 2", "* 0.5"))  # Triton's name
    np.testing.assert_array_equal(run(kernel, backend, x), x * 0.5)


def test_compiled_kernels_follow_the_source(fresh_cache):
    kernel = kernel_from_template("keyed", "tl.load(x_ptr + offs, mask=mask) + 1")
    before = tilec.compile(kernel, signature=SIGNATURE, constexprs={"BLOCK": 64}).asm["ttir"]
    kernel.update_src(kernel.src.replace("+ 1", "* 3"))
    after = tilec.compile(kernel, signature=SIGNATURE, constexprs={"BLOCK": 64}).asm["ttir"]
    assert "arith.addf" in before and "arith.mulf" not in before
    assert "arith.mulf" in after and "arith.addf" not in after


@tilec.jit
def helper(x):
    return x + 1


@tilec.jit
def caller(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, helper(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def test_a_caller_sees_its_callees_new_source(backend, rng):
    x = rng.standard_normal(100).astype(np.float32)
    original = helper.src
    try:
        np.testing.assert_array_equal(run(caller, backend, x), x + 1)
        helper.update_src(original.replace("x + 1", "x * 7"))
        np.testing.assert_array_equal(run(caller, backend, x), x * 7)
    finally:
        helper.update_src(original)


def test_update_src_of_a_kernel_naming_a_variable_assigned_later(backend, rng):
    """A kernel defined inside a function names `z`, a variable of that function
    assigned only after the definition (its cell is empty when the source is replaced;
    the new source assigns `z` itself), and `scale`, a constant of that function the new
    source still reads (from its cell, when the kernel is compiled; a kernel reads only
    constants from outside itself, as in Triton)."""
    scale = tl.constexpr(3.0)

    @tilec.jit
    def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask) * scale
        GENERATE_TEST_HERE  # noqa: F821
        tl.store(y_ptr + offs, z, mask=mask)  # noqa: F821

    kernel.update_src(kernel.src.replace("GENERATE_TEST_HERE  # noqa: F821", "z = x + 1.0"))
    z = rng.standard_normal(100).astype(np.float32)
    # On the GPU the multiply and add fuse into one rounding.
    np.testing.assert_allclose(run(kernel, backend, z), z.astype(np.float64) * scale.value + 1, rtol=1e-6, atol=1e-6)


def test_a_new_source_must_define_one_function():
    kernel = kernel_from_template("strict", "tl.load(x_ptr + offs, mask=mask)")
    with pytest.raises(ValueError, match="must define one function"):
        kernel.update_src("x = 1\n")


def test_an_interpreted_kernel_made_by_exec_quotes_its_line(monkeypatch):
    """Run-time errors of the interpreter quote the kernel's line from its own source
    when no file (no linecache entry) holds it."""
    from tilec.config import config
    monkeypatch.setattr(config, "interpret", True)
    kernel = kernel_from_template("overreach", "tl.load(x_ptr + offs + 1000)")
    with pytest.raises(IndexError) as info:
        kernel[(1,)](np.zeros(8, np.float32), np.zeros(8, np.float32), 8, BLOCK=8)
    assert "tl.store(y_ptr + offs, tl.load(x_ptr + offs + 1000), mask=mask)" in str(info.value)


def _noop_decorator(fn):
    return fn


@_noop_decorator
@tilec.jit
def decorated_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + 1)


def test_source_attributes_as_triton_has_them():
    """FlagGems' code generator reads `src` (from the `def` line: it pastes the source
    under decorators of its own), `cache_key` and `__globals__` of a JITFunction."""
    assert decorated_kernel.src.startswith("def decorated_kernel(x_ptr):")
    assert "@" not in decorated_kernel.src
    assert decorated_kernel.__globals__ is globals()
    key = decorated_kernel.cache_key
    assert isinstance(key, str) and key == decorated_kernel.cache_hash()
    original = decorated_kernel.src
    try:
        decorated_kernel.src = original.replace("+ 1", "+ 2")
        assert decorated_kernel.cache_key != key
    finally:
        decorated_kernel.src = original
    assert decorated_kernel.cache_key == key  # the same source, the same key (decorators do not count)
