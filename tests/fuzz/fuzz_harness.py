"""Running generated programs and judging them.

`check(seed, ...)` generates the program of `seed`, computes its reference outputs,
runs it in the interpreter, optionally compiles it to a cubin for some targets (no GPU
needed) and runs it on the GPU, and returns a `Result`: the mismatches and crashes
found, each described with the seed and the kernel's source. `write_reproducer` saves
a failing program as a standalone script plus its data (`seed_<N>.py`, `seed_<N>.npz`).

Command line (from the repository root):

    python tests/fuzz/fuzz_harness.py --seed 17 --show          # print the program
    python tests/fuzz/fuzz_harness.py --seed 0 --count 500      # interpreter vs reference
    python tests/fuzz/fuzz_harness.py --seed 0 --count 500 --compile sm_80,sm_90 --gpu
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import linecache
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuzz_generator import AVOID, generate  # noqa: E402
from fuzz_program import If, Loop, Program  # noqa: E402
from fuzz_semantics import DType, bits_of, f64  # noqa: E402


@dataclass
class Result:
    seed: int
    program: Program
    failures: list = field(default_factory=list)   # (stage, text)
    compared: int = 0       # output elements compared (exactly or within a bound)
    exact: int = 0          # of which bit-exactly
    skipped: int = 0        # not determined (don't care)
    timings: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)    # backend -> list of arrays

    @property
    def ok(self) -> bool:
        return not self.failures

    def report(self) -> str:
        lines = [f"=== tilec fuzz seed {self.seed}: {len(self.failures)} problem(s)"]
        for stage, text in self.failures:
            lines.append(f"--- [{stage}]")
            lines.append(text.rstrip())
        lines.append(f"--- kernel (grid=({self.program.grid},), num_warps={self.program.num_warps}); rerun with:")
        lines.append(f"    python tests/fuzz/fuzz_harness.py --seed {self.seed} --show")
        lines.append(self.program.source.rstrip())
        lines.append("--- arguments: " + ", ".join(_describe_param(p) for p in self.program.params))
        return "\n".join(lines)


def _describe_param(p) -> str:
    if p.kind in ("in", "out"):
        return f"{p.name}={p.dt.name}[{len(p.value)}]"
    return f"{p.name}={p.value!r}"


# ----------------------------------------------------------------------------- loading and running

def load_kernel(program: Program):
    """The program's `kernel`, exec'd from its source (linecache lets @jit read it)."""
    filename = f"<tilec-fuzz seed {program.seed}>"
    linecache.cache[filename] = (len(program.source), None, program.source.splitlines(keepends=True), filename)
    namespace = {"__name__": f"tilec_fuzz_{program.seed}"}
    exec(compile(program.source, filename, "exec"), namespace)
    return namespace["kernel"]


@contextlib.contextmanager
def _tilec_config(interpret: bool):
    from tilec.config import config
    saved = config.interpret
    config.interpret = interpret
    try:
        yield
    finally:
        config.interpret = saved


def run_interpreter(program: Program, kernel) -> list[np.ndarray]:
    args = program.arguments()
    with _tilec_config(True):
        kernel[(program.grid,)](*args, num_warps=program.num_warps)
    return [a for a, p in zip(args, program.params) if p.kind == "out"]


def run_gpu(program: Program, kernel) -> list[np.ndarray]:
    import torch
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from tilec_testing import device_array, to_numpy
    args = [device_array(a, "gpu") if p.kind in ("in", "out") else a
            for a, p in zip(program.arguments(), program.params)]
    with _tilec_config(False):
        kernel[(program.grid,)](*args, num_warps=program.num_warps)
    torch.cuda.synchronize()
    return [to_numpy(a) for a, p in zip(args, program.params) if p.kind == "out"]


def compile_only(program: Program, kernel, target: str):
    """Compiles for `target` down to a cubin, specialised as a launch on the GPU would be
    (every pointer 16-byte aligned, as torch allocates)."""
    from tilec.language.core import signature_name
    from tilec.runtime.specialize import dtype_of_array
    typed = []
    for a, p in zip(program.arguments(), program.params):
        if p.kind in ("in", "out"):
            typed.append(f"*{signature_name(dtype_of_array(a))}:16")
        else:
            typed.append(a)
    with _tilec_config(False):
        return kernel.warmup(*typed, grid=(program.grid,), num_warps=program.num_warps, target=target)


# ----------------------------------------------------------------------------- comparing

def _fmt(v, dt: DType) -> str:
    if dt.is_float:
        raw = int(bits_of(np.asarray([v]), dt)[0])
        return f"{float(v)!r}(0x{raw:0{dt.bits // 4}x})"
    return repr(v.item() if hasattr(v, "item") else v)


def compare(program: Program, reference: dict, got: list[np.ndarray], result: Result, backend: str) -> None:
    outputs = [p for p in program.params if p.kind == "out"]
    count = backend == "interpreter"  # statistics once per program
    for p, g in zip(outputs, got):
        ref_v, ref_e = reference[p.name]
        dt = p.dt
        g = np.asarray(g)
        if g.dtype != ref_v.dtype:
            result.failures.append((backend, f"{p.name}: array dtype {g.dtype}, expected {ref_v.dtype}"))
            continue
        skip = np.isinf(ref_e)
        if dt.is_float:
            gv, rv = f64(g), f64(ref_v)
            same_bits = bits_of(g, dt) == bits_of(ref_v, dt)
            nan_both = np.isnan(gv) & np.isnan(rv)
            with np.errstate(invalid="ignore"):
                near = (gv == rv) | (~np.isnan(gv) & ~np.isnan(rv) & (np.abs(gv - rv) <= ref_e))
            ok = skip | np.where(ref_e == 0, same_bits | nan_both, near)
        else:
            ok = skip | (g == ref_v)
        if count:
            result.compared += int((~skip).sum())
            result.exact += int((ref_e == 0).sum())
            result.skipped += int(skip.sum())
        if ok.all():
            continue
        bad = np.flatnonzero(~ok)
        lines = [f"{p.name} ({dt.name}[{len(g)}]): {len(bad)} of {len(g)} elements differ from the reference"]
        for i in bad[:10]:
            bound = "exact" if ref_e[i] == 0 else f"within {ref_e[i]:.3g}"
            lines.append(f"  [{i}] got {_fmt(g[i], dt)}, expected {_fmt(ref_v[i], dt)} ({bound})")
        result.failures.append((backend, "\n".join(lines)))


# ----------------------------------------------------------------------------- one program

def check(seed: int, interpret: bool = True, targets: tuple = (), gpu: bool = False,
          avoid: frozenset = AVOID) -> Result:
    started = time.perf_counter()
    try:
        program = generate(seed, avoid)
    except Exception as error:
        raise RuntimeError(f"the generator failed on seed {seed}") from error
    return check_program(program, interpret, targets, gpu, started)


def check_program(program: Program, interpret: bool = True, targets: tuple = (), gpu: bool = False,
                  started: float | None = None) -> Result:
    started = time.perf_counter() if started is None else started
    result = Result(program.seed, program)
    try:
        reference = program.reference()
    except Exception:
        result.failures.append(("reference", traceback.format_exc(limit=6)))
        return result
    result.timings["generate"] = time.perf_counter() - started
    kernel = load_kernel(program)
    stages = [("interpreter", lambda: run_interpreter(program, kernel))] if interpret else []
    stages += [(f"compile {t}", lambda t=t: compile_only(program, kernel, t)) for t in targets]
    if gpu:
        stages.append(("gpu", lambda: run_gpu(program, kernel)))
    for stage, run in stages:
        t0 = time.perf_counter()
        try:
            out = run()
        except Exception as error:  # a crash is a finding too
            text = "".join(traceback.format_exception_only(type(error), error))
            result.failures.append((stage, f"raised {text}"))
            continue
        finally:
            result.timings[stage] = time.perf_counter() - t0
        if stage in ("interpreter", "gpu"):
            result.outputs[stage] = out
            compare(program, reference, out, result, stage)
    result.reference = reference
    return result


def _signature(result: Result) -> set:
    """What went wrong, coarsely: (stage, the exception's type or "differ") per failure."""
    return {(stage, text.split(":")[0] if text.startswith("raised") else "differ") for stage, text in result.failures}


def _variants(body: list):
    """Bodies with one statement less, or with an if/loop replaced by one of its blocks."""
    for i in reversed(range(len(body))):
        s = body[i]
        yield body[:i] + body[i + 1:]
        blocks = [s.then, s.other] if isinstance(s, If) else [s.body] if isinstance(s, Loop) else []
        for block in blocks:
            yield body[:i] + block + body[i + 1:]
        for k, block in enumerate(blocks):
            for smaller in _variants(block):
                if isinstance(s, If):
                    changed = dataclasses.replace(s, then=smaller) if k == 0 else dataclasses.replace(s, other=smaller)
                else:
                    changed = dataclasses.replace(s, body=smaller)
                yield body[:i] + [changed] + body[i + 1:]


def minimize(result: Result, interpret: bool = True, targets: tuple = (), gpu: bool = False,
             budget: int = 400) -> Result:
    """A failing program cut down statement by statement (and if/loop by block) while it
    fails the same way; the arguments stay as they are."""
    wanted = _signature(result)
    best, tries = result, 0
    improved = True
    while improved and tries < budget:
        improved = False
        for body in _variants(best.program.body):
            tries += 1
            try:
                candidate = check_program(best.program.with_body(body), interpret, targets, gpu)
            except Exception:
                continue
            if candidate.failures and _signature(candidate) <= wanted:
                best, improved = candidate, True
                break
            if tries >= budget:
                break
    return best


def write_reproducer(result: Result, directory: str) -> str:
    """seed_<N>.py (the kernel plus a launcher) and seed_<N>.npz (arguments, reference,
    outputs) in `directory`; returns the script's path."""
    os.makedirs(directory, exist_ok=True)
    program = result.program
    stem = os.path.join(directory, f"seed_{program.seed}")
    arrays, kinds = {}, []
    for p in program.params:
        kinds.append(f"{p.name}:{p.kind}:{p.dt.name if p.dt else 'int'}")
        if p.kind in ("in", "out"):
            arrays["arg_" + p.name] = _raw(p.value, p.dt)
        else:
            arrays["arg_" + p.name] = np.array(repr(p.value))
    reference = getattr(result, "reference", {})
    for name, (v, e) in reference.items():
        dt = next(p.dt for p in program.params if p.name == name)
        arrays["ref_" + name] = _raw(v, dt)
        arrays["err_" + name] = e
    for backend, outs in result.outputs.items():
        for p, o in zip([p for p in program.params if p.kind == "out"], outs):
            arrays[f"{backend}_{p.name}"] = _raw(o, p.dt)
    arrays["params"] = np.array(kinds)
    np.savez(stem + ".npz", **arrays)
    with open(stem + ".py", "w") as f:
        f.write(f"# tilec fuzz seed {program.seed}\n")
        for line in result.report().splitlines():
            if not line.startswith("==="):
                f.write(f"# {line}\n")
        f.write("\n")
        f.write(program.source)
        f.write(_LAUNCHER.format(grid=program.grid, num_warps=program.num_warps))
    return stem + ".py"


def _raw(values, dt: DType) -> np.ndarray:
    if dt.name == "bf16":
        return np.asarray(values).view(np.uint16)
    return np.asarray(values)


_LAUNCHER = '''

# ---------------------------------------------------------------------- launcher
# python seed_N.py [interpreter|gpu]: runs the kernel on the saved arguments and prints
# the output elements that differ from the saved reference (bound inf: not determined).
if __name__ == "__main__":
    import math
    import sys
    import ml_dtypes
    import numpy as np
    backend = sys.argv[1] if len(sys.argv) > 1 else "interpreter"
    data = np.load(__file__[:-3] + ".npz")
    args, outs = [], []
    for entry in data["params"]:
        name, kind, dt = str(entry).split(":")
        raw = data["arg_" + name]
        if kind not in ("in", "out"):
            args.append(eval(str(raw), {{"nan": math.nan, "inf": math.inf}}))
            continue
        value = raw.copy()  # bf16 travels as its uint16 bits
        if backend == "gpu":
            import torch
            value = torch.from_numpy(value).cuda()
            if dt == "bf16":
                value = value.view(torch.int16).view(torch.bfloat16)
        elif dt == "bf16":
            value = value.view(ml_dtypes.bfloat16)
        args.append(value)
        if kind == "out":
            outs.append((name, dt, value))
    tilec.config.config.interpret = backend != "gpu"
    kernel[({grid},)](*args, num_warps={num_warps})
    for name, dt, value in outs:
        if backend == "gpu":
            import torch
            value = (value.view(torch.int16) if dt == "bf16" else value).cpu().numpy()
        got, ref, err = np.asarray(value), data["ref_" + name], data["err_" + name]
        if dt == "bf16":
            got, ref = got.view(np.uint16).view(ml_dtypes.bfloat16), ref.view(ml_dtypes.bfloat16)
        if got.dtype.kind in "fV" or dt == "bf16":
            g, r = got.astype(np.float64), ref.astype(np.float64)
            same = (got.view(np.uint8).reshape(len(got), -1) == ref.view(np.uint8).reshape(len(ref), -1)).all(1)
            ok = np.where(err == 0, same | (np.isnan(g) & np.isnan(r)), (g == r) | (np.abs(g - r) <= err))
        else:
            ok = got == ref
        bad = np.flatnonzero(~(ok | np.isinf(err)))
        print(f"{{name}}: {{len(bad)}} elements differ")
        for i in bad[:10]:
            print(f"  [{{i}}] got {{got[i]}} expected {{ref[i]}} (bound {{err[i]:.3g}})")
'''


# ----------------------------------------------------------------------------- command line

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--show", action="store_true", help="print each program's source")
    parser.add_argument("--compile", default="", help="targets to compile for, e.g. sm_80,sm_90")
    parser.add_argument("--gpu", action="store_true", help="also run on the GPU")
    parser.add_argument("--no-interpret", action="store_true")
    parser.add_argument("--all-features", action="store_true", help="also generate the features in AVOID")
    parser.add_argument("--minimize", action="store_true", help="cut each failing program down before reporting it")
    parser.add_argument("--out", default=os.environ.get("TILEC_FUZZ_OUT"), help="write reproducers here")
    args = parser.parse_args(argv)
    from tilec.config import config
    config.cache_dir = tempfile.mkdtemp(prefix="tilec-fuzz-cache-")
    targets = tuple(t for t in args.compile.split(",") if t)
    failed = compared = exact = skipped = 0
    started = time.perf_counter()
    for seed in range(args.seed, args.seed + args.count):
        result = check(seed, not args.no_interpret, targets, args.gpu,
                       frozenset() if args.all_features else AVOID)
        if args.show:
            print(result.program.source)
        compared += result.compared
        exact += result.exact
        skipped += result.skipped
        if not result.ok:
            failed += 1
            if args.minimize:
                result = minimize(result, not args.no_interpret, targets, args.gpu)
            print(result.report(), flush=True)
            if args.out:
                print("reproducer:", write_reproducer(result, args.out))
    total = compared + skipped
    print(f"{args.count} programs, {failed} failed, {time.perf_counter() - started:.1f} s; output elements: "
          f"{compared} compared ({exact} exactly), {skipped} not determined"
          + (f" ({100 * skipped / total:.1f}%)" if total else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
