"""User-defined aggregates: `@tilec.aggregate` (Triton's `triton.aggregate`, `tl.core._aggregate`).

    @tilec.aggregate
    class Window:
        offs: tl.tensor
        n: tl.constexpr = 16          # a default

        @tilec.jit
        def load(self, ptr):          # a @jit method: `self` is the aggregate
            return tl.load(ptr + self.offs, mask=self.offs < self.n, other=0.0)

A class whose annotated attributes are its fields becomes a value kernels can build,
pass to and return from @jit functions, and carry through loops and `if`s (by its
tensors, as block pointers are: it is a `core.aggregate`). What the decorator gives it:

- a constructor taking the fields in order (inherited fields first), by position or
  keyword, with the defaults of the class body, unless the class defines `__init__`
  (then that runs, and must set every field);
- fields converted to their annotation on assignment: a `tl.constexpr` field holds a
  constexpr (a value known only at run time is refused), a `tl.tensor` field a tensor
  (a number becomes a scalar tensor, as Triton's assignment makes it one), a `tl.tuple`
  field a tuple, a class-annotated field an instance of it;
- immutability once built: `tl.aggregate_replace(v, field=...)` makes a changed copy;
- methods: `@jit` methods receive the aggregate as `self` (and serve as operators:
  `__add__`, `__lt__`, `__getitem__`, ...), `@constexpr_function` methods run while
  compiling, plain methods run as Python with the kernel's values, static methods too;
- inheritance from other aggregates only;
- construction on the host: a `tl.tensor` field then takes an array or a number, a
  `tl.tensor_descriptor` field a host descriptor; passed to a kernel, each field is an
  argument of its own (specialization.AggregateLayout).

The decorated class is a new class (deriving from `UserAggregate`) with the user's
name, module and methods.
"""
from __future__ import annotations

import builtins
import inspect
import typing
from typing import Any

from .compile_time import ConstexprFunction
from .core import TilecSemanticError, _unwrap, aggregate, builtin, call_kernel_function, constexpr, current_semantic, \
    inside_kernel, tensor, tuple_value

_MISSING = object()


class BoundJitMethod:
    """A @jit method read from an aggregate: calling it calls the function with the
    aggregate first (the code generator inlines it; the interpreter runs it)."""

    def __init__(self, instance: Any, function: Any):
        self.__self__ = instance
        self.__func__ = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call_kernel_function(self.__func__, [self.__self__, *args], kwargs)

    def __repr__(self) -> str:
        return f"<@jit method {getattr(self.__func__, '__name__', '?')} of {self.__self__!r}>"


class _JitMethod:
    """The descriptor a @jit function defined in an aggregate's body becomes: read from
    an instance it is a BoundJitMethod, read from the class the function itself."""

    def __init__(self, function: Any):
        self.function = function

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self.function if instance is None else BoundJitMethod(instance, self.function)


class UserAggregate(aggregate):
    """The base of every class `@aggregate` makes (see the module's docstring)."""

    __tilec_aggregate__ = True
    __tilec_fields__: tuple[str, ...] = ()
    __tilec_annotations__: dict[str, Any] = {}
    __tilec_defaults__: dict[str, Any] = {}
    __tilec_user_init__: Any = None

    def __init__(self, *args: Any, **kwargs: Any):
        cls = type(self)
        object.__setattr__(self, "_tilec_built", False)
        init = cls.__tilec_user_init__
        if isinstance(init, ConstexprFunction):  # as Triton: run on the values, tensors included
            init.fn(self, *[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
        elif init is not None:
            init(self, *args, **_triton_keywords(init), **kwargs)
        else:
            _generated_init(self, args, kwargs)
        for name in cls.__tilec_fields__:
            if name not in self.__dict__:
                raise AttributeError(f"the constructor of {cls.__name__} did not set field '{name}' (Triton: "
                                     f"constructor for {cls.__name__} did not initialize attribute '{name}')")
        object.__setattr__(self, "_tilec_built", True)

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        if name not in cls.__tilec_fields__:
            raise AttributeError(f"{cls.__name__} has no field '{name}' (its fields: "
                                 f"{', '.join(cls.__tilec_fields__) or 'none'})")
        if self.__dict__.get("_tilec_built", True):
            raise AttributeError(f"cannot assign to field '{name}' on immutable aggregate {cls.__name__}; make a "
                                 "changed copy with tl.aggregate_replace(value, field=...)")
        object.__setattr__(self, name, _field_value(cls, name, value))

    def tilec_replace(self, values: list) -> "UserAggregate":
        """A copy with its fields replaced by `values` (already of the fields' kinds: the
        code generator's loop and `if` results)."""
        new = object.__new__(type(self))
        for name, value in zip(self.__tilec_fields__, values):
            object.__setattr__(new, name, value)
        object.__setattr__(new, "_tilec_built", True)
        return new

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={_unwrap(getattr(self, name, None))!r}" for name in self.__tilec_fields__)
        return f"{type(self).__name__}({fields})"


def _triton_keywords(init: Any) -> dict[str, None]:
    """What a plain `__init__` with Triton's `_semantic` or `_generator` parameter gets for
    it: None (Triton passes its semantic layer; tilec's builtins, which the constructor
    passes it to, accept and ignore it: core.builtin)."""
    try:
        parameters = inspect.signature(init).parameters
    except (TypeError, ValueError):
        return {}
    return {name: None for name in ("_semantic", "_generator") if name in parameters}


def is_user_aggregate_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, UserAggregate)


def _generated_init(instance: UserAggregate, args: tuple, kwargs: dict) -> None:
    """The constructor of an aggregate without its own `__init__`: the fields in order."""
    cls = type(instance)
    fields = cls.__tilec_fields__
    if len(args) > len(fields):
        raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments (its fields: {', '.join(fields)}) but "
                        f"{len(args)} were given")
    kwargs = dict(kwargs)
    for index, name in enumerate(fields):
        if index < len(args):
            if name in kwargs:
                raise TypeError(f"{cls.__name__}() got multiple values for argument '{name}'")
            value = args[index]
        elif name in kwargs:
            value = kwargs.pop(name)
        elif name in cls.__tilec_defaults__:
            value = cls.__tilec_defaults__[name]
        else:
            raise TypeError(f"{cls.__name__}() is missing argument '{name}' (Triton: missing required argument)")
        object.__setattr__(instance, name, _field_value(cls, name, value))
    if kwargs:
        unexpected = next(iter(kwargs))
        raise TypeError(f"{cls.__name__}() got an unexpected keyword argument '{unexpected}' (its fields: "
                        f"{', '.join(fields)})")


def _is_tuple_annotation(annotation: Any) -> bool:
    from . import builtins as lang  # `tl.tuple` is the language's function
    return annotation is lang.tuple or annotation is builtins.tuple or annotation is tuple_value


def _as_kernel_value(value: Any) -> Any:
    """A plain Python constant as a constexpr; tuples item by item; others unchanged."""
    if isinstance(value, (tensor, constexpr, aggregate)):
        return value
    if isinstance(value, builtins.tuple):
        items = [_as_kernel_value(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple_value(items)
    if isinstance(value, list):
        return tuple_value(_as_kernel_value(v) for v in value)
    if value is None or isinstance(value, (bool, int, float, str)) or not callable(value):
        return constexpr(value)
    return value  # a function (@jit or not) stays itself


def _field_value(cls: type, name: str, value: Any) -> Any:
    """`value` as field `name` of `cls` holds it (see the module's docstring)."""
    from .core import constexpr as constexpr_class
    from .core import tensor as tensor_class
    annotation = cls.__tilec_annotations__.get(name)
    if annotation is constexpr_class:
        if isinstance(value, tensor):
            raise TilecSemanticError(f"field '{name}' of {cls.__name__} is tl.constexpr, but its value is only known "
                                     "when the kernel runs (Triton: Expected constexpr for attribute "
                                     f"'{name}', got tensor)")
        return constexpr(value)
    if annotation is tensor_class:
        if isinstance(value, tensor):
            return value
        raw = _unwrap(value)
        if isinstance(raw, (bool, int, float)) and inside_kernel():
            return current_semantic().to_tensor(raw)  # as Triton, whose assignment makes a number a tensor
        if isinstance(raw, (bool, int, float)):
            return constexpr(raw)  # built on the host: a scalar argument when passed to a kernel
        if not inside_kernel() and (is_host_array(raw) or _is_number(raw)):
            return raw  # built on the host: a pointer (a scalar) argument when passed to a kernel
        raise TypeError(f"field '{name}' of {cls.__name__} is a tl.tensor, not a {type(raw).__name__} (Triton: "
                        f"Expected tl.tensor for attribute '{name}', got {type(raw)})")
    if _is_tuple_annotation(annotation):
        raw = _unwrap(value)
        if not isinstance(raw, (builtins.tuple, list)):
            raise TypeError(f"field '{name}' of {cls.__name__} is a tuple, not a {type(raw).__name__} (Triton: "
                            f"Expected tuple for attribute '{name}', got {type(raw)})")
        return _as_kernel_value(raw if isinstance(raw, builtins.tuple) else builtins.tuple(raw))
    if isinstance(annotation, type) and annotation is not object:
        if not inside_kernel() and _is_host_descriptor_for(annotation, value):
            return value  # built on the host: a descriptor argument when passed to a kernel
        if not isinstance(value, annotation) and not isinstance(_unwrap(value), annotation):
            raise TypeError(f"field '{name}' of {cls.__name__} is a {annotation.__name__}, not a "
                            f"{type(_unwrap(value)).__name__} (Triton: Expected {annotation} for attribute "
                            f"'{name}', got {type(value)})")
        return value
    return _as_kernel_value(value)


def is_host_array(value: Any) -> bool:
    """An array a launch passes as a pointer (a torch tensor, a NumPy array, an object
    with `__cuda_array_interface__`, a `tilec.reinterpret` view); the launch checks it."""
    if isinstance(value, (tensor, constexpr, type)):
        return False
    # (a NumPy array has `ctypes`; a NumPy scalar, a number, has not)
    return hasattr(value, "data_ptr") or hasattr(value, "__cuda_array_interface__") or hasattr(value, "ctypes")


def _is_number(value: Any) -> bool:
    """A NumPy (or other) scalar number: it has a dtype and no shape of its own."""
    return hasattr(value, "dtype") and getattr(value, "shape", None) == () and not hasattr(value, "ctypes") \
        and not hasattr(value, "data_ptr")


def _is_host_descriptor_for(annotation: type, value: Any) -> bool:
    """A host tensor descriptor (tilec.tools.tensor_descriptor's, or Triton's) for a field
    annotated `tl.tensor_descriptor`."""
    from .block_pointer import TensorDescriptor
    return annotation is TensorDescriptor and type(value).__name__ == "TensorDescriptor" and \
        hasattr(value, "block_shape") and hasattr(value, "base")


def _resolved_annotations(cls: type) -> dict[str, Any]:
    """The class's own field annotations, strings evaluated where they can be."""
    own = inspect.get_annotations(cls)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001  a name only the class's scope knew: keep what is there
        hints = {}
    resolved = {}
    for name, annotation in own.items():
        if name in hints:
            annotation = hints[name]
        elif isinstance(annotation, str):
            try:
                annotation = eval(annotation, vars(inspect.getmodule(cls)) if inspect.getmodule(cls) else {})
            except Exception:  # noqa: BLE001  unresolvable: the field takes any value
                annotation = None
        resolved[name] = annotation
    return resolved


def aggregate_class(cls: type) -> type:
    """`@tilec.aggregate`: `cls` as a kernel value with fields (see the module's docstring)."""
    parents = [base for base in cls.__bases__ if base is not object]
    for base in parents:
        if not is_user_aggregate_class(base):
            raise TypeError(f"Aggregates can only inherit from other aggregates, but {cls.__name__} derives from "
                            f"{base.__name__}, which is not one: decorate it with @tilec.aggregate too")
    annotations: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for base in reversed(parents):
        annotations.update(base.__tilec_annotations__)
        defaults.update(base.__tilec_defaults__)
    own = _resolved_annotations(cls)
    annotations.update(own)
    namespace: dict[str, Any] = {}
    for name, value in cls.__dict__.items():
        if name in ("__dict__", "__weakref__", "__annotations__"):
            continue
        if name in own:
            if not callable(value) or isinstance(value, (tensor, constexpr)):
                defaults[name] = value  # a default of the field, not a class attribute
                continue
        if getattr(value, "__tilec_jit__", False):  # a @jit function (frontend.KernelFunction)
            value = _JitMethod(value)
        namespace[name] = value
    user_init = namespace.pop("__init__", None)
    if isinstance(user_init, _JitMethod):
        raise TypeError(f"the __init__ of aggregate {cls.__name__} cannot be a @jit function: make it a plain "
                        "method or a @tilec.constexpr_function")
    namespace.update(__tilec_fields__=builtins.tuple(annotations), __tilec_annotations__=annotations,
                     __tilec_defaults__=defaults, __tilec_user_init__=user_init, __annotations__=dict(own))
    made = type(cls.__name__, builtins.tuple(parents) or (UserAggregate,), namespace)
    made.__qualname__ = cls.__qualname__
    made.__module__ = cls.__module__
    return made


def cache_key_parts(cls: type) -> tuple[list[str], list[Any]]:
    """What a kernel using the aggregate class `cls` depends on: its fields and defaults
    and the source of its plain and constexpr methods (as strings), and its @jit methods
    (whose sources and callees the runtime adds), through its base classes too."""
    import hashlib
    texts: list[str] = []
    jit_functions: list[Any] = []
    for klass in cls.__mro__:
        if not is_user_aggregate_class(klass) or klass is UserAggregate:
            continue
        texts.append(f"aggregate {klass.__module__}.{klass.__qualname__} {klass.__tilec_annotations__!r} "
                     f"{klass.__tilec_defaults__!r}")
        members = dict(vars(klass), __init__=klass.__tilec_user_init__)
        for name, member in members.items():
            member = member.function if isinstance(member, _JitMethod) else member
            member = getattr(member, "__func__", member)  # staticmethod, classmethod
            if getattr(member, "__tilec_jit__", False):
                jit_functions.append(member)
                continue
            code = getattr(getattr(member, "fn", member), "__code__", None)
            if code is not None:
                try:
                    text = inspect.getsource(getattr(member, "fn", member))
                except (OSError, TypeError):
                    text = code.co_code.hex()
                texts.append(f"method {name}:{hashlib.sha256(text.encode()).hexdigest()}")
    return texts, jit_functions


@builtin
def aggregate_replace(instance: Any, **changes: Any) -> Any:
    """A copy of the aggregate `instance` with the fields named in `changes` replaced
    (Triton's `tl.aggregate_replace`); `instance` is unchanged."""
    if not isinstance(instance, UserAggregate):
        raise TypeError(f"aggregate_replace() expects an aggregate instance (a @tilec.aggregate class's), got "
                        f"{type(instance).__name__}")
    cls = type(instance)
    for name in changes:
        if name not in cls.__tilec_fields__:
            raise TypeError(f"{cls.__name__} has no field '{name}' (its fields: {', '.join(cls.__tilec_fields__)})")
    new = object.__new__(cls)
    for name in cls.__tilec_fields__:
        value = _field_value(cls, name, changes[name]) if name in changes else getattr(instance, name)
        object.__setattr__(new, name, value)
    object.__setattr__(new, "_tilec_built", True)
    return new


__all__ = ["BoundJitMethod", "UserAggregate", "aggregate_class", "aggregate_replace", "is_user_aggregate_class"]
