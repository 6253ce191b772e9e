"""The lowering context, the rule table, and per-thread index arithmetic.

`LoweringContext` holds what every rule needs: the mapping from ttgir values to their
per-thread values, the thread/lane/warp ids, the scratch space of the op being lowered,
axis info, and helpers to build constants and the coordinates a thread holds in a layout.

Thread-dependent index values are emitted once per layout in the function's prologue
(before `prologue_anchor`), so every region can use them.
"""
from __future__ import annotations

import hashlib
from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import llvm as llvm_d, nvvm

from ...dialects import tilegpu
from ...dialects._mlir import block_ops, create_op, int_attr_value, is_tensor
from ...dialects.tile import element_type, is_ptr_type, pointee_type, shape_of
from ...layout.encodings import LANE, REGISTER, WARP
from ...layout.linear_layout import LinearLayout
from ...target import Target
from ..axis_info import AxisInfoAnalysis
from .shared_memory import OFFSET_ATTR, scratch_size

Lowered = "list[ir.Value] | ir.Value"
Rule = Callable[["LoweringContext", ir.Operation], None]

RULES: dict[str, Rule] = {}


def lowers(*names: str) -> Callable[[Rule], Rule]:
    """Registers a lowering rule for the named ops."""

    def register(fn: Rule) -> Rule:
        for name in names:
            if name in RULES:
                raise ValueError(f"two lowering rules for {name}")
            RULES[name] = fn
        return fn

    return register


class LoweringError(Exception):
    pass


def is_fp8(ty: ir.Type) -> bool:
    return isinstance(ty, (ir.Float8E4M3FNType, ir.Float8E5M2Type, ir.Float8E4M3B11FNUZType, ir.Float8E4M3FNUZType,
                           ir.Float8E5M2FNUZType))


def layout_of_value(value: ir.Value) -> LinearLayout:
    """The linear layout of a ttgir tensor value (its encoding over its shape); pure, so
    scratch size functions and rules decide from the same layouts."""
    enc = tilegpu.layout_of(value.type)
    if enc is None:
        raise LoweringError(f"tensor without a layout: {value.type}")
    return enc.to_linear(shape_of(value.type))


def memory_type(ptr_type: ir.Type) -> tuple[ir.Type, str]:
    """The in-memory element type and what it stands for: 'bool', 'ptr' or 'value'."""
    pointee = pointee_type(element_type(ptr_type))
    if str(pointee) == "i1":
        return ir.IntegerType.get_signless(8), "bool"
    if is_ptr_type(pointee):
        return ir.IntegerType.get_signless(64), "ptr"
    if is_fp8(pointee):
        return ir.IntegerType.get_signless(8), "value"
    return pointee, "value"


# On a kernel parameter: a TMA tensor map the kernel takes by value (compiler.py's
# _pass_tensormaps_by_value), a grid-constant `.param .align 64 .b8 [128]`.
TENSORMAP_ARG_ATTR = "tile.tensormap"


def _tensormap_args(fn: ir.Operation) -> set[int]:
    if "arg_attrs" not in fn.attributes:
        return set()
    attrs = ir.ArrayAttr(fn.attributes["arg_attrs"])
    return {i for i in range(len(attrs)) if TENSORMAP_ARG_ATTR in ir.DictAttr(attrs[i])}


class LoweringContext:
    def __init__(self, func_op: ir.Operation, gpu_block: ir.Block, *, num_warps: int, target: Target,
                 fp_fusion: bool = True, maxnreg: int = 0, producer_warps: int = 0):
        self.func_op = func_op
        # Warps beyond num_warps that a warp-specialised kernel runs (its copies' producers):
        # they count in the block's size only.
        self.producer_warps = producer_warps
        # Set by tilegpu.warp_specialize's rule. `consumer_only`: what is lowered from then
        # on runs in the consumer warps alone (the producers have left), so CTA barriers
        # become a named barrier over those warps. `single_warp`: its region is being
        # lowered, which one producer warp runs.
        self.consumer_only = False
        self.single_warp = False
        self.maxnreg = maxnreg
        self.fp_fusion = fp_fusion
        self.gpu_block = gpu_block
        self.num_warps = num_warps
        self.target = target
        self.values: dict[ir.Value, object] = {}
        self.axis_info = AxisInfoAnalysis(func_op)
        # The op being lowered and where its scratch space begins (its `tilegpu.offset`
        # from tilegpu-allocate-shared-memory); set by lower_op around each rule.
        self.current_op: ir.Operation | None = None
        self._constants: dict[tuple, ir.Value] = {}
        self.prologue_anchor: ir.Operation | None = None
        self.scratch_offset = 0
        self.scratch_reserved = 0  # bytes of it the op's rule said it uses (reserve_shared)
        self.stack_buffers: dict[str, ir.Value] = {}  # per struct type, in the entry block
        self._thread_coords: dict[LinearLayout, list[tuple[ir.Value | None, bool]]] = {}
        self.i1 = ir.IntegerType.get_signless(1)
        self.i8 = ir.IntegerType.get_signless(8)
        self.i16 = ir.IntegerType.get_signless(16)
        self.i32 = ir.IntegerType.get_signless(32)
        self.i64 = ir.IntegerType.get_signless(64)
        self.f32 = ir.F32Type.get()
        self.ptr_global = ir.Type.parse("!llvm.ptr<1>")
        self.ptr_shared = ir.Type.parse("!llvm.ptr<3>")
        self.ptr_generic = ir.Type.parse("!llvm.ptr")

    # ------------------------------------------------------------------ function skeleton
    def build_function(self) -> None:
        fn = self.func_op
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        entry = fn.regions[0].blocks[0]
        by_value = _tensormap_args(fn)
        arg_types = [self.ptr_generic if i in by_value else self.abi_type(a.type) for i, a in enumerate(entry.arguments)]
        fn_type = ir.TypeAttr.get(ir.Type.parse(
            "!llvm.func<void (" + ", ".join(str(t) for t in arg_types) + ")>"))
        with ir.InsertionPoint(self.gpu_block), fn.location:
            if not any(op.operation.name == "llvm.mlir.global" and
                       ir.StringAttr(op.operation.attributes["sym_name"]).value == "global_smem"
                       for op in self.gpu_block.operations):
                llvm_d.GlobalOp(ir.Type.parse("!llvm.array<0 x i8>"), "global_smem", ir.Attribute.parse("#llvm.linkage<external>"),
                                alignment=1024, addr_space=3)
            attributes = {
                "sym_name": ir.StringAttr.get(name),
                "function_type": fn_type,
                "nvvm.kernel": ir.UnitAttr.get(),
                "nvvm.maxntid": ir.DenseI32ArrayAttr.get([32 * (self.num_warps + self.producer_warps)]),
            }
            if self.maxnreg:  # Triton's `maxnreg`: ptxas keeps to it, spilling past it
                attributes["nvvm.maxnreg"] = ir.IntegerAttr.get(self.i32, self.maxnreg)
            # Tensor maps: `.param .align 64 .b8 [128]`, addressed in parameter space. Every
            # other argument is a defined value (the launcher passes each one): `noundef`
            # spares LLVM's straight-line strength reduction its undef/poison checks on
            # values derived from them (a fifth of that pass's time on an attention kernel
            # with runtime strides; the same PTX).
            attributes["arg_attrs"] = ir.ArrayAttr.get([
                ir.DictAttr.get({"llvm.byval": ir.TypeAttr.get(ir.Type.parse("!llvm.array<128 x i8>")),
                                 "llvm.align": ir.IntegerAttr.get(self.i64, 64),
                                 "nvvm.grid_constant": ir.UnitAttr.get()}) if i in by_value
                else ir.DictAttr.get({"llvm.noundef": ir.UnitAttr.get()})
                for i in range(len(arg_types))])
            self.llvm_func = create_op("llvm.func", attributes=attributes, regions=1)
        self.entry_block = self.llvm_func.regions[0].blocks.append(*arg_types)
        with ir.InsertionPoint(self.entry_block), fn.location:
            for index, (old, new) in enumerate(zip(entry.arguments, self.entry_block.arguments)):
                if old.type == self.i1:
                    new = create_op("arith.trunci", [self.i1], [new]).result
                if index in by_value:
                    # The map's generic address (cvta.param), carried as the pointer the
                    # IR's type says; TMA instructions read it back as an address.
                    address = create_op("llvm.ptrtoint", [self.i64], [new]).result
                    new = create_op("llvm.inttoptr", [self.ptr_global], [address]).result
                # A tensor argument (hand-written IR only: kernels take scalars and
                # pointers) is one scalar, every element of the thread's registers.
                self.values[old] = [new] * self.num_registers(old) if is_tensor(old.type) else new
            self.tid = create_op("nvvm.read.ptx.sreg.tid.x", [self.i32]).result
            self.lane = self.arith("andi", self.tid, self.const(31))
            self.warp = self.arith("shrui", self.tid, self.const(5))
            self.smem = create_op("llvm.mlir.addressof", [self.ptr_shared],
                                  attributes={"global_name": ir.FlatSymbolRefAttr.get("global_smem")}).result
            self._smem32: ir.Value | None = None
            self._uniform_warp: ir.Value | None = None
            # Values built later for the prologue go before this marker (removed by canonicalize).
            self.prologue_anchor = create_op("arith.constant", [self.i32], attributes={"value": ir.IntegerAttr.get(self.i32, 0)})

    def finish(self) -> None:
        self.prologue_anchor.erase()

    # ------------------------------------------------------------------ types
    def element_type(self, ty: ir.Type) -> ir.Type:
        """The per-thread scalar type of a ttgir value type (fp8 values are kept as their
        i8 bit patterns: LLVM has no fp8 types)."""
        elem = element_type(ty)
        if is_ptr_type(elem):
            return self.ptr_global
        if is_fp8(elem):
            return self.i8
        return elem

    def abi_type(self, ty: ir.Type) -> ir.Type:
        scalar = self.element_type(ty)
        return self.i8 if scalar == self.i1 else scalar

    # ------------------------------------------------------------------ values
    def lowered(self, value: ir.Value):
        try:
            return self.values[value]
        except KeyError:
            raise LoweringError(f"value used before it was lowered: {value}") from None

    def elements(self, value: ir.Value) -> list[ir.Value]:
        lowered = self.lowered(value)
        if isinstance(lowered, list):
            return lowered
        return [lowered]

    def set(self, value: ir.Value, lowered) -> None:
        self.values[value] = lowered

    # ------------------------------------------------------------------ emission helpers
    def arith(self, name: str, *operands: ir.Value, result_type: ir.Type | None = None, attrs=None) -> ir.Value:
        return create_op("arith." + name, [result_type or operands[0].type], list(operands), attributes=attrs).result

    def const(self, value: int | float, ty: ir.Type | None = None) -> ir.Value:
        """The constant `value` of type `ty` (i32 by default), built once per function in
        its prologue: rules ask for the same few constants thousands of times."""
        ty = ty or self.i32
        is_float = isinstance(ty, (ir.F16Type, ir.F32Type, ir.F64Type, ir.BF16Type))
        key = (ty, float(value).hex() if is_float else int(value))  # hex(): -0.0 and NaN stay apart
        cached = self._constants.get(key)
        if cached is not None:
            return cached
        attr = ir.FloatAttr.get(ty, float(value)) if is_float else ir.IntegerAttr.get(ty, int(value))
        anchor = self.prologue_anchor  # None while the prologue itself is built
        with ir.InsertionPoint(anchor) if anchor is not None else ir.InsertionPoint(self.entry_block):
            result = create_op("arith.constant", [ty], attributes={"value": attr}).result
        self._constants[key] = result
        return result

    def layout(self, value: ir.Value) -> LinearLayout:
        return layout_of_value(value)

    def num_registers(self, value: ir.Value) -> int:
        return self.layout(value).in_dim_size(REGISTER)

    def libdevice_call(self, name: str, args: Sequence[ir.Value], result_type: ir.Type) -> ir.Value:
        return self.call(name, args, result_type).result

    def call(self, name: str, args: Sequence[ir.Value], result_type: ir.Type | None) -> ir.Operation:
        """Calls the external function `name` (declared on first use): libdevice's __nv_*,
        or the CUDA system calls vprintf and __assertfail (result_type None: void)."""
        if not any(op.operation.name == "llvm.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == name
                   for op in self.gpu_block.operations):
            fn_type = ir.TypeAttr.get(ir.Type.parse(
                f"!llvm.func<{result_type or 'void'} (" + ", ".join(str(a.type) for a in args) + ")>"))
            with ir.InsertionPoint.at_block_begin(self.gpu_block):
                create_op("llvm.func", attributes={"sym_name": ir.StringAttr.get(name), "function_type": fn_type},
                          regions=1)
        return create_op("llvm.call", [result_type] if result_type is not None else [], list(args),
                         attributes={"callee": ir.FlatSymbolRefAttr.get(name),
                                     "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(args), 0]),
                                     "op_bundle_sizes": ir.DenseI32ArrayAttr.get([])})

    def string_constant(self, text: str) -> ir.Value:
        """A pointer to a NUL-terminated global copy of `text` (shared by equal strings)."""
        data = text.encode() + b"\0"
        name = "tilec_str_" + hashlib.sha1(data).hexdigest()[:16]
        if not any(op.operation.name == "llvm.mlir.global" and ir.StringAttr(op.operation.attributes["sym_name"]).value == name
                   for op in self.gpu_block.operations):
            with ir.InsertionPoint.at_block_begin(self.gpu_block):
                llvm_d.GlobalOp(ir.Type.parse(f"!llvm.array<{len(data)} x i8>"), name,
                                ir.Attribute.parse("#llvm.linkage<internal>"), constant=True,
                                value=ir.StringAttr.get(data.decode("latin-1")), addr_space=0)
        return create_op("llvm.mlir.addressof", [self.ptr_generic],
                         attributes={"global_name": ir.FlatSymbolRefAttr.get(name)}).result

    def inline_asm(self, asm: str, constraints: str, operands: Sequence[ir.Value],
                   result_types: Sequence[ir.Type], side_effects: bool = True) -> list[ir.Value]:
        """Inline PTX; returns its results as a list (extracted from a struct if several)."""
        if len(result_types) == 0:
            res_type = ir.Type.parse("!llvm.void")
        elif len(result_types) == 1:
            res_type = result_types[0]
        else:
            res_type = ir.Type.parse("!llvm.struct<(" + ", ".join(str(t) for t in result_types) + ")>")
        attrs = {"asm_string": ir.StringAttr.get(asm), "constraints": ir.StringAttr.get(constraints),
                 "asm_dialect": ir.IntegerAttr.get(self.i64, 0)}  # AT&T
        if side_effects:
            attrs["has_side_effects"] = ir.UnitAttr.get()
        op = create_op("llvm.inline_asm", [] if not result_types else [res_type], list(operands), attributes=attrs)
        if len(result_types) <= 1:
            return list(op.results)
        return [create_op("llvm.extractvalue", [t], [op.result],
                          attributes={"position": ir.DenseI64ArrayAttr.get([i])}).result
                for i, t in enumerate(result_types)]

    def barrier(self) -> None:
        """Every thread of the block waits for the others; after a warp_specialize split,
        every consumer thread for the other consumers (named barrier 1: the producer
        warps have left, and barrier 0 would wait for them)."""
        if self.consumer_only:
            nvvm.BarrierOp(None, barrierId=self.const(1), numberOfThreads=self.const(32 * self.num_warps))
            return
        create_op("nvvm.barrier0", [])

    def reserve_shared(self, nbytes: int) -> None:
        """The op being lowered uses the first `nbytes` of its scratch space: checks that
        tilegpu-allocate-shared-memory gave it that many (its size function and its rule
        agree)."""
        op = self.current_op
        if op is None or OFFSET_ATTR not in op.attributes:
            raise LoweringError(f"{op.name if op is not None else 'an op'} needs {nbytes} bytes of shared-memory "
                                f"scratch space but was given none (run tilegpu-allocate-shared-memory first; "
                                f"if it ran, the op's scratch size function said 0)")
        allocated = scratch_size(op, self.num_warps)
        if nbytes > allocated:
            raise LoweringError(f"{op.name} uses {nbytes} bytes of shared-memory scratch space but its scratch "
                                f"size function gave {allocated} (at {op.location})")
        self.scratch_reserved = max(self.scratch_reserved, nbytes)

    def shared_address(self, byte_offset: ir.Value) -> ir.Value:
        """The address of byte `byte_offset` of the current op's scratch space."""
        if not self.scratch_reserved:  # a rule touching bytes its size function did not count
            name = self.current_op.name if self.current_op is not None else "an op"
            raise LoweringError(f"{name} addresses shared-memory scratch space it did not reserve")
        if self.scratch_offset:
            byte_offset = self.arith("addi", byte_offset, self.const(self.scratch_offset))
        return self.shared_pointer(byte_offset)

    def shared_pointer(self, byte_offset: ir.Value, base: ir.Value | None = None) -> ir.Value:
        """The address of byte `byte_offset` of the kernel's shared memory, or of the
        pointer `base` when given."""
        return create_op("llvm.getelementptr", [self.ptr_shared], [self.smem if base is None else base, byte_offset],
                         attributes={"rawConstantIndices": ir.DenseI32ArrayAttr.get([-2147483648]),
                                     "elem_type": ir.TypeAttr.get(self.i8)}).result

    def shared_address32(self, byte_offset: ir.Value) -> ir.Value:
        """Byte `byte_offset` of shared memory as the 32-bit address PTX's shared-memory
        instructions take in inline assembly (cp.async)."""
        if self._smem32 is None:
            with ir.InsertionPoint(self.prologue_anchor):
                self._smem32 = create_op("llvm.ptrtoint", [self.i32], [self.smem]).result
        return self.arith("addi", self._smem32, byte_offset)

    @property
    def uniform_warp(self) -> ir.Value:
        """The warp index taken from lane 0 (shfl.sync.idx), built once in the prologue.

        It equals `warp`, but ptxas knows it is the same in every lane, so what is derived
        from it (wgmma descriptors) stays in uniform registers. Built at the call site
        inside a loop, the shuffle would stay there: ptxas does not move a shuffle out of
        a loop, and every iteration would wait for it before its first wgmma."""
        if self._uniform_warp is None:
            with ir.InsertionPoint(self.prologue_anchor):
                self._uniform_warp = create_op("nvvm.shfl.sync", [self.i32],
                                               [self.const(-1), self.warp, self.const(0), self.const(0x1F)],
                                               attributes={"kind": ir.Attribute.parse("#nvvm<shfl_kind idx>")}).result
        return self._uniform_warp

    # ------------------------------------------------------------------ thread coordinates
    def thread_coordinates(self, ll: LinearLayout) -> list[tuple[ir.Value | None, bool]]:
        """Per output dim: (the lane/warp part of this thread's coordinate, disjoint?).

        The value is None when lanes and warps do not move along the dim. `disjoint` says
        register and thread parts occupy different bits, so they can be added (which
        lets LLVM fold register offsets into addresses) instead of XORed.
        """
        cached = self._thread_coords.get(ll)
        if cached is not None:
            return cached
        coords = []
        with ir.InsertionPoint(self.prologue_anchor):
            for d in range(len(ll.out_dims)):
                reg_bits = 0
                for v in ll.bases(REGISTER):
                    reg_bits |= v[d]
                terms: list[ir.Value] = []
                thread_bits = 0
                disjoint = True
                for name, source in ((LANE, self.lane), (WARP, self.warp)):
                    components = [v[d] for v in ll.bases(name)]
                    for value in components:
                        if value & thread_bits or value & reg_bits or (value & (value - 1)):
                            disjoint = False
                        thread_bits |= value
                    terms.extend(self.bit_terms(source, components))
                coords.append((self.combine_terms(terms, disjoint), disjoint))
        self._thread_coords[ll] = coords
        return coords

    def bit_terms(self, source: ir.Value, components: list[int]) -> list[ir.Value]:
        """Terms whose XOR is sum_i bit_i(source) * components[i], grouping runs of bits."""
        terms = []
        i = 0
        while i < len(components):
            c = components[i]
            if c == 0:
                i += 1
                continue
            if c & (c - 1) == 0:
                # Extend a run: bit i -> c, bit i+1 -> 2c, ...
                j = i + 1
                while j < len(components) and components[j] == components[j - 1] * 2:
                    j += 1
                mask = ((1 << (j - i)) - 1) << i
                shift = c.bit_length() - 1 - i
                term = self.arith("andi", source, self.const(mask))
                if shift > 0:
                    term = self.arith("shli", term, self.const(shift))
                elif shift < 0:
                    term = self.arith("shrui", term, self.const(-shift))
                terms.append(term)
                i = j
            else:
                bit = self.arith("andi", self.arith("shrui", source, self.const(i)), self.const(1))
                terms.append(self.arith("muli", bit, self.const(c)))
                i += 1
        return terms

    def combine_terms(self, terms: list[ir.Value], disjoint: bool) -> ir.Value | None:
        if not terms:
            return None
        result = terms[0]
        for term in terms[1:]:
            result = self.arith("ori" if disjoint else "xori", result, term)
        return result

    def equals(self, x: ir.Value, value: int) -> ir.Value:
        return self.arith("cmpi", x, self.const(value, x.type), result_type=self.i1,
                          attrs={"predicate": ir.IntegerAttr.get(self.i64, 0)})  # eq

    def owners(self, value: ir.Value) -> tuple[ir.Value | None, list[int]]:
        """How to touch each element of `value` once, when a layout repeats elements
        across threads or registers: a predicate selecting this thread's copy (None:
        every thread owns its elements; a scalar is thread 0's) and the registers to use
        (a register repeating an earlier one is skipped)."""
        if not is_tensor(value.type):
            return self.equals(self.tid, 0), [0]
        layout = self.layout(value)
        free = layout.free_variable_masks()
        registers = [r for r in range(layout.in_dim_size(REGISTER)) if not r & free.get(REGISTER, 0)]
        predicate = None
        for name, source in ((LANE, self.lane), (WARP, self.warp)):
            if free.get(name, 0):
                mine = self.equals(self.arith("andi", source, self.const(free[name])), 0)
                predicate = mine if predicate is None else self.arith("andi", predicate, mine)
        return predicate, registers

    def register_coordinates(self, ll: LinearLayout) -> list[tuple[int, ...]]:
        return list(ll.images(REGISTER))

    def element_coordinates(self, ll: LinearLayout, ty: ir.Type | None = None) -> list[list[ir.Value]]:
        """Per register, the full coordinate (one i32 value per dim) of the element held."""
        thread = self.thread_coordinates(ll)
        out = []
        for reg in self.register_coordinates(ll):
            coord = []
            for d, (part, disjoint) in enumerate(thread):
                if part is None:
                    coord.append(self.const(reg[d]))
                elif reg[d] == 0:
                    coord.append(part)
                else:
                    coord.append(self.arith("addi" if disjoint else "xori", part, self.const(reg[d])))
            out.append(coord)
        return out


def lower_op(ctx: LoweringContext, op: ir.Operation) -> None:
    rule = RULES.get(op.name)
    if rule is None:
        raise LoweringError(f"no lowering rule for '{op.name}' (at {op.location})")
    # Ops nested in this one (a combiner region, a loop body) are lowered from inside its
    # rule: restore the outer op's scratch space after each.
    outer = ctx.current_op, ctx.scratch_offset, ctx.scratch_reserved
    ctx.current_op, ctx.scratch_offset, ctx.scratch_reserved = op, int_attr_value(op, OFFSET_ATTR, 0), 0
    try:
        rule(ctx, op)
    finally:
        ctx.current_op, ctx.scratch_offset, ctx.scratch_reserved = outer


def lower_block(ctx: LoweringContext, block: ir.Block, target: ir.Block) -> None:
    """Lowers every op of `block` (except a terminator handled by its parent) into `target`."""
    with ir.InsertionPoint(target):
        for op in block_ops(block):
            if op.name in ("scf.yield", "scf.condition", "gpu.yield"):
                continue
            with op.location:
                lower_op(ctx, op)
