"""tilegpu.encoding_attr and layout_of, which memoise the attribute of each encoding and
the encoding of each attribute: what they return belongs to the current context, also
after another context was used."""
from __future__ import annotations

from mlir import ir

from tilec.dialects import tilegpu
from tilec.dialects._mlir import make_context
from tilec.layout.encodings import BlockedEncoding, SliceEncoding
from tilec.layout.mma import MmaEncoding

BLOCKED = BlockedEncoding((1, 4), (8, 4), (4, 1), (1, 0))
ENCODINGS = [BLOCKED, SliceEncoding(1, BLOCKED), MmaEncoding(3, (4, 1), (64, 64))]


def _tensor(enc) -> ir.Type:
    shape = [64, 64] if not isinstance(enc, SliceEncoding) else [64]
    return ir.RankedTensorType.get(shape, ir.F32Type.get(), tilegpu.encoding_attr(enc))


def test_attributes_and_encodings_of_each_context():
    contexts = [make_context(), make_context()]
    for context in contexts + contexts:  # back to the first: nothing of the second leaks in
        with context, ir.Location.unknown():
            for enc in ENCODINGS:
                attr = tilegpu.encoding_attr(enc)
                assert attr.context is context and tilegpu.encoding_attr(enc) == attr
                assert tilegpu.layout_of(_tensor(enc)) == enc
            assert tilegpu.layout_of(ir.RankedTensorType.get([4], ir.F32Type.get())) is None
            assert tilegpu.layout_of(ir.F32Type.get()) is None
