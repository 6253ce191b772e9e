"""Every environment variable tilec reads, read once, here.

Variables that change generated code (`TILEC_DEBUG`) are part of the cache key (see
`runtime/cache.py`); the others only change where things go or what is printed.

TILEC_INTERPRET=1       run kernels on the CPU with NumPy instead of compiling them
TILEC_CACHE_DIR=path    on-disk kernel cache (default ~/.cache/tilec)
TILEC_CACHE_MAX_SIZE=n  the most bytes its kernels may take (K, M, G suffixes: 500M; default 1G; 0: no limit);
                        the least recently used go first
TILEC_ALWAYS_COMPILE=1  ignore both caches (in memory and on disk)
TILEC_DUMP_IR=1         print the IR after every stage and pass to stderr (implies always-compile)
TILEC_DUMP_DIR=path     write each stage of every compiled kernel to this directory
TILEC_DEBUG=1           debug mode: device asserts and overflow checks (part of the cache key);
                        errors keep tilec's own frames in their tracebacks
TILEC_CUDA_HOME=path    the CUDA toolkit holding bin/ptxas and nvvm/libdevice; when set, the only one used
CUDA_HOME=path          a CUDA toolkit, used after the nvidia-cuda-nvcc/nvidia-nvvm wheels (see backend/toolkit.py)
TILEC_REPRODUCER_DIR=p  where a failing pass writes its reproducer (default: the cache dir)
TILEC_PRINT_AUTOTUNING=1  print each config @autotune chooses, with the time tuning took

A yes/no variable takes 1/true/yes/on or 0/false/no/off; another value (TILEC_INTERPRET=2)
is ignored with a RuntimeWarning naming it.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

DEFAULT_CACHE_MAX_SIZE = 1 << 30
_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20,
               "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _flag(name: str, default: bool = False) -> bool:
    """A yes/no variable: 1/true/yes/on or 0/false/no/off (any case); unset or empty
    keeps `default`. Any other value (TILEC_INTERPRET=2) is not taken for either: a
    warning names the variable, and the default holds."""
    text = os.environ.get(name, "").strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text:
        warnings.warn(f"tilec: ignoring {name}={os.environ[name]!r}: expected 1/true/yes/on or 0/false/no/off; "
                      f"{name} stays {'on' if default else 'off'}", RuntimeWarning, stacklevel=3)
    return default


def parse_size(text: str) -> int:
    """"1G", "500M", "64k", "1048576" -> bytes (units are powers of 1024)."""
    cleaned = text.strip().upper()
    number = cleaned.rstrip("KMGTIB")
    unit = cleaned[len(number):].strip()
    if unit not in _SIZE_UNITS:
        raise ValueError(f"not a size: {text!r}")
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"not a size: {text!r}") from None
    if value < 0:
        raise ValueError(f"not a size: {text!r}")
    return int(value * _SIZE_UNITS[unit])


def _size(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return parse_size(text)
    except ValueError:
        warnings.warn(f"tilec: ignoring {name}={text!r}, which is not a size such as 500M or 2G; "
                      f"using {default >> 20}M", RuntimeWarning, stacklevel=2)
        return default


# The settings that change generated code (codegen_flags names them; every cache keys them).
_CODEGEN_SWITCHES = ("wgmma", "tma", "flatten_loops", "order_pure_ops", "warp_specialize", "overlap_prologue")


@dataclass
class Config:
    interpret: bool = False
    cache_dir: str = ""
    cache_max_size: int = DEFAULT_CACHE_MAX_SIZE  # bytes of kernels kept on disk; 0: no limit
    always_compile: bool = False
    dump_ir: bool = False
    dump_dir: str = ""
    debug: bool = False
    tilec_cuda_home: str = ""  # TILEC_CUDA_HOME
    cuda_home: str = ""        # CUDA_HOME
    reproducer_dir: str = ""
    print_autotuning: bool = False
    # Tensor-core dots on sm_90 as wgmma (operands through NVMMA shared buffers) instead of
    # mma.sync; TILEC_WGMMA=0 turns it off. Part of every kernel's cache key.
    wgmma: bool = True
    # Host tensor descriptors' loads and stores as TMA copies on sm_90 (TILEC_TMA=0: their
    # pointer form everywhere). Part of every kernel's cache key.
    tma: bool = True
    # `tl.range(..., flatten=True)` fuses the loop with its inner loop (tile-flatten-loops);
    # TILEC_FLATTEN_LOOPS=0 keeps the nest. On an H200 beside Triton 3.6 the fused
    # descriptor-persistent matmuls ran 1.02-1.04x at K = 1024 (nested 0.96-0.99x) and
    # tutorial 09's at 8192x8192x512 0.99-1.01x (nested 0.90-0.94x). Part of every
    # kernel's cache key.
    flatten_loops: bool = True
    # tilegpu-order-pure-ops after the LLVM lowering: pure ops placed where they are
    # needed, element by element (streaming kernels only); TILEC_ORDER_PURE_OPS=0
    # turns it off. Part of every kernel's cache key.
    order_pure_ops: bool = True
    # `tl.range(..., warp_specialize=True)` on sm_90: a producer warpgroup issues the
    # loop's TMA copies (passes/pipeline.py, "warp specialisation"). Off until it has
    # run on a GPU (TILEC_WARP_SPECIALIZE=1 turns it on); the loop is then fused and
    # pipelined as without it. Part of every kernel's cache key.
    warp_specialize: bool = False
    # A pipelined loop's prologue for the enclosing loop's next iteration issued before
    # this iteration's epilogue (passes/overlap_prologue.py: a persistent pointer
    # matmul's next tile's copies in flight while this tile stores). Off until it has
    # run on a GPU (TILEC_OVERLAP_PROLOGUE=1 turns it on). Part of every kernel's cache key.
    overlap_prologue: bool = False

    @staticmethod
    def from_env() -> "Config":
        cache_dir = os.environ.get("TILEC_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tilec")
        dump_ir = _flag("TILEC_DUMP_IR")  # read once: a bad value warns once
        return Config(
            interpret=_flag("TILEC_INTERPRET"),
            cache_dir=cache_dir,
            cache_max_size=_size("TILEC_CACHE_MAX_SIZE", DEFAULT_CACHE_MAX_SIZE),
            always_compile=_flag("TILEC_ALWAYS_COMPILE") or dump_ir,
            dump_ir=dump_ir,
            dump_dir=os.environ.get("TILEC_DUMP_DIR", ""),
            debug=_flag("TILEC_DEBUG"),
            tilec_cuda_home=os.environ.get("TILEC_CUDA_HOME", ""),
            cuda_home=os.environ.get("CUDA_HOME", ""),
            reproducer_dir=os.environ.get("TILEC_REPRODUCER_DIR", ""),
            print_autotuning=_flag("TILEC_PRINT_AUTOTUNING"),
            wgmma=_flag("TILEC_WGMMA", default=True),
            tma=_flag("TILEC_TMA", default=True),
            flatten_loops=_flag("TILEC_FLATTEN_LOOPS", default=True),
            order_pure_ops=_flag("TILEC_ORDER_PURE_OPS", default=True),
            warp_specialize=_flag("TILEC_WARP_SPECIALIZE"),
            overlap_prologue=_flag("TILEC_OVERLAP_PROLOGUE"),
        )

    def __setattr__(self, name: str, value) -> None:
        # `codegen_key`: the switches' values as one tuple, kept up to date here so that a
        # launch's in-memory key reads one attribute instead of one per switch.
        object.__setattr__(self, name, value)
        if name in _CODEGEN_SWITCHES:
            object.__setattr__(self, "codegen_key", tuple(getattr(self, s, None) for s in _CODEGEN_SWITCHES))

    def codegen_flags(self) -> str:
        """The settings besides the compile options that change generated code (keyed)."""
        return ",".join(flag for flag, on in (("no-wgmma", not self.wgmma), ("no-tma", not self.tma),
                                               ("no-flatten", not self.flatten_loops),
                                               ("no-order-pure-ops", not self.order_pure_ops),
                                               ("warp-specialize", self.warp_specialize),
                                               ("overlap-prologue", self.overlap_prologue)) if on)


# The process-wide configuration; tests may change its fields.
config = Config.from_env()
