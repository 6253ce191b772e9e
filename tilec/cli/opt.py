"""`tilec opt`: run any registered pass on an .mlir file and print the result.

    tilec opt input.mlir -p 'convert-tile-to-tilegpu{num-warps=4},tilegpu-coalesce'
    tilec opt input.mlir -p tilegpu-coalesce --print-ir-after-all
    tilec opt --list-passes

The tile and tilegpu dialects are loaded; upstream MLIR pass names work too. Used by
the FileCheck tests in tests/ir and to rerun a reproducer written by a failing compile.
`python -m tilec.opt` is the same command (`tilec.opt.main`).
"""
from __future__ import annotations

import argparse
import sys

SPLIT_MARKER = "// -----"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", nargs="?", help=".mlir file ('-' for stdin)")
    parser.add_argument("-p", "--passes", default="", help="comma-separated pass pipeline")
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    parser.add_argument("--print-ir-after-all", action="store_true", help="print the IR after every pass (stderr)")
    parser.add_argument("--verify-only", action="store_true", help="parse and verify, print nothing")
    parser.add_argument("--list-passes", action="store_true", help="list tilec's passes and exit")
    parser.add_argument("--generic", action="store_true", help="print operations in generic form")
    parser.add_argument("--split-input-file", action="store_true",
                        help="process each chunk between '// -----' lines as its own module")


def add_parser(commands) -> None:
    from . import help_texts
    description, rest = help_texts(__doc__)
    parser = commands.add_parser("opt", help="run passes on an .mlir file", description=description,
                                 epilog="examples:\n" + rest, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.set_defaults(run=run, command="opt")


def main(argv: list[str] | None = None) -> int:
    """`python -m tilec.opt`."""
    from . import help_texts, run_command
    parser = argparse.ArgumentParser(prog="python -m tilec.opt", description=help_texts(__doc__)[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    if not args.list_passes and not args.input:
        parser.error("an input file is required")
    return run_command(run, args, "python -m tilec.opt")


def run(args: argparse.Namespace) -> int:
    from ..passes import PASSES, load_all_passes
    from . import CliError, write_output
    if args.list_passes:
        load_all_passes()
        for name in sorted(PASSES):
            options = " ".join(f"{k}={v}" for k, v in PASSES[name].options.items())
            print(f"{name}{'{' + options + '}' if options else ''}: {PASSES[name].description}")
        return 0
    if not args.input:
        raise CliError("an input file is required")
    if args.input == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(args.input) as f:
                text = f.read()
        except OSError as error:
            raise CliError(f"cannot read {args.input}: {error.strerror or error}") from None
    pieces = text.split("\n" + SPLIT_MARKER + "\n") if args.split_input_file else [text]
    outputs, status = [], 0
    for piece in pieces:
        output = _process(piece, args)
        if output is None:
            status = 1
        elif not args.verify_only:
            outputs.append(output.rstrip("\n") + "\n")
    result = ("\n" + SPLIT_MARKER + "\n").join(outputs)
    write_output(result, args.output)
    return status


def _process(text: str, args: argparse.Namespace) -> str | None:
    """Parses, verifies and transforms one module; prints errors and returns None on failure."""
    from mlir import ir

    from ..backend.compiler import print_module
    from ..dialects import IRVerificationError, make_context, verify_module
    from ..passes import PassFailure, run_pipeline
    context = make_context()
    try:
        with context:
            module = ir.Module.parse(text)
        verify_module(module, "parsing")
        if args.passes:
            check_stages(module, args.passes, "the input" if args.input == "-" else args.input)
            run_pipeline(module, args.passes, print_ir=args.print_ir_after_all)
            verify_module(module, args.passes)
    except (ir.MLIRError, IRVerificationError, ValueError, PassFailure) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    return module.operation.get_asm(print_generic_op_form=True) if args.generic else print_module(module)


# The IR each of tilec's stage-changing passes takes and gives; every other pass named
# `tilegpu-...` takes tilegpu IR (its tensors have layouts) and keeps it.
_CONVERSIONS = {"convert-tile-to-tilegpu": ("tile", "tilegpu"), "convert-tilegpu-to-llvm": ("tilegpu", "llvm")}
_STAGE_NAMES = {"tile": "tile IR (ttir)", "tilegpu": "tilegpu IR (ttgir: tensors with layouts)"}


def check_stages(module, pipeline: str, source: str) -> None:
    """Raises a ValueError where a pass of `pipeline` is given IR of another stage than
    it runs on (a ttir file given `tilegpu-coalesce`), saying how to get there."""
    from ..passes import Nested, parse_pipeline, pipeline_text
    items = parse_pipeline(pipeline)
    stage = _stage_of(module)
    for index, item in enumerate(items):
        if isinstance(item, Nested):
            continue  # upstream passes on nested ops: any stage
        name = item[0]
        needs, gives = _CONVERSIONS.get(name, ("tilegpu", "tilegpu") if name.startswith("tilegpu-") else (None, None))
        if needs is None or needs == stage:
            stage = gives or stage
            continue
        if stage == "tile":
            fixed = pipeline_text(items[:index] + [("convert-tile-to-tilegpu", {"num-warps": 4, "target": "sm_90"})]
                                  + items[index:])
            raise ValueError(f"{name} runs on {_STAGE_NAMES[needs]}, and {source} is {_STAGE_NAMES[stage]}: "
                             f"convert it first, -p '{fixed}', or take the ttgir that `tilec compile --stage "
                             "ttgir` prints")
        if stage == "tilegpu":
            raise ValueError(f"{name} runs on {_STAGE_NAMES[needs]}, and {source} is already tilegpu IR "
                             "(ttgir: its tensors have layouts)")
        raise ValueError(f"{name} runs on {_STAGE_NAMES[needs]}, and convert-tilegpu-to-llvm before it made "
                         "LLVM IR")


def _stage_of(module) -> str:
    """"tilegpu" for a module with tilegpu ops, types or attributes (or the warp count that
    convert-tile-to-tilegpu sets), else "tile"."""
    import re

    from ..dialects.tilegpu import NUM_WARPS_ATTR
    if NUM_WARPS_ATTR in module.operation.attributes:
        return "tilegpu"
    generic = module.operation.get_asm(print_generic_op_form=True)  # op names quoted, types and attributes whole
    return "tilegpu" if re.search(r'[#!"]tilegpu\.', generic) else "tile"
