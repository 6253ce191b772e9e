"""Lowering of tile.dot on tensor cores: `mma.sync.aligned.m16n8k*` (sm_80+).

accelerate-matmul gave the dot an `#tilegpu.mma` result and `dot_op` operands, so every
thread already holds exactly the fragments each instruction needs (layout/mma.py):

    C register  c + 4 * (n + REP_N * (m + REP_M * bt))
    A register  a + 4*kw * (k + REP_K * (m + REP_M * bt))
    B register  b + 2*kw * (k + REP_K * (n + REP_N * bt))

with c, a, b the PTX fragment element indices of one instruction, kw the operand
elements per 32-bit register and REP_* the instruction tiles each thread repeats over.
For every (bt, m, n) the accumulator tile goes through the K tiles in order, one
`nvvm.mma.sync` each (its operand PTX types always given: the bindings abort without
them). Operands are packed into 32-bit registers (f16 pairs as vector<2xf16>; bf16, tf32
and int8 as i32); fp32 operands go in as they are, the instruction reading them as tf32
(their 13 low bits dropped, as Triton's and as wgmma's: rounding them first with
cvt.rna cost one instruction an element, 96 an iteration at 16x32x256 against 32 mma),
and an fp16 accumulator travels as two vector<2xf16>. fp16 operands in
the 8-bit fragment layouts (k_width 4: fp8 widened in registers) run as two m16n8k16
per 32-deep tile (`_k16_halves`).
"""
from __future__ import annotations

from mlir import ir

from ...dialects import tilegpu
from ...dialects._mlir import create_op
from ...dialects.tile import shape_of
from ...layout.mma import MmaEncoding, mma_v2_instr_k
from .context import LoweringContext, LoweringError

_PTX_TYPE = {"f16": "f16", "bf16": "bf16", "f32": "tf32", "i8": "s8"}


def lower_dot_mma(ctx: LoweringContext, op: ir.Operation) -> None:
    a, b, acc = op.operands
    mma = tilegpu.layout_of(op.results[0].type)
    a_enc = tilegpu.layout_of(a.type)
    if not isinstance(mma, MmaEncoding) or mma.version != 2:
        raise LoweringError(f"mma lowering needs an mma v2 result layout, got {mma}")
    elem = str(tilegpu.tensor_type(a.type).element_type)
    ptx_type = _PTX_TYPE.get(elem)
    if ptx_type is None:
        raise LoweringError(f"no mma.sync for {elem} operands")
    kw = a_enc.k_width
    instr_k = mma_v2_instr_k(kw)
    shape = shape_of(op.results[0].type)
    k_size = shape_of(a.type)[-1]
    *batch, m_size, n_size = shape
    warps = mma.warps_per_cta
    rep_b = max(1, batch[0] // warps[0]) if batch else 1
    rep_m = max(1, m_size // (16 * warps[-2]))
    rep_n = max(1, n_size // (8 * warps[-1]))
    rep_k = k_size // instr_k
    a_vals, b_vals, c_vals = ctx.elements(a), ctx.elements(b), list(ctx.elements(acc))
    expected = (4 * kw * rep_k * rep_m * rep_b, 2 * kw * rep_k * rep_n * rep_b, 4 * rep_n * rep_m * rep_b)
    if (len(a_vals), len(b_vals), len(c_vals)) != expected:
        raise LoweringError(f"mma operands hold {len(a_vals)}, {len(b_vals)}, {len(c_vals)} registers; "
                            f"expected {expected}")
    out_ty = ctx.element_type(op.results[0].type)
    widened = ptx_type in ("f16", "bf16") and kw == 4
    instruction = _Instruction(ctx, ptx_type, 16 if widened else instr_k, out_ty)
    for bt in range(rep_b):
        for m in range(rep_m):
            for n in range(rep_n):
                c_base = 4 * (n + rep_n * (m + rep_m * bt))
                tile = c_vals[c_base:c_base + 4]
                for k in range(rep_k):
                    a_base = 4 * kw * (k + rep_k * (m + rep_m * bt))
                    b_base = 2 * kw * (k + rep_k * (n + rep_n * bt))
                    a_tile, b_tile = a_vals[a_base:a_base + 4 * kw], b_vals[b_base:b_base + 2 * kw]
                    for a_part, b_part in (_k16_halves(a_tile, b_tile) if widened else [(a_tile, b_tile)]):
                        tile = instruction.emit(a_part, b_part, tile)
                c_vals[c_base:c_base + 4] = tile
    ctx.set(op.results[0], c_vals)


def _k16_halves(a: list[ir.Value], b: list[ir.Value]) -> list[tuple[list[ir.Value], list[ir.Value]]]:
    """The two m16n8k16 instructions of one 16-bit operand tile held in 8-bit fragment
    layouts (k_width 4: fp8 operands widened in registers, see accelerate_fp8_mma), as
    (A, B) fragments. Such a tile is 32 deep: lane (g, t) holds A rows g and g+8 at
    columns 4t..4t+3 and 4t+16..4t+19 (registers 0-3 / 4-7 for the rows at the first
    four, 8-15 at the second), and B column g at rows 4t..4t+3 and 4t+16..4t+19
    (registers 0-3, 4-7). The first instruction takes the first four columns (rows) of
    each lane, the second the other four; each reads its columns 4t, 4t+1 as its own
    2t, 2t+1 and 4t+2, 4t+3 as 2t+8, 2t+9, in A and in B alike, so it sums the same
    products, in another order."""
    return [([a[0], a[1], a[4], a[5], a[2], a[3], a[6], a[7]], b[0:4]),
            ([a[8], a[9], a[12], a[13], a[10], a[11], a[14], a[15]], b[4:8])]


class _Instruction:
    """Emits one mma.sync of a kind on unpacked fragments, returning the four D values."""

    def __init__(self, ctx: LoweringContext, ptx_type: str, k: int, out_ty: ir.Type):
        self.ctx, self.ptx_type, self.out_ty = ctx, ptx_type, out_ty
        self.kw = {"f16": 2, "bf16": 2, "tf32": 1, "s8": 4}[ptx_type]
        self.half_acc = isinstance(out_ty, ir.F16Type)
        self.attributes = {
            "layoutA": ir.Attribute.parse("#nvvm.mma_layout<row>"),
            "layoutB": ir.Attribute.parse("#nvvm.mma_layout<col>"),
            "shape": ir.Attribute.parse(f"#nvvm.shape<m = 16, n = 8, k = {k}>"),
            "multiplicandAPtxType": ir.Attribute.parse(f"#nvvm.mma_type<{ptx_type}>"),
            "multiplicandBPtxType": ir.Attribute.parse(f"#nvvm.mma_type<{ptx_type}>"),
        }
        if ptx_type == "s8":  # tl.dot's int32 accumulator wraps
            self.attributes["intOverflowBehavior"] = ir.Attribute.parse("#nvvm.mma_int_overflow<wrapped>")

    def _words(self, values: list[ir.Value]) -> list[ir.Value]:
        """Operand fragments packed into the instruction's 32-bit registers."""
        ctx, kw = self.ctx, self.kw
        words = []
        for w in range(len(values) // kw):
            chunk = values[w * kw:(w + 1) * kw]
            if self.ptx_type == "f16":
                words.append(_pack(ctx, chunk, ir.VectorType.get([2], ir.F16Type.get())))
            elif self.ptx_type == "tf32":
                words.append(create_op("llvm.bitcast", [ctx.i32], [chunk[0]]).result)
            else:  # bf16 pairs, int8 quads
                vector = _pack(ctx, chunk, ir.VectorType.get([kw], chunk[0].type))
                words.append(create_op("llvm.bitcast", [ctx.i32], [vector]).result)
        return words

    def emit(self, a: list[ir.Value], b: list[ir.Value], c: list[ir.Value]) -> list[ir.Value]:
        ctx = self.ctx
        if self.half_acc:
            pair = ir.VectorType.get([2], ir.F16Type.get())
            c_operands = [_pack(ctx, c[0:2], pair), _pack(ctx, c[2:4], pair)]
            result_type = ir.Type.parse(f"!llvm.struct<({pair}, {pair})>")
        else:
            c_operands = list(c)
            result_type = ir.Type.parse("!llvm.struct<(" + ", ".join([str(self.out_ty)] * 4) + ")>")
        a_words, b_words = self._words(a), self._words(b)
        d = create_op("nvvm.mma.sync", [result_type], a_words + b_words + c_operands,
                      attributes=self.attributes, segments=[len(a_words), len(b_words), len(c_operands)]).result
        if self.half_acc:
            halves = [create_op("llvm.extractvalue", [pair], [d], attributes={
                "position": ir.DenseI64ArrayAttr.get([i])}).result for i in range(2)]
            return [create_op("llvm.extractelement", [self.out_ty], [h, ctx.const(j)]).result
                    for h in halves for j in range(2)]
        return [create_op("llvm.extractvalue", [self.out_ty], [d], attributes={
            "position": ir.DenseI64ArrayAttr.get([i])}).result for i in range(4)]


def _pack(ctx: LoweringContext, values: list[ir.Value], vector_type: ir.Type) -> ir.Value:
    vector = create_op("llvm.mlir.undef", [vector_type]).result
    for i, value in enumerate(values):
        vector = create_op("llvm.insertelement", [vector_type], [vector, value, ctx.const(i)]).result
    return vector
