"""Lowering of elementwise, creation and shape ops: one scalar op per register."""
from __future__ import annotations

from mlir import ir

from ...dialects._mlir import (ROUND_TOWARD_ZERO, block_ops, bool_attr_value, create_op, int_attr_value, is_tensor,
                              str_attr_value)
from ...dialects.tile import element_type, shape_of
from ...layout.encodings import REGISTER
from .context import LoweringContext, LoweringError, is_fp8, lower_op, lowers, memory_type
from .fp8 import lower_fp8

ARITH_OPS = [
    "addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori", "shli", "shrsi", "shrui",
    "maxsi", "maxui", "minsi", "minui", "addf", "subf", "mulf", "remf", "maxnumf", "minnumf", "maximumf",
    "minimumf", "negf", "cmpi", "cmpf", "select", "extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui",
    "extf", "truncf", "bitcast", "mului_extended", "mulsi_extended",
]

# math ops LLVM lowers well on NVPTX through its own intrinsics.
NATIVE_MATH = ["math.absf", "math.absi", "math.floor", "math.ceil", "math.fma", "math.trunc"]

# math ops computed by libdevice: (f32 name, f64 name)
LIBDEVICE_MATH = {
    "math.log": ("__nv_logf", "__nv_log"), "math.log2": ("__nv_log2f", "__nv_log2"),
    "math.sin": ("__nv_sinf", "__nv_sin"), "math.cos": ("__nv_cosf", "__nv_cos"),
    "math.erf": ("__nv_erff", "__nv_erf"), "math.rsqrt": ("__nv_rsqrtf", "__nv_rsqrt"),
    "math.exp": ("__nv_expf", "__nv_exp"), "math.exp2": ("__nv_exp2f", "__nv_exp2"),
    "math.tan": ("__nv_tanf", "__nv_tan"), "math.powf": ("__nv_powf", "__nv_pow"),
    "math.sqrt": ("__nv_sqrtf", "__nv_sqrt"),
}

# fp32 math that Triton computes with the hardware's approximations (tl.sqrt_rn and
# tl.div_rn are the correctly rounded forms); kept so results match Triton bit for bit.
# tl.exp2 flushes subnormals (Triton's libdevice __nv_exp2f under ftz reflection is
# ex2.approx.ftz.f32; one SASS instruction, where the non-ftz form adds a range fix-up),
# while tl.exp keeps them (`_fast_exp2`, as Triton's own exp lowering).
APPROX_F32 = {"math.sqrt": "sqrt.approx.ftz.f32", "math.rsqrt": "rsqrt.approx.ftz.f32",
              "math.exp2": "ex2.approx.ftz.f32"}

LOG2E = 1.4426950408889634

# Float ops that may fuse (a*b + c -> fma) when fp fusion is on.
_CONTRACTABLE = {"arith.addf", "arith.subf", "arith.mulf"}


def _copy_attrs(op: ir.Operation) -> dict:
    return {name: op.attributes[name] for name in op.attributes}


def _shared_registers(ctx: LoweringContext, results: list[ir.Value]) -> int:
    """The register-index bits a thread may clear without changing `results`' values: a
    bit whose layout basis moves no coordinate (a copy), or moves one dimension within
    the aligned runs over which axis info proves every result constant. `offs_n < N`
    with N % 16 == 0 is the same for 16 consecutive columns, so a thread holding 8 of
    them compares once, not 8 times, as Triton's elementwise lowering does."""
    ll = ctx.layout(results[0])
    runs = None
    for result in results:
        if not is_tensor(result.type) or ctx.layout(result) != ll:
            return 0
        constancy = ctx.axis_info.get(result).constancy
        if len(constancy) != len(ll.out_dims):
            return 0
        mine = [c & -c for c in constancy]  # the power-of-two part: its runs nest in the aligned ones
        runs = mine if runs is None else [min(a, b) for a, b in zip(runs, mine)]
    shared = 0
    for bit, basis in enumerate(ll.bases(REGISTER)):
        moved = [d for d, step in enumerate(basis) if step]
        if not moved or (len(moved) == 1 and basis[moved[0]] < runs[moved[0]]):
            shared |= 1 << bit
    return shared


def _per_element(ctx: LoweringContext, op: ir.Operation, emit, share: bool = True) -> None:
    """Applies `emit(operands) -> [results]` per register (or once, for scalars). With
    `share` (for ops without side effects), a register known to equal another of the
    same thread (`_shared_registers`) takes that one's value instead of its own op."""
    results = list(op.results)
    tensor_like = results[0] if results and is_tensor(results[0].type) else None
    if tensor_like is None:
        lowered = emit([ctx.lowered(v) for v in op.operands])
        for result, value in zip(results, lowered):
            ctx.set(result, value)
        return
    n = ctx.num_registers(tensor_like)
    shared = _shared_registers(ctx, results) if share else 0
    operand_lists = []
    for v in op.operands:
        elems = ctx.elements(v)
        operand_lists.append(elems if len(elems) == n else elems * n if len(elems) == 1 else None)
        if operand_lists[-1] is None:
            raise LoweringError(f"{op.name}: operand holds {len(elems)} elements per thread, result {n}")
    per_result: list[list[ir.Value]] = [[] for _ in results]
    for i in range(n):
        if i & shared:
            for slot in per_result:
                slot.append(slot[i & ~shared])
            continue
        values = emit([lst[i] for lst in operand_lists])
        for slot, value in zip(per_result, values):
            slot.append(value)
    for result, values in zip(results, per_result):
        ctx.set(result, values)


@lowers(*("arith." + name for name in ARITH_OPS), *NATIVE_MATH)
def lower_arith(ctx: LoweringContext, op: ir.Operation) -> None:
    if op.name == "arith.truncf" and "roundingmode" in op.attributes:
        _lower_truncf_rounding(ctx, op)
        return
    if op.name == "arith.truncf" and _lower_truncf_pairs(ctx, op):
        return
    if op.name in ("arith.fptosi", "arith.fptoui"):
        _lower_float_to_int(ctx, op)
        return
    if op.name == "math.absi" and ctx.element_type(op.results[0].type) == ctx.i16:
        _lower_abs_i16(ctx, op)
        return
    attrs = _copy_attrs(op)
    if ctx.fp_fusion and op.name in _CONTRACTABLE:
        attrs["fastmath"] = ir.Attribute.parse("#arith.fastmath<contract>")
    result_types = [ctx.element_type(r.type) for r in op.results]
    _per_element(ctx, op, lambda operands: list(
        create_op(op.name, result_types, operands, attributes=attrs).results))


_PTX_FLOAT = {"f64": ("f64", "d"), "f32": ("f32", "f"), "f16": ("f16", "h"), "bf16": ("bf16", "h")}


def _lower_truncf_rounding(ctx: LoweringContext, op: ir.Operation) -> None:
    """arith.truncf toward zero (fp_downcast_rounding="rtz"): PTX cvt.rz."""
    mode = int_attr_value(op, "roundingmode")
    if mode != ROUND_TOWARD_ZERO:
        raise LoweringError(f"arith.truncf rounding mode {mode} is not supported")
    src, dst = str(element_type(op.operands[0].type)), str(element_type(op.results[0].type))
    (src_name, src_letter), (dst_name, dst_letter) = _PTX_FLOAT[src], _PTX_FLOAT[dst]
    result_ty = ctx.element_type(op.results[0].type)
    bits_ty = ctx.i16 if dst_letter == "h" else result_ty

    def narrow(operands):
        (y,) = ctx.inline_asm(f"cvt.rz.{dst_name}.{src_name} $0, $1;", f"={dst_letter},{src_letter}",
                              operands, [bits_ty], side_effects=False)
        return [y if bits_ty == result_ty else create_op("llvm.bitcast", [result_ty], [y]).result]

    _per_element(ctx, op, narrow)


def _lower_truncf_pairs(ctx: LoweringContext, op: ir.Operation) -> bool:
    """fp32 -> fp16/bf16 of a tensor, two registers at a time: one `fptrunc <2 x float>`,
    which the NVPTX back end selects as a single cvt.rn.{f16,bf16}x2.f32, as Triton does.
    Apart from halving the conversions this matters after a wgmma: where the halves are
    stored one by one (an unaligned output row), scalar cvt.rn.f16.f32 of the accumulator
    make ptxas serialise every wgmma of the kernel (its warning C7514: each HGMMA waited
    for before the next, the main loop no longer overlapped). Returns False (nothing
    lowered) where the op is not such a conversion."""
    results = list(op.results)
    if not is_tensor(results[0].type) or str(element_type(op.operands[0].type)) != "f32":
        return False
    dst = str(element_type(results[0].type))
    n = ctx.num_registers(results[0])
    if dst not in ("f16", "bf16") or n % 2:
        return False
    elements = ctx.elements(op.operands[0])
    if len(elements) != n:
        return False
    half = ctx.element_type(results[0].type)
    wide_pair, narrow_pair = ir.VectorType.get([2], ctx.f32), ir.VectorType.get([2], half)
    narrowed = []
    for lo, hi in zip(elements[0::2], elements[1::2]):
        vector = create_op("llvm.mlir.undef", [wide_pair]).result
        vector = create_op("llvm.insertelement", [wide_pair], [vector, lo, ctx.const(0)]).result
        vector = create_op("llvm.insertelement", [wide_pair], [vector, hi, ctx.const(1)]).result
        vector = create_op("llvm.fptrunc", [narrow_pair], [vector]).result
        narrowed.extend(create_op("llvm.extractelement", [half], [vector, ctx.const(i)]).result for i in range(2))
    ctx.set(results[0], narrowed)
    return True


def _lower_abs_i16(ctx: LoweringContext, op: ir.Operation) -> None:
    """|x| of an int16 in a 32-bit register, truncated back, so the most negative value
    stays itself (|-32768| wraps to -32768). ptxas keeps `abs.s16`'s result in a 32-bit
    register as +32768, which a following 16-bit `mul.hi` read as such: on an H100,
    `abs(x) % 3` of int16 -32768 gave -1 instead of -2. LLVM folds a 32-bit abs of the
    widened value back to `abs.s16`, so the instructions are written out. (int8 is
    computed in 16 bits by LLVM, where |-128| is representable.)"""
    asm = "{ .reg .s32 t; cvt.s32.s16 t, $1; abs.s32 t, t; cvt.u16.u32 $0, t; }"
    _per_element(ctx, op, lambda operands: ctx.inline_asm(asm, "=h,h", operands, [ctx.i16], side_effects=False))


def _lower_float_to_int(ctx: LoweringContext, op: ir.Operation) -> None:
    """Float -> integer: toward zero, saturating at the integer's range, NaN -> 0, as the
    language says for both backends. PTX's `cvt.rzi` saturates; LLVM's fptosi/fptoui would
    select it too, but they make an out-of-range input poison, which lets LLVM fold
    `fptosi(sitofp(x))` into a truncation of `x`. So the conversion is the instruction
    itself, and where `cvt.rzi` gives the most negative value for NaN (from fp64, or to
    64 bits) a NaN test follows."""
    _per_element(ctx, op, lambda operands: [_float_to_int(ctx, op, operands[0])])


def _float_to_int(ctx: LoweringContext, op: ir.Operation, x: ir.Value) -> ir.Value:
    result_ty = ctx.element_type(op.results[0].type)
    src = element_type(op.operands[0].type)
    signed = op.name == "arith.fptosi"
    # Bytes are converted in a 16-bit register (PTX has no 8-bit ones), still saturating at
    # the byte's range; bf16 goes through fp32 (cvt.rzi from bf16 needs sm_90).
    register_ty, letter = {8: (ctx.i16, "h"), 16: (ctx.i16, "h"), 32: (ctx.i32, "r"), 64: (ctx.i64, "l")}[
        result_ty.width]
    if isinstance(src, ir.BF16Type):
        x = ctx.arith("extf", x, result_type=ctx.f32)
    name, src_letter = {"f64": ("f64", "d"), "f16": ("f16", "h")}.get(str(src), ("f32", "f"))
    converted = x
    if src_letter == "h":
        converted = create_op("llvm.bitcast", [ctx.i16], [x]).result
    kind = f"{'s' if signed else 'u'}{result_ty.width}"
    (value,) = ctx.inline_asm(f"cvt.rzi.{kind}.{name} $0, $1;", f"={letter},{src_letter}", [converted],
                              [register_ty], side_effects=False)
    if register_ty != result_ty:
        value = ctx.arith("trunci", value, result_type=result_ty)
    if name == "f64" or result_ty.width == 64:
        is_nan = ctx.arith("cmpf", x, x, result_type=ctx.i1, attrs={"predicate": ir.IntegerAttr.get(ctx.i64, 14)})  # uno
        value = ctx.arith("select", is_nan, ctx.const(0, result_ty), value, result_type=result_ty)
    return value


@lowers("arith.constant")
def lower_constant(ctx: LoweringContext, op: ir.Operation) -> None:
    result = op.results[0]
    if not is_tensor(result.type):
        ctx.set(result, create_op("arith.constant", [result.type], attributes=_copy_attrs(op)).result)
        return
    dense = ir.DenseElementsAttr(op.attributes["value"])
    if not dense.is_splat:
        raise LoweringError("non-splat tensor constants are not supported yet")
    scalar_attr = dense.get_splat_value()
    value = create_op("arith.constant", [scalar_attr.type], attributes={"value": scalar_attr}).result
    ctx.set(result, [value] * ctx.num_registers(result))


def _fast_exp2(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    return ctx.inline_asm("ex2.approx.f32 $0, $1;", "=f,f", [x], [ctx.f32], side_effects=False)[0]


@lowers(*LIBDEVICE_MATH)
def lower_libdevice_math(ctx: LoweringContext, op: ir.Operation) -> None:
    ty = element_type(op.results[0].type)
    f32_name, f64_name = LIBDEVICE_MATH[op.name]

    def emit(operands):
        narrow = isinstance(ty, (ir.F16Type, ir.BF16Type))
        if narrow:
            operands = [ctx.arith("extf", x, result_type=ctx.f32) for x in operands]
        x = operands[0]
        if isinstance(ty, ir.F64Type):
            return [ctx.libdevice_call(f64_name, operands, ty)]
        if op.name == "math.exp":
            # exp(x) = 2^(x * log2(e)) with the hardware's approximate exp2, as Triton does.
            y = _fast_exp2(ctx, ctx.arith("mulf", x, ctx.const(LOG2E, ctx.f32)))
        elif op.name in APPROX_F32:
            y = ctx.inline_asm(f"{APPROX_F32[op.name]} $0, $1;", "=f,f", [x], [ctx.f32], side_effects=False)[0]
        else:
            y = ctx.libdevice_call(f32_name, operands, ctx.f32)
        if narrow:
            y = ctx.arith("truncf", y, result_type=ty)
        return [y]

    _per_element(ctx, op, emit)


@lowers("arith.divf")
def lower_divf(ctx: LoweringContext, op: ir.Operation) -> None:
    """fp32 `/` is the hardware's full-range division (within 2 ulp), as in Triton; an
    fp32 division allowed to approximate (`fastmath<afn>`, from tl.fdiv(approx=True)) is
    the fast one, `div.approx.f32` (2 ulp for |y| below 2**126, 0 above). Other widths
    divide with IEEE rounding."""
    ty = ctx.element_type(op.results[0].type)
    if ty == ctx.f32:
        instruction = "div.approx.f32" if _allows_approximation(op) else "div.full.f32"
        _per_element(ctx, op, lambda operands: ctx.inline_asm(
            f"{instruction} $0, $1, $2;", "=f,f,f", operands, [ctx.f32], side_effects=False))
    else:
        _per_element(ctx, op, lambda operands: [create_op("arith.divf", [ty], operands).result])


def _allows_approximation(op: ir.Operation) -> bool:
    """Whether an arith op's fast-math flags include `afn` (approximate functions)."""
    if "fastmath" not in op.attributes:
        return False
    flags = str(op.attributes["fastmath"])  # "#arith.fastmath<afn>", "#arith.fastmath<fast>", ...
    return "afn" in flags or "fast>" in flags


@lowers("tile.extern_elementwise")
def lower_extern_elementwise(ctx: LoweringContext, op: ir.Operation) -> None:
    symbol = ir.StringAttr(op.attributes["symbol"]).value
    ty = ctx.element_type(op.results[0].type)
    _per_element(ctx, op, lambda operands: [ctx.libdevice_call(symbol, operands, ty)])


@lowers("tile.get_program_id", "tile.get_num_programs")
def lower_program_id(ctx: LoweringContext, op: ir.Operation) -> None:
    axis = "xyz"[int_attr_value(op, "axis")]
    register = "ctaid" if op.name == "tile.get_program_id" else "nctaid"
    ctx.set(op.results[0], create_op(f"nvvm.read.ptx.sreg.{register}.{axis}", [ctx.i32]).result)


@lowers("tile.make_range")
def lower_make_range(ctx: LoweringContext, op: ir.Operation) -> None:
    start = int_attr_value(op, "start")
    ll = ctx.layout(op.results[0])
    coords = ctx.element_coordinates(ll)
    values = []
    for coord in coords:
        value = coord[0]
        if start:
            value = ctx.arith("addi", value, ctx.const(start))
        values.append(value)
    ctx.set(op.results[0], values)


@lowers("tile.splat")
def lower_splat(ctx: LoweringContext, op: ir.Operation) -> None:
    ctx.set(op.results[0], [ctx.lowered(op.operands[0])] * ctx.num_registers(op.results[0]))


def _map_registers(ctx: LoweringContext, src: ir.Value, dst: ir.Value, project) -> None:
    """dst register r takes the src register whose coordinate is project(coord of r).

    Valid when src and dst place threads the same way on the dims they share (the
    frontend/passes guarantee this for broadcast and expand_dims of matching layouts).
    """
    src_ll, dst_ll = ctx.layout(src), ctx.layout(dst)
    src_index = {c: i for i, c in reversed(list(enumerate(ctx.register_coordinates(src_ll))))}
    elems = ctx.elements(src)
    values = []
    for coord in ctx.register_coordinates(dst_ll):
        key = project(coord)
        if key not in src_index:
            raise LoweringError(f"layout mismatch lowering {dst.owner.operation.name}: no source register for {key}")
        values.append(elems[src_index[key]])
    ctx.set(dst, values)


@lowers("tile.broadcast")
def lower_broadcast(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    src_shape = shape_of(src.type)
    grown = [d for d, size in enumerate(src_shape) if size == 1 and shape_of(dst.type)[d] != 1]
    _map_registers(ctx, src, dst, lambda c: tuple(0 if d in grown else x for d, x in enumerate(c)))


@lowers("tile.expand_dims")
def lower_expand_dims(ctx: LoweringContext, op: ir.Operation) -> None:
    src, dst = op.operands[0], op.results[0]
    axis = int_attr_value(op, "axis")
    if not is_tensor(src.type):
        ctx.set(dst, [ctx.lowered(src)] * ctx.num_registers(dst))
        return
    _map_registers(ctx, src, dst, lambda c: c[:axis] + c[axis + 1:])


@lowers("tile.addptr")
def lower_addptr(ctx: LoweringContext, op: ir.Operation) -> None:
    elem = ir.TypeAttr.get(memory_type(op.operands[0].type)[0])

    def emit(operands):
        ptr, offset = operands
        return [create_op("llvm.getelementptr", [ctx.ptr_global], [ptr, offset],
                          attributes={"rawConstantIndices": ir.DenseI32ArrayAttr.get([-2147483648]),
                                      "elem_type": elem}).result]

    _per_element(ctx, op, emit)


@lowers("tile.fp_to_fp")
def lower_fp_to_fp(ctx: LoweringContext, op: ir.Operation) -> None:
    lower_fp8(ctx, op, _per_element)


@lowers("tile.bitcast")
def lower_ptr_bitcast(ctx: LoweringContext, op: ir.Operation) -> None:
    _per_element(ctx, op, lambda operands: [operands[0]])


@lowers("tile.ptr_to_int")
def lower_ptr_to_int(ctx: LoweringContext, op: ir.Operation) -> None:
    ty = element_type(op.results[0].type)
    _per_element(ctx, op, lambda operands: [create_op("llvm.ptrtoint", [ty], operands).result])


@lowers("tile.int_to_ptr")
def lower_int_to_ptr(ctx: LoweringContext, op: ir.Operation) -> None:
    _per_element(ctx, op, lambda operands: [create_op("llvm.inttoptr", [ctx.ptr_global], operands).result])



# ----------------------------------------------------------------------------- inline asm


def _per_register(bits: int, pack: int) -> int:
    """Elements of `bits` bits sharing one asm operand register when `pack` are processed
    per instance: narrow types are packed into (up to) 32-bit registers. The semantic
    layer counts constraints with the same rule."""
    return min(pack, max(1, 32 // bits))


def _width(ty: ir.Type) -> int:
    return 64 if str(ty).startswith("!llvm.ptr") else ty.width


@lowers("tile.inline_asm")
def lower_inline_asm(ctx: LoweringContext, op: ir.Operation) -> None:
    """Each instance of the asm takes `pack` consecutive registers of every operand and
    gives `pack` of every result; narrow elements travel packed (vector bitcast to one
    integer register), wider ones one per register, floats as their bits where the
    constraint names an integer register."""
    asm = str_attr_value(op, "asm")
    constraints = str_attr_value(op, "constraints")
    pack = int_attr_value(op, "pack")
    pure = bool_attr_value(op, "pure")
    letters = [c.strip().lstrip("=&+") for c in constraints.split(",")]
    results, args = list(op.results), list(op.operands)
    count = ctx.num_registers(results[0]) if is_tensor(results[0].type) else 1
    if count % pack:
        raise LoweringError(f"inline_asm_elementwise with pack={pack} needs a multiple of {pack} elements per thread; "
                            f"the layout gives each thread {count} (use a larger block or a smaller pack)")
    result_types = [ctx.element_type(r.type) for r in results]
    outputs: list[list[ir.Value]] = [[] for _ in results]
    for group in range(count // pack):
        letter = iter(letters[sum(pack // _per_register(_width(t), pack) for t in result_types):])
        operands = []
        for arg in args:
            elements = ctx.elements(arg)
            chunk = elements[group * pack:(group + 1) * pack] if len(elements) > 1 else elements * pack
            operands += _pack_operand(ctx, chunk, letter, pack)
        out_letters = iter(letters)
        asm_types, plans = [], []
        for ty in result_types:
            per = _per_register(_width(ty), pack)
            for _ in range(pack // per):
                reg_ty = _register_type(ctx, ty, per, next(out_letters))
                asm_types.append(reg_ty)
                plans.append((ty, per, reg_ty))
        values = ctx.inline_asm(asm, constraints, operands, asm_types, side_effects=not pure)
        at = 0
        for index, ty in enumerate(result_types):
            per = _per_register(_width(ty), pack)
            for _ in range(pack // per):
                outputs[index] += _unpack_result(ctx, values[at], ty, per)
                at += 1
    for result, values in zip(results, outputs):
        ctx.set(result, values if is_tensor(result.type) else values[0])


def _register_type(ctx: LoweringContext, ty: ir.Type, per: int, letter: str) -> ir.Type:
    """The type of one asm register holding `per` elements of `ty`."""
    if per > 1 or (letter in ("r", "l", "h", "c") and not isinstance(ty, ir.IntegerType)):
        return ir.IntegerType.get_signless(_width(ty) * per)
    return ty


def _pack_operand(ctx: LoweringContext, elements: list[ir.Value], letters, pack: int) -> list[ir.Value]:
    ty = elements[0].type
    if ty == ctx.i1:
        elements = [ctx.arith("extui", e, result_type=ctx.i8) for e in elements]
        ty = ctx.i8
    if str(ty).startswith("!llvm.ptr"):
        elements = [create_op("llvm.ptrtoint", [ctx.i64], [e]).result for e in elements]
        ty = ctx.i64
    per = _per_register(_width(ty), pack)
    registers = []
    for start in range(0, pack, per):
        reg_ty = _register_type(ctx, ty, per, next(letters))
        part = elements[start:start + per]
        if per == 1:
            value = part[0]
        else:
            vector_ty = ir.VectorType.get([per], ty)
            value = create_op("llvm.mlir.undef", [vector_ty]).result
            for i, element in enumerate(part):
                value = create_op("llvm.insertelement", [vector_ty], [value, element, ctx.const(i)]).result
        registers.append(value if value.type == reg_ty else create_op("llvm.bitcast", [reg_ty], [value]).result)
    return registers


def _unpack_result(ctx: LoweringContext, value: ir.Value, ty: ir.Type, per: int) -> list[ir.Value]:
    if per == 1:
        return [value if value.type == ty else create_op("llvm.bitcast", [ty], [value]).result]
    vector_ty = ir.VectorType.get([per], ty)
    vector = create_op("llvm.bitcast", [vector_ty], [value]).result
    return [create_op("llvm.extractelement", [ty], [vector, ctx.const(i)]).result for i in range(per)]


@lowers("tile.map_elementwise")
def lower_map_elementwise(ctx: LoweringContext, op: ir.Operation) -> None:
    """The body, inlined once per register: its arguments are that register's operand
    elements, its gpu.yield gives the results' (scf.if and loops in it lower in place).
    With `pack` > 1, once per `pack` consecutive registers (convert-tile-to-tilegpu gave
    every thread a multiple of `pack`): the arguments are those registers of the first
    operand, then of the second, ...; the yield gives those of each result in turn."""
    block = op.regions[0].blocks[0]
    pack = int_attr_value(op, "pack")

    def emit(operands):
        for arg, value in zip(block.arguments, operands):
            ctx.set(arg, value)
        for inner in block_ops(block):
            if inner.name == "gpu.yield":
                return [ctx.lowered(v) for v in inner.operands]
            with inner.location:
                lower_op(ctx, inner)
        raise LoweringError("map_elementwise body has no gpu.yield")

    if pack == 1:
        _per_element(ctx, op, emit, share=False)  # the body may have side effects
        return
    results = list(op.results)
    count = ctx.num_registers(results[0])
    if count % pack:
        raise LoweringError(f"map_elementwise with pack={pack} needs a multiple of {pack} elements per thread; "
                            f"the layout gives each thread {count}")
    operands = [ctx.elements(v) for v in op.operands]
    outputs: list[list[ir.Value]] = [[] for _ in results]
    for start in range(0, count, pack):
        values = emit([elements[start + i] for elements in operands for i in range(pack)])
        for index, value in enumerate(values):
            outputs[index // pack].append(value)
    for result, values in zip(results, outputs):
        ctx.set(result, values)
