"""tilegpu-accelerate-matmul: puts `tl.dot` on tensor cores where the target and types allow.

The one place that chooses how a dot runs. For each `tile.dot` it picks an MMA kind from
the target and the operand and accumulator types:

    operands  accumulator  input_precision  instruction (sm_80+: mma.sync)
    f16       f32 or f16   -                m16n8k16 .f16
    bf16      f32          -                m16n8k16 .bf16
    f32       f32          tf32             m16n8k8  .tf32 (operands read as tf32: low bits dropped)
    f32       f32          tf32x3           three m16n8k8 .tf32 (see split_tf32x3)
    f32       f32          bf16x3, bf16x6   three or six m16n8k16 .bf16 (see split_bf16)
    i8        i32          -                m16n8k32 .s8 (wrapping)

(fp8 operands reach here widened to f16 by the semantic layer, except e4m3 and e5m2 on
sm_90: wgmma takes those; where it does not, `accelerate_fp8_mma` puts them on f16
mma.sync, widened in the instruction's registers, and `widen_fp8` widens them here
where not even that applies.)
Everything else stays
on the FMA path: f64, fp32 with input_precision "ieee" (and the split precisions where
the parts could not run on tensor cores: there they compute in full fp32), targets
before sm_80, and shapes whose K is smaller than the instruction's.

The dot then gets an `#tilegpu.mma` result (warps from `mma_warps_per_cta`; all along M
for a chain of dots, as attention's), its operands
are converted to `#tilegpu.dot_op<{opIdx, parent = mma, kWidth}>` (the instruction's
fragment layouts) and its accumulator to the mma layout; the result is converted back
for its users. tilegpu-remove-layout-conversions then moves those conversions out of
loops (a loop-carried accumulator becomes mma-typed) and past the epilogue.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mlir import ir

from ..dialects import tile, tilegpu
from ..dialects._mlir import create_op, is_tensor, str_attr, str_attr_value, tensor_type, walk_ops
from ..dialects.tile import shape_of
from ..layout.encodings import BlockedEncoding, DotOperandEncoding
from ..layout.mma import (MMA_V2_INSTR_SHAPE, WGMMA_M, MmaEncoding, mma_v2_instr_k, mma_v2_k_width, mma_v3_instr_n,
                          mma_v3_warps_per_cta, mma_warps_per_cta, wgmma_instr_k)
from ..layout.shared import NVMMASharedEncoding
from ..target import Target
from . import register_pass
from .utils import dots_reached, functions


@dataclass(frozen=True)
class MmaKind:
    """How one dot runs on tensor cores: the PTX multiplicand type and k_width."""
    ptx_type: str   # f16, bf16, tf32, s8
    k_width: int    # operand elements per 32-bit register


def choose_mma(op: ir.Operation, target: Target, precision: str | None = None) -> MmaKind | None:
    """The tensor-core instruction for `op` (with `precision` in place of its
    input_precision if given), or None to keep it on the FMA path."""
    if not target.at_least(80):
        return None
    a, acc = op.operands[0], op.operands[2]
    a_ty, out_ty = str(tensor_type(a.type).element_type), str(tensor_type(acc.type).element_type)
    precision = precision or str_attr_value(op, "input_precision", "ieee")
    if a_ty == "f16" and out_ty in ("f32", "f16"):
        kind = MmaKind("f16", mma_v2_k_width(16))
    elif a_ty == "bf16" and out_ty == "f32":
        kind = MmaKind("bf16", mma_v2_k_width(16))
    elif a_ty == "f32" and out_ty == "f32" and precision == "tf32":
        kind = MmaKind("tf32", mma_v2_k_width(32))
    elif a_ty == "i8" and out_ty == "i32":
        kind = MmaKind("s8", mma_v2_k_width(8))
    else:
        return None
    *_, m, k = shape_of(a.type)
    n = shape_of(op.operands[1].type)[-1]
    if k < mma_v2_instr_k(kind.k_width) or m < 16 or n < 8:
        return None
    return kind


# The bits of an fp32 value that tf32 keeps: sign, exponent and the top 10 of its 23
# mantissa bits.
_TF32_MASK = -(1 << 13)  # 0xFFFFE000 as an i32


def _tf32_halves(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """x = big + small exactly, `big` being x truncated to tf32 (so a tf32 instruction
    reads it unchanged) and `small` the rest, at most 2^-10 of |x|."""
    f32_ty = x.type
    t = tensor_type(f32_ty)
    i32_ty = ir.RankedTensorType.get(list(t.shape), ir.IntegerType.get_signless(32), t.encoding)
    bits = create_op("arith.bitcast", [i32_ty], [x]).result
    scalar_mask = create_op("arith.constant", [ir.IntegerType.get_signless(32)],
                            attributes={"value": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), _TF32_MASK)}).result
    kept = create_op("arith.andi", [i32_ty], [bits, tile.splat(scalar_mask, i32_ty)]).result
    big = create_op("arith.bitcast", [f32_ty], [kept]).result
    return big, create_op("arith.subf", [f32_ty], [x, big]).result


def _bf16_parts(x: ir.Value, count: int) -> list[ir.Value]:
    """x as the sum of `count` bf16 values, largest first: each is the rest so far rounded
    to bf16 (8 significant bits), so two parts hold 16 bits of x and three all 24."""
    f32_ty = x.type
    t = tensor_type(f32_ty)
    bf16_ty = ir.RankedTensorType.get(list(t.shape), ir.BF16Type.get(), t.encoding)
    parts, rest = [], x
    for i in range(count):
        part = create_op("arith.truncf", [bf16_ty], [rest]).result
        parts.append(part)
        if i + 1 < count:
            rest = create_op("arith.subf", [f32_ty], [rest, create_op("arith.extf", [f32_ty], [part]).result]).result
    return parts


# The products of bf16x3 and bf16x6 (index into the parts, largest first), smallest
# first so that the largest is added to the accumulator last.
_BF16_PRODUCTS = {"bf16x3": [(1, 0), (0, 1), (0, 0)],
                  "bf16x6": [(2, 0), (0, 2), (1, 1), (1, 0), (0, 1), (0, 0)]}


def split_bf16(op: ir.Operation) -> None:
    """An fp32 dot with input_precision "bf16x3" or "bf16x6" becomes three or six bf16
    dots: each operand split into two or three bf16 parts (`_bf16_parts`), and the
    products of the parts whose sizes add up to at most 2^-8 (x3) or 2^-16 (x6) of the
    full product kept."""
    a, b, acc = op.operands
    products = _BF16_PRODUCTS[str_attr_value(op, "input_precision")]
    with ir.InsertionPoint(op), op.location:
        count = 1 + max(max(p) for p in products)
        a_parts, b_parts = _bf16_parts(a, count), _bf16_parts(b, count)
        for i, j in products[:-1]:
            acc = tile.dot(a_parts[i], b_parts[j], acc, "ieee")
    last_a, last_b = products[-1]
    op.operands[0], op.operands[1], op.operands[2] = a_parts[last_a], b_parts[last_b], acc
    op.attributes["input_precision"] = str_attr("ieee")


def split_tf32x3(op: ir.Operation) -> None:
    """An fp32 dot with input_precision "tf32x3" becomes three tf32 dots: with a = a_big +
    a_small and b likewise, a @ b is a_big @ b_big + a_big @ b_small + a_small @ b_big up
    to a_small @ b_small (about 2^-20 of |a||b|). The small products go into the
    accumulator first, so the large one is added last."""
    a, b, acc = op.operands
    with ir.InsertionPoint(op), op.location:
        a_big, a_small = _tf32_halves(a)
        b_big, b_small = _tf32_halves(b)
        partial = tile.dot(a_small, b_big, acc, "tf32")
        partial = tile.dot(a_big, b_small, partial, "tf32")
    op.operands[0], op.operands[1], op.operands[2] = a_big, b_big, partial
    op.attributes["input_precision"] = str_attr("tf32")


def _takes_tensor_cores(op: ir.Operation, target: Target, ptx_type: str) -> bool:
    """Whether an fp32 dot of `op`'s shape, computed as `ptx_type` (tf32 or bf16) dots,
    would run on tensor cores."""
    if ptx_type == "tf32":
        kind = choose_mma(op, target, precision="tf32")
        return kind is not None and kind.ptx_type == "tf32"
    if not target.at_least(80):
        return False
    *_, m, k = shape_of(op.operands[0].type)
    return k >= mma_v2_instr_k(mma_v2_k_width(16)) and m >= 16 and shape_of(op.operands[1].type)[-1] >= 8


def _dots_fed(op: ir.Operation) -> list[ir.Operation]:
    """The dots the dot's result reaches as a multiplicand (attention's qk -> softmax ->
    p @ v); a result that is only another dot's accumulator (tf32x3's three products)
    does not make a chain."""
    return dots_reached(op.results[0], operands=(0, 1))


def _feeds_another_dot(op: ir.Operation) -> bool:
    return bool(_dots_fed(op))


def warps_for(op: ir.Operation, num_warps: int) -> tuple[int, ...]:
    """Warps over the result tile. A chain of dots keeps every warp on its own rows
    (all warps along M): the first dot's result then holds exactly the rows the second's
    A operand needs, so passing it on is a register permutation, not an exchange."""
    shape = list(shape_of(op.results[0].type))
    if len(shape) == 2 and _feeds_another_dot(op):
        return chain_warps(shape[0], num_warps)
    return mma_warps_per_cta(shape, num_warps)


def chain_warps(m: int, num_warps: int) -> tuple[int, int]:
    """Warps over a chained dot's [M, N] result: along M while M has a 16-row instruction
    tile for each of them, the rest along N. With all warps along M, an M shorter than
    16 rows per warp (a decode step's handful of query heads: M = 16 with 4 warps) would
    leave warps holding copies of the same rows: every warp would then run the whole
    chain, its mma instructions and its registers (the accumulators, p) multiplied by
    the number of copies. Warps along N each take their own columns instead; the
    reductions over N and the hand-over of p to the next dot then cross warps (through
    shared memory), which costs less than doing all the work several times over."""
    instr_m = MMA_V2_INSTR_SHAPE[0]
    along_m = 1
    while along_m * 2 <= num_warps and instr_m * along_m * 2 <= m:
        along_m *= 2
    return (along_m, num_warps // along_m)


def accelerate(op: ir.Operation, kind: MmaKind, num_warps: int, warps: tuple[int, ...]) -> None:
    """Rewrites one dot onto mma.sync: operands in the instruction's fragment layouts."""
    mma = MmaEncoding(2, warps)
    _rewrite(op, mma, lambda value, index: tilegpu.convert_layout(value, DotOperandEncoding(index, mma, kind.k_width)))


def _rewrite(op: ir.Operation, mma: MmaEncoding, operand: Callable[[ir.Value, int], ir.Value]) -> None:
    """Puts one dot on `mma`: A and B become `operand(value, index)`, the accumulator and
    the result take the mma layout, and the result is converted back for its users."""
    a, b, acc = op.operands
    result = op.results[0]
    old = tilegpu.layout_of(result.type)
    with ir.InsertionPoint(op), op.location:
        op.operands[0] = operand(a, 0)
        op.operands[1] = operand(b, 1)
        op.operands[2] = tilegpu.convert_layout(acc, mma)
    result.set_type(tilegpu.with_layout(result.type, mma))
    with ir.InsertionPoint.after(op), op.location:
        back = tilegpu.convert_layout(result, old)
    for use in list(result.uses):
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if user != back.owner.operation:
            user.operands[use.operand_number] = back


# ----------------------------------------------------------------------------- wgmma (mma v3)
# config.wgmma (on by default; TILEC_WGMMA=0 turns it off): f16, bf16, tf32, fp8 and int8
# dots with an fp32 (int32) accumulator, and f16 dots with an f16 one, on sm_90 run as wgmma, both operands read from NVMMA-swizzled shared buffers
# (tilegpu.local_alloc, which tilegpu-pipeline turns into cp.async rings), each dot's
# group left in flight across a pipelined loop's iterations (see dot_wgmma.py). The
# second dot of a chain reads its A operand from registers.

# The accumulator of each wgmma operand type; f16 operands may also accumulate in f16
# (`out_dtype=tl.float16`, see dot_wgmma.py). 8-bit and tf32 operands are read K-major only (the instruction cannot transpose
# them). tf32 operands are read as the fp32 values they are: the instruction truncates
# them (mma.sync's path rounds them to nearest first; see docs/architecture.md).
_WGMMA_ACCUMULATOR = {"f16": "f32", "bf16": "f32", "tf32": "f32", "e4m3": "f32", "e5m2": "f32", "s8": "i32"}
_WGMMA_16_BIT = {"f16", "bf16"}
_WGMMA_F16_ACCUMULATOR = {"f16"}
# tl.dot's fp8 operands that reach here (sm_90 only; see semantic/matrix_product.py).
_FP8_PTX = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def fp8_kind(op: ir.Operation) -> MmaKind | None:
    """The wgmma kind of a dot of fp8 operands (e4m3 / e5m2, either order), else None."""
    a_ty = str(tensor_type(op.operands[0].type).element_type)
    return MmaKind(_FP8_PTX[a_ty], mma_v2_k_width(8)) if a_ty in _FP8_PTX else None


def widen_fp8(op: ir.Operation) -> None:
    """fp8 operands of a dot that wgmma does not take become f16 (exact) for mma.sync or
    the FMA path, as the semantic layer widens them on other targets."""
    with ir.InsertionPoint(op), op.location:
        for index in (0, 1):
            value = op.operands[index]
            ty = tensor_type(value.type)
            if str(ty.element_type) in _FP8_PTX:
                wide = ir.RankedTensorType.get(list(ty.shape), ir.F16Type.get(), ty.encoding)
                op.operands[index] = create_op("tile.fp_to_fp", [wide], [value]).result


def accelerate_fp8_mma(op: ir.Operation, target: Target, num_warps: int) -> bool:
    """Puts a dot of fp8 operands that wgmma does not take on f16 mma.sync, widening the
    operands in the instruction's registers rather than before: each operand is brought
    to the 8-bit fragment layout (k_width 4, as int8's mma reads it, so it comes from
    shared memory by ldmatrix) and widened there, by a `tile.fp_to_fp` that keeps that
    layout. The load stays an 8-bit load feeding a dot operand, which tilegpu-pipeline
    streams through shared memory with cp.async; widening it first (`widen_fp8`) left a
    16-bit value in a blocked layout that had to be stored to and read back from shared
    memory every iteration, with nothing in flight. The f16 instructions read such an
    operand with K permuted the same way in A and B (see dot_mma.py). Returns False,
    changing nothing, where f16 mma.sync would not take the widened dot."""
    if not target.at_least(80) or str(tensor_type(op.operands[2].type).element_type) != "f32":
        return False
    *_, m, k = shape_of(op.operands[0].type)
    n = shape_of(op.operands[1].type)[-1]
    k_width = mma_v2_k_width(8)
    if k < mma_v2_instr_k(k_width) or m < 16 or n < 8:
        return False
    mma = MmaEncoding(2, warps_for(op, num_warps))

    def operand(value: ir.Value, index: int) -> ir.Value:
        narrow = tilegpu.convert_layout(value, DotOperandEncoding(index, mma, k_width))
        ty = tensor_type(narrow.type)
        wide = ir.RankedTensorType.get(list(ty.shape), ir.F16Type.get(), ty.encoding)
        return create_op("tile.fp_to_fp", [wide], [narrow]).result
    _rewrite(op, mma, operand)
    return True


def choose_v3(op: ir.Operation, target: Target, kind: MmaKind, num_warps: int,
              chained: bool = False, fed: bool = False) -> MmaEncoding | None:
    """The wgmma accumulator layout for `op`, or None to keep mma.sync. A dot of a chain
    (`chained`) keeps every warp on its own rows, as on mma.sync (see `warps_for`), or
    stays on mma.sync when M is too short for that. A dot fed by another (`fed`: its A
    operand from registers) needs 16-bit operands: A from registers is done for those
    only."""
    if target.capability != 90 or kind.ptx_type not in _WGMMA_ACCUMULATOR:
        return None
    acc = str(tensor_type(op.operands[2].type).element_type)
    if acc != _WGMMA_ACCUMULATOR[kind.ptx_type] and not (acc == "f16" and kind.ptx_type in _WGMMA_F16_ACCUMULATOR):
        return None
    if fed and kind.ptx_type not in _WGMMA_16_BIT:
        return None
    shape = list(shape_of(op.results[0].type))
    warps = mma_v3_warps_per_cta(shape, num_warps)
    if warps is None or (chained and warps[1] != 1):
        return None
    m, n = shape
    instr_n = mma_v3_instr_n(n, warps[1])
    bits = 32 // kind.k_width
    if instr_n is None or m < WGMMA_M * (warps[0] // 4) or shape_of(op.operands[0].type)[-1] < wgmma_instr_k(bits):
        return None
    return MmaEncoding(3, warps, (WGMMA_M, instr_n))


def nvmma_encoding(value: ir.Value, k_axis: int | None = None) -> NVMMASharedEncoding:
    """The NVMMA layout a dot operand is staged in: its contiguous dimension stays the one
    its layout holds fastest (threads store whole vectors), or is `k_axis` when given
    (operands wgmma reads K-major only), with the widest swizzle that dimension fills."""
    ty = tensor_type(value.type)
    shape = list(ty.shape)
    bits = _ELEMENT_BITS[str(ty.element_type)]
    fastest = k_axis if k_axis is not None else _contiguous_dim(value)
    row_bytes = shape[fastest] * bits // 8
    swizzle = next(s for s in (128, 64, 32, 0) if s <= row_bytes)
    return NVMMASharedEncoding(swizzle, bits, transposed=fastest == len(shape) - 2)


def _contiguous_dim(value: ir.Value) -> int:
    """The dimension `value` was loaded contiguous along: its blocked layout's fastest,
    looking through layout conversions and a 2-D transpose (`b.T` of a B loaded [N, K]
    is contiguous along K, dimension 0), so the staged buffer can be filled by 16-byte
    copies of the loaded rows."""
    op = value.owner.operation if isinstance(value, ir.OpResult) and hasattr(value.owner, "operation") else \
        (value.owner if isinstance(value, ir.OpResult) else None)
    rank = len(tensor_type(value.type).shape)
    if op is not None and op.name == "tilegpu.convert_layout":
        return _contiguous_dim(op.operands[0])
    if op is not None and op.name == "tile.trans" and rank == 2:
        return 1 - _contiguous_dim(op.operands[0])
    layout = tilegpu.layout_of(value.type)
    return layout.order[0] if isinstance(layout, BlockedEncoding) else rank - 1


_ELEMENT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "i8": 8, "f8E4M3FN": 8, "f8E5M2": 8}


def _to_shared(value: ir.Value, k_axis: int | None = None) -> ir.Value:
    ty = tensor_type(value.type)
    encoding = nvmma_encoding(value, k_axis)
    buffer = tilegpu.memdesc_type(ir.RankedTensorType.get(list(ty.shape), ty.element_type,
                                                          tilegpu.encoding_attr(encoding)))
    return tilegpu.local_alloc(buffer, value)


def accelerate_v3(op: ir.Operation, mma: MmaEncoding, kind: MmaKind, a_in_registers: bool = False) -> None:
    """Rewrites one dot onto wgmma: B staged in an NVMMA shared buffer, A too or, with
    `a_in_registers`, in the instruction's register fragments (its producer computed it in
    registers: staging it would be a round trip through shared memory), the accumulator
    in the v3 layout."""
    def operand(value: ir.Value, index: int) -> ir.Value:
        if index == 0 and a_in_registers:
            return tilegpu.convert_layout(value, DotOperandEncoding(0, mma, kind.k_width))
        k_major_only = kind.ptx_type not in _WGMMA_16_BIT
        return _to_shared(value, (1 - index) if k_major_only else None)
    _rewrite(op, mma, operand)


@register_pass("tilegpu-accelerate-matmul", "Put tl.dot on tensor cores (mma.sync) where target and types allow",
               wgmma=0)
def accelerate_matmul(module_op: ir.Operation, wgmma: int = 0) -> None:
    target = Target.parse(tilegpu.target_of(module_op))
    num_warps = tilegpu.num_warps_of(module_op)
    for fn in functions(module_op):
        for op in [op for op in walk_ops(fn) if op.name == "tile.dot"]:
            precision = str_attr_value(op, "input_precision")
            if precision == "tf32x3" and _takes_tensor_cores(op, target, "tf32"):
                split_tf32x3(op)
            elif precision in _BF16_PRODUCTS and _takes_tensor_cores(op, target, "bf16"):
                split_bf16(op)
        dots = [op for op in walk_ops(fn) if op.name == "tile.dot"]
        # A dot fed by another (the p @ v of attention) takes the warps of the dot that
        # feeds it, so the hand-over stays in registers.
        # (Operations compare equal by identity of the op; the Python wrappers' id()s do not.)
        fed = [user for op in dots for user in _dots_fed(op)]
        for op in dots:
            if not is_tensor(op.results[0].type) or isinstance(tilegpu.layout_of(op.results[0].type), MmaEncoding):
                continue
            chained = op in fed or _feeds_another_dot(op)
            fp8 = fp8_kind(op)
            if fp8 is not None:
                v3 = choose_v3(op, target, fp8, num_warps, chained, fed=op in fed) if wgmma else None
                if v3 is not None:
                    accelerate_v3(op, v3, fp8)
                    continue
                if not chained and accelerate_fp8_mma(op, target, num_warps):
                    continue
                widen_fp8(op)
            kind = choose_mma(op, target)
            if kind is None:
                continue
            # In a chain of dots (attention's q @ k and p @ v) every warp keeps its own rows
            # and the second dot reads the first one's result as its A operand straight from
            # registers (staging it in shared memory measured about half as fast).
            v3 = choose_v3(op, target, kind, num_warps, chained, fed=op in fed) if wgmma else None
            if v3 is not None:
                accelerate_v3(op, v3, kind, a_in_registers=op in fed)
                continue
            warps = warps_for(op, num_warps)
            if op in fed and len(shape_of(op.results[0].type)) == 2:
                warps = chain_warps(shape_of(op.results[0].type)[0], num_warps)
            accelerate(op, kind, num_warps, warps)
