"""tilec's passes and the pipeline machinery.

Each pass lives in its own module named after its flag (`coalesce.py` registers
`tilegpu-coalesce`) and registers itself with `@register_pass`. A pipeline is a list of
pass names with options, mixing tilec's Python passes and upstream MLIR pass names; it
runs in one `PassManager`, so IR printing and timing come from MLIR itself.

    run_pipeline(module, "canonicalize,convert-tile-to-tilegpu{num-warps=8},tilegpu-coalesce")
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Any, Callable

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


_PIPELINE_ITEM = re.compile(r"\s*([\w.-]+)(\{[^}]*\})?\s*(?:,|$)")


def parse_pipeline(text: str) -> list[tuple[str, dict[str, str]]]:
    """'a,b{x=1 y=2}' -> [('a', {}), ('b', {'x': '1', 'y': '2'})]."""
    items, at = [], 0
    text = text.strip()
    while at < len(text):
        match = _PIPELINE_ITEM.match(text, at)
        if not match:
            raise ValueError(f"cannot parse pass pipeline at: {text[at:]!r}")
        name, opts = match.group(1), match.group(2)
        options = {}
        if opts:
            for part in opts[1:-1].split():
                key, _, value = part.partition("=")
                options[key] = value
        items.append((name, options))
        at = match.end()
    return items


def _convert_option(value: str, default: Any) -> Any:
    if isinstance(default, bool):
        return value.lower() in ("1", "true", "yes")
    if isinstance(default, int):
        return int(value)
    return value


def run_pipeline(module: ir.Module, pipeline: str | list[tuple[str, dict[str, Any]]], *,
                 print_ir: bool = False, verify_each: bool = True) -> None:
    """Runs the passes of `pipeline` on `module` in one PassManager."""
    load_all_passes()
    items = parse_pipeline(pipeline) if isinstance(pipeline, str) else pipeline
    failure: list[PassFailure] = []
    with module.context:
        pm = passmanager.PassManager("builtin.module")
        for name, options in items:
            info = PASSES.get(name)
            if info is None:
                text = name + ("{" + " ".join(f"{k}={v}" for k, v in options.items()) + "}" if options else "")
                try:
                    pm.add(text)
                except ValueError:
                    raise ValueError(f"unknown pass {name!r}; tilec passes: {sorted(PASSES)}") from None
                continue
            unknown = set(options) - set(info.options)
            if unknown:
                raise ValueError(f"pass {name} has no option(s) {sorted(unknown)}; it takes {sorted(info.options)}")
            values = {k.replace("-", "_"): _convert_option(v, info.options[k]) if isinstance(v, str) else v
                      for k, v in options.items()}
            defaults = {k.replace("-", "_"): v for k, v in info.options.items()}
            item = name + ("{" + " ".join(f"{k}={v}" for k, v in options.items()) + "}" if options else "")
            pm.add(_wrap(info, {**defaults, **values}, failure, item), name=name, argument=name,
                   description=info.description)
        pm.enable_verifier(verify_each)
        if print_ir:
            pm.enable_ir_printing()
        try:
            pm.run(module.operation)
        except ir.MLIRError:
            if failure:
                raise failure[0] from None
            raise
        if failure:
            raise failure[0]


def _wrap(info: PassInfo, options: dict[str, Any], failure: list[PassFailure], item: str):
    def run(op: ir.Operation, pass_) -> None:
        before = None
        try:
            before = op.get_asm(enable_debug_info=True)
            with op.context, op.location:
                info.run(op, **options)
        except Exception as exc:  # surfaced by run_pipeline with the IR it failed on
            failure.append(PassFailure(info.name, exc, before or "", item))
            pass_.signal_pass_failure()

    run.__name__ = info.name
    return run
