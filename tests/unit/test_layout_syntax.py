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

