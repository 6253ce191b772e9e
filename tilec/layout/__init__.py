"""Tensor layouts: the `LinearLayout` algebra (`linear_layout`), the encodings built on it
(`encodings`, `mma`, `shared`), their ttgir text (`syntax`) and pictures of them
(`drawing`: `draw`, `save`, `layout_map`)."""
from .drawing import draw, layout_map, save  # noqa: F401
