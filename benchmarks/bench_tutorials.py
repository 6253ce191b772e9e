"""Triton's own tutorials (01-11) run side by side on tilec and on Triton.

    python benchmarks/bench_tutorials.py                 # every tutorial, on the GPU
    python benchmarks/bench_tutorials.py --only 06,09    # some of them
    python benchmarks/bench_tutorials.py --quick         # one small shape per variant
    python benchmarks/bench_tutorials.py --variant 'bwd' # variants whose name matches a regex
    python benchmarks/bench_tutorials.py --shape '^8192' # shapes ("8192x8192x512") matching a regex
    python benchmarks/bench_tutorials.py --only 09 --per-config   # every autotune config, one row each,
                                                                  # with both kernels' registers/spills/smem
    python benchmarks/bench_tutorials.py --interpret     # tilec only, NumPy interpreter, CPU tensors
    python benchmarks/bench_tutorials.py --compile-only sm_90   # tilec only: compile every kernel, launch none

The tutorials are not in this repository: `.triton-tutorials/` at the repository root
holds them as Triton publishes them (see its README.txt), or give another folder as the
first argument.

Each tutorial file is loaded twice as a module, untouched on disk:

- as Triton: its own source;
- as tilec: the same source with its imports of the language pointed at tilec
  (`import triton` -> `import tilec as triton`, `triton.language[...]`, `triton.runtime`,
  `triton.testing`, `triton.tools.tensor_descriptor` -> their `tilec.` counterparts).
  Host-side helpers that are not part of the language (`triton.profiler`, `triton._C`'s
  cuBLAS binding, `triton.tools.mxfp`) still come from Triton when it is installed.

The tutorials do their demonstrations at module level (tensors made, kernels launched,
results printed, benchmarks plotted). Loading keeps only what defines the program, by
rewriting the module's syntax tree: imports, functions and classes (kernels, host
wrappers, autotuning configs), and the module-level assignments and `if`/`try` blocks
those need (device properties, config lists, the cuBLAS handle). Statements that nothing
kept reads, bare calls, loops, asserts, the `__main__` block, and functions decorated as
benchmarks (`perf_report`) or pytest tests are dropped. Kept statements run one by one,
so a statement that fails (a kernel tilec refuses at decoration time, say) is recorded
and the rest of the module still loads; a variant that needs what failed reports it.
An import of an optional package that is missing (pytest, tabulate, apex, proton) binds
a placeholder that raises only when used.

Then every variant a tutorial exposes calls the tutorial's own host wrapper (its
`matmul`, `softmax`, `_attention.apply`, ...) on the same inputs for both, checks the
result against torch with the tutorial's tolerance, records the first call's time
(compilation and autotuning included: both kernel caches start empty unless
--warm-cache) and times later calls with one timer for both (`tilec.testing.do_bench`,
median, L2 flushed before each call). Checks where the tutorial gives no tolerance, or
one that cannot fail: 01 and 11 (fp32 additions) must be exact, 02, 04 and 07 use
`torch.allclose`'s defaults; fp8 outputs of 09 get rtol=0.125 (one e4m3 step) beside the
tutorial's atol=1.0. References are computed in fp32.

Where a tutorial's wrapper cannot be timed as it is, its own benchmark's way is used:
08 launches through its `triton_perf_fn` / `triton_tma_perf_fn` with the address tables
made once (its wrappers make new address tensors at every call, and Triton's autotuner
keys on those tensors by identity: every call would autotune again). 07 launches its
kernel as its module-level code does (it has no wrapper), and also with the
`extern_libs=` launch option its second half shows, pointed at each backend's own
libdevice.

Variants that need another GPU than the one present are reported as skipped (10 runs
only on Blackwell; on other GPUs, and without a GPU, its kernels are compiled for
sm_100a by tilec instead). A variant that raises is reported with the first lines of
its exception; the table goes on.

Without a GPU: --interpret runs the tilec side in the interpreter on tiny shapes, and
--compile-only TARGET compiles, for TARGET, every kernel and every autotuning config the
variants would launch at the GPU run's shapes (a config out of shared memory or failing a
`tl.static_assert` is noted, as Triton's autotuner skips it too; kernels that spill are
noted). Both answer torch.cuda's questions about the GPU as an H100 (or a B200 for
sm_100) would.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import math
import os
import re
import symtable
import sys
import tempfile
import time
import traceback
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import have_triton  # noqa: E402
from configs import autotuned, launched_configs, only_config, resources  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FOLDER = os.path.join(REPO, ".triton-tutorials")


# =============================================================================== loading a tutorial

# Modules of the language: the tilec variant takes them from tilec. Every other import
# of a `triton` module (a host-side helper) is left to Triton.
LANGUAGE_MODULES = ("triton", "triton.language", "triton.runtime", "triton.testing", "triton.tools",
                    "triton.tools.tensor_descriptor")


def is_language_module(name: str) -> bool:
    return name in LANGUAGE_MODULES or name.startswith(("triton.language.", "triton.runtime."))


def tilec_module_name(name: str) -> str:
    return "tilec" + name[len("triton"):]


class Unavailable:
    """Bound where an optional import failed; using it raises the import's error."""

    def __init__(self, name: str, error: BaseException):
        self._name, self._error = name, error

    def __getattr__(self, attribute: str):
        raise ImportError(f"{self._name} could not be imported here ({self._error})")

    def __call__(self, *args, **kwargs):
        raise ImportError(f"{self._name} could not be imported here ({self._error})")


def _guarded(node: ast.stmt, bound: list[str], module: str) -> ast.stmt:
    """`node` (an import) wrapped so that an ImportError binds placeholders instead (none
    for `from module import *`, whose names are not known)."""
    handler = [ast.parse(f"{name} = __unavailable__({module!r}, __import_error__)").body[0]
               for name in bound if name != "*"] or [ast.Pass()]
    guarded = ast.Try(body=[node], handlers=[ast.ExceptHandler(type=ast.Name("ImportError", ast.Load()),
                                                               name="__import_error__", body=handler)],
                      orelse=[], finalbody=[])
    for child in ast.walk(guarded):
        ast.copy_location(child, node)
    return guarded


class ImportRewriter(ast.NodeTransformer):
    """Points the language imports at tilec (for the tilec variant) and guards optional
    imports (both variants)."""

    def __init__(self, to_tilec: bool):
        self.to_tilec = to_tilec

    def _target(self, name: str) -> tuple[str, bool]:
        """(the module to import, whether it is required)."""
        if name in ("__future__", "torch") or name.startswith("torch."):  # a __future__ import stays first
            return name, True
        if is_language_module(name):
            return (tilec_module_name(name) if self.to_tilec else name), True
        return name, False

    def visit_Import(self, node: ast.Import):
        statements = []
        for alias in node.names:
            target, required = self._target(alias.name)
            if alias.asname is None and target != alias.name:
                # `import triton[.x]` binds `triton`: import tilec.x, then bind the name to tilec.
                new = [ast.Import(names=[ast.alias(target)])] if "." in target else []
                new.append(ast.Import(names=[ast.alias("tilec", "triton")]))
                bound = ["triton"]
            else:
                new = [ast.Import(names=[ast.alias(target, alias.asname)])]
                bound = [alias.asname or alias.name.split(".")[0]]
            for statement in new:
                ast.copy_location(statement, node)
            if required:
                statements.extend(new)
            else:
                statements.extend(_guarded(statement, bound, alias.name) for statement in new)
        return statements

    def visit_ImportFrom(self, node: ast.ImportFrom):
        if node.level or node.module is None:
            return node
        target, required = self._target(node.module)
        new = ast.copy_location(ast.ImportFrom(module=target, names=node.names, level=0), node)
        if required:
            return new
        return _guarded(new, [a.asname or a.name for a in node.names], node.module)


def _is_main_guard(node: ast.stmt) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def _is_benchmark_or_test(node: ast.stmt) -> bool:
    """A function decorated as a benchmark (`perf_report`) or a pytest test."""
    for decorator in getattr(node, "decorator_list", []):
        text = ast.unparse(decorator)
        if "perf_report" in text or text.startswith("pytest."):
            return True
    return False


def _bound_names(node: ast.stmt) -> set[str]:
    names = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in child.names)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
    return names


def _loaded_names(nodes: list[ast.AST]) -> set[str]:
    return {child.id for node in nodes for child in ast.walk(node)
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load)}


def _global_reads(table: symtable.SymbolTable) -> set[str]:
    """Names a function (or class) body and everything nested in it read from the module."""
    names = {s.get_name() for s in table.get_symbols() if s.is_referenced() and s.is_global()}
    for child in table.get_children():
        names |= _global_reads(child)
    return names


def _definition_time_nodes(node: ast.stmt) -> list[ast.AST]:
    """What a def or class evaluates when it is defined: decorators, defaults, bases."""
    parts: list[ast.AST] = list(node.decorator_list)
    if isinstance(node, ast.ClassDef):
        parts += node.bases + [k.value for k in node.keywords]
    else:
        parts += [d for d in node.args.defaults + node.args.kw_defaults if d is not None]
        parts += [a.annotation for a in node.args.args + node.args.kwonlyargs if a.annotation is not None]
    return parts


def strip_module(source: str, path: str) -> list[ast.stmt]:
    """The module-level statements of a tutorial that define its program (see the module
    docstring), in order, with their line numbers."""
    tree = ast.parse(source, path)
    tables = {(t.get_name(), t.get_lineno()): t for t in symtable.symtable(source, path, "exec").get_children()}
    body = tree.body
    keep = [False] * len(body)
    read_by_functions: set[str] = set()
    for i, node in enumerate(body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep[i] = True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not _is_benchmark_or_test(node):
            keep[i] = True
            table = tables.get((node.name, node.lineno)) or next(
                (t for (name, _), t in tables.items() if name == node.name), None)
            if table is not None:
                read_by_functions |= _global_reads(table)
    # Backwards: a binding statement stays when a function reads one of its names, or a
    # statement kept after it does at module level.
    read_after: set[str] = set()
    for i in reversed(range(len(body))):
        node = body[i]
        if keep[i]:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                read_after |= _loaded_names(_definition_time_nodes(node))
            continue
        if _is_main_guard(node) or not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If, ast.Try)):
            continue
        if _bound_names(node) & (read_by_functions | read_after):
            keep[i] = True
            read_after |= _loaded_names([node])
    return [node for node, kept in zip(body, keep) if kept]


@dataclass
class Tutorial:
    number: str           # "06"
    path: str
    backend: str          # "tilec" or "triton"
    module: types.ModuleType | None = None
    load_errors: list[str] = field(default_factory=list)  # "line N: <exception>" of each statement that failed


def load_tutorial(path: str, backend: str) -> Tutorial:
    number = os.path.basename(path)[:2]
    tutorial = Tutorial(number, path, backend)
    with open(path) as f:
        source = f.read()
    statements = strip_module(source, path)
    rewriter = ImportRewriter(to_tilec=backend == "tilec")
    name = f"tutorial_{backend}_{os.path.splitext(os.path.basename(path))[0].replace('-', '_')}"
    module = types.ModuleType(name)
    module.__file__ = path
    module.__dict__.update(__unavailable__=Unavailable, __tutorial_backend__=backend)
    sys.modules[name] = module
    for statement in statements:
        rewritten = rewriter.visit(statement)
        for node in rewritten if isinstance(rewritten, list) else [rewritten]:
            code = compile(ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[])), path, "exec")
            try:
                exec(code, module.__dict__)
            except Exception as error:  # recorded; the variants that need it say so
                tutorial.load_errors.append(f"line {node.lineno}: {first_lines(error, 2)}")
    tutorial.module = module
    return tutorial


# =============================================================================== variants

@dataclass(frozen=True)
class Hardware:
    mode: str                  # "gpu", "interpret" or "compile"
    capability: tuple | None   # of the GPU present, or the one pretended without one
    target: str | None = None  # --compile-only's target

    @property
    def device(self) -> str:
        return "cuda" if self.mode == "gpu" else "cpu"

    def at_least(self, major: int, minor: int = 0) -> bool:
        return self.capability is not None and tuple(self.capability) >= (major, minor)

    def is_major(self, major: int) -> bool:
        return self.capability is not None and self.capability[0] == major


@dataclass
class Case:
    """One variant of a tutorial at one shape.

    `inputs()` makes the inputs both backends share. `call(module, inputs)` prepares a
    run with that backend's module and returns the callable to run and time; its result
    goes to `check(result, inputs, module)`, which returns None when it is right, else
    what is wrong. `skip(hardware)` returns why this GPU cannot run it, or None.
    `tilec_only`: a compile check, no Triton side."""
    tutorial: str
    variant: str
    shape: str
    inputs: Callable[[], dict]
    call: Callable[[types.ModuleType, dict], Callable[[], Any]]
    check: Callable[[Any, dict, types.ModuleType], str | None] | None = None
    skip: Callable[[Hardware], str | None] = lambda hardware: None
    tilec_only: bool = False


def compare(actual, expected, atol: float, rtol: float, what: str = "") -> str | None:
    """None when |actual - expected| <= atol + rtol * |expected| everywhere."""
    import torch
    actual = actual.detach().float().to(expected.device)
    expected = expected.detach().float()
    if actual.shape != expected.shape:
        return f"{what}shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    error = (actual - expected).abs()
    bad = ~(error <= atol + rtol * expected.abs())  # NaN counts as bad
    if not bool(bad.any()):
        return None
    index = tuple(int(i) for i in torch.nonzero(bad)[0])
    return (f"{what}{int(bad.sum())} of {bad.numel()} elements off (atol={atol}, rtol={rtol}); "
            f"first at {index}: {float(actual[index]):.6g} vs {float(expected[index]):.6g}; "
            f"max abs error {float(torch.nan_to_num(error, nan=math.inf).max()):.4g}")


class Plan:
    """Shapes by mode: the default ones or --quick's one small shape (on the GPU, and for
    --compile-only, which so compiles what a GPU run would), or the interpreter's tiny one."""

    def __init__(self, hardware: Hardware, quick: bool):
        self.hardware, self.quick = hardware, quick

    def shapes(self, default: list, quick: list, tiny: list) -> list:
        if self.hardware.mode == "interpret":
            return tiny
        return quick if self.quick else default


def _generator(seed: int = 0):
    import torch
    torch.manual_seed(seed)


def _backend(module: types.ModuleType) -> str:
    return module.__tutorial_backend__


# ----------------------------------------------------------------------------- 01 vector add

def cases_01(plan: Plan) -> Iterator[Case]:
    import torch
    device = plan.hardware.device
    for n in plan.shapes([98432, 1 << 24], [98432], [4099]):
        def inputs(n=n):
            _generator()
            return {"x": torch.rand(n, device=device), "y": torch.rand(n, device=device)}
        yield Case("01", "add fp32", f"n={n}", inputs,
                   call=lambda mod, a: lambda: mod.add(a["x"], a["y"]),
                   check=lambda out, a, mod: compare(out, a["x"] + a["y"], atol=0, rtol=0))


# ----------------------------------------------------------------------------- 02 fused softmax

def cases_02(plan: Plan) -> Iterator[Case]:
    import torch
    device = plan.hardware.device
    # 4096x4096 and 8192x8192: the shapes of issue 25's table (0.08 and 0.41 there).
    for rows, cols in plan.shapes([(1823, 781), (4096, 4096), (4096, 8192), (8192, 8192)], [(1823, 781)], [(67, 200)]):
        def inputs(rows=rows, cols=cols):
            _generator()
            return {"x": torch.randn(rows, cols, device=device)}
        yield Case("02", "softmax fp32", f"{rows}x{cols}", inputs,
                   call=lambda mod, a: lambda: mod.softmax(a["x"]),
                   check=lambda out, a, mod: compare(out, torch.softmax(a["x"].double(), dim=1), atol=1e-8, rtol=1e-5))


# ----------------------------------------------------------------------------- 03 matmul

def cases_03(plan: Plan) -> Iterator[Case]:
    import torch
    device = plan.hardware.device
    fp8_reason = lambda hw: None if hw.at_least(8, 9) else "fp8 dot needs sm_89 or newer"
    for m, n, k in plan.shapes([(512, 512, 512), (4096, 4096, 4096)], [(512, 512, 512)], [(64, 64, 64)]):
        shape = f"{m}x{n}x{k}"

        def fp16_inputs(m=m, n=n, k=k):
            _generator()
            return {"a": torch.rand(m, k, device=device, dtype=torch.float16) - 0.5,
                    "b": torch.rand(k, n, device=device, dtype=torch.float16) - 0.5}

        def reference(a, activation=""):
            c = a["a"].float() @ a["b"].float()
            return torch.nn.functional.leaky_relu(c, 0.01) if activation else c

        yield Case("03", "fp16", shape, fp16_inputs,
                   call=lambda mod, a: lambda: mod.matmul(a["a"], a["b"]),
                   check=lambda out, a, mod: compare(out, reference(a), atol=1e-2, rtol=0))
        yield Case("03", "fp16 leaky_relu", shape, fp16_inputs,
                   call=lambda mod, a: lambda: mod.matmul(a["a"], a["b"], activation="leaky_relu"),
                   check=lambda out, a, mod: compare(out, reference(a, "leaky_relu"), atol=1e-2, rtol=0))

        def fp8_inputs(m=m, n=n, k=k):
            # As the tutorial: e5m2 operands, b transposed in memory (column-major).
            _generator()
            a = torch.randn(m, k, device=device, dtype=torch.float16).to(torch.float8_e5m2)
            b = torch.randn(n, k, device=device, dtype=torch.float16).T.to(torch.float8_e5m2)
            return {"a": a, "b": b}

        yield Case("03", "fp8 e5m2", shape, fp8_inputs, skip=fp8_reason,
                   call=lambda mod, a: lambda: mod.matmul(a["a"], a["b"]),
                   check=lambda out, a, mod: compare(out, (a["a"].float() @ a["b"].float()).half(), atol=0.125,
                                                     rtol=0))


# ----------------------------------------------------------------------------- 04 dropout

def cases_04(plan: Plan) -> Iterator[Case]:
    import torch
    device = plan.hardware.device
    p = 0.5
    for n in plan.shapes([1 << 20], [4096], [1000]):
        def inputs(n=n):
            _generator()
            x = torch.randn(n, device=device)
            return {"x": x, "keep": (torch.rand(n, device=device) > p).to(torch.int32)}

        yield Case("04", "dropout (mask)", f"n={n}", inputs,
                   call=lambda mod, a: lambda: mod.dropout(a["x"], x_keep=a["keep"], p=p),
                   check=lambda out, a, mod: compare(out, torch.where(a["keep"].bool(), a["x"] / (1 - p), 0.0),
                                                     atol=1e-8, rtol=1e-5))

        def check_seeded(out, a, mod):
            x = a["x"]
            kept = out != 0
            problem = compare(torch.where(kept, out, 0.0), torch.where(kept, x / (1 - p), 0.0), atol=1e-8, rtol=1e-5)
            if problem:
                return "kept values: " + problem
            fraction = float(kept.float().mean())
            if x.numel() >= 1000 and not 0.4 < fraction < 0.6:
                return f"kept {fraction:.3f} of the elements with p={p}"
            if not torch.equal(out, mod.seeded_dropout(x, p=p, seed=123)):
                return "the same seed gave another mask"
            if torch.equal(out, mod.seeded_dropout(x, p=p, seed=512)):
                return "another seed gave the same mask"
            return None

        yield Case("04", "seeded dropout (tl.rand)", f"n={n}", inputs,
                   call=lambda mod, a: lambda: mod.seeded_dropout(a["x"], p=p, seed=123), check=check_seeded)


# ----------------------------------------------------------------------------- 05 layer norm

def cases_05(plan: Plan) -> Iterator[Case]:
    import torch
    device = plan.hardware.device
    eps = 1e-5
    for m, n in plan.shapes([(1151, 8192), (4096, 8192)], [(1151, 8192)], [(19, 256)]):
        def inputs(m=m, n=n):
            _generator()
            weight = torch.rand(n, dtype=torch.float16, device=device)
            bias = torch.rand(n, dtype=torch.float16, device=device)
            x = -2.3 + 0.5 * torch.randn(m, n, dtype=torch.float16, device=device)
            dy = 0.1 * torch.randn_like(x)
            # The tutorial's own references: torch in fp16, forward and backward. (Its
            # kernels sum dw and db through fp16 partial buffers, as it is written; the
            # rounding of those alone reaches its 0.01 tolerance against an exact fp32 sum,
            # with the order in which programs take the lock, on either compiler: at 4096
            # rows both compilers' dw were off by up to 0.027 at |dw| ~ 4 on an H200. So
            # dw and db are also allowed 1% of their size.)
            leaves = [t.clone().requires_grad_() for t in (x, weight, bias)]
            y_ref = torch.nn.functional.layer_norm(leaves[0], (n,), leaves[1], leaves[2], eps)
            y_ref.backward(dy)
            return {"x": x, "w": weight, "b": bias, "dy": dy, "y_ref": y_ref.detach(),
                    "grads_ref": tuple(t.grad for t in leaves)}

        def forward(mod, a):
            return lambda: mod.LayerNorm.apply(a["x"], (a["x"].shape[-1],), a["w"], a["b"], eps)

        def backward(mod, a):
            leaves = [t.detach().clone().requires_grad_() for t in (a["x"], a["w"], a["b"])]
            y = mod.LayerNorm.apply(leaves[0], (leaves[0].shape[-1],), leaves[1], leaves[2], eps)

            def run():
                for t in leaves:
                    t.grad = None
                y.backward(a["dy"], retain_graph=True)
                return [t.grad for t in leaves]
            return run

        def check_backward(grads, a, mod):
            for name, got, want, rtol in zip(("dx", "dw", "db"), grads, a["grads_ref"], (0, 1e-2, 1e-2)):
                problem = compare(got, want, atol=1e-2, rtol=rtol, what=f"{name}: ")
                if problem:
                    return problem
            return None

        yield Case("05", "forward fp16", f"{m}x{n}", inputs, call=forward,
                   check=lambda out, a, mod: compare(out, a["y_ref"], atol=1e-2, rtol=0))
        yield Case("05", "backward fp16", f"{m}x{n}", inputs, call=backward, check=check_backward)


# ----------------------------------------------------------------------------- 06 fused attention

def _attention_reference(q, k, v, causal: bool, sm_scale: float, dout=None):
    """Attention in fp32, one (batch, head) at a time (the full score tensor of a large
    problem would not fit); with `dout`, also the gradients of q, k, v."""
    import torch
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    grads = [torch.empty(q.shape, dtype=torch.float32, device=q.device) for _ in range(3)] if dout is not None else None
    n = q.shape[2]
    mask = torch.tril(torch.ones(n, n, device=q.device, dtype=torch.bool)) if causal else None
    for z in range(q.shape[0]):
        for h in range(q.shape[1]):
            qi, ki, vi = (t[z, h].float().requires_grad_(dout is not None) for t in (q, k, v))
            scores = (qi @ ki.T) * sm_scale
            if causal:
                scores = scores.masked_fill(~mask, float("-inf"))
            oi = torch.softmax(scores, dim=-1) @ vi
            out[z, h] = oi.detach()
            if dout is not None:
                oi.backward(dout[z, h].float())
                for g, t in zip(grads, (qi, ki, vi)):
                    g[z, h] = t.grad
    return out, grads


def cases_06(plan: Plan) -> Iterator[Case]:
    import torch
    hw = plan.hardware
    device = hw.device
    sm_scale = 0.5
    needs_hopper = lambda hw: None if hw.at_least(9) else "the tutorial's descriptors need sm_90 or newer"
    for z, h, n in plan.shapes([(1, 2, 1024), (4, 32, 4096)], [(1, 2, 1024)], [(1, 1, 128)]):
        for head_dim in (64, 128):
            shape = f"Z{z} H{h} N{n} D{head_dim}"

            def inputs(z=z, h=h, n=n, head_dim=head_dim):
                _generator(20)
                q, k, v = (torch.empty((z, h, n, head_dim), dtype=torch.float16, device=device).normal_(0.0, 0.5)
                           for _ in range(3))
                return {"q": q, "k": k, "v": v}

            for causal in (False, True):
                tag = "causal" if causal else "full"
                # As the tutorial's benchmark: warp specialisation for the forward pass on
                # Blackwell, and on Hopper without the causal mask (there it also switches
                # the tutorial from host to in-kernel descriptors).
                ws_options = [False] + ([True] if hw.is_major(10) or (hw.is_major(9) and not causal) else [])
                for fp8 in (False, True):
                    for ws in ws_options:
                        def forward(mod, a, causal=causal, fp8=fp8, ws=ws):
                            q, k, v = a["q"], a["k"], a["v"]
                            if fp8:  # as the tutorial: e5m2, v transposed in memory
                                q, k = q.to(torch.float8_e5m2), k.to(torch.float8_e5m2)
                                v = v.permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2).to(torch.float8_e5m2)
                            return lambda: mod._attention.apply(q, k, v, causal, sm_scale, ws)

                        def check_forward(out, a, mod, causal=causal, fp8=fp8):
                            if "out_ref" not in a:
                                a["out_ref"] = _attention_reference(a["q"], a["k"], a["v"], causal, sm_scale)[0]
                            return compare(out.half(), a["out_ref"].half(), atol=3 if fp8 else 1e-2, rtol=0)

                        variant = f"fwd {'fp8' if fp8 else 'fp16'} {tag} ws={'on' if ws else 'off'}"
                        skip = (lambda hw: needs_hopper(hw) or (None if hw.at_least(8, 9) else "fp8 needs sm_89")) \
                            if fp8 else needs_hopper
                        yield Case("06", variant, shape, inputs, call=forward, check=check_forward, skip=skip)

                def backward(mod, a, causal=causal):
                    q, k, v = (a[name].detach().clone().requires_grad_() for name in "qkv")
                    _generator(21)
                    a["dout"] = torch.randn_like(q)
                    out = mod._attention.apply(q, k, v, causal, sm_scale, False)

                    def run():
                        for t in (q, k, v):
                            t.grad = None
                        out.backward(a["dout"], retain_graph=True)
                        return out, q.grad, k.grad, v.grad
                    return run

                def check_backward(result, a, mod, causal=causal):
                    if "backward_ref" not in a:  # the same dout for both backends (seeded)
                        out_ref, grads_ref = _attention_reference(a["q"], a["k"], a["v"], causal, sm_scale, a["dout"])
                        a["backward_ref"] = (out_ref, *grads_ref)
                    names = ("out", "dq", "dk", "dv")
                    for name, got, want in zip(names, result, a["backward_ref"]):
                        problem = compare(got.half(), want.half(), atol=1e-2, rtol=0, what=f"{name}: ")
                        if problem:
                            return problem
                    return None

                yield Case("06", f"bwd fp16 {tag}", shape, inputs, call=backward, check=check_backward,
                           skip=needs_hopper)


# ----------------------------------------------------------------------------- 07 libdevice

def _libdevice_path(module: types.ModuleType) -> str:
    """The backend's own libdevice, for the tutorial's `extern_libs` launch option."""
    if _backend(module) == "tilec":
        from tilec.backend import toolkit
        return toolkit.libdevice_path()
    import triton
    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "lib", "libdevice.10.bc")


def cases_07(plan: Plan) -> Iterator[Case]:
    import torch
    device = plan.hardware.device
    for n in plan.shapes([98432, 1 << 24], [98432], [5000]):
        def inputs(n=n):
            _generator()
            return {"x": torch.rand(n, device=device)}

        def launch(mod, a, extern: bool):
            x = a["x"]
            out = torch.zeros_like(x)
            grid = lambda meta: (math.ceil(x.numel() / meta["BLOCK_SIZE"]),)
            options = {"extern_libs": {"libdevice": _libdevice_path(mod)}} if extern else {}

            def run():
                mod.asin_kernel[grid](x, out, x.numel(), BLOCK_SIZE=1024, **options)
                return out
            return run

        check = lambda out, a, mod: compare(out, torch.asin(a["x"].double()), atol=1e-8, rtol=1e-5)
        yield Case("07", "libdevice.asin", f"n={n}", inputs, call=lambda mod, a: launch(mod, a, False), check=check)
        yield Case("07", "asin with extern_libs=", f"n={n}", inputs, call=lambda mod, a: launch(mod, a, True),
                   check=check)


# ----------------------------------------------------------------------------- 08 grouped gemm

def cases_08(plan: Plan) -> Iterator[Case]:
    import torch
    device = plan.hardware.device
    groups = plan.shapes([[(1024, 1024, 1024), (512, 512, 512), (256, 256, 256), (128, 128, 128)]],
                         [[(256, 256, 256), (128, 128, 128)]], [[(128, 128, 64), (128, 128, 128)]])
    for sizes in groups:
        shape = "+".join(f"{m}x{n}x{k}" for m, n, k in sizes)

        def inputs(sizes=sizes):
            _generator()
            a = [torch.rand(m, k, device=device, dtype=torch.float16) for m, n, k in sizes]
            b = [torch.rand(k, n, device=device, dtype=torch.float16) for m, n, k in sizes]
            return {"a": a, "b": b, "b_t": [t.T.contiguous() for t in b]}

        def check(out, a, mod):
            for i, (c, x, y) in enumerate(zip(out, a["a"], a["b"])):
                problem = compare(c, x.float() @ y.float(), atol=1e-2, rtol=1e-2, what=f"gemm {i}: ")
                if problem:
                    return problem
            return None

        def grouped(mod, a, tma: bool):
            # The tables of addresses, sizes and leading dimensions, made once, as the
            # tutorial's benchmark does: its wrappers make new address tensors at every
            # call, and Triton's autotuner keys on those tensors themselves (by identity),
            # so timing the wrappers would time a full autotuning on Triton at every call.
            b = a["b_t"] if tma else a["b"]
            c = [torch.empty(x.shape[0], y.shape[0] if tma else y.shape[1], device=device, dtype=torch.float16)
                 for x, y in zip(a["a"], b)]
            table = lambda values, dtype=None: torch.tensor(values, device=device, dtype=dtype)
            pointers = [table([t.data_ptr() for t in ts]) for ts in (a["a"], b, c)]
            sizes = table([d for x, y in zip(a["a"], b) for d in (x.shape[0], y.shape[0] if tma else y.shape[1],
                                                                   x.shape[1])], torch.int32)
            lds = table([d for x, y, z in zip(a["a"], b, c) for d in (x.stride(0), y.stride(0), z.stride(0))],
                        torch.int32)
            if tma:
                mod.triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device=device,
                                                                                    dtype=torch.int8))
                run = lambda: mod.triton_tma_perf_fn(*pointers, sizes, lds, len(c), dtype=torch.float16)
            else:
                run = lambda: mod.triton_perf_fn(*pointers, sizes, lds, len(c))
            return lambda: (run(), c)[1]

        yield Case("08", "grouped fp16", shape, inputs, call=lambda mod, a: grouped(mod, a, False), check=check)
        yield Case("08", "grouped fp16 TMA (in-kernel descriptors)", shape, inputs,
                   call=lambda mod, a: grouped(mod, a, True), check=check,
                   skip=lambda hw: None if hw.at_least(9) else "TMA needs sm_90 or newer")


# ----------------------------------------------------------------------------- 09 persistent matmul

def cases_09(plan: Plan) -> Iterator[Case]:
    import torch
    hw = plan.hardware
    device = hw.device
    # (name, wrapper, takes b transposed, warp_specialize or None, needs TMA)
    kernels = [("naive", "matmul", False, None, False), ("persistent", "matmul_persistent", False, None, False)]
    for ws in (False, True):
        kernels += [("tma", "matmul_tma", True, ws, True), ("tma_persistent", "matmul_tma_persistent", True, ws, True),
                    ("descriptor_persistent", "matmul_descriptor_persistent", True, ws, True)]
    # 8192^3: the shape of issue 25's table (matmul_persistent 0.83 there).
    for m, n, k in plan.shapes([(32, 32, 32), (8192, 8192, 512), (8192, 8192, 8192)], [(512, 512, 512)],
                               [(32, 32, 32)]):
        for dtype_name in ("fp16", "fp8"):
            def inputs(m=m, n=n, k=k, dtype_name=dtype_name):
                _generator()
                dtype = torch.float16 if dtype_name == "fp16" else torch.float8_e4m3fn
                a = torch.randn(m, k, device=device, dtype=torch.float16).to(dtype)
                b_t = torch.randn(k, n, device=device, dtype=torch.float16).to(dtype).T.contiguous()
                return {"a": a, "b_t": b_t}

            def check(out, a, mod, dtype_name=dtype_name):
                expected = (a["a"].float() @ a["b_t"].float().T).to(out.dtype).float()
                return compare(out.float(), expected, atol=1.0, rtol=0 if dtype_name == "fp16" else 0.125)

            for name, wrapper, transposed, ws, tma in kernels:
                def call(mod, a, wrapper=wrapper, transposed=transposed, ws=ws):
                    fn = getattr(mod, wrapper)
                    b = a["b_t"] if transposed else a["b_t"].T
                    return (lambda: fn(a["a"], b)) if ws is None else (lambda: fn(a["a"], b, ws))

                def skip(hw, name=name, ws=ws, tma=tma, dtype_name=dtype_name):
                    if tma and not hw.at_least(9):
                        return "TMA needs sm_90 or newer"
                    if dtype_name == "fp8" and not hw.at_least(8, 9):
                        return "fp8 needs sm_89 or newer"
                    if ws and hw.is_major(9) and name != "descriptor_persistent":
                        return "the tutorial skips host-descriptor warp specialisation on Hopper"
                    return None

                variant = f"{name} {dtype_name}" + ("" if ws is None else f" ws={'on' if ws else 'off'}")
                yield Case("09", variant, f"{m}x{n}x{k}", inputs, call=call, check=check, skip=skip)


# ----------------------------------------------------------------------------- 10 block-scaled matmul

BLOCK_SCALED_FORMATS = ("nvfp4", "mxfp4", "mxfp8", "mixed")


def _block_scaled_arguments(module: types.ModuleType, fmt: str, m: int, n: int, k: int) -> tuple:
    """The kernel's arguments for one format, on the CPU (their contents do not matter to a
    compile): operands packed as the tutorial packs them, scales in its 5-D layout."""
    import torch
    descriptor = module.TensorDescriptor
    fp4_a = fmt in ("nvfp4", "mxfp4")
    fp4_b = fmt != "mxfp8"
    block_m, block_n, block_k = 128, 256, 256 if "fp4" in fmt else 128
    vec = 16 if fmt == "nvfp4" else 32
    per_byte_a, per_byte_b = (2 if fp4_a else 1), (2 if fp4_b else 1)
    a = torch.zeros(m, k // per_byte_a, dtype=torch.uint8 if fp4_a else torch.float8_e4m3fn)
    b = torch.zeros(n, k // per_byte_b, dtype=torch.uint8 if fp4_b else torch.float8_e4m3fn)
    scale_dtype = torch.float8_e4m3fn if fmt == "nvfp4" else torch.uint8
    rep_m, rep_n, rep_k = block_m // 128, block_n // 128, block_k // vec // 4
    a_scale = torch.zeros(1, m // 128, k // vec // 4, 2, 256, dtype=scale_dtype)
    b_scale = torch.zeros(1, n // 128, k // vec // 4, 2, 256, dtype=scale_dtype)
    c = torch.empty(m, n, dtype=torch.float16)
    return (descriptor.from_tensor(a, [block_m, block_k // per_byte_a]),
            descriptor.from_tensor(a_scale, [1, rep_m, rep_k, 2, 256]),
            descriptor.from_tensor(b, [block_n, block_k // per_byte_b]),
            descriptor.from_tensor(b_scale, [1, rep_n, rep_k, 2, 256]),
            descriptor.from_tensor(c, [block_m, block_n]),
            m, n, k, 1, per_byte_a, per_byte_b, vec, block_m, block_n, block_k, rep_m, rep_n, rep_k, 4)


def cases_10(plan: Plan) -> Iterator[Case]:
    hw = plan.hardware
    for m, n, k in plan.shapes([(8192, 8192, 8192)], [(1024, 1024, 1024)], [(256, 256, 512)]):
        for fmt in BLOCK_SCALED_FORMATS:
            def run(mod, a, fmt=fmt, m=m, n=n, k=k):
                (a_desc, a_scale, b_desc, b_scale, rep_m, rep_n, rep_k, configs,
                 a["reference"]) = mod.initialize_block_scaled(m, n, k, fmt, compute_reference=True)
                import torch
                return lambda: mod.block_scaled_matmul(a_desc, a_scale, b_desc, b_scale, torch.float16, m, n, k,
                                                       rep_m, rep_n, rep_k, configs)

            yield Case("10", fmt, f"{m}x{n}x{k}", dict, call=run,
                       check=lambda out, a, mod: compare(out, a["reference"], atol=1e-3, rtol=1e-3),
                       skip=lambda hw: None if hw.mode == "gpu" and hw.is_major(10) else "needs Blackwell (sm_100)")

            def compile_sm100(mod, a, fmt=fmt, m=m, n=n, k=k):
                arguments = _block_scaled_arguments(mod, fmt, m, n, k)
                return lambda: mod.block_scaled_matmul_kernel.warmup(*arguments, grid=(1,), target="sm_100a")

            yield Case("10", f"{fmt}: tilec compiles for sm_100a", f"{m}x{n}x{k}", dict, call=compile_sm100,
                       tilec_only=True,
                       skip=lambda hw: "runs on this Blackwell GPU instead" if hw.mode == "gpu" and hw.is_major(10)
                       else None)


# ----------------------------------------------------------------------------- 11 programmatic dependent launch

def cases_11(plan: Plan) -> Iterator[Case]:
    import torch
    device = plan.hardware.device
    for n in plan.shapes([1 << 20, 1 << 25], [1 << 20], [1024]):
        def inputs(n=n):
            _generator()
            return {"x": torch.rand(n, device=device), "y": torch.rand(n, device=device)}

        for pdl in (True, False):
            yield Case("11", f"add PDL {'on' if pdl else 'off'}", f"n={n}", inputs,
                       call=lambda mod, a, pdl=pdl: lambda: mod.add(a["x"], a["y"], launch_pdl=pdl),
                       check=lambda out, a, mod: compare(out, a["x"] + a["y"], atol=0, rtol=0),
                       skip=lambda hw: None if hw.at_least(9) else "PDL needs sm_90 or newer")


CASES = {"01": cases_01, "02": cases_02, "03": cases_03, "04": cases_04, "05": cases_05, "06": cases_06,
         "07": cases_07, "08": cases_08, "09": cases_09, "10": cases_10, "11": cases_11}


# =============================================================================== running

@dataclass
class Outcome:
    status: str = "-"          # ok, FAIL (wrong result), ERR (raised), skip, compiled, n/a
    ms: float | None = None
    first_s: float | None = None
    detail: str = ""
    output: object = None      # what the call returned, kept only to compare with the other compiler's


def _tensors(value) -> list:
    """The tensors of a call's result, in order (a tensor, or nested lists/tuples of them)."""
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return [value] if hasattr(value, "detach") else []


def same_outputs(mine: "Outcome", theirs: "Outcome") -> bool:
    """Whether both compilers returned the same values (to fp16 rounding): when both fail
    the tutorial's check this way, the tutorial itself computes something else than torch."""
    import torch
    a, b = _tensors(mine.output), _tensors(theirs.output)
    if not a or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape:
            return False
        x, y = x.detach().float(), y.detach().float().to(x.device)
        if not torch.allclose(x, y, atol=1e-3, rtol=1e-3, equal_nan=True):
            return False
    return True


def first_lines(error: BaseException, count: int = 4) -> str:
    lines = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()
    text = " | ".join(line.strip() for line in lines[:count] if line.strip())
    return text[:600]


def where_raised(error: BaseException) -> str:
    """The innermost frame of the traceback that is in tilec, Triton or a tutorial."""
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        if "/tilec/" in frame.filename or "/triton/" in frame.filename or "tutorials" in frame.filename:
            return f"{os.path.relpath(frame.filename, REPO) if frame.filename.startswith(REPO) else frame.filename}" \
                   f":{frame.lineno} in {frame.name}"
    return ""


# Errors after which the CUDA context is unusable: every later call would fail too.
GPU_FAULT = re.compile(r"illegal memory access|illegal instruction|misaligned address|unspecified launch failure|"
                       r"CUDA_ERROR_(ILLEGAL|MISALIGNED|LAUNCH_FAILED|HARDWARE)", re.IGNORECASE)


def synchronize(hardware: Hardware) -> None:
    if hardware.mode == "gpu":
        import torch
        torch.cuda.synchronize()


def run_case(case: Case, tutorial: Tutorial, inputs: dict, hardware: Hardware, time_it: bool) -> Outcome:
    module = tutorial.module
    COMPILE_NOTES.clear()
    try:
        fn = case.call(module, inputs)
        start = time.perf_counter()
        result = fn()
        synchronize(hardware)
        first = time.perf_counter() - start
    except Exception as error:
        detail = first_lines(error)
        place = where_raised(error)
        if place:
            detail += f"  [{place}]"
        if tutorial.load_errors and isinstance(error, (NameError, AttributeError)):
            detail += " -- statements that failed at load: " + "; ".join(tutorial.load_errors)
        return Outcome("ERR", detail=detail)
    if hardware.mode == "compile" or case.tilec_only:
        notes = "; ".join(dict.fromkeys(COMPILE_NOTES))
        COMPILE_NOTES.clear()
        return Outcome("compiled", first_s=first, detail=notes)
    problem = case.check(result, inputs, module) if case.check else None
    outcome = Outcome("FAIL" if problem else "ok", first_s=first, detail=problem or "",
                      output=result if problem else None)
    if time_it:
        from tilec.testing import do_bench
        try:
            outcome.ms = do_bench(fn, return_mode="median")
        except Exception as error:
            outcome.detail += f" (timing raised: {first_lines(error, 2)})"
    return outcome


# What --compile-only's autotuned kernels report beside "compiled": configs that failed as
# Triton's autotuner expects some to (filled by install_compile_only, read by run_case).
COMPILE_NOTES: list[str] = []


def _expected_config_failure(error: BaseException) -> bool:
    """Failures Triton's autotuner also takes as "this config cannot run here": too much
    shared memory or too many registers, and a failed tl.static_assert."""
    from tilec.errors import CompilationError, OutOfResources
    return isinstance(error, OutOfResources) or (isinstance(error, CompilationError)
                                                 and "static_assert failed" in str(error))


def install_compile_only(target: str, max_configs: int | None) -> None:
    """Makes every tilec launch a compile for `target` (kernel.warmup) and nothing more:
    an autotuned kernel compiles each config that survives pruning (or `max_configs` of
    them, spread over the list). It fails when a config fails otherwise than Triton's
    autotuner allows (out of resources, a failed static_assert), or when every one does."""
    from tilec.runtime import autotuner, jit, kernel

    def compile_instead(self, *args, grid, **kwargs):
        kwargs["target"] = target
        compiled = self.warmup(*args, grid=grid, **kwargs)
        if compiled.n_spills:  # worth a line: the GPU run will be slow
            options = {k: v for k, v in kwargs.items() if k != "target" and isinstance(v, (int, str))}
            COMPILE_NOTES.append(f"{compiled.name} {options}: {compiled.n_regs} registers, "
                                 f"{compiled.n_spills} bytes of spill stores")
        return compiled

    def compile_every_config(self, *args, grid, **kwargs):
        named = self._named(args, kwargs)
        configs = self.prune_configs(named, kwargs)
        if max_configs and len(configs) > max_configs:
            step = len(configs) / max_configs
            configs = [configs[int(i * step)] for i in range(max_configs)]
        expected, unexpected, compiled = [], [], []
        for config in configs:
            if config.pre_hook is not None:
                config.pre_hook({**named, **config.all_kwargs()})
            try:
                self.fn.run(*args, grid=grid, **self._with_config(kwargs, config))
            except Exception as error:
                (expected if _expected_config_failure(error) else unexpected).append((config, error))
            else:
                compiled.append(config)
        if unexpected or len(expected) == len(configs):
            config, error = (unexpected or expected)[0]
            raise RuntimeError(f"{len(unexpected) + len(expected)} of {len(configs)} configs failed; the first "
                               f"({config}): {first_lines(error, 3)}  [{where_raised(error)}]") from error
        if expected:
            COMPILE_NOTES.append(f"{self.__name__}: {len(expected)} of {len(configs)} configs cannot run on "
                                 f"{target} (as on Triton), e.g. ({expected[0][0]}): {first_lines(expected[0][1], 1)}")
        self.best_config = compiled[0]  # as after tuning: host code may read it (mamba's SSD ops do)

    jit.JITFunction.run = compile_instead
    autotuner.Autotuner.run = compile_every_config
    kernel.LaunchableKernel._launch = lambda self, grid, args, stream: None


def pretend_gpu(capability: tuple) -> None:
    """Without a GPU the tutorials still ask torch.cuda about it (capability, SM count):
    answer as the GPU being targeted would."""
    import torch
    torch.cuda.get_device_capability = lambda device=None: tuple(capability)
    torch.cuda.get_device_properties = lambda device=None: types.SimpleNamespace(
        multi_processor_count=132 if capability[0] == 9 else 148, name=f"(none: sm_{capability[0]}{capability[1]})",
        major=capability[0], minor=capability[1], total_memory=80 << 30)


def format_seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def _row_summary(mine: Outcome, theirs: Outcome) -> str:
    """One variant's result on one line, printed as soon as it is known."""
    ratio = f"{theirs.ms / mine.ms:.2f}x" if mine.ms and theirs.ms else "-"
    times = f"{mine.ms:.4f}/{theirs.ms:.4f} ms" if mine.ms and theirs.ms else ""
    first = f"first call {format_seconds(mine.first_s)}/{format_seconds(theirs.first_s)}"
    detail = f"; tilec: {mine.detail}" if mine.detail else ""
    return f"{mine.status}/{theirs.status} {times} Triton/tilec {ratio}, {first}{detail}"


def print_table(rows: list[tuple[Case, Outcome, Outcome]], hardware: Hardware) -> None:
    header = ("tutorial", "variant", "shape", "correct tilec/Triton", "ms tilec", "ms Triton", "Triton/tilec",
              "first call tilec/Triton")
    table = [header]
    for case, mine, theirs in rows:
        ratio = f"{theirs.ms / mine.ms:.2f}x" if mine.ms and theirs.ms else "-"
        table.append((case.tutorial, case.variant, case.shape, f"{mine.status}/{theirs.status}",
                      f"{mine.ms:.4f}" if mine.ms else "-", f"{theirs.ms:.4f}" if theirs.ms else "-", ratio,
                      f"{format_seconds(mine.first_s)}/{format_seconds(theirs.first_s)}"))
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    print()
    for i, row in enumerate(table):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * width for width in widths))
    details = [(case, backend, outcome) for case, mine, theirs in rows
               for backend, outcome in (("tilec", mine), ("Triton", theirs)) if outcome.detail]
    if details:
        print("\nDetails:")
        for case, backend, outcome in details:
            print(f"  {case.tutorial} {case.variant} [{case.shape}] {backend} {outcome.status}: {outcome.detail}")
    counts: dict[str, int] = {}
    for _, mine, _ in rows:
        counts[mine.status] = counts.get(mine.status, 0) + 1
    print("\ntilec: " + ", ".join(f"{count} {status}" for status, count in sorted(counts.items())))


def tutorial_files(folder: str, only: set[str] | None) -> dict[str, str]:
    found = {}
    for name in sorted(os.listdir(folder)):
        match = re.fullmatch(r"(\d\d)-[\w-]+\.py", name)
        if match and match.group(1) in CASES and (only is None or match.group(1) in only):
            found[match.group(1)] = os.path.join(folder, name)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=DEFAULT_FOLDER, help="the tutorials (default: %(default)s)")
    parser.add_argument("--only", help="tutorial numbers, comma-separated (06,09)")
    parser.add_argument("--variant", help="only variants whose name matches this regular expression")
    parser.add_argument("--shape", help="only shapes (as printed: 8192x8192x512) matching this regular expression")
    parser.add_argument("--quick", action="store_true", help="one small shape per variant")
    parser.add_argument("--per-config", action="store_true",
                        help="one row per config of each @autotune kernel a variant launches (the others autotuned "
                             "as usual), each through the tutorial's own wrapper")
    parser.add_argument("--interpret", action="store_true", help="tilec only, in the interpreter, on CPU tensors")
    parser.add_argument("--compile-only", metavar="TARGET",
                        help="tilec only: compile every kernel the variants launch for TARGET (sm_90, sm_100a), "
                             "launch none; no GPU needed")
    parser.add_argument("--max-configs", type=int, help="with --compile-only: at most this many configs per "
                                                        "autotuned kernel")
    parser.add_argument("--warm-cache", action="store_true",
                        help="keep the kernel caches (first calls then skip compiling what is cached)")
    args = parser.parse_args()
    if not os.path.isdir(args.folder):
        sys.exit(f"no tutorials folder at {args.folder}: see .triton-tutorials/README.txt")

    if args.interpret:
        os.environ["TILEC_INTERPRET"] = "1"
    if not args.warm_cache:
        cache = tempfile.mkdtemp(prefix="bench_tutorials_")
        os.environ["TILEC_CACHE_DIR"] = os.path.join(cache, "tilec")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    import torch

    if args.compile_only:
        digits = re.sub(r"\D", "", args.compile_only)  # sm_90 -> 90, sm_100a -> 100
        capability = (int(digits[:-1]), int(digits[-1]))
        hardware = Hardware("compile", capability, args.compile_only)
    elif args.interpret:
        hardware = Hardware("interpret", (9, 0))
    else:
        if not torch.cuda.is_available():
            sys.exit("no GPU: run with --interpret or --compile-only sm_90")
        hardware = Hardware("gpu", torch.cuda.get_device_capability())
    if hardware.mode != "gpu":
        pretend_gpu(hardware.capability)
    if hardware.mode == "compile":
        install_compile_only(hardware.target, args.max_configs)
    with_triton = hardware.mode == "gpu" and have_triton()
    if hardware.mode == "gpu" and not with_triton:
        print("Triton is not installed: tilec only")

    only = set(args.only.split(",")) if args.only else None
    files = tutorial_files(args.folder, only)
    plan = Plan(hardware, args.quick)
    device_name = torch.cuda.get_device_name() if hardware.mode == "gpu" else f"no GPU ({hardware.mode})"
    print(f"tutorials: {args.folder}\ndevice: {device_name}, sm_{''.join(map(str, hardware.capability))}")

    rows = []
    lost = None  # the case after which the CUDA context is unusable (a fault is sticky)
    for number, path in files.items():
        mine = load_tutorial(path, "tilec")
        theirs = load_tutorial(path, "triton") if with_triton else None
        for tutorial in filter(None, (mine, theirs)):
            for error in tutorial.load_errors:
                print(f"  {number} ({tutorial.backend}) statement failed at load, {error}")
        for case in CASES[number](plan):
            if args.variant and not re.search(args.variant, case.variant):
                continue
            if args.shape and not re.search(args.shape, case.shape):
                continue
            reason = case.skip(hardware)
            if lost is not None:
                rows.append((case, Outcome("-", detail=f"not run: the GPU faulted in {lost}"), Outcome("-")))
                continue
            if reason:
                rows.append((case, Outcome("skip", detail=reason), Outcome("skip")))
                continue
            print(f"  {number} {case.variant} [{case.shape}] ...", flush=True)
            try:
                inputs = case.inputs()
            except Exception as error:
                rows.append((case, Outcome("ERR", detail="making the inputs: " + first_lines(error)), Outcome("ERR")))
                continue
            time_it = hardware.mode == "gpu"
            if args.per_config:
                first = lambda: (case.call(mine.module, inputs)(), synchronize(hardware))  # noqa: E731
                for kernel, index, label in launched_configs(mine.module, [theirs.module] if theirs else [], first):
                    one = dataclasses.replace(case, variant=f"{case.variant} ({kernel}: {label})")
                    launched = {tutorial.backend: [] for tutorial in filter(None, (mine, theirs))}
                    with contextlib.ExitStack() as stack:
                        for tutorial in filter(None, (mine, theirs)):
                            stack.enter_context(only_config(autotuned(tutorial.module)[kernel], index,
                                                            launched[tutorial.backend]))
                        outcome = run_case(one, mine, inputs, hardware, time_it)
                        other = run_case(one, theirs, inputs, hardware, time_it) if theirs is not None else Outcome("n/a")
                    outcome.output = other.output = None
                    rows.append((one, outcome, other))
                    used = ", ".join(f"{backend} {resources(kernels[0])}" for backend, kernels in launched.items()
                                     if kernels and resources(kernels[0]) != "?/?/?")  # (the interpreter's)
                    print(f"    {kernel}: {label} -> {_row_summary(outcome, other)}"
                          + (f" [regs/spill/smem {used}]" if used else ""), flush=True)
                continue
            outcome = run_case(case, mine, inputs, hardware, time_it)
            other = run_case(case, theirs, inputs, hardware, time_it) \
                if theirs is not None and not case.tilec_only else Outcome("n/a" if not case.tilec_only else "-")
            if outcome.status == other.status == "FAIL" and same_outputs(outcome, other):
                outcome.detail = "the same values as Triton's (the tutorial's own error); " + outcome.detail
            outcome.output = other.output = None
            rows.append((case, outcome, other))
            print(f"    -> {_row_summary(outcome, other)}", flush=True)  # a run cut short still reports
            del inputs
            if any(GPU_FAULT.search(o.detail) for o in (outcome, other)):
                lost = f"{number} {case.variant} [{case.shape}]"
                print(f"  the GPU faulted in {lost}: later variants are not run (rerun them with --only/--variant)")
    print_table(rows, hardware)


if __name__ == "__main__":
    main()
