"""A small RGB canvas written out as PNG, with a 5x7 bitmap font: enough to draw a
layout's grid of coloured, labelled cells without an imaging library.

PNG (ISO/IEC 15948) needs three chunks here: IHDR (size, 8-bit RGB), one IDAT (the
zlib-compressed rows, each preceded by filter byte 0) and IEND; each chunk is its
length, its tag, its data and a CRC-32 of tag and data.
"""
from __future__ import annotations

import struct
import zlib

RGB = tuple[int, int, int]

# Each glyph: rows of five pixels, '#' on, top down. Capitals, digits and most marks fill
# the first 7 rows; lower case stands on the same baseline, its x-height 5 rows, and
# g, j, p, q, y and the comma reach 2 rows below it. B keeps a straight left side and 8
# a round one, 0 has a slash to tell it from O. A character not listed is drawn as '?'.
_GLYPHS = {
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.", "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####", "3": "##### ...#. ..#.. ...#. ....# #...# .###.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.", "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.", "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.", "9": ".###. #...# #...# .#### ....# ...#. .##..",
    "A": ".###. #...# #...# ##### #...# #...# #...#", "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.", "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####", "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####", "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.", "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#", "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#", "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.", "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#", "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.", "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.", "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.", "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..", "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "a": "..... ..... .###. ....# .#### #...# .####", "b": "#.... #.... #.##. ##..# #...# #...# ####.",
    "c": "..... ..... .###. #.... #.... #...# .###.", "d": "....# ....# .##.# #..## #...# #...# .####",
    "e": "..... ..... .###. #...# ##### #.... .###.", "f": "..##. .#..# .#... ###.. .#... .#... .#...",
    "g": "..... ..... .#### #...# #...# .#### ....# #...# .###.",
    "h": "#.... #.... #.##. ##..# #...# #...# #...#", "i": "..#.. ..... .##.. ..#.. ..#.. ..#.. .###.",
    "j": "...#. ..... ..##. ...#. ...#. ...#. ...#. #..#. .##..",
    "k": "#.... #.... #..#. #.#.. ##... #.#.. #..#.", "l": ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "m": "..... ..... ##.#. #.#.# #.#.# #.#.# #.#.#", "n": "..... ..... #.##. ##..# #...# #...# #...#",
    "o": "..... ..... .###. #...# #...# #...# .###.",
    "p": "..... ..... ####. #...# #...# #...# ####. #.... #....",
    "q": "..... ..... .#### #...# #...# #...# .#### ....# ....#",
    "r": "..... ..... #.##. ##..# #.... #.... #....", "s": "..... ..... .###. #.... .###. ....# ####.",
    "t": ".#... .#... ###.. .#... .#... .#..# ..##.", "u": "..... ..... #...# #...# #...# #..## .##.#",
    "v": "..... ..... #...# #...# #...# .#.#. ..#..", "w": "..... ..... #...# #...# #.#.# #.#.# .#.#.",
    "x": "..... ..... #...# .#.#. ..#.. .#.#. #...#",
    "y": "..... ..... #...# #...# #...# .#### ....# #...# .###.",
    "z": "..... ..... ##### ...#. ..#.. .#... #####",
    " ": "..... ..... ..... ..... ..... ..... .....", ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... ..... .##.. .##.. ..#.. .#...",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....", ";": "..... .##.. .##.. ..... .##.. .##.. ..#.. .#...",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.", ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "[": ".###. .#... .#... .#... .#... .#... .###.", "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    "{": "...## ..#.. ..#.. .#... ..#.. ..#.. ...##", "}": "##... ..#.. ..#.. ...#. ..#.. ..#.. ##...",
    "<": "..... ...## .##.. #.... .##.. ...## .....", ">": "..... ##... ..##. ....# ..##. ##... .....",
    "=": "..... ..... ##### ..... ##### ..... .....", "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "-": "..... ..... ..... ##### ..... ..... .....", "_": "..... ..... ..... ..... ..... ..... #####",
    "#": ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.", "/": "..... ....# ...#. ..#.. .#... #.... .....",
    "\\": "..... #.... .#... ..#.. ...#. ....# .....", "*": "..... ..#.. #.#.# .###. #.#.# ..#.. .....",
    "^": "..#.. .#.#. #...# ..... ..... ..... .....", "!": "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..", '"': ".#.#. .#.#. .#.#. ..... ..... ..... .....",
    "'": "..#.. ..#.. ..#.. ..... ..... ..... .....", "`": ".#... ..#.. ...#. ..... ..... ..... .....",
    "@": ".###. #...# ....# .##.# #.#.# #.#.# .###.", "%": "##... ##..# ...#. ..#.. .#... #..## ...##",
    "|": "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..", "$": "..#.. .#### #.#.. .###. ..#.# ####. ..#..",
    "&": ".##.. #..#. #.#.. .#... #.#.# #..#. .##.#", "~": "..... ..... .#... #.#.# ...#. ..... .....",
}
GLYPH_WIDTH = 5
CAP_HEIGHT = 7        # rows from the top of a capital to the baseline
GLYPH_HEIGHT = 9      # with the two rows of descenders
# One character cell: the glyph and a column (a row) of space after it.
CHAR_ADVANCE, LINE_ADVANCE = GLYPH_WIDTH + 1, GLYPH_HEIGHT + 1


def _glyph_pixels(char: str) -> list[tuple[int, int]]:
    rows = _GLYPHS.get(char, _GLYPHS["?"]).split()
    return [(x, y) for y, row in enumerate(rows) for x, bit in enumerate(row) if bit == "#"]


_PIXELS = {char: _glyph_pixels(char) for char in _GLYPHS}


class Canvas:
    """An RGB image filled with `background`; rectangles and text drawn onto it."""

    def __init__(self, width: int, height: int, background: RGB = (255, 255, 255)):
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def fill(self, x: int, y: int, width: int, height: int, color: RGB) -> None:
        x0, y0 = max(x, 0), max(y, 0)
        x1, y1 = min(x + width, self.width), min(y + height, self.height)
        if x0 >= x1 or y0 >= y1:
            return
        run = bytes(color) * (x1 - x0)
        for row in range(y0, y1):
            start = (row * self.width + x0) * 3
            self.pixels[start:start + len(run)] = run

    def frame(self, x: int, y: int, width: int, height: int, color: RGB) -> None:
        """A one-pixel outline."""
        self.fill(x, y, width, 1, color)
        self.fill(x, y + height - 1, width, 1, color)
        self.fill(x, y, 1, height, color)
        self.fill(x + width - 1, y, 1, height, color)

    def text(self, x: int, y: int, text: str, color: RGB = (0, 0, 0), scale: int = 1) -> None:
        """`text` with its top-left corner at (x, y), each font pixel `scale` pixels wide."""
        for i, char in enumerate(text):
            left = x + i * CHAR_ADVANCE * scale
            for px, py in _PIXELS.get(char, _PIXELS["?"]):
                self.fill(left + px * scale, y + py * scale, scale, scale, color)

    def png(self) -> bytes:
        stride = self.width * 3
        raw = b"".join(b"\x00" + bytes(self.pixels[row * stride:(row + 1) * stride]) for row in range(self.height))
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
        return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) \
            + _chunk(b"IEND", b"")


def text_width(text: str, scale: int = 1) -> int:
    """Pixels `Canvas.text` advances over `text` (the last character's trailing space included)."""
    return len(text) * CHAR_ADVANCE * scale


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
