"""What a kernel computes while it is compiled: `constexpr_type` and `constexpr_function`.

- `tl.constexpr_type(v)` is the type of the compile-time value `v`, as Triton's: two are
  equal when their values are. tilec keeps a number assigned to an unannotated local a
  constant where Triton makes it a tensor (`x = 3`), so the type of a number also equals
  the dtype a tensor of it would have (`constexpr_type(3) == tl.int32`) and answers that
  dtype's questions (`is_int()`): code written for Triton that compares `x.type` with a
  dtype keeps working.
- `@tilec.constexpr_function` marks a plain Python function that kernels may call on
  compile-time values; it runs while compiling (in the interpreter, when the call is
  reached) and its result is a constexpr. `tilec.cdiv` and `tilec.next_power_of_2` are
  such functions, so `tl.arange(0, tilec.next_power_of_2(N))` works in a kernel as
  `triton.next_power_of_2` does. Called from host code it is the plain function.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from .core import ConstexprRequired, _unwrap, constexpr, dtype, inside_kernel, tensor
from ..torch_compile import launched_in_torch_compile


class constexpr_type:
    """The type of a compile-time value (`tl.constexpr(5).type == tl.constexpr_type(5)`)."""

    def __init__(self, value: Any):
        self.value = _unwrap(value)

    def _natural_dtype(self) -> dtype | None:
        """The dtype a tensor of this number would have; None for other values."""
        if isinstance(self.value, (bool, int, float)):
            from .semantic.common import python_scalar_type  # the one rule for constants' types
            try:
                return python_scalar_type(self.value)
            except Exception:  # noqa: BLE001  an integer beyond 64 bits has none
                return None
        return None

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, constexpr_type):
            return type(self.value) is type(other.value) and bool(self.value == other.value)
        if isinstance(other, dtype):
            return self._natural_dtype() == other
        return NotImplemented

    def __ne__(self, other: Any) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        natural = self._natural_dtype()  # equal to that dtype, so hashed as it is
        if natural is not None:
            return hash(natural)
        try:
            return hash(("constexpr_type", self.value))
        except TypeError:
            return hash(("constexpr_type", id(self.value)))

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value!r}]"

    def is_block(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        natural = self._natural_dtype()
        if natural is None:
            raise AttributeError(f"the type of the constant {self.value!r} has no attribute '{name}'")
        return getattr(natural, name)


class tuple_type:
    """The type of a tuple of kernel values (Triton's `tl.tuple_type`): the types of its
    items, and a namedtuple's field names (None for a plain tuple). Two are equal when
    both are, so `c.type == tl.tuple_type([tl.int32, tl.int32])` checks what a call
    returned (a constant item's type equals the dtype a tensor of it would have)."""

    def __init__(self, types: Any, fields: Any = None):
        self.types = [_unwrap(t) for t in types]
        fields = _unwrap(fields)
        self.fields = tuple(_unwrap(f) for f in fields) if fields is not None else None

    @property
    def name(self) -> str:
        if self.fields is None:
            return "[" + ",".join(str(t) for t in self.types) + "]"
        return "[" + ",".join(f"{field}:{t}" for field, t in zip(self.fields, self.types)) + "]"

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"tuple_type{self.name}"

    def __iter__(self):
        return iter(self.types)

    def __len__(self) -> int:
        return len(self.types)

    def __getitem__(self, index: int) -> Any:
        return self.types[_unwrap(index)]

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, tuple_type):
            return NotImplemented
        return len(self.types) == len(other.types) and all(a == b for a, b in zip(self.types, other.types)) \
            and self.fields == other.fields

    def __ne__(self, other: Any) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(("tuple_type", len(self.types), self.fields))

    def is_block(self) -> bool:
        return False

    def is_ptr(self) -> bool:
        return False


def type_of(value: Any) -> Any:
    """The type of a kernel value as Triton names it: a tensor's or a constant's own
    `type`; for a tuple (or namedtuple), the `tuple_type` of its items."""
    if isinstance(value, tuple):
        return tuple_type([type_of(item) for item in value], getattr(value, "_fields", None))
    ty = getattr(value, "type", None)
    if ty is not None:
        return ty
    return constexpr_type(value)


class ConstexprFunction:
    """A Python function that kernels call on compile-time values (`@tilec.constexpr_function`)."""

    def __init__(self, fn: Callable, runtime_hint: str | None = None):
        self.fn = fn
        functools.update_wrapper(self, fn)
        # What to use instead when an argument is known only at run time (None: nothing else).
        self.runtime_hint = runtime_hint

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return _BoundConstexprFunction(self, instance)  # a method: `self` first, as a bound method

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Host code calls the function as it is; torch.compile traces only host code (and
        # cannot trace the ContextVar that inside_kernel reads: asked first, no graph break).
        if launched_in_torch_compile() or not inside_kernel():
            if kwargs:
                return self.fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
            for a in args:  # grid lambdas call cdiv on plain ints: no list then
                if isinstance(a, constexpr):
                    return self.fn(*[_unwrap(a) for a in args])
            return self.fn(*args)
        for position, value in [*enumerate(args), *kwargs.items()]:
            if isinstance(value, tensor):
                which = f"argument {position + 1}" if isinstance(position, int) else f"argument '{position}'"
                instead = f" ({self.runtime_hint})" if self.runtime_hint else ""
                raise ConstexprRequired(f"{self.__name__}() runs while the kernel is compiled, and its {which} is "
                                        f"only known when the kernel runs{instead}", value,
                                        "pass it compile-time values")
        result = self.fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
        return result if isinstance(result, tensor) else constexpr(result)

    def source_key(self) -> str:
        """What identifies this function's code in a kernel's disk-cache key."""
        import hashlib
        import inspect
        try:
            text = inspect.getsource(self.fn)
        except (OSError, TypeError):
            code = getattr(self.fn, "__code__", None)
            text = code.co_code.hex() if code is not None else ""
        return f"{self.__module__}.{self.__qualname__}:{hashlib.sha256(text.encode()).hexdigest()}"

    def __repr__(self) -> str:
        return f"constexpr_function({self.__module__}:{self.__qualname__})"


class _BoundConstexprFunction(ConstexprFunction):
    """A constexpr function read as a method of an object: the object is its first argument."""

    def __init__(self, function: ConstexprFunction, instance: Any):
        super().__init__(function.fn, function.runtime_hint)
        self.instance = instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return super().__call__(self.instance, *args, **kwargs)


def constexpr_function(fn: Callable) -> ConstexprFunction:
    """Decorator: `fn` may be called from kernels on compile-time values, its result a constexpr."""
    return ConstexprFunction(fn)


@constexpr_function
def cdiv(x: int, y: int) -> int:
    """`x / y` rounded up, for integers: `(x + y - 1) // y`."""
    return (x + y - 1) // y


cdiv.runtime_hint = "tl.cdiv divides values known only at run time"


@constexpr_function
def get_int_dtype(bitwidth: int, signed: bool):
    """The integer dtype of `bitwidth` bits, signed or not (Triton's core.get_int_dtype)."""
    from .core import dtype
    if bitwidth == 1:
        return dtype("int1")
    if bitwidth not in (8, 16, 32, 64):
        raise ValueError(f"no integer type of {bitwidth} bits (1, 8, 16, 32 or 64)")
    return dtype(f"{'' if signed else 'u'}int{bitwidth}")


@constexpr_function
def next_power_of_2(n: int) -> int:
    """The smallest power of 2 that is at least `n`; 0 for n <= 0, as Triton's (whose bit
    trick gives 0 there), so `next_power_of_2(0)` stays 0."""
    n = int(n)
    return 0 if n <= 0 else 1 << (n - 1).bit_length()



__all__ = ["ConstexprFunction", "cdiv", "constexpr_function", "constexpr_type", "next_power_of_2", "tuple_type",
           "type_of"]
