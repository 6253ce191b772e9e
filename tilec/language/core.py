"""The user-facing values of the tile language: dtypes, `constexpr` and `tensor`.

Everything here is backend-neutral. A `tensor` wraps a *handle* (an MLIR value when
compiling, a NumPy array when interpreting) and a tilec type. Operators on tensors and
the builtins in `builtins.py` forward to the active `Semantic` (see `semantic/`), which
alone decides type promotion, broadcasting and legality, and asks its builder to emit
the operation.
"""
from __future__ import annotations

import contextvars
import functools
import math
import types
from typing import Any, Callable, Sequence

# ----------------------------------------------------------------------------- dtypes


class dtype:
    """A scalar element type. Instances are interned: compare with `==` or `is`."""

    # Lists, as Triton's (test suites concatenate them: SINT_TYPES + STANDARD_FP_TYPES).
    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP8_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    FP_TYPES = FP8_TYPES + STANDARD_FP_TYPES
    OTHER_TYPES = ["void"]

    _interned: dict[str, "dtype"] = {}

    def __new__(cls, *args, **kwargs):
        if cls is dtype and args and args[0] in dtype._interned:
            return dtype._interned[args[0]]
        return super().__new__(cls)

    def __init__(self, name: str):
        if getattr(self, "name", None) is not None:
            return
        if name not in self.SINT_TYPES + self.UINT_TYPES + self.FP_TYPES + self.OTHER_TYPES:
            raise ValueError(f"unknown dtype {name!r}")
        self.name = name
        if type(self) is dtype:
            dtype._interned[name] = self

    # -- classification
    def is_int(self) -> bool:
        return self.name in self.SINT_TYPES or self.name in self.UINT_TYPES

    def is_int_signed(self) -> bool:
        return self.name in self.SINT_TYPES

    def is_int_unsigned(self) -> bool:
        return self.name in self.UINT_TYPES

    def is_bool(self) -> bool:
        return self.name == "int1"

    # One predicate per integer type, as Triton's (`x.dtype.is_int64()` in FlagGems).
    def is_int1(self) -> bool:
        return self.name == "int1"

    def is_int8(self) -> bool:
        return self.name == "int8"

    def is_int16(self) -> bool:
        return self.name == "int16"

    def is_int32(self) -> bool:
        return self.name == "int32"

    def is_int64(self) -> bool:
        return self.name == "int64"

    def is_uint8(self) -> bool:
        return self.name == "uint8"

    def is_uint16(self) -> bool:
        return self.name == "uint16"

    def is_uint32(self) -> bool:
        return self.name == "uint32"

    def is_uint64(self) -> bool:
        return self.name == "uint64"

    def is_floating(self) -> bool:
        return self.name in self.FP_TYPES

    def is_fp8(self) -> bool:
        return self.name in self.FP8_TYPES

    def is_fp8e4nv(self) -> bool:
        return self.name == "fp8e4nv"

    def is_fp8e5(self) -> bool:
        return self.name == "fp8e5"

    def is_fp8e4b15(self) -> bool:
        return self.name == "fp8e4b15"

    def is_fp8e4b8(self) -> bool:
        return self.name == "fp8e4b8"

    def is_fp8e5b16(self) -> bool:
        return self.name == "fp8e5b16"

    def is_fp16(self) -> bool:
        return self.name == "fp16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "fp32"

    def is_fp64(self) -> bool:
        return self.name == "fp64"

    def is_void(self) -> bool:
        return self.name == "void"

    def is_ptr(self) -> bool:
        return False

    def is_block(self) -> bool:
        return False

    @property
    def scalar(self) -> "dtype":
        return self

    @property
    def value(self) -> "dtype":
        """The dtype itself: a dtype a @jit function receives is a constant, and Triton code
        reads its `.value` (FlagGems' `get_dtype_min(dtype)`); so in the interpreter too."""
        return self

    @property
    def primitive_bitwidth(self) -> int:
        if self.is_bool():
            return 1
        if self.is_fp8():
            return 8
        digits = "".join(ch for ch in self.name if ch.isdigit())
        return int(digits) if digits else 0

    @property
    def int_bitwidth(self) -> int:
        assert self.is_int()
        return self.primitive_bitwidth

    @property
    def fp_mantissa_width(self) -> int:
        """Bits of a float's stored mantissa (fp32: 23, bf16: 7)."""
        if self.name not in _MANTISSA_WIDTHS:
            raise TypeError(f"{self!r} is not a floating-point type; fp_mantissa_width is for floats")
        return _MANTISSA_WIDTHS[self.name]

    @property
    def exponent_bias(self) -> int:
        """What is subtracted from a float's stored exponent (fp32: 127, fp8e4b15: 15)."""
        if self.name not in _EXPONENT_BIASES:
            raise TypeError(f"{self!r} is not a floating-point type; exponent_bias is for floats")
        return _EXPONENT_BIASES[self.name]

    @property
    def itemsize(self) -> int:
        """Bytes one element takes in memory (bools are stored as one byte)."""
        return max(1, self.primitive_bitwidth // 8)

    def kind(self) -> int:
        """Promotion kind, as in Triton: bool < integer < floating point.

        A Python scalar whose kind is not above a tensor's takes the tensor's type.
        """
        if self.is_bool():
            return 0
        if self.is_int():
            return 1
        return 2

    def to_ir(self, builder) -> Any:
        return builder.get_type(self)

    # -- identity
    def __eq__(self, other) -> bool:
        if not isinstance(other, dtype):
            return NotImplemented  # a constant's type (compile_time.constexpr_type) may equal a dtype
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __repr__(self) -> str:
        return f"tl.{_REPR_NAMES.get(self.name, self.name)}"

    def __str__(self) -> str:
        return self.name

    # `tl.float32(x)` would be a cast in Triton's language; not supported, say so.
    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self!r} is a dtype; use `x.to({self!r})` to convert a value")


_MANTISSA_WIDTHS = {"fp8e4nv": 3, "fp8e5": 2, "fp8e4b15": 3, "fp8e4b8": 3, "fp8e5b16": 2,
                    "fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}
_EXPONENT_BIASES = {"fp8e4nv": 7, "fp8e5": 15, "fp8e4b15": 15, "fp8e4b8": 8, "fp8e5b16": 16,
                    "fp16": 15, "bf16": 127, "fp32": 127, "fp64": 1023}

_REPR_NAMES = {
    "int1": "int1", "fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "fp8e4b15": "float8e4b15",
    "fp8e4b8": "float8e4b8", "fp8e5b16": "float8e5b16", "fp16": "float16",
    "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
}


class pointer_type(dtype):
    """A pointer to elements of `element_ty` in global memory; `const` for data the kernel
    must not write (a parameter annotated `tl.const`)."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        if not isinstance(element_ty, dtype):
            raise TypeError(f"pointer_type expects a dtype, got {element_ty!r}")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = bool(const)
        self.name = f"pointer<{element_ty}>"

    def is_ptr(self) -> bool:
        return True

    @property
    def primitive_bitwidth(self) -> int:
        return 64

    @property
    def itemsize(self) -> int:
        return 8

    def kind(self) -> int:
        return 3

    def __eq__(self, other) -> bool:
        return isinstance(other, pointer_type) and other.element_ty == self.element_ty and other.const == self.const

    def __hash__(self) -> int:
        return hash(("pointer_type", self.element_ty, self.const))

    def __repr__(self) -> str:
        return f"tl.pointer_type({self.element_ty!r}{', const=True' if self.const else ''})"

    def __str__(self) -> str:
        return f"*const {self.element_ty}" if self.const else f"*{self.element_ty}"


class block_type(dtype):
    """The type of a tensor: a shape (powers of two) of `element_ty`."""

    def __init__(self, element_ty: dtype, shape: Sequence[int]):
        self.element_ty = element_ty
        self.shape = tuple(int(s) for s in shape)
        if not self.shape:
            raise ValueError("a block type needs at least one dimension")
        self.numel = math.prod(self.shape)
        self.name = f"<{self.shape}, {element_ty}>"

    def is_block(self) -> bool:
        return True

    @property
    def scalar(self) -> dtype:
        return self.element_ty

    def get_block_shapes(self) -> tuple[int, ...]:
        return self.shape

    def is_ptr(self) -> bool:
        return False

    def __eq__(self, other) -> bool:
        return isinstance(other, block_type) and other.shape == self.shape and other.element_ty == self.element_ty

    def __hash__(self) -> int:
        return hash(("block_type", self.shape, self.element_ty))

    def __repr__(self) -> str:
        return f"block_type({self.element_ty!r}, {list(self.shape)})"

    def __str__(self) -> str:
        return f"{self.element_ty}[{', '.join(map(str, self.shape))}]"


void = dtype("void")
int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float8e4nv = dtype("fp8e4nv")
float8e5 = dtype("fp8e5")
# Formats without a conversion instruction on NVIDIA GPUs, converted in software (see
# docs/language.md): 4 exponent bits with bias 15 (largest finite 1.75), and the two
# "fnuz" formats (no infinities, no negative zero, NaN is 0x80) with biases 8 and 16.
float8e4b15 = dtype("fp8e4b15")
float8e4b8 = dtype("fp8e4b8")
float8e5b16 = dtype("fp8e5b16")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")

# Triton's short spellings, used in signatures ("*fp32", "i32").
SIGNATURE_NAMES: dict[str, dtype] = {
    "i1": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64,
    "u1": int1, "u8": uint8, "u16": uint16, "u32": uint32, "u64": uint64,
    "fp8e4nv": float8e4nv, "fp8e5": float8e5, "fp8e4b15": float8e4b15, "fp8e4b8": float8e4b8,
    "fp8e5b16": float8e5b16, "fp16": float16, "bf16": bfloat16,
    "fp32": float32, "fp64": float64,
}


def dtype_from_signature(text: str) -> dtype:
    """'*fp32' -> pointer_type(float32); 'i32' -> int32."""
    text = text.strip()
    if text.startswith("*"):
        return pointer_type(dtype_from_signature(text[1:]))
    try:
        return SIGNATURE_NAMES[text]
    except KeyError:
        raise ValueError(f"unknown type {text!r} in signature; expected one of "
                         f"{sorted(SIGNATURE_NAMES)} or '*' followed by one") from None


def signature_name(ty: dtype) -> str:
    """Inverse of `dtype_from_signature`."""
    if isinstance(ty, pointer_type):
        return "*" + signature_name(ty.element_ty)
    for key, value in SIGNATURE_NAMES.items():
        if value == ty and key != "u1":  # "u1" is an alias of "i1"
            return key
    raise ValueError(f"no signature name for {ty}")


# ----------------------------------------------------------------------------- constexpr


class constexpr:
    """A value known at compile time. Arithmetic on constexprs folds in Python."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __index__(self) -> int:
        return self.value.__index__()

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __hash__(self) -> int:
        return hash(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    def __iter__(self):
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)

    def __getitem__(self, index):
        return constexpr(self.value[_unwrap(index)])

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __getattr__(self, name: str):
        # A number has the tensor methods a tensor of it would (`acc = 0; acc.to(tl.int64)`),
        # as in Triton; anything else is the value's own attribute.
        value = object.__getattribute__(self, "value")
        if isinstance(value, (bool, int, float)) and not name.startswith("_") and not hasattr(value, name) \
                and _active_semantic.get() is not None:
            if name == "to":  # the number itself is converted: to fp8, a constant (semantic.cast)
                def to(dtype, fp_downcast_rounding=None, bitcast=False):
                    return current_semantic().cast(value, _unwrap(dtype), bitcast=bool(_unwrap(bitcast)),
                                                   fp_downcast_rounding=_unwrap(fp_downcast_rounding))
                to.__tilec_builtin__ = True
                return to
            as_tensor = current_semantic().to_tensor(value)
            if hasattr(as_tensor, name):
                return getattr(as_tensor, name)
        return getattr(value, name)

    @property
    def type(self) -> Any:
        """The type of this compile-time value, `tl.constexpr_type(value)` (as Triton's);
        for a number it also equals the dtype a tensor of it would have (compile_time.py)."""
        from .compile_time import constexpr_type
        return constexpr_type(self.value)

    @property
    def dtype(self) -> "dtype":
        """A number's type as a tensor would have it (`3`: int32, `2**40`: int64, `1.5`:
        fp32, `True`: int1), so that `x = 3; x.dtype` works in a kernel as in Triton."""
        value = self.value
        if isinstance(value, (bool, int, float)):
            from .semantic.common import python_scalar_type  # the one rule for constants' types
            return python_scalar_type(value)
        raise AttributeError(f"a constant {type(value).__name__} has no dtype")

    # Arithmetic folds when both sides are constant; with a tensor on the other side,
    # NotImplemented makes Python call the tensor's reflected method.
    def __add__(self, other): return _fold(lambda a, b: a + b, self, other)
    def __radd__(self, other): return _fold(lambda a, b: b + a, self, other)
    def __sub__(self, other): return _fold(lambda a, b: a - b, self, other)
    def __rsub__(self, other): return _fold(lambda a, b: b - a, self, other)
    def __mul__(self, other): return _fold(lambda a, b: a * b, self, other)
    def __rmul__(self, other): return _fold(lambda a, b: b * a, self, other)
    def __truediv__(self, other): return _fold(lambda a, b: a / b, self, other)
    def __rtruediv__(self, other): return _fold(lambda a, b: b / a, self, other)
    def __floordiv__(self, other): return _fold(lambda a, b: a // b, self, other)
    def __rfloordiv__(self, other): return _fold(lambda a, b: b // a, self, other)
    def __mod__(self, other): return _fold(lambda a, b: a % b, self, other)
    def __rmod__(self, other): return _fold(lambda a, b: b % a, self, other)
    def __pow__(self, other): return _fold(lambda a, b: a ** b, self, other)
    def __rpow__(self, other): return _fold(lambda a, b: b ** a, self, other)
    def __and__(self, other): return _fold(lambda a, b: a & b, self, other)
    def __rand__(self, other): return _fold(lambda a, b: b & a, self, other)
    def __or__(self, other): return _fold(lambda a, b: a | b, self, other)
    def __ror__(self, other): return _fold(lambda a, b: b | a, self, other)
    def __xor__(self, other): return _fold(lambda a, b: a ^ b, self, other)
    def __rxor__(self, other): return _fold(lambda a, b: b ^ a, self, other)
    def __lshift__(self, other): return _fold(lambda a, b: a << b, self, other)
    def __rlshift__(self, other): return _fold(lambda a, b: b << a, self, other)
    def __rshift__(self, other): return _fold(lambda a, b: a >> b, self, other)
    def __rrshift__(self, other): return _fold(lambda a, b: b >> a, self, other)
    def __lt__(self, other): return _fold(lambda a, b: a < b, self, other)
    def __le__(self, other): return _fold(lambda a, b: a <= b, self, other)
    def __gt__(self, other): return _fold(lambda a, b: a > b, self, other)
    def __ge__(self, other): return _fold(lambda a, b: a >= b, self, other)
    def __eq__(self, other): return _fold(lambda a, b: a == b, self, other)
    def __ne__(self, other): return _fold(lambda a, b: a != b, self, other)
    def __neg__(self): return constexpr(-self.value)
    def __pos__(self): return constexpr(+self.value)
    def __invert__(self): return constexpr(~self.value)
    def __abs__(self): return constexpr(abs(self.value))


def _fold(fn, a: constexpr, b):
    if isinstance(b, tensor):
        return NotImplemented
    return constexpr(fn(a.value, _unwrap(b)))


def _unwrap(value: Any) -> Any:
    """constexpr(v) -> v; anything else unchanged."""
    return value.value if isinstance(value, constexpr) else value


def _unwrap_shape(shape) -> tuple:
    """A shape argument as a tuple of its (unwrapped) dimensions; validated by the semantic layer."""
    shape = _unwrap(shape)
    if isinstance(shape, (int, tensor)):
        return (shape,)
    if not hasattr(shape, "__iter__") or isinstance(shape, str):
        raise TilecSemanticError(f"a shape must be a tuple of constexpr ints, such as (16, 32), got {shape!r}")
    return tuple(_unwrap(s) for s in shape)


class const:
    """Annotates a pointer parameter whose data the kernel only reads (`x_ptr: tl.const`):
    storing through it, or through a pointer computed from it, is a compile error."""


def is_const_annotation(annotation: Any) -> bool:
    """True for `tl.const`, `"tl.const"`, `"const"` annotations."""
    if annotation is const:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "const"


def scalar_annotation_type(annotation: Any) -> "dtype | None":
    """The scalar dtype a parameter annotation names (`tl.float16`, `"tl.uint8"`), or None."""
    if isinstance(annotation, str):
        annotation = globals().get(annotation.split(".")[-1])
    if isinstance(annotation, dtype) and not isinstance(annotation, (pointer_type, block_type)) \
            and not annotation.is_void():
        return annotation
    return None


def is_constexpr_annotation(annotation: Any) -> bool:
    """True for `tl.constexpr`, `"tl.constexpr"`, `"constexpr"` annotations."""
    if annotation is constexpr:
        return True
    if isinstance(annotation, str):
        return annotation.split(".")[-1] == "constexpr"
    return False


# ----------------------------------------------------------------------------- semantic context

_active_semantic: contextvars.ContextVar = contextvars.ContextVar("tilec_semantic", default=None)


def current_semantic():
    """The semantic layer of the kernel being compiled or interpreted right now."""
    sem = _active_semantic.get()
    if sem is None:
        raise RuntimeError(
            "tilec.language functions can only be called inside a @tilec.jit function "
            "(compiled, or run with TILEC_INTERPRET=1)")
    return sem


def inside_kernel() -> bool:
    """Whether a kernel is being compiled or interpreted right now (not host code)."""
    return _active_semantic.get() is not None


_active_caller: contextvars.ContextVar = contextvars.ContextVar("tilec_caller", default=None)


def call_kernel_function(fn: Any, args: Sequence[Any], kwargs: dict[str, Any] | None = None) -> Any:
    """Calls the @jit function `fn` from inside a kernel (e.g. a reduction's combiner).

    The compiler installs a caller that generates the callee's code in place; the
    interpreter installs one running patched copies (or none: the function simply runs).
    """
    caller = _active_caller.get()
    if caller is not None:
        return caller(fn, list(args), dict(kwargs or {})) if kwargs else caller(fn, list(args))
    return getattr(fn, "fn", fn)(*args, **(kwargs or {}))


class LibraryFunction:
    """A function of the language written in the language itself (`tl.sort`, `tl.rand`, ...).

    The language layer sits below the frontend and the runtime, so it cannot make these
    @jit functions; it only marks them. The code generator compiles a library function
    as it compiles a call to a @jit function (inlined, parsed once), and the interpreter
    runs it as it runs a @jit function a kernel calls. Called directly from Python (the
    interpreter does so), it runs the function.
    """

    __tilec_jit__ = True  # compiled as a @jit function is (see frontend.KernelFunction)

    def __init__(self, fn: Callable):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"LibraryFunction({self.__module__}:{self.__qualname__})"


def library_function(fn: Callable) -> LibraryFunction:
    """Decorator marking `fn` as a library function of the language (see LibraryFunction)."""
    return LibraryFunction(fn)


# @jit functions of the language that are also tensor methods (x.sort(), x.flip(), ...),
# registered by `tensor_method`.
_TENSOR_METHODS: dict[str, Any] = {}


def tensor_method(fn: Any) -> Any:
    """Makes the @jit function `fn` callable as a method of tensors: `x.name(...)` is
    `name(x, ...)`."""
    _TENSOR_METHODS[getattr(fn, "__name__", None) or fn.fn.__name__] = fn
    return fn


class activate_caller:
    def __init__(self, caller):
        self.caller = caller
        self._token = None

    def __enter__(self):
        self._token = _active_caller.set(self.caller)
        return self.caller

    def __exit__(self, *exc):
        _active_caller.reset(self._token)
        return False


class activate_semantic:
    """`with activate_semantic(sem): ...` makes `sem` the one builtins talk to."""

    def __init__(self, semantic):
        self.semantic = semantic
        self._token = None

    def __enter__(self):
        self._token = _active_semantic.set(self.semantic)
        return self.semantic

    def __exit__(self, *exc):
        _active_semantic.reset(self._token)
        return False


# ----------------------------------------------------------------------------- tensor


class tensor:
    """A scalar or block value inside a kernel."""

    def __init__(self, handle: Any, type: dtype):
        self.handle = handle
        self.type = type
        self.dtype = type.scalar
        self.shape = shape_value(constexpr(s) for s in type.shape) if type.is_block() else shape_value()

    # -- plain attributes
    @property
    def numel(self) -> constexpr:
        return constexpr(self.type.numel if self.type.is_block() else 1)

    def __repr__(self) -> str:
        return f"tensor({self.type})"

    def __str__(self) -> str:
        return f"tensor({self.type})"

    # -- the interpreter uses these; the compiler refuses them (see Semantic.to_python_bool)
    def __bool__(self) -> bool:
        return current_semantic().to_python_bool(self)

    def __index__(self) -> int:
        return current_semantic().to_python_int(self)

    def __int__(self) -> int:
        return current_semantic().to_python_int(self)

    def __float__(self) -> float:
        return current_semantic().to_python_float(self)

    def __iter__(self):
        raise TypeError("a tensor cannot be iterated over in a kernel; use tl.static_range or index computations")

    def __len__(self) -> int:
        # len(x) of a block is its first dimension, as the compiler reads it (frontend/calls.py)
        if not self.type.is_block():
            raise TilecSemanticError(f"len() needs a block or a tuple, and this is a scalar ({self.type})")
        return self.type.shape[0]

    def __hash__(self) -> int:
        return id(self)

    # -- arithmetic
    def __add__(self, other): return current_semantic().add(self, other)
    def __radd__(self, other): return current_semantic().add(other, self)
    def __sub__(self, other): return current_semantic().sub(self, other)
    def __rsub__(self, other): return current_semantic().sub(other, self)
    def __mul__(self, other): return current_semantic().mul(self, other)
    def __rmul__(self, other): return current_semantic().mul(other, self)
    def __truediv__(self, other): return current_semantic().truediv(self, other)
    def __rtruediv__(self, other): return current_semantic().truediv(other, self)
    def __floordiv__(self, other): return current_semantic().floordiv(self, other)
    def __rfloordiv__(self, other): return current_semantic().floordiv(other, self)
    def __mod__(self, other): return current_semantic().mod(self, other)
    def __rmod__(self, other): return current_semantic().mod(other, self)
    def __neg__(self): return current_semantic().minus(self)
    def __pos__(self): return self
    def __invert__(self): return current_semantic().invert(self)
    def __and__(self, other): return current_semantic().and_(self, other)
    def __rand__(self, other): return current_semantic().and_(other, self)
    def __or__(self, other): return current_semantic().or_(self, other)
    def __ror__(self, other): return current_semantic().or_(other, self)
    def __xor__(self, other): return current_semantic().xor_(self, other)
    def __rxor__(self, other): return current_semantic().xor_(other, self)
    def __lshift__(self, other): return current_semantic().shl(self, other)
    def __rlshift__(self, other): return current_semantic().shl(other, self)
    def __rshift__(self, other): return current_semantic().shr(self, other)
    # Triton takes the signedness of a reflected shift from the tensor, the right operand.
    def __rrshift__(self, other): return current_semantic().shr(other, self, signed_from=self)
    def __pow__(self, other): raise TilecSemanticError(_NO_POWER)
    def __rpow__(self, other): raise TilecSemanticError(_NO_POWER)

    # -- comparisons
    def __lt__(self, other): return current_semantic().compare("lt", self, other)
    def __le__(self, other): return current_semantic().compare("le", self, other)
    def __gt__(self, other): return current_semantic().compare("gt", self, other)
    def __ge__(self, other): return current_semantic().compare("ge", self, other)
    def __eq__(self, other): return current_semantic().compare("eq", self, other)
    def __ne__(self, other): return current_semantic().compare("ne", self, other)

    # Python's `and`/`or`/`not` on tensors: the code generator maps them to these.
    def logical_and(self, other): return current_semantic().logical_and(self, other)
    def logical_or(self, other): return current_semantic().logical_or(self, other)
    def logical_not(self): return current_semantic().logical_not(self)

    # -- indexing: x[:, None], x[None, :]
    def __getitem__(self, slices):
        return current_semantic().subscript(self, slices)

    def __setitem__(self, key, value):
        raise TypeError("tensors are immutable in a kernel: item assignment is not supported; "
                        "build a new tensor with tl.where")

    # -- methods (Triton's tensor methods)
    def to(self, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None):  # _semantic: as builtin()'s
        return current_semantic().cast(self, _unwrap(dtype), bitcast=bool(_unwrap(bitcast)),
                                       fp_downcast_rounding=_unwrap(fp_downcast_rounding))

    @property
    def T(self):
        from . import builtins
        return builtins.trans(self)

    def __getattr__(self, name):
        # Tensor methods that mirror builtins (x.sum(axis=0), x.to(...), ...).
        from . import builtins
        fn = getattr(builtins, name, None)
        if fn is not None and getattr(fn, "__tilec_builtin__", False) and getattr(fn, "__tilec_method__", False):
            method = functools.partial(fn, self)  # a partial, so that its signature is the builtin's, less `self`
            method.__tilec_builtin__ = True
            method.__name__ = name
            return method
        jit_fn = _TENSOR_METHODS.get(name)
        if jit_fn is not None:
            def jit_method(*args, **kwargs):
                return call_kernel_function(jit_fn, [self, *args], kwargs)
            jit_method.__tilec_builtin__ = True
            jit_method.__name__ = name
            return jit_method
        raise AttributeError(f"tensor has no attribute {name!r}")


class shape_value(tuple):
    """A tensor's `shape`: a tuple of constexprs that equals a list or tuple of the same
    numbers (`x.shape == [8]`), in the interpreter as in the compiler."""

    def __eq__(self, other):
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(_unwrap(a) == _unwrap(b) for a, b in zip(self, other))
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__


class tuple_value(tuple):
    """A tuple of kernel values (returned by split, reductions of tuples, calls)."""


class list_value(tuple):
    """A list literal in a kernel. As in Triton, it is a tuple: fixed, and good for
    shapes, unpacking and unrolled loops; its own type lets errors call it a list."""


class aggregate:
    """A composite kernel value (a block pointer, a tensor descriptor) made of fields.

    Subclasses name their fields in `__tilec_fields__`; each holds a tensor, a constexpr,
    a tuple of those, or another aggregate. Control flow carries aggregates by their
    tensors (loops, `if` merges), so a field's structure must not change in a loop.
    """
    __tilec_fields__: tuple[str, ...] = ()

    def tilec_fields(self) -> list:
        return [getattr(self, name) for name in self.__tilec_fields__]

    def tilec_replace(self, values: list) -> "aggregate":
        import copy
        new = copy.copy(self)
        for name, value in zip(self.__tilec_fields__, values):
            setattr(new, name, value)
        return new


# ----------------------------------------------------------------------------- builtin marker


def builtin(fn=None, *, method: bool = False):
    """Marks a function as a language builtin callable from kernels.

    `method=True` also exposes it as a tensor method (`x.sum()` for `tl.sum(x)`).

    A builtin also accepts, and ignores, the keywords `_semantic` and `_generator`, which
    Triton's builtins take and which Triton programs pass by hand in the plain methods of
    their aggregates (`self.offs = tl.arange(0, 4, _semantic=_semantic)`): tilec's
    builtins talk to the active semantic layer (`current_semantic`) instead.
    """

    def wrap(f):
        if isinstance(f, types.FunctionType):
            f = _accepting_triton_keywords(f)
        f.__tilec_builtin__ = True
        f.__tilec_method__ = method
        return f

    return wrap(fn) if fn is not None else wrap


def _accepting_triton_keywords(f: Callable) -> Callable:
    """`f`, also accepting Triton's `_semantic` and `_generator` keywords (dropped)."""
    @functools.wraps(f)  # the signature shown, and checked, stays `f`'s
    def call(*args, **kwargs):
        if kwargs:
            kwargs.pop("_semantic", None)
            kwargs.pop("_generator", None)
        return f(*args, **kwargs)
    return call


def is_builtin(fn: Any) -> bool:
    return getattr(fn, "__tilec_builtin__", False)


class TilecSemanticError(Exception):
    """A rule of the language was broken. The frontend adds the source location."""


_NO_POWER = "`**` is not supported on tensors; use tl.exp/tl.log or repeated multiplication"


class StaticAssertionFailure(TilecSemanticError):
    """A failed `tl.static_assert`: the user's own assertion, not a rule of the language.
    Its CompilationError has no `__cause__` (as Triton's CompileTimeAssertionFailure):
    the assertion's message is all there is to say."""

    caused_by_nothing = True


class ConstexprRequired(TilecSemanticError):
    """A value known only at run time (`value`, a tensor) where the language needs a
    compile-time one: a shape, an arange bound, an axis. The message is `message`, then
    `hint`, which says how to make the value constant; the frontend replaces the hint by
    the parameter to declare tl.constexpr when `value` is a kernel parameter's."""

    def __init__(self, message: str, value: Any, hint: str = "mark it tl.constexpr"):
        self.message, self.value, self.hint = message, value, hint
        super().__init__(f"{message}; {hint}")


def next_power_of_2(n: int) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def is_power_of_2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def cdiv(x: int, y: int) -> int:
    return (x + y - 1) // y


def language_name(module: str, name: str) -> Any:
    """`name` of tilec.language, for a submodule's `__getattr__`: Triton code reads the
    language's names from its submodules too (`triton.language.core.static_range`,
    `tl.standard.zeros_like`). Only once the package is loaded; else AttributeError."""
    import sys
    language = sys.modules.get("tilec.language")
    if name.startswith("__") or language is None or name not in vars(language):
        raise AttributeError(f"module 'tilec.language.{module}' has no attribute {name!r}")
    return vars(language)[name]


def __getattr__(name: str):
    """Every name of tilec.language (language_name), and Triton's `core.get_int_dtype`."""
    if name == "get_int_dtype":
        from .compile_time import get_int_dtype
        return get_int_dtype
    return language_name("core", name)
