"""tilec-opt: run any registered pass on an .mlir file and print the result.

    python -m tilec.opt input.mlir -p convert-tile-to-tilegpu{num-warps=4},tilegpu-coalesce
    python -m tilec.opt input.mlir -p tilegpu-coalesce --print-ir-after-all
    python -m tilec.opt --list-passes

The tile and tilegpu dialects are loaded; upstream MLIR pass names work too. Used by
the FileCheck tests in tests/ir and to rerun a reproducer written by a failing compile.
"""
from __future__ import annotations

import argparse
import sys

from mlir import ir

from .backend.compiler import print_module
from .dialects import IRVerificationError, make_context, verify_module
from .passes import PASSES, PassFailure, load_all_passes, run_pipeline


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tilec.opt", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", nargs="?", help=".mlir file ('-' for stdin)")
    parser.add_argument("-p", "--passes", default="", help="comma-separated pass pipeline")
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    parser.add_argument("--print-ir-after-all", action="store_true", help="print the IR after every pass (stderr)")
    parser.add_argument("--verify-only", action="store_true", help="parse and verify, print nothing")
    parser.add_argument("--list-passes", action="store_true", help="list tilec's passes and exit")
    parser.add_argument("--generic", action="store_true", help="print operations in generic form")
    parser.add_argument("--split-input-file", action="store_true",
                        help="process each chunk between '// -----' lines as its own module")
    args = parser.parse_args(argv)

    if args.list_passes:
        load_all_passes()
        for name in sorted(PASSES):
            options = " ".join(f"{k}={v}" for k, v in PASSES[name].options.items())
            print(f"{name}{'{' + options + '}' if options else ''}: {PASSES[name].description}")
        return 0
    if not args.input:
        parser.error("an input file is required")
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    pieces = text.split("\n" + SPLIT_MARKER + "\n") if args.split_input_file else [text]
    outputs, status = [], 0
    for piece in pieces:
        output = _process(piece, args)
        if output is None:
            status = 1
        elif not args.verify_only:
            outputs.append(output.rstrip("\n") + "\n")
    result = ("\n" + SPLIT_MARKER + "\n").join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        with open(args.output, "w") as f:
            f.write(result)
    return status


SPLIT_MARKER = "// -----"


def _process(text: str, args: argparse.Namespace) -> str | None:
    """Parses, verifies and transforms one module; prints errors and returns None on failure."""
    context = make_context()
    try:
        with context:
            module = ir.Module.parse(text)
        verify_module(module, "parsing")
        if args.passes:
            run_pipeline(module, args.passes, print_ir=args.print_ir_after_all)
            verify_module(module, args.passes)
    except (ir.MLIRError, IRVerificationError, ValueError, PassFailure) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    return module.operation.get_asm(print_generic_op_form=True) if args.generic else print_module(module)


if __name__ == "__main__":
    sys.exit(main())
