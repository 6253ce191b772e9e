"""The compile driver: an ordered table of named stages, ttir -> ttgir -> llir -> ptx -> cubin.

Each stage transforms the previous one's output, records its text in `asm`, and can be
dumped (TILEC_DUMP_IR, TILEC_DUMP_DIR). When a pass fails, the IR it was given is
written to a reproducer file together with the command that reruns that pass.

Only the last stages use the CUDA toolkit: ptx links libdevice when the kernel calls one
of its functions, cubin runs ptxas. When one of them is not installed, the stages before
are still made, and the kernel records why the others are missing (`Stages`).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from mlir import ir

from ..config import config
from ..dialects import make_context, tilegpu, verify_module
from ..dialects._mlir import walk_ops
from ..dialects.tile import WARP_SPECIALIZE_ATTR
from ..errors import InternalError, OutOfResources, ToolNotFoundError, UsageError
from ..frontend import KernelFunction, generate_ttir
from ..frontend.ir_builder import TENSORMAPS_ATTR, recipe_positions
from ..language import core as tl
from ..passes import PassFailure, run_pipeline
from ..specialization import ArgSpec
from ..target import Target
from ..passes.convert_tilegpu_to_llvm import SHARED_ATTR, TENSORMAP_ARG_ATTR
from . import intrinsics, toolkit
from .kernel_data import (TILEC_VERSION, CompiledKernel, CompileOptions, KernelMetadata,  # noqa: F401
                          Stages, dump_stage, signature_specs)

InternalCompilerError = InternalError  # a pass failed on IR the frontend accepted


# ----------------------------------------------------------------------------- stages


@dataclass
class _Compilation:
    fn: KernelFunction
    specs: list[ArgSpec]
    options: CompileOptions
    context: ir.Context
    module: ir.Module | None = None
    asm: Stages = field(default_factory=Stages)
    metadata: KernelMetadata | None = None


def _passes(state: _Compilation, stage: str, pipeline: str, print_ir: bool | None = None) -> None:
    """Runs `pipeline` on the module; a failing pass becomes an InternalError naming a reproducer."""
    try:
        run_pipeline(state.module, pipeline, print_ir=config.dump_ir if print_ir is None else print_ir,
                     kernel=state.fn.__name__)
    except PassFailure as failure:
        path = _write_reproducer(state, failure)
        raise InternalCompilerError(
            f"tilec internal error in pass {failure.pass_name} while compiling {state.fn.__name__} "
            f"({stage} stage): {type(failure.error).__name__}: {failure.error}\n"
            f"reproducer: {path}\nrerun with: python -m tilec.opt {path} -p '{failure.pipeline_item}'") from failure.error


def _write_reproducer(state: _Compilation, failure: PassFailure) -> str:
    directory = config.reproducer_dir or os.path.join(config.cache_dir, "reproducers")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{state.fn.__name__}-{failure.pass_name}.mlir")
    with open(path, "w") as f:
        f.write(f"// reproducer: python -m tilec.opt {path} -p '{failure.pipeline_item}'\n")
        for line in f"error: {type(failure.error).__name__}: {failure.error}".splitlines():
            f.write(f"// {line}\n")  # MLIR's errors span lines; the file must still parse
        f.write(failure.ir_before)
    return path


def make_ttir(state: _Compilation) -> None:
    state.module = generate_ttir(state.fn, state.specs, state.context, debug=state.options.debug,
                                 target=state.options.target, num_warps=state.options.num_warps)
    with state.context:
        _add_tensormap_params(state)
    _passes(state, "ttir", "canonicalize,cse,tile-combine,tile-narrow-float,"
                           f"tile-carry-pointer-bases{{num-warps={state.options.num_warps}}},tile-dce")
    state.asm["ttir"] = print_module(state.module)


def _kernel_function(state: _Compilation) -> ir.Operation:
    for op in state.module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == \
                state.fn.__name__:
            return op.operation
    raise InternalCompilerError(f"no function {state.fn.__name__} in the module")


def _drop_unused_tensormap_params(state: _Compilation) -> None:
    """Drops the tensor-map parameters no TMA copy reads any more (tile-choose-descriptor-
    copies gave all of theirs the pointer form), so launches do not encode their maps."""
    metadata = state.metadata
    if not metadata.tensormaps:
        return
    fn = _kernel_function(state)
    entry = fn.regions[0].blocks[0]
    first = len(entry.arguments) - len(metadata.tensormaps)
    used = [not _unused(entry.arguments[first + j]) for j in range(len(metadata.tensormaps))]
    if all(used):
        return
    for j in reversed(range(len(used))):
        if not used[j]:
            entry.erase_argument(first + j)
    function_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    inputs = list(function_type.inputs)
    kept = inputs[:first] + [t for t, keep in zip(inputs[first:], used) if keep]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(kept, list(function_type.results)))
    if "arg_attrs" in fn.attributes:
        attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"]))
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs[:first] + [a for a, keep in zip(attrs[first:], used) if keep])
    own = len(metadata.params) - len(used)
    metadata.params = metadata.params[:own] + [p for p, keep in zip(metadata.params[own:], used) if keep]
    metadata.tensormaps = [r for r, keep in zip(metadata.tensormaps, used) if keep]
    metadata.param_indices = metadata.param_indices[:own] + [len(state.specs) + j
                                                             for j in range(len(metadata.tensormaps))]


def _pass_tensormaps_by_value(state: _Compilation) -> None:
    """On sm_90, every tensor-map parameter a TMA copy reads (a host descriptor's
    `<name>.tensormap` leaf, or one appended for a descriptor made in the kernel) is
    marked TENSORMAP_ARG_ATTR, which convert-tilegpu-to-llvm makes a by-value,
    grid-constant parameter, and becomes "tensormap" in the signature (the launcher's
    code M: 128 bytes; runtime/tma.py). Unused ones stay pointers the launcher passes 0."""
    if state.options.target.capability < 90:
        return
    fn = _kernel_function(state)
    entry = fn.regions[0].blocks[0]
    params = state.metadata.params
    names = {name for name, _ in params}
    appended = len(params) - len(state.metadata.tensormaps)  # descriptors made in the kernel: the last ones
    maps = [i for i, (name, _) in enumerate(params)  # a host descriptor's leaves: `d.base`, ..., `d.tensormap`
            if i >= appended or (name.endswith(".tensormap") and name[:-len("tensormap")] + "base" in names)]
    maps = [i for i in maps if not _unused(entry.arguments[i])]
    if not maps:
        return
    attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else \
        [ir.DictAttr.get({}) for _ in entry.arguments]
    for i in maps:
        entries = {attrs[i][j].name: attrs[i][j].attr for j in range(len(attrs[i]))}
        entries[TENSORMAP_ARG_ATTR] = ir.UnitAttr.get()
        attrs[i] = ir.DictAttr.get(entries)
        params[i] = (params[i][0], "tensormap")
    fn.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)


def _unused(value: ir.Value) -> bool:
    return not any(True for _ in value.uses)


def _add_tensormap_params(state: _Compilation) -> None:
    """The kernel parameters the frontend appended for tensor maps the launcher encodes
    (descriptors made in the kernel: IRBuilder.tensormap_argument): each becomes a
    parameter `<base>.tensormap` whose value the launcher appends after the call's own
    (param_indices past them), and a recipe in `metadata.tensormaps` whose kernel
    parameter positions become positions among the call's values."""
    metadata = state.metadata
    for op in state.module.body.operations:
        op = op.operation
        if op.name != "func.func" or TENSORMAPS_ATTR not in op.attributes:
            continue
        own = list(metadata.param_indices)
        names = [name for name, _ in metadata.params]

        def among_values(entries: list) -> list:
            return [recipe_positions(entry, own) for entry in entries]
        for recipe in ir.ArrayAttr(op.attributes[TENSORMAPS_ATTR]):
            recipe = json.loads(ir.StringAttr(recipe).value)
            base = names[recipe["base"]]
            metadata.tensormaps.append({**recipe, "base": own[recipe["base"]], "shape": among_values(recipe["shape"]),
                                        "strides": among_values(recipe["strides"]), "name": base})
            # One map per block shape and padding: a second one of the same base is `.tensormap.1`, ...
            taken = sum(1 for name, _ in metadata.params if name.startswith(f"{base}.tensormap"))
            metadata.params.append((f"{base}.tensormap" + (f".{taken}" if taken else ""), "*i8"))
            metadata.param_indices.append(len(state.specs) + len(metadata.tensormaps) - 1)
        del op.attributes[TENSORMAPS_ATTR]


# A warp-specialised loop's consumer warpgroup keeps its dot's accumulator in registers:
# past this many a thread, the tile is split over two consumer warpgroups instead.
_CONSUMER_ACCUMULATOR_REGS = 128


def _warp_specialized_warps(state: _Compilation) -> int:
    """The consumer warps of a kernel whose loop is marked `warp_specialize=True` (and
    specialised: TILEC_WARP_SPECIALIZE=1, sm_90, wgmma): num_warps, but eight where four
    would hold more than _CONSUMER_ACCUMULATOR_REGS accumulator registers a thread (a
    128x256 fp32 tile: 256, which spilled at 0.15x Triton on an H200), the tile's rows
    then split over two warpgroups as Triton splits them (its consumers are num_warps
    each). The metadata's num_warps says what runs."""
    o = state.options
    if not (config.warp_specialize and config.wgmma and o.target.capability == 90) or o.num_warps != 4:
        return o.num_warps
    for op in walk_ops(_kernel_function(state)):
        if op.name != "scf.for" or WARP_SPECIALIZE_ATTR not in op.attributes:
            continue
        for dot in walk_ops(op):
            if dot.name != "tile.dot":
                continue
            ty = ir.RankedTensorType(dot.results[0].type)
            rows, columns = ty.shape[-2:]
            bits = getattr(ty.element_type, "width", 32)
            if rows >= 128 and rows * columns * bits // 32 // (32 * o.num_warps) > _CONSUMER_ACCUMULATOR_REGS:
                return 2 * o.num_warps
    return o.num_warps


def make_ttgir(state: _Compilation) -> None:
    warps = _warp_specialized_warps(state)
    if warps != state.options.num_warps:
        state.options = replace(state.options, num_warps=warps)
        state.metadata.num_warps = warps
    o = state.options
    _passes(state, "ttgir",
            f"{'tile-flatten-loops,' if config.flatten_loops else ''}"
            f"tile-choose-descriptor-copies{{tma-loops={int(config.wgmma and o.target.capability == 90)}}},"
            f"convert-tile-to-tilegpu{{num-warps={o.num_warps} target={o.target.name}}},tilegpu-coalesce,"
            f"tilegpu-remove-layout-conversions,tilegpu-accelerate-matmul{{wgmma={int(config.wgmma)}}},"
            "tilegpu-remove-layout-conversions,"
            f"tilegpu-pipeline{{num-stages={o.num_stages} "
            f"warp-specialize={int(config.warp_specialize and config.wgmma and o.target.capability == 90)} "
            f"overlap-prologue={int(config.overlap_prologue)}}},"
            "tilegpu-optimize-dot-operands,tile-dce,canonicalize,cse")
    with state.context:
        _drop_unused_tensormap_params(state)
        _pass_tensormaps_by_value(state)
    verify_module(state.module, "ttgir")
    state.asm["ttgir"] = print_module(state.module)


# Upstream passes that finish the lowering: what convert-tilegpu-to-llvm leaves in scf,
# arith, math and cf becomes LLVM dialect.
_LLVM_CLEANUP = ("gpu.module(convert-scf-to-cf,convert-arith-to-llvm,convert-math-to-llvm,convert-nvvm-to-llvm),"
                 "convert-cf-to-llvm,reconcile-unrealized-casts,canonicalize,cse")


def make_llir(state: _Compilation) -> None:
    _passes(state, "llir", "tilegpu-allocate-shared-memory")
    with state.context:  # the buffers may not fit: say so before lowering
        _check_shared_memory(state, ir.IntegerAttr(state.module.operation.attributes[SHARED_ATTR]).value)
    _passes(state, "llir", "tilegpu-insert-barriers,"
                           f"convert-tilegpu-to-llvm{{fp-fusion={int(state.options.enable_fp_fusion)}"
                           f"{f' maxnreg={state.options.maxnreg}' if state.options.maxnreg else ''}}},{_LLVM_CLEANUP}"
                           f"{',tilegpu-order-pure-ops' if config.order_pure_ops else ''}")
    with state.context:
        state.metadata.shared = ir.IntegerAttr(state.module.operation.attributes[SHARED_ATTR]).value
        state.metadata.producer_warps = tilegpu.producer_warps_of(state.module.operation)
        _check_shared_memory(state, state.metadata.shared)
        state.asm["llir"] = _llvm_ir_text(_gpu_module(state.module))


def _check_shared_memory(state: _Compilation, required: int) -> None:
    """A kernel whose buffers (pipelining rings, scratch) exceed what a block of the
    target may use fails here, when compiled, rather than when launched."""
    available = state.options.target.max_shared_bytes
    if required > available:
        raise OutOfResources("shared memory", required, available, state.fn.__name__)


def _llvm_ir_text(gpu_module: ir.Operation) -> str:
    """The kernel as textual LLVM IR (before LLVM's own optimisation and libdevice linking)."""
    from mlir.dialects import llvm
    module = ir.Module.create(loc=gpu_module.location)
    module.operation.attributes["llvm.target_triple"] = ir.StringAttr.get("nvptx64-nvidia-cuda")
    with ir.InsertionPoint(module.body):
        for op in gpu_module.regions[0].blocks[0].operations:
            op.operation.clone()
    return str(llvm.translate_module_to_llvmir(module.operation))


# LLVM's optimisation level for the kernel's IR. The lowering already emits what LLVM's
# heavier passes would find (vector loads and stores, hoisted thread indices, folded
# constants), and ptxas schedules, unrolls and allocates registers itself: measured on
# the benchmark kernels (matmul, attention, softmax, scans, libdevice math), -O1 gives
# the same PTX as -O3 up to register numbering, block order and an occasional
# reassociated address computation, in 25% less LLVM time (docs/architecture.md).
_LLVM_OPT_LEVEL = 1


def _set_target(state: _Compilation) -> None:
    """The `#nvvm.target` of the gpu.module: chip, PTX ISA version and, when the kernel
    calls a libdevice function, libdevice to link (so only such kernels need it)."""
    gpu_module = _gpu_module(state.module)
    uses_libdevice = any(op.operation.name == "llvm.func" and not len(op.operation.regions[0].blocks)
                         and ir.StringAttr(op.operation.attributes["sym_name"]).value.startswith("__nv_")
                         for op in gpu_module.regions[0].blocks[0].operations)
    libdevice = state.options.libdevice or toolkit.libdevice_path() if uses_libdevice else ""
    link = f', link = ["{libdevice}"]' if uses_libdevice else ""
    target = state.options.target
    attribute = ir.Attribute.parse(f'#nvvm.target<O = {_LLVM_OPT_LEVEL}, chip = "{target.chip}", features = "{target.features}"{link}>')
    gpu_module.attributes["targets"] = ir.ArrayAttr.get([attribute])


def _gpu_module(module: ir.Module) -> ir.Operation:
    for op in module.body.operations:
        if op.operation.name == "gpu.module":
            return op.operation
    raise InternalCompilerError("no gpu.module after lowering")


def _binary_object(module_op: ir.Operation) -> bytes:
    from mlir.dialects.gpu import ObjectAttr
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "gpu.binary":
            return ObjectAttr(ir.ArrayAttr(op.operation.attributes["objects"])[0]).object
    raise InternalCompilerError("gpu-module-to-binary produced no gpu.binary")


def make_ptx(state: _Compilation) -> None:
    # LLVM ends the process on an intrinsic the chip lacks: a pass's mistake is reported here instead.
    problem = intrinsics.unavailable_intrinsic(state.asm["llir"], state.options.target)
    if problem is not None:
        raise InternalCompilerError(f"tilec internal error while compiling {state.fn.__name__} (ptx stage): "
                                    f"{problem}; a pass chose an instruction for the wrong GPU")
    with state.context:
        _set_target(state)
    # Not printed under TILEC_DUMP_IR (as before it ran through run_pipeline): the result
    # is the PTX, kept in asm["ptx"].
    _passes(state, "ptx", "gpu-module-to-binary{format=isa}", print_ir=False)
    with state.context:
        state.asm["ptx"] = _binary_object(state.module.operation).decode()


def make_cubin(state: _Compilation) -> None:
    result = toolkit.assemble(state.asm["ptx"], state.options.target.chip, state.fn.__name__)
    state.asm["cubin"] = result.cubin
    state.metadata.n_regs = result.n_regs
    state.metadata.n_spills = result.n_spills


STAGES: list[tuple[str, Callable[[_Compilation], None]]] = [
    ("ttir", make_ttir),
    ("ttgir", make_ttgir),
    ("llir", make_llir),
    ("ptx", make_ptx),
    ("cubin", make_cubin),
]


def print_module(module: ir.Module) -> str:
    """The module's text with layout encodings given short aliases (#blocked0 = ...,
    #mma0, #dot_op0, #shared0, numbered per kind in order of first use).

    MLIR parses alias definitions back, so the text stays valid input for tilec.opt.
    """
    text = str(module)
    aliases: dict[str, str] = {}
    pieces, at = [], 0
    for start, end in _outermost_encodings(text):
        enc = text[start:end]
        if enc not in aliases:
            kind = enc[len("#tilegpu."):enc.index("<")]
            aliases[enc] = f"#{kind}{sum(1 for a in aliases.values() if a.rstrip('0123456789') == '#' + kind)}"
        pieces += [text[at:start], aliases[enc]]
        at = end
    if not aliases:
        return text
    header = "".join(f"{name} = {enc}\n" for enc, name in aliases.items())
    return header + "".join(pieces) + text[at:]


def _outermost_encodings(text: str):
    """(start, end) of each `#tilegpu.kind<...>` attribute not nested in another one."""
    at = text.find("#tilegpu.")
    while at >= 0:
        depth, i = 0, text.index("<", at)
        while True:
            if text[i] == "<":
                depth += 1
            elif text[i] == ">":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        yield at, i + 1
        at = text.find("#tilegpu.", i + 1)


def compile_specialized(fn: KernelFunction, specs: list[ArgSpec], options: CompileOptions,
                        stop_after: str | None = None) -> CompiledKernel:
    """Runs every stage for one specialisation of `fn`, or the stages up to `stop_after`
    (a name of STAGES: the result then lacks the later stages, and cannot be launched)."""
    names = [name for name, _ in STAGES]
    if stop_after is not None and stop_after not in names:
        raise ValueError(f"no stage {stop_after!r}; the stages are {', '.join(names)}")
    runtime = [(i, s) for i, s in enumerate(specs) if not s.is_constant]
    metadata = KernelMetadata(
        name=fn.__name__, target=options.target.name, num_warps=options.num_warps, num_stages=options.num_stages,
        params=[(s.name, tl.signature_name(s.ty)) for _, s in runtime], param_indices=[i for i, _ in runtime])
    state = _Compilation(fn, specs, options, make_context(), metadata=metadata)
    for index, (name, stage) in enumerate(STAGES):
        try:
            stage(state)
        except ToolNotFoundError as error:  # this stage and the ones after it (that were asked for) need the tool
            last = names.index(stop_after) if stop_after is not None else len(names) - 1
            for later in names[index:last + 1]:
                state.asm.missing[later] = f"{fn.__name__} has no {later}, because {error}"
            break
        if config.dump_dir:
            _dump(state, name)
        if name == stop_after:
            break
    return CompiledKernel(metadata, state.asm)


def _dump(state: _Compilation, stage: str) -> None:
    dump_stage(config.dump_dir, state.fn.__name__, state.specs, state.options.cache_key(), stage,
               state.asm.get(stage))


def compile_kernel(fn, *, signature: dict[str, str], constexprs: dict[str, Any], target: str | Target | None,
                   num_warps: int = 4, num_stages: int = 3, debug: bool | None = None,
                   enable_fp_fusion: bool = True, stop_after: str | None = None) -> CompiledKernel:
    """`tilec.compile`: compile without a GPU from a signature and constexpr values.

    signature maps parameter names to types ("*fp32", "i32", ...; append ":16" to
    declare a pointer 16-byte aligned or an integer divisible by 16). `stop_after` ends
    the compilation after that stage (`python -m tilec compile --stage ttgir` needs no
    CUDA toolkit).
    """
    if not isinstance(fn, KernelFunction):
        raise UsageError(f"tilec.compile expects a @tilec.jit function, got {fn!r}")
    specs = signature_specs(fn, signature, constexprs)
    if debug is None:  # as for launches: the @jit flag, else TILEC_DEBUG
        debug = fn.debug if fn.debug is not None else config.debug
    if not isinstance(target, Target):
        target = Target.parse(target or "sm_90")
    options = CompileOptions(num_warps=num_warps, num_stages=num_stages, target=target, debug=bool(debug),
                             enable_fp_fusion=bool(enable_fp_fusion))
    return compile_specialized(fn, specs, options, stop_after)
