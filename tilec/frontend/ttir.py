"""`generate_ttir`: a kernel and the specialisation of its arguments -> a verified ttir module."""
from __future__ import annotations

import ast
from typing import Any, Sequence

from mlir import ir

from ..dialects import IRVerificationError, make_context, verify_module
from ..errors import CompilationError, InternalError
from ..dialects._mlir import i32_attr
from ..language import core as tl
from ..language.core import TilecSemanticError, activate_semantic, constexpr, tensor
from ..language.semantic import Semantic
from ..specialization import ArgSpec, ArgumentLayout
from ..target import Target
from .code_generator import CodeGenerator
from .ir_builder import IRBuilder
from .kernel_function import KernelFunction


def generate_ttir(fn: KernelFunction, args: Sequence[ArgSpec], context: ir.Context | None = None, *,
                  debug: bool = False, target: Target | None = None, num_warps: int = 4,
                  fnuz_fp8: bool = False) -> ir.Module:
    """Builds and verifies the ttir module of kernel `fn` for one specialisation (`debug`,
    `target` and `num_warps` as in `Semantic`; `fnuz_fp8` as in `IRBuilder`)."""
    context = context or make_context()
    with context, ir.Location.file(fn.filename, fn.first_line, 1):
        module = ir.Module.create()
        builder = IRBuilder(context, module, fnuz_fp8=fnuz_fp8)
        semantic = Semantic(builder, debug=debug, target=target, num_warps=num_warps)
        args = [_with_constness(fn, a) for a in args]
        runtime_args = [a for a in args if not a.is_constant]
        arg_types = [_parameter_type(fn, builder, a) for a in runtime_args]
        arg_attrs = [{"tile.divisibility": i32_attr(a.divisibility)} if a.divisibility > 1 else {}
                     for a in runtime_args]
        func_op, entry = builder.create_function(fn.__name__, arg_types, arg_attrs)
        builder.kernel_entry = entry
        scope: dict[str, Any] = {}
        block_args = iter(entry.arguments)
        for arg in args:
            scope[arg.name] = constexpr(arg.constant) if arg.is_constant else tensor(next(block_args), arg.ty)
        for arg in args:  # tuples and descriptors, from their leaves (specialization.ArgumentLayout)
            if arg.is_constant and isinstance(arg.constant, ArgumentLayout):
                scope[arg.name] = arg.constant.rebuild(scope, tl.tuple_value)
        generator = CodeGenerator(fn, builder, semantic, scope, is_kernel=True)
        with activate_semantic(semantic), tl.activate_caller(generator.call_from_language), ir.InsertionPoint(entry):
            generator.visit(fn.parse())
            builder.ret()
        func_op.attributes["sym_visibility"] = ir.StringAttr.get("public")
    try:
        verify_module(module, "the frontend")
    except IRVerificationError as exc:
        raise InternalError(f"tilec internal error: the IR built for kernel {fn.__name__} is invalid: {exc}") from None
    return module


def _with_constness(fn: KernelFunction, arg: ArgSpec) -> ArgSpec:
    """A pointer parameter annotated `tl.const` points to constant data."""
    if arg.name in fn.const_params and arg.ty is not None and arg.ty.is_ptr():
        import dataclasses
        return dataclasses.replace(arg, ty=tl.pointer_type(arg.ty.element_ty, const=True))
    return arg


def _parameter_type(fn: KernelFunction, builder: IRBuilder, arg: ArgSpec) -> ir.Type:
    """The MLIR type of a runtime parameter; a type the target cannot hold (an fnuz fp8
    pointer) is a CompilationError at the parameter in the `def` line."""
    try:
        return builder.get_type(arg.ty)
    except TilecSemanticError as exc:
        node: ast.AST = fn.parse()
        root = arg.name.split(".")[0].split("[")[0]  # a tuple's leaf: the tuple parameter
        parameters = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        node = next((p for p in parameters if p.arg == root), node)
        error = CompilationError(f"parameter {arg.name}: {exc}", fn.location(node))
        error.original = exc
        raise error from None
