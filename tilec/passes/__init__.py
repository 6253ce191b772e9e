"""tilec's passes and the pipeline machinery.

Each pass lives in its own module named after its flag (`coalesce.py` registers
`tilegpu-coalesce`) and registers itself with `@register_pass`. A pipeline is a list of
pass names with options, mixing tilec's Python passes and upstream MLIR pass names
(which may be nested under an op, `gpu.module(convert-scf-to-cf)`); it runs in one
`PassManager`, so IR printing and timing come from MLIR itself, and a failing pass, tilec's
or upstream, is reported as a PassFailure carrying the IR it was given.

    run_pipeline(module, "canonicalize,convert-tile-to-tilegpu{num-warps=8},tilegpu-coalesce")
"""
from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Union

from mlir import ir, passmanager

PassFn = Callable[..., None]


@dataclass(frozen=True)
class PassInfo:
    name: str
    run: PassFn
    description: str
    options: dict[str, Any] = field(default_factory=dict)  # option name -> default


PASSES: dict[str, PassInfo] = {}


def register_pass(name: str, description: str = "", **options: Any) -> Callable[[PassFn], PassFn]:
    """Registers `fn(module_op, **options)` as pass `name` with option defaults."""

    def register(fn: PassFn) -> PassFn:
        if name in PASSES:
            raise ValueError(f"pass {name} registered twice")
        PASSES[name] = PassInfo(name, fn, description or (fn.__doc__ or "").strip().split("\n")[0], options)
        return fn

    return register


def load_all_passes() -> None:
    """Imports every pass module in this package (each registers itself)."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


class PassFailure(Exception):
    """A pass raised: carries the pass name and the IR it was given."""

    def __init__(self, pass_name: str, error: BaseException, ir_before: str, pipeline_item: str = ""):
        self.pass_name, self.error, self.ir_before = pass_name, error, ir_before
        self.pipeline_item = pipeline_item or pass_name  # the pass with its options, as tilec.opt takes it
        super().__init__(f"pass {pass_name} failed: {type(error).__name__}: {error}")


@dataclass(frozen=True)
class Nested:
    """`anchor(a,b)` in a pipeline: passes `a,b` run on every `anchor` op (e.g. `gpu.module`)
    directly inside the module, as in MLIR's textual pipelines. Upstream passes only: a
    tilec pass always runs on the whole module."""
    anchor: str
    items: tuple[PipelineItem, ...]


# A pass with its options ('canonicalize', {}), or a nested pipeline.
PipelineItem = Union[tuple[str, dict[str, Any]], Nested]

_PASS_NAME = re.compile(r"\s*([\w.-]+)\s*(\{[^}]*\})?\s*")  # a pass or an anchor, with its {options}
_SPACE = re.compile(r"\s*")


def parse_pipeline(text: str) -> list[PipelineItem]:
    """'a,b{x=1 y=2},gpu.module(c,d)' ->
    [('a', {}), ('b', {'x': '1', 'y': '2'}), Nested('gpu.module', (('c', {}), ('d', {})))].

    A pipeline wrapped whole in `builtin.module(...)`, as MLIR spells it, is the pipeline
    inside: run_pipeline's pass manager runs on the module already."""
    if not text.strip():
        return []
    items, at = _parse_items(text, 0)
    if at != len(text):
        raise ValueError(f"cannot parse pass pipeline at: {text[at:]!r}")
    if len(items) == 1 and isinstance(items[0], Nested) and items[0].anchor == "builtin.module":
        return list(items[0].items)
    return items


def _parse_items(text: str, at: int) -> tuple[list[PipelineItem], int]:
    """The comma-separated items of `text` from `at` up to an unmatched ')' or the end;
    returns them and the position after them."""
    items: list[PipelineItem] = []
    while True:
        match = _PASS_NAME.match(text, at)
        if not match:
            raise ValueError(f"cannot parse pass pipeline at: {text[at:]!r}")
        name, options, at = match.group(1), match.group(2), match.end()
        if text.startswith("(", at) and not options:
            nested, at = _parse_items(text, at + 1)
            if not text.startswith(")", at):
                raise ValueError(f"missing ')' for {name}( in pass pipeline {text!r}")
            at = _SPACE.match(text, at + 1).end()
            items.append(Nested(name, tuple(nested)))
        else:
            items.append((name, _parse_options(options or "{}")))
        if not text.startswith(",", at):
            return items, at
        at += 1
        if not text[at:].strip():  # a trailing comma
            return items, len(text)


def _parse_options(text: str) -> dict[str, str]:
    """'{x=1 y=2}' -> {'x': '1', 'y': '2'}."""
    options = {}
    for part in text[1:-1].split():
        key, _, value = part.partition("=")
        options[key] = value
    return options


def pipeline_text(items: list[PipelineItem] | tuple[PipelineItem, ...]) -> str:
    """The textual form of `items`, as parse_pipeline and `python -m tilec.opt -p` take it."""
    parts = []
    for item in items:
        if isinstance(item, Nested):
            parts.append(f"{item.anchor}({pipeline_text(item.items)})")
        else:
            name, options = item
            parts.append(name + ("{" + " ".join(f"{k}={v}" for k, v in options.items()) + "}" if options else ""))
    return ",".join(parts)


def _convert_option(value: str, default: Any) -> Any:
    if isinstance(default, bool):
        return value.lower() in ("1", "true", "yes")
    if isinstance(default, int):
        return int(value)
    return value


@dataclass
class _Progress:
    """What run_pipeline learns while its PassManager runs, to explain a failure: a tilec
    pass that raised, and the upstream passes running since the last tilec pass (`upstream`)
    with the IR they were given (`upstream_input`)."""
    failures: list[PassFailure] = field(default_factory=list)
    upstream: list[PipelineItem] = field(default_factory=list)
    upstream_input: ir.Operation | None = None  # a copy, printed only if they fail


def _snapshot(op: ir.Operation) -> ir.Operation:
    """A copy of the module as a pass receives it, kept in case the pass fails. Copying
    is several times cheaper than printing (with locations) before every pass; the text is
    made only for a failure (`_text`)."""
    return op.clone()


def _text(snapshot: ir.Operation | None) -> str:
    return "" if snapshot is None else snapshot.get_asm(enable_debug_info=True)


def run_pipeline(module: ir.Module, pipeline: str | list[PipelineItem], *,
                 print_ir: bool = False, verify_each: bool = True, kernel: str | None = None) -> None:
    """Runs the passes of `pipeline` on `module` in one PassManager.

    A failing pass raises PassFailure with the IR it was given: a tilec pass's is kept as
    it starts; for upstream passes the IR before each run of them is kept (printed by the
    tilec pass before, or here at the start), and on failure the run is replayed pass by
    pass on that copy to name the one that fails.

    `print_ir` prints the module to stderr after every pass, under a header naming the
    pass and, when given, the `kernel` being compiled (see `_add_printer`)."""
    load_all_passes()
    items = parse_pipeline(pipeline) if isinstance(pipeline, str) else pipeline
    groups = _upstream_groups(items)
    progress = _Progress()
    with module.context:
        pm = passmanager.PassManager("builtin.module")
        for index, item in enumerate(items):
            info = None if isinstance(item, Nested) else PASSES.get(item[0])
            if info is None:
                _check_upstream(item)
                # Printing needs a stop after each pass: a nested run is added pass by pass.
                steps = _single_passes(item) if print_ir else [(None, pipeline_text([item]))]
                for name, text in steps:
                    try:
                        pm.add(text)
                    except ValueError:
                        shown = text if isinstance(item, Nested) else item[0]
                        raise ValueError(f"unknown pass {shown!r}; tilec passes: {sorted(PASSES)}") from None
                    if print_ir:
                        _add_printer(pm, name, kernel)
                continue
            name, options = item
            unknown = set(options) - set(info.options)
            if unknown:
                raise ValueError(f"pass {name} has no option(s) {sorted(unknown)}; it takes {sorted(info.options)}")
            values = {k.replace("-", "_"): _convert_option(v, info.options[k]) if isinstance(v, str) else v
                      for k, v in options.items()}
            defaults = {k.replace("-", "_"): v for k, v in info.options.items()}
            pm.add(_wrap(info, {**defaults, **values}, progress, pipeline_text([item]), groups.get(index + 1, [])),
                   name=name, argument=name, description=info.description)
            if print_ir:
                _add_printer(pm, name, kernel)
        pm.enable_verifier(verify_each)
        if 0 in groups:
            progress.upstream, progress.upstream_input = groups[0], _snapshot(module.operation)
        try:
            pm.run(module.operation)
        except ir.MLIRError as error:
            if progress.failures:
                raise progress.failures[0] from None
            if progress.upstream:
                failure = _replay(module.context, progress, error, verify_each)
                if failure is not None:
                    raise failure from None
            raise
        if progress.failures:
            raise progress.failures[0]


def ir_dump_header(pass_name: str, kernel: str | None = None) -> str:
    """The line printed above the IR after a pass (TILEC_DUMP_IR, tilec.opt --print-ir-after-all)."""
    where = f" (kernel {kernel})" if kernel else ""
    return f"// -----// IR dump after {pass_name}{where} //----- //"


def _add_printer(pm: passmanager.PassManager, pass_name: str, kernel: str | None) -> None:
    """Adds a pass that prints the module after `pass_name`. MLIR's own IR printing names
    only the pass (`IR Dump After CSE (cse)`), and several kernels compiled in one process
    would be told apart by nothing; this header says which kernel too, and goes through
    Python's sys.stderr (so it can be captured like any other output)."""

    def print_module(op: ir.Operation, pass_) -> None:
        print(ir_dump_header(pass_name, kernel), file=sys.stderr)
        print(op.get_asm(), file=sys.stderr, flush=True)

    pm.add(print_module, name=f"print-ir-after-{pass_name}", argument=f"print-ir-after-{pass_name}",
           description=f"prints the IR after {pass_name}")


def _check_upstream(item: PipelineItem) -> None:
    """tilec passes run on the whole module: refuse one nested under an anchor."""
    if isinstance(item, Nested):
        for inner in item.items:
            if not isinstance(inner, Nested) and inner[0] in PASSES:
                raise ValueError(f"tilec pass {inner[0]} cannot be nested in {item.anchor}(...): it runs on the module")
            _check_upstream(inner)


def _upstream_groups(items: list[PipelineItem]) -> dict[int, list[PipelineItem]]:
    """Each run of consecutive upstream items, by the index of its first item."""
    groups: dict[int, list[PipelineItem]] = {}
    start = None
    for index, item in enumerate(items):
        upstream = isinstance(item, Nested) or item[0] not in PASSES
        if upstream and start is None:
            start = index
            groups[start] = []
        if upstream:
            groups[start].append(item)
        else:
            start = None
    return groups


def _replay(context: ir.Context, progress: _Progress, error: ir.MLIRError, verify_each: bool) -> PassFailure | None:
    """Reruns the upstream passes that were running, one at a time, on a copy of their
    input, and returns the failure of the first one that fails. None when that input does
    not even parse (the tilec pass before them left invalid IR: MLIR's verifier error
    stands) or when no single pass fails alone."""
    steps = [(name, step) for item in progress.upstream for name, step in _single_passes(item)]
    try:
        module = ir.Module.parse(_text(progress.upstream_input), context)
    except ir.MLIRError:
        return None
    for name, step in steps:
        before = module.operation.get_asm(enable_debug_info=True)
        with context:
            pm = passmanager.PassManager("builtin.module")
            pm.add(step)
            pm.enable_verifier(verify_each)
            try:
                pm.run(module.operation)
            except ir.MLIRError as step_error:
                return PassFailure(name, step_error, before, step)
    return None


def _single_passes(item: PipelineItem) -> list[tuple[str, str]]:
    """(pass name, pipeline text) of each pass of `item`: 'gpu.module(a,b)' gives
    ('a', 'gpu.module(a)') and ('b', 'gpu.module(b)')."""
    if not isinstance(item, Nested):
        return [(item[0], pipeline_text([item]))]
    return [(name, f"{item.anchor}({text})") for inner in item.items for name, text in _single_passes(inner)]


def _wrap(info: PassInfo, options: dict[str, Any], progress: _Progress, item: str, upstream_next: list[PipelineItem]):
    def run(op: ir.Operation, pass_) -> None:
        progress.upstream = []  # the upstream passes before this one succeeded
        before = None
        try:
            before = _snapshot(op)
            with op.context, op.location:
                info.run(op, **options)
        except Exception as exc:  # surfaced by run_pipeline with the IR it failed on
            progress.failures.append(PassFailure(info.name, exc, _text(before), item))
            pass_.signal_pass_failure()
            return
        if upstream_next:  # the input of the upstream passes that follow, should they fail
            progress.upstream, progress.upstream_input = upstream_next, _snapshot(op)

    run.__name__ = info.name
    return run
