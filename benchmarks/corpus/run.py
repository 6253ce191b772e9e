r"""A corpus of kernels as Triton users write them, each run on tilec and on Triton in one
process, with a correctness check, a table and a summary.

    python benchmarks/corpus/run.py                    # every kernel, on the GPU, beside Triton
    python benchmarks/corpus/run.py --only softmax,rms  # kernels whose file name matches
    python benchmarks/corpus/run.py --quick            # one small shape per case
    python benchmarks/corpus/run.py --interpret        # tilec only, NumPy interpreter, tiny shapes
    python benchmarks/corpus/run.py --compile-only sm_90 [--quick]   # tilec only: compile, launch nothing
    python benchmarks/corpus/run.py --gpus 4 --deadline 570           # spread over 4 GPUs, stop in time
    python benchmarks/corpus/run.py --match '1000x|x1000'             # cases whose "file: name [shape]" matches
    python benchmarks/corpus/run.py --only persistent --match 'K-contiguous \[8192x8192x512' --per-config
                                                      # one row per autotune config of the kernels each case launches

Each kernel file in this folder (`k_*.py`) is plain Triton code: `import triton`,
`import triton.language as tl`, `@triton.jit` kernels and the host wrappers people write
around them. It is loaded twice, untouched on disk: as it is (Triton), and with its
imports of the language pointed at tilec (the same rewriting as
benchmarks/bench_tutorials.py). Its `cases(device, size)` function yields the cases to
run, `size` being "full" (the benchmark's shapes), "quick" (one small shape) or "tiny"
(the interpreter's):

    yield Case(name="softmax fp32", shape="4096x4096",
               inputs=lambda: {"x": torch.randn(4096, 4096, device=device)},
               run=lambda module, inputs: lambda: module.softmax(inputs["x"]),
               reference=lambda inputs: torch.softmax(inputs["x"].double(), -1),
               atol=1e-6, rtol=1e-5, bytes=2 * 4096 * 4096 * 4)

`inputs()` is made once and shared by both backends (a wrapper that writes into an
input must copy it first); `run(module, inputs)` returns the callable that is checked and
timed; its result (a tensor or a tuple of tensors) is compared with `reference(inputs)`
elementwise (|got - want| <= atol + rtol * |want|, NaN where NaN), unless the case gives
its own `check(result, inputs)` returning None or what is wrong. `bytes` or `flops`
(optional) turn the time into a throughput. `needs` (optional) names a capability,
(8, 9) say, below which the case is skipped.

Timing: `tilec.testing.do_bench` (median; L2 flushed before each call), the same timer
for both backends, after a first call whose wall time (compilation included) is the
"first call" column and once both results were checked. Each backend is timed twice, in
the order tilec, Triton, Triton, tilec, and keeps the faster median: a card's clock drifts
as it heats (a run of matmuls changed Triton's own median by 10% between neighbouring
cases), and this order gives both backends the same share of it. Ratio = Triton time /
tilec time (above 1: tilec faster). The summary gives the geometric mean of the ratios,
the minimum, and every case under 0.95.

`--gpus N` cuts the corpus into parts of a few cases (`--only FILE --part K/N`) and runs
them in child processes, one per GPU at a time, each child comparing tilec and Triton in
its own process on its own card; the rows come back as JSON and make one table. With
`--deadline SECONDS`, parts still running then are stopped and what was not finished is
printed as the `--only`/`--part` arguments that run it later. The children share the
host: one compiling (autotune workers on many cores) can delay another's launches, and
a host-bound case then looks slow. `--recheck 0.95` times the cases under 0.95 again
afterwards, one child at a time with the other cards idle, and reports those times
(marked "rechecked alone" in the table).

`--warm N` (with `--gpus`) first runs every part without timing (`--no-time`: each
backend's first call, checked), N children at once spread over the GPUs, so that both
compilers' on-disk caches hold every kernel and autotune config before the timed pass
starts: compiling is most of a cold run's time (Triton compiles an autotuner's configs
one after another) and it then runs on all the host's cores at once. The timed pass is
unchanged, but its "first call" column is then a warm-cache first call (marked in the
table's header). Warm children start only in the first third of `--deadline`; with
`--no-time` too, only the warm pass runs (the whole deadline), to fill the caches of a
machine whose later runs (each under a time limit) then time the parts. (An
autotuner with `cache_results=True` would keep the choice it made while the warm
children shared the GPU; no corpus kernel asks for that.)
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import glob
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import traceback
import types
from dataclasses import dataclass, field
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from bench_tutorials import ImportRewriter, Unavailable  # noqa: E402
from case import Case  # noqa: E402
from configs import autotuned, launched_configs, only_config, resources  # noqa: E402


@dataclass
class Outcome:
    status: str = "-"          # ok, FAIL, ERR, skip
    ms: float | None = None
    first_s: float | None = None
    detail: str = ""


@dataclass
class Row:
    file: str
    case: Case
    results: dict = field(default_factory=dict)  # backend -> Outcome

    def ratio(self) -> float | None:
        mine, theirs = self.results.get("tilec"), self.results.get("triton")
        if not (mine and theirs and mine.ms and theirs.ms and mine.status == "ok" and theirs.status == "ok"):
            return None
        return theirs.ms / mine.ms


def load(path: str, backend: str) -> types.ModuleType:
    """The kernel file as a module, its language imports pointed at `backend`'s."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    tree = ast.fix_missing_locations(ImportRewriter(to_tilec=backend == "tilec").visit(tree))
    name = f"corpus_{backend}_{os.path.splitext(os.path.basename(path))[0]}"
    module = types.ModuleType(name)
    module.__file__ = path
    module.__dict__.update(__unavailable__=Unavailable, __corpus_backend__=backend)
    sys.modules[name] = module
    exec(compile(tree, path, "exec"), module.__dict__)
    return module


def compare(got: Any, want: Any, atol: float, rtol: float) -> str | None:
    """None when every output is within atol + rtol * |want| of the reference."""
    import torch
    gots = got if isinstance(got, (tuple, list)) else (got,)
    wants = want if isinstance(want, (tuple, list)) else (want,)
    if len(gots) != len(wants):
        return f"{len(gots)} outputs, the reference has {len(wants)}"
    for index, (g, w) in enumerate(zip(gots, wants)):
        g = torch.as_tensor(g).detach().to("cpu", torch.float64)
        w = torch.as_tensor(w).detach().to("cpu", torch.float64)
        if g.shape != w.shape:
            return f"output {index} has shape {list(g.shape)}, the reference {list(w.shape)}"
        nan = torch.isnan(w)
        if not torch.equal(torch.isnan(g), nan):
            return f"output {index}: NaN where the reference has none (or the reverse)"
        error = (g - w).abs().masked_fill(nan, 0)
        bound = atol + rtol * w.abs().masked_fill(nan, 0)
        bad = error > bound
        if bad.any():
            worst = int((error - bound).argmax())
            return (f"output {index}: {int(bad.sum())} of {w.numel()} elements off, worst |{g.flatten()[worst]:.6g} - "
                    f"{w.flatten()[worst]:.6g}| > {bound.flatten()[worst]:.3g}")
    return None


def run_case(case: Case, module: types.ModuleType, inputs: dict, reference: Any,
             synchronize: Callable[[], None]) -> tuple[Outcome, Callable[[], Any] | None]:
    """The outcome of the first call of the case's callable (timed with its compilation,
    and checked), and the callable to time later (None where that call failed)."""
    try:
        fn = case.run(module, inputs)
        start = time.perf_counter()
        result = fn()
        synchronize()
        first = time.perf_counter() - start
    except Exception as error:
        lines = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()
        return Outcome("ERR", detail=" | ".join(line.strip() for line in lines[:3])[:400]), None
    problem = case.check(result, inputs) if case.check else compare(result, reference, case.atol, case.rtol)
    return Outcome("FAIL" if problem else "ok", first_s=first, detail=problem or ""), fn


# Each backend's timing runs, in this order of (round, backend index): A B B A.
_TIMING_ORDER = ((0, 0), (0, 1), (1, 1), (1, 0))


def time_cases(timed: dict[str, Callable[[], Any]], outcomes: dict[str, Outcome]) -> None:
    """Sets each backend's `ms` to the faster of its two medians, the backends timed in
    the order A B B A (see the module's docstring)."""
    from tilec.testing import do_bench
    names = list(timed)
    for _, index in _TIMING_ORDER:
        if index < len(names):
            name = names[index]
            ms = do_bench(timed[name], return_mode="median")
            outcomes[name].ms = ms if outcomes[name].ms is None else min(outcomes[name].ms, ms)


def throughput(case: Case, ms: float | None) -> str:
    if not ms:
        return "-"
    if case.flops:
        return f"{case.flops / ms / 1e9:.0f} TFLOP/s"
    if case.bytes:
        return f"{case.bytes / ms / 1e6:.0f} GB/s"
    return "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="comma-separated parts of file names to run")
    parser.add_argument("--quick", action="store_true", help="one small shape per case")
    parser.add_argument("--interpret", action="store_true", help="tilec only, in the interpreter, tiny shapes")
    parser.add_argument("--no-triton", action="store_true", help="tilec only, on the GPU")
    parser.add_argument("--compile-only", metavar="TARGET", default="",
                        help="tilec only, without a GPU: compile every kernel (every autotune config) for TARGET "
                             "at the full (or --quick) shapes, launch nothing")
    parser.add_argument("--match", default="", metavar="REGEX",
                        help="only the cases whose 'file: name [shape]' the regular expression finds")
    parser.add_argument("--part", default="", metavar="K/N",
                        help="run only the cases whose index is K modulo N (of the files chosen)")
    parser.add_argument("--gpus", type=int, default=0,
                        help="run the corpus in parts, one child process per GPU at a time, and merge the rows")
    parser.add_argument("--deadline", type=float, default=0.0,
                        help="with --gpus: stop the parts still running after this many seconds")
    parser.add_argument("--recheck", type=float, default=0.0, metavar="RATIO",
                        help="with --gpus: time the cases under RATIO again afterwards, one process at a time "
                             "(the other cards idle), and report those times")
    parser.add_argument("--per-config", action="store_true",
                        help="one row per config of each @autotune kernel the case launches (the others autotuned "
                             "as usual), each followed by both compilers' registers, spill bytes and shared memory, each through the case's own call; single process only")
    parser.add_argument("--warm", type=int, default=0, metavar="N",
                        help="with --gpus: first run every part untimed, N children at once, to fill the compile "
                             "caches before the timed pass")
    parser.add_argument("--no-time", action="store_true",
                        help="check each case's first call on each backend, time nothing")
    parser.add_argument("--rows-json", default="", help=argparse.SUPPRESS)
    parser.add_argument("--cases", default="", help=argparse.SUPPRESS)  # a JSON list of "name [shape]" to run
    args = parser.parse_args()
    if args.per_config and (args.gpus or args.compile_only):
        parser.error("--per-config runs in one process, without --gpus or --compile-only")
    if args.warm and not args.gpus:
        parser.error("--warm goes with --gpus")
    if args.gpus:
        return run_on_gpus(args)
    if args.interpret:
        os.environ["TILEC_INTERPRET"] = "1"
    if args.compile_only:
        return compile_only(args)
    import torch
    gpu = torch.cuda.is_available() and not args.interpret
    device = "cuda" if gpu else "cpu"
    size = "tiny" if not gpu else ("quick" if args.quick else "full")
    capability = torch.cuda.get_device_capability() if gpu else None
    backends = ["tilec"] + ([] if (not gpu or args.no_triton) else ["triton"])
    synchronize = torch.cuda.synchronize if gpu else (lambda: None)
    if gpu:
        print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    files = chosen_files(args.only)
    part, parts = (int(n) for n in args.part.split("/")) if args.part else (0, 1)
    only_cases = set(json.loads(args.cases)) if args.cases else set()
    rows: list[Row] = []
    for path in files:
        file = os.path.basename(path)[2:-3]
        modules = {}
        for backend in backends:
            try:
                modules[backend] = load(path, backend)
            except Exception as error:
                modules[backend] = error
        source = modules["tilec"]
        if isinstance(source, Exception):
            print(f"{file}: cannot load for tilec: {source}", flush=True)
            continue
        chosen = [case for case in source.cases(device, size)
                  if (not only_cases or f"{case.name} [{case.shape}]" in only_cases) and matches(args.match, file, case)]
        for index, case in enumerate(chosen):
            if index % parts != part:
                continue
            row = Row(file, case)
            rows.append(row)
            if case.needs and (capability is None or tuple(capability) < tuple(case.needs)) and gpu:
                row.results = {b: Outcome("skip", detail=f"needs sm_{case.needs[0]}{case.needs[1]}") for b in backends}
                continue
            torch.manual_seed(0)
            inputs = case.inputs()
            reference = case.reference(inputs) if case.reference else None
            if args.per_config:
                rows.pop()  # one row per config instead
                others = [modules[b] for b in backends[1:] if not isinstance(modules[b], Exception)]
                first = lambda: (case.run(modules["tilec"], inputs)(), synchronize())  # noqa: E731
                for kernel, index, label in launched_configs(modules["tilec"], others, first):
                    row = Row(file, dataclasses.replace(case, name=f"{case.name} ({kernel}: {label})"))
                    rows.append(row)
                    launched = {backend: [] for backend in backends if not isinstance(modules[backend], Exception)}
                    with contextlib.ExitStack() as stack:
                        for backend in launched:
                            stack.enter_context(only_config(autotuned(modules[backend])[kernel], index,
                                                            launched[backend]))
                        run_row(row, modules, backends, inputs, reference, synchronize, gpu)
                    used = ", ".join(f"{b} {resources(k[0])}" for b, k in launched.items()
                                     if k and resources(k[0]) != "?/?/?")  # (not the interpreter's)
                    if used:
                        print(f"    regs/spill/smem: {used}", flush=True)
                continue
            run_row(row, modules, backends, inputs, reference, synchronize, gpu and not args.no_time)
            if args.rows_json:
                save_rows(args.rows_json, rows)
    print()
    print(table(rows, backends))
    print()
    print(summary(rows, backends))
    failed = [r for r in rows if r.results.get("tilec") and r.results["tilec"].status in ("FAIL", "ERR")]
    return 1 if failed else 0


def run_row(row: Row, modules: dict, backends: list[str], inputs: dict, reference: Any,
            synchronize: Callable[[], None], timing: bool) -> None:
    """Runs the row's case on each backend (checked; timed where `timing`) and prints the row."""
    timed = {}
    for backend in backends:
        module = modules[backend]
        if isinstance(module, Exception):
            row.results[backend] = Outcome("ERR", detail=f"load: {module}")
            continue
        row.results[backend], fn = run_case(row.case, module, inputs, reference, synchronize)
        if timing and row.results[backend].status == "ok":
            timed[backend] = fn
    time_cases(timed, row.results)
    print("  " + format_row(row, backends), flush=True)


def matches(pattern: str, file: str, case: Case) -> bool:
    """Whether `--match`'s regular expression finds "file: name [shape]" (no pattern: all)."""
    return not pattern or re.search(pattern, f"{file}: {case.name} [{case.shape}]") is not None


def chosen_files(only: str) -> list[str]:
    """The kernel files whose names contain one of the comma-separated parts of `only`."""
    files = sorted(glob.glob(os.path.join(HERE, "k_*.py")))
    if only:
        files = [f for f in files if any(w in os.path.basename(f) for w in only.split(","))]
    return files


def save_rows(path: str, rows: list[Row]) -> None:
    """Writes the rows a child has finished (atomically: the parent may read it at any time)."""
    data = [{"file": row.file, "name": row.case.name, "shape": row.case.shape, "flops": row.case.flops,
             "bytes": row.case.bytes, "results": {b: vars(o) for b, o in row.results.items()}} for row in rows]
    with open(path + ".tmp", "w") as f:
        json.dump(data, f)
    os.replace(path + ".tmp", path)


def load_rows(path: str) -> list[Row]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        data = json.load(f)
    return [Row(item["file"], Case(name=item["name"], shape=item["shape"], inputs=None, run=None,
                                   flops=item["flops"], bytes=item["bytes"]),
                {b: Outcome(**o) for b, o in item["results"].items()}) for item in data]


PART_SIZE = 6  # cases per child process: small enough to spread the big files over the GPUs


def run_on_gpus(args) -> int:
    """Runs the chosen files in parts of about PART_SIZE cases, each in a child process on
    one GPU (CUDA_VISIBLE_DEVICES), at most one child per GPU, the parts with the most
    cases first (after an untimed pass of them all, `--warm` children at once, where
    asked); then prints the merged table and summary."""
    import tempfile
    units = []
    for path in chosen_files(args.only):
        file = os.path.basename(path)[2:-3]
        count = sum(matches(args.match, file, case)
                    for case in load(path, "tilec").cases("cpu", "quick" if args.quick else "full"))
        if not count:
            continue
        parts = max(1, math.ceil(count / PART_SIZE))
        units += [(count / parts, os.path.basename(path), f"{k}/{parts}") for k in range(parts)]
    units.sort(key=lambda unit: -unit[0])
    workdir = tempfile.mkdtemp(prefix="corpus-")
    start = time.monotonic()
    lock = threading.Lock()
    visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    gpus = visible[:args.gpus] if visible else [str(gpu) for gpu in range(args.gpus)]

    def run_part(file: str, part: str, gpu: str, out: str, extra: list[str], workers: int,
                 left: float | None) -> tuple[str, bool]:
        """Runs one part in a child process on `gpu`: (its output, whether it finished)."""
        command = [sys.executable, os.path.abspath(__file__), "--only", file, "--part", part, "--rows-json", out]
        command += ["--quick"] if args.quick else []
        command += ["--match", args.match] if args.match else []
        command += ["--no-triton"] if args.no_triton else []
        command += ["--interpret"] if args.interpret else []
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu, TILEC_COMPILE_WORKERS=str(workers))
        # A session of its own, so that the compile workers it forks stop with it.
        child = subprocess.Popen(command + extra, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, start_new_session=True)
        try:
            return child.communicate(timeout=left)[0], True
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, 9)
            return child.communicate()[0], False

    def take(queue: list) -> tuple[str, str] | None:
        """The next (file, part) of `queue`, None when it is empty."""
        with lock:
            return queue.pop(0) if queue else None

    def run_threads(target, count: int) -> None:
        threads = [threading.Thread(target=target, args=(gpus[i % len(gpus)],)) for i in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    if args.warm:
        warm_pending = [(file, part) for _, file, part in units]
        warm_until = (args.deadline if args.no_time else args.deadline / 3) if args.deadline else None
        warm_problems = []

        def warmer(gpu: str) -> None:
            while (unit := take(warm_pending)) is not None:
                file, part = unit
                elapsed = time.monotonic() - start
                if warm_until is not None and elapsed > warm_until:
                    continue
                out = os.path.join(workdir, f"warm-{file}-{part.replace('/', 'of')}.json")
                workers = max(1, (os.cpu_count() or 1) // args.warm)
                _, complete = run_part(file, part, gpu, out, ["--no-time"], workers,
                                       None if warm_until is None else warm_until - elapsed + 60)
                rows = load_rows(out)
                bad = sum(any(o.status in ("FAIL", "ERR") for o in row.results.values()) for row in rows)
                with lock:
                    if bad or not complete:
                        warm_problems.append((file, part))
                    print(f"[warm, gpu {gpu}, {time.monotonic() - start:.0f} s] {file} part {part}: "
                          f"{len(rows)} cases" + (f", {bad} failed" if bad else "")
                          + ("" if complete else " (stopped)"), flush=True)

        run_threads(warmer, args.warm)
        print(f"warm pass: {time.monotonic() - start:.0f} s", flush=True)
        if args.no_time:
            return 1 if warm_problems else 0

    pending = [(file, part) for _, file, part in units]
    workers = max(1, (os.cpu_count() or 1) // args.gpus)
    finished, unfinished = [], []

    def worker(gpu: str) -> None:
        while (unit := take(pending)) is not None:
            file, part = unit
            if args.deadline and time.monotonic() - start > args.deadline:
                with lock:
                    unfinished.append((file, part))
                continue
            out = os.path.join(workdir, f"{file}-{part.replace('/', 'of')}.json")
            left = args.deadline - (time.monotonic() - start) if args.deadline else None
            text, complete = run_part(file, part, gpu, out, [], workers, left)
            rows = load_rows(out)
            with lock:
                finished.extend(rows)
                if not complete:
                    unfinished.append((file, part))
                lines = [line for line in text.splitlines() if line.startswith("  ")]
                print(f"[gpu {gpu}, {time.monotonic() - start:.0f} s] {file} part {part}"
                      + ("" if complete else " (stopped at the deadline)"), flush=True)
                print("\n".join(lines), flush=True)

    run_threads(worker, len(gpus))
    if args.recheck:
        finished = _recheck(args, finished, gpus[0], workdir, start)
    backends = ["tilec"] + ([] if args.no_triton else ["triton"])
    order = {(os.path.basename(p)[2:-3]): i for i, p in enumerate(chosen_files(""))}
    finished.sort(key=lambda row: order.get(row.file, 0))
    print()
    print(table(finished, backends, warm=bool(args.warm)))
    print()
    print(summary(finished, backends))
    if unfinished:
        print("not finished (run later with these arguments):")
        for file, part in sorted(unfinished):
            print(f"  --only {file} --part {part}" + (f" --match {args.match!r}" if args.match else ""))
    failed = [r for r in finished if r.results.get("tilec") and r.results["tilec"].status in ("FAIL", "ERR")]
    return 1 if failed or unfinished else 0


def _recheck(args, rows: list[Row], gpu: str, workdir: str, start: float) -> list[Row]:
    """Times the rows under `args.recheck` again, one file at a time in a child on `gpu`
    (nothing else running), and puts the new rows in their place."""
    slow: dict[str, list[Row]] = {}
    for row in rows:
        ratio = row.ratio()
        if ratio is not None and ratio < args.recheck:
            slow.setdefault(row.file, []).append(row)
    replaced = {}
    for file, file_rows in slow.items():
        left = args.deadline - (time.monotonic() - start) if args.deadline else None
        if left is not None and left < 10:
            print(f"recheck of {file} skipped: the deadline", flush=True)
            continue
        out = os.path.join(workdir, f"recheck-{file}.json")
        names = [f"{row.case.name} [{row.case.shape}]" for row in file_rows]
        command = [sys.executable, os.path.abspath(__file__), "--only", f"k_{file}.py", "--cases", json.dumps(names),
                   "--rows-json", out] + (["--quick"] if args.quick else [])
        child = subprocess.Popen(command, env=dict(os.environ, CUDA_VISIBLE_DEVICES=gpu), stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            text = child.communicate(timeout=left)[0]
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, 9)
            text = child.communicate()[0]
        print(f"[recheck alone, {time.monotonic() - start:.0f} s] {file}", flush=True)
        print("\n".join(line for line in text.splitlines() if line.startswith("  ")), flush=True)
        for row in load_rows(out):
            row.case.name += " (rechecked alone)"
            replaced[(row.file, row.case.name[:-len(" (rechecked alone)")], row.case.shape)] = row
    return [replaced.get((row.file, row.case.name, row.case.shape), row) for row in rows]


def compile_only(args) -> int:
    """Compiles every case's kernels for `args.compile_only` (CPU tensors at the full or
    quick shapes stand in for the GPU's), reporting each case as compiled or failed."""
    import torch
    from bench_tutorials import COMPILE_NOTES, install_compile_only
    install_compile_only(args.compile_only, None)
    files = chosen_files(args.only)
    failures = 0
    for path in files:
        file = os.path.basename(path)[2:-3]
        module = load(path, "tilec")
        for case in module.cases("cpu", "quick" if args.quick else "full"):
            if not matches(args.match, file, case):
                continue
            torch.manual_seed(0)
            COMPILE_NOTES.clear()
            try:
                case.run(module, case.inputs())()
                status = "compiled" + (f" ({'; '.join(dict.fromkeys(COMPILE_NOTES))})" if COMPILE_NOTES else "")
            except Exception as error:
                failures += 1
                lines = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()
                status = "FAILED: " + " | ".join(line.strip() for line in lines[:3])[:400]
            print(f"{file}: {case.name} [{case.shape}]: {status}", flush=True)
    print(f"{failures} failed")
    return 1 if failures else 0


def format_row(row: Row, backends: list[str]) -> str:
    parts = [f"{row.file}: {row.case.name} [{row.case.shape}]"]
    for backend in backends:
        outcome = row.results.get(backend, Outcome())
        text = f"{backend} {outcome.status}"
        if outcome.ms:
            text += f" {outcome.ms * 1e3:.1f} us ({throughput(row.case, outcome.ms)})"
        if outcome.detail:
            text += f" -- {outcome.detail}"
        parts.append(text)
    ratio = row.ratio()
    if ratio:
        parts.append(f"Triton/tilec {ratio:.2f}x")
    return "; ".join(parts)


def table(rows: list[Row], backends: list[str], warm: bool = False) -> str:
    header = ["kernel", "case", "shape", "correct " + "/".join(backends), "tilec", "Triton", "Triton/tilec",
              "first call tilec/Triton" + (" (warm caches)" if warm else "")]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        mine, theirs = row.results.get("tilec", Outcome()), row.results.get("triton", Outcome())
        ratio = row.ratio()
        lines.append("| " + " | ".join([
            row.file, row.case.name, row.case.shape, "/".join(row.results.get(b, Outcome()).status for b in backends),
            throughput(row.case, mine.ms) if mine.ms else "-", throughput(row.case, theirs.ms) if theirs.ms else "-",
            f"{ratio:.2f}" if ratio else "-",
            "/".join(f"{o.first_s:.2f}s" if o.first_s is not None else "-" for o in (mine, theirs))]) + " |")
    return "\n".join(lines)


def summary(rows: list[Row], backends: list[str]) -> str:
    statuses = {}
    for row in rows:
        status = row.results.get("tilec", Outcome()).status
        statuses[status] = statuses.get(status, 0) + 1
    lines = [f"tilec: {len(rows)} cases: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))]
    ratios = [(row.ratio(), row) for row in rows if row.ratio()]
    if ratios:
        geomean = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
        low, low_row = min(ratios, key=lambda pair: pair[0])
        lines.append(f"Triton/tilec over {len(ratios)} timed cases: geometric mean {geomean:.3f}, minimum {low:.2f} "
                     f"({low_row.file}: {low_row.case.name} [{low_row.case.shape}])")
        under = sorted((pair for pair in ratios if pair[0] < 0.95), key=lambda pair: pair[0])
        lines.append(f"under 0.95: {len(under)}")
        lines += [f"  {r:.2f}  {row.file}: {row.case.name} [{row.case.shape}]" for r, row in under]
    for row in rows:
        for backend, outcome in row.results.items():
            if outcome.status in ("FAIL", "ERR"):
                lines.append(f"{backend} {outcome.status}: {row.file}: {row.case.name} [{row.case.shape}] -- "
                             f"{outcome.detail}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
