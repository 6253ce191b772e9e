"""Runs Triton's own language test suite against tilec, with only the imports swapped.

The test files are Triton's, kept verbatim (never committed) under `.triton-tests/`
(see its README.txt for where they came from). This script makes `import triton`,
`triton.language`, `triton.language.extra.*`, `triton.testing`,
`triton.tools.tensor_descriptor`, ... resolve to tilec's modules through an import hook,
adds a few small shims where the tests reach for Triton's private helpers
(`triton._internal_testing`, `triton.runtime.driver`, ...; listed in SHIMS below), and
runs pytest in-process over them.

    python benchmarks/triton_language_tests.py --interpret                 # every file, in the interpreter
    python benchmarks/triton_language_tests.py --interpret --sample 300 test_core.py
    python benchmarks/triton_language_tests.py --gpu                        # on an NVIDIA GPU (CUDA torch)
    python benchmarks/triton_language_tests.py --summarize                  # merge results into a summary

Each file (and each `--chunks` part of it) runs in its own child process and writes
`<results>/<file>.<part>.json`; `--summarize` (also done at the end of a run) merges them
into `<results>/summary.md` and `summary.json`: pass / fail / error / skip counts per file
and the failures grouped by their first error line.

Tests that inspect Triton's internals (the text of `asm['ttir']`/`ttgir`/`ptx`, knobs,
compiler hooks, hand-written TTGIR, line info) are "internal": INTERNAL lists each one
with its reason; they are deselected and left out of the pass rate. Tests that need a
CUDA device while running in the interpreter are counted as skipped.

Needs torch (CPU build for --interpret: `pip install torch`) and scipy (test_random.py).

Modes:
  --interpret  TILEC_INTERPRET=1 and TRITON_INTERPRET=1, tensors on the CPU (torch CPU).
  --gpu        compiled by tilec and launched on the GPU; tensors on "cuda".
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / ".triton-tests"
UNIT = TESTS / "python" / "test" / "unit"
LANGUAGE = UNIT / "language"
RESULTS = TESTS / "results"
# Triton's own pure-Python helpers the tests import (triton/tools/mxfp.py: torch code that
# builds MX-format test data), kept verbatim beside the tests; tilec has no counterpart.
TRITON_HELPERS = TESTS / "python"

# The files run by default: the language tests that exercise the language itself.
# Left out on purpose: test_line_info.py / test_lineinfo.py (debug line tables),
# test_pipeliner.py and test_warp_specialization.py (compiler passes), test_core_amd.py
# (AMD), test_compile_only.py (AOT compilation to named Triton stages).
DEFAULT_FILES = [
    "test_core.py", "test_standard.py", "test_random.py", "test_annotations.py", "test_block_pointer.py",
    "test_conversions.py", "test_decorator.py", "test_libdevice.py", "test_matmul.py", "test_module.py",
    "test_subprocess.py", "test_tensor_descriptor.py", "test_tuple.py", "test_compile_errors.py",
    "test_frontend.py", "test_reproducer.py",
]

# ---------------------------------------------------------------------------------------
# Tests about Triton's internals, left out of the rate: (file, test function) -> reason.
# ---------------------------------------------------------------------------------------
_TTGIR = "compiles hand-written TTGIR text with triton.compile(path)"
INTERNAL: dict[tuple[str, str], str] = {
    **{("test_core.py", name): _TTGIR for name in [
        "test_scan_layouts", "test_reduce_layouts", "test_store_op", "test_convert1d", "test_convert1d_bool",
        "test_chain_reduce", "test_convert2d", "test_local_load_store", "test_local_load_store_dot",
        "test_local_load_store_mma", "test_convert_mma2mma", "test_convert_warp_local", "test_gather_warp_shuffle"]},
    ("test_core.py", "test_constexpr"): "asserts on the arith.constant text of asm['ttir']",
    ("test_core.py", "test_poison_return"): "asserts ub.poison in asm['ttir'] and poison in asm['llir']",
    ("test_core.py", "test_tl_range_fuse"): "asserts tt.flatten in asm['ttir'] and one scf.for in asm['ttgir']",
    ("test_core.py", "test_tl_range_option_none"): "asserts on attribute names in asm['ttir']",
    ("test_core.py", "test_unroll_attr"): "counts tt.atomic_rmw lines of asm['ttir'] after unrolling",
    ("test_core.py", "test_trans_reshape"): "counts ttg.convert_layout in asm['ttgir']",
    ("test_core.py", "test_value_specialization"): "reads Triton's specialization object through @jit(repr=)",
    ("test_core.py", "test_override_arch"): "reads the cuda:NN target out of asm['ttgir']",
    ("test_core.py", "test_enable_fp_fusion"): "TRITON_DEFAULT_FP_FUSION knob and fma text of asm['ptx']",
    ("test_core.py", "test_maxnreg"): ".maxnreg text of asm['ptx']",
    ("test_core.py", "test_dot_mulbroadcasted"): "asserts tt.dot in asm['ttir'] and async_wait in asm['ttgir']",
    ("test_core.py", "test_optimize_thread_locality"): "counts tt.reduce in asm['ttgir'] (GPU only)",
    ("test_core.py", "test_side_effectful_reduction"): "debug-mode overflow sanitizer inside a combine fn (GPU only)",
    ("test_core.py", "test_side_effectful_reduction_2d"): "debug-mode overflow sanitizer inside a combine fn (GPU only)",
    ("test_core.py", "test_side_effectful_scan"): "debug-mode overflow sanitizer inside a combine fn (GPU only)",
    ("test_core.py", "test_load_scope_sem_coop_grid_cta_not_one"): "cooperative-grid launch option (sm90 clusters)",
    ("test_core.py", "test_load_scope_sem_coop_grid_cta_one"): "launch_cooperative_grid launch option",
    ("test_core.py", "test_ptx_cast"): "regression for Triton's own PTX codegen of casts",
    ("test_reproducer.py", "test_triton_reproducer_path"): "Triton's pass-manager reproducer knob",
    ("test_annotations.py", "test_int_annotation"): "asserts on argument types and casts in asm['ttir']",
    ("test_tuple.py", "test_passing_nested_tuple_with_constexpr_and_jit_hook"): "knobs.runtime.jit_cache_hook, preload",
    ("test_tuple.py", "test_aggregate_in_constexpr_declared_argument_is_not_lifted"): "Triton's binder and libtriton",
    ("test_tuple.py", "test_aggregate_arg_wrappers_are_interned"): "Triton's AggregateArg cache internals",
    ("test_tuple.py", "test_aggregate_arg_preload_round_trip"): "knobs.runtime.jit_cache_hook, preload",
    ("test_tuple.py", "test_aggregate_in_tuple_argument"): "counts entries of JITFunction.device_caches",
    ("test_tuple.py", "test_pure_constexpr_aggregate_keys_on_value"): "counts entries of JITFunction.device_caches",
}
# Whole files (or name patterns) that are internal.
INTERNAL_PATTERNS: list[tuple[str, str, str]] = [
    ("test_frontend.py", r"", "FileCheck over Triton's TTIR text and Triton's frontend internals"),
    ("test_compile_errors.py", r"test_.*(ttgir|ir|mlir).*", "inspects Triton IR text"),
    ("test_tensor_descriptor.py", r".*_ir$|.*ttgir.*|.*_ptx.*", "inspects Triton IR/PTX text"),
    ("test_matmul.py", r".*(tmem|lhs_in_tmem|blackwell|sm100|tcgen).*", "Blackwell-only tensor-memory paths"),
]

# Failures that are tilec's deliberate choices or that test something Triton itself no
# longer does: (file, regular expression over the test id, mode or "" for both, reason).
# These tests still run; one that fails is counted as "divergent" (left out of the rate,
# listed with its reason in the summary), one that passes as passed.
DIVERGENT: list[tuple[str, str, str, str]] = [
    ("test_random.py", r"test_randint\[.*-int64-", "",
     "expects Philox-4x64 numbers for int64 offsets (Triton before 3.6); Triton 3.6 (measured on an H100) and "
     "3.9 split 64-bit offsets into two 32-bit counter words, and so does tilec"),
    ("test_core.py", r"test_call\[.*noinline\]", "gpu",
     "asserts that Triton fails to compile a noinline call in a loop; tilec compiles and runs it correctly"),
    ("test_core.py", r"test_dtype_codegen", "",
     "asserts repr(tl.int8) == 'triton.language.int8'; tilec's dtypes name their own module"),
    ("test_core.py", r"test_dot\[.*-int8-int8-", "gpu",
     "looks for Triton's saturating int8 mma.sync (.satfinite) in the PTX; tilec's int32 accumulator wraps, "
     "as NumPy's and Triton's interpreter's do (documented in docs/language.md)"),
    ("test_core.py", r"test_tl_range_num_stages", "gpu",
     "counts Triton's cp.async.wait_group depth in the PTX; tilec's pipeliner waits differently"),
    ("test_tensor_descriptor.py", r"test_tensor_descriptor_reduce\[.*-(float16|bfloat16)-(min|max)\]", "interpret",
     "off CUDA, expects fp16/bf16 descriptor min/max refused (Triton's non-TMA fallback lacks them); tilec "
     "computes them on every path (compare-and-swap loops)"),
    ("test_subprocess.py", r"test_print\[(device_print_scalar|no_arg_print|print_no_arg)-", "gpu",
     "expects a scalar (or a message alone) printed by every thread of the program (128 lines); tilec prints each "
     "element once, by the thread that owns it (docs/debugging.md)"),
    ("test_subprocess.py", r"test_print\[static_print-", "gpu",
     "expects static_print to show a tensor as Triton's type text 'int32[constexpr[128]]'; tilec shows "
     "'tensor(int32[128])'"),
    ("test_subprocess.py", r"test_print\[(device_print|device_print_scalar)-float", "gpu",
     "expects floats printed as %f (six decimals, 1e-07 shows as 0.000000); tilec prints every digit (%.9g, "
     "%.17g for fp64; docs/debugging.md)"),
    ("test_compile_errors.py", r"test_min_dot_size", "",
     "expects dots with a dimension under 16 to be refused; tilec computes them (docs/language.md)"),
    ("test_compile_errors.py", r"test_fp8_support\[dtype4\]", "gpu",
     "expects a 'fp8e4b15 is deprecated' warning on sm_90; tilec converts fp8e4b15 exactly in software on every "
     "target (docs/language.md, fp8)"),
    ("test_compile_errors.py", r"test_fp8_support\[dtype[13]\]", "interpret",
     "expects triton.compile to accept AMD's fnuz fp8 formats under TRITON_INTERPRET; tilec.compile always "
     "compiles for an NVIDIA GPU, which refuses them as Triton's NVIDIA backend does (the interpreter runs them)"),
    ("test_tensor_descriptor.py", r"test_(make|host)_tensor_descriptor_matmul|test_make_tensor_descriptor_loop_"
     r"carried|test_tensor_descriptor_batched_gemm_3d_tma", "gpu",
     "looks for Triton's device-side tensormap creation, stmatrix epilogue or warp_group_dot text in the PTX/TTGIR"),
]

# The shims this runner provides, in its own words (listed in the summary).
SHIMS = [
    "triton._internal_testing: dtype lists, is_interpreter/is_cuda/is_hip*/is_xpu/is_hopper*/is_blackwell*, "
    "get_arch, numpy_random, to_triton, to_numpy, torch_dtype_name, str_to_triton_dtype, supports_tma, "
    "requires_tma, tma_skip_msg, unwrap_tensor, default_alloc_fn, is_compile_warmup, random_int, random_float, "
    "run_in_process (calls the function in this process)",
    "triton.TritonError = tilec.TilecError; triton.runtime.errors.InterpreterError = tilec.TilecError",
    "triton.runtime.jit: TensorWrapper, reinterpret (tilec's), type_canonicalisation_dict, JITFunction, MockTensor",
    "triton.runtime.driver.active: get_current_target() (cuda, sm_90, warp 32), get_active_torch_device(), "
    "get_current_device(), utils.get_device_properties()",
    "triton.compiler.errors.CompilationError = tilec.CompilationError; CompileTimeAssertionFailure = the same; UnsupportedLanguageConstruct = tilec's",
    "triton.compile(triton.compiler.ASTSource(fn, signature, constexprs)) = tilec.compile(fn, signature without its "
    "'constexpr' entries, constexprs)",
    "pytest markers interpreter/cpu/enable_warmup and fixtures fresh_knobs/with_allocator when the conftest lacks them",
    "triton.tools.mxfp: Triton's own torch helper (MX-format test data), loaded from .triton-tests/python/triton/",
    "child Python processes (print_helper.py of test_subprocess.py) get the same alias through a sitecustomize",
    "interpret mode on a CPU-only torch: torch.cuda.get_device_capability() answers (0, 0) (skipif decorators read "
    "it at import), and a test failing with 'Torch not compiled with CUDA enabled' counts as skipped",
]


# ---------------------------------------------------------------------------------------
# The import hook: triton.* -> tilec.*, with shims for Triton's private helpers.
# ---------------------------------------------------------------------------------------
def _shim_internal_testing(mode: str) -> types.ModuleType:
    import numpy as np
    import torch
    import tilec
    import tilec.language as tl
    from numpy.random import RandomState

    m = types.ModuleType("triton._internal_testing")
    m.int_dtypes = ["int8", "int16", "int32", "int64"]
    m.uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
    m.integral_dtypes = m.int_dtypes + m.uint_dtypes
    m.float_dtypes = ["float16", "float32", "float64"]
    m.float_dtypes_with_bfloat16 = m.float_dtypes + ["bfloat16"]
    m.dtypes = m.integral_dtypes + m.float_dtypes
    m.dtypes_with_bfloat16 = m.dtypes + ["bfloat16"]
    m.torch_float8_dtypes = ["float8_e4m3fn", "float8_e5m2"]
    m.torch_dtypes = ["bool"] + m.int_dtypes + ["uint8"] + m.float_dtypes + ["bfloat16"]
    m.tma_dtypes = sorted(set(m.dtypes_with_bfloat16) - {"int64", "uint64", "float64"})
    on_gpu = mode == "gpu"
    capability = torch.cuda.get_device_capability() if on_gpu and torch.cuda.is_available() else (0, 0)
    m.is_interpreter = lambda: not on_gpu
    m.is_cuda = lambda: on_gpu
    m.is_hip = m.is_xpu = lambda: False
    for name in ["is_hip_cdna", "is_hip_cdna2", "is_hip_cdna3", "is_hip_cdna4", "is_hip_rdna", "is_hip_rdna3",
                 "is_hip_rdna4", "is_hip_rdna4m", "is_hip_gfx1250", "is_hip_cdna3_or_newer", "is_xpu_cri", "is_sm12x",
                 "is_rubin", "is_blackwell_ultra", "is_hip_mi300"]:
        setattr(m, name, lambda: False)
    m.is_hopper = lambda: on_gpu and capability[0] == 9
    m.is_hopper_or_newer = lambda: on_gpu and capability[0] >= 9
    m.is_ampere_or_newer = lambda: on_gpu and capability[0] >= 8
    m.is_blackwell = lambda: on_gpu and capability[0] in (10, 11)
    m.get_arch = lambda: f"sm{capability[0]}{capability[1]}" if on_gpu else ""
    m.get_current_target = lambda: _Target() if on_gpu else None
    m.get_hip_lds_size = lambda: 65536
    m.is_compile_warmup = lambda: False
    m.supports_tma = lambda byval_only=False: (not on_gpu) or capability[0] >= 9
    m.supports_ws = lambda: (not on_gpu) or capability[0] >= 9
    m.supports_clc = lambda: False
    m.tma_skip_msg = lambda byval_only=False: "needs TMA (Hopper or newer)"
    import pytest
    m.requires_tma = pytest.mark.skipif(not m.supports_tma(), reason=m.tma_skip_msg())

    def random_int(low, high, *, warmup_value=None, **kwargs):
        return int(torch.randint(low, high, size=(), **kwargs).item())

    def random_float(*, warmup_value=0.5, **kwargs):
        return float(torch.rand((), **kwargs).item())

    def numpy_random(shape, dtype_str, rs=None, low=None, high=None):
        # Random values of a dtype named by a string; integers never 0 (tests divide by them).
        shape = (shape, ) if isinstance(shape, int) else shape
        rs = RandomState(seed=17) if rs is None else rs
        if dtype_str in m.integral_dtypes:
            info = np.iinfo(getattr(np, dtype_str))
            low = info.min if low is None else max(low, info.min)
            high = info.max if high is None else min(high, info.max)
            values = rs.randint(low, high, shape, dtype=getattr(np, dtype_str))
            values[values == 0] = 1
            return values
        if dtype_str and "float8" in dtype_str:
            return rs.randint(20, 40, shape, dtype=np.int8)
        if dtype_str in m.float_dtypes:
            return rs.normal(0, 1, shape).astype(dtype_str)
        if dtype_str == "bfloat16":
            bits = rs.normal(0, 1, shape).astype("float32").view("uint32") & np.uint32(0xffff0000)
            return bits.view("float32")
        if dtype_str in ("bool", "int1", "bool_"):
            return rs.normal(0, 1, shape) > 0.0
        raise RuntimeError(f"Unknown dtype {dtype_str}")

    def to_triton(x, device, dst_type=None):
        # NumPy -> torch; unsigned types travel as the signed torch type, reinterpreted.
        name = x.dtype.name
        if name in m.uint_dtypes:
            signed = x.astype(getattr(np, name[1:]))
            return tilec.reinterpret(torch.tensor(signed, device=device), getattr(tl, name))
        if dst_type and "float8" in dst_type:
            return tilec.reinterpret(torch.tensor(x, device=device), getattr(tl, dst_type))
        if name == "float32" and dst_type == "bfloat16":
            return torch.tensor(x, device=device).bfloat16()
        return torch.tensor(x, device=device)

    def torch_dtype_name(dtype):
        if isinstance(dtype, tl.dtype):
            return dtype.name
        if isinstance(dtype, torch.dtype):
            return str(dtype).split(".")[-1]
        raise TypeError(f"not a triton or torch dtype: {type(dtype)}")

    def to_numpy(x):
        if isinstance(x, tilec.TensorWrapper):
            return x.base.cpu().numpy().astype(getattr(np, torch_dtype_name(x.dtype)))
        if isinstance(x, torch.Tensor):
            return x.cpu().float().numpy() if x.dtype is torch.bfloat16 else x.cpu().numpy()
        raise ValueError(f"Not a triton-compatible tensor: {x}")

    def str_to_triton_dtype(name):
        return getattr(tl, _CANONICAL.get(name, name))

    def unwrap_tensor(t):
        return t.base if isinstance(t, tilec.TensorWrapper) else t

    def run_in_process(client_fn, args=(), kwargs=None, env=None):
        # Triton forks a process per call (to catch device faults); here it runs in place and
        # returns the same shape of result.
        result = types.SimpleNamespace(exc=None, driver_stderr_output="")
        try:
            client_fn(*args, **(kwargs or {}))
        except Exception as error:  # noqa: BLE001 - the caller inspects it
            result.exc = error
        return result

    m.random_int, m.random_float, m.numpy_random, m.to_triton = random_int, random_float, numpy_random, to_triton
    m.torch_dtype_name, m.to_numpy, m.str_to_triton_dtype = torch_dtype_name, to_numpy, str_to_triton_dtype
    m.unwrap_tensor, m.run_in_process = unwrap_tensor, run_in_process
    m.default_alloc_fn = lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda")
    return m


# Triton's spelling of dtype names -> tilec.language attribute names.
_CANONICAL = {
    "bool": "int1", "float8_e4m3fn": "float8e4nv", "float8e4nv": "float8e4nv", "float8_e5m2": "float8e5",
    "float8e5": "float8e5", "float8e4b15": "float8e4b15", "float8_e4m3fnuz": "float8e4b8",
    "float8_e5m2fnuz": "float8e5b16", "half": "float16", "float": "float32", "double": "float64",
}


class _Target:
    backend, arch, warp_size = "cuda", 90, 32


def _shim_runtime(mode: str) -> dict[str, types.ModuleType]:
    import tilec
    runtime = types.ModuleType("triton.runtime")
    errors = types.ModuleType("triton.runtime.errors")
    errors.InterpreterError = tilec.TilecError
    errors.OutOfResources = tilec.OutOfResources
    jit = types.ModuleType("triton.runtime.jit")
    jit.TensorWrapper, jit.reinterpret, jit.JITFunction, jit.jit = (tilec.TensorWrapper, tilec.reinterpret,
                                                                   tilec.JITFunction, tilec.jit)
    jit.type_canonicalisation_dict = dict(_CANONICAL)

    class MockTensor:  # a stand-in argument that only carries a dtype
        def __init__(self, dtype, shape=None):
            self.dtype, self.shape = dtype, shape or [1]

        @staticmethod
        def data_ptr():
            return 0

    jit.MockTensor = MockTensor

    class _Active:
        @staticmethod
        def get_current_target():
            return _Target()

        @staticmethod
        def get_active_torch_device():
            import torch
            return torch.device("cuda" if mode == "gpu" else "cpu")

        @staticmethod
        def get_current_device():
            return 0

        class utils:  # noqa: N801 - Triton's attribute name
            @staticmethod
            def get_device_properties(device):
                return {"max_shared_mem": 232448, "multiprocessor_count": 132, "warpSize": 32}

    driver = types.ModuleType("triton.runtime.driver")
    driver.active = _Active()
    runtime.errors, runtime.jit, runtime.driver = errors, jit, driver
    runtime.JITFunction, runtime.Autotuner = tilec.JITFunction, tilec.Autotuner
    compiler = types.ModuleType("triton.compiler")
    compiler_errors = types.ModuleType("triton.compiler.errors")
    compiler_errors.CompilationError = tilec.CompilationError
    # tilec has no separate class for a failed tl.static_assert; its CompilationError stands in.
    compiler_errors.CompileTimeAssertionFailure = tilec.CompilationError
    compiler_errors.UnsupportedLanguageConstruct = tilec.errors.UnsupportedLanguageConstruct
    compiler.errors, compiler.CompilationError = compiler_errors, tilec.CompilationError

    class ASTSource:  # what Triton's compile() takes: a kernel, its signature and its constants
        def __init__(self, fn, signature, constexprs=None, attrs=None):
            self.fn, self.signature, self.constexprs = fn, dict(signature), dict(constexprs or {})

    compiler.ASTSource = ASTSource
    runtime.__path__, compiler.__path__ = [], []  # packages: their submodules are imported by name
    return {"triton.runtime": runtime, "triton.runtime.errors": errors, "triton.runtime.jit": jit,
            "triton.runtime.driver": driver, "triton.compiler": compiler, "triton.compiler.errors": compiler_errors}


class _ModuleLoader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class TritonAlias(importlib.abc.MetaPathFinder):
    """Resolves `triton` and `triton.<x>` to a shim when there is one, else to `tilec.<x>`."""

    def __init__(self, shims: dict[str, types.ModuleType]):
        self.shims = shims

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "triton" and not fullname.startswith("triton."):
            return None
        module = self.shims.get(fullname)
        if module is None:
            try:
                module = importlib.import_module("tilec" + fullname[len("triton"):])
            except ImportError:
                helper = TRITON_HELPERS / (fullname.replace(".", "/") + ".py")
                if helper.exists():  # one of Triton's pure-Python test helpers, kept verbatim
                    return importlib.util.spec_from_file_location(fullname, helper)
                return None  # ModuleNotFoundError names the Triton module tilec lacks
        return importlib.util.spec_from_loader(fullname, _ModuleLoader(module))


def install_alias(mode: str) -> None:
    import tilec

    top = types.ModuleType("triton")
    top.__path__ = []  # a package, so that submodule imports consult the finder

    def compile(src, target=None, options=None, **kwargs):
        # Triton's compile(ASTSource) -> tilec.compile(fn, signature, constexprs); the
        # "constexpr" entries of Triton's signature are tilec's constexprs.
        if isinstance(src, str):
            raise NotImplementedError("tilec compiles kernels, not TTGIR files")
        signature = {name: kind for name, kind in src.signature.items() if kind != "constexpr"}
        return tilec.compile(src.fn, signature=signature, constexprs=src.constexprs)

    def __getattr__(name):
        if name in ("TritonError", ):
            return tilec.TilecError
        return getattr(tilec, name)

    top.compile = compile

    top.__getattr__ = __getattr__
    shims = {"triton": top, "triton._internal_testing": _shim_internal_testing(mode)}
    shims.update(_shim_runtime(mode))
    for name, module in shims.items():
        if name != "triton" and name.count(".") == 1:
            setattr(top, name.split(".")[1], module)
    sys.meta_path.insert(0, TritonAlias(shims))


# ---------------------------------------------------------------------------------------
# The pytest plugin: sampling, the internal list, timeouts, and recording outcomes.
# ---------------------------------------------------------------------------------------
def first_error_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    raised = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    if crash is None and raised:  # a collection error: the exception is on the "E" lines
        return raised[0][:300]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "(no message)"
    first = lines[0]
    carets = [index for index, line in enumerate(lines) if set(line) == {"^"}]
    if carets and carets[-1] + 1 < len(lines):
        # tilec's CompilationError: "at file:line:col in fn:", the source line, a caret,
        # then the message; the message is what says what went wrong.
        kind = first.split(":", 1)[0] if re.match(r"[\w.]+(Error|Exception):", first) else "error"
        message = [line for line in lines[carets[-1] + 1:] if not line.startswith("(Triton: at ")]
        return f"{kind}: {' '.join(message)}"[:300]
    if (first.endswith(":") or re.fullmatch(r"[\w.]+(Error|Exception)", first)) and len(lines) > 1:
        first = f"{first} {lines[1]}"  # a bare exception name: its detail is on the next line
    return first[:300]


def group_key(message: str) -> str:
    """A failure message with its specific values blurred, so that like failures group."""
    key = re.sub(r"0x[0-9a-fA-F]+", "0x?", message)
    key = re.sub(r"(?<![A-Za-z_])-?\d+(\.\d+)?(e[-+]?\d+)?", "#", key)
    key = re.sub(r"'[^']{24,}'", "'…'", key)
    key = re.sub(r"\s+", " ", key)
    return key[:200]


def internal_reason(file: str, name: str) -> str | None:
    if (file, name) in INTERNAL:
        return INTERNAL[(file, name)]
    for pattern_file, pattern, reason in INTERNAL_PATTERNS:
        if pattern_file == file and re.fullmatch(pattern or r".*", name):
            return reason
    return None


class Recorder:
    def __init__(self, args):
        self.args = args
        self.results: dict[str, dict] = {}
        self.internal: list[dict] = []
        self.collect_errors: list[dict] = []
        self.marked: set[str] = set()

    # -- options and fixtures the conftest may lack
    def pytest_configure(self, config):
        for marker in ["interpreter", "cpu", "enable_warmup(min_capability)", "gpu"]:
            config.addinivalue_line("markers", marker)

    def pytest_collection_modifyitems(self, session, config, items):
        chosen = []
        by_file: dict[str, list] = collections.defaultdict(list)
        for item in items:
            by_file[item.path.name].append(item)
        keyword = re.compile(self.args.k) if self.args.k else None
        for file, file_items in by_file.items():
            kept = []
            for item in file_items:
                name = getattr(item, "originalname", item.name)
                if keyword and not keyword.search(item.nodeid):
                    continue
                reason = internal_reason(file, name)
                if reason is not None:
                    self.internal.append({"nodeid": item.nodeid, "file": file, "test": name, "reason": reason})
                    continue
                kept.append(item)
            chosen.extend(sample(kept, self.args.sample))
        if self.args.chunks > 1:
            chosen = [item for index, item in enumerate(chosen) if index % self.args.chunks == self.args.chunk]
        items[:] = chosen
        # Triton runs only the tests marked `interpreter` in its interpreter; remember which.
        self.marked = {item.nodeid for item in chosen if item.get_closest_marker("interpreter") is not None}

    def pytest_runtest_setup(self, item):
        # A per-test time limit (the interpreter runs some 64K-program grids).
        def expire(signum, frame):
            raise TimeoutError(f"test ran past {self.args.timeout}s")
        signal.signal(signal.SIGALRM, expire)
        signal.alarm(self.args.timeout)

    def pytest_runtest_teardown(self, item):
        signal.alarm(0)

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append({"nodeid": report.nodeid, "message": first_error_line(report)})

    def pytest_runtest_logreport(self, report):
        entry = self.results.setdefault(report.nodeid, {"outcome": "passed", "message": "", "duration": 0.0,
                                                        "interpreter_mark": report.nodeid in self.marked})
        entry["duration"] += report.duration
        if report.when == "call":
            if report.passed:
                entry["outcome"] = "passed" if entry["outcome"] == "passed" else entry["outcome"]
            elif report.skipped:
                entry["outcome"], entry["message"] = "skipped", _skip_reason(report)
            else:
                message = first_error_line(report)
                if not self.args.gpu and any(text in message for text in _NEEDS_CUDA):
                    # written for a GPU (a "cuda" tensor, a CUDA stream): not a verdict on the interpreter
                    entry["outcome"], entry["message"] = "skipped", f"needs a CUDA device: {message}"
                else:
                    entry["outcome"], entry["message"] = "failed", message
        elif report.failed and entry["outcome"] != "failed":
            entry["outcome"], entry["message"] = "error", f"[{report.when}] " + first_error_line(report)
        elif report.skipped and report.when == "setup":
            entry["outcome"], entry["message"] = "skipped", _skip_reason(report)


# Failures of a test that needs a CUDA device, run in interpret mode on a CPU-only torch.
_NEEDS_CUDA = ("Torch not compiled with CUDA enabled", "Found no NVIDIA driver")


def _cpu_torch_capability() -> None:
    """On a torch without CUDA, torch.cuda.get_device_capability() answers (0, 0) instead of
    raising, so that skip conditions evaluated at import (test_matmul.py's skipif
    decorators) can be read: they then skip as for a GPU older than any they ask for."""
    import torch
    if not torch.cuda.is_available():
        torch.cuda.get_device_capability = lambda device=None: (0, 0)


def _fallback_fixtures(pytest) -> types.ModuleType:
    """Fixtures newer Triton tests ask for that the saved conftest may not define."""
    import tilec
    plugin = types.ModuleType("triton_test_fixtures")

    @pytest.fixture
    def with_allocator():
        import torch
        tilec.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8))
        yield
        tilec.set_allocator(None)

    @pytest.fixture
    def fresh_knobs():
        # Triton's knobs have no tilec counterpart; tests that set them see an inert namespace.
        yield types.SimpleNamespace(runtime=types.SimpleNamespace(jit_cache_hook=None),
                                    compilation=types.SimpleNamespace(), cache=types.SimpleNamespace())

    @pytest.fixture(autouse=True)
    def tilec_cache_follows_triton_cache(request, monkeypatch):
        # Triton's `fresh_triton_cache` points TRITON_CACHE_DIR at an empty folder so that a
        # kernel really compiles (warnings are given when compiling); tilec's cache follows.
        if "fresh_triton_cache" in request.fixturenames:
            monkeypatch.setattr(tilec.config.config, "cache_dir", request.getfixturevalue("fresh_triton_cache"))
        yield

    plugin.with_allocator, plugin.fresh_knobs = with_allocator, fresh_knobs
    plugin.tilec_cache_follows_triton_cache = tilec_cache_follows_triton_cache
    return plugin


def _skip_reason(report) -> str:
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2])[:200]
    return str(report.longrepr)[:200]


def sample(items: list, count: int) -> list:
    """A deterministic subset of `count` items spread over the test functions (round robin
    over the functions, each function's cases in the order of a hash of their id)."""
    if not count or len(items) <= count:
        return items
    groups: dict[str, list] = collections.defaultdict(list)
    for item in items:
        groups[getattr(item, "originalname", item.name)].append(item)
    for group in groups.values():
        group.sort(key=lambda item: hashlib.sha1(item.nodeid.encode()).hexdigest())
    chosen, depth = [], 0
    while len(chosen) < count:
        added = False
        for group in groups.values():
            if depth < len(group) and len(chosen) < count:
                chosen.append(group[depth])
                added = True
        if not added:
            break
        depth += 1
    order = {id(item): index for index, item in enumerate(items)}
    return sorted(chosen, key=lambda item: order[id(item)])


# ---------------------------------------------------------------------------------------
# Driving: one child process per (file, chunk), then a summary.
# ---------------------------------------------------------------------------------------
def _alias_child_processes(mode: str) -> None:
    """Python processes the tests start (test_subprocess.py runs print_helper.py) get the
    same triton -> tilec alias, through a sitecustomize module on their PYTHONPATH."""
    site = RESULTS / "_site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "import triton_language_tests\n"
        f"triton_language_tests.install_alias({mode!r})\n")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))


def run_worker(args) -> int:
    mode = "gpu" if args.gpu else "interpret"
    if mode == "interpret":
        os.environ["TILEC_INTERPRET"] = "1"
        os.environ["TRITON_INTERPRET"] = "1"
    install_alias(mode)
    _alias_child_processes(mode)
    if mode == "interpret":
        _cpu_torch_capability()
    import pytest

    recorder = Recorder(args)
    fixtures = _fallback_fixtures(pytest)
    ini = RESULTS / "pytest.ini"
    ini.write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    started = time.time()
    code = pytest.main([str(LANGUAGE / args.files[0]), "-q", "-p", "no:xdist", "-p", "no:randomly", "-c", str(ini),
                        f"--rootdir={UNIT}", f"--device={'cuda' if mode == 'gpu' else 'cpu'}", "-W", "ignore",
                        "--tb=line", "-rN"], plugins=[recorder, fixtures])
    out = RESULTS / f"{args.files[0]}.{args.chunk}.json"
    out.write_text(json.dumps({"file": args.files[0], "mode": mode, "chunk": args.chunk, "chunks": args.chunks,
                               "sample": args.sample, "k": args.k, "exit_code": int(code),
                               "seconds": round(time.time() - started, 1), "results": recorder.results,
                               "internal": recorder.internal, "collect_errors": recorder.collect_errors}, indent=1))
    return 0


def summarize(results_dir: Path) -> str:
    per_file: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    groups: dict[str, dict] = {}
    internal: dict[str, dict] = {}
    divergent: collections.Counter = collections.Counter()
    mode = "?"
    for path in sorted(results_dir.glob("test_*.json")):
        data = json.loads(path.read_text())
        mode = data["mode"]
        counts = per_file[data["file"]]
        for error in data["collect_errors"]:
            counts["collection error"] += 1
            _add_group(groups, "COLLECTION: " + error["message"], data["file"], error["nodeid"])
        marked_names = _interpreter_marked(data["file"])
        for nodeid, entry in data["results"].items():
            reason = _divergence(data["file"], nodeid, mode) if entry["outcome"] in ("failed", "error") else None
            if reason is not None:
                counts["divergent"] += 1
                divergent[(data["file"], reason)] += 1
                continue
            counts[entry["outcome"]] += 1
            name = nodeid.split("::")[-1].split("[")[0]
            if entry.get("interpreter_mark") or name in marked_names:
                counts["marked " + entry["outcome"]] += 1
            if entry["outcome"] in ("failed", "error"):
                _add_group(groups, entry["message"], data["file"], nodeid)
        for entry in data["internal"]:
            internal[entry["nodeid"]] = entry
    for entry in internal.values():
        per_file[entry["file"]]["internal"] += 1

    lines = [f"# Triton language tests on tilec ({mode} mode)", "",
             "| file | passed | failed | error | skipped | internal (excluded) | divergent (excluded) | pass rate | "
             "rate of `interpreter`-marked |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    total = collections.Counter()
    for file in sorted(per_file):
        counts = per_file[file]
        total.update(counts)
        lines.append(_row(file, counts))
    lines.append(_row("**all**", total))
    lines += ["", "Pass rate = passed / (passed + failed + error); skipped and internal tests are left out. "
              "Triton itself runs only the tests marked `interpreter` in its interpreter; the last column is the "
              "rate over those alone.", "",
              "## Failure groups (first error line, values blurred)", "", "| count | files | first error line | example |",
              "| ---: | --- | --- | --- |"]
    for key, group in sorted(groups.items(), key=lambda pair: -pair[1]["count"]):
        files = ", ".join(sorted(group["files"]))
        message = group["message"][:220].replace("|", "/").replace("`", "'")
        lines.append(f"| {group['count']} | {files} | `{message}` | `{group['example']}` |")
    lines += ["", "## Divergent failures (tilec's deliberate choices; excluded from the rate)", ""]
    lines += [f"- {file} ({count}): {reason}" for (file, reason), count in sorted(divergent.items())] or ["- none"]
    lines += ["", "## Shims this runner provides", ""] + [f"- {shim}" for shim in SHIMS]
    lines += ["", "## Internal tests (not run)", ""]
    reasons = collections.Counter((entry["file"], entry["test"], entry["reason"]) for entry in internal.values())
    for (file, test, reason), count in sorted(reasons.items()):
        lines.append(f"- {file}::{test} ({count}): {reason}")
    text = "\n".join(lines) + "\n"
    (results_dir / "summary.md").write_text(text)
    (results_dir / "summary.json").write_text(json.dumps(
        {"files": {f: dict(c) for f, c in per_file.items()},
         "groups": [{"key": k, **{kk: (sorted(v) if isinstance(v, set) else v) for kk, v in g.items()}}
                    for k, g in sorted(groups.items(), key=lambda p: -p[1]["count"])]}, indent=1))
    return text


def _record_wholly_internal(file: str, mode: str) -> bool:
    """A file every test of which is internal (INTERNAL_PATTERNS with an empty pattern) is
    not run: importing it may need Triton modules tilec does not mirror (test_frontend.py
    imports triton._filecheck and gluon). Its test functions are recorded as internal."""
    reasons = [reason for pattern_file, pattern, reason in INTERNAL_PATTERNS if pattern_file == file and not pattern]
    if not reasons:
        return False
    import ast
    tree = ast.parse((LANGUAGE / file).read_text())
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
    internal = [{"nodeid": f"language/{file}::{name}", "file": file, "test": "(whole file)", "reason": reasons[0]}
                for name in names]
    (RESULTS / f"{file}.0.json").write_text(json.dumps(
        {"file": file, "mode": mode, "chunk": 0, "chunks": 1, "sample": 0, "k": "", "exit_code": 0,
         "seconds": 0.0, "results": {}, "internal": internal, "collect_errors": []}, indent=1))
    return True


def _interpreter_marked(file: str) -> set[str]:
    """The test functions of `file` decorated with @pytest.mark.interpreter (read from its source)."""
    import ast
    path = LANGUAGE / file
    if not path.exists():
        return set()
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            if any("mark.interpreter" in ast.unparse(decorator) for decorator in node.decorator_list):
                names.add(node.name)
    return names


def _divergence(file: str, nodeid: str, mode: str) -> str | None:
    """The reason a failure of `nodeid` is a deliberate divergence (DIVERGENT), else None."""
    for pattern_file, pattern, where, reason in DIVERGENT:
        if pattern_file == file and (not where or where == mode) and re.search(pattern, nodeid):
            return reason
    return None


def _add_group(groups, message, file, nodeid):
    key = group_key(message)
    group = groups.setdefault(key, {"count": 0, "files": set(), "example": nodeid, "message": message})
    group["count"] += 1
    group["files"].add(file)


def _row(name, counts):
    ran = counts["passed"] + counts["failed"] + counts["error"] + counts["collection error"]
    rate = f"{100 * counts['passed'] / ran:.1f}%" if ran else "-"
    errors = counts["error"] + counts["collection error"]
    marked = counts["marked passed"] + counts["marked failed"] + counts["marked error"]
    marked_rate = f"{100 * counts['marked passed'] / marked:.1f}% of {marked}" if marked else "-"
    return (f"| {name} | {counts['passed']} | {counts['failed']} | {errors} | {counts['skipped']} | "
            f"{counts['internal']} | {counts['divergent']} | {rate} | {marked_rate} |")


def main() -> int:
    global RESULTS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--interpret", action="store_true", help="run in tilec's interpreter on CPU tensors")
    where.add_argument("--gpu", action="store_true", help="compile with tilec and run on a CUDA GPU")
    where.add_argument("--summarize", action="store_true", help="only merge the result files into a summary")
    parser.add_argument("files", nargs="*", help=f"test files (default: {' '.join(DEFAULT_FILES)})")
    parser.add_argument("-k", default="", help="a regular expression the test ids must match")
    parser.add_argument("--sample", type=int, default=0, help="at most N tests per file, spread over its functions")
    parser.add_argument("--chunks", type=int, default=1, help="split each file's tests into N child processes")
    parser.add_argument("--chunk", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=1, help="child processes run at once (default 1)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds one test may run (default 120)")
    parser.add_argument("--results", type=Path, default=None, help=f"where result files go (default {RESULTS})")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    RESULTS = args.results or RESULTS
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.summarize:
        print(summarize(RESULTS))
        return 0
    if args.worker:
        return run_worker(args)
    if not LANGUAGE.is_dir():
        sys.exit(f"{LANGUAGE} is missing: fetch Triton's test files first (see .triton-tests/README.txt)")
    files = args.files or [f for f in DEFAULT_FILES if (LANGUAGE / f).exists()]
    parts = []
    for file in files:
        if _record_wholly_internal(file, "gpu" if args.gpu else "interpret"):
            print(f"{file}: internal as a whole, not run (see INTERNAL_PATTERNS)", flush=True)
            continue
        parts += [(file, chunk) for chunk in range(args.chunks)]
    running: list[tuple[subprocess.Popen, str, int, float, object]] = []

    def wait_for_one() -> None:
        """Waits until one running child ends and reports it."""
        while True:
            for entry in running:
                proc, file, chunk, started, handle = entry
                if proc.poll() is not None:
                    handle.close()
                    running.remove(entry)
                    print(f"{file} part {chunk + 1}/{args.chunks}: exit {proc.returncode}, "
                          f"{time.time() - started:.0f}s (log {RESULTS / f'{file}.{chunk}.log'})", flush=True)
                    return
            time.sleep(0.2)

    for file, chunk in parts:
        command = [sys.executable, __file__, "--worker", file, "--chunk", str(chunk), "--chunks",
                   str(args.chunks), "--sample", str(args.sample), "--timeout", str(args.timeout),
                   "--results", str(RESULTS), "--gpu" if args.gpu else "--interpret"]
        if args.k:
            command += ["-k", args.k]
        handle = open(RESULTS / f"{file}.{chunk}.log", "w")
        running.append((subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT), file, chunk,
                        time.time(), handle))
        while len(running) >= args.jobs:
            wait_for_one()
    while running:
        wait_for_one()
    print(summarize(RESULTS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
