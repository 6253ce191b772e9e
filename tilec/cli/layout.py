"""`tilec layout`: draw a layout encoding as the map of which warp (W), thread (T, its lane)
and register (R) holds each element of a tensor; for a shared-memory encoding, the
offset and bank of each element, which shows its swizzle.

    tilec layout '#tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>' --shape 32x16
    tilec layout '#blocked1' '#mma0' --ir kernel.ttgir -o conversion.svg
    tilec layout '#tilegpu.shared<{maxPhase = 8 : i32, order = array<i32: 1, 0>, perPhase = 1 : i32, vec = 8 : i32}>' --shape 16x64 -o swizzle.png

ENCODING is an encoding as ttgir prints it (#tilegpu.blocked, slice, mma, dot_op, shared,
nvmma_shared), or as Triton prints it (#ttg.blocked<{sizePerThread = [1, 4], ...}>,
nvidia_mma, swizzled_shared, ...), or, with --ir FILE (a ttgir file, tilec's from `tilec
compile --stage ttgir` or TILEC_DUMP_DIR, or Triton's), one of the file's aliases
(#blocked0, #mma0, #blocked, ...); the shape then defaults to that of the largest tensor
with the encoding (a pipelining ring's slot dimension left out). Several encodings are drawn
one below the other: the two sides of a layout conversion. The picture is text on the
terminal (elided to fit), or SVG or PNG when -o names such a file. The same pictures
come from Python: tilec.layout.draw(encoding, shape, format="text"|"svg"|"png").
"""
from __future__ import annotations

import argparse
import math
import re
import shutil

from . import CliError, help_texts, write_output


def add_parser(commands) -> None:
    description, rest = help_texts(__doc__)
    parser = commands.add_parser("layout", help="draw which thread, warp and register holds each element of a layout",
                                 description=description, epilog="examples:\n" + rest,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("encodings", nargs="+", metavar="ENCODING", help="an encoding's text, or an alias with --ir")
    parser.add_argument("--shape", help="the tensor's shape, e.g. 32x16 (default with --ir: the largest use's)")
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
        encoding = read_encoding(encoding_text, aliases)
        if shape is None and args.ir:  # the file prints the alias where it has one
            shape = _default_shape(text, name or encoding_text, getattr(encoding, "rank", None), args.ir)
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


def read_encoding(text: str, aliases: dict[str, str] | None = None):
    """The encoding of `text` as ttgir prints it, tilec's or Triton's (whose parents may
    name `aliases` of its file). Text of tilec's written by hand (keys in another order,
    integers without `: i32`) is first put in MLIR's printed form by parsing it as an
    attribute."""
    from ..layout.syntax import parse_encoding
    from ..layout.triton_syntax import is_triton_encoding, parse_triton_encoding
    if is_triton_encoding(text):
        try:
            return parse_triton_encoding(text, aliases)
        except ValueError as error:
            raise CliError(str(error)) from None
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


_ALIAS = re.compile(r"^(#\w+) = (#(?:tilegpu|ttg|triton_gpu)\..*)$", re.MULTILINE)  # tilec's, Triton's


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
    from ..layout.triton_syntax import is_triton_encoding
    given = given.strip()
    if given.startswith("#tilegpu.") or is_triton_encoding(given):
        return None, given
    name = given if given.startswith("#") else "#" + given
    if name in aliases:
        return name, aliases[name]
    if path:
        known = ", ".join(sorted(aliases)) or "none"
        raise CliError(f"{path} defines no encoding {name}; its aliases: {known}")
    if re.fullmatch(r"#\w+|#?\w+\d+", given):
        raise CliError(f"{given} looks like an alias of a ttgir file: name the file with --ir FILE")
    raise CliError(f"cannot read the encoding {given!r}: expected #tilegpu.<kind><{{...}}> as ttgir prints it, "
                   "or Triton's #ttg.<kind><{...}>")


def _default_shape(text: str, encoding: str, rank: int | None, path: str) -> tuple[int, ...]:
    """The shape to draw `encoding` of a ttgir file at: the largest of the file's tensors
    (and shared buffers) with that encoding. A buffer of a pipelining ring has a leading
    dimension of slots (3 for three stages); its slot's shape is drawn. An encoding of
    no fixed rank (NVMMA shared) is drawn in 2-D."""
    want = rank or 2
    shapes = _shapes_with(text, encoding)
    fitting = [shape[-want:] for shape in shapes
               if len(shape) >= want and all(d > 0 and d & (d - 1) == 0 for d in shape[-want:])]
    if not fitting:
        found = ", ".join(str(list(shape)) for shape in dict.fromkeys(shapes)) or "none"
        raise CliError(f"{path} has no {want}-D tensor with {encoding} whose dimensions are powers of two "
                       f"(its shapes: {found}): give the shape with --shape, e.g. --shape 32x16")
    return max(fitting, key=math.prod)  # the first of the largest


def _shapes_with(text: str, encoding: str) -> list[tuple[int, ...]]:
    """The shapes of the tensor and memdesc types in `text` whose encoding is `encoding`
    (`tensor<64x32xf16, #blocked0>`, `!ttg.memdesc<3x64x32xf16, #shared, #smem, mutable>`)."""
    found = []
    for match in re.finditer(r"(?:tensor|memdesc)<", text):
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(text)):
            depth += {"<": 1, ">": -1}.get(text[end], 0)
            if depth == 0:
                break
        body = text[match.end():end]
        if body.startswith("tensor<"):  # tilec's memdesc<tensor<...>>: the tensor is found on its own
            continue
        parts = [part.strip() for part in _top_level_split(body)]
        dims = re.match(r"((?:\d+x)+)", parts[0])
        if dims and encoding in parts[1:]:
            found.append(tuple(int(d) for d in dims.group(1).rstrip("x").split("x")))
    return found


def _top_level_split(body: str) -> list[str]:
    """`body` split at the commas outside any <...>, [...] or {...}."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(body):
        if char in "<[{":
            depth += 1
        elif char in ">]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:at])
            start = at + 1
    return parts + [body[start:]]
