"""How one kernel parameter is compiled: `ArgSpec`, shared by the frontend, the compile
driver and the runtime (which computes it from launch arguments).

It lives apart from all three so that each can import it without importing the others;
it imports nothing heavy (the dtype is only named in annotations).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .language.core import dtype


@dataclass(frozen=True)
class ArgSpec:
    """How one kernel parameter is compiled.

    `constant` arguments (tl.constexpr parameters, and integers specialised to 1) are
    folded into the code; the others become function arguments of type `ty`, with
    `divisibility` (16 or 1: bytes for pointers, units for integers) for axis info.
    """
    name: str
    ty: dtype | None = None
    constant: Any = None
    is_constant: bool = False
    divisibility: int = 1

    def key(self) -> tuple:
        if self.is_constant:
            return (self.name, "c", _constant_key(self.constant))
        return (self.name, str(self.ty), self.divisibility)


def _constant_key(value: Any) -> str:
    """A constant argument as the cache key holds it: its repr, and for a @jit function
    (passed as a constexpr, or in a tuple) the hash of its source and its callees', so
    that editing it compiles the kernel again."""
    from .language.core import constexpr
    hashes: list[str] = []

    def collect(item: Any) -> None:
        item = item.value if isinstance(item, constexpr) else item
        if isinstance(item, (tuple, list)):
            for element in item:
                collect(element)
            return
        hash_of = getattr(item, "cache_hash", None) or getattr(item, "source_hash", None)
        if getattr(item, "__tilec_jit__", False) and callable(hash_of):
            hashes.append(hash_of())

    collect(value)
    return repr(value) + (f"@{','.join(hashes)}" if hashes else "")


class ArgumentLayout:
    """How a composite kernel argument (a tuple, a host tensor descriptor) is rebuilt in
    the kernel from the parameters it is passed as (its leaves)."""

    def rebuild(self, scope: dict, make_tuple: Any) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class TupleLayout(ArgumentLayout):
    """How a tuple (or namedtuple) kernel argument is rebuilt in the kernel from its leaves.

    A tuple argument `t` is passed as its leaves, each a parameter of its own named
    `t.0`, `t.1`, `t.1.0`, ... (names no kernel can spell); `items` holds, per element,
    the leaf's name or a nested TupleLayout. `container` is the tuple's class (a
    namedtuple's class, or `tuple`); its qualified name enters the cache key."""
    container: Any
    items: tuple

    def __repr__(self) -> str:
        name = f"{self.container.__module__}.{self.container.__qualname__}"
        return f"TupleLayout({name}, {self.items!r})"

    def rebuild(self, scope: dict, make_tuple: Any) -> Any:
        """The argument, its leaves read from `scope`; `make_tuple` builds a plain tuple."""
        values = [item.rebuild(scope, make_tuple) if isinstance(item, ArgumentLayout) else scope[item]
                  for item in self.items]
        if self.container is tuple:
            return make_tuple(values)
        if hasattr(self.container, "_fields"):  # a namedtuple: its fields by position
            return self.container(*values)
        # Another tuple subclass (torch.Size): the kernel reads its items, as of a tuple.
        return make_tuple(values)


def is_tuple_argument(value: Any) -> bool:
    """A tuple or namedtuple passed for a non-constexpr parameter."""
    return isinstance(value, tuple)


def flatten_tuple_argument(name: str, value: tuple) -> tuple[TupleLayout, list[tuple[str, Any]]]:
    """`value`'s layout and its leaves as (name, value) pairs, depth first. A host tensor
    descriptor inside the tuple is flattened as a descriptor argument of that name.

    A leaf is a compile-time constant (a `tl.constexpr`, which the kernel is specialised
    on) when it is one already, when it is a @jit function (`Function(fn=mul)`: the kernel
    calls it, as Triton's does), or when it fills a NamedTuple field annotated
    `tl.constexpr` (`BLOCK: tl.constexpr`)."""
    constant_fields = _constexpr_fields(type(value))
    fields = getattr(value, "_fields", ())
    leaves: list[tuple[str, Any]] = []
    items = []
    for index, element in enumerate(value):
        leaf = f"{name}.{index}"
        constant = index < len(fields) and fields[index] in constant_fields
        flatten = None if constant else _composite_flattener(element)
        if flatten is not None:
            layout, inner = flatten(leaf, element)
            items.append(layout)
            leaves.extend(inner)
        else:
            items.append(leaf)
            if constant or getattr(element, "__tilec_jit__", False):
                from .language.core import constexpr
                element = constexpr(element)
            leaves.append((leaf, element))
    return TupleLayout(type(value), tuple(items)), leaves


def _composite_flattener(value: Any) -> Any:
    """How a tuple, a host descriptor or a host aggregate inside an argument is passed as
    leaves (its flatten_* function); None for a leaf."""
    if isinstance(value, tuple):
        return flatten_tuple_argument
    if is_descriptor_argument(value):
        return flatten_descriptor_argument
    if is_aggregate_argument(value):
        return flatten_aggregate_argument
    return None


@functools.lru_cache(maxsize=256)
def _constexpr_fields(container: type) -> frozenset:
    """The fields of a NamedTuple class annotated `tl.constexpr`."""
    from .language.core import is_constexpr_annotation
    if not hasattr(container, "_fields"):
        return frozenset()
    annotations = getattr(container, "__annotations__", {})
    # (under `from __future__ import annotations`, a NamedTuple holds typing.ForwardRef("tl.constexpr"))
    return frozenset(field for field, annotation in annotations.items()
                     if is_constexpr_annotation(getattr(annotation, "__forward_arg__", annotation)))


@dataclass(frozen=True)
class DescriptorLayout(ArgumentLayout):
    """A host tensor descriptor argument `d` (tilec.tools.tensor_descriptor), passed as
    its base pointer `d.base`, its shape `d.shape.0`, ... and its strides `d.strides.0`,
    ...; in the kernel it is the `tl.tensor_descriptor` tl.make_tensor_descriptor would
    make of them. The block shape and padding are compiled in (part of the key)."""
    base: str
    shape: tuple
    strides: tuple
    block_shape: tuple
    padding: str
    tensormap: str
    whole_rows: bool  # the last dimension spans a multiple of 16 bytes (TMA stores are exact)
    round_tf32: bool = False  # loads round fp32 to tf32 (round_f32_to_tf32)

    def rebuild(self, scope: dict, make_tuple: Any) -> Any:
        from .language.block_pointer import TensorDescriptor
        from .language.core import constexpr
        return TensorDescriptor(scope[self.base], make_tuple([scope[n] for n in self.shape]),
                                make_tuple([scope[n] for n in self.strides]), constexpr(list(self.block_shape)),
                                constexpr(self.padding), scope.get(self.tensormap), constexpr(self.whole_rows),
                                round_tf32=constexpr(self.round_tf32))


def is_descriptor_argument(value: Any) -> bool:
    """A host tensor descriptor (tilec.tools.tensor_descriptor's, or one with its fields)."""
    from .tools.tensor_descriptor import is_tensor_descriptor
    return is_tensor_descriptor(value)


def flatten_descriptor_argument(name: str, value: Any) -> tuple[DescriptorLayout, list[tuple[str, Any]]]:
    """`value`'s layout and its leaves as (name, value) pairs: base, shape, strides and
    the TMA tensor map (a runtime.tma.TensorMap, encoded when a launch reads it)."""
    from .runtime.tma import TensorMap
    from .tools.tensor_descriptor import whole_rows
    rank = len(value.shape)
    base, shape, strides, tensormap = _descriptor_leaf_names(name, rank)
    leaves = [(base, value.base)]
    leaves += [(leaf, int(v)) for leaf, v in zip(shape, value.shape)]
    leaves += [(leaf, int(v)) for leaf, v in zip(strides, value.strides)]
    leaves.append((tensormap, TensorMap(value)))
    layout = _descriptor_layout(name, rank, tuple(int(b) for b in value.block_shape),
                                str(getattr(value, "padding", "zero")), whole_rows(value),
                                bool(getattr(value, "round_f32_to_tf32", False)))
    return layout, leaves


@functools.lru_cache(maxsize=1024)
def _descriptor_leaf_names(name: str, rank: int) -> tuple[str, tuple, tuple, str]:
    return (f"{name}.base", tuple(f"{name}.shape.{i}" for i in range(rank)),
            tuple(f"{name}.strides.{i}" for i in range(rank)), f"{name}.tensormap")


@functools.lru_cache(maxsize=1024)
def _descriptor_layout(name: str, rank: int, block_shape: tuple, padding: str, whole_rows: bool,
                       round_tf32: bool = False) -> DescriptorLayout:
    base, shape, strides, tensormap = _descriptor_leaf_names(name, rank)
    return DescriptorLayout(base, shape, strides, block_shape, padding, tensormap, whole_rows, round_tf32)


@dataclass(frozen=True)
class AggregateLayout(ArgumentLayout):
    """An aggregate built on the host (`@tilec.aggregate`) passed to a kernel: each field
    `f` of an argument `a` is passed as a leaf `a.f` (or, for a tuple, a descriptor or
    another aggregate, as its own leaves): a `tl.constexpr` field as a constant the
    kernel is specialised on, a `tl.tensor` field as a pointer (an array) or a scalar (a
    number). `code` identifies the class: its fields, defaults and the sources of its
    methods (classes of one name from one factory differ by it); it enters the key."""
    cls: Any
    fields: tuple
    code: str

    def __repr__(self) -> str:
        return f"AggregateLayout({self.cls.__module__}.{self.cls.__qualname__}@{self.code}, {self.fields!r})"

    def rebuild(self, scope: dict, make_tuple: Any) -> Any:
        values = [item.rebuild(scope, make_tuple) if isinstance(item, ArgumentLayout) else scope[item]
                  for item in self.fields]
        return object.__new__(self.cls).tilec_replace(values)


def is_aggregate_argument(value: Any) -> bool:
    """An aggregate built on the host (language/aggregates.py's UserAggregate)."""
    return getattr(type(value), "__tilec_aggregate__", False) is True


def flatten_aggregate_argument(name: str, value: Any) -> tuple[AggregateLayout, list[tuple[str, Any]]]:
    """`value`'s layout and its leaves as (name, value) pairs, field by field."""
    from .language.core import constexpr, is_constexpr_annotation, tensor
    cls = type(value)
    leaves: list[tuple[str, Any]] = []
    items = []
    for field in cls.__tilec_fields__:
        element = getattr(value, field)
        leaf = f"{name}.{field}"
        flatten = None if is_constexpr_annotation(cls.__tilec_annotations__.get(field)) else \
            _composite_flattener(element)
        if flatten is not None:
            layout, inner = flatten(leaf, element)
            items.append(layout)
            leaves.extend(inner)
            continue
        items.append(leaf)
        if cls.__tilec_annotations__.get(field) is tensor and isinstance(element, constexpr):
            element = element.value  # a number in a tl.tensor field: a scalar argument
        elif getattr(element, "__tilec_jit__", False) or element is None or \
                isinstance(element, (str, bool, int, float)):
            element = constexpr(element)  # a constant the kernel is specialised on
        leaves.append((leaf, element))
    return AggregateLayout(cls, tuple(items), _aggregate_code(cls)), leaves


@functools.lru_cache(maxsize=256)
def _aggregate_code(cls: type) -> str:
    """A digest of what `cls` compiles to: its fields, defaults and methods' sources (the
    @jit methods' with their callees)."""
    import hashlib
    from .language.aggregates import cache_key_parts
    texts, jit_methods = cache_key_parts(cls)
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode())
    for method in jit_methods:
        hash_of = getattr(method, "cache_hash", None) or method.source_hash
        digest.update(hash_of().encode())
    return digest.hexdigest()[:16]


def recipe_arguments(entry: list) -> set[int]:
    """The parameter positions a tensor-map recipe's shape or stride `entry` reads
    (IRBuilder.parameter_expression: ["arg", position], ["const", value] or [op, bits,
    left, right]): the compiler checks their types, the launcher reads their values."""
    if entry[0] == "arg":
        return {entry[1]}
    if entry[0] == "const":
        return set()
    return recipe_arguments(entry[2]) | recipe_arguments(entry[3])
