"""`tilec compile`: compile one kernel of a Python file and print one stage of it.

    tilec compile examples/vector_add.py:add_kernel \\
        --signature 'x_ptr=*fp32:16,y_ptr=*fp32:16,out_ptr=*fp32:16,n_elements=i32' \\
        --constexpr BLOCK_SIZE=1024 --stage ptx

The file is imported as a module (its directory first on sys.path, so it can import its
neighbours; code under `if __name__ == "__main__":` does not run) and KERNEL is a
@tilec.jit function in it (or an @autotune/@heuristics wrapper of one). Signatures are
written as for tilec.compile: NAME=TYPE, TYPE one of i1, i8 .. i64, u8 .. u64, fp16,
bf16, fp32, fp64, fp8e4nv, fp8e5, ... or '*' and one of those (a pointer); ':16' marks a
pointer 16-byte aligned or an integer divisible by 16, ':8' an integer divisible by 8.
Types without a name are given to the parameters not named elsewhere, in order.
Constexprs are NAME=VALUE with a Python literal (128, 0.5, True, 'text', (1, 2)) or a
dtype (fp16, tl.float16).

Stages: ttir, ttgir (no CUDA toolkit needed), llir, ptx, cubin (binary: written with
-o), sass (the cubin disassembled by nvdisasm or cuobjdump, looked for next to ptxas).
The compilation stops at the stage asked for; no GPU is used.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from . import CliError, help_texts, write_output

STAGES = ("ttir", "ttgir", "llir", "ptx", "cubin", "sass")


def add_parser(commands) -> None:
    description, rest = help_texts(__doc__)
    example, _, details = rest.partition("\n\n")
    parser = commands.add_parser(
        "compile", help="compile a kernel and print a stage (ttir, ttgir, llir, ptx, sass) or write its cubin",
        description=description + "\n\n" + details, epilog="example:\n" + example,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kernel", metavar="FILE.py:KERNEL", help="the Python file and the kernel's name in it")
    parser.add_argument("-s", "--signature", action="append", default=[], metavar="SIGNATURE",
                        help="types of the kernel's run-time parameters: NAME=TYPE,... e.g. 'x_ptr=*fp32:16,n=i32' (repeatable)")
    parser.add_argument("-c", "--constexpr", action="append", default=[], metavar="CONSTEXPRS",
                        help="values of constexpr parameters: NAME=VALUE,... e.g. BLOCK=128 (repeatable)")
    parser.add_argument("--stage", choices=STAGES, default="ttgir", help="what to print (default: ttgir)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout (needed for cubin)")
    parser.add_argument("--target", default="sm_90", help="the GPU architecture, e.g. sm_80, sm_90 (default: sm_90)")
    parser.add_argument("--num-warps", type=int, default=4, help="warps per program (default: 4)")
    parser.add_argument("--num-stages", type=int, default=3,
                        help="software pipelining stages of loops feeding tl.dot (default: 3; 1 turns it off)")
    parser.add_argument("--debug", action="store_true", default=None,
                        help="debug mode: device assertions and overflow checks")
    parser.add_argument("--no-fp-fusion", dest="fp_fusion", action="store_false",
                        help="do not fuse a * b + c into one fma")
    parser.set_defaults(run=run, command="compile")


def run(args: argparse.Namespace) -> int:
    from ..backend.compiler import compile_kernel
    from ..target import Target
    target = Target.parse(args.target)  # first: --target '' is refused, not read as the default
    if args.stage == "cubin" and args.output in (None, "-") and sys.stdout.isatty():
        raise CliError("a cubin is binary: write it to a file with -o FILE")
    if args.stage == "sass":
        disassembler()  # before compiling: say at once if there is none
    fn = load_kernel(args.kernel)
    constexprs = parse_constexprs(args.constexpr)
    signature = parse_signature(args.signature, fn, constexprs)
    kernel = compile_kernel(fn, signature=signature, constexprs=constexprs, target=target,
                            num_warps=args.num_warps, num_stages=args.num_stages, debug=args.debug,
                            enable_fp_fusion=args.fp_fusion,
                            stop_after="cubin" if args.stage == "sass" else args.stage)
    if args.stage == "sass":
        output: str | bytes = disassemble(kernel.asm["cubin"], kernel.name)
    else:
        output = kernel.asm[args.stage]
    write_output(output, args.output)
    if args.stage in ("cubin", "sass"):
        m = kernel.metadata
        print(f"{m.name}: {m.target}, {m.num_warps} warps, {m.n_regs} registers, {m.n_spills} bytes spilled, "
              f"{m.shared} bytes of shared memory", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------- the kernel


def load_kernel(spec: str):
    """The @tilec.jit function named by 'path/to/file.py:name'."""
    from ..frontend import KernelFunction
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise CliError(f"expected FILE.py:KERNEL, got {spec!r}")
    if not os.path.isfile(path):
        raise CliError(f"no such file: {path}")
    module = _import_file(path)
    if not hasattr(module, name):
        kernels = sorted(n for n, v in vars(module).items() if isinstance(_unwrap(v), KernelFunction))
        listed = f"; its kernels: {', '.join(kernels)}" if kernels else "; it defines no @tilec.jit function"
        raise CliError(f"{path} has no kernel {name!r}{listed}")
    fn = _unwrap(getattr(module, name))
    if not isinstance(fn, KernelFunction):
        raise CliError(f"{name!r} in {path} is not a @tilec.jit function (it is {type(fn).__name__})")
    return fn


def _unwrap(value: Any) -> Any:
    """The @jit function under @autotune and @heuristics wrappers."""
    from ..runtime.autotuner import Autotuner, Heuristics
    while isinstance(value, (Autotuner, Heuristics)):
        value = value.fn
    return value


def _import_file(path: str):
    directory = os.path.dirname(os.path.abspath(path))
    module_name = "_tilec_cli_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot import {path} (is it a Python file?)")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, directory)
    sys.modules[module_name] = module  # dataclasses and the like look their module up
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise CliError(f"cannot import {path}: {error.msg} (line {error.lineno})") from None
    except Exception as error:  # the user's module failed: say what and where, in one line
        raise CliError(f"cannot import {path}: {type(error).__name__}: {error}") from None
    finally:
        sys.path.remove(directory)
    return module


# ----------------------------------------------------------------------------- arguments


def _items(values: list[str]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def parse_signature(values: list[str], fn, constexprs: dict[str, Any]) -> dict[str, str]:
    """{name: type} from 'a=*fp16:16,n=i32' items; unnamed types fill, in order, the
    parameters neither named nor constexpr (given, or annotated `tl.constexpr`)."""
    named: dict[str, str] = {}
    positional: list[str] = []
    for item in _items(values):
        name, sep, ty = item.partition("=")
        if sep:
            if not name.strip() or not ty.strip():
                raise CliError(f"bad signature item {item!r}: expected NAME=TYPE, e.g. x_ptr=*fp32:16")
            if name.strip() in named:
                raise CliError(f"parameter {name.strip()!r} appears twice in the signature")
            named[name.strip()] = ty.strip()
        else:
            _check_type(item)
            positional.append(item)
    if positional:
        annotated = {fn.arg_names[i] for i in fn.constexpr_indices}  # `NAME: tl.constexpr`
        free = [p for p in fn.arg_names if p not in named and p not in constexprs and p not in annotated]
        if len(positional) > len(free):
            raise CliError(f"{len(positional)} unnamed types for {len(free)} parameters of {fn.__name__} "
                           f"({', '.join(free) or 'none left'})")
        named.update(zip(free, positional))
    return named


def _check_type(item: str) -> None:
    from ..language.core import dtype_from_signature
    try:
        dtype_from_signature(item.partition(":")[0])
    except ValueError:
        raise CliError(f"bad signature item {item!r}: expected NAME=TYPE (e.g. x_ptr=*fp32:16), or a TYPE "
                       "for the next parameter") from None


def parse_constexprs(values: list[str]) -> dict[str, Any]:
    constexprs = {}
    for item in _items(values):
        name, sep, text = item.partition("=")
        if not sep or not name.strip() or not text.strip():
            raise CliError(f"bad constexpr {item!r}: expected NAME=VALUE, e.g. BLOCK=128")
        constexprs[name.strip()] = constexpr_value(text.strip())
    return constexprs


def constexpr_value(text: str) -> Any:
    """128 -> 128, True/true -> True, fp16 or tl.float16 -> the dtype, 'abc' -> 'abc'."""
    from .. import language as tl
    from ..language.core import SIGNATURE_NAMES
    lowered = {"true": True, "false": False, "none": None}
    if text.lower() in lowered:
        return lowered[text.lower()]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    name = text[len("tl."):] if text.startswith("tl.") else text
    if name in SIGNATURE_NAMES:
        return SIGNATURE_NAMES[name]
    if isinstance(getattr(tl, name, None), tl.dtype):
        return getattr(tl, name)
    return text


# ----------------------------------------------------------------------------- sass


def disassembler() -> list[str]:
    """The command that prints a cubin's SASS: nvdisasm (or cuobjdump) of the toolkit whose
    ptxas tilec uses, else the first on the PATH. Raises CliError when there is none."""
    from ..backend import toolkit
    directories = []
    try:
        ptxas = toolkit.ptxas_path()
        directories += [os.path.dirname(ptxas), os.path.dirname(os.path.realpath(ptxas))]
    except toolkit.ToolkitError:
        pass
    try:  # the pip wheel nvidia-cuda-nvdisasm
        import nvidia.cuda_nvdisasm as wheel  # type: ignore
        directories += [os.path.join(p, "bin") for p in getattr(wheel, "__path__", [])]
    except ImportError:
        pass
    for tool, flags in (("nvdisasm", ["-c"]), ("cuobjdump", ["-sass"])):
        for directory in directories:
            candidate = os.path.join(directory, tool)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return [candidate, *flags]
        found = shutil.which(tool)
        if found:
            return [found, *flags]
    looked = ", ".join(dict.fromkeys(directories)) or "no CUDA toolkit found"
    raise CliError(f"no nvdisasm or cuobjdump to print SASS with (looked next to ptxas: {looked}, and on the PATH); "
                   "install the CUDA toolkit's binary utilities (or the nvidia-cuda-nvdisasm wheel), or use "
                   "--stage cubin -o FILE")


def disassemble(cubin: bytes, name: str) -> str:
    command = disassembler()
    with tempfile.TemporaryDirectory(prefix="tilec-sass-") as tmp:
        path = os.path.join(tmp, f"{name}.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        proc = subprocess.run([*command, path], capture_output=True, text=True)
    if proc.returncode != 0:
        raise CliError(f"{os.path.basename(command[0])} failed: {(proc.stderr or proc.stdout).strip()}")
    return proc.stdout
