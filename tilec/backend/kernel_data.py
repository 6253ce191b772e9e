"""What the compile driver takes and returns, as plain data: `CompileOptions`,
`KernelMetadata`, `CompiledKernel`, and the specialisation `tilec.compile` reads from a
signature.

Nothing here imports the MLIR bindings (or the toolkit): the runtime serves a kernel
from the disk cache with these alone, and importing MLIR costs more than the rest of a
cache hit together. `backend/compiler.py` re-exports them.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..errors import ToolNotFoundError, UsageError
from ..language import core as tl
from ..specialization import ArgSpec
from ..target import Target

TILEC_VERSION = "0.1.0"


@dataclass(frozen=True)
class CompileOptions:
    num_warps: int = 4
    num_stages: int = 3
    target: Target = field(default_factory=lambda: Target.parse("sm_90"))
    debug: bool = False
    enable_fp_fusion: bool = True  # a*b + c may become one fma (as in Triton)
    # A libdevice bitcode file linked instead of the toolkit's (Triton's launch option
    # `extern_libs={"libdevice": path}`); "" for the toolkit's.
    libdevice: str = ""
    # The most registers a thread may use (Triton's `maxnreg`: `.maxnreg` in the PTX,
    # which ptxas honours by spilling); 0 for no limit beyond the hardware's.
    maxnreg: int = 0

    def __post_init__(self):
        if isinstance(self.num_warps, bool) or self.num_warps not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"num_warps must be a power of 2 between 1 and 32, got {self.num_warps!r}")
        if not isinstance(self.target, Target):  # strings are parsed where they enter (Target.parse)
            raise TypeError(f"CompileOptions.target must be a Target, got {self.target!r}")
        if isinstance(self.maxnreg, bool) or not isinstance(self.maxnreg, int) or self.maxnreg < 0:
            raise ValueError(f"maxnreg must be a non-negative int (0: no limit), got {self.maxnreg!r}")

    def cache_key(self) -> str:
        """The options as the disk cache keys them (see `options_cache_key`)."""
        return options_cache_key({f.name: getattr(self, f.name) for f in fields(self)})


def options_cache_key(values: dict[str, Any]) -> str:
    """The disk cache's key of compile options given as plain values, one per
    `CompileOptions` field, the target as its name ("sm_90") or a Target.

    A Target is keyed by its name: the rest of it follows from the name and the ptxas
    release, which the compiler fingerprint covers. The runtime keys its lookups with
    this before it builds a `CompileOptions`, because `Target.parse` asks ptxas for its
    version, which a cache hit must not wait for.
    """
    names = [f.name for f in fields(CompileOptions)]
    if set(values) != set(names):
        raise ValueError(f"options_cache_key needs exactly the CompileOptions fields {names}, got {sorted(values)}")
    ordered = {name: values[name] for name in names}
    ordered["target"] = str(ordered["target"])  # Target.__str__ is its name
    if ordered["libdevice"]:  # a file of the user's: its path and which version of it
        stat = os.stat(ordered["libdevice"])
        ordered["libdevice"] = f"{ordered['libdevice']}@{stat.st_size}:{stat.st_mtime_ns}"
    return repr(ordered)


@dataclass
class KernelMetadata:
    name: str
    target: str
    num_warps: int
    num_stages: int
    shared: int = 0
    n_regs: int = 0
    n_spills: int = 0
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, signature type) of kernel params
    param_indices: list[int] = field(default_factory=list)       # their positions among the @jit parameters
    # TMA tensor maps the launcher encodes from the call's values and passes after them
    # (descriptors made in the kernel; see tilec.runtime.tma.kernel_tensor_maps).
    tensormaps: list[dict] = field(default_factory=list)
    # Warps a warp-specialised kernel runs beyond num_warps (its copies' producers): the
    # block has 32 * (num_warps + producer_warps) threads.
    producer_warps: int = 0
    tilec_version: str = TILEC_VERSION


class Stages(dict):
    """`CompiledKernel.asm`: each stage's name -> its text (bytes for the cubin).

    A stage that could not be made because a CUDA toolkit piece is missing (ptxas for the
    cubin) is absent, and reading it raises `ToolNotFoundError` saying why; `missing`
    holds those reasons by stage. `"cubin" in kernel.asm` tells whether there is one."""

    def __init__(self, texts: Any = (), missing: dict[str, str] | None = None):
        super().__init__(texts)
        self.missing: dict[str, str] = dict(missing or {})

    def __missing__(self, stage: str) -> Any:
        if stage in self.missing:
            raise ToolNotFoundError(self.missing[stage])
        raise KeyError(stage)


class CompiledKernel:
    """The result of compiling one specialisation: every stage's text, the cubin, metadata.

    Plain data, stored in the disk cache; launching it is the runtime's business
    (`tilec.runtime.kernel.LaunchableKernel` adds `compiled[grid](*args)`)."""

    def __init__(self, metadata: KernelMetadata, asm: dict[str, Any]):
        self.metadata = metadata
        self.asm = asm if isinstance(asm, Stages) else Stages(asm)

    name = property(lambda self: self.metadata.name)
    n_regs = property(lambda self: self.metadata.n_regs)
    n_spills = property(lambda self: self.metadata.n_spills)
    shared = property(lambda self: self.metadata.shared)
    num_warps = property(lambda self: self.metadata.num_warps)

    @property
    def missing(self) -> dict[str, str]:
        """Why each stage that could not be made is missing ({} when every stage was made)."""
        return self.asm.missing

    def serialize(self) -> bytes:
        texts = {k: v for k, v in self.asm.items() if isinstance(v, str)}
        header = json.dumps({"metadata": asdict(self.metadata), "asm": texts, "missing": self.missing}).encode()
        return len(header).to_bytes(8, "little") + header + self.asm.get("cubin", b"")

    @staticmethod
    def deserialize(data: bytes) -> "CompiledKernel":
        size = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + size])
        meta = header["metadata"]
        meta["params"] = [tuple(p) for p in meta["params"]]
        asm = Stages(header["asm"], header.get("missing"))
        if "cubin" not in asm.missing:
            asm["cubin"] = data[8 + size:]
        return CompiledKernel(KernelMetadata(**meta), asm)

    def __repr__(self) -> str:
        m = self.metadata
        missing = "".join(f", no {stage}" for stage in self.missing)
        return (f"CompiledKernel({m.name}, {m.target}, num_warps={m.num_warps}, regs={m.n_regs}, "
                f"spills={m.n_spills}, shared={m.shared}{missing})")


DUMP_SUFFIXES = {"ttir": "ttir.mlir", "ttgir": "ttgir.mlir", "llir": "ll", "ptx": "ptx", "cubin": "cubin"}


def dump_stage(directory: str, kernel: str, specs: list[ArgSpec], options_key: str, stage: str, value: Any) -> None:
    """Writes one stage of a kernel to `directory` (TILEC_DUMP_DIR) as `<kernel>-<tag>.<suffix>`.

    The tag is a short hash of the argument types and the options (`options_cache_key`),
    so specialisations do not overwrite each other, and a kernel read from the disk cache
    writes the same files as its compilation did."""
    if value is None:
        return
    import hashlib
    tag = hashlib.sha256(repr(([s.key() for s in specs], options_key)).encode()).hexdigest()[:8]
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{kernel}-{tag}.{DUMP_SUFFIXES[stage]}"),
              "wb" if isinstance(value, bytes) else "w") as f:
        f.write(value)


# ----------------------------------------------------------------------------- tilec.compile's signature


def signature_specs(fn: Any, signature: dict[str, Any], constexprs: dict[str, Any]) -> list[ArgSpec]:
    """The ArgSpec of every parameter of KernelFunction `fn` for `tilec.compile`.

    `signature` maps parameter names to types ("*fp32", "i32", ...; ":16" appended
    declares a pointer 16-byte aligned or an integer divisible by 16); `constexprs` maps
    names to compile-time values; a parameter in neither takes its default as a constant.
    """
    specs = []
    for name in fn.arg_names:
        if name in constexprs:
            specs.append(ArgSpec(name, constant=tl._unwrap(constexprs[name]), is_constant=True))
        elif name in signature:
            specs.append(_signature_spec(fn, name, signature[name]))
        elif name in fn.defaults:
            specs.append(ArgSpec(name, constant=fn.defaults[name], is_constant=True))
        else:
            raise UsageError(f"tilec.compile: parameter '{name}' of {fn.__name__} is in neither signature nor constexprs")
    unknown = (set(signature) | set(constexprs)) - set(fn.arg_names)
    if unknown:
        raise UsageError(f"tilec.compile: {fn.__name__} has no parameter(s) {sorted(unknown)}")
    return specs


def _signature_spec(fn: Any, name: str, text: Any) -> ArgSpec:
    """'*fp32:16' -> ArgSpec(name, pointer to fp32, divisibility 16)."""
    type_text, _, div_text = str(text).partition(":")
    try:
        ty = tl.dtype_from_signature(type_text)
    except ValueError as exc:
        raise UsageError(f"tilec.compile: parameter '{name}' of {fn.__name__}: {exc}") from None
    if div_text and div_text not in ("1", "8", "16"):
        raise UsageError(f"tilec.compile: parameter '{name}' of {fn.__name__}: divisibility must be 1, 8 or 16 "
                         f"(written '{text}'), got {div_text!r}")
    return ArgSpec(name, ty, divisibility=int(div_text) if div_text else 1)
