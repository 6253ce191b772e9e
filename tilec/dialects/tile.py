"""The `tile` dialect (ttir): what the language needs beyond upstream arith/math/scf.

Tensors are builtin `tensor<...>`; elementwise math is upstream arith/math applied to
tensors; control flow is scf. This module holds the IRDL definition, one small builder
and reader per op, and the verifiers for the shape and type rules IRDL cannot express.

    !tile.ptr<f32>                          pointer to f32 in global memory
    %p = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32>
    %s = "tile.splat"(%x) : (f32) -> tensor<128xf32>
    %b = "tile.broadcast"(%t) : (tensor<1x128xf32>) -> tensor<64x128xf32>
    %e = "tile.expand_dims"(%t) {axis = 0 : i32} : (tensor<128xf32>) -> tensor<1x128xf32>
    %q = "tile.addptr"(%ptrs, %offs) : (tensor<128x!tile.ptr<f32>>, tensor<128xi32>) -> tensor<128x!tile.ptr<f32>>
    %v = "tile.load"(%q, %mask, %other) {operandSegmentSizes = array<i32: 1, 1, 1>, ...}
    "tile.store"(%q, %v, %mask) {operandSegmentSizes = array<i32: 1, 1, 1>, ...}
    %m = "tile.reduce"(%v) ({ ^bb0(%a: f32, %b: f32): ... gpu.yield %c : f32 }) {axis = 0 : i32, ...}
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

from mlir import ir

from ._mlir import (bool_attr, create_op, i32_attr, int_attr_value, is_tensor, operand_groups,
                    register_irdl, str_attr, tensor_type)
from .op_facts import define_op, verifier

# Reductions take up to this many operands (each its own IRDL group, see _mlir.py).
MAX_REDUCE_OPERANDS = 8


# tile.print shows up to this many values.
MAX_PRINT_OPERANDS = 16

# tile.extern_elementwise takes 1 to this many operands (libdevice's norm4d has 4).
MAX_EXTERN_OPERANDS = 4

# tile.inline_asm takes up to this many operands and gives up to this many results.
MAX_ASM_OPERANDS = 16
MAX_ASM_RESULTS = 8


def _groups(prefix: str, keyword: str, count: int = MAX_REDUCE_OPERANDS, first_optional: bool = False) -> str:
    lines, names = [], []
    for i in range(count):
        lines.append(f"    %{prefix}{i} = irdl.any")
        names.append(f"{keyword}{i}: {'optional ' if i or first_optional else ''}%{prefix}{i}")
    return "\n".join(lines), ", ".join(names)


_RED_IN_DEFS, _RED_IN = _groups("in", "src")
_RED_OUT_DEFS, _RED_OUT = _groups("out", "result")
_PRINT_DEFS, _PRINT_ARGS = _groups("arg", "arg", MAX_PRINT_OPERANDS, first_optional=True)
_ASM_IN_DEFS, _ASM_IN = _groups("in", "arg", MAX_ASM_OPERANDS, first_optional=True)
_EXTERN_DEFS, _EXTERN_ARGS = _groups("a", "arg", MAX_EXTERN_OPERANDS)
_ASM_OUT_DEFS, _ASM_OUT = _groups("out", "result", MAX_ASM_RESULTS)

IRDL = f"""
irdl.dialect @tile {{
  irdl.type @ptr {{
    %0 = irdl.any
    irdl.parameters(pointee: %0)
  }}
  irdl.operation @get_program_id {{
    %0 = irdl.base "#builtin.integer"
    irdl.attributes {{"axis" = %0}}
    %1 = irdl.is i32
    irdl.results(result: %1)
  }}
  irdl.operation @get_num_programs {{
    %0 = irdl.base "#builtin.integer"
    irdl.attributes {{"axis" = %0}}
    %1 = irdl.is i32
    irdl.results(result: %1)
  }}
  irdl.operation @make_range {{
    %0 = irdl.base "#builtin.integer"
    %1 = irdl.base "#builtin.integer"
    irdl.attributes {{"start" = %0, "end" = %1}}
    %2 = irdl.base "!builtin.tensor"
    irdl.results(result: %2)
  }}
  irdl.operation @splat {{
    %0 = irdl.any
    %1 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @broadcast {{
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @expand_dims {{
    %a = irdl.base "#builtin.integer"
    irdl.attributes {{"axis" = %a}}
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @addptr {{
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.any
    irdl.operands(ptr: %0, offset: %1)
    irdl.results(result: %2)
  }}
  irdl.operation @ptr_to_int {{
    %0 = irdl.any
    %1 = irdl.any
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @int_to_ptr {{
    %0 = irdl.any
    %1 = irdl.any
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @bitcast {{
    %0 = irdl.any
    %1 = irdl.any
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @fp_to_fp {{
    %0 = irdl.any
    %1 = irdl.any
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @load {{
    %c = irdl.base "#builtin.string"
    %e = irdl.base "#builtin.string"
    %v = irdl.base "#builtin.integer"
    irdl.attributes {{"cache" = %c, "evict" = %e, "volatile" = %v}}
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.any
    %3 = irdl.any
    irdl.operands(ptr: %0, mask: optional %1, other: optional %2)
    irdl.results(result: %3)
  }}
  irdl.operation @store {{
    %c = irdl.base "#builtin.string"
    %e = irdl.base "#builtin.string"
    irdl.attributes {{"cache" = %c, "evict" = %e}}
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.any
    irdl.operands(ptr: %0, value: %1, mask: optional %2)
  }}
  irdl.operation @descriptor_load {{
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.base "!builtin.tensor"
    %r = irdl.region
    irdl.operands(tensormap: %0, offsets: variadic %1)
    irdl.results(result: %2)
    irdl.regions(fallback: %r)
  }}
  irdl.operation @descriptor_store {{
    %0 = irdl.any
    %1 = irdl.base "!builtin.tensor"
    %2 = irdl.any
    %r = irdl.region
    irdl.operands(tensormap: %0, value: %1, offsets: variadic %2)
    irdl.regions(fallback: %r)
  }}
  irdl.operation @reshape {{
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @trans {{
    %o = irdl.base "#builtin.dense_array"
    irdl.attributes {{"order" = %o}}
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }}
  irdl.operation @join {{
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    %2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %0, rhs: %1)
    irdl.results(result: %2)
  }}
  irdl.operation @split {{
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    %2 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0)
    irdl.results(lhs: %1, rhs: %2)
  }}
  irdl.operation @cat {{
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    %2 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %0, rhs: %1)
    irdl.results(result: %2)
  }}
  irdl.operation @extern_elementwise {{
    %s = irdl.base "#builtin.string"
    %p = irdl.base "#builtin.integer"
    irdl.attributes {{"symbol" = %s, "pure" = %p}}
{_EXTERN_DEFS}
    %r = irdl.any
    irdl.operands({_EXTERN_ARGS})
    irdl.results(result: %r)
  }}
  irdl.operation @scan {{
    %a = irdl.base "#builtin.integer"
    %rv = irdl.base "#builtin.integer"
    irdl.attributes {{"axis" = %a, "reverse" = %rv}}
{_RED_IN_DEFS}
    irdl.operands({_RED_IN})
{_RED_OUT_DEFS}
    irdl.results({_RED_OUT})
    %r = irdl.region
    irdl.regions(combine: %r)
  }}
  irdl.operation @dot {{
    %p = irdl.base "#builtin.string"
    irdl.attributes {{"input_precision" = %p}}
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.base "!builtin.tensor"
    %3 = irdl.base "!builtin.tensor"
    irdl.operands(a: %0, b: %1, acc: %2)
    irdl.results(result: %3)
  }}
  irdl.operation @atomic_rmw {{
    %k = irdl.base "#builtin.string"
    %m = irdl.base "#builtin.string"
    %c = irdl.base "#builtin.string"
    irdl.attributes {{"kind" = %k, "sem" = %m, "scope" = %c}}
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.any
    %3 = irdl.any
    irdl.operands(ptr: %0, value: %1, mask: optional %2)
    irdl.results(result: %3)
  }}
  irdl.operation @atomic_cas {{
    %m = irdl.base "#builtin.string"
    %c = irdl.base "#builtin.string"
    irdl.attributes {{"sem" = %m, "scope" = %c}}
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.any
    %3 = irdl.any
    irdl.operands(ptr: %0, cmp: %1, value: %2)
    irdl.results(result: %3)
  }}
  irdl.operation @atomic_load {{
    %m = irdl.base "#builtin.string"
    %c = irdl.base "#builtin.string"
    irdl.attributes {{"sem" = %m, "scope" = %c}}
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.any
    irdl.operands(ptr: %0, mask: optional %1)
    irdl.results(result: %2)
  }}
  irdl.operation @atomic_store {{
    %m = irdl.base "#builtin.string"
    %c = irdl.base "#builtin.string"
    irdl.attributes {{"sem" = %m, "scope" = %c}}
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.any
    irdl.operands(ptr: %0, value: %1, mask: optional %2)
  }}
  irdl.operation @atomic_poll {{
    %m = irdl.base "#builtin.string"
    %c = irdl.base "#builtin.string"
    irdl.attributes {{"sem" = %m, "scope" = %c}}
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.is i64
    %3 = irdl.any
    irdl.operands(ptr: %0, expected: %1, timeout: optional %2)
    irdl.results(result: %3)
  }}
  irdl.operation @special_register {{
    %n = irdl.base "#builtin.string"
    irdl.attributes {{"name" = %n}}
    %0 = irdl.any
    irdl.results(result: %0)
  }}
  irdl.operation @grid_dependency {{
    %a = irdl.base "#builtin.string"
    irdl.attributes {{"action" = %a}}
  }}
  irdl.operation @gather {{
    %a = irdl.base "#builtin.integer"
    irdl.attributes {{"axis" = %a}}
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    %2 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0, index: %1)
    irdl.results(result: %2)
  }}
  irdl.operation @histogram {{
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    %2 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0, mask: optional %1)
    irdl.results(result: %2)
  }}
  irdl.operation @inline_asm {{
    %s = irdl.base "#builtin.string"
    %c = irdl.base "#builtin.string"
    %p = irdl.base "#builtin.integer"
    %k = irdl.base "#builtin.integer"
    irdl.attributes {{"asm" = %s, "constraints" = %c, "pure" = %p, "pack" = %k}}
{_ASM_IN_DEFS}
    irdl.operands({_ASM_IN})
{_ASM_OUT_DEFS}
    irdl.results({_ASM_OUT})
  }}
  irdl.operation @print {{
    %p = irdl.base "#builtin.string"
    %h = irdl.base "#builtin.integer"
    %g = irdl.base "#builtin.dense_array"
    irdl.attributes {{"prefix" = %p, "hex" = %h, "is_signed" = %g}}
{_PRINT_DEFS}
    irdl.operands({_PRINT_ARGS})
  }}
  irdl.operation @assert {{
    %m = irdl.base "#builtin.string"
    irdl.attributes {{"message" = %m}}
    %0 = irdl.any
    irdl.operands(condition: %0)
  }}
  irdl.operation @assume {{
    %0 = irdl.any
    irdl.operands(condition: %0)
  }}
  irdl.operation @barrier {{
  }}
  irdl.operation @map_elementwise {{
    %k = irdl.base "#builtin.integer"
    irdl.attributes {{"pack" = %k}}
{_RED_IN_DEFS}
    irdl.operands({_RED_IN})
{_RED_OUT_DEFS}
    irdl.results({_RED_OUT})
    %r = irdl.region
    irdl.regions(body: %r)
  }}
  irdl.operation @reduce {{
    %a = irdl.base "#builtin.integer"
    irdl.attributes {{"axis" = %a}}
{_RED_IN_DEFS}
    irdl.operands({_RED_IN})
{_RED_OUT_DEFS}
    irdl.results({_RED_OUT})
    %r = irdl.region
    irdl.regions(combine: %r)
  }}
}}
"""

register_irdl("tile", IRDL)

# ----------------------------------------------------------------------------- facts
# What passes may assume about each op (see op_facts.py); verifiers are attached below.


def _load_is_pure(op: ir.Operation) -> bool:
    return not ir.BoolAttr(op.attributes["volatile"]).value if "volatile" in op.attributes else True


def _declared_pure(op: ir.Operation) -> bool:
    return ir.BoolAttr(op.attributes["pure"]).value


def _asm_is_elementwise(op: ir.Operation) -> bool:
    # A packed asm takes several neighbouring elements per instance: its layout is chosen
    # for it (convert-tile-to-tilegpu) and must be kept, so only pack == 1 is elementwise.
    return _declared_pure(op) and ir.IntegerAttr(op.attributes["pack"]).value == 1


for _name in ("get_program_id", "get_num_programs", "make_range", "splat", "broadcast", "expand_dims",
              "reshape", "trans", "join", "split", "cat", "reduce", "scan", "histogram"):
    define_op("tile." + _name, pure=True)
def _map_is_elementwise(op: ir.Operation) -> bool:
    # With pack > 1 the body takes `pack` neighbouring elements of a thread at once: as for
    # a packed asm, its layout is chosen for it (convert-tile-to-tilegpu) and must be kept.
    return ir.IntegerAttr(op.attributes["pack"]).value == 1


def _register_is_pure(op: ir.Operation) -> bool:
    # %smid is fixed for the life of a program; %globaltimer moves between two reads.
    return ir.StringAttr(op.attributes["name"]).value != "globaltimer"


# map_elementwise: its body runs once per element (or pack of elements), on scalars
# (control flow included).
define_op("tile.map_elementwise", pure=True, elementwise=_map_is_elementwise)
define_op("tile.special_register", pure=_register_is_pure)
# fp_to_fp: a conversion to or from an fp8 format, by the format's own rules (to nearest
# even, saturating); not arith.extf/truncf, which MLIR would fold by its own rules.
for _name in ("addptr", "ptr_to_int", "int_to_ptr", "bitcast", "fp_to_fp"):
    define_op("tile." + _name, pure=True, elementwise=True)
def _dot_any_layout_operands(op: ir.Operation) -> frozenset[int]:
    # The FMA lowering reads A and B through shared memory in any layout; on tensor
    # cores (a result whose layout is not blocked, set by accelerate-matmul) they must be
    # in their dot_op layouts.
    from .tilegpu import layout_of
    from ..layout.encodings import BlockedEncoding
    result = layout_of(op.results[0].type)
    return frozenset((0, 1)) if result is None or isinstance(result, BlockedEncoding) else frozenset()


# tl.dot's FMA lowering and gather read these operands through shared memory.
define_op("tile.dot", pure=True, any_layout_operands=_dot_any_layout_operands)
define_op("tile.gather", pure=True, any_layout_operands=(0,))
define_op("tile.load", pure=_load_is_pure, reads_memory=True)
define_op("tile.extern_elementwise", pure=_declared_pure, elementwise=_declared_pure)
define_op("tile.inline_asm", pure=_declared_pure, elementwise=_asm_is_elementwise)
# atomic_load is kept even when its result is unused: an acquire orders what follows.
for _name in ("store", "atomic_rmw", "atomic_cas", "atomic_load", "atomic_store", "atomic_poll",
              "grid_dependency", "print", "assert", "assume", "barrier"):
    define_op("tile." + _name)
# A block read or written through a TMA tensor map (a host tensor descriptor on sm_90):
# the tensor map holds the base, shape, strides, box and padding; the operands are the
# block's offsets, outermost first. The `fallback` region does the same with pointers
# (what the language emits without a tensor map; a load's yields the block):
# tile-choose-descriptor-copies keeps one of the two.
define_op("tile.descriptor_load", reads_memory=True)
define_op("tile.descriptor_store", any_layout_operands=(1,))  # written to its block in any layout

# ----------------------------------------------------------------------------- types


@functools.lru_cache(maxsize=None)
def _ptr_type_text(pointee_text: str) -> str:
    return f"!tile.ptr<{pointee_text}>"


def ptr_type(pointee: ir.Type) -> ir.Type:
    return ir.Type.parse(_ptr_type_text(str(pointee)))


def is_ptr_type(ty: ir.Type) -> bool:
    return str(ty).startswith("!tile.ptr<")


def pointee_type(ty: ir.Type) -> ir.Type:
    text = str(ty)
    assert text.startswith("!tile.ptr<") and text.endswith(">"), text
    return ir.Type.parse(text[len("!tile.ptr<"):-1], context=ty.context)


def memory_bits(pointee: ir.Type) -> int:
    """Bits one element of type `pointee` takes in memory (bools a byte, pointers 64)."""
    if is_ptr_type(pointee):
        return 64
    width = getattr(pointee, "width", None)
    if width is None:
        raise ValueError(f"no memory size for {pointee}")
    return max(8, width)


def element_type(ty: ir.Type) -> ir.Type:
    """The element type of a tensor type; a scalar type itself."""
    return tensor_type(ty).element_type if is_tensor(ty) else ty


def shape_of(ty: ir.Type) -> tuple[int, ...]:
    return tuple(tensor_type(ty).shape) if is_tensor(ty) else ()


# ----------------------------------------------------------------------------- builders


def get_program_id(axis: int) -> ir.Value:
    return create_op("tile.get_program_id", [ir.IntegerType.get_signless(32)],
                     attributes={"axis": i32_attr(axis)}).result


def get_num_programs(axis: int) -> ir.Value:
    return create_op("tile.get_num_programs", [ir.IntegerType.get_signless(32)],
                     attributes={"axis": i32_attr(axis)}).result


def make_range(start: int, end: int, ty: ir.Type) -> ir.Value:
    return create_op("tile.make_range", [ty], attributes={"start": i32_attr(start), "end": i32_attr(end)}).result


def splat(src: ir.Value, ty: ir.Type) -> ir.Value:
    return create_op("tile.splat", [ty], [src]).result


def broadcast(src: ir.Value, ty: ir.Type) -> ir.Value:
    return create_op("tile.broadcast", [ty], [src]).result


def expand_dims(src: ir.Value, axis: int, ty: ir.Type) -> ir.Value:
    return create_op("tile.expand_dims", [ty], [src], attributes={"axis": i32_attr(axis)}).result


def addptr(ptr: ir.Value, offset: ir.Value) -> ir.Value:
    return create_op("tile.addptr", [ptr.type], [ptr, offset]).result


def load(ptr: ir.Value, mask: ir.Value | None, other: ir.Value | None, ty: ir.Type, *,
         cache: str = "", evict: str = "", volatile: bool = False) -> ir.Value:
    return create_op("tile.load", [ty], [ptr, mask, other], segments=[1, int(mask is not None), int(other is not None)],
                     attributes={"cache": str_attr(cache), "evict": str_attr(evict),
                                 "volatile": bool_attr(volatile)}).result


def store(ptr: ir.Value, value: ir.Value, mask: ir.Value | None, *, cache: str = "", evict: str = "") -> ir.Operation:
    return create_op("tile.store", [], [ptr, value, mask], segments=[1, 1, int(mask is not None)],
                     attributes={"cache": str_attr(cache), "evict": str_attr(evict)})


def descriptor_load(tensormap: ir.Value, offsets: Sequence[ir.Value], ty: ir.Type) -> ir.Operation:
    """A tile.descriptor_load with an empty fallback region (the caller fills it)."""
    return create_op("tile.descriptor_load", [ty], [tensormap, *offsets], segments=[1, len(offsets)], regions=1)


def descriptor_store(tensormap: ir.Value, value: ir.Value, offsets: Sequence[ir.Value]) -> ir.Operation:
    """A tile.descriptor_store with an empty fallback region (the caller fills it)."""
    return create_op("tile.descriptor_store", [], [tensormap, value, *offsets], segments=[1, 1, len(offsets)],
                     regions=1)


def reshape(src: ir.Value, ty: ir.Type) -> ir.Value:
    return create_op("tile.reshape", [ty], [src]).result


def trans(src: ir.Value, order: Sequence[int], ty: ir.Type) -> ir.Value:
    return create_op("tile.trans", [ty], [src], attributes={"order": ir.DenseI32ArrayAttr.get(list(order))}).result


def join(lhs: ir.Value, rhs: ir.Value, ty: ir.Type) -> ir.Value:
    return create_op("tile.join", [ty], [lhs, rhs]).result


def split(src: ir.Value, ty: ir.Type) -> tuple[ir.Value, ir.Value]:
    op = create_op("tile.split", [ty, ty], [src])
    return op.results[0], op.results[1]


def cat(lhs: ir.Value, rhs: ir.Value, ty: ir.Type) -> ir.Value:
    return create_op("tile.cat", [ty], [lhs, rhs]).result


def trans_order(op: ir.Operation) -> list[int]:
    return list(ir.DenseI32ArrayAttr(op.attributes["order"]))


def extern_elementwise(symbol: str, args: Sequence[ir.Value], ty: ir.Type, pure: bool = True) -> ir.Value:
    """`symbol(args...)` on every element (a libdevice function); 1 to 4 arguments."""
    if not 1 <= len(args) <= MAX_EXTERN_OPERANDS:
        raise ValueError(f"extern_elementwise takes 1 to {MAX_EXTERN_OPERANDS} arguments, got {len(args)}")
    segments = [int(i < len(args)) for i in range(MAX_EXTERN_OPERANDS)]
    return create_op("tile.extern_elementwise", [ty], list(args), segments=segments,
                     attributes={"symbol": str_attr(symbol), "pure": bool_attr(pure)}).result


# tile.dot's optional attribute (tl.dot's `max_num_imprecise_acc`): at most this many
# products of K in a row are summed in the tensor cores' reduced-precision fp8 accumulator
# before they are added into the fp32 one (wgmma lowering). IRDL has no optional
# attributes, so it is not declared there; _verify_dot checks it.
IMPRECISE_ACC_ATTR = "max_num_imprecise_acc"
# On an scf.for: `tl.range(..., flatten=True)` or `warp_specialize=True`, a loop whose one
# inner loop tile-flatten-loops may fuse with it (see passes/flatten_loops.py). Warp
# specialisation of a persistent loop buys the overlap of the next tile's loads with this
# tile's epilogue; tilec gets it by fusing the loops (on Hopper Triton cannot do both, and
# its tutorial turns `flatten` off where it specialises).
FLATTEN_ATTR = "tile.flatten"
# On an scf.for: `tl.range(..., warp_specialize=True)`, beside FLATTEN_ATTR (such a loop is
# fused as a flattened one). tile-flatten-loops keeps it on the fused loop, so that the
# pipeline still knows, after fusion, which loop its user asked to specialise.
WARP_SPECIALIZE_ATTR = "tile.warp_specialize"


def dot(a: ir.Value, b: ir.Value, acc: ir.Value, input_precision: str,
        max_num_imprecise_acc: int | None = None) -> ir.Value:
    attributes = {"input_precision": str_attr(input_precision)}
    if max_num_imprecise_acc is not None:
        attributes[IMPRECISE_ACC_ATTR] = i32_attr(max_num_imprecise_acc)
    return create_op("tile.dot", [acc.type], [a, b, acc], attributes=attributes).result


def dot_max_num_imprecise_acc(op: ir.Operation) -> int | None:
    """A tile.dot's `max_num_imprecise_acc`, or None when it has none (no limit)."""
    return int_attr_value(op, IMPRECISE_ACC_ATTR) if IMPRECISE_ACC_ATTR in op.attributes else None


ATOMIC_KINDS = ("add", "fadd", "max", "umax", "fmax", "min", "umin", "fmin", "and", "or", "xor", "xchg")
ATOMIC_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("cta", "gpu", "sys")


def atomic_rmw(kind: str, ptr: ir.Value, value: ir.Value, mask: ir.Value | None, sem: str, scope: str,
               ty: ir.Type) -> ir.Value:
    return create_op("tile.atomic_rmw", [ty], [ptr, value, mask], segments=[1, 1, int(mask is not None)],
                     attributes={"kind": str_attr(kind), "sem": str_attr(sem), "scope": str_attr(scope)}).result


def atomic_cas(ptr: ir.Value, cmp: ir.Value, value: ir.Value, sem: str, scope: str, ty: ir.Type) -> ir.Value:
    return create_op("tile.atomic_cas", [ty], [ptr, cmp, value],
                     attributes={"sem": str_attr(sem), "scope": str_attr(scope)}).result


def atomic_load(ptr: ir.Value, mask: ir.Value | None, sem: str, scope: str, ty: ir.Type) -> ir.Value:
    return create_op("tile.atomic_load", [ty], [ptr, mask], segments=[1, int(mask is not None)],
                     attributes={"sem": str_attr(sem), "scope": str_attr(scope)}).result


def atomic_store(ptr: ir.Value, value: ir.Value, mask: ir.Value | None, sem: str, scope: str) -> ir.Operation:
    return create_op("tile.atomic_store", [], [ptr, value, mask], segments=[1, 1, int(mask is not None)],
                     attributes={"sem": str_attr(sem), "scope": str_attr(scope)})


def atomic_poll(ptr: ir.Value, expected: ir.Value, timeout: ir.Value | None, sem: str, scope: str,
                ty: ir.Type) -> ir.Value:
    """Waits until `*ptr == expected` (each element), or until `timeout` nanoseconds (i64)
    have passed; i1 results: whether each matched."""
    return create_op("tile.atomic_poll", [ty], [ptr, expected, timeout], segments=[1, 1, int(timeout is not None)],
                     attributes={"sem": str_attr(sem), "scope": str_attr(scope)}).result


# PTX special registers a kernel may read (tl.extra.cuda.smid(), globaltimer()), by type.
SPECIAL_REGISTERS = {"smid": "i32", "globaltimer": "i64"}
# Programmatic dependent launch (griddepcontrol.wait / .launch_dependents).
GRID_DEPENDENCY_ACTIONS = ("wait", "launch_dependents")


def special_register(name: str) -> ir.Value:
    return create_op("tile.special_register", [ir.Type.parse(SPECIAL_REGISTERS[name])],
                     attributes={"name": str_attr(name)}).result


def grid_dependency(action: str) -> ir.Operation:
    return create_op("tile.grid_dependency", [], attributes={"action": str_attr(action)})


def reduce(srcs: Sequence[ir.Value], axis: int, result_types: Sequence[ir.Type]) -> ir.Operation:
    """Creates a tile.reduce with an empty combiner region (the caller fills it)."""
    n = len(srcs)
    if not 1 <= n <= MAX_REDUCE_OPERANDS:
        raise ValueError(f"a reduction takes 1 to {MAX_REDUCE_OPERANDS} operands, got {n}")
    segments = [1 if i < n else 0 for i in range(MAX_REDUCE_OPERANDS)]
    attributes = {"axis": i32_attr(axis), "resultSegmentSizes": ir.DenseI32ArrayAttr.get(segments)}
    return create_op("tile.reduce", list(result_types), list(srcs), attributes=attributes,
                     regions=1, segments=segments)


def map_elementwise(srcs: Sequence[ir.Value], result_types: Sequence[ir.Type], pack: int = 1) -> ir.Operation:
    """Creates a tile.map_elementwise with an empty body region (the caller fills it:
    `pack` scalar arguments per operand, operand-major, and a gpu.yield of `pack` scalars
    per result, result-major)."""
    n, r = len(srcs), len(result_types)
    if not 1 <= n <= MAX_REDUCE_OPERANDS or not 1 <= r <= MAX_REDUCE_OPERANDS:
        raise ValueError(f"map_elementwise takes 1 to {MAX_REDUCE_OPERANDS} operands and results, got {n} and {r}")
    segments = [1 if i < n else 0 for i in range(MAX_REDUCE_OPERANDS)]
    result_segments = [1 if i < r else 0 for i in range(MAX_REDUCE_OPERANDS)]
    attributes = {"resultSegmentSizes": ir.DenseI32ArrayAttr.get(result_segments), "pack": i32_attr(pack)}
    return create_op("tile.map_elementwise", list(result_types), list(srcs), attributes=attributes,
                     regions=1, segments=segments)


def scan(srcs: Sequence[ir.Value], axis: int, reverse: bool, result_types: Sequence[ir.Type]) -> ir.Operation:
    """Creates a tile.scan with an empty combiner region (the caller fills it)."""
    n = len(srcs)
    if not 1 <= n <= MAX_REDUCE_OPERANDS:
        raise ValueError(f"a scan takes 1 to {MAX_REDUCE_OPERANDS} operands, got {n}")
    segments = [1 if i < n else 0 for i in range(MAX_REDUCE_OPERANDS)]
    attributes = {"axis": i32_attr(axis), "reverse": bool_attr(reverse),
                  "resultSegmentSizes": ir.DenseI32ArrayAttr.get(segments)}
    return create_op("tile.scan", list(result_types), list(srcs), attributes=attributes, regions=1, segments=segments)


def gather(src: ir.Value, index: ir.Value, axis: int, ty: ir.Type) -> ir.Value:
    """out[..., i, ...] = src[..., index[..., i, ...], ...] along `axis`."""
    return create_op("tile.gather", [ty], [src, index], attributes={"axis": i32_attr(axis)}).result


def histogram(src: ir.Value, mask: ir.Value | None, ty: ir.Type) -> ir.Value:
    """int32 counts of the values of the 1-D `src` in [0, bins) (others and masked-off
    elements are not counted)."""
    return create_op("tile.histogram", [ty], [src, mask]).result


def inline_asm(asm: str, constraints: str, args: Sequence[ir.Value], result_types: Sequence[ir.Type],
               pure: bool, pack: int) -> list[ir.Value]:
    """Elementwise inline PTX: `pack` elements of every argument per instance."""
    if len(args) > MAX_ASM_OPERANDS or not 1 <= len(result_types) <= MAX_ASM_RESULTS:
        raise ValueError(f"inline asm takes at most {MAX_ASM_OPERANDS} operands and 1 to {MAX_ASM_RESULTS} results")
    segments = [1 if i < len(args) else 0 for i in range(MAX_ASM_OPERANDS)]
    result_segments = [1 if i < len(result_types) else 0 for i in range(MAX_ASM_RESULTS)]
    op = create_op("tile.inline_asm", list(result_types), list(args), segments=segments, attributes={
        "asm": str_attr(asm), "constraints": str_attr(constraints), "pure": bool_attr(pure),
        "pack": i32_attr(pack), "resultSegmentSizes": ir.DenseI32ArrayAttr.get(result_segments)})
    return list(op.results)


def print_(prefix: str, args: Sequence[ir.Value], hex: bool, is_signed: Sequence[bool]) -> ir.Operation:
    """tile.print: `prefix` and the values of `args`, one line per element."""
    if len(args) > MAX_PRINT_OPERANDS:
        raise ValueError(f"a print takes at most {MAX_PRINT_OPERANDS} values, got {len(args)}")
    segments = [1 if i < len(args) else 0 for i in range(MAX_PRINT_OPERANDS)]
    return create_op("tile.print", [], list(args), segments=segments, attributes={
        "prefix": str_attr(prefix), "hex": bool_attr(hex),
        "is_signed": ir.DenseI32ArrayAttr.get([int(bool(x)) for x in is_signed])})


def assert_(condition: ir.Value, message: str) -> ir.Operation:
    """tile.assert: the kernel stops where an element of `condition` (i1) is false."""
    return create_op("tile.assert", [], [condition], attributes={"message": str_attr(message)})


def assume(condition: ir.Value) -> ir.Operation:
    return create_op("tile.assume", [], [condition])


def barrier() -> ir.Operation:
    return create_op("tile.barrier", [])


# Hints: a value's defining op (or, for a kernel argument, the function) carries these
# dense i32 arrays, one entry per dimension; axis analysis takes them as facts.
HINT_ATTRIBUTES = {"multiple_of": "tile.divisibility", "max_contiguous": "tile.contiguity",
                   "max_constancy": "tile.constancy"}


# ----------------------------------------------------------------------------- readers


def load_operands(op: ir.Operation) -> tuple[ir.Value, ir.Value | None, ir.Value | None]:
    ptr, mask, other = (g[0] if g else None for g in operand_groups(op))
    return ptr, mask, other


def store_operands(op: ir.Operation) -> tuple[ir.Value, ir.Value, ir.Value | None]:
    ptr, value, mask = (g[0] if g else None for g in operand_groups(op))
    return ptr, value, mask


def axis_of(op: ir.Operation) -> int:
    return int_attr_value(op, "axis")


# ----------------------------------------------------------------------------- verifiers

# Shape and type rules that IRDL cannot state. Each verifier returns an error message
# or None; `verify_module` runs them after the frontend and between passes.


def _same_shape(a: ir.Type, b: ir.Type) -> bool:
    return shape_of(a) == shape_of(b)


_CACHE_MODIFIERS = {"tile.load": ("", ".ca", ".cg", ".cv", ".cs"), "tile.store": ("", ".wb", ".cg", ".cs", ".wt")}
_EVICTION_POLICIES = ("", "evict_normal", "evict_first", "evict_last")


@verifier("tile.get_program_id", "tile.get_num_programs")
def _verify_axis_0_to_2(op: ir.Operation) -> str | None:
    axis = axis_of(op)
    return None if 0 <= axis <= 2 else f"axis must be 0, 1 or 2, got {axis}"


def _verify_cache_attributes(op: ir.Operation) -> str | None:
    from ._mlir import str_attr_value
    cache, evict = str_attr_value(op, "cache"), str_attr_value(op, "evict")
    if cache not in _CACHE_MODIFIERS[op.name]:
        return f"unknown cache modifier {cache!r}; expected one of {list(_CACHE_MODIFIERS[op.name])}"
    if evict not in _EVICTION_POLICIES:
        return f"unknown eviction policy {evict!r}; expected one of {list(_EVICTION_POLICIES)}"
    return None


@verifier("tile.make_range")
def _verify_make_range(op: ir.Operation) -> str | None:
    start, end = int_attr_value(op, "start"), int_attr_value(op, "end")
    shape = shape_of(op.results[0].type)
    if len(shape) != 1 or shape[0] != end - start:
        return f"result shape {list(shape)} does not match the range [{start}, {end})"
    if str(element_type(op.results[0].type)) != "i32":
        return "result must be a tensor of i32"
    return None


@verifier("tile.splat")
def _verify_splat(op: ir.Operation) -> str | None:
    src, res = op.operands[0].type, op.results[0].type
    if is_tensor(src):
        return "source of splat must be a scalar"
    if element_type(res) != src:
        return f"result element type {element_type(res)} differs from the scalar type {src}"
    return None


@verifier("tile.broadcast")
def _verify_broadcast(op: ir.Operation) -> str | None:
    src, res = shape_of(op.operands[0].type), shape_of(op.results[0].type)
    if len(src) != len(res):
        return f"broadcast cannot change the rank ({len(src)} to {len(res)})"
    for a, b in zip(src, res):
        if a != b and a != 1:
            return f"cannot broadcast shape {list(src)} to {list(res)}"
    if element_type(op.operands[0].type) != element_type(op.results[0].type):
        return "broadcast cannot change the element type"
    return None


@verifier("tile.expand_dims")
def _verify_expand_dims(op: ir.Operation) -> str | None:
    axis = axis_of(op)
    src, res = list(shape_of(op.operands[0].type)), list(shape_of(op.results[0].type))
    if not 0 <= axis <= len(src) or src[:axis] + [1] + src[axis:] != res:
        return f"expanding {src} at axis {axis} does not give {res}"
    return None


def _numel(ty: ir.Type) -> int:
    n = 1
    for d in shape_of(ty):
        n *= d
    return n


@verifier("tile.reshape")
def _verify_reshape(op: ir.Operation) -> str | None:
    src, res = op.operands[0].type, op.results[0].type
    if _numel(src) != _numel(res) or element_type(src) != element_type(res):
        return f"cannot reshape {src} to {res}: element count or type differs"
    return None


@verifier("tile.trans")
def _verify_trans(op: ir.Operation) -> str | None:
    order = trans_order(op)
    src, res = list(shape_of(op.operands[0].type)), list(shape_of(op.results[0].type))
    if sorted(order) != list(range(len(src))):
        return f"order {order} is not a permutation of the {len(src)} dimensions"
    if [src[d] for d in order] != res:
        return f"permuting {src} by {order} does not give {res}"
    return None


@verifier("tile.join")
def _verify_join(op: ir.Operation) -> str | None:
    lhs, rhs, res = (list(shape_of(v.type)) for v in (op.operands[0], op.operands[1], op.results[0]))
    if lhs != rhs or res != lhs + [2]:
        return f"joining {lhs} and {rhs} must give {lhs + [2]}, not {res}"
    return None


@verifier("tile.split")
def _verify_split(op: ir.Operation) -> str | None:
    src = list(shape_of(op.operands[0].type))
    if not src or src[-1] != 2:
        return f"the last dimension of a split operand must be 2, got {src}"
    for result in op.results:
        if list(shape_of(result.type)) != src[:-1]:
            return f"split results must have shape {src[:-1]}"
    return None


@verifier("tile.cat")
def _verify_cat(op: ir.Operation) -> str | None:
    lhs, rhs, res = (list(shape_of(v.type)) for v in (op.operands[0], op.operands[1], op.results[0]))
    if lhs[1:] != rhs[1:] or res != [lhs[0] + rhs[0]] + lhs[1:]:
        return f"concatenating {lhs} and {rhs} along dimension 0 cannot give {res}"
    return None


def _operand_shape(ty: ir.Type) -> list[int]:
    """A tensor's shape, or the shape of the tensor a shared buffer (memdesc) holds (a
    wgmma dot reads its operands from shared memory)."""
    from .tilegpu import is_memdesc, memdesc_tensor
    return list(memdesc_tensor(ty).shape) if is_memdesc(ty) else list(shape_of(ty))


@verifier("tile.dot")
def _verify_dot(op: ir.Operation) -> str | None:
    a, b, acc = (_operand_shape(v.type) for v in op.operands)
    if len(a) != len(b) or len(a) != len(acc) or len(a) not in (2, 3):
        return "operands must all have rank 2 (or 3, batched)"
    if a[:-2] != b[:-2] or a[:-2] != acc[:-2] or a[-1] != b[-2] or acc[-2:] != [a[-2], b[-1]]:
        return f"shapes {a} x {b} do not multiply into {acc}"
    if op.results[0].type != op.operands[2].type:
        return "the result must have the accumulator's type"
    if IMPRECISE_ACC_ATTR in op.attributes:
        limit = op.attributes[IMPRECISE_ACC_ATTR]
        if not isinstance(limit, ir.IntegerAttr) or ir.IntegerAttr(limit).value < 0:
            return f"{IMPRECISE_ACC_ATTR} must be a non-negative integer, got {limit}"
    return None


@verifier("tile.atomic_rmw", "tile.atomic_cas")
def _verify_atomic(op: ir.Operation) -> str | None:
    from ._mlir import str_attr_value
    ptr = op.operands[0]
    if not is_ptr_type(element_type(ptr.type)):
        return f"needs a pointer operand, got {ptr.type}"
    if pointee_type(element_type(ptr.type)) != element_type(op.results[0].type):
        return "result type differs from the pointee type"
    for value in list(op.operands)[1:]:
        if not _same_shape(value.type, ptr.type):
            return "all operands must have the pointer's shape"
    if op.name == "tile.atomic_rmw" and str_attr_value(op, "kind") not in ATOMIC_KINDS:
        return f"unknown atomic kind {str_attr_value(op, 'kind')!r}"
    if str_attr_value(op, "sem") not in ATOMIC_SEMANTICS:
        return f"unknown memory semantics {str_attr_value(op, 'sem')!r}"
    if str_attr_value(op, "scope") not in ATOMIC_SCOPES:
        return f"unknown scope {str_attr_value(op, 'scope')!r}"
    return None


# The memory orders of the atomic accesses that are not read-modify-writes.
_ACCESS_SEMANTICS = {"tile.atomic_load": ("relaxed", "acquire"), "tile.atomic_store": ("relaxed", "release"),
                     "tile.atomic_poll": ("relaxed", "acquire")}


@verifier("tile.atomic_load", "tile.atomic_store", "tile.atomic_poll")
def _verify_atomic_access(op: ir.Operation) -> str | None:
    from ._mlir import str_attr_value
    # (ptr, mask) for a load, (ptr, value, mask) for a store, (ptr, expected, timeout) for a poll
    groups = [g[0] if g else None for g in operand_groups(op)]
    ptr, value, extra = groups + [None] * (3 - len(groups))
    if not is_ptr_type(element_type(ptr.type)):
        return f"needs a pointer operand, got {ptr.type}"
    pointee = pointee_type(element_type(ptr.type))
    sem = str_attr_value(op, "sem")
    if sem not in _ACCESS_SEMANTICS[op.name]:
        return f"memory semantics {sem!r} is not one of {list(_ACCESS_SEMANTICS[op.name])}"
    if str_attr_value(op, "scope") not in ATOMIC_SCOPES:
        return f"unknown scope {str_attr_value(op, 'scope')!r}"
    if op.name == "tile.atomic_load":
        mask = value
        if element_type(op.results[0].type) != pointee or not _same_shape(op.results[0].type, ptr.type):
            return "the result must have the pointee type and the pointer's shape"
    else:
        if element_type(value.type) != pointee or not _same_shape(value.type, ptr.type):
            return "the value must have the pointee type and the pointer's shape"
        mask = extra if op.name == "tile.atomic_store" else None
    if mask is not None and (str(element_type(mask.type)) != "i1" or not _same_shape(mask.type, ptr.type)):
        return "the mask must be i1 with the pointer's shape"
    if op.name == "tile.atomic_poll":
        if not isinstance(pointee, ir.IntegerType) or pointee.width not in (16, 32, 64):
            return f"polls a 16-, 32- or 64-bit integer, not {pointee}"
        if str(element_type(op.results[0].type)) != "i1" or not _same_shape(op.results[0].type, ptr.type):
            return "the result must be i1 with the pointer's shape"
    return None


@verifier("tile.special_register")
def _verify_special_register(op: ir.Operation) -> str | None:
    name = ir.StringAttr(op.attributes["name"]).value
    if name not in SPECIAL_REGISTERS:
        return f"unknown special register {name!r}; expected one of {sorted(SPECIAL_REGISTERS)}"
    if str(op.results[0].type) != SPECIAL_REGISTERS[name]:
        return f"%{name} is read as {SPECIAL_REGISTERS[name]}, not {op.results[0].type}"
    return None


@verifier("tile.grid_dependency")
def _verify_grid_dependency(op: ir.Operation) -> str | None:
    action = ir.StringAttr(op.attributes["action"]).value
    if action not in GRID_DEPENDENCY_ACTIONS:
        return f"unknown grid dependency action {action!r}; expected one of {list(GRID_DEPENDENCY_ACTIONS)}"
    return None


@verifier("tile.addptr")
def _verify_addptr(op: ir.Operation) -> str | None:
    ptr, off, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    if not is_ptr_type(element_type(ptr)):
        return f"first operand must be a pointer or tensor of pointers, got {ptr}"
    if not isinstance(element_type(off), ir.IntegerType):
        return f"offset must be an integer or tensor of integers, got {off}"
    if not (_same_shape(ptr, off) and ptr == res):
        return "pointer, offset and result must have the same shape, and the result the pointer's type"
    return None


@verifier("tile.load")
def _verify_load(op: ir.Operation) -> str | None:
    ptr, mask, other = load_operands(op)
    res = op.results[0].type
    message = _verify_cache_attributes(op)
    if message:
        return message
    if not is_ptr_type(element_type(ptr.type)):
        return f"load needs a pointer operand, got {ptr.type}"
    if pointee_type(element_type(ptr.type)) != element_type(res):
        return f"loading {pointee_type(element_type(ptr.type))} cannot produce {element_type(res)}"
    for name, value in (("mask", mask), ("other", other)):
        if value is not None and not _same_shape(value.type, ptr.type):
            return f"{name} shape {list(shape_of(value.type))} differs from pointer shape {list(shape_of(ptr.type))}"
    if mask is not None and str(element_type(mask.type)) != "i1":
        return "mask must be i1"
    if not _same_shape(res, ptr.type):
        return "result shape differs from pointer shape"
    return None


@verifier("tile.store")
def _verify_store(op: ir.Operation) -> str | None:
    ptr, value, mask = store_operands(op)
    if value is None:
        return "needs a value operand"
    message = _verify_cache_attributes(op)
    if message:
        return message
    if not is_ptr_type(element_type(ptr.type)):
        return f"store needs a pointer operand, got {ptr.type}"
    if pointee_type(element_type(ptr.type)) != element_type(value.type):
        return "stored value type differs from the pointee type"
    if not _same_shape(value.type, ptr.type) or (mask is not None and not _same_shape(mask.type, ptr.type)):
        return "pointer, value and mask must have the same shape"
    return None


@verifier("tile.reduce", "tile.scan")
def _verify_reduce(op: ir.Operation) -> str | None:
    axis = axis_of(op)
    srcs = list(op.operands)
    shape = list(shape_of(srcs[0].type))
    if not 0 <= axis < len(shape):
        return f"axis {axis} out of range for rank {len(shape)}"
    expected = shape if op.name == "tile.scan" else shape[:axis] + shape[axis + 1:]
    for src, res in zip(srcs, op.results):
        if list(shape_of(src.type)) != shape:
            return "all reduced operands must have the same shape"
        if list(shape_of(res.type)) != expected:
            return f"result shape {list(shape_of(res.type))} should be {expected}"
    for src, res in zip(srcs, op.results):
        if element_type(src.type) != element_type(res.type):
            return f"result element type {element_type(res.type)} differs from the operand's {element_type(src.type)}"
    if len(op.regions[0].blocks) != 1:
        return "needs a combiner region with one block"
    block = op.regions[0].blocks[0]
    if len(block.arguments) != 2 * len(srcs):
        return f"combiner takes {len(block.arguments)} arguments; expected {2 * len(srcs)}"
    for i, arg in enumerate(block.arguments):
        if arg.type != element_type(srcs[i % len(srcs)].type):
            return f"combiner argument {i} is {arg.type}; expected {element_type(srcs[i % len(srcs)].type)}"
    ops = list(block.operations)
    if not ops or ops[-1].operation.name != "gpu.yield":
        return "combiner must end with gpu.yield"
    yielded = [v.type for v in ops[-1].operation.operands]
    expected = [element_type(s.type) for s in srcs]
    if yielded != expected:
        return f"combiner yields {[str(t) for t in yielded]}; expected {[str(t) for t in expected]}"
    return None


@verifier("tile.map_elementwise")
def _verify_map_elementwise(op: ir.Operation) -> str | None:
    srcs, results = list(op.operands), list(op.results)
    shape = list(shape_of(srcs[0].type))
    if any(list(shape_of(v.type)) != shape for v in srcs + results):
        return "operands and results must all have one shape"
    if len(op.regions[0].blocks) != 1:
        return "needs a body region with one block"
    block = op.regions[0].blocks[0]
    pack = int_attr_value(op, "pack")
    if pack < 1 or pack & (pack - 1):
        return f"pack must be a power of 2, got {pack}"
    if [a.type for a in block.arguments] != [element_type(s.type) for s in srcs for _ in range(pack)]:
        return f"the body takes {pack} scalar(s) of each operand's element type, operand by operand"
    ops = list(block.operations)
    if not ops or ops[-1].operation.name != "gpu.yield":
        return "the body must end with gpu.yield"
    if [v.type for v in ops[-1].operation.operands] != [element_type(r.type) for r in results for _ in range(pack)]:
        return f"the body yields {pack} scalar(s) of each result's element type, result by result"
    return None


@verifier("tile.print")
def _verify_print(op: ir.Operation) -> str | None:
    signs = len(ir.DenseI32ArrayAttr(op.attributes["is_signed"]))
    if signs != len(op.operands):
        return f"is_signed has {signs} entries for {len(op.operands)} operands"
    return None


@verifier("tile.assume", "tile.assert")
def _verify_assert(op: ir.Operation) -> str | None:
    if str(element_type(op.operands[0].type)) != "i1":
        return f"the condition must be i1 or a tensor of i1, got {op.operands[0].type}"
    return None


@verifier("tile.gather")
def _verify_gather(op: ir.Operation) -> str | None:
    src, index, res = (shape_of(v.type) for v in (op.operands[0], op.operands[1], op.results[0]))
    axis = axis_of(op)
    if len(src) != len(index) or not 0 <= axis < len(src):
        return f"gather needs a source and an index of one rank and an axis in range, got {list(src)}, {list(index)}, axis {axis}"
    if any(s != i for d, (s, i) in enumerate(zip(src, index)) if d != axis):
        return f"the index {list(index)} must match the source {list(src)} outside axis {axis}"
    if res != index or element_type(op.results[0].type) != element_type(op.operands[0].type):
        return "the result must have the index's shape and the source's element type"
    if not isinstance(element_type(op.operands[1].type), ir.IntegerType):
        return "the index must be integers"
    return None


@verifier("tile.histogram")
def _verify_histogram(op: ir.Operation) -> str | None:
    if len(shape_of(op.operands[0].type)) != 1 or len(shape_of(op.results[0].type)) != 1:
        return "histogram takes and gives 1-D tensors"
    if str(element_type(op.results[0].type)) != "i32":
        return "histogram counts are i32"
    if len(op.operands) == 2 and op.operands[0].type.encoding != op.operands[1].type.encoding:
        return "the mask must have the values' layout"  # the lowering pairs their registers
    return None
