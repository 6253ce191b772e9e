"""Tensor layouts: the `LinearLayout` algebra (`linear_layout`), the encodings built on it
(`encodings`, `mma`, `shared`), their ttgir text (`syntax`) and pictures of them
(`drawing`: `draw`, `save`, `layout_map`)."""

_DRAWING = ("draw", "layout_map", "save")


def __getattr__(name: str):
    """`draw`, `layout_map` and `save` import the drawing code at first use: `import tilec`
    reaches this package (for the encodings) and need not pay for pictures."""
    if name in _DRAWING:
        from . import drawing
        globals().update({n: getattr(drawing, n) for n in _DRAWING})
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
