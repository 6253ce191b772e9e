"""Lowering of tile.dot on Hopper's warpgroup instructions: `wgmma.mma_async` (sm_90a).

accelerate-matmul (config.wgmma, the default) gave the dot an mma version 3 result and staged A
and B in NVMMA-swizzled shared buffers. Each warpgroup (4 consecutive warps) computes
the rows and columns its warps hold in the v3 layout (layout/mma.py): for every
instruction tile (m, n) of its share, one `wgmma.mma_async.m64n{N}k16` per 16 columns
of K, reading A and B through 64-bit matrix descriptors. The descriptors' constant
fields (leading / stride byte offsets, swizzle) come from the buffers' layouts
(`wgmma_descriptor_fields`); their start addresses are the buffer's shared address plus
the byte offset of the tile's first element, which the layouts give too. Offsets of rows
and columns that are multiples of 8 add (the swizzle only mixes bits within 8 rows), so
a warpgroup's part is its index times a constant.

The threads' own writes of a buffer (a staged operand) were made visible to the
asynchronous proxy by its local_alloc or local_store (`fence.proxy.async`, before the
barrier tilegpu-insert-barriers put ahead of the dot); ring slots filled by cp.async or
TMA need none. `wgmma.fence` orders the accumulator registers, and after the group is committed the
warpgroup waits for it (`wgmma.wait_group 0`), or, in a loop tilegpu-pipeline marked
(`tilegpu.wgmma_pending = 1`: the accumulator only feeds the next iteration's dot),
for all groups but this one, which then runs on while the loop goes on; a
`tilegpu.wgmma_wait {0}` after the loop (lowered here too, the accumulator's registers
passed through it) waits for the last. The instructions are the upstream `nvvm.wgmma.*`
ops, which `convert-nvvm-to-llvm` turns into PTX.

The second dot of a chain (attention's `p @ v`) has A in registers instead, in the
`dot_op` layout of the v3 parent: per warp mma.sync's m16n8k16 A fragment, which is
wgmma's register fragment for A (four 32-bit registers of f16/bf16 pairs per 16 rows
and 16 columns). The `nvvm.wgmma.mma_async` op only takes a descriptor for A, so that
instruction is inline PTX, the accumulator passed through tied registers.

An f16 accumulator (f16 operands, `out_dtype=tl.float16`) is inline PTX too
(`.f16.f16.f16`): each 32-bit register holds two halves, the pair of elements two f32
registers would hold. The halves are packed once before the first instruction and
unpacked after a `wgmma.wait_group 0` that takes the packed registers as tied operands,
so no unpacking can read a register the group is still writing; for the same reason
such a dot never leaves its group in flight across loop iterations.

Hopper sums fp8 products in the tensor cores with fewer mantissa bits than fp32. An fp8
dot with `max_num_imprecise_acc` = L (tile.dot's attribute, L <= K; tl.dot's argument)
sums each run of L products of K (rounded up to whole instructions, one at least) apart:
per instruction tile (or narrower piece of one, see _lower_partial_sums), the run's
instructions go into a fresh accumulator (scale-d 0 on the first), the group is
committed and waited for, and the run's sums are added into the real accumulator with
fp32 adds (the first run of a zero accumulator is the result as it is). As in Triton,
a loop-carried accumulator so gets one `add.f32` per element and run, and L = K still
adds each dot's products apart from the accumulator. Such a dot waits for its own
groups, so it never stays in flight across loop iterations. Without the attribute
(Triton's default on sm_90 is 2**30) every product goes into the one accumulator.
"""
from __future__ import annotations

import copy

from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import create_op, int_attr_value, str_attr_value
from ...dialects.tile import dot_max_num_imprecise_acc, shape_of
from ...layout.encodings import DotOperandEncoding
from ...layout.mma import WARPGROUP_WARPS, WGMMA_M, MmaEncoding, wgmma_instr_k
from ...layout.shared import NVMMASharedEncoding, shared_byte_offset, wgmma_descriptor_fields
from ..utils import fresh_accumulator, is_zero_constant
from .context import LoweringContext, LoweringError, lowers
from .local_memory import view_of

# Operand element type -> (PTX type, the accumulator's element type).
_WGMMA_TYPE = {"f16": ("f16", "f32"), "bf16": ("bf16", "f32"), "f32": ("tf32", "f32"),
               "f8E4M3FN": ("e4m3", "f32"), "f8E5M2": ("e5m2", "f32"), "i8": ("s8", "i32")}
# Operand element types that may also accumulate in f16.
_F16_ACCUMULATOR = {"f16"}
_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f8E4M3FN": 8, "f8E5M2": 8, "i8": 8}
_K = 16  # one instruction's K for 16-bit operands (A from registers is 16-bit only)
# Operand element types summed in a reduced-precision accumulator (max_num_imprecise_acc).
_FP8 = {"f8E4M3FN", "f8E5M2"}
# How many registers a thread should need for such a dot's accumulator and partial sums
# together (the rest of a kernel takes up to about a hundred more): what bounds the width
# of the instructions that compute the partial sums.
_PARTIAL_SUM_BUDGET = 160


def _signed32(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


def lower_dot_wgmma(ctx: LoweringContext, op: ir.Operation) -> None:
    a, b, acc = op.operands
    mma = tilegpu.layout_of(op.results[0].type)
    if not isinstance(mma, MmaEncoding) or mma.version != 3:
        raise LoweringError(f"wgmma lowering needs an mma v3 result layout, got {mma}")
    if not tilegpu.is_memdesc(b.type):
        raise LoweringError("wgmma reads B from a shared buffer (a memdesc operand)")
    a_in_registers = not tilegpu.is_memdesc(a.type)
    if a_in_registers and not isinstance(tilegpu.layout_of(a.type), DotOperandEncoding):
        raise LoweringError(f"wgmma's A in registers must be in a dot_op layout, not {tilegpu.layout_of(a.type)}")
    a_view = None if a_in_registers else view_of(a)
    b_view = view_of(b)
    a_enc, b_enc = (None if a_view is None else a_view.encoding), b_view.encoding
    if not (a_in_registers or isinstance(a_enc, NVMMASharedEncoding)) or not isinstance(b_enc, NVMMASharedEncoding):
        raise LoweringError("wgmma's shared operands must be in NVMMA shared layouts")
    if (a_view is not None and any(a_view.origin)) or any(b_view.origin):
        raise LoweringError("wgmma operands must be whole buffers")
    a_elem = str(tilegpu.tensor_type(a.type).element_type if a_in_registers else a_view.buffer.element_type)
    elem = str(b_view.buffer.element_type)
    acc_elem = str(tilegpu.tensor_type(acc.type).element_type)
    f16_acc = acc_elem == "f16" and elem in _F16_ACCUMULATOR
    if (elem not in _WGMMA_TYPE or a_elem not in _WGMMA_TYPE or _BITS[a_elem] != _BITS[elem]
            or (acc_elem != _WGMMA_TYPE[elem][1] and not f16_acc)):
        raise LoweringError(f"no wgmma for {a_elem} x {elem} operands with an {acc_elem} accumulator")
    if elem == "f32" and str_attr_value(op, "input_precision") != "tf32":
        raise LoweringError("wgmma multiplies fp32 operands as tf32 only (input_precision=\"tf32\")")
    bits = _BITS[elem]
    instr_k = wgmma_instr_k(bits)
    if a_in_registers and bits != 16:
        raise LoweringError("wgmma reads A from registers for 16-bit operands only")
    a_shape = list(shape_of(a.type)) if a_in_registers else list(a_view.buffer.shape)
    b_shape = list(b_view.buffer.shape)
    m_size, n_size = shape_of(op.results[0].type)
    k_size = a_shape[1]
    wm, wn = mma.warps_per_cta
    groups_m = wm // WARPGROUP_WARPS
    instr_n = mma.instr_shape[1]
    rep_m = max(1, m_size // (WGMMA_M * groups_m))
    rep_n = max(1, n_size // (instr_n * wn))
    regs = instr_n // 2  # accumulator elements per thread and instruction tile
    if k_size % instr_k:
        raise LoweringError(f"wgmma's K ({k_size}) must be a multiple of {instr_k}")
    # An accumulator reset at run time (`select(reset, 0, carried)`, a flattened
    # persistent loop's first K step of a tile): the first instruction of each tile takes
    # the carried registers and ignores them where `reset` holds (scale-d from a register).
    reset = None
    fresh = fresh_accumulator(acc)
    if fresh is not None and not f16_acc and _imprecise_run(op, a_elem, elem, acc_elem, k_size, instr_k) is None:
        acc, reset = fresh
        reset = ctx.arith("extui", ctx.lowered(reset), result_type=ctx.i32)
    c_vals = list(ctx.elements(acc))
    if len(c_vals) != rep_m * rep_n * regs:
        raise LoweringError(f"wgmma accumulator holds {len(c_vals)} registers; expected {rep_m * rep_n * regs}")

    a_fields = None if a_in_registers else wgmma_descriptor_fields(a_enc, a_shape, 1)
    b_fields = wgmma_descriptor_fields(b_enc, b_shape, 0)
    if a_in_registers:
        a_regs = _register_operand(ctx, a, rep_m, k_size // _K)

    def a_offset(row: int, k: int) -> int:
        return shared_byte_offset(a_enc, a_shape, (row, k), bits)

    def b_offset(k: int, col: int) -> int:
        return shared_byte_offset(b_enc, b_shape, (k, col), bits)

    # This warpgroup's first row and column: warps along M first (v3's warp order). The
    # warp index is the one taken from lane 0 (`uniform_warp`), so that descriptors built
    # from it stay in uniform registers (tid / 32 would put them in ordinary ones, moved
    # over per instruction).
    group = None
    if groups_m > 1 or wn > 1:
        group = ctx.arith("divui", ctx.uniform_warp, ctx.const(WARPGROUP_WARPS))
    group_m = ctx.arith("remui", group, ctx.const(groups_m)) if groups_m > 1 else None
    group_n = ctx.arith("divui", group, ctx.const(groups_m)) if wn > 1 else None
    a_base = None if a_in_registers else ctx.shared_address32(ctx.lowered(a))
    b_base = ctx.shared_address32(ctx.lowered(b))
    if group_m is not None and a_base is not None:
        a_base = ctx.arith("addi", a_base, ctx.arith("muli", group_m, ctx.const(a_offset(WGMMA_M, 0))))
    if group_n is not None:
        b_base = ctx.arith("addi", b_base, ctx.arith("muli", group_n, ctx.const(b_offset(0, instr_n))))
    i64 = ir.IntegerType.get_signless(64)

    # A descriptor is its buffer's start field (address / 16: shared addresses are below
    # 2^18, so it fits the field's 14 bits, and so does the address of any element of the
    # buffer, which is what start + offset / 16 is) plus a constant: the layout's fields and
    # the tile's offset / 16. The sum stays in the low 32 bits, whose upper fields (the
    # leading byte offset) the start never reaches; the high 32 bits (stride byte offset,
    # swizzle) are a constant. Built as the pair {low, high}, each instruction's descriptor
    # is one 32-bit add and a constant: ptxas folds the add into the shift that makes the
    # start (one ULEA.HI) and moves the high word in (UMOV). A 64-bit add it could not
    # see through cost a carry chain of 4-5 dependent uniform instructions in front of
    # every tile's first wgmma (tutorial 09's matmul, 128x256x64: up to 0.92 -> 0.99 of
    # Triton at 8192^3 on an H200, noisy).
    starts: dict[int, ir.Value] = {}

    def descriptor(base: ir.Value, offset: int, fields) -> ir.Value:
        if offset % 16:
            raise LoweringError(f"a wgmma operand tile at byte offset {offset}, not a multiple of 16")
        key = id(base)
        if key not in starts:
            # Through an opaque copy, so that LLVM does not hoist a loop-invariant
            # operand's descriptors (attention's q: 8 of them, 16 registers held across
            # the loop) but builds each where it is used.
            (starts[key],) = ctx.inline_asm("mov.b32 $0, $1;", "=r,r", [ctx.arith("shrui", base, ctx.const(4))],
                                            [ctx.i32], side_effects=True)
        constant = fields.encode(0) + offset // 16
        low = ctx.arith("addi", starts[key], ctx.const(_signed32(constant & 0xFFFFFFFF)))
        high = ctx.const(_signed32(constant >> 32 & 0xFFFFFFFF))
        (desc,) = ctx.inline_asm("mov.b64 $0, {$1, $2};", "=l,r,r", [low, high], [i64], side_effects=False)
        return desc

    acc_type = ir.F32Type.get() if acc_elem == "f32" else ctx.i32
    struct = ir.Type.parse("!llvm.struct<(" + ", ".join([acc_elem] * regs) + ")>")
    attrs = _Attributes(instr_n, instr_k, _WGMMA_TYPE[a_elem][0], _WGMMA_TYPE[elem][0], acc_elem,
                        a_in_registers or a_fields.k_major, b_fields.k_major)
    # A zero accumulator (`tl.dot(a, b)`, attention's q @ k) is not passed in: the first
    # instruction of each tile ignores D (scale-d 0), so no registers are zeroed first
    # (as Triton does; a result of exactly zero may then be -0.0 where adding the +0.0
    # accumulator would have given +0.0).
    zero = is_zero_constant(acc, either_sign=True)
    run_k = _imprecise_run(op, a_elem, elem, acc_elem, k_size, instr_k)
    if run_k is not None:
        _lower_partial_sums(ctx, op, c_vals, zero, rep_m, rep_n, regs, k_size, run_k, instr_k, instr_n, acc_type,
                            attrs, lambda m, k0: descriptor(a_base, a_offset(WGMMA_M * groups_m * m, k0), a_fields),
                            lambda n, column, k0: descriptor(b_base, b_offset(k0, instr_n * wn * n + column), b_fields))
        return
    create_op("nvvm.wgmma.fence.aligned", [])
    if f16_acc:
        a_tiles = a_regs if a_in_registers else None
        _lower_f16_accumulator(ctx, op, c_vals, zero, rep_m, rep_n, regs, k_size, instr_k, instr_n,
                               lambda m, k0: a_tiles[m][k0 // _K] if a_tiles is not None else
                               descriptor(a_base, a_offset(WGMMA_M * groups_m * m, k0), a_fields),
                               lambda n, k0: descriptor(b_base, b_offset(k0, instr_n * wn * n), b_fields),
                               a_in_registers or a_fields.k_major, b_fields.k_major)
        return
    results = []
    for m in range(rep_m):
        for n in range(rep_n):
            base = regs * (n + rep_n * m)
            value = create_op("llvm.mlir.undef", [struct]).result
            for i, v in enumerate([] if zero else c_vals[base:base + regs]):
                value = create_op("llvm.insertvalue", [struct], [value, v],
                                  attributes={"position": ir.DenseI64ArrayAttr.get([i])}).result
            row = WGMMA_M * groups_m * m
            col = instr_n * wn * n
            for k0 in range(0, k_size, instr_k):
                accumulate = k0 > 0 or not zero
                desc_b = descriptor(b_base, b_offset(k0, col), b_fields)
                if a_in_registers:
                    value = _mma_async_a_in_registers(ctx, value, regs, a_regs[m][k0 // _K], desc_b,
                                                      instr_n, _WGMMA_TYPE[elem][0], b_fields.k_major,
                                                      accumulate if k0 > 0 or reset is None else reset)
                    continue
                desc_a = descriptor(a_base, a_offset(row, k0), a_fields)
                if k0 == 0 and reset is not None:
                    value = _mma_async_reset(ctx, value, regs, desc_a, desc_b, reset, instr_n, instr_k,
                                             _WGMMA_TYPE[a_elem][0], _WGMMA_TYPE[elem][0], acc_type,
                                             a_fields.k_major, b_fields.k_major)
                    continue
                value = create_op("nvvm.wgmma.mma_async", [struct], [value, desc_a, desc_b],
                                  attributes=attrs.values if accumulate else attrs.first_values).result
            results.append((base, value))
    create_op("nvvm.wgmma.commit.group.sync.aligned", [])
    # In a pipelined loop the newest group may stay in flight (tilegpu-pipeline's
    # WGMMA_PENDING_ATTR): its accumulator only feeds the next iteration's wgmma, and the
    # rings' slots it reads are refilled only after the next iteration's wait.
    pending = int_attr_value(op, "tilegpu.wgmma_pending", 0)
    create_op("nvvm.wgmma.wait.group.sync.aligned", [], attributes={"group": ir.IntegerAttr.get(ctx.i64, pending)})
    out = list(c_vals)
    for base, value in results:
        for i in range(regs):
            out[base + i] = create_op("llvm.extractvalue", [acc_type], [value],
                                      attributes={"position": ir.DenseI64ArrayAttr.get([i])}).result
    ctx.set(op.results[0], out)


def _imprecise_run(op: ir.Operation, a_elem: str, elem: str, acc_elem: str, k_size: int,
                   instr_k: int) -> int | None:
    """How many products of K each partial sum of the dot takes (a multiple of the
    instruction's K), or None when the dot accumulates in place: no
    max_num_imprecise_acc, operands that are not fp8, an accumulator that is not f32, or a
    limit above K (as Triton: a limit of K still sums the dot's products apart)."""
    limit = dot_max_num_imprecise_acc(op)
    if limit is None or a_elem not in _FP8 or elem not in _FP8 or acc_elem != "f32" or limit > k_size:
        return None
    return max(1, -(-limit // instr_k)) * instr_k


def _lower_partial_sums(ctx: LoweringContext, op: ir.Operation, c_vals: list[ir.Value], zero: bool, rep_m: int,
                        rep_n: int, regs: int, k_size: int, run_k: int, instr_k: int, instr_n: int,
                        acc_type: ir.Type, attrs: "_Attributes", a_descriptor, b_descriptor) -> None:
    """An fp8 dot with max_num_imprecise_acc (see the module docstring): per instruction
    tile, each run of `run_k` products of K is issued into a fresh accumulator (D ignored
    by the run's first instruction), committed as one group and waited for (the partial
    sums pass through the wait as tied registers, so no add reads them early), then added
    into the tile's accumulator in fp32.

    Only one tile's partial sums are live at a time, and a tile is summed in narrower
    pieces where its partial sums would take the accumulator's registers past
    _PARTIAL_SUM_BUDGET (64 columns, 32 registers, at least): the accumulator registers
    of an m64nN instruction hold its columns 8 at a time, 4 registers each, so columns
    [c, c + w) of a tile are its registers [c / 2, (c + w) / 2), laid out as a w-column
    instruction's. A 64x256 tile per warpgroup, say, has 128 registers of accumulator:
    its partial sums are taken 64 columns at a time (m64n64 instructions), not in 128
    more registers, which would spill."""
    widest = max(64, 2 * (_PARTIAL_SUM_BUDGET - len(c_vals)))
    piece_n = max(n for n in range(8, min(instr_n, widest) + 1, 8) if instr_n % n == 0)
    piece_regs = piece_n // 2
    struct = ir.Type.parse("!llvm.struct<(" + ", ".join(["f32"] * piece_regs) + ")>")
    piece = attrs.with_n(piece_n)
    # As every float add with fp_fusion (PTX `add.f32`, not `add.rn.f32`): nothing here
    # multiplies, so the flag changes no result.
    add_flags = {"fastmath": ir.Attribute.parse("#arith.fastmath<contract>")} if ctx.fp_fusion else None
    out = list(c_vals)
    spent = None  # the last run's sums, once added (their registers free again)
    for m in range(rep_m):
        for n in range(rep_n):
            for column in range(0, instr_n, piece_n):
                base = regs * (n + rep_n * m) + column // 2
                total = None if zero else c_vals[base:base + piece_regs]
                for start in range(0, k_size, run_k):
                    # The run's first instruction ignores D but takes the registers of the
                    # last run added as D all the same: it writes them, and the adds read
                    # them first, so ptxas cannot issue the run before those adds (and keep
                    # two runs' sums live at once). Registers the adds read are written
                    # again: fence first.
                    create_op("nvvm.wgmma.fence.aligned", [])
                    value = create_op("llvm.mlir.undef", [struct]).result
                    for i, v in enumerate(spent or []):
                        value = create_op("llvm.insertvalue", [struct], [value, v],
                                          attributes={"position": ir.DenseI64ArrayAttr.get([i])}).result
                    for k0 in range(start, min(start + run_k, k_size), instr_k):
                        operands = [value, a_descriptor(m, k0), b_descriptor(n, column, k0)]
                        value = create_op("nvvm.wgmma.mma_async", [struct], operands,
                                          attributes=piece.values if k0 > start else piece.first_values).result
                    create_op("nvvm.wgmma.commit.group.sync.aligned", [])
                    partial = [create_op("llvm.extractvalue", [acc_type], [value], attributes={
                        "position": ir.DenseI64ArrayAttr.get([i])}).result for i in range(piece_regs)]
                    partial = _wait_tied(ctx, partial, 0)
                    if total is None:  # the first run on a zero accumulator: its sums are kept
                        total, spent = partial, None
                    else:
                        total = [ctx.arith("addf", t, p, attrs=add_flags) for t, p in zip(total, partial)]
                        spent = partial
                out[base:base + piece_regs] = total
    ctx.set(op.results[0], out)


def _pack_halves(ctx: LoweringContext, lo: ir.Value, hi: ir.Value) -> ir.Value:
    """Two 16-bit values as one i32 (lo in the low half)."""
    pair = ir.VectorType.get([2], lo.type)
    vector = create_op("llvm.mlir.undef", [pair]).result
    vector = create_op("llvm.insertelement", [pair], [vector, lo, ctx.const(0)]).result
    vector = create_op("llvm.insertelement", [pair], [vector, hi, ctx.const(1)]).result
    return create_op("llvm.bitcast", [ctx.i32], [vector]).result


def _unpack_halves(ctx: LoweringContext, word: ir.Value, ty: ir.Type) -> list[ir.Value]:
    pair = ir.VectorType.get([2], ty)
    vector = create_op("llvm.bitcast", [pair], [word]).result
    return [create_op("llvm.extractelement", [ty], [vector, ctx.const(i)]).result for i in range(2)]


def _wait_tied(ctx: LoweringContext, values: list[ir.Value], pendings: int) -> list[ir.Value]:
    """wgmma.wait_group `pendings` with `values` (f32 or 32-bit integer registers) as tied
    operands, so that nothing reads them before the wait."""
    n = len(values)
    register = "=f" if isinstance(values[0].type, ir.F32Type) else "=r"
    constraints = ",".join([register] * n + [str(i) for i in range(n)])
    return ctx.inline_asm(f"wgmma.wait_group.sync.aligned {pendings};", constraints, values,
                          [v.type for v in values], side_effects=True)


def _lower_f16_accumulator(ctx: LoweringContext, op: ir.Operation, c_vals: list[ir.Value], zero: bool, rep_m: int,
                           rep_n: int, regs: int, k_size: int, instr_k: int, instr_n: int, a_operand, b_descriptor,
                           a_k_major: bool, b_k_major: bool) -> None:
    """A dot accumulating in f16 (see the module docstring): per instruction tile, the
    halves packed in pairs, one inline `wgmma.mma_async ... .f16.f16.f16` per K step
    (A from a descriptor or from four registers, `a_operand(m, k0)`), then one tied wait
    for every group and the halves unpacked."""
    half = ir.F16Type.get()
    words_per_tile = regs // 2
    tiles = []
    for m in range(rep_m):
        for n in range(rep_n):
            base = regs * (n + rep_n * m)
            words = [] if zero else [_pack_halves(ctx, c_vals[base + 2 * i], c_vals[base + 2 * i + 1])
                                     for i in range(words_per_tile)]
            for k0 in range(0, k_size, instr_k):
                accumulate = k0 > 0 or not zero
                a = a_operand(m, k0)
                a_text = f"${words_per_tile}" if not isinstance(a, list) else \
                    "{" + ", ".join(f"${words_per_tile + i}" for i in range(4)) + "}"
                a_count = 4 if isinstance(a, list) else 1
                b_index = words_per_tile + a_count
                d = ", ".join(f"${i}" for i in range(words_per_tile))
                trans = f"{0 if b_k_major else 1}" if isinstance(a, list) else \
                    f"{0 if a_k_major else 1}, {0 if b_k_major else 1}"
                asm = (f"{{ .reg .pred p; setp.ne.b32 p, {int(accumulate)}, 0; "
                       f"wgmma.mma_async.sync.aligned.m64n{instr_n}k16.f16.f16.f16 "
                       f"{{{d}}}, {a_text}, ${b_index}, p, 1, 1, {trans}; }}")
                inputs = (list(a) if isinstance(a, list) else [a]) + [b_descriptor(n, k0)]
                constraints = ["=r"] * words_per_tile + (["r"] * 4 if isinstance(a, list) else ["l"]) + ["l"]
                if words:  # D read too: tied to the outputs
                    constraints += [str(i) for i in range(words_per_tile)]
                    inputs += words
                words = ctx.inline_asm(asm, ",".join(constraints), inputs, [ctx.i32] * words_per_tile,
                                       side_effects=True)
            tiles.append((base, words))
    create_op("nvvm.wgmma.commit.group.sync.aligned", [])
    flat = _wait_tied(ctx, [w for _, words in tiles for w in words], 0)
    out = list(c_vals)
    for t, (base, _) in enumerate(tiles):
        for i in range(words_per_tile):
            lo, hi = _unpack_halves(ctx, flat[t * words_per_tile + i], half)
            out[base + 2 * i], out[base + 2 * i + 1] = lo, hi
    ctx.set(op.results[0], out)


def _register_operand(ctx: LoweringContext, a: ir.Value, rep_m: int, rep_k: int) -> list[list[list[ir.Value]]]:
    """A's fragments, [m][k] -> the four 32-bit registers (f16/bf16 pairs) of the
    instruction tile (m, k). Each warp holds mma.sync's m16n8k16 A fragment per 16 rows
    and 16 columns (layout/mma.py: 8 values per tile, K tiles fastest, then M), which is
    the PTX layout of wgmma's A in registers for the warp's 16 rows of 64."""
    values = list(ctx.elements(a))
    if len(values) != 8 * rep_m * rep_k:
        raise LoweringError(f"wgmma's A holds {len(values)} registers; expected {8 * rep_m * rep_k}")
    tiles = []
    for m in range(rep_m):
        row = []
        for k in range(rep_k):
            base = 8 * (k + rep_k * m)
            row.append([_pack_halves(ctx, values[base + 2 * w], values[base + 2 * w + 1]) for w in range(4)])
        tiles.append(row)
    return tiles


def _mma_async_a_in_registers(ctx: LoweringContext, acc: ir.Value, regs: int, a_words: list[ir.Value],
                              desc_b: ir.Value, n: int, ptx_type: str, b_k_major: bool,
                              accumulate: bool | ir.Value = True) -> ir.Value:
    """One wgmma.mma_async.m64n{n}k16 with A in registers, as inline PTX (the nvvm op
    only reads A through a descriptor). The accumulator struct goes in and comes out as
    tied registers (not `accumulate`: D is ignored, D = A * B; an i32 value instead is a
    run-time reset flag: D ignored where it is nonzero); returns the new struct."""
    f32 = ir.F32Type.get()
    c_vals = [create_op("llvm.extractvalue", [f32], [acc], attributes={
        "position": ir.DenseI64ArrayAttr.get([i])}).result for i in range(regs)]
    d = ", ".join(f"${i}" for i in range(regs))
    a = ", ".join(f"${2 * regs + i}" for i in range(4))
    flag = [] if isinstance(accumulate, bool) else [accumulate]
    setp = f"setp.ne.b32 p, {int(accumulate)}, 0" if not flag else f"setp.eq.b32 p, ${2 * regs + 5}, 0"
    asm = (f"{{ .reg .pred p; {setp}; "
           f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ptx_type}.{ptx_type} "
           f"{{{d}}}, {{{a}}}, ${2 * regs + 4}, p, 1, 1, {0 if b_k_major else 1}; }}")
    constraints = ",".join(["=f"] * regs + [str(i) for i in range(regs)] + ["r"] * 4 + ["l"] + ["r"] * len(flag))
    out = ctx.inline_asm(asm, constraints, c_vals + a_words + [desc_b] + flag, [f32] * regs, side_effects=True)
    value = create_op("llvm.mlir.undef", [acc.type]).result
    for i, v in enumerate(out):
        value = create_op("llvm.insertvalue", [acc.type], [value, v],
                          attributes={"position": ir.DenseI64ArrayAttr.get([i])}).result
    return value


def _mma_async_reset(ctx: LoweringContext, acc: ir.Value, regs: int, desc_a: ir.Value, desc_b: ir.Value,
                     reset: ir.Value, n: int, k: int, a_type: str, b_type: str, acc_type: ir.Type,
                     a_k_major: bool, b_k_major: bool) -> ir.Value:
    """One wgmma.mma_async with both operands from descriptors whose scale-d is decided at
    run time: D = A * B where `reset` (i32) is nonzero, D += A * B elsewhere; inline PTX,
    since the nvvm op takes scale-d as a constant. The accumulator struct goes in and
    comes out as tied registers; returns the new struct."""
    integer = not isinstance(acc_type, ir.FloatType)
    c_vals = [create_op("llvm.extractvalue", [acc_type], [acc], attributes={
        "position": ir.DenseI64ArrayAttr.get([i])}).result for i in range(regs)]
    d = ", ".join(f"${i}" for i in range(regs))
    d_type = "s32" if integer else "f32"
    if integer:
        scales = ""  # the integer form has no scale or transpose immediates
    elif a_type in ("f16", "bf16"):
        scales = f", 1, 1, {0 if a_k_major else 1}, {0 if b_k_major else 1}"
    else:
        scales = ", 1, 1"  # tf32 and fp8 read both operands K-major, with no transpose immediates
    asm = (f"{{ .reg .pred p; setp.eq.b32 p, ${2 * regs + 2}, 0; "
           f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d_type}.{a_type}.{b_type} "
           f"{{{d}}}, ${2 * regs}, ${2 * regs + 1}, p{scales}; }}")
    out_kind = "=r" if integer else "=f"
    constraints = ",".join([out_kind] * regs + [str(i) for i in range(regs)] + ["l", "l", "r"])
    out = ctx.inline_asm(asm, constraints, c_vals + [desc_a, desc_b, reset], [acc_type] * regs, side_effects=True)
    value = create_op("llvm.mlir.undef", [acc.type]).result
    for i, v in enumerate(out):
        value = create_op("llvm.insertvalue", [acc.type], [value, v],
                          attributes={"position": ir.DenseI64ArrayAttr.get([i])}).result
    return value


class _Attributes:
    """The nvvm.wgmma.mma_async attributes of one dot: shape, types, scales and the
    operands' majorness (row-major A and column-major B read K contiguously)."""

    def __init__(self, n: int, k: int, a_type: str, b_type: str, acc_type: str, a_k_major: bool, b_k_major: bool):
        d_type = "s32" if acc_type == "i32" else acc_type
        self.values = {
            "shape": ir.Attribute.parse(f"#nvvm.shape<m = 64, n = {n}, k = {k}>"),
            "typeA": ir.Attribute.parse(f"#nvvm.wgmma_type<{a_type}>"),
            "typeB": ir.Attribute.parse(f"#nvvm.wgmma_type<{b_type}>"),
            "typeD": ir.Attribute.parse(f"#nvvm.wgmma_type<{d_type}>"),
            "scaleD": ir.Attribute.parse("#nvvm.wgmma_scale_out<one>"),
            "scaleA": ir.Attribute.parse("#nvvm.wgmma_scale_in<one>"),
            "scaleB": ir.Attribute.parse("#nvvm.wgmma_scale_in<one>"),
            "layoutA": ir.Attribute.parse(f"#nvvm.mma_layout<{'row' if a_k_major else 'col'}>"),
            "layoutB": ir.Attribute.parse(f"#nvvm.mma_layout<{'col' if b_k_major else 'row'}>"),
        }
        # The same with D ignored (D = A * B): the first instruction on a zero accumulator.
        self.first_values = {**self.values, "scaleD": ir.Attribute.parse("#nvvm.wgmma_scale_out<zero>")}
        self._k = k

    def with_n(self, n: int) -> "_Attributes":
        """The same instruction, `n` columns wide."""
        narrower = copy.copy(self)
        shape = ir.Attribute.parse(f"#nvvm.shape<m = 64, n = {n}, k = {self._k}>")
        narrower.values = {**self.values, "shape": shape}
        narrower.first_values = {**self.first_values, "shape": shape}
        return narrower


@lowers("tilegpu.wgmma_wait")
def lower_wgmma_wait(ctx: LoweringContext, op: ir.Operation) -> None:
    """wgmma.wait_group N with the accumulator's registers as tied operands, so that
    nothing reads them before the wait."""
    values = list(ctx.elements(op.operands[0]))
    if isinstance(values[0].type, ir.F16Type):
        # An f16 accumulator's dot already waited for its group (see the module docstring).
        ctx.set(op.results[0], values)
        return
    ctx.set(op.results[0], _wait_tied(ctx, values, int_attr_value(op, "pendings")))
