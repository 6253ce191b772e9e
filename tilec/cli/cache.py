"""`tilec cache`: list, inspect and clear the on-disk kernel cache.

    tilec cache list                     every compiled kernel kept, newest first
    tilec cache info                     where the cache is and how big
    tilec cache info 3fa2c1              one kernel (a key or its first characters)
    tilec cache info 3fa2c1 --stage ptx  print one stage of it
    tilec cache clear [--kernel NAME]    remove kernels (all, or one kernel's)

The cache is TILEC_CACHE_DIR (default ~/.cache/tilec), or --dir.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from dataclasses import dataclass
from typing import Any

from . import CliError, help_texts, write_output

# ----------------------------------------------------------------------------- reading the cache
# The cache directory as tilec.runtime.cache lays it out: one file per kernel,
# <dir>/<key[:2]>/<key>.tilec (read with the cache's own decode_entry, which refuses
# damaged entries), and <dir>/reproducers/. The commands take any directory (--dir), so
# they walk it here rather than through the runtime's listing of the configured one.

SUFFIX = ".tilec"
REPRODUCERS = "reproducers"


@dataclass
class CacheEntry:
    key: str
    path: str
    size: int       # bytes on disk
    mtime: float    # when it was written

    def kernel(self) -> Any:
        """The CompiledKernel stored, or None when the file cannot be read back (damaged,
        truncated or foreign: the runtime recompiles it)."""
        from ..runtime.cache import decode_entry
        try:
            with open(self.path, "rb") as f:
                return decode_entry(f.read())
        except OSError:
            return None


def cache_directory(override: str | None = None) -> str:
    from ..config import config
    return os.path.expanduser(override or config.cache_dir)


def cache_entries(directory: str) -> list[CacheEntry]:
    """Every kernel file in the cache, newest first."""
    entries = []
    if not os.path.isdir(directory):
        return entries
    for shard in sorted(os.listdir(directory)):
        shard_path = os.path.join(directory, shard)
        if len(shard) != 2 or not os.path.isdir(shard_path):
            continue
        for name in os.listdir(shard_path):
            if not name.endswith(SUFFIX) or not name.startswith(shard):
                continue  # temporary files of writes in progress, or strangers
            path = os.path.join(shard_path, name)
            try:
                stat = os.stat(path)
            except OSError:
                continue  # removed meanwhile
            entries.append(CacheEntry(name[:-len(SUFFIX)], path, stat.st_size, stat.st_mtime))
    entries.sort(key=lambda e: e.mtime, reverse=True)
    return entries


def _stray_files(directory: str) -> list[str]:
    """Temporary files that interrupted writes left in the shards."""
    stray = []
    if not os.path.isdir(directory):
        return stray
    for shard in os.listdir(directory):
        shard_path = os.path.join(directory, shard)
        if len(shard) == 2 and os.path.isdir(shard_path):
            stray += [os.path.join(shard_path, n) for n in os.listdir(shard_path) if n.endswith(".tmp")]
    return stray


def remove_entries(entries: list[CacheEntry]) -> tuple[int, int]:
    """Deletes the entries' files (and shard directories left empty); returns (files, bytes)."""
    removed = size = 0
    for entry in entries:
        try:
            os.unlink(entry.path)
        except FileNotFoundError:
            continue
        removed += 1
        size += entry.size
        try:
            os.rmdir(os.path.dirname(entry.path))
        except OSError:
            pass  # not empty
    return removed, size


# ----------------------------------------------------------------------------- commands


def add_parser(commands) -> None:
    description, rest = help_texts(__doc__)
    parser = commands.add_parser("cache", help="list, inspect or clear the kernel cache", description=description,
                                 epilog=rest, formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dir", help="the cache directory (default: TILEC_CACHE_DIR or ~/.cache/tilec)")
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    listing = actions.add_parser("list", parents=[common], help="list the kernels in the cache")
    listing.add_argument("--kernel", help="only the kernels of this name")
    listing.add_argument("--sort", choices=("time", "size", "name"), default="time",
                         help="newest first (default), largest first, or by kernel name")
    listing.set_defaults(run=_list)

    info = actions.add_parser("info", parents=[common], help="the cache's size, or one kernel's details")
    info.add_argument("key", nargs="?", help="a kernel's key, or enough of its first characters")
    info.add_argument("--stage", choices=("ttir", "ttgir", "llir", "ptx", "cubin"),
                      help="print this stage of the kernel (cubin: with -o FILE)")
    info.add_argument("-o", "--output", metavar="FILE", help="write the stage to FILE")
    info.set_defaults(run=_info)

    clear = actions.add_parser("clear", parents=[common], help="remove kernels from the cache")
    clear.add_argument("--kernel", help="only the kernels of this name")
    clear.add_argument("--reproducers", action="store_true", help="also remove the reproducers of failed passes")
    clear.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    clear.set_defaults(run=_clear)
    parser.set_defaults(command="cache")


def _size(n: float) -> str:
    if n < 1024:
        return f"{int(n)} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024:
            break
    return f"{n:.1f} {unit}"


def _when(mtime: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))


def _list(args: argparse.Namespace) -> int:
    directory = cache_directory(args.dir)
    rows = []
    for entry in cache_entries(directory):
        kernel = entry.kernel()
        m = kernel.metadata if kernel is not None else None
        if args.kernel and (m is None or m.name != args.kernel):
            continue
        rows.append((entry, m))
    if args.sort == "size":
        rows.sort(key=lambda row: row[0].size, reverse=True)
    elif args.sort == "name":
        rows.sort(key=lambda row: (row[1].name if row[1] else "~", -row[0].mtime))
    if not rows:
        what = f"no kernel named {args.kernel}" if args.kernel else "no kernels"
        print(f"{what} in the cache at {directory}")
        return 0
    table = [("KEY", "KERNEL", "TARGET", "WARPS", "STAGES", "REGS", "SPILLS", "SHARED", "SIZE", "WRITTEN")]
    for entry, m in rows:
        if m is None:
            table.append((entry.key[:12], "(unreadable)", "", "", "", "", "", "", _size(entry.size), _when(entry.mtime)))
        else:
            table.append((entry.key[:12], m.name, m.target, str(m.num_warps), str(m.num_stages), str(m.n_regs),
                          str(m.n_spills), str(m.shared), _size(entry.size), _when(entry.mtime)))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    numeric = {3, 4, 5, 6, 7, 8}
    for row in table:
        print("  ".join(cell.rjust(w) if i in numeric and row is not table[0] else cell.ljust(w)
                        for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
    total = sum(entry.size for entry, _ in rows)
    print(f"{len(rows)} kernel{'s' * (len(rows) != 1)}, {_size(total)}, in {directory}")
    return 0


def _find(directory: str, prefix: str) -> CacheEntry:
    matches = [e for e in cache_entries(directory) if e.key.startswith(prefix.lower())]
    if not matches:
        raise CliError(f"no kernel with a key starting {prefix!r} in the cache at {directory}")
    if len(matches) > 1:
        raise CliError(f"{len(matches)} kernels have keys starting {prefix!r}: "
                       f"{', '.join(e.key[:12] for e in matches[:5])}{' ...' * (len(matches) > 5)}; give more of it")
    return matches[0]


def _info(args: argparse.Namespace) -> int:
    directory = cache_directory(args.dir)
    if args.key is None:
        if args.stage:
            raise CliError("--stage needs a kernel's key")
        return _cache_info(directory)
    entry = _find(directory, args.key)
    kernel = entry.kernel()
    if kernel is None:
        raise CliError(f"{entry.path} cannot be read back (damaged, or written by another tilec version); "
                       "the next compilation replaces it")
    if args.stage:
        value = kernel.asm.get(args.stage)
        if not value:
            raise CliError(f"kernel {entry.key[:12]} has no {args.stage} stage")
        if isinstance(value, bytes) and args.output in (None, "-") and sys.stdout.isatty():
            raise CliError("a cubin is binary: write it to a file with -o FILE")
        write_output(value, args.output)
        return 0
    m = kernel.metadata
    print(f"key:      {entry.key}")
    print(f"file:     {entry.path} ({_size(entry.size)}, written {_when(entry.mtime)})")
    print(f"kernel:   {m.name}")
    print(f"target:   {m.target}, {m.num_warps} warps, {m.num_stages} stages")
    print(f"compiled: {m.n_regs} registers, {m.n_spills} bytes spilled, {m.shared} bytes of shared memory")
    params = ", ".join(f"{name}: {ty}" for name, ty in m.params) or "none"
    print(f"params:   {params}")
    stages = ", ".join(f"{name} ({_size(len(value))})" for name, value in kernel.asm.items() if value)
    print(f"stages:   {stages}")
    print(f"tilec:    {m.tilec_version}")
    return 0


def _cache_info(directory: str) -> int:
    from ..config import config
    entries = cache_entries(directory)
    source = "TILEC_CACHE_DIR" if os.environ.get("TILEC_CACHE_DIR") else "default"
    print(f"directory:   {directory} ({source}{', does not exist yet' if not os.path.isdir(directory) else ''})")
    total = sum(e.size for e in entries)
    print(f"kernels:     {len(entries)}, {_size(total)}")
    if entries:
        print(f"written:     {_when(entries[-1].mtime)} to {_when(entries[0].mtime)}")
    reproducers = config.reproducer_dir or os.path.join(directory, REPRODUCERS)
    count = len(os.listdir(reproducers)) if os.path.isdir(reproducers) else 0
    print(f"reproducers: {count} in {reproducers}")
    if config.always_compile:
        print("note:        TILEC_ALWAYS_COMPILE (or TILEC_DUMP_IR) is set: launches neither read nor reuse the cache")
    if os.path.isdir(directory):
        usage = shutil.disk_usage(directory)
        print(f"free space:  {_size(usage.free)}")
    return 0


def _clear(args: argparse.Namespace) -> int:
    from ..config import config
    directory = cache_directory(args.dir)
    entries = cache_entries(directory)
    if args.kernel:
        entries = [e for e in entries if (k := e.kernel()) is not None and k.metadata.name == args.kernel]
    stray = [] if args.kernel else _stray_files(directory)
    reproducers = config.reproducer_dir or os.path.join(directory, REPRODUCERS)
    clear_reproducers = args.reproducers and os.path.isdir(reproducers)
    size = sum(e.size for e in entries)
    what = f"{len(entries)} kernel{'s' * (len(entries) != 1)}" + (f" named {args.kernel}" if args.kernel else "")
    if args.dry_run:
        print(f"would remove {what} ({_size(size)}) from {directory}"
              + (f", and the reproducers in {reproducers}" if clear_reproducers else ""))
        return 0
    for path in stray:  # first, so that shards left empty can go
        try:
            os.unlink(path)
        except OSError:
            pass
    removed, size = remove_entries(entries)
    print(f"removed {removed} kernel{'s' * (removed != 1)}" + (f" named {args.kernel}" if args.kernel else "")
          + f" ({_size(size)}) from {directory}")
    if clear_reproducers:
        count = len(os.listdir(reproducers))
        shutil.rmtree(reproducers)
        print(f"removed {count} reproducer{'s' * (count != 1)} from {reproducers}")
    return 0
