"""The text of layout encodings, as ttgir prints them, and back.

    #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>,
                      threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>
    #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{...}>}>
    #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #tilegpu.mma<{...}>}>
    #tilegpu.linear<{lane = array<i32: 0, 1, 0, 2, ...>, rank = 2 : i32, register = array<i32: 1, 0>, warp = array<i32>}>
    #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>
    #tilegpu.shared<{maxPhase = 8 : i32, order = array<i32: 1, 0>, perPhase = 1 : i32, vec = 8 : i32}>
    #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 128 : i32, transposed = false}>

`encoding_text` writes the form MLIR prints (dictionary keys sorted), `parse_encoding`
reads it back. Plain text, no IR: the dialect (`tilec.dialects.tilegpu`) builds its
attributes from it, and tools that draw layouts read it without MLIR.
"""
from __future__ import annotations

import functools
import re

from .encodings import BlockedEncoding, DotOperandEncoding, Encoding, LinearEncoding, SliceEncoding
from .mma import MmaEncoding
from .shared import NVMMASharedEncoding, SharedEncoding, SwizzledSharedEncoding


def _ints(values) -> str:
    values = list(values)
    return "array<i32: " + ", ".join(str(int(v)) for v in values) + ">" if values else "array<i32>"


def encoding_text(enc: Encoding | SharedEncoding) -> str:
    if isinstance(enc, BlockedEncoding):
        return ("#tilegpu.blocked<{order = " + _ints(enc.order) + ", sizePerThread = " + _ints(enc.size_per_thread)
                + ", threadsPerWarp = " + _ints(enc.threads_per_warp) + ", warpsPerCTA = "
                + _ints(enc.warps_per_cta) + "}>")
    if isinstance(enc, SliceEncoding):
        return "#tilegpu.slice<{dim = " + str(enc.dim) + " : i32, parent = " + encoding_text(enc.parent) + "}>"
    if isinstance(enc, DotOperandEncoding):
        # Keys in MLIR's printing order (sorted), so the text is what the IR prints.
        k_width = f"kWidth = {enc.k_width} : i32, " if enc.k_width else ""
        return ("#tilegpu.dot_op<{" + k_width + "opIdx = " + str(enc.op_idx) + " : i32, parent = "
                + encoding_text(enc.parent) + "}>")
    if isinstance(enc, LinearEncoding):
        # Each basis flattened (`rank` coordinates each), keys in MLIR's sorted order.
        flat = {name: [c for v in getattr(enc, name) for c in v] for name in ("lane", "register", "warp")}
        return (f"#tilegpu.linear<{{lane = {_ints(flat['lane'])}, rank = {enc.rank} : i32, "
                f"register = {_ints(flat['register'])}, warp = {_ints(flat['warp'])}}}>")
    if isinstance(enc, MmaEncoding):
        return (f"#tilegpu.mma<{{instrShape = {_ints(enc.instr_shape)}, versionMajor = {enc.version} : i32, "
                f"warpsPerCTA = {_ints(enc.warps_per_cta)}}}>")
    if isinstance(enc, SwizzledSharedEncoding):
        return (f"#tilegpu.shared<{{maxPhase = {enc.max_phase} : i32, order = {_ints(enc.order)}, "
                f"perPhase = {enc.per_phase} : i32, vec = {enc.vec} : i32}}>")
    if isinstance(enc, NVMMASharedEncoding):
        return (f"#tilegpu.nvmma_shared<{{elementBits = {enc.element_bits} : i32, swizzle = {enc.swizzle_bytes} : i32, "
                f"transposed = {'true' if enc.transposed else 'false'}}}>")
    raise TypeError(f"unknown encoding {enc!r}")


_ARRAY = re.compile(r"(\w+) = array<i32(?:: ([-\d, ]*))?>")
# Integers as MLIR prints them (`2 : i32`); other integer types, or none, are read too,
# for encodings written by hand.
_INT = re.compile(r"(\w+) = (-?\d+)(?: : i\d+)?(?=[,}])")
_BOOL = re.compile(r"(\w+) = (true|false)")


def _arrays(text: str) -> dict[str, tuple[int, ...]]:
    return {name: tuple(int(x) for x in values.split(",")) if values else () for name, values in _ARRAY.findall(text)}


def _parse_blocked(text: str) -> BlockedEncoding:
    f = _fields(text, "blocked", arrays=("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"))
    return BlockedEncoding(f["sizePerThread"], f["threadsPerWarp"], f["warpsPerCTA"], f["order"])


def _fields(text: str, kind: str, ints: tuple[str, ...] = (), arrays: tuple[str, ...] = (),
            bools: tuple[str, ...] = ()) -> dict:
    """The named fields of a flat encoding's text (a ValueError naming what is missing)."""
    values: dict = {name: int(v) for name, v in _INT.findall(text)}
    values.update(_arrays(text))
    values.update({name: v == "true" for name, v in _BOOL.findall(text)})
    missing = [name for name in ints + arrays + bools if name not in values]
    if missing:
        raise ValueError(f"malformed {kind} encoding {text}: missing {', '.join(missing)}")
    return values


@functools.lru_cache(maxsize=None)
def parse_encoding(text: str) -> Encoding:
    """The encoding of an attribute's text (inverse of `encoding_text`)."""
    text = text.strip()
    if text.startswith("#tilegpu.blocked<"):
        return _parse_blocked(text)
    if text.startswith("#tilegpu.slice<"):
        match = re.match(r"#tilegpu\.slice<\{dim = (\d+)(?: : i\d+)?, parent = (.*)\}>$", text)
        if not match:
            raise ValueError(f"malformed slice encoding {text}")
        return SliceEncoding(int(match.group(1)), parse_encoding(match.group(2)))
    if text.startswith("#tilegpu.dot_op<"):
        match = re.match(r"#tilegpu\.dot_op<\{(?:kWidth = (\d+)(?: : i\d+)?, )?opIdx = (\d+)(?: : i\d+)?, "
                         r"parent = (.*)\}>$", text)
        if not match:
            raise ValueError(f"malformed dot_op encoding {text}")
        return DotOperandEncoding(int(match.group(2)), parse_encoding(match.group(3)), int(match.group(1) or 0))
    if text.startswith("#tilegpu.linear<"):
        f = _fields(text, "linear", ints=("rank",), arrays=("register", "lane", "warp"))
        rank = f["rank"]

        def vectors(flat):
            if rank <= 0 or len(flat) % rank:
                raise ValueError(f"malformed linear encoding {text}: bases are not of rank {rank}")
            return tuple(tuple(flat[i:i + rank]) for i in range(0, len(flat), rank))
        return LinearEncoding(vectors(f["register"]), vectors(f["lane"]), vectors(f["warp"]))
    if text.startswith("#tilegpu.mma<"):
        f = _fields(text, "mma", ints=("versionMajor",), arrays=("warpsPerCTA", "instrShape"))
        return MmaEncoding(f["versionMajor"], f["warpsPerCTA"], f["instrShape"])
    if text.startswith("#tilegpu.shared<"):
        f = _fields(text, "shared", ints=("vec", "perPhase", "maxPhase"), arrays=("order",))
        return SwizzledSharedEncoding(f["vec"], f["perPhase"], f["maxPhase"], f["order"])
    if text.startswith("#tilegpu.nvmma_shared<"):
        f = _fields(text, "nvmma_shared", ints=("swizzle", "elementBits"), bools=("transposed",))
        return NVMMASharedEncoding(f["swizzle"], f["elementBits"], f["transposed"])
    raise ValueError(f"not a tilegpu encoding: {text}")
