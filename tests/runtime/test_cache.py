"""The on-disk cache and specialisation: hits, misses, keys, atomic and concurrent writes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.backend import compiler
from tilec.config import config
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
    dict(n=4104),              # divisible by 8, not by 16
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


def test_divisibility_by_8_reaches_the_ir(fresh_cache):
    """Triton marks integers divisible by 16 only; tilec also those divisible by 8, so
    that rows of 8k halves (4k floats) are 16 bytes long and load as vectors."""
    fn = JITFunction(add_kernel)
    by_8 = warm(fn, n=4104, block=1024)
    assert by_8.asm["ttir"].count("tile.divisibility = 8") == 1
    assert by_8.asm["ttir"].count("tile.divisibility = 16") == 3  # the pointers
    # 1024 elements over 128 threads: eight per thread, two 16-byte loads per operand
    assert by_8.asm["ptx"].count("ld.global.v4.b32") == 4
    assert fn.warmup("*fp32:16", "*fp32:16", "*fp32:16", "i32:8", BLOCK=1024, grid=(1,)).asm["ptx"] == by_8.asm["ptx"]


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
    assert cache.decode_entry(entry.read_bytes()).asm["cubin"] == kernel.asm["cubin"]


def test_store_is_atomic(fresh_cache, monkeypatch):
    kernel = warm(JITFunction(add_kernel))
    key = "ab" + "0" * 62

    def failing_replace(src, dst):
        raise OSError("disk full")

    with monkeypatch.context() as patch, pytest.warns(RuntimeWarning, match="cannot write to the kernel cache"):
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
    assert cache.decode_entry(entries[0].read_bytes()).asm["cubin"]


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


# ----------------------------------------------------------------------------- entries: length and checksum


def fake_kernel(name: str = "k", size: int = 1000) -> compiler.CompiledKernel:
    """A CompiledKernel without compiling: the cache stores whatever it is given."""
    metadata = compiler.KernelMetadata(name=name, target="sm_90", num_warps=4, num_stages=3, n_regs=10)
    return compiler.CompiledKernel(metadata, {"ttir": "t" * size, "ptx": "p" * size, "cubin": bytes(range(256)) * 4})


@pytest.mark.parametrize("damage", ["cut inside the cubin", "cut inside the header", "one byte changed",
                                    "one byte added"])
def test_damaged_entry_is_recompiled_not_loaded(fresh_cache, compile_counter, damage):
    first = warm(JITFunction(add_kernel))
    (entry,) = fresh_cache.rglob("*.tilec")
    data = entry.read_bytes()
    if damage == "cut inside the cubin":  # the old format served this as a hit, a shorter cubin
        data = data[:-16]
    elif damage == "cut inside the header":
        data = data[:30]
    elif damage == "one byte changed":
        middle = len(data) // 2
        data = data[:middle] + bytes([data[middle] ^ 0x20]) + data[middle + 1:]
    else:
        data = data + b"\0"
    entry.write_bytes(data)
    assert cache.load(cache_key_of(entry)) is None
    again = warm(JITFunction(add_kernel))
    assert len(compile_counter) == 2
    assert again.asm["cubin"] == first.asm["cubin"]
    assert cache.decode_entry(entry.read_bytes()).asm["cubin"] == first.asm["cubin"]  # rewritten whole


def cache_key_of(entry) -> str:
    return entry.name[:-len(".tilec")]


def test_entry_round_trip_and_foreign_files(fresh_cache):
    kernel = fake_kernel()
    key = "cd" + "1" * 62
    cache.store(key, kernel)
    loaded = cache.load(key)
    assert loaded.asm == kernel.asm and loaded.metadata == kernel.metadata
    old_format = kernel.serialize()  # what earlier versions wrote: no length, no checksum
    (fresh_cache / "cd" / (key + ".tilec")).write_bytes(old_format)
    assert cache.load(key) is None
    assert cache.decode_entry(b"") is None


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


def test_options_are_keyed_alike_before_and_after_parsing_the_target():
    from tilec.backend.kernel_data import CompileOptions, options_cache_key
    from tilec.target import Target
    values = {"num_warps": 8, "num_stages": 2, "target": "sm_80", "debug": False, "enable_fp_fusion": True,
              "libdevice": "", "maxnreg": 0}
    parsed = CompileOptions(**{**values, "target": Target.parse("sm_80")})
    assert options_cache_key(values) == parsed.cache_key()
    assert options_cache_key({**values, "target": parsed.target}) == parsed.cache_key()
    with pytest.raises(ValueError, match="exactly the CompileOptions fields"):
        options_cache_key({"num_warps": 8})


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


# ----------------------------------------------------------------------------- clean-up, size cap, warnings


def _age(path, seconds: float) -> None:
    when = time.time() - seconds
    os.utime(path, (when, when))


def test_prune_removes_stale_temporary_files_only(fresh_cache):
    cache.store("ab" + "0" * 62, fake_kernel())
    shard = fresh_cache / "ab"
    stale = shard / ("ab" + "0" * 62 + ".tilec.x1y2z3.tmp")
    live = shard / ("ab" + "0" * 62 + ".tilec.a1b2c3.tmp")
    stale_choice = fresh_cache / "autotune" / "tmpabc.tmp"
    stale_choice.parent.mkdir()
    for path in (stale, live, stale_choice):
        path.write_bytes(b"partial")
    _age(stale, 2 * 3600)
    _age(stale_choice, 2 * 3600)
    cache.prune()
    assert not stale.exists() and not stale_choice.exists()
    assert live.exists()  # a writer may still be working on it
    assert cache.load("ab" + "0" * 62) is not None


def test_prune_removes_stale_ptxas_work_folders(fresh_cache, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    stale = tmp_path / "tmp" / "tilec-ptxas-abc"
    live = tmp_path / "tmp" / "tilec-ptxas-def"
    other = tmp_path / "tmp" / "someone-else"
    for folder in (stale, live, other):
        folder.mkdir()
        (folder / "kernel.ptx").write_text(".version 8.0")
    for folder in (stale, other):
        _age(folder, 2 * 3600)
    cache.prune()
    assert not stale.exists()
    assert live.exists() and other.exists()


def test_a_write_prunes_when_due(fresh_cache, monkeypatch):
    stale = fresh_cache / "ab" / "leftover.tmp"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"partial")
    _age(stale, 2 * 3600)
    cache.store("cd" + "0" * 62, fake_kernel())  # the first write of a cache prunes
    assert not stale.exists()
    stale.write_bytes(b"partial")
    _age(stale, 2 * 3600)
    cache.store("cd" + "1" * 62, fake_kernel())  # pruned less than a minute ago: not again
    assert stale.exists()
    _age(fresh_cache / "prune.stamp", 120)
    cache.store("cd" + "2" * 62, fake_kernel())
    assert not stale.exists()


def test_size_cap_removes_the_least_recently_used(fresh_cache, monkeypatch):
    keys = [f"{i:02x}" + "e" * 62 for i in range(5)]
    for age, key in zip((50, 40, 30, 20, 10), keys):  # hours since last use: keys[0] the oldest
        cache.store(key, fake_kernel(name=f"k{key[:2]}"))
        _age(fresh_cache / key[:2] / (key + ".tilec"), age * 3600)
    sizes = {key: (fresh_cache / key[:2] / (key + ".tilec")).stat().st_size for key in keys}
    assert cache.total_size() == sum(sizes.values())
    size = max(sizes.values())
    assert cache.load(keys[0]) is not None  # used now: the most recent
    monkeypatch.setattr(config, "cache_max_size", 3 * size + size // 2)
    assert cache.prune() == 2
    kept = {entry.key for entry in cache.entries()}
    assert kept == {keys[0], keys[3], keys[4]}
    assert cache.total_size() == sizes[keys[0]] + sizes[keys[3]] + sizes[keys[4]]
    monkeypatch.setattr(config, "cache_max_size", 0)  # no limit
    assert cache.prune() == 0 and len(cache.entries()) == 3


def test_the_cap_applies_after_writes(fresh_cache, monkeypatch):
    size = len(cache.encode_entry(fake_kernel()))
    monkeypatch.setattr(config, "cache_max_size", 2 * size)
    monkeypatch.setattr(cache, "PRUNE_INTERVAL", 0.0)
    for i in range(4):
        key = f"{i:02x}" + "f" * 62
        cache.store(key, fake_kernel())
        _age(fresh_cache / key[:2] / (key + ".tilec"), 100 - i)
    assert [entry.key[:2] for entry in cache.entries()] == ["03", "02"]


def test_an_unwritable_cache_warns_once_and_compiles(monkeypatch, tmp_path, compile_counter):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setattr(config, "cache_dir", str(blocker / "cache"))
    with pytest.warns(RuntimeWarning, match="cannot write to the kernel cache") as warned:
        warm(JITFunction(add_kernel))
        warm(JITFunction(add_kernel))
        cache.store("ab" + "0" * 62, fake_kernel())
    assert len([w for w in warned if "kernel cache" in str(w.message)]) == 1
    assert len(compile_counter) == 2  # nothing kept: compiled each time


def test_entries_total_size_and_clear(fresh_cache):
    assert cache.entries() == [] and cache.total_size() == 0 and cache.clear() == 0  # no folder yet
    cache.store("aa" + "1" * 62, fake_kernel(name="first"))
    cache.store("bb" + "2" * 62, fake_kernel(name="second", size=5000))
    _age(fresh_cache / "aa" / ("aa" + "1" * 62 + ".tilec"), 3600)
    (fresh_cache / "bb" / "junk.tmp").write_bytes(b"x")
    (fresh_cache / "cc").mkdir()
    (fresh_cache / "cc" / ("cc" + "3" * 62 + ".tilec")).write_bytes(b"garbage")
    _age(fresh_cache / "cc" / ("cc" + "3" * 62 + ".tilec"), 60)
    (fresh_cache / "autotune").mkdir()
    (fresh_cache / "autotune" / "choice.txt").write_text("1")
    listed = cache.entries()
    assert [e.name for e in listed] == ["second", None, "first"]  # most recently used first
    second = listed[0]
    assert second.key == "bb" + "2" * 62 and second.path.parent.name == "bb"
    assert second.summary["target"] == "sm_90" and second.summary["n_regs"] == 10
    assert second.size == second.path.stat().st_size and second.age < 60
    assert 3500 < listed[2].age < 3700
    assert cache.total_size() == sum(e.size for e in listed)
    assert cache.clear() == 3
    assert cache.entries() == [] and cache.total_size() == 0
    assert not (fresh_cache / "autotune").exists() and not (fresh_cache / "bb").exists()


def test_cache_size_setting(monkeypatch):
    from tilec.config import Config, DEFAULT_CACHE_MAX_SIZE, parse_size
    assert parse_size("1G") == 1 << 30 and parse_size("500M") == 500 << 20 and parse_size("64k") == 64 << 10
    assert parse_size("123") == 123 and parse_size("0") == 0 and parse_size("1.5GiB") == 3 << 29
    monkeypatch.setenv("TILEC_CACHE_MAX_SIZE", "2G")
    assert Config.from_env().cache_max_size == 2 << 30
    monkeypatch.delenv("TILEC_CACHE_MAX_SIZE")
    assert Config.from_env().cache_max_size == DEFAULT_CACHE_MAX_SIZE == 1 << 30
    monkeypatch.setenv("TILEC_CACHE_MAX_SIZE", "lots")
    with pytest.warns(RuntimeWarning, match="TILEC_CACHE_MAX_SIZE"):
        assert Config.from_env().cache_max_size == DEFAULT_CACHE_MAX_SIZE


# ----------------------------------------------------------------------------- several processes at once

_HAMMER = textwrap.dedent('''
    import sys, time
    sys.path.insert(0, {tests!r})
    from tilec.config import config
    config.cache_dir = {cache!r}
    config.cache_max_size = {cap}
    from tilec.runtime import cache
    from test_cache import fake_kernel
    me = int(sys.argv[1])
    kernels = [fake_kernel(name=f"v{{i}}", size=1000 * (i + 1)) for i in range(3)]
    valid = {{k.name: k.asm for k in kernels}}
    key = "ab" + "7" * 62
    hits = 0
    for step in range(300):
        cache.store(key, kernels[(me + step) % 3])
        if step % 7 == me:
            cache.prune()
        loaded = cache.load(key)
        if loaded is not None:
            assert loaded.asm == valid[loaded.name], "a damaged kernel was loaded"
            hits += 1
    print(hits)
''')


def test_processes_writing_reading_and_pruning_one_key(fresh_cache, tmp_path):
    fresh_cache.mkdir()
    script = tmp_path / "hammer.py"
    cap = 2 * len(cache.encode_entry(fake_kernel(size=3000)))
    script.write_text(_HAMMER.format(tests=os.path.dirname(__file__), cache=str(fresh_cache), cap=cap))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, str(script), str(i)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env) for i in range(4)]
    outputs = [p.communicate(timeout=240) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err.decode()
        assert int(out) > 0
    assert not list(fresh_cache.rglob("*.tmp"))
    (entry,) = cache.entries()
    assert entry.name in {"v0", "v1", "v2"}
