"""The on-disk kernel cache.

One file per compiled kernel, named by a SHA-256 over everything that changes the
generated code: the kernel's source and that of every @jit function it calls, the
specialisation of its arguments, the compile options (target included), and a
fingerprint of tilec's own source. Writes go to a temporary file in the same
directory and are published with `os.replace`, so a reader sees either nothing or a
whole file, and concurrent processes compiling the same kernel are harmless (the last
rename wins with identical content). Unreadable entries are treated as misses.
"""
from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

from ..backend.compiler import CompiledKernel
from ..config import config

_SUFFIX = ".tilec"


@functools.lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    """Hash of tilec's Python sources and of the toolchain it drives (MLIR bindings,
    ptxas, libdevice), so a changed compiler never reuses old kernels."""
    from ..backend import toolkit
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    for describe in (_bindings_version, toolkit.ptxas_version, _libdevice_identity):
        try:
            digest.update(describe().encode())
        except Exception:  # a missing tool fails later, where it is needed
            digest.update(b"?")
    return digest.hexdigest()


def _bindings_version() -> str:
    from importlib import metadata
    return metadata.version("xtc-mlir-python-bindings")


def _libdevice_identity() -> str:
    from ..backend import toolkit
    path = toolkit.libdevice_path()
    return f"{path}:{os.path.getsize(path)}"


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
