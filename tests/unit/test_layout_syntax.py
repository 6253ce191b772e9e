"""The text form of every encoding reads back to the same encoding (with no MLIR: see
test_import_layers)."""
from __future__ import annotations

import pytest

from tilec.layout.encodings import BlockedEncoding, DotOperandEncoding, SliceEncoding
from tilec.layout.mma import MmaEncoding
from tilec.layout.shared import NVMMASharedEncoding, SwizzledSharedEncoding
from tilec.layout.syntax import encoding_text, parse_encoding

BLOCKED = BlockedEncoding((1, 4), (8, 4), (4, 1), (1, 0))
MMA = MmaEncoding(2, (2, 2))

ENCODINGS = [
    BLOCKED,
    SliceEncoding(1, BLOCKED),
    SliceEncoding(0, SliceEncoding(1, BlockedEncoding((1, 1, 4), (2, 4, 4), (1, 4, 1), (2, 1, 0)))),
    MMA,
    DotOperandEncoding(0, MMA, 2),
    DotOperandEncoding(1, BLOCKED),
    SwizzledSharedEncoding(8, 1, 8, (1, 0)),
    NVMMASharedEncoding(128, 16, True),
]


@pytest.mark.parametrize("encoding", ENCODINGS, ids=lambda e: encoding_text(e).split("<")[0])
def test_text_round_trip(encoding):
    assert parse_encoding(encoding_text(encoding)) == encoding


def test_mma_text_is_what_the_ir_prints():
    assert encoding_text(MMA) == ("#tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, "
                                  "warpsPerCTA = array<i32: 2, 2>}>")



def test_integers_written_by_hand():
    """Integers without their type, or of another integer type (as MLIR prints an untyped
    one, `2 : i64`), read as MLIR's printed `: i32` form does."""
    assert parse_encoding("#tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2, "
                          "warpsPerCTA = array<i32: 2, 2>}>") == MMA
    assert parse_encoding("#tilegpu.shared<{maxPhase = 8 : i64, order = array<i32: 1, 0>, perPhase = 1, vec = 8}>") \
        == SwizzledSharedEncoding(8, 1, 8, (1, 0))
    blocked = encoding_text(BLOCKED)
    assert parse_encoding(f"#tilegpu.slice<{{dim = 1, parent = {blocked}}}>") == SliceEncoding(1, BLOCKED)
    assert parse_encoding(f"#tilegpu.dot_op<{{kWidth = 2, opIdx = 0 : i64, parent = {encoding_text(MMA)}}}>") \
        == DotOperandEncoding(0, MMA, 2)
