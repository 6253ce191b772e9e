"""The `tilegpu` dialect (ttgir): layouts on tensors, and GPU-level ops.

Every tensor in ttgir carries a layout encoding attribute:

    tensor<1024xf32, #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>,
                                       threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>>
    tensor<64xf32, #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{...}>}>>

Ops:
    %y = "tilegpu.convert_layout"(%x) : (tensor<..., #a>) -> tensor<..., #b>

Module attributes: `tilegpu.num-warps` (i32) and `tilegpu.target` (e.g. "sm_90").

The bindings return IRDL attributes opaquely, so encodings are read back by parsing
their text once (cached); `tilec.layout.encodings` holds the IR-free classes.
"""
from __future__ import annotations

import functools
import math
import re

from mlir import ir

from ..layout.encodings import BlockedEncoding, DotOperandEncoding, Encoding, SliceEncoding
from ._mlir import create_op, is_tensor, register_irdl, tensor_type
from .op_facts import define_op, verifier

IRDL = """
irdl.dialect @tilegpu {
  irdl.attribute @blocked {
    %0 = irdl.base "#builtin.dictionary"
    irdl.parameters(params: %0)
  }
  irdl.attribute @slice {
    %0 = irdl.base "#builtin.dictionary"
    irdl.parameters(params: %0)
  }
  irdl.attribute @dot_op {
    %0 = irdl.base "#builtin.dictionary"
    irdl.parameters(params: %0)
  }
  irdl.operation @convert_layout {
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }
}
"""

register_irdl("tilegpu", IRDL)

NUM_WARPS_ATTR = "tilegpu.num-warps"
TARGET_ATTR = "tilegpu.target"

# ----------------------------------------------------------------------------- encodings <-> text


def _ints(values) -> str:
    return "array<i32: " + ", ".join(str(int(v)) for v in values) + ">"


def encoding_text(enc: Encoding) -> str:
    if isinstance(enc, BlockedEncoding):
        return ("#tilegpu.blocked<{order = " + _ints(enc.order) + ", sizePerThread = " + _ints(enc.size_per_thread)
                + ", threadsPerWarp = " + _ints(enc.threads_per_warp) + ", warpsPerCTA = "
                + _ints(enc.warps_per_cta) + "}>")
    if isinstance(enc, SliceEncoding):
        return "#tilegpu.slice<{dim = " + str(enc.dim) + " : i32, parent = " + encoding_text(enc.parent) + "}>"
    if isinstance(enc, DotOperandEncoding):
        return "#tilegpu.dot_op<{opIdx = " + str(enc.op_idx) + " : i32, parent = " + encoding_text(enc.parent) + "}>"
    raise TypeError(f"unknown encoding {enc!r}")


_ARRAY = re.compile(r"(\w+) = array<i32(?:: ([-\d, ]*))?>")


def _parse_blocked(text: str) -> BlockedEncoding:
    fields = {name: tuple(int(x) for x in values.split(",")) if values else ()
              for name, values in _ARRAY.findall(text)}
    return BlockedEncoding(fields["sizePerThread"], fields["threadsPerWarp"], fields["warpsPerCTA"], fields["order"])


@functools.lru_cache(maxsize=None)
def parse_encoding(text: str) -> Encoding:
    """The encoding of an attribute's text (inverse of `encoding_text`)."""
    text = text.strip()
    if text.startswith("#tilegpu.blocked<"):
        return _parse_blocked(text)
    if text.startswith("#tilegpu.slice<"):
        match = re.match(r"#tilegpu\.slice<\{dim = (\d+) : i32, parent = (.*)\}>$", text)
        if not match:
            raise ValueError(f"malformed slice encoding {text}")
        return SliceEncoding(int(match.group(1)), parse_encoding(match.group(2)))
    if text.startswith("#tilegpu.dot_op<"):
        match = re.match(r"#tilegpu\.dot_op<\{opIdx = (\d+) : i32, parent = (.*)\}>$", text)
        if not match:
            raise ValueError(f"malformed dot_op encoding {text}")
        return DotOperandEncoding(int(match.group(1)), parse_encoding(match.group(2)))
    raise ValueError(f"not a tilegpu encoding: {text}")


def encoding_attr(enc: Encoding) -> ir.Attribute:
    return ir.Attribute.parse(encoding_text(enc))


def layout_of(ty: ir.Type) -> Encoding | None:
    """The encoding of a tensor type (None for scalars and unencoded tensors)."""
    if not is_tensor(ty):
        return None
    enc = tensor_type(ty).encoding
    return None if enc is None else parse_encoding(str(enc))


def with_layout(ty: ir.Type, enc: Encoding | None) -> ir.Type:
    """`ty` with its encoding replaced (scalars are returned unchanged)."""
    if not is_tensor(ty):
        return ty
    t = tensor_type(ty)
    return ir.RankedTensorType.get(list(t.shape), t.element_type, None if enc is None else encoding_attr(enc))


# ----------------------------------------------------------------------------- ops


def convert_layout(src: ir.Value, enc: Encoding) -> ir.Value:
    return create_op("tilegpu.convert_layout", [with_layout(src.type, enc)], [src]).result


# ----------------------------------------------------------------------------- verification


def encoding_error(ty: ir.Type) -> str | None:
    """Why a tensor type's encoding is malformed for its shape (None when it is fine)."""
    if not is_tensor(ty) or tensor_type(ty).encoding is None:
        return None
    try:
        enc = layout_of(ty)
    except ValueError as exc:
        return str(exc)
    shape = list(tensor_type(ty).shape)
    if enc.rank != len(shape):
        return f"encoding of rank {enc.rank} on a tensor of rank {len(shape)} ({ty})"
    base = enc
    while isinstance(base, (SliceEncoding, DotOperandEncoding)):
        base = base.parent
    if isinstance(base, BlockedEncoding):
        if math.prod(base.threads_per_warp) != 32:
            return f"threadsPerWarp {list(base.threads_per_warp)} must multiply to 32"
        for name, values in (("sizePerThread", base.size_per_thread), ("threadsPerWarp", base.threads_per_warp),
                             ("warpsPerCTA", base.warps_per_cta)):
            if any(v <= 0 or v & (v - 1) for v in values):
                return f"{name} {list(values)} must hold powers of two"
    return None


define_op("tilegpu.convert_layout", pure=True)


@verifier("tilegpu.convert_layout")
def _verify_convert_layout(op: ir.Operation) -> str | None:
    src, res = op.operands[0].type, op.results[0].type
    if list(tensor_type(src).shape) != list(tensor_type(res).shape):
        return "cannot change the shape"
    if tensor_type(src).element_type != tensor_type(res).element_type:
        return "cannot change the element type"
    return None


# ----------------------------------------------------------------------------- module attributes


def num_warps_of(module_op: ir.Operation) -> int:
    return ir.IntegerAttr(module_op.attributes[NUM_WARPS_ATTR]).value


def target_of(module_op: ir.Operation) -> str:
    return ir.StringAttr(module_op.attributes[TARGET_ATTR]).value
