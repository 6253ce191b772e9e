"""Layout encodings as Triton prints them, read as tilec's encodings.

    #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
    #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
    #ttg.slice<{dim = 1, parent = #blocked}>
    #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
    #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
    #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>

A ttgir file of Triton's (TRITON_KERNEL_DUMP, MLIR_ENABLE_DUMP, `kernel.asm["ttgir"]`)
names its encodings by aliases (`#blocked`, `#mma`) defined at its top; an encoding that
refers to one (a slice's or dot operand's parent) is read with those aliases. The older
`#triton_gpu.` prefix, `mma` for `nvidia_mma` and `shared` for `swizzled_shared` are read
too. Triton spells the same layouts differently from ttgir of tilec's (syntax.py):

    lists          [1, 4]                      array<i32: 1, 4>
    wgmma          instrShape [16, N, K]       (per warp)  instrShape [64, N]  (per warpgroup)
    NVMMA shared   swizzlingByteWidth, elementBitWidth     swizzle, elementBits

Fields describing CTA clusters (CTAsPerCGA, CTASplitNum, CTAOrder) are read only where
they describe one CTA, as tilec compiles; a linear layout's lists of bases
(`register = [[0, 1], ...]`) become tilec's `#tilegpu.linear`; Triton's other encodings
(AMD's, padded shared) are refused by name. Plain Python: no MLIR, as for syntax.py.
"""
from __future__ import annotations

import math
import re
from typing import Any, Mapping

from .encodings import BlockedEncoding, DotOperandEncoding, LinearEncoding, SliceEncoding
from .mma import WGMMA_M, MmaEncoding
from .shared import NVMMASharedEncoding, SwizzledSharedEncoding

PREFIXES = ("#ttg.", "#triton_gpu.")
KINDS = ("blocked", "slice", "dot_op", "nvidia_mma", "swizzled_shared", "nvmma_shared", "linear")
_OLD_NAMES = {"mma": "nvidia_mma", "shared": "swizzled_shared"}
# Fields Triton prints that change nothing tilec draws: the minor version of an mma
# layout, and the order of CTAs in a cluster (there is one).
_IGNORED = {"versionMinor", "CTAOrder"}
_SINGLE_CTA = ("CTAsPerCGA", "CTASplitNum")

_TOKEN = re.compile(r"\s*(#[\w.$-]+|-?\d+|array<i32:?|[A-Za-z_][\w.]*|<\{|\}>|[\[\]{}=,:<>])")


def is_triton_encoding(text: str) -> bool:
    """Whether `text` is an encoding in Triton's syntax (`#ttg.blocked<{...}>`)."""
    return text.strip().startswith(PREFIXES)


def parse_triton_encoding(text: str, aliases: Mapping[str, str] | None = None):
    """The tilec encoding of `text`, an encoding as Triton prints it; `aliases` maps the
    names a ttgir file defines (`#blocked`) to their text, for the parents of slices
    and dot operands. A ValueError says what cannot be read."""
    parser = _Parser(text.strip(), dict(aliases or {}))
    encoding = parser.attribute()
    parser.end()
    return encoding


class _Parser:
    """Recursive descent over the tokens of one attribute."""

    def __init__(self, text: str, aliases: dict[str, str], seen: tuple[str, ...] = ()):
        self.text, self.aliases, self.seen = text, aliases, seen
        self.tokens = self._tokenize(text)
        self.at = 0

    def _tokenize(self, text: str) -> list[str]:
        tokens, at = [], 0
        while at < len(text.rstrip()):
            match = _TOKEN.match(text, at)
            if match is None:
                raise ValueError(f"cannot read the encoding {text!r} at {text[at:at + 20]!r}")
            tokens.append(match.group(1))
            at = match.end()
        return tokens

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            found = "the end" if token is None else repr(token)
            raise ValueError(f"cannot read the encoding {self.text!r}: expected {expected or 'more'}, found {found}")
        self.at += 1
        return token

    def end(self) -> None:
        if self.peek() is not None:
            raise ValueError(f"cannot read the encoding {self.text!r}: unexpected {self.peek()!r} after its end")

    def attribute(self):
        name = self.take()
        if not name.startswith("#"):
            raise ValueError(f"cannot read the encoding {self.text!r}: expected '#ttg.<kind><{{...}}>'")
        if self.peek() != "<{":  # an alias the file defines
            return self._alias(name)
        prefix = next((p for p in PREFIXES if name.startswith(p)), None)
        if prefix is None:
            raise ValueError(f"{name} is not one of Triton's encodings (#ttg.<kind>)")
        kind = name[len(prefix):]
        kind = _OLD_NAMES.get(kind, kind)
        if kind not in KINDS:
            raise ValueError(f"tilec has no equivalent of Triton's {kind} encoding; it reads {', '.join(KINDS)}")
        self.take("<{")
        fields: dict[str, Any] = {}
        while self.peek() != "}>":
            key = self.take()
            self.take("=")
            fields[key] = self.value()
            if self.peek() == ",":
                self.take()
        self.take("}>")
        return _build(kind, fields, name + "<{...}>")

    def _alias(self, name: str):
        if name not in self.aliases:
            known = ", ".join(sorted(self.aliases)) or "none"
            raise ValueError(f"{name} is an alias that a ttgir file defines (aliases known here: {known}); "
                             "give the encoding's text, or the file (`tilec layout --ir FILE`)")
        if name in self.seen:
            raise ValueError(f"alias {name} refers to itself")
        inner = _Parser(self.aliases[name].strip(), self.aliases, self.seen + (name,))
        encoding = inner.attribute()
        inner.end()
        return encoding

    def value(self) -> Any:
        token = self.peek()
        if token is None:
            self.take()  # says what is missing
        if token == "[" or token.startswith("array<i32"):
            self.take()
            closing = "]" if token == "[" else ">"
            values = []
            while self.peek() != closing:
                values.append(self.value() if self.peek() == "[" else int(self.take()))  # a list of lists
                if self.peek() == ",":
                    self.take()
            self.take(closing)
            return tuple(values)
        if token.startswith("#"):
            return self.attribute()
        self.take()
        if token in ("true", "false"):
            return token == "true"
        try:
            number = int(token)
        except ValueError:
            raise ValueError(f"cannot read the encoding {self.text!r}: unexpected {token!r}") from None
        if self.peek() == ":":  # `2 : i32`, as MLIR prints typed integers
            self.take()
            self.take()
        return number


_REQUIRED = {
    "blocked": ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"),
    "slice": ("dim", "parent"),
    "dot_op": ("opIdx", "parent"),
    "nvidia_mma": ("versionMajor", "warpsPerCTA"),
    "swizzled_shared": ("vec", "perPhase", "maxPhase", "order"),
    "nvmma_shared": ("swizzlingByteWidth", "elementBitWidth"),
    "linear": ("register", "lane", "warp"),
}
_OPTIONAL = {"dot_op": ("kWidth",), "nvidia_mma": ("instrShape",), "swizzled_shared": ("hasLeadingOffset",),
             "nvmma_shared": ("transposed", "fp4Padded"), "linear": ("block",)}


def _build(kind: str, fields: dict[str, Any], shown: str):
    missing = [key for key in _REQUIRED[kind] if key not in fields]
    if missing:
        raise ValueError(f"Triton's {kind} encoding {shown} lacks {', '.join(missing)}")
    for key in _SINGLE_CTA:
        if key in fields and math.prod(fields.pop(key)) != 1:
            raise ValueError(f"{shown}: {key} describes a cluster of several CTAs; tilec compiles for one")
    unknown = sorted(set(fields) - set(_REQUIRED[kind]) - set(_OPTIONAL.get(kind, ())) - _IGNORED)
    if unknown:
        raise ValueError(f"tilec does not read {', '.join(unknown)} of Triton's {kind} encoding")
    f = fields
    if kind == "linear":
        if f.get("block"):
            raise ValueError(f"{shown}: block bases describe a cluster of several CTAs; tilec compiles for one")
        return LinearEncoding(tuple(f["register"]), tuple(f["lane"]), tuple(f["warp"]))
    if kind == "blocked":
        return BlockedEncoding(f["sizePerThread"], f["threadsPerWarp"], f["warpsPerCTA"], f["order"])
    if kind == "slice":
        return SliceEncoding(f["dim"], f["parent"])
    if kind == "dot_op":
        return DotOperandEncoding(f["opIdx"], f["parent"], f.get("kWidth", 0))
    if kind == "nvidia_mma":
        return _mma(f["versionMajor"], f["warpsPerCTA"], f.get("instrShape"), shown)
    if kind == "swizzled_shared":
        if f.get("hasLeadingOffset"):
            raise ValueError(f"{shown}: a shared layout with hasLeadingOffset is the wgmma operand layout of "
                             "older Triton; write it as #ttg.nvmma_shared<{swizzlingByteWidth = ..., "
                             "transposed = ..., elementBitWidth = ...}>")
        return SwizzledSharedEncoding(f["vec"], f["perPhase"], f["maxPhase"], f["order"])
    if f.get("fp4Padded"):
        raise ValueError(f"{shown}: tilec has no padded fp4 NVMMA layout")
    return NVMMASharedEncoding(f["swizzlingByteWidth"], f["elementBitWidth"], bool(f.get("transposed", False)))


def _mma(version: int, warps: tuple[int, ...], instr_shape: tuple[int, ...] | None, shown: str) -> MmaEncoding:
    """Triton's mma v3 instrShape is one warp's [16, N, K]; tilec's the warpgroup's
    [64, N] (K follows from the operand type)."""
    if version == 3:
        if instr_shape is None or len(instr_shape) != 3:
            raise ValueError(f"{shown}: an mma v3 layout needs instrShape = [16, N, K]")
        return MmaEncoding(3, warps, (WGMMA_M, instr_shape[1]))
    if version == 2:
        return MmaEncoding(2, warps, tuple(instr_shape) if instr_shape else (16, 8))
    raise ValueError(f"{shown}: tilec draws mma versions 2 (mma.sync) and 3 (wgmma), not {version}")
