"""The `tilec` command line: `python -m tilec`, or `tilec` where the package is installed.

    tilec compile kernels.py:matmul -s 'a_ptr=*fp16:16,b_ptr=*fp16:16,c_ptr=*fp32:16,K=i32' \\
                  -c BM=128,BN=128,BK=32 --stage ptx
    tilec opt kernel.ttgir -p tilegpu-coalesce
    tilec cache list
    tilec layout '#tilegpu.mma<{...}>' --shape 32x16 -o mma.svg

Each subcommand is a module here with `add_parser(subparsers)`, which registers its
arguments and its `run(args) -> int`. A mistake of the user's (a missing file, an
unknown kernel, a bad signature, a kernel that does not compile) is one message and
exit status 1, not a traceback; `--traceback` shows the traceback (for reporting
compiler bugs).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Callable

PROG = "tilec"


class CliError(Exception):
    """A user error: printed as one line, exit status 1."""


def main(argv: list[str] | None = None) -> int:
    from .. import __version__
    from . import cache, compile, layout, opt
    parser = argparse.ArgumentParser(
        prog=PROG, description="tilec: compile tile kernels, run passes, manage the kernel cache, draw layouts.",
        epilog="Run 'tilec COMMAND --help' for a command's options.")
    parser.add_argument("--traceback", action="store_true", help="show the Python traceback of an error")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}",
                        help="print tilec's version and exit")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module in (compile, opt, cache, layout):
        module.add_parser(commands)
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return 2
    return run_command(args.run, args, f"{PROG} {args.command}", args.traceback)


def run_command(run: Callable[[argparse.Namespace], int], args: argparse.Namespace, prog: str,
                traceback: bool = False) -> int:
    """Runs one command; a user error is printed as `prog: error: message` and gives
    status 1."""
    from ..backend.toolkit import ToolkitError
    from ..errors import CompilationError, InternalError, OutOfResources
    try:
        return run(args)
    except (CliError, CompilationError, InternalError, OutOfResources, ToolkitError, ValueError, OSError) as error:
        if traceback:
            raise
        if isinstance(error, BrokenPipeError):  # `tilec ... | head`: the reader has gone
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
            return 1
        print(f"{prog}: error: {_message(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _message(error: BaseException) -> str:
    from ..errors import CompilationError
    if isinstance(error, CompilationError):
        return "the kernel does not compile:\n" + str(error)  # its own lines: the place, a caret, the reason
    if isinstance(error, OSError) and error.filename and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error).removeprefix("tilec.compile: ")  # the compiler's argument checks name their caller


def help_texts(doc: str) -> tuple[str, str]:
    """(description, epilog) for a command's --help from its module docstring: the first
    paragraph without its "`tilec name`:" label, and the rest."""
    first, _, rest = doc.strip().partition("\n\n")
    first = re.sub(r"^`[^`]+`: ", "", first)
    return first[:1].upper() + first[1:], rest


def write_output(data: str | bytes, path: str | None) -> None:
    """`data` to the file `path`, or to stdout when it is None or '-'."""
    if path in (None, "-"):
        if isinstance(data, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(data)
            sys.stdout.flush()
        return
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        raise CliError(f"cannot write {path}: no directory {directory}")
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
