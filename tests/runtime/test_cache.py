"""The on-disk cache and specialisation: hits, misses, keys, atomic and concurrent writes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend import compiler
from tilec.runtime import cache
from tilec.runtime.jit import JITFunction


def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.fixture
def compile_counter(monkeypatch):
    calls = []
    real = compiler.compile_specialized

    def counting(fn, specs, options):
        calls.append((fn.__name__, tuple(s.key() for s in specs), options))
        return real(fn, specs, options)

    monkeypatch.setattr(compiler, "compile_specialized", counting)
    return calls


def warm(fn: JITFunction, n: int = 4096, block: int = 256, **options):
    return fn.warmup("*fp32:16", "*fp32:16", "*fp32:16", n, BLOCK=block, grid=(1,), **options)


def test_miss_then_hit_across_fresh_functions(fresh_cache, compile_counter):
    first = warm(JITFunction(add_kernel))
    assert len(compile_counter) == 1
    files = list(fresh_cache.rglob("*.tilec"))
    assert len(files) == 1
    # A new JITFunction has an empty in-memory cache: the kernel must come from disk.
    second = warm(JITFunction(add_kernel))
    assert len(compile_counter) == 1
    assert second.asm["cubin"] == first.asm["cubin"]
    assert second.asm["ptx"] == first.asm["ptx"]
    assert second.n_regs == first.n_regs > 0


@pytest.mark.parametrize("change", [
    dict(n=4097),              # no longer divisible by 16
    dict(n=1),                 # specialised to the constant 1
    dict(block=512),           # constexpr value
    dict(num_warps=8),         # launch option
])
def test_specialisation_changes_the_key(fresh_cache, compile_counter, change):
    fn = JITFunction(add_kernel)
    warm(fn)
    options = dict(n=4096, block=256)
    options.update(change)
    warm(fn, **options)
    assert len(compile_counter) == 2
    assert compile_counter[0][1:] != compile_counter[1][1:]


def test_equal_specialisations_share_a_kernel(fresh_cache, compile_counter):
    fn = JITFunction(add_kernel)
    warm(fn, n=4096)
    warm(fn, n=8192)  # also divisible by 16, same type: same kernel
    assert len(compile_counter) == 1


def test_divisibility_reaches_the_ir(fresh_cache):
    fn = JITFunction(add_kernel)
    aligned = warm(fn, n=4096)
    unaligned = warm(fn, n=4097)
    assert aligned.asm["ttir"].count("tile.divisibility = 16") == 4  # three pointers and n
    assert unaligned.asm["ttir"].count("tile.divisibility = 16") == 3
    # 256 elements over 128 threads: two per thread, one 8-byte access when n allows it.
    assert aligned.asm["ptx"].count("ld.global.v2.b32") == 2
    assert "ld.global.v" not in unaligned.asm["ptx"]  # the mask is no longer constant over 2 lanes


def test_source_change_misses(fresh_cache, compile_counter, tmp_path):
    body = textwrap.dedent('''
        import tilec.language as tl
        def kernel(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) {op} 1.0)
    ''')
    for i, op in enumerate("+*"):
        path = tmp_path / f"kmod{i}.py"
        path.write_text(body.format(op=op))
        sys.path.insert(0, str(tmp_path))
        try:
            mod = __import__(f"kmod{i}")
        finally:
            sys.path.remove(str(tmp_path))
        JITFunction(mod.kernel).warmup("*fp32:16", BLOCK=128, grid=(1,))
    assert len(compile_counter) == 2


def test_corrupt_entry_is_recompiled(fresh_cache, compile_counter):
    warm(JITFunction(add_kernel))
    (entry,) = fresh_cache.rglob("*.tilec")
    entry.write_bytes(b"\x00garbage")
    kernel = warm(JITFunction(add_kernel))
    assert len(compile_counter) == 2
    assert kernel.asm["cubin"]
    assert compiler.CompiledKernel.deserialize(entry.read_bytes()).asm["cubin"] == kernel.asm["cubin"]


def test_store_is_atomic(fresh_cache, monkeypatch):
    kernel = warm(JITFunction(add_kernel))
    key = "ab" + "0" * 62

    def failing_replace(src, dst):
        raise OSError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", failing_replace)
        cache.store(key, kernel)  # must not raise, must not leave a partial entry or temp file
    directory = fresh_cache / key[:2]
    assert not any(directory.iterdir()) if directory.exists() else True
    cache.store(key, kernel)
    assert cache.load(key).asm["cubin"] == kernel.asm["cubin"]
    assert [p.name for p in directory.iterdir()] == [key + ".tilec"]


def test_serialization_round_trip(fresh_cache):
    kernel = warm(JITFunction(add_kernel))
    again = compiler.CompiledKernel.deserialize(kernel.serialize())
    assert again.asm == kernel.asm
    assert again.metadata == kernel.metadata


def test_concurrent_processes(fresh_cache):
    """Several processes compiling the same kernel into one cache all succeed and agree."""
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import tilec
        from tilec.config import config
        config.cache_dir = {str(fresh_cache)!r}
        from tilec.runtime.jit import JITFunction
        from test_cache import add_kernel
        k = JITFunction(add_kernel).warmup("*fp32:16", "*fp32:16", "*fp32:16", 4096, BLOCK=256, grid=(1,))
        print(len(k.asm["cubin"]))
    ''')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
             for _ in range(4)]
    outputs = [p.communicate(timeout=240) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err.decode()
    sizes = {out.strip() for out, _ in outputs}
    assert len(sizes) == 1 and int(sizes.pop()) > 0
    entries = list(fresh_cache.rglob("*.tilec"))
    assert len(entries) == 1
    assert not list(fresh_cache.rglob("*.tmp"))
    assert compiler.CompiledKernel.deserialize(entries[0].read_bytes()).asm["cubin"]


def test_compiler_fingerprint_is_in_the_key():
    a = cache.kernel_key("src", ("x",), "opts")
    assert a == cache.kernel_key("src", ("x",), "opts")
    assert a != cache.kernel_key("src2", ("x",), "opts")
    assert a != cache.kernel_key("src", ("y",), "opts")
    assert a != cache.kernel_key("src", ("x",), "opts2")


def test_callee_source_is_in_the_hash(tmp_path):
    def make(op):
        src = textwrap.dedent(f'''
            import tilec
            import tilec.language as tl
            @tilec.jit
            def helper(x):
                return x {op} 2.0
            @tilec.jit
            def kernel(p, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(p + offs, helper(tl.load(p + offs)))
        ''')
        path = tmp_path / f"callee_{'add' if op == '+' else 'mul'}.py"
        path.write_text(src)
        sys.path.insert(0, str(tmp_path))
        try:
            return __import__(path.stem).kernel
        finally:
            sys.path.remove(str(tmp_path))
    assert make("+").cache_hash() != make("*").cache_hash()


def test_interpreter_ignores_cache(monkeypatch, fresh_cache):
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    fn = JITFunction(add_kernel)
    x = np.arange(100, dtype=np.float32)
    out = np.full(100, np.nan, dtype=np.float32)
    fn[(1,)](x, x, out, 100, BLOCK=128)
    np.testing.assert_array_equal(out, 2 * x)
    assert not fresh_cache.exists() or not list(fresh_cache.rglob("*.tilec"))


# ----------------------------------------------------------------------------- tilec.compile


SIGNATURE = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32:16"}


def test_tilec_compile_reads_and_writes_the_disk_cache(fresh_cache, compile_counter):
    first = tilec.compile(JITFunction(add_kernel), signature=SIGNATURE, constexprs={"BLOCK": 256})
    assert len(compile_counter) == 1
    assert len(list(fresh_cache.rglob("*.tilec"))) == 1
    # A new function object: nothing in memory, so only the disk can answer.
    second = tilec.compile(JITFunction(add_kernel), signature=SIGNATURE, constexprs={"BLOCK": 256})
    assert len(compile_counter) == 1
    assert second.asm["cubin"] == first.asm["cubin"] and second.n_regs == first.n_regs
    # warmup of the same specialisation finds the same entry ...
    warm(JITFunction(add_kernel))
    assert len(compile_counter) == 1
    # ... and other options are other kernels.
    tilec.compile(JITFunction(add_kernel), signature=SIGNATURE, constexprs={"BLOCK": 256}, num_warps=8)
    assert len(compile_counter) == 2


def test_tilec_compile_still_checks_its_arguments(fresh_cache):
    with pytest.raises(ValueError, match="neither signature nor constexprs"):
        tilec.compile(JITFunction(add_kernel), signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 256})
    with pytest.raises(TypeError, match="expects a @tilec.jit function"):
        tilec.compile(add_kernel, signature=SIGNATURE, constexprs={"BLOCK": 256})
    with pytest.raises(ValueError, match="target must look like"):
        tilec.compile(JITFunction(add_kernel), signature=SIGNATURE, constexprs={"BLOCK": 256}, target="hopper")


# ----------------------------------------------------------------------------- a cache hit in a new process

_HIT_SCRIPT = textwrap.dedent('''
    import builtins, io, json, os, subprocess, sys, time
    sys.path.insert(0, {tests!r})
    start = time.perf_counter()
    import tilec, tilec.language as tl
    from tilec.runtime.jit import JITFunction
    imported = time.perf_counter()
    SIGNATURE = {signature!r}

    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    if sys.argv[1] == "hit":
        def no_subprocess(*args, **kwargs):
            raise AssertionError(f"a cache hit ran a program: {{args}}")
        subprocess.Popen = subprocess.run = no_subprocess
        tilec_dir = os.path.dirname(tilec.__file__)
        read = []
        real_open = io.open
        def recording_open(file, *args, **kwargs):
            if str(file).endswith(".py") and str(file).startswith(tilec_dir):
                read.append(str(file))
            return real_open(file, *args, **kwargs)
        io.open = builtins.open = recording_open
    fn = JITFunction(add_kernel)
    fn.warmup("*fp32:16", "*fp32:16", "*fp32:16", 4096, BLOCK=256, grid=(1,))
    tilec.compile(JITFunction(add_kernel), signature=SIGNATURE, constexprs={{"BLOCK": 512}})
    done = time.perf_counter()
    print(json.dumps({{"mlir": sorted(m for m in sys.modules if m == "mlir" or m.startswith("mlir.")),
                       "read": read if sys.argv[1] == "hit" else [],
                       "import_ms": 1000 * (imported - start), "hit_ms": 1000 * (done - imported)}}))
''')


def test_a_hit_in_a_new_process_imports_no_mlir_runs_no_tool_and_reads_no_tilec_source(fresh_cache, tmp_path):
    script = tmp_path / "hit.py"
    script.write_text(_HIT_SCRIPT.format(tests=os.path.dirname(__file__), signature=SIGNATURE))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), TILEC_CACHE_DIR=str(fresh_cache))
    env.pop("TILEC_ALWAYS_COMPILE", None)

    def run(mode):
        out = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, env=env,
                             timeout=240)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    run("fill")
    assert len(list(fresh_cache.rglob("*.tilec"))) == 2
    hit = run("hit")
    assert hit["mlir"] == []
    assert hit["read"] == []
    assert len(list(fresh_cache.rglob("*.tilec"))) == 2  # nothing was compiled again


def test_the_fingerprint_reads_no_file_and_runs_no_tool(monkeypatch):
    import builtins
    import io

    def refuse(*args, **kwargs):
        raise AssertionError(f"the fingerprint opened or ran {args[0]!r}")

    cache.compiler_fingerprint.cache_clear()
    try:
        with monkeypatch.context() as patch:
            for module, name in [(builtins, "open"), (io, "open"), (subprocess, "run"), (subprocess, "Popen")]:
                patch.setattr(module, name, refuse)
            fingerprint = cache.compiler_fingerprint()
    finally:
        cache.compiler_fingerprint.cache_clear()
    assert fingerprint == cache.compiler_fingerprint()


def test_the_fingerprint_follows_edits_of_tilec_and_the_toolkit(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    source = package / "sub" / "a.py"
    source.write_text("X = 1\n")
    (package / "__pycache__").mkdir()
    before = cache._tree_identity(package)
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"ignored")
    assert cache._tree_identity(package) == before
    source.write_text("X = 2\n")  # same size: the modification time tells
    os.utime(source, ns=(1, 1_000_000_000))
    edited = cache._tree_identity(package)
    assert edited != before
    source.write_text("X = 22\n")
    assert cache._tree_identity(package) not in (before, edited)

    from tilec.backend import toolkit
    ptxas = tmp_path / "ptxas"
    ptxas.write_bytes(b"v1")
    monkeypatch.setattr(toolkit, "ptxas_path", lambda: str(ptxas))
    cache.compiler_fingerprint.cache_clear()
    try:
        first = cache.compiler_fingerprint()
        cache.compiler_fingerprint.cache_clear()
        ptxas.write_bytes(b"v2, another release")
        assert cache.compiler_fingerprint() != first
    finally:
        cache.compiler_fingerprint.cache_clear()


def test_options_are_keyed_alike_before_and_after_parsing_the_target():
    from tilec.backend.kernel_data import CompileOptions, options_cache_key
    from tilec.target import Target
    values = {"num_warps": 8, "num_stages": 2, "target": "sm_80", "debug": False, "enable_fp_fusion": True}
    parsed = CompileOptions(**{**values, "target": Target.parse("sm_80", ptx_limit=80)})
    assert options_cache_key(values) == parsed.cache_key()
    assert options_cache_key({**values, "target": parsed.target}) == parsed.cache_key()
    with pytest.raises(ValueError, match="exactly the CompileOptions fields"):
        options_cache_key({"num_warps": 8})
