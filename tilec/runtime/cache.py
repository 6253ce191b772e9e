"""The on-disk kernel cache.

One file per compiled kernel, named by a SHA-256 over everything that changes the
generated code: the kernel's source and that of every @jit function it calls, the
specialisation of its arguments, the compile options (target included), and the
compiler's fingerprint (tilec's own code and the toolchain, see `compiler_fingerprint`).
Writes go to a temporary file in the same directory and are published with
`os.replace`, so a reader sees either nothing or a whole file, and concurrent processes
compiling the same kernel are harmless (the last rename wins with identical content).
Unreadable entries are treated as misses.
"""
from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

from ..backend.kernel_data import TILEC_VERSION, CompiledKernel
from ..config import config

_SUFFIX = ".tilec"


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
    for part in (compiler_fingerprint(), source_hash, repr(specialization), repr(options)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _path(key: str) -> Path:
    return Path(config.cache_dir) / key[:2] / (key + _SUFFIX)


def load(key: str) -> CompiledKernel | None:
    path = _path(key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return CompiledKernel.deserialize(data)
    except Exception:  # a corrupt or foreign file: recompile and overwrite it
        return None


def store(key: str, kernel: CompiledKernel) -> None:
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(kernel.serialize())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass  # a read-only or full cache directory must not break compilation
