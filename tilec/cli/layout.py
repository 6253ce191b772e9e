"""`tilec layout`: draw a layout encoding as the map of which warp (W), thread (T, its lane)
and register (R) holds each element of a tensor; for a shared-memory encoding, the
offset and bank of each element, which shows its swizzle.

    tilec layout '#tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>' --shape 32x16
    tilec layout '#blocked1' '#mma0' --ir kernel.ttgir -o conversion.svg
    tilec layout '#tilegpu.shared<{maxPhase = 8 : i32, order = array<i32: 1, 0>, perPhase = 1 : i32, vec = 8 : i32}>' --shape 16x64 -o swizzle.png

ENCODING is an encoding as ttgir prints it (#tilegpu.blocked, slice, mma, dot_op, shared,
nvmma_shared), or, with --ir FILE (a ttgir file, e.g. from `tilec compile --stage
ttgir` or TILEC_DUMP_DIR), one of the file's aliases (#blocked0, #mma0, ...); the shape
then defaults to that of the first tensor with the encoding. Several encodings are drawn
one below the other: the two sides of a layout conversion. The picture is text on the
terminal (elided to fit), or SVG or PNG when -o names such a file. The same pictures
come from Python: tilec.layout.draw(encoding, shape, format="text"|"svg"|"png").
"""
from __future__ import annotations

import argparse
import re
import shutil

from . import CliError, help_texts, write_output


def add_parser(commands) -> None:
    description, rest = help_texts(__doc__)
    parser = commands.add_parser("layout", help="draw which thread, warp and register holds each element of a layout",
                                 description=description, epilog="examples:\n" + rest,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("encodings", nargs="+", metavar="ENCODING", help="an encoding's text, or an alias with --ir")
    parser.add_argument("--shape", help="the tensor's shape, e.g. 32x16 (default with --ir: the first use's)")
    parser.add_argument("--ir", metavar="FILE", help="a ttgir file whose encoding aliases ENCODING may name")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the picture to FILE (.svg, .png, else text)")
    parser.add_argument("--format", choices=("text", "svg", "png"),
                        help="the picture's format (default: from -o's suffix, else text)")
    parser.add_argument("--show", metavar="FIELDS",
                        help="what each cell says: warp,lane,thread,register (distributed layouts) or "
                             "offset,bank,group (shared layouts)")
    parser.add_argument("--color-by", metavar="FIELD", help="colour cells by this field (images)")
    parser.add_argument("--element-bits", type=int, metavar="BITS", help="element size of a shared layout, for banks (default 16)")
    parser.add_argument("--rows", type=int, default=64, help="draw at most this many rows (default 64)")
    parser.add_argument("--cols", type=int, help="draw at most this many columns (default: what fits the terminal; "
                                                 "64 in images)")
    parser.add_argument("--full", action="store_true", help="draw every row, column and slice")
    parser.add_argument("--width", type=int, help="terminal width for text (default: the terminal's)")
    parser.set_defaults(run=run, command="layout")


def run(args: argparse.Namespace) -> int:
    from ..layout.drawing import draw, format_of_path
    aliases, text = _aliases(args.ir) if args.ir else ({}, "")
    encodings, shape = [], args.shape
    for given in args.encodings:
        name, encoding_text = _resolve(given, aliases, args.ir)
        encoding = read_encoding(encoding_text)
        if shape is None:  # the file prints the alias where it has one
            shape = _first_shape(text, name or encoding_text, getattr(encoding, "rank", None))
        encodings.append(encoding)
    if shape is None:
        raise CliError("give the tensor's shape with --shape, e.g. --shape 32x16")
    fmt = args.format or (format_of_path(args.output) if args.output else "text")
    width = args.width or shutil.get_terminal_size((120, 40)).columns
    limits = dict(max_rows=None, max_cols=None, max_panels=None) if args.full else \
        dict(max_rows=args.rows, max_cols=args.cols)
    if args.full and fmt == "text":
        limits["max_cols"] = 1 << 30
    picture = draw(encodings, shape, fmt, show=args.show, color_by=args.color_by, element_bits=args.element_bits,
                   width=width, **limits)
    write_output(picture, args.output)
    return 0


def read_encoding(text: str):
    """The encoding of `text` as ttgir prints it. Text written by hand (keys in another
    order, integers without `: i32`) is first put in MLIR's printed form by parsing it
    as an attribute."""
    from ..layout.syntax import parse_encoding
    try:
        return parse_encoding(text)
    except (ValueError, KeyError) as error:
        first_error = error
    try:
        from mlir import ir

        from ..dialects import make_context
        with make_context():
            printed = str(ir.Attribute.parse(text))
        return parse_encoding(printed)
    except Exception:
        raise CliError(f"cannot read the encoding {text!r}: {first_error}") from None


_ALIAS = re.compile(r"^(#\w+) = (#tilegpu\..*)$", re.MULTILINE)


def _aliases(path: str) -> tuple[dict[str, str], str]:
    """{'#mma0': '#tilegpu.mma<...>'} from a file printed with aliases, and its text."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror or error}") from None
    return dict(_ALIAS.findall(text)), text


def _resolve(given: str, aliases: dict[str, str], path: str | None) -> tuple[str | None, str]:
    """(alias or None, encoding text) of an ENCODING argument."""
    given = given.strip()
    if given.startswith("#tilegpu."):
        return None, given
    name = given if given.startswith("#") else "#" + given
    if name in aliases:
        return name, aliases[name]
    if path:
        known = ", ".join(sorted(aliases)) or "none"
        raise CliError(f"{path} defines no encoding {name}; its aliases: {known}")
    if re.fullmatch(r"#?\w+\d+", given):
        raise CliError(f"{given} looks like an alias of a ttgir file: name the file with --ir FILE")
    raise CliError(f"cannot read the encoding {given!r}: expected #tilegpu.<kind><{{...}}> as ttgir prints it")


def _first_shape(text: str, encoding: str, rank: int | None) -> tuple[int, ...] | None:
    """The shape of the first tensor type in `text` with `encoding`, preferring one of
    `rank` dimensions (a pipelining ring's buffer has one more: its slots)."""
    found = []
    at = text.find("tensor<")
    while at >= 0:
        depth, end = 0, at + len("tensor")
        for end in range(at + len("tensor"), len(text)):
            depth += {"<": 1, ">": -1}.get(text[end], 0)
            if depth == 0:
                break
        body = text[at + len("tensor<"):end]
        if body.endswith(", " + encoding):
            dims = re.match(r"((?:\d+x)+)", body)
            if dims:
                found.append(tuple(int(d) for d in dims.group(1).rstrip("x").split("x")))
        at = text.find("tensor<", end)
    if not found:
        return None
    for shape in found:
        if rank is None or len(shape) == rank:
            return shape
    return found[0][-rank:] if rank else found[0]
