"""benchmarks/bench_tutorials.py loads Triton's tutorials as modules without running their
module-level demonstrations, with the language imports pointed at tilec. Tested here on a
small file written like a tutorial (no torch, no Triton needed)."""
import os
import sys
import textwrap

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))

import bench_tutorials  # noqa: E402
from tilec import config  # noqa: E402

TUTORIAL = textwrap.dedent('''
    """A tutorial-like file: a kernel, a wrapper, and a demonstration at module level."""
    import numpy as np
    import triton
    import triton.language as tl
    import a_package_that_is_not_installed_anywhere as missing

    BLOCK = 64
    UNUSED = 7


    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


    def scale(x, factor):
        out = np.full_like(x, np.nan)
        scale_kernel[(triton.cdiv(x.size, BLOCK),)](x, out, x.size, factor, BLOCK_SIZE=BLOCK)
        return out


    def uses_broken():
        return BROKEN


    BROKEN = 1 // 0
    x = np.arange(10, dtype=np.float32)
    y = scale(x, 3.0)
    print(y)
    assert (y == 3 * x).all()
    launched = []
    for i in range(3):
        launched.append(scale(x, i))


    @triton.testing.perf_report([])
    def benchmark(size, provider):
        return scale(np.ones(size, np.float32), 2.0)


    benchmark.run(print_data=True)

    if __name__ == "__main__":
        scale(x, 2.0)
''')


@pytest.fixture
def tutorial_path(tmp_path):
    path = tmp_path / "99-scale.py"
    path.write_text(TUTORIAL)
    return str(path)


def test_strip_keeps_the_program_and_drops_the_demonstration(tutorial_path):
    kept = bench_tutorials.strip_module(TUTORIAL, tutorial_path)
    bound = set().union(*(bench_tutorials._bound_names(node) for node in kept))
    assert {"scale_kernel", "scale", "uses_broken", "BLOCK", "BROKEN", "np", "triton", "tl", "missing"} <= bound
    # read by nothing kept: the demonstration's values, the loop, the benchmark
    assert not bound & {"UNUSED", "x", "y", "launched", "i", "benchmark"}
    # kept statements keep their lines in the file (tracebacks and kernel sources point there)
    assert [node.lineno for node in kept] == sorted(node.lineno for node in kept)
    assert kept[-1].lineno == TUTORIAL.splitlines().index("BROKEN = 1 // 0") + 1


def test_the_tilec_variant_runs_on_tilec(tutorial_path, monkeypatch):
    tutorial = bench_tutorials.load_tutorial(tutorial_path, "tilec")
    module = tutorial.module
    import tilec
    assert module.triton is tilec and module.tl is tilec.language
    assert type(module.scale_kernel).__module__.startswith("tilec.")
    # the statement that raised is reported, and what depends on it says so when used
    assert len(tutorial.load_errors) == 1 and "ZeroDivisionError" in tutorial.load_errors[0]
    with pytest.raises(NameError):
        module.uses_broken()
    # an optional import that failed raises only when used
    with pytest.raises(ImportError, match="a_package_that_is_not_installed_anywhere"):
        module.missing.anything
    monkeypatch.setattr(config.config, "interpret", True)
    x = np.random.default_rng(0).standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(module.scale(x, 3.0), x * np.float32(3.0))


def test_the_triton_variant_keeps_the_imports(tutorial_path):
    rewriter = bench_tutorials.ImportRewriter(to_tilec=False)
    import ast
    tree = ast.parse("import triton\nimport triton.language as tl\nfrom triton.tools.mxfp import MXFP4Tensor\n")
    statements = [rewriter.visit(node) for node in tree.body]
    assert ast.unparse(statements[0][0]) == "import triton"
    assert ast.unparse(statements[1][0]) == "import triton.language as tl"
    # a host helper is guarded: a placeholder where Triton is not installed
    assert isinstance(statements[2], ast.Try)


def test_tilec_rewrites_language_imports_only():
    import ast
    rewriter = bench_tutorials.ImportRewriter(to_tilec=True)
    source = ("import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n"
              "from triton.tools.tensor_descriptor import TensorDescriptor\nimport triton.profiler as proton\n"
              "import triton.language\n")
    rewritten = []
    for node in ast.parse(source).body:
        result = rewriter.visit(node)
        rewritten += result if isinstance(result, list) else [result]
    text = [ast.unparse(node) for node in rewritten]
    assert text[0] == "import tilec as triton"
    assert text[1] == "import tilec.language as tl"
    assert text[2] == "from tilec.language.extra import libdevice"
    assert text[3] == "from tilec.tools.tensor_descriptor import TensorDescriptor"
    assert text[4].startswith("try:\n    import triton.profiler as proton")  # Triton's, guarded
    assert text[5:] == ["import tilec.language", "import tilec as triton"]  # `triton` still names tilec


def test_a_future_import_stays_a_plain_first_statement():
    """Kernel files often start with `from __future__ import annotations`; it must stay
    unguarded (Python takes it only as the first statement, never inside a `try`)."""
    import ast
    source = '"""A kernel file."""\nfrom __future__ import annotations\nimport triton\nimport optional_thing\n'
    for to_tilec in (True, False):
        tree = ast.fix_missing_locations(bench_tutorials.ImportRewriter(to_tilec=to_tilec).visit(ast.parse(source)))
        assert ast.unparse(tree.body[1]) == "from __future__ import annotations"
        compile(tree, "kernel.py", "exec")  # a guarded __future__ import would be a SyntaxError here
        assert isinstance(tree.body[-1], ast.Try)  # other optional imports stay guarded


def test_a_star_import_of_an_optional_module_is_guarded_without_placeholders():
    """attorch's `__init__` does `from .layers import *`-style star imports of its own
    modules; a star import of an optional absolute module binds names nobody can list,
    so its guard binds none (binding `*` was a SyntaxError)."""
    import ast
    source = "from optional_thing import *\nimport triton\n"
    for to_tilec in (True, False):
        tree = ast.fix_missing_locations(bench_tutorials.ImportRewriter(to_tilec=to_tilec).visit(ast.parse(source)))
        guard = tree.body[0]
        assert isinstance(guard, ast.Try) and isinstance(guard.handlers[0].body[0], ast.Pass)
        code = compile(tree, "kernel.py", "exec")  # binding `*` in the handler was a SyntaxError here
        if to_tilec:  # (Triton itself need not be installed)
            namespace = {"__unavailable__": bench_tutorials.Unavailable}
            exec(code, namespace)  # the module is missing: nothing bound, no error
            assert "triton" in namespace
