"""tilec kernels launched from functions compiled by `torch.compile`.

Two ways, both tested on both backends (the interpreter runs kernels on CPU tensors):
- a plain launch inside the compiled function is a graph break: TorchDynamo compiles the
  graph before it, the launch runs on real tensors, tracing resumes after it;
- a launch wrapped in a `torch.library` custom op (with its fake implementation for a
  functional op) stays in the graph: `fullgraph=True` compiles, with no break.

The graphs are compiled with the "eager" and "aot_eager" backends, which need no C
compiler; what is under test is TorchDynamo's tracing, which is the same for Inductor.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import traceback

import pytest

import tilec
import tilec.language as tl
from tilec.config import config

torch = pytest.importorskip("torch")
if not hasattr(torch.compiler, "is_dynamo_compiling"):
    pytest.skip("torch.compile support needs torch 2.3 or newer", allow_module_level=True)

TILEC_DIR = os.path.dirname(os.path.abspath(tilec.__file__))
GRAPH_BREAK_REASON = "a tilec kernel launch runs outside torch.compile's graphs"


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def device_of(backend: str) -> str:
    return "cuda" if backend == "gpu" else "cpu"


@tilec.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha + y, mask=mask)


def scaled_add(x, y, alpha: float, block: int = 64):
    """The usual host wrapper: allocate, compute the grid with tilec.cdiv, launch."""
    out = torch.full_like(x, float("nan"))  # poisoned: every element must be written
    n = x.numel()
    scaled_add_kernel[(tilec.cdiv(n, block),)](x, y, out, n, alpha, BLOCK=block)
    return out


def inputs(backend: str, n: int = 1000):
    generator = torch.Generator().manual_seed(n)
    x = torch.randn(n, generator=generator, dtype=torch.float32)
    y = torch.randn(n, generator=generator, dtype=torch.float32)
    return x.to(device_of(backend)), y.to(device_of(backend))


def reference(x, y, alpha):
    return (x.double() * alpha + y.double()).float()


def break_reasons(fn, *args) -> list[str]:
    explanation = torch._dynamo.explain(fn)(*args)
    return [str(reason.reason) for reason in explanation.break_reasons]


# ============================================================================= graph breaks


@pytest.mark.parametrize("compiler_backend", ["eager", "aot_eager"])
def test_a_launch_in_a_compiled_function_is_a_graph_break(backend, compiler_backend):
    def f(x, y):
        return torch.relu(scaled_add(x * 2, y, 0.5)) + 1

    x, y = inputs(backend)
    compiled = torch.compile(f, backend=compiler_backend)
    for _ in range(2):  # the second call runs the cached graphs
        torch.testing.assert_close(compiled(x, y), torch.relu(reference(x * 2, y, 0.5)) + 1)
    reasons = break_reasons(f, x, y)
    assert reasons and all(GRAPH_BREAK_REASON in reason for reason in reasons), reasons


def test_a_kernel_made_before_torch_was_imported(backend, monkeypatch):
    # Its launcher was made without torch; the first launch after torch's import makes it
    # anew, which must not happen while TorchDynamo traces.
    @tilec.jit
    def increment(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    monkeypatch.setattr(increment, "_fast_run_torch", False)
    monkeypatch.setattr(increment, "_traced_by_torch_compile", False.__bool__)

    def f(x):
        increment[(1,)](x, x.numel(), BLOCK=64)
        return x * 2

    x, _ = inputs(backend, 50)
    expected = (x + 1) * 2
    torch.testing.assert_close(torch.compile(f, backend="eager")(x), expected)


def test_grid_arithmetic_with_tilec_cdiv_is_traced_without_a_break():
    # tilec.cdiv asks whether it runs inside a kernel (a ContextVar, which TorchDynamo
    # cannot trace): in traced host code it is a plain function.
    def f(x):
        return x * tilec.cdiv(x.shape[0], 64) + tilec.next_power_of_2(x.shape[0])

    x = torch.randn(1000)
    assert break_reasons(f, x) == []
    torch.testing.assert_close(torch.compile(f, backend="eager")(x), x * 16 + 1024)


def test_autotuned_and_heuristic_kernels_in_a_compiled_function(backend):
    tuned = tilec.autotune(configs=[tilec.Config({"BLOCK": 32}), tilec.Config({"BLOCK": 128})],
                           key=["n"])(scaled_add_kernel)
    with_heuristic = tilec.heuristics({"BLOCK": lambda args: 64})(scaled_add_kernel)

    def f(x, y):
        first = torch.full_like(x, float("nan"))
        second = torch.full_like(x, float("nan"))
        n = x.numel()
        tuned[lambda meta: (tilec.cdiv(n, meta["BLOCK"]),)](x, y, first, n, 3.0)
        with_heuristic[lambda meta: (tilec.cdiv(n, meta["BLOCK"]),)](first, y, second, n, -1.0)
        return second

    x, y = inputs(backend, 777)
    result = torch.compile(f, backend="eager")(x, y)
    torch.testing.assert_close(result, reference(reference(x, y, 3.0), y, -1.0))


def test_a_compiled_kernel_launched_in_a_compiled_function(backend):
    x, y = inputs(backend, 256)
    compiled_kernel = scaled_add_kernel.warmup(x, y, x, 256, 2.0, BLOCK=64, grid=(4,))

    def f(x, y):
        out = torch.full_like(x, float("nan"))
        compiled_kernel[(4,)](x, y, out, 256, 2.0, 64)
        return out - 1

    torch.testing.assert_close(torch.compile(f, backend="eager")(x, y), reference(x, y, 2.0) - 1)


def test_fullgraph_refuses_a_plain_launch_and_says_what_to_do(monkeypatch):
    monkeypatch.setattr(config, "interpret", True)
    x, y = inputs("interpreter")
    compiled = torch.compile(lambda x, y: scaled_add(x, y, 1.0), backend="eager", fullgraph=True)
    with pytest.raises(Exception) as info:
        compiled(x, y)
    assert GRAPH_BREAK_REASON in str(info.value) and "torch.library custom op" in str(info.value)


def test_an_error_in_a_launch_in_a_compiled_function_is_tilecs(monkeypatch):
    # The launch runs outside the graph, as in eager code: the error is tilec's own, its
    # traceback without tilec's frames.
    monkeypatch.setattr(config, "interpret", True)

    @tilec.jit
    def bad_kernel(x_ptr, n):
        tl.store(x_ptr + tl.arange(0, n), 1.0)

    def f(x):
        bad_kernel[(1,)](x, x.numel())
        return x + 1

    with pytest.raises(tilec.CompilationError, match="'n' is a parameter of bad_kernel") as info:
        torch.compile(f, backend="eager")(torch.randn(16))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert not [frame for frame in frames if frame.filename.startswith(TILEC_DIR)], frames


# ============================================================================= custom ops


@torch.library.custom_op("tilec_tests::scaled_add", mutates_args=())
def scaled_add_op(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return scaled_add(x, y, alpha)


@scaled_add_op.register_fake
def _(x, y, alpha):
    return torch.empty_like(x)


@torch.library.custom_op("tilec_tests::scaled_add_into", mutates_args=("out",))
def scaled_add_into_op(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, alpha: float) -> None:
    n = x.numel()
    scaled_add_kernel[(tilec.cdiv(n, 128),)](x, y, out, n, alpha, BLOCK=128)


@pytest.mark.parametrize("compiler_backend", ["eager", "aot_eager"])
def test_a_kernel_registered_as_a_custom_op_stays_in_the_graph(backend, compiler_backend):
    def f(x, y):
        z = scaled_add_op(x * 2, y, 0.25) + 1
        out = torch.full_like(z, float("nan"))
        scaled_add_into_op(z, y, out, -2.0)
        return out.sin()

    x, y = inputs(backend, 513)
    explanation = torch._dynamo.explain(f)(x, y)
    assert (explanation.graph_count, explanation.graph_break_count) == (1, 0), explanation.break_reasons
    compiled = torch.compile(f, backend=compiler_backend, fullgraph=True)
    expected = reference(reference(x * 2, y, 0.25) + 1, y, -2.0).sin()
    for _ in range(2):
        torch.testing.assert_close(compiled(x, y), expected)


# ============================================================================= torch stays optional


def test_launching_kernels_does_not_import_torch(tmp_path):
    program = textwrap.dedent("""
        import sys
        import numpy as np
        import tilec
        import tilec.language as tl

        @tilec.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 2.0)

        x = np.zeros(16, np.float32)
        k[(tilec.cdiv(16, 16),)](x, BLOCK=16)
        assert (x == 2).all()
        print("torch" in sys.modules)
    """)
    env = {key: value for key, value in os.environ.items() if not key.startswith("TILEC_")}
    env.update(TILEC_INTERPRET="1", TILEC_CACHE_DIR=str(tmp_path / "cache"))
    (tmp_path / "no_torch.py").write_text(program)
    result = subprocess.run([sys.executable, str(tmp_path / "no_torch.py")], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
