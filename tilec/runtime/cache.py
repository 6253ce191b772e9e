"""The on-disk kernel cache.

One file per compiled kernel, `<dir>/<key[:2]>/<key>.tilec`, where the key is a
SHA-256 over everything that changes the generated code: the compiler's fingerprint
(tilec's own code and the toolchain, see `compiler_fingerprint`), the kernel's source
and that of every @jit function it calls, the specialisation of its arguments and the
compile options (target included).

An entry is a small header, a JSON summary (kernel name, target, resources: what
`entries()` lists without reading the rest) and the kernel itself
(`CompiledKernel.serialize`):

    offset  size  field
    0       8     magic and format version, b"TILEC\\x00\\x02\\n"
    8       4     length of the summary, little-endian
    12      8     length of the kernel, little-endian
    20      32    SHA-256 of the summary and the kernel
    52            the summary (UTF-8 JSON), then the kernel

`load` serves an entry only when its length and checksum match; a truncated, corrupt or
foreign file is a miss, so the kernel is compiled again and the file replaced.

Writes go to a temporary file in the entry's directory and are published with
`os.replace`, so a reader sees either nothing or a whole file, and
processes compiling the same kernel at once are harmless (the last rename wins, with
the same content). They are not forced to disk (`fsync` can cost tens of milliseconds per
kernel on some file systems): an entry that a power loss truncated or garbled fails its
length or checksum and is compiled again. A writer killed before its rename leaves its
temporary file behind;
`prune` removes those once they are an hour old (a live writer's is seconds old), and
ptxas work folders of killed compilations likewise.

The cache holds at most `config.cache_max_size` bytes of kernels (TILEC_CACHE_MAX_SIZE,
1 GiB by default): the least recently used go first. An entry's modification time is
its last use: `load` sets it (at most every few minutes, one `utime` call). After a
write, `prune` runs when no process has run it for a minute (a stamp file's time says
when one did), so the cap holds to within about a minute's worth of compilations.

A cache folder that cannot be written costs only speed: the first failed write of a
process warns once, and kernels are then compiled in every process.

The public functions the `tilec cache` command uses: `cache_dir`, `entries`,
`total_size`, `prune`, `clear` (and `CacheEntry`).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..backend.kernel_data import TILEC_VERSION, CompiledKernel
from ..config import config

_SUFFIX = ".tilec"
_MAGIC = b"TILEC\x00\x02\n"
_HEADER_SIZE = 8 + 4 + 8 + 32
_MAX_SUMMARY = 1 << 20  # a larger summary length marks a foreign or damaged file

# A temporary file or ptxas work folder older than this was left by a killed process.
STALE_AGE = 3600.0
# The least time between two size checks after writes, across processes.
PRUNE_INTERVAL = 60.0
# An entry's last-use time is refreshed on load when it is older than this.
_TOUCH_AFTER = 300.0
_PRUNE_STAMP = "prune.stamp"
# toolkit.assemble's work folders, in the system's temporary directory.
_PTXAS_WORK_PREFIX = "tilec-ptxas-"


# ----------------------------------------------------------------------------- keys


@functools.lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    """The identity of the compiler: tilec's version and own Python files, the MLIR
    bindings, ptxas and libdevice, so that a changed compiler never reuses old kernels.

    Computed once per process from file metadata alone (path, size, modification time):
    no file is read and no tool is run, so a cache hit in a new process costs a few
    hundred `stat` calls instead of hashing tilec's sources and running `ptxas
    --version`. Editing a file of tilec (an editable install) changes its modification
    time, and so the fingerprint: a developer never gets a kernel compiled by older
    code. Only a file put back with both its old size and its old time (`cp -p` of an
    old copy) would go unnoticed; `TILEC_ALWAYS_COMPILE=1` or `clear()` covers that.
    """
    digest = hashlib.sha256(TILEC_VERSION.encode() + b"\0")
    root = Path(__file__).resolve().parent.parent
    for identity in _tree_identity(root):
        digest.update(identity.encode() + b"\0")
    for describe in (_bindings_identity, _ptxas_identity, _libdevice_identity):
        try:
            part = describe()
        except Exception:  # a missing tool fails later, where it is needed
            part = "?"
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _tree_identity(root: Path) -> list[str]:
    """`relative path:size:mtime_ns` of every Python file under `root`, sorted."""
    found = []

    def walk(directory: str, prefix: str) -> None:
        with os.scandir(directory) as listing:
            for entry in listing:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        walk(entry.path, prefix + entry.name + "/")
                elif entry.name.endswith(".py"):
                    st = entry.stat()
                    found.append(f"{prefix}{entry.name}:{st.st_size}:{st.st_mtime_ns}")

    walk(str(root), "")
    return sorted(found)


def _file_identity(path: str) -> str:
    st = os.stat(path)
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def _bindings_identity() -> str:
    """The MLIR bindings' native libraries (LLVM's NVPTX back end is in them), found
    without importing `mlir`."""
    import importlib.util
    module = importlib.util.find_spec("mlir")
    locations = list(module.submodule_search_locations or []) if module is not None else []
    if not locations:
        return "?"
    libraries = os.path.join(locations[0], "_mlir_libs")
    return ";".join(sorted(_file_identity(os.path.join(libraries, name)) for name in os.listdir(libraries)
                           if name.endswith(".so") or ".so." in name or name.endswith((".dylib", ".pyd", ".dll"))))


def _ptxas_identity() -> str:
    from ..backend import toolkit
    return _file_identity(toolkit.ptxas_path())


def _libdevice_identity() -> str:
    from ..backend import toolkit
    return _file_identity(toolkit.libdevice_path())


def kernel_key(source_hash: str, specialization: tuple, options: object) -> str:
    digest = hashlib.sha256()
    from ..config import config
    for part in (compiler_fingerprint(), source_hash, repr(specialization), repr(options), config.codegen_flags()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


# ----------------------------------------------------------------------------- entries


def cache_dir() -> Path:
    """The cache folder (TILEC_CACHE_DIR, else ~/.cache/tilec)."""
    return Path(config.cache_dir)


def _path(key: str) -> Path:
    return Path(config.cache_dir) / key[:2] / (key + _SUFFIX)


def _summary(kernel: CompiledKernel) -> dict[str, Any]:
    m = kernel.metadata
    return {"name": m.name, "target": m.target, "num_warps": m.num_warps, "num_stages": m.num_stages,
            "shared": m.shared, "n_regs": m.n_regs, "n_spills": m.n_spills, "created": int(time.time())}


def encode_entry(kernel: CompiledKernel) -> bytes:
    """The bytes of a cache file holding `kernel` (format in the module's docstring)."""
    summary = json.dumps(_summary(kernel)).encode()
    payload = kernel.serialize()
    checksum = hashlib.sha256(summary)
    checksum.update(payload)
    return (_MAGIC + len(summary).to_bytes(4, "little") + len(payload).to_bytes(8, "little") + checksum.digest()
            + summary + payload)


def decode_entry(data: bytes) -> CompiledKernel | None:
    """The kernel in the bytes of a cache file, or None when they are not a whole,
    intact entry of this format (truncated, corrupt, foreign)."""
    if len(data) < _HEADER_SIZE or data[:8] != _MAGIC:
        return None
    summary_size = int.from_bytes(data[8:12], "little")
    payload_size = int.from_bytes(data[12:20], "little")
    if len(data) != _HEADER_SIZE + summary_size + payload_size:
        return None
    body = memoryview(data)[_HEADER_SIZE:]
    if hashlib.sha256(body).digest() != data[20:_HEADER_SIZE]:
        return None
    try:
        return CompiledKernel.deserialize(data[_HEADER_SIZE + summary_size:])
    except Exception:  # intact but unreadable: written by a different tilec
        return None


def contains(key: str) -> bool:
    """Whether an entry for `key` is on disk (not read: `load` may still find it damaged)."""
    return _path(key).is_file()


def load(key: str) -> CompiledKernel | None:
    """The cached kernel for `key`, or None (a miss)."""
    path = _path(key)
    try:
        with open(path, "rb") as f:
            data = f.read()
            modified = os.fstat(f.fileno()).st_mtime
    except OSError:
        return None
    kernel = decode_entry(data)
    if kernel is not None and time.time() - modified > _TOUCH_AFTER:
        try:
            os.utime(path)  # the last-use stamp that prune orders entries by
        except OSError:
            pass  # a read-only cache: no stamp, no harm
    return kernel


_warned_unwritable: set[str] = set()


def store(key: str, kernel: CompiledKernel) -> None:
    """Writes `kernel` under `key`, atomically; failures warn once and are otherwise ignored."""
    import tempfile  # imported here: a process that only reads the cache need not
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(encode_entry(kernel))
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as error:  # a read-only or full cache directory must not break compilation
        _warn_unwritable(error)
        return
    _prune_if_due()


def _warn_unwritable(error: OSError) -> None:
    directory = str(config.cache_dir)
    if directory in _warned_unwritable:
        return
    _warned_unwritable.add(directory)
    warnings.warn(f"tilec: cannot write to the kernel cache {directory} ({error.strerror or error}); compiled "
                  "kernels will not be reused by other processes. Set TILEC_CACHE_DIR to a writable folder.",
                  RuntimeWarning, stacklevel=3)


# ----------------------------------------------------------------------------- listing and clean-up


@dataclass(frozen=True)
class CacheEntry:
    """One cached kernel as `entries()` lists it."""
    key: str             # the 64 hex digits naming it
    path: Path
    size: int            # bytes on disk
    last_used: float     # when it was written or last loaded (seconds since the epoch): the LRU order
    name: str | None     # the kernel's name; None when the file's header cannot be read
    summary: dict[str, Any] = field(default_factory=dict, compare=False)  # target, num_warps, num_stages,
    #                                    shared, n_regs, n_spills, created (empty when unreadable)

    @property
    def age(self) -> float:
        """Seconds since it was last used."""
        return max(0.0, time.time() - self.last_used)


def _entry_files(root: Path) -> Iterator[os.DirEntry]:
    """The kernel files under `root`: <2 hex digits>/<64 hex digits>.tilec."""
    try:
        shards = [e for e in os.scandir(root) if len(e.name) == 2 and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for shard in shards:
        try:
            listing = list(os.scandir(shard.path))
        except OSError:
            continue
        for entry in listing:
            if entry.name.endswith(_SUFFIX) and len(entry.name) == 64 + len(_SUFFIX):
                yield entry


def _read_summary(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as f:
            header = f.read(_HEADER_SIZE)
            if len(header) < _HEADER_SIZE or header[:8] != _MAGIC:
                return None
            size = int.from_bytes(header[8:12], "little")
            if size > _MAX_SUMMARY:
                return None
            summary = json.loads(f.read(size))
    except (OSError, ValueError):
        return None
    return summary if isinstance(summary, dict) else None


def entries() -> list[CacheEntry]:
    """Every kernel in the cache, the most recently used first."""
    found = []
    for entry in _entry_files(cache_dir()):
        try:
            st = entry.stat()
        except OSError:  # removed meanwhile
            continue
        summary = _read_summary(entry.path)
        found.append(CacheEntry(key=entry.name[:-len(_SUFFIX)], path=Path(entry.path), size=st.st_size,
                                last_used=st.st_mtime, name=summary.get("name") if summary else None,
                                summary=summary or {}))
    found.sort(key=lambda e: e.last_used, reverse=True)
    return found


def total_size() -> int:
    """Bytes taken by the cached kernels (what TILEC_CACHE_MAX_SIZE limits)."""
    total = 0
    for entry in _entry_files(cache_dir()):
        try:
            total += entry.stat().st_size
        except OSError:
            pass
    return total


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def _temporary_files(root: Path) -> Iterator[os.DirEntry]:
    """Temporary files of writers (kernels and autotuning choices), finished or not."""
    try:
        folders = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)
                   and (len(e.name) == 2 or e.name == "autotune")]
    except OSError:
        return
    for folder in folders:
        try:
            listing = list(os.scandir(folder.path))
        except OSError:
            continue
        for entry in listing:
            if entry.name.endswith(".tmp") and entry.is_file(follow_symlinks=False):
                yield entry


def _is_stale(entry: os.DirEntry, now: float) -> bool:
    try:
        return now - entry.stat(follow_symlinks=False).st_mtime > STALE_AGE
    except OSError:
        return False


def _remove_stale_ptxas_folders(now: float) -> None:
    """Work folders of ptxas runs whose process was killed (toolkit.assemble removes its
    own otherwise): this user's `tilec-ptxas-*` in the temporary directory, an hour old."""
    import shutil
    import tempfile
    base = tempfile.gettempdir()
    try:
        listing = list(os.scandir(base))
    except OSError:
        return
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in listing:
        if not entry.name.startswith(_PTXAS_WORK_PREFIX):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or (uid is not None and st.st_uid != uid) or now - st.st_mtime <= STALE_AGE:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)


def prune(max_size: int | None = None) -> int:
    """Removes what killed processes left (temporary files and ptxas work folders an hour
    old), then the least recently used kernels until the rest take at most `max_size`
    bytes (default: `config.cache_max_size`; 0: no limit). Returns how many kernels
    were removed."""
    root = cache_dir()
    now = time.time()
    for entry in _temporary_files(root):
        if _is_stale(entry, now):
            _remove(entry.path)
    _remove_stale_ptxas_folders(now)
    limit = config.cache_max_size if max_size is None else max_size
    if not limit:
        return 0
    sized = []
    for entry in _entry_files(root):
        try:
            st = entry.stat()
        except OSError:
            continue
        sized.append((st.st_mtime, st.st_size, entry.path))
    total = sum(size for _, size, _ in sized)
    removed = 0
    for _, size, path in sorted(sized):  # the least recently used first
        if total <= limit:
            break
        if _remove(path):
            removed += 1
        total -= size
    return removed


def _prune_if_due() -> None:
    """Runs `prune` when no process has for PRUNE_INTERVAL seconds."""
    stamp = cache_dir() / _PRUNE_STAMP
    now = time.time()
    try:
        if now - stamp.stat().st_mtime < PRUNE_INTERVAL:
            return
    except OSError:
        pass  # no stamp yet
    try:
        stamp.touch()
    except OSError:
        return
    prune()


def clear() -> int:
    """Removes every cached kernel, temporary file and autotuning choice (reproducers of
    failed passes stay). Returns how many kernels were removed."""
    import shutil
    root = cache_dir()
    removed = sum(1 for entry in list(_entry_files(root)) if _remove(entry.path))
    for entry in list(_temporary_files(root)):
        _remove(entry.path)
    autotune = root / "autotune"
    if autotune.is_dir():
        shutil.rmtree(autotune, ignore_errors=True)
    _remove(str(root / _PRUNE_STAMP))
    try:
        for shard in os.scandir(root):
            if len(shard.name) == 2 and shard.is_dir(follow_symlinks=False):
                try:
                    os.rmdir(shard.path)
                except OSError:
                    pass  # not empty: something else lives there
    except OSError:
        pass
    return removed
