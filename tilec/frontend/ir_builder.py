"""The compiling builder: emits ttir (tile + arith/math/scf on tensors) for the semantic layer.

Besides the `Builder` interface it offers what the code generator needs for functions
and structured control flow (scf.if, scf.for), and tracks the insertion point.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Sequence

from mlir import ir
from mlir.dialects import arith, func, scf

from ..dialects import tile
from ..dialects._mlir import ROUND_TOWARD_ZERO, create_op
from ..language.builder import Builder
from ..language.core import TilecSemanticError, block_type, dtype, pointer_type, tensor

# The operations IRBuilder.parameter_expression follows, and their names in a recipe.
_PARAMETER_EXPRESSION_OPS = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul"}


def recipe_positions(entry: list, positions: Sequence[int]) -> list:
    """A tensor-map recipe's shape or stride `entry` (IRBuilder.parameter_expression)
    with each ["arg", i] made ["arg", positions[i]]: kernel parameter positions made
    positions among a call's values (the backend's _add_tensormap_params)."""
    if entry[0] == "arg":
        return ["arg", positions[entry[1]]]
    if entry[0] == "const":
        return list(entry)
    return [entry[0], entry[1], recipe_positions(entry[2], positions), recipe_positions(entry[3], positions)]


_SCALAR_TYPES = {
    "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "i8", "uint16": "i16", "uint32": "i32", "uint64": "i64",
    "fp8e4nv": "f8E4M3FN", "fp8e5": "f8E5M2",
    # fp8e4b15 has no MLIR type of its own: f8E4M3B11FNUZ stands for it (see fp8.py's lowering)
    "fp8e4b15": "f8E4M3B11FNUZ", "fp8e4b8": "f8E4M3FNUZ", "fp8e5b16": "f8E5M2FNUZ",
    "fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64",
}
_FP8_MLIR_TYPES = frozenset(_SCALAR_TYPES[name] for name in dtype.FP8_TYPES)
# AMD's "fnuz" fp8 formats: no NVIDIA GPU has them, so, as in Triton, a compiled kernel may
# not use them at all; the interpreter runs them (IRBuilder's `fnuz_fp8`).
FNUZ_FP8 = ("fp8e4b8", "fp8e5b16")

_UNARY_OPS = {
    "negf": "arith.negf", "absf": "math.absf", "absi": "math.absi", "exp": "math.exp", "exp2": "math.exp2",
    "log": "math.log", "log2": "math.log2", "sqrt": "math.sqrt", "rsqrt": "math.rsqrt", "sin": "math.sin",
    "cos": "math.cos", "floor": "math.floor", "ceil": "math.ceil", "erf": "math.erf", "tan": "math.tan",
    "trunc": "math.trunc", "sqrt_rn": "tile.sqrt_rn",
}


def _is_fp8_type(ty: ir.Type) -> bool:
    return str(tile.element_type(ty)) in _FP8_MLIR_TYPES


_CAST_OPS = {
    "extsi": "arith.extsi", "extui": "arith.extui", "trunci": "arith.trunci", "sitofp": "arith.sitofp",
    "uitofp": "arith.uitofp", "fptosi": "arith.fptosi", "fptoui": "arith.fptoui", "extf": "arith.extf",
    "truncf": "arith.truncf",
}


def _as_dict(attr: ir.DictAttr) -> dict[str, ir.Attribute]:
    return {attr[i].name: attr[i].attr for i in range(len(attr))}


# The kernel function's attribute listing, in order, the recipes of the tensor-map
# parameters appended after its own (IRBuilder.tensormap_argument).
TENSORMAPS_ATTR = "tile.tensormaps"


class IRBuilder(Builder):
    """Builds one ttir module. Must be used inside `with context:`."""

    def __init__(self, context: ir.Context, module: ir.Module, *, fnuz_fp8: bool = False):
        """`fnuz_fp8`: accept the FNUZ_FP8 types, which only the interpreter runs (set
        when it checks a kernel it is about to run); compiling refuses them."""
        self.context = context
        self.module = module
        self.fnuz_fp8 = fnuz_fp8
        self._types: dict[Any, ir.Type] = {}
        # The kernel function's entry block (generate_ttir sets it): its arguments are the
        # kernel's parameters, which kernel_argument recognises.
        self.kernel_entry: ir.Block | None = None
        self._tensormaps: dict[str, ir.Value] = {}

    # ------------------------------------------------------------------ types
    def get_type(self, ty: dtype) -> ir.Type:
        cached = self._types.get(ty)
        if cached is not None:
            return cached
        if isinstance(ty, block_type):
            result = ir.RankedTensorType.get(list(ty.shape), self.get_type(ty.element_ty))
        elif isinstance(ty, pointer_type):
            result = tile.ptr_type(self.get_type(ty.element_ty))
        else:
            if ty.name in FNUZ_FP8 and not self.fnuz_fp8:
                raise TilecSemanticError(
                    f"type {ty.name} not supported in this architecture: it is one of AMD's fnuz fp8 formats, "
                    f"which NVIDIA GPUs do not have (the interpreter runs it); the supported fp8 types are "
                    f"fp8e4nv, fp8e5 and fp8e4b15")
            result = ir.Type.parse(_SCALAR_TYPES[ty.name])
        self._types[ty] = result
        return result

    # ------------------------------------------------------------------ Builder: creation
    def constant(self, value, ty: dtype) -> ir.Value:
        mlir_ty = self.get_type(ty)
        if ty.is_fp8():
            # An fp8 constant is its bit pattern (LLVM has no fp8 type): encode it here.
            # Rounded as a conversion to the format rounds (nearest even, saturating).
            import numpy as np
            from ..interpreter.numpy_common import numpy_dtype, round_to
            bits = int(round_to(np.float64(value), numpy_dtype(ty)).view(np.uint8))
            raw = arith.ConstantOp(ir.IntegerType.get_signless(8), ir.IntegerAttr.get(ir.IntegerType.get_signless(8),
                                                                                        bits - 256 if bits > 127 else bits))
            return create_op("tile.bitcast", [mlir_ty], [raw.result]).result
        if ty.is_floating():
            attr = ir.FloatAttr.get(mlir_ty, float(value))
        else:
            value = int(value)
            bits = ty.primitive_bitwidth
            if value >= 1 << (bits - 1) and bits > 1:
                value -= 1 << bits  # unsigned values are stored as their two's complement
            attr = ir.IntegerAttr.get(mlir_ty, value)
        return arith.ConstantOp(mlir_ty, attr).result

    def splat(self, scalar, ty: block_type):
        return tile.splat(scalar, self.get_type(ty))

    def make_range(self, start: int, end: int, ty: block_type):
        return tile.make_range(start, end, self.get_type(ty))

    def program_id(self, axis: int):
        return tile.get_program_id(axis)

    def num_programs(self, axis: int):
        return tile.get_num_programs(axis)

    # ------------------------------------------------------------------ Builder: elementwise
    def binary(self, op: str, lhs, rhs, ty: dtype):
        mlir_ty = self.get_type(ty)
        if op == "mulhiui":
            return create_op("arith.mului_extended", [mlir_ty, mlir_ty], [lhs, rhs]).results[1]
        if op == "divf_rn":
            return self.extern_elementwise_typed("div_rn", [lhs, rhs], ty)
        if op == "divf_approx":
            # arith.divf allowed to approximate (`afn`): lowered to div.approx.f32.
            return create_op("arith.divf", [mlir_ty], [lhs, rhs],
                             attributes={"fastmath": ir.Attribute.parse("#arith.fastmath<afn>")}).result
        if op == "powf":
            return create_op("math.powf", [mlir_ty], [lhs, rhs]).result
        return create_op("arith." + op, [mlir_ty], [lhs, rhs]).result

    def ternary(self, op: str, a, b, c, ty: dtype):
        assert op == "fma", op
        return create_op("math.fma", [self.get_type(ty)], [a, b, c]).result

    def extern_elementwise(self, symbol: str, args, ty: dtype, pure: bool = True):
        return tile.extern_elementwise(symbol, list(args), self.get_type(ty), pure)

    def extern_elementwise_typed(self, name: str, args, ty: dtype):
        """IEEE operations with a libdevice function per width (div_rn, sqrt_rn)."""
        scalar = ty.scalar
        symbol = {("div_rn", "fp32"): "__nv_fdiv_rn", ("div_rn", "fp64"): "__nv_ddiv_rn",
                  ("sqrt_rn", "fp32"): "__nv_fsqrt_rn", ("sqrt_rn", "fp64"): "__nv_dsqrt_rn"}[(name, scalar.name)]
        return self.extern_elementwise(symbol, args, ty)

    def unary(self, op: str, x, ty: dtype):
        if op == "sqrt_rn":
            return self.extern_elementwise_typed("sqrt_rn", [x], ty)
        return create_op(_UNARY_OPS[op], [self.get_type(ty)], [x]).result

    def compare(self, predicate: str, lhs, rhs, is_float: bool, ty: dtype):
        if is_float:
            return arith.CmpFOp(getattr(arith.CmpFPredicate, predicate.upper()), lhs, rhs).result
        return arith.CmpIOp(getattr(arith.CmpIPredicate, predicate), lhs, rhs).result

    def select(self, cond, true_value, false_value, ty: dtype):
        return arith.SelectOp(cond, true_value, false_value).result

    def cast(self, op: str, x, ty: dtype):
        mlir_ty = self.get_type(ty)
        # fp8 values are converted and bitcast by tile ops, which MLIR does not fold: its
        # folders would round by their own rules (and read f8E4M3B11FNUZ, which stands for
        # fp8e4b15, with bias 11).
        fp8 = ty.scalar.is_fp8() or _is_fp8_type(x.type)
        if op == "bitcast":
            name = "tile.bitcast" if ty.scalar.is_ptr() or fp8 else "arith.bitcast"
        elif fp8 and op in ("extf", "truncf"):
            name = "tile.fp_to_fp"
        elif op == "ptrtoint":
            name = "tile.ptr_to_int"
        elif op == "inttoptr":
            name = "tile.int_to_ptr"
        elif op == "truncf_rtz":
            return create_op("arith.truncf", [mlir_ty], [x], attributes={
                "roundingmode": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), ROUND_TOWARD_ZERO)}).result
        else:
            name = _CAST_OPS[op]
        return create_op(name, [mlir_ty], [x]).result

    # ------------------------------------------------------------------ Builder: shape
    def broadcast(self, x, ty: block_type):
        return tile.broadcast(x, self.get_type(ty))

    def expand_dims(self, x, axis: int, ty: block_type):
        return tile.expand_dims(x, axis, self.get_type(ty))

    def reshape(self, x, ty: block_type):
        return tile.reshape(x, self.get_type(ty))

    def trans(self, x, order, ty: block_type):
        return tile.trans(x, order, self.get_type(ty))

    def join(self, a, b, ty: block_type):
        return tile.join(a, b, self.get_type(ty))

    def split(self, x, ty: block_type):
        return tile.split(x, self.get_type(ty))

    def cat(self, a, b, ty: block_type):
        return tile.cat(a, b, self.get_type(ty))

    # ------------------------------------------------------------------ Builder: memory
    def addptr(self, ptr, offset, ty: dtype):
        return tile.addptr(ptr, offset)

    def load(self, ptr, mask, other, ty: dtype, *, cache_modifier: str, eviction_policy: str, volatile: bool):
        return tile.load(ptr, mask, other, self.get_type(ty), cache=cache_modifier, evict=eviction_policy,
                         volatile=volatile)

    def store(self, ptr, value, mask, *, cache_modifier: str, eviction_policy: str) -> None:
        tile.store(ptr, value, mask, cache=cache_modifier, evict=eviction_policy)

    def descriptor_load(self, tensormap, offsets, ty: block_type, fallback: Callable[[], tensor]):
        """A TMA load of the block at `offsets`; `fallback()` builds the same load with
        pointers, in the op's region (see tile.descriptor_load)."""
        op = tile.descriptor_load(tensormap, list(offsets), self.get_type(ty))
        with ir.InsertionPoint(op.regions[0].blocks.append()):
            create_op("gpu.yield", [], [fallback().handle])
        return op.results[0]

    def descriptor_store(self, tensormap, value, offsets, fallback: Callable[[], None]) -> None:
        op = tile.descriptor_store(tensormap, value, list(offsets))
        with ir.InsertionPoint(op.regions[0].blocks.append()):
            fallback()
            create_op("gpu.yield", [], [])

    def gather(self, src, index, axis: int, ty: block_type):
        return tile.gather(src, index, axis, self.get_type(ty))

    def histogram(self, x, num_bins: int, mask, ty: block_type):
        return tile.histogram(x, mask, self.get_type(ty))

    def inline_asm(self, asm: str, constraints: str, args, result_types, is_pure: bool, pack: int):
        return tile.inline_asm(asm, constraints, list(args), [self.get_type(t) for t in result_types], is_pure, pack)

    def dot(self, a, b, acc, input_precision: str, ty: block_type, max_num_imprecise_acc: int | None = None):
        return tile.dot(a, b, acc, input_precision, max_num_imprecise_acc)

    def atomic_rmw(self, op: str, ptr, value, mask, sem: str, scope: str, ty: dtype):
        return tile.atomic_rmw(op, ptr, value, mask, sem, scope, self.get_type(ty))

    def atomic_cas(self, ptr, cmp, value, sem: str, scope: str, ty: dtype):
        return tile.atomic_cas(ptr, cmp, value, sem, scope, self.get_type(ty))

    def atomic_load(self, ptr, mask, sem: str, scope: str, ty: dtype):
        return tile.atomic_load(ptr, mask, sem, scope, self.get_type(ty))

    def atomic_store(self, ptr, value, mask, sem: str, scope: str) -> None:
        tile.atomic_store(ptr, value, mask, sem, scope)

    def atomic_poll(self, ptr, expected, timeout, sem: str, scope: str, ty: dtype):
        return tile.atomic_poll(ptr, expected, timeout, sem, scope, self.get_type(ty))

    def special_register(self, name: str, ty: dtype):
        return tile.special_register(name)

    def grid_dependency(self, action: str) -> None:
        tile.grid_dependency(action)

    # ------------------------------------------------------------------ Builder: debugging and hints
    def device_print(self, prefix: str, args: Sequence[tensor], hex: bool) -> None:
        tile.print_(prefix, [a.handle for a in args], hex,
                    [a.dtype.is_int_signed() if a.dtype.is_int() else False for a in args])

    def device_assert(self, cond, message: str, location: str) -> None:
        tile.assert_(cond, message)  # the op's own location names the source line

    def source_location(self) -> str:
        found = re.search(r'"([^"]+)":(\d+)', str(ir.Location.current))
        return f"{found.group(1)}:{found.group(2)}" if found else "<unknown>"

    def barrier(self) -> None:
        tile.barrier()

    def assume(self, cond) -> None:
        tile.assume(cond)

    def hint(self, x, kind: str, values: Sequence[int]):
        name = tile.HINT_ATTRIBUTES[kind]
        owner = x.owner
        if isinstance(owner, ir.Block):  # a block argument
            self._hint_argument(x, owner, name, values)
        else:
            owner.attributes[name] = ir.DenseI32ArrayAttr.get([int(v) for v in values])
        return x

    def _hint_argument(self, x, block: ir.Block, name: str, values: Sequence[int]) -> None:
        """Kernel arguments take a divisibility hint (the others mean nothing for a
        scalar). A loop-carried value takes any hint, as a fact of every iteration (a
        hint written in the loop body holds each time the body runs): recorded on the
        loop as `<hint>_arg<N>` for its block argument N, which tilegpu's axis analysis
        reads (`tl.multiple_of(a_ptrs, [16, 16])` in tutorial 08's K loop)."""
        fn = block.owner.operation
        if fn.name == "scf.for" and block == fn.regions[0].blocks[0] and x.arg_number > 0:
            fn.attributes[f"{name}_arg{x.arg_number}"] = ir.DenseI32ArrayAttr.get([int(v) for v in values])
            return
        if name != "tile.divisibility" or fn.name != "func.func" or block != fn.regions[0].blocks[0]:
            return
        attrs = ir.ArrayAttr(fn.attributes["arg_attrs"]) if "arg_attrs" in fn.attributes else None
        dicts = [_as_dict(ir.DictAttr(attrs[i])) if attrs is not None else {} for i in range(len(block.arguments))]
        dicts[x.arg_number]["tile.divisibility"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(values[0]))
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])

    # ------------------------------------------------------------------ kernel parameters
    def kernel_argument(self, x: ir.Value) -> tuple[int, int] | None:
        """(position, divisibility hint) of `x` when it is one of the kernel's own
        parameters, else None (a value computed in the kernel, or a loop's argument)."""
        owner = x.owner
        if self.kernel_entry is None or not isinstance(owner, ir.Block) or owner != self.kernel_entry:
            return None
        position = ir.BlockArgument(x).arg_number
        fn = owner.owner.operation
        divisibility = 1
        if "arg_attrs" in fn.attributes:
            attrs = _as_dict(ir.DictAttr(ir.ArrayAttr(fn.attributes["arg_attrs"])[position]))
            if "tile.divisibility" in attrs:
                divisibility = ir.IntegerAttr(attrs["tile.divisibility"]).value
        return position, divisibility

    def parameter_bits(self, position: int) -> int:
        """The width of the kernel's integer parameter at `position` (64 for an argument
        that did not fit int32 at the launch it was compiled for)."""
        return ir.IntegerType(self.kernel_entry.arguments[position].type).width

    def parameter_expression(self, x: ir.Value, depth: int = 8) -> tuple[list, int] | None:
        """(expression, a number it is known to divide by) of an integer `x` the kernel
        computes from its own parameters and constants by +, - and * alone (`Z * H *
        N_CTX`), else None: ["arg", position], ["const", value], or [op, bits, left,
        right] with op add, sub or mul in `bits`-wide two's complement, which the
        launcher evaluates from a call's values to the kernel's own result
        (tilec.runtime.tma.recipe_value). At most `depth` operations deep."""
        constant = self.constant_int(x)
        if constant is not None:
            return ["const", constant], constant
        argument = self.kernel_argument(x)
        if argument is not None:
            return ["arg", argument[0]], argument[1]
        owner = x.owner
        if depth == 0 or isinstance(owner, ir.Block) or not isinstance(x.type, ir.IntegerType):
            return None
        if owner.name == "arith.extsi" and owner.operands[0].type.width > 1:
            # a signed value keeps its value when widened (not a bool: true would be -1)
            return self.parameter_expression(owner.operands[0], depth - 1)
        op = _PARAMETER_EXPRESSION_OPS.get(owner.name)
        if op is None:
            return None
        left, right = (self.parameter_expression(v, depth - 1) for v in owner.operands)
        if left is None or right is None:
            return None
        divides = left[1] * right[1] if op == "mul" else math.gcd(left[1], right[1])
        return [op, x.type.width, left[0], right[0]], divides

    @staticmethod
    def constant_int(x: ir.Value) -> int | None:
        """The value of `x` when it is an integer constant, else None."""
        owner = x.owner
        if isinstance(owner, ir.Block) or owner.name != "arith.constant":
            return None
        value = owner.attributes["value"]
        return ir.IntegerAttr(value).value if isinstance(value, ir.IntegerAttr) else None

    def tensormap_argument(self, recipe: str) -> ir.Value:
        """A kernel parameter the launcher fills with the address of a TMA tensor map it
        encodes from `recipe` (JSON, see tilec.runtime.tma.kernel_tensor_maps): appended
        after the kernel's own parameters, one per distinct recipe, and listed in order
        in the function's TENSORMAPS_ATTR."""
        found = self._tensormaps.get(recipe)
        if found is not None:
            return found
        entry = self.kernel_entry
        fn = entry.owner.operation
        pointer = tile.ptr_type(ir.IntegerType.get_signless(8))
        value = entry.add_argument(pointer, ir.Location.unknown())
        function_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(function_type.inputs) + [pointer], list(function_type.results)))
        if "arg_attrs" in fn.attributes:
            fn.attributes["arg_attrs"] = ir.ArrayAttr.get(list(ir.ArrayAttr(fn.attributes["arg_attrs"]))
                                                          + [ir.DictAttr.get({})])
        recipes = list(ir.ArrayAttr(fn.attributes[TENSORMAPS_ATTR])) if TENSORMAPS_ATTR in fn.attributes else []
        fn.attributes[TENSORMAPS_ATTR] = ir.ArrayAttr.get(recipes + [ir.StringAttr.get(recipe)])
        self._tensormaps[recipe] = value
        return value

    # ------------------------------------------------------------------ Builder: reductions
    def reduce(self, inputs: Sequence[tensor], axis: int, combine: Callable, result_types: Sequence[dtype]):
        op = tile.reduce([x.handle for x in inputs], axis, [self.get_type(t) for t in result_types])
        return self._fill_combiner(op, inputs, combine)

    def scan(self, inputs: Sequence[tensor], axis: int, combine: Callable, reverse: bool,
             result_types: Sequence[dtype]):
        op = tile.scan([x.handle for x in inputs], axis, reverse, [self.get_type(t) for t in result_types])
        return self._fill_combiner(op, inputs, combine)

    def map_elementwise(self, inputs: Sequence[tensor], body: Callable, shape: Sequence[int],
                        pack: int = 1) -> list[tensor]:
        """A tile.map_elementwise over `inputs` (one shape) whose body is `body(scalars) ->
        scalars` (`pack` of each input, input by input; `pack` of each result, result by
        result). The result types are those `body` returns, so it is traced twice: once
        in a scratch region that is then erased, once in the op's own."""
        scalar_types = [x.dtype for x in inputs for _ in range(pack)]
        scratch = create_op("scf.execute_region", [], [], regions=1)
        with ir.InsertionPoint(scratch.regions[0].blocks.append()):
            probes = [tensor(self.constant(0, t), t) for t in scalar_types]
            returned_types = [r.dtype for r in body(probes)]
            create_op("scf.yield", [], [])
        scratch.erase()
        result_types = returned_types[::pack]
        op = tile.map_elementwise([x.handle for x in inputs],
                                  [self.get_type(block_type(t, shape)) for t in result_types], pack)
        block = op.regions[0].blocks.append(*[self.get_type(t) for t in scalar_types])
        with ir.InsertionPoint(block):
            results = body([tensor(arg, t) for arg, t in zip(block.arguments, scalar_types)])
            if [r.dtype for r in results] != returned_types:
                raise TilecSemanticError("the mapped function returned different types on a second call")
            create_op("gpu.yield", [], [r.handle for r in results])
        return [tensor(v, block_type(t, shape)) for v, t in zip(op.results, result_types)]

    def _fill_combiner(self, op: ir.Operation, inputs: Sequence[tensor], combine: Callable) -> list:
        """Builds the combiner region of a reduce or scan from the semantic layer's `combine`."""
        scalar_types = [x.dtype for x in inputs]
        arg_types = [self.get_type(t) for t in scalar_types] * 2
        block = op.regions[0].blocks.append(*arg_types)
        n = len(inputs)
        with ir.InsertionPoint(block):
            args = [tensor(block.arguments[i], scalar_types[i % n]) for i in range(2 * n)]
            results = combine(args[:n], args[n:])
            if len(results) != n:
                raise TilecSemanticError(f"the combine function returned {len(results)} values; expected {n}")
            for result, want in zip(results, scalar_types):
                if not isinstance(result, tensor) or result.type != want:
                    got = result.type if isinstance(result, tensor) else type(result).__name__
                    raise TilecSemanticError(f"the combine function must return {want} scalars, got {got}")
            create_op("gpu.yield", [], [r.handle for r in results])
        return list(op.results)

    def to_python(self, x):
        raise TilecSemanticError(
            "this value is only known when the kernel runs, but Python needs it now (as a bool, int or "
            "loop bound of the compiler); use a tl.constexpr, or tl.where / an `if` on a scalar")

    # ------------------------------------------------------------------ functions and control flow
    def create_function(self, name: str, arg_types: Sequence[ir.Type],
                        arg_attrs: Sequence[dict[str, ir.Attribute]]) -> tuple[ir.Operation, ir.Block]:
        with ir.InsertionPoint(self.module.body):
            fn = func.FuncOp(name, ir.FunctionType.get(list(arg_types), []))
        if any(arg_attrs):
            fn.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(attrs) for attrs in arg_attrs])
        entry = fn.add_entry_block()
        return fn.operation, entry

    def ret(self, values: Sequence[ir.Value] = ()) -> None:
        func.ReturnOp(list(values))

    def create_if(self, cond: ir.Value, result_types: Sequence[ir.Type]) -> ir.Operation:
        return scf.IfOp(cond, list(result_types), has_else=True).operation

    def scf_yield(self, values: Sequence[ir.Value]) -> None:
        scf.YieldOp(list(values))

    def create_for(self, lower: ir.Value, upper: ir.Value, step: ir.Value,
                   init_values: Sequence[ir.Value]) -> ir.Operation:
        return scf.ForOp(lower, upper, step, list(init_values)).operation

    def create_while(self, init_values: Sequence[ir.Value]) -> tuple[ir.Operation, ir.Block, ir.Block]:
        """An scf.while carrying `init_values`; returns it with its (empty) before and after blocks."""
        types = [v.type for v in init_values]
        op = scf.WhileOp(types, list(init_values)).operation
        before = op.regions[0].blocks.append(*types)
        after = op.regions[1].blocks.append(*types)
        return op, before, after

    def scf_condition(self, cond: ir.Value, values: Sequence[ir.Value]) -> None:
        scf.ConditionOp(cond, list(values))
