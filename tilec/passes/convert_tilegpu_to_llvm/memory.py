"""Lowering of tile.load and tile.store to predicated, vectorised global accesses.

A thread's registers are grouped into runs of `vec` elements that are consecutive in
the layout, contiguous and aligned in memory (axis info of the pointers), and share
one mask value (axis info of the mask); each run becomes one PTX instruction of up to
16 bytes, e.g.

    @%p ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%rd0];

with the masked-off value (`other`) pre-loaded into the destination registers by tying
them to inputs. Inline PTX keeps the predicate and width exactly as chosen.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects._mlir import bool_attr_value, create_op, is_tensor, str_attr_value
from ...dialects.tile import load_operands, store_operands
from ...layout.encodings import REGISTER
from .context import LoweringContext, lowers, memory_type

_LOAD_CACHE = {"": "", ".ca": ".ca", ".cg": ".cg", ".cv": ".cv", ".cs": ".cs"}
_STORE_CACHE = {"": "", ".wb": ".wb", ".cg": ".cg", ".cs": ".cs", ".wt": ".wt"}
_EVICTION = {"": "", "evict_normal": "", "evict_first": ".L1::evict_first", "evict_last": ".L1::evict_last"}
_CONSTRAINT = {16: "h", 32: "r", 64: "l"}


def _bits(ty: ir.Type) -> int:
    return ty.width


def vector_width(ctx: LoweringContext, ptr: ir.Value, mask: ir.Value | None, elem_bytes: int) -> int:
    """How many consecutive registers one instruction can access."""
    if not is_tensor(ptr.type):
        return 1
    regs = ctx.layout(ptr).bases(REGISTER)
    if not regs:
        return 1
    first = regs[0]
    dims = [d for d, c in enumerate(first) if c]
    if len(dims) != 1 or first[dims[0]] != 1:
        return 1
    dim = dims[0]
    run = 1
    while run < len(regs) and regs[run] == tuple((1 << run) if d == dim else 0 for d in range(len(first))):
        run += 1
    vec = 1 << run
    info = ctx.axis_info.get(ptr)
    vec = min(vec, info.contiguity[dim], max(1, info.divisibility[dim] // elem_bytes), max(1, 16 // elem_bytes))
    if mask is not None:
        vec = min(vec, ctx.axis_info.get(mask).constancy[dim])
    return 1 << (max(1, vec).bit_length() - 1)


def _word_layout(elem_bits: int, vec: int) -> tuple[int, int]:
    """(bits per PTX register word, number of words) for `vec` elements."""
    total = elem_bits * vec
    if total < 32:
        return max(total, 8), 1
    word = max(32, elem_bits)
    return word, total // word


def _register_type(ctx: LoweringContext, word_bits: int) -> ir.Type:
    return ir.IntegerType.get_signless(max(16, word_bits))


def _to_words(ctx: LoweringContext, elems: list[ir.Value], elem_ty: ir.Type, word_bits: int) -> list[ir.Value]:
    """Packs elements into integer words for PTX registers."""
    elem_bits = _bits(elem_ty)
    reg_ty = _register_type(ctx, word_bits)
    word_ty = ir.IntegerType.get_signless(word_bits)
    per_word = max(1, word_bits // elem_bits)
    words = []
    for w in range(0, len(elems), per_word):
        chunk = elems[w:w + per_word]
        if per_word == 1:
            value = chunk[0]
            if not isinstance(value.type, ir.IntegerType):
                value = create_op("llvm.bitcast", [word_ty], [value]).result
        else:
            vec_ty = ir.VectorType.get([per_word], elem_ty)
            value = create_op("llvm.mlir.undef", [vec_ty]).result
            for i, elem in enumerate(chunk):
                value = create_op("llvm.insertelement", [vec_ty], [value, elem, ctx.const(i)]).result
            value = create_op("llvm.bitcast", [word_ty], [value]).result
        if reg_ty != word_ty:
            value = ctx.arith("extui", value, result_type=reg_ty)
        words.append(value)
    return words


def _from_words(ctx: LoweringContext, words: list[ir.Value], elem_ty: ir.Type, word_bits: int) -> list[ir.Value]:
    elem_bits = _bits(elem_ty)
    word_ty = ir.IntegerType.get_signless(word_bits)
    per_word = max(1, word_bits // elem_bits)
    elems = []
    for value in words:
        if value.type != word_ty:
            value = ctx.arith("trunci", value, result_type=word_ty)
        if per_word == 1:
            if value.type != elem_ty:
                value = create_op("llvm.bitcast", [elem_ty], [value]).result
            elems.append(value)
            continue
        vec_ty = ir.VectorType.get([per_word], elem_ty)
        vector = create_op("llvm.bitcast", [vec_ty], [value]).result
        for i in range(per_word):
            elems.append(create_op("llvm.extractelement", [elem_ty], [vector, ctx.const(i)]).result)
    return elems


def _from_memory(ctx: LoweringContext, value: ir.Value, kind: str) -> ir.Value:
    if kind == "bool":
        return ctx.arith("cmpi", value, ctx.const(0, value.type), result_type=ctx.i1,
                         attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 1)})  # ne
    if kind == "ptr":
        return create_op("llvm.inttoptr", [ctx.ptr_global], [value]).result
    return value


def _to_memory(ctx: LoweringContext, value: ir.Value, kind: str) -> ir.Value:
    if kind == "bool":
        return ctx.arith("extui", value, result_type=ctx.i8)
    if kind == "ptr":
        return create_op("llvm.ptrtoint", [ctx.i64], [value]).result
    return value


@dataclass(frozen=True)
class _Access:
    """How one run of `vec` registers is moved: PTX words, their width and register class."""
    mem_type: ir.Type     # the element type in memory
    kind: str             # 'value', 'bool' or 'ptr' (see memory_type)
    vec: int              # registers per instruction
    word_bits: int        # bits per PTX operand
    n_words: int          # operands per instruction (1, 2 or 4)
    reg_type: ir.Type     # the LLVM type of each operand
    letter: str           # its inline-asm constraint letter

    def suffix(self) -> str:
        return (f".v{self.n_words}" if self.n_words > 1 else "") + f".b{self.word_bits}"

    def operand_list(self, first: int) -> str:
        if self.n_words == 1:
            return f"${first}"
        return "{" + ", ".join(f"${first + i}" for i in range(self.n_words)) + "}"


def _plan(ctx: LoweringContext, ptr: ir.Value, mask: ir.Value | None) -> _Access:
    mem_type, kind = memory_type(ptr.type)
    elem_bits = _bits(mem_type)
    vec = vector_width(ctx, ptr, mask, max(1, elem_bits // 8))
    word_bits, n_words = _word_layout(elem_bits, vec)
    reg_type = _register_type(ctx, word_bits)
    return _Access(mem_type, kind, vec, word_bits, n_words, reg_type, _CONSTRAINT[_bits(reg_type)])


def load_width(ctx: LoweringContext, value: ir.Value) -> int:
    """How many consecutive registers of `value` one global load moves, where `value` is
    the result of a tile.load (1 for anything else)."""
    if not isinstance(value, ir.OpResult):
        return 1
    op = value.owner.operation if hasattr(value.owner, "operation") else value.owner
    if op.name != "tile.load":
        return 1
    ptr, mask, _ = load_operands(op)
    return _plan(ctx, ptr, mask).vec


@lowers("tile.load")
def lower_load(ctx: LoweringContext, op: ir.Operation) -> None:
    ptr, mask, other = load_operands(op)
    a = _plan(ctx, ptr, mask)
    space = ".volatile.global" if bool_attr_value(op, "volatile") else ".global"
    instr = "ld" + space + _LOAD_CACHE[str_attr_value(op, "cache")] + _EVICTION[str_attr_value(op, "evict")] + a.suffix()
    outs = a.operand_list(0)

    ptrs = ctx.elements(ptr)
    masks = ctx.elements(mask) if mask is not None else None
    others = [_to_memory(ctx, v, a.kind) for v in ctx.elements(other)] if other is not None else None
    values: list[ir.Value] = []
    for start in range(0, len(ptrs), a.vec):
        if masks is None:
            asm = f"{instr} {outs}, [${a.n_words}];"
            constraints = ",".join([f"={a.letter}"] * a.n_words + ["l"])
            operands = [ptrs[start]]
        else:
            fill = others[start:start + a.vec] if others is not None else [ctx.const(0, a.mem_type)] * a.vec
            asm = f"@${a.n_words + 1} {instr} {outs}, [${a.n_words}];"
            constraints = ",".join([f"={a.letter}"] * a.n_words + ["l", "b"] + [str(i) for i in range(a.n_words)])
            operands = [ptrs[start], masks[start]] + _to_words(ctx, fill, a.mem_type, a.word_bits)
        words = ctx.inline_asm(asm, constraints, operands, [a.reg_type] * a.n_words)
        values.extend(_from_memory(ctx, v, a.kind) for v in _from_words(ctx, words, a.mem_type, a.word_bits))
    result = op.results[0]
    ctx.set(result, values if is_tensor(result.type) else values[0])


@lowers("tile.store")
def lower_store(ctx: LoweringContext, op: ir.Operation) -> None:
    ptr, value, mask = store_operands(op)
    a = _plan(ctx, ptr, mask)
    instr = "st.global" + _STORE_CACHE[str_attr_value(op, "cache")] + _EVICTION[str_attr_value(op, "evict")] + a.suffix()
    ins = a.operand_list(1)

    ptrs = ctx.elements(ptr)
    masks = ctx.elements(mask) if mask is not None else None
    values = [_to_memory(ctx, v, a.kind) for v in ctx.elements(value)]
    # Each element is stored once: by its owner when the layout holds it in several
    # threads (a scalar by thread 0), from the first register holding it. A run of `vec`
    # registers never spans a repeated register (its bases are distinct powers of two),
    # so owning its first register means owning the run.
    owner, registers = ctx.owners(ptr)
    owned = set(registers)
    for start in range(0, len(ptrs), a.vec):
        if start not in owned:
            continue
        operands = [ptrs[start]] + _to_words(ctx, values[start:start + a.vec], a.mem_type, a.word_bits)
        constraints = ["l"] + [a.letter] * a.n_words
        predicate = owner if masks is None else masks[start] if owner is None else ctx.arith("andi", owner, masks[start])
        if predicate is None:
            asm = f"{instr} [$0], {ins};"
        else:
            asm = f"@${a.n_words + 1} {instr} [$0], {ins};"
            operands.append(predicate)
            constraints.append("b")
        ctx.inline_asm(asm, ",".join(constraints), operands, [])
