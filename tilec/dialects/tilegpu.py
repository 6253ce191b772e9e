"""The `tilegpu` dialect (ttgir): layouts on tensors, and GPU-level ops.

Every tensor in ttgir carries a layout encoding attribute:

    tensor<1024xf32, #tilegpu.blocked<{order = array<i32: 0>, sizePerThread = array<i32: 4>,
                                       threadsPerWarp = array<i32: 32>, warpsPerCTA = array<i32: 4>}>>
    tensor<64xf32, #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{...}>}>>

Shared memory is explicit: a buffer is a value of type `!tilegpu.memdesc<tensor<...>>`
(shape, element type and shared encoding of its contents), and a ring of buffers for
software pipelining has a leading dimension that `memdesc_index` selects from.

Ops:
    %y = "tilegpu.convert_layout"(%x) : (tensor<..., #a>) -> tensor<..., #b>
    %m = "tilegpu.local_alloc"(%x?) : (tensor<...>) -> !tilegpu.memdesc<tensor<...>>
    "tilegpu.local_dealloc"(%m)
    %x = "tilegpu.local_load"(%m) : (!tilegpu.memdesc<...>) -> tensor<..., #a>
    "tilegpu.local_store"(%x, %m)
    %b = "tilegpu.memdesc_index"(%ring, %i) : (memdesc<tensor<3x...>>, i32) -> memdesc<tensor<...>>
    %v = "tilegpu.memdesc_subview"(%b) {offsets = array<i32: 0, 16>} : (memdesc<tensor<64x32x..>>) -> memdesc<tensor<64x16x..>>
    %s = "tilegpu.extract_slice"(%x) {offsets = array<i32: 0, 16>} : (tensor<64x32x.., #a>) -> tensor<64x16x.., #a>
                                      (a block of a tensor that its threads already hold: a register selection)
    "tilegpu.async_copy_global_to_local"(%ptrs, %m, %mask?, %limit?, %pred?)   (cp.async; masked-off:
                                      zeros; limit: elements left below a bound; pred false: nothing
                                      done; see async_copy_global_to_local)
    "tilegpu.async_commit_group"()    "tilegpu.async_wait"() {num = N}
    "tilegpu.barrier"()
    "tilegpu.bulk_store_wait"()       (after a loop whose TMA stores tilegpu-allocate-shared-memory
                                      left reading out: waits for them, then a CTA barrier)
    "tilegpu.arrive_barrier"(%bar, %pred)   (one lane of each warp arrives on the mbarrier)
    "tilegpu.warp_specialize"() ({ producer ops; gpu.yield }) {producer_regs, consumer_regs}
                                      (the producer warps run the region and leave; the
                                      consumers go on past it)

Module attributes: `tilegpu.num-warps` (i32) and `tilegpu.target` (e.g. "sm_90"); where a
loop is warp-specialised, `tilegpu.producer-warps` (i32): warps the kernel runs beyond
num_warps (ids num_warps and up), which issue its copies; layouts, scratch space and
barriers count num_warps only.

The bindings return IRDL attributes opaquely, so encodings are read back by parsing
their text once (cached); `tilec.layout.encodings` holds the IR-free classes.
"""
from __future__ import annotations

import functools
import math

from mlir import ir

from ..layout.encodings import BlockedEncoding, DotOperandEncoding, Encoding, SliceEncoding
from ..layout.shared import NVMMASharedEncoding, SwizzledSharedEncoding
from ..layout.syntax import encoding_text, parse_encoding  # noqa: F401  (part of this module's API)
from ._mlir import create_op, i32_attr, is_tensor, operand_groups, register_irdl, tensor_type
from .op_facts import define_op, verifier

# Every encoding is an attribute holding one dictionary of its fields (parsed back by
# parse_encoding).
ENCODINGS = ("blocked", "slice", "dot_op", "linear", "mma", "shared", "nvmma_shared")
_ENCODING_IRDL = "".join(f"""  irdl.attribute @{name} {{
    %0 = irdl.base "#builtin.dictionary"
    irdl.parameters(params: %0)
  }}
""" for name in ENCODINGS)

IRDL = """
irdl.dialect @tilegpu {
""" + _ENCODING_IRDL + """  irdl.type @memdesc {
    %0 = irdl.base "!builtin.tensor"
    irdl.parameters(tensor: %0)
  }
  irdl.operation @convert_layout {
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base "!builtin.tensor"
    irdl.operands(src: %0)
    irdl.results(result: %1)
  }
  irdl.operation @local_alloc {
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base @tilegpu::@memdesc
    irdl.operands(src: optional %0)
    irdl.results(result: %1)
  }
  irdl.operation @local_dealloc {
    %0 = irdl.base @tilegpu::@memdesc
    irdl.operands(buffer: %0)
  }
  irdl.operation @local_load {
    %0 = irdl.base @tilegpu::@memdesc
    %1 = irdl.base "!builtin.tensor"
    irdl.operands(buffer: %0)
    irdl.results(result: %1)
  }
  irdl.operation @local_store {
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base @tilegpu::@memdesc
    irdl.operands(src: %0, buffer: %1)
  }
  irdl.operation @memdesc_index {
    %0 = irdl.base @tilegpu::@memdesc
    %1 = irdl.is i32
    %2 = irdl.base @tilegpu::@memdesc
    irdl.operands(buffer: %0, index: %1)
    irdl.results(result: %2)
  }
  irdl.operation @memdesc_subview {
    %0 = irdl.base @tilegpu::@memdesc
    %1 = irdl.any
    %2 = irdl.base @tilegpu::@memdesc
    irdl.attributes {"offsets" = %1}
    irdl.operands(buffer: %0)
    irdl.results(result: %2)
  }
  irdl.operation @extract_slice {
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.any
    %2 = irdl.base "!builtin.tensor"
    irdl.attributes {"offsets" = %1}
    irdl.operands(src: %0)
    irdl.results(result: %2)
  }
  irdl.operation @async_copy_global_to_local {
    %0 = irdl.base "!builtin.tensor"
    %1 = irdl.base @tilegpu::@memdesc
    %2 = irdl.base "!builtin.tensor"
    %3 = irdl.base "!builtin.tensor"
    %4 = irdl.is i1
    irdl.operands(src: %0, buffer: %1, mask: optional %2, limit: optional %3, pred: optional %4)
  }
  irdl.operation @async_commit_group {
  }
  irdl.operation @bulk_store_wait {
  }
  irdl.operation @init_barriers {
    %0 = irdl.base @tilegpu::@memdesc
    irdl.operands(barriers: %0)
  }
  irdl.operation @inval_barriers {
    %0 = irdl.base @tilegpu::@memdesc
    irdl.operands(barriers: %0)
  }
  irdl.operation @tma_copy_global_to_local {
    %0 = irdl.any
    %1 = irdl.any
    %2 = irdl.base @tilegpu::@memdesc
    %3 = irdl.base @tilegpu::@memdesc
    %4 = irdl.any
    irdl.operands(tensormap: %0, offsets: variadic %1, buffer: %2, barrier: %3, pred: %4)
  }
  irdl.operation @wait_barrier {
    %0 = irdl.base @tilegpu::@memdesc
    %1 = irdl.any
    irdl.operands(barrier: %0, phase: %1)
  }
  irdl.operation @arrive_barrier {
    %0 = irdl.base @tilegpu::@memdesc
    %1 = irdl.is i1
    irdl.operands(barrier: %0, pred: %1)
  }
  irdl.operation @warp_specialize {
    %0 = irdl.base "#builtin.integer"
    %1 = irdl.base "#builtin.integer"
    irdl.attributes {"producer_regs" = %0, "consumer_regs" = %1}
    %2 = irdl.region
    irdl.regions(producer: %2)
  }
  irdl.operation @async_wait {
    %0 = irdl.base "#builtin.integer"
    irdl.attributes {"num" = %0}
  }
  irdl.operation @wgmma_wait {
    %0 = irdl.base "#builtin.integer"
    irdl.attributes {"pendings" = %0}
    %1 = irdl.any
    %2 = irdl.any
    irdl.operands(acc: %1)
    irdl.results(result: %2)
  }
  irdl.operation @barrier {
  }
}
"""

register_irdl("tilegpu", IRDL)

NUM_WARPS_ATTR = "tilegpu.num-warps"
PRODUCER_WARPS_ATTR = "tilegpu.producer-warps"
TARGET_ATTR = "tilegpu.target"

# ----------------------------------------------------------------------------- encodings <-> text
# The text forms live with the layouts (`tilec.layout.syntax`), which need no IR; they
# are re-exported here, where the compiler reads attributes back.


# Attributes are uniqued in their context, so an encoding and its attribute map one to
# one there. Passes ask for both thousands of times per kernel; printing or parsing the
# attribute's text each time was a tenth of the Python passes' time. The maps hold one
# context's attributes (a compile makes a context of its own): a different context
# empties them, so no stale match is possible and at most one old context is kept alive.
class _Memo:
    context: ir.Context | None = None
    attributes: dict[Encoding, ir.Attribute] = {}
    encodings: dict[ir.Attribute, Encoding] = {}


def _memo(context: ir.Context) -> type[_Memo]:
    if _Memo.context is not context:
        _Memo.context, _Memo.attributes, _Memo.encodings = context, {}, {}
    return _Memo


def encoding_attr(enc: Encoding) -> ir.Attribute:
    attributes = _memo(ir.Context.current).attributes
    attr = attributes.get(enc)
    if attr is None:
        attr = attributes[enc] = ir.Attribute.parse(encoding_text(enc))
    return attr


def layout_of(ty: ir.Type) -> Encoding | None:
    """The encoding of a tensor type (None for scalars and unencoded tensors)."""
    if not is_tensor(ty):
        return None
    attr = tensor_type(ty).encoding
    if attr is None:
        return None
    encodings = _memo(attr.context).encodings
    enc = encodings.get(attr)
    if enc is None:
        enc = encodings[attr] = parse_encoding(str(attr))
    return enc


def with_layout(ty: ir.Type, enc: Encoding | None) -> ir.Type:
    """`ty` with its encoding replaced (scalars are returned unchanged)."""
    if not is_tensor(ty):
        return ty
    t = tensor_type(ty)
    return ir.RankedTensorType.get(list(t.shape), t.element_type, None if enc is None else encoding_attr(enc))


# ----------------------------------------------------------------------------- memory descriptors
# A buffer in shared memory is a value of type !tilegpu.memdesc<tensor<...>>: the tensor
# type gives its shape, element type and (shared) encoding. A ring of N buffers for
# software pipelining is one memdesc with a leading dimension N; `memdesc_index` takes
# one of them.


def memdesc_type(tensor: ir.Type) -> ir.Type:
    return ir.Type.parse(f"!tilegpu.memdesc<{tensor}>")


def is_memdesc(ty: ir.Type) -> bool:
    return str(ty).startswith("!tilegpu.memdesc<")


@functools.lru_cache(maxsize=None)
def _memdesc_tensor_text(text: str) -> str:
    return text[len("!tilegpu.memdesc<"):-1]


def memdesc_tensor(ty: ir.Type) -> ir.RankedTensorType:
    """The tensor type a memory descriptor describes (shape, element type, encoding)."""
    if not is_memdesc(ty):
        raise TypeError(f"not a memory descriptor: {ty}")
    return ir.RankedTensorType(ir.Type.parse(_memdesc_tensor_text(str(ty))))


def memdesc_bytes(ty: ir.Type) -> int:
    """The bytes a buffer of memdesc type `ty` takes in shared memory."""
    tensor = memdesc_tensor(ty)
    return math.prod(tensor.shape) * _element_bytes(tensor.element_type)


def _element_bytes(elem: ir.Type) -> int:
    if str(elem).startswith("!tile.ptr"):
        return 8
    return max(8, getattr(elem, "width", 8)) // 8  # i1 as a byte; fp8 types have width 8


# ----------------------------------------------------------------------------- ops


def convert_layout(src: ir.Value, enc: Encoding) -> ir.Value:
    return create_op("tilegpu.convert_layout", [with_layout(src.type, enc)], [src]).result


def local_alloc(ty: ir.Type, src: ir.Value | None = None) -> ir.Value:
    """A shared-memory buffer of memdesc type `ty`, holding `src` when given."""
    return create_op("tilegpu.local_alloc", [ty], [src]).result


def local_dealloc(buffer: ir.Value) -> ir.Operation:
    return create_op("tilegpu.local_dealloc", [], [buffer])


def local_load(buffer: ir.Value, ty: ir.Type) -> ir.Value:
    """The buffer's contents as a tensor of type `ty` (a distributed layout)."""
    return create_op("tilegpu.local_load", [ty], [buffer]).result


def local_store(value: ir.Value, buffer: ir.Value) -> ir.Operation:
    return create_op("tilegpu.local_store", [], [value, buffer])


def memdesc_index(buffer: ir.Value, index: ir.Value, view: ir.RankedTensorType | None = None) -> ir.Value:
    """Buffer `index` of a ring of buffers (the memdesc's leading dimension); `view`, when
    given, types it as another tensor of the same bytes (a 2-D slot seen transposed:
    shape swapped, the layout as `layout.shared.transposed_2d` gives it)."""
    ring = memdesc_tensor(buffer.type)
    one = ir.RankedTensorType.get(list(ring.shape)[1:], ring.element_type, ring.encoding)
    if view is not None:
        if sorted(view.shape) != sorted(one.shape) or view.element_type != one.element_type:
            raise ValueError(f"a view of a {one} slot must hold the same elements, not {view}")
        one = view
    return create_op("tilegpu.memdesc_index", [memdesc_type(one)], [buffer, index]).result


def memdesc_subview(buffer: ir.Value, offsets: list[int], shape: list[int]) -> ir.Value:
    """The `shape` block of a buffer starting at `offsets` (a multiple of `shape` in each
    dimension), e.g. one K slice of a dot operand."""
    whole = memdesc_tensor(buffer.type)
    part = ir.RankedTensorType.get(list(shape), whole.element_type, whole.encoding)
    return create_op("tilegpu.memdesc_subview", [memdesc_type(part)], [buffer],
                     attributes={"offsets": ir.DenseI32ArrayAttr.get(list(offsets))}).result


def subview_offsets(op: ir.Operation) -> list[int]:
    """The offsets of a memdesc_subview or an extract_slice."""
    return list(ir.DenseI32ArrayAttr(op.attributes["offsets"]))


def extract_slice(src: ir.Value, offsets: list[int], shape: list[int]) -> ir.Value:
    """The `shape` block of a register tensor starting at `offsets` (a multiple of `shape`),
    in the same layout: valid where each thread already holds its part of the block
    (`convert_tilegpu_to_llvm.convert_layout.slice_registers`), e.g. one K slice of a dot operand."""
    whole = tensor_type(src.type)
    part = ir.RankedTensorType.get(list(shape), whole.element_type, whole.encoding)
    return create_op("tilegpu.extract_slice", [part], [src],
                     attributes={"offsets": ir.DenseI32ArrayAttr.get(list(offsets))}).result


def async_copy_global_to_local(src: ir.Value, buffer: ir.Value, mask: ir.Value | None = None,
                               width: int = 0, limit: ir.Value | None = None,
                               pred: ir.Value | None = None) -> ir.Operation:
    """Starts copying the elements `src` points to into `buffer` (cp.async); masked-off
    elements are written as zeros. Complete after async_wait and a barrier. `width`:
    elements per copy instruction, when the caller decided it (attribute `vec`; else the
    lowering derives it from what is known of `src`).

    `limit` (integers, the buffer's shape, in `src`'s layout) masks further: an element
    is copied only where its limit is above 0. The caller promises that along each
    copy's run of `width` elements the limits step down by one (`bound - index`, with
    the index contiguous there): the lowering reads the run's first limit as the number
    of leading elements to copy and zero-fills the rest (cp.async's source size), so a
    run that a bound cuts stays one copy (passes/bounded_runs.py).

    `pred` (one i1 for the whole op, the same in every thread): where it is false, the
    op does nothing at all; the buffer keeps what it held. Unlike a mask that is off
    everywhere, no zeros are written, so no shared-memory bandwidth is spent (the
    pipeliner's copies for iterations past a loop's end)."""
    attributes = {"vec": i32_attr(width)} if width else {}
    operands = (src, buffer, mask, limit, pred)
    attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([int(v is not None) for v in operands])
    return create_op("tilegpu.async_copy_global_to_local", [], [v for v in operands if v is not None],
                     attributes=attributes)


def init_barriers(barriers: ir.Value) -> ir.Operation:
    """Initialises each mbarrier of `barriers` (a memdesc of i64s) for one arrival (thread
    0), then synchronises the CTA so every thread may use them."""
    return create_op("tilegpu.init_barriers", [], [barriers])


def inval_barriers(barriers: ir.Value) -> ir.Operation:
    """Once every thread is done with them (a CTA barrier first), thread 0 invalidates the
    mbarriers of `barriers`, so their bytes may be used again (or initialised anew)."""
    return create_op("tilegpu.inval_barriers", [], [barriers])


def tma_copy_global_to_local(tensormap: ir.Value, offsets: list[ir.Value], buffer: ir.Value, barrier: ir.Value,
                             pred: ir.Value) -> ir.Operation:
    """Where `pred` holds, starts copying the block at `offsets` of the host descriptor
    whose TMA tensor map is at `tensormap` into `buffer` (its NVMMA layout that of
    layout.shared.tma_box), announcing its bytes on the mbarrier `barrier`: complete once
    wait_barrier sees that barrier's phase flip."""
    return create_op("tilegpu.tma_copy_global_to_local", [], [tensormap, *offsets, buffer, barrier, pred],
                     segments=[1, len(offsets), 1, 1, 1])


def wait_barrier(barrier: ir.Value, phase: ir.Value) -> ir.Operation:
    """Waits until the mbarrier `barrier` has completed phase `phase` (0 or 1)."""
    return create_op("tilegpu.wait_barrier", [], [barrier, phase])


# On an init_barriers: how many arrivals complete a phase of each of its mbarriers (1
# when absent: a TMA copy's expect_tx). A warp-specialised loop's `empty` barriers take
# one arrival from each consumer warp (arrive_barrier).
ARRIVE_COUNT_ATTR = "tilegpu.arrive_count"


def arrive_barrier(barrier: ir.Value, pred: ir.Value) -> ir.Operation:
    """Where `pred` holds, one lane of each warp arrives on the mbarrier `barrier` (a
    warp-specialised loop's consumers freeing a ring slot for its producer)."""
    return create_op("tilegpu.arrive_barrier", [], [barrier, pred])


def warp_specialize(producer_regs: int, consumer_regs: int) -> tuple[ir.Operation, ir.Block]:
    """The split of a warp-specialised kernel: the module's producer warps (beyond
    num_warps; `tilegpu.producer-warps`) run the op's region, one warp of them, then leave
    the kernel; the num_warps consumer warps go on past the op. Each side first sets its
    register budget (setmaxnreg; 0: leave it). Returns the op and its region's block,
    which the caller fills and ends with gpu.yield."""
    op = create_op("tilegpu.warp_specialize", [], [], attributes={
        "producer_regs": i32_attr(producer_regs), "consumer_regs": i32_attr(consumer_regs)}, regions=1)
    return op, op.regions[0].blocks.append()


def bulk_store_wait() -> ir.Operation:
    """Waits until every TMA store issued so far has been read out of shared memory, then
    synchronises the CTA: their blocks' bytes may then be written again."""
    return create_op("tilegpu.bulk_store_wait", [])


def async_commit_group() -> ir.Operation:
    """Closes the group of async copies issued since the last commit."""
    return create_op("tilegpu.async_commit_group", [])


def async_wait(num: int) -> ir.Operation:
    """Waits until at most `num` committed groups of async copies are still in flight."""
    return create_op("tilegpu.async_wait", [], attributes={"num": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), num)})


def wgmma_wait(acc: ir.Value, pendings: int) -> ir.Value:
    """`acc` once at most `pendings` groups of this warpgroup's wgmma are still in flight
    (the value passes through, so its readers come after the wait)."""
    return create_op("tilegpu.wgmma_wait", [acc.type], [acc],
                     attributes={"pendings": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), pendings)}).result


def barrier() -> ir.Operation:
    """Every thread of the program waits here; shared memory written before is visible after."""
    return create_op("tilegpu.barrier", [])


# ----------------------------------------------------------------------------- verification


def encoding_error(ty: ir.Type) -> str | None:
    """Why a tensor type's encoding is malformed for its shape (None when it is fine)."""
    if not is_tensor(ty) or tensor_type(ty).encoding is None:
        return None
    try:
        enc = layout_of(ty)
    except (ValueError, TypeError) as exc:
        return str(exc)
    if isinstance(enc, (SwizzledSharedEncoding, NVMMASharedEncoding)):
        return f"a shared-memory encoding on a tensor held in registers ({ty}); shared buffers are !tilegpu.memdesc"
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
define_op("tilegpu.local_alloc", pure=True)  # an unused buffer may go, its contents unread
define_op("tilegpu.local_load", pure=True, reads_memory=True)
define_op("tilegpu.memdesc_index", pure=True)
define_op("tilegpu.memdesc_subview", pure=True)
define_op("tilegpu.extract_slice", pure=True)


def _block_error(op: ir.Operation, whole: ir.RankedTensorType, part: ir.RankedTensorType, kept: str,
                 what: str) -> str | None:
    """Why `part`, at the op's offsets, is not a block of `whole` (memdesc_subview and
    extract_slice share the rule: same element type, encoding and rank; offsets in bounds
    and multiples of the block's shape)."""
    offsets = subview_offsets(op)
    if whole.element_type != part.element_type or whole.encoding != part.encoding or len(offsets) != whole.rank \
            or part.rank != whole.rank:
        return f"must keep the element type, {kept} and rank of {whole}, got {part} at {offsets}"
    for offset, size, total in zip(offsets, part.shape, whole.shape):
        if offset % size or not 0 <= offset < total or offset + size > total:
            return f"offsets {offsets} must be in bounds and multiples of the {what}'s shape {list(part.shape)}"
    return None


@verifier("tilegpu.extract_slice")
def _verify_extract_slice(op: ir.Operation) -> str | None:
    return _block_error(op, tensor_type(op.operands[0].type), tensor_type(op.results[0].type), "layout", "block")


@verifier("tilegpu.memdesc_subview")
def _verify_memdesc_subview(op: ir.Operation) -> str | None:
    return _block_error(op, memdesc_tensor(op.operands[0].type), memdesc_tensor(op.results[0].type), "encoding",
                        "view")


for _name in ("init_barriers", "inval_barriers", "tma_copy_global_to_local", "wait_barrier", "arrive_barrier",
              "warp_specialize"):
    define_op("tilegpu." + _name)
for _name in ("local_dealloc", "local_store", "async_copy_global_to_local", "async_commit_group", "async_wait",
              "barrier", "bulk_store_wait"):
    define_op("tilegpu." + _name)
# wgmma_wait: its result is its operand, element for element (in its layout), once the
# warpgroup's wgmma groups have completed; not pure, so it stays where it is.
define_op("tilegpu.wgmma_wait", elementwise=True)


def _same_tensor(tensor: ir.RankedTensorType, other: ir.Type, what: str) -> str | None:
    other = tensor_type(other)
    if list(tensor.shape) != list(other.shape) or tensor.element_type != other.element_type:
        return f"{what} must have the buffer's shape and element type ({tensor}), got {other}"
    return None


@verifier("tilegpu.local_alloc")
def _verify_local_alloc(op: ir.Operation) -> str | None:
    buffer = memdesc_tensor(op.results[0].type)
    return _same_tensor(buffer, op.operands[0].type, "the initial value") if len(op.operands) else None


@verifier("tilegpu.local_load")
def _verify_local_load(op: ir.Operation) -> str | None:
    return _same_tensor(memdesc_tensor(op.operands[0].type), op.results[0].type, "the result")


@verifier("tilegpu.local_store")
def _verify_local_store(op: ir.Operation) -> str | None:
    return _same_tensor(memdesc_tensor(op.operands[1].type), op.operands[0].type, "the stored value")


@verifier("tilegpu.memdesc_index")
def _verify_memdesc_index(op: ir.Operation) -> str | None:
    ring, one = memdesc_tensor(op.operands[0].type), memdesc_tensor(op.results[0].type)
    slot = list(ring.shape)[1:]
    if ring.element_type == one.element_type and slot == list(one.shape):
        return None
    if ring.element_type == one.element_type and len(slot) == 2 and slot[::-1] == list(one.shape):
        from ..layout.shared import transposed_2d
        if ring.encoding is not None and one.encoding is not None and \
                parse_encoding(str(one.encoding)) == transposed_2d(parse_encoding(str(ring.encoding))):
            return None  # a transposed view of the slot: the same bytes
        return f"a transposed view of a slot of {ring} must be in its layout transposed, got {one}"
    return f"must drop the leading dimension of {ring}, got {one}"


@verifier("tilegpu.async_copy_global_to_local")
def _verify_async_copy(op: ir.Operation) -> str | None:
    from .tile import is_ptr_type, pointee_type
    (src,), (buffer,), mask, limit, _ = operand_groups(op)
    buffer = memdesc_tensor(buffer.type)
    pointers = tensor_type(src.type)
    if list(pointers.shape) != list(buffer.shape) or not is_ptr_type(pointers.element_type) \
            or pointee_type(pointers.element_type) != buffer.element_type:
        return f"copies {pointers} into {buffer}: needs pointers to its elements, one per element"
    if mask and list(tensor_type(mask[0].type).shape) != list(buffer.shape):
        return f"mask must have the buffer's shape {list(buffer.shape)}"
    if limit and (list(tensor_type(limit[0].type).shape) != list(buffer.shape)
                  or not isinstance(tensor_type(limit[0].type).element_type, ir.IntegerType)
                  or tensor_type(limit[0].type).element_type.width == 1):
        return f"limit must be integers of the buffer's shape {list(buffer.shape)}"
    return None


@verifier("tilegpu.async_wait")
def _verify_async_wait(op: ir.Operation) -> str | None:
    num = ir.IntegerAttr(op.attributes["num"]).value
    return None if num >= 0 else f"num must be at least 0, got {num}"


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


def producer_warps_of(module_op: ir.Operation) -> int:
    """The warps a warp-specialised kernel adds for its copies (0: none)."""
    if PRODUCER_WARPS_ATTR not in module_op.attributes:
        return 0
    return ir.IntegerAttr(module_op.attributes[PRODUCER_WARPS_ATTR]).value


def target_of(module_op: ir.Operation) -> str:
    return ir.StringAttr(module_op.attributes[TARGET_ATTR]).value
