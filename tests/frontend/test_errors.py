"""Bad kernels: each must fail with a `tilec.CompilationError` that points at its source.

A good error names the file and the exact line, quotes that line, puts a caret under the
offending construct, and ends with one sentence saying what is wrong -- and shows no
Python traceback and nothing of tilec's own files. Each bad kernel below marks its
offending line with the comment `# <-`; the tests find the line number from the source,
so the kernels can move freely.

Most cases are registered with `@bad_kernel("fragment of the message", ...)` and checked by
one parametrized test; calls between @jit functions, kernels defined inside a test
function and `tilec.compile` misuse have their own tests at the end. Each case says in a
comment what Triton does with the same kernel. Known bugs are strict xfails.

Parameters are compiled as "*fp32" when named `*_ptr`, "i32" otherwise, unless the case
gives a signature; tl.constexpr parameters take their values from `constexprs`.
"""
import inspect
import math
import os
import re

import numpy as np

import pytest

import tilec
import tilec.language as tl
from tilec import CompilationError
from tilec_testing import assert_points_at, marked_line


def printed_cause(error: BaseException):
    """The cause Python prints above an error (its own field, not a property)."""
    return BaseException.__dict__["__cause__"].__get__(error)


TILEC_DIR = os.path.dirname(tilec.__file__)
CASES = []


def bad_kernel(fragment: str, *, signature: dict | None = None, constexprs: dict | None = None,
               caret_at: str | None = None, xfail: str | None = None):
    """Registers the decorated function as a @tilec.jit kernel that must fail to compile.

    `fragment` must appear in the error's sentence; `caret_at`, when given, is the text the
    caret must point at on the marked line; `xfail` marks a known bug (strict).
    """
    def register(fn):
        kernel = tilec.jit(fn)
        marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
        CASES.append(pytest.param(kernel, fragment, signature or {}, constexprs or {}, caret_at,
                                  id=fn.__name__, marks=marks))
        return kernel
    return register


def default_signature(kernel, signature: dict, constexprs: dict) -> dict:
    result = {}
    for name, param in inspect.signature(kernel.fn).parameters.items():
        if name in constexprs or param.annotation is tl.constexpr:
            continue
        result[name] = signature.get(name, "*fp32" if name.endswith("_ptr") else "i32")
    return result


def compile_error(kernel, signature: dict | None = None, constexprs: dict | None = None) -> CompilationError:
    """The CompilationError that compiling `kernel` raises (failing the test if none is raised)."""
    constexprs = constexprs or {}
    with pytest.raises(CompilationError) as info:
        tilec.compile(kernel, signature=default_signature(kernel, signature or {}, constexprs),
                      constexprs=constexprs, target="sm_90")
    return info.value


def assert_clear_error(err: CompilationError, kernel, fragment: str, caret_at: str | None = None) -> None:
    text = str(err)
    assert_points_at(text, kernel, caret_at=caret_at)
    lineno, _ = marked_line(kernel)
    assert (err.location.filename, err.location.lineno) == (__file__, lineno)
    sentence = text.splitlines()[-1]
    assert sentence == err.message and "\n" not in err.message, f"the message is not one final line:\n{text}"
    assert fragment in sentence, f"{fragment!r} not in the message:\n{text}"
    assert not re.match(r"[A-Z]\w*(Error|Exception): ", sentence), f"a Python exception's name leaks:\n{text}"
    assert "Traceback" not in text and TILEC_DIR not in text, f"Python internals leak into the error:\n{text}"
    # Raised `from None`: Python prints no chained traceback above it (`__cause__` still
    # gives the error it was located from, as Triton's does: tilec.errors.CompilationError).
    assert printed_cause(err) is None and (err.__context__ is None or err.__suppress_context__)


# ============================================================================= unsupported syntax

# Triton: UnsupportedLanguageConstruct "unsupported AST node type: Try".
@bad_kernel("try/except is not supported in kernels")
def try_statement(x_ptr):
    try:  # <-
        tl.store(x_ptr, 1.0)
    except Exception:
        pass


# Triton: "unsupported AST node type: With" (newer versions accept only their own context managers).
@bad_kernel("`with` is not supported in kernels")
def with_statement(x_ptr):
    with open("log.txt"):  # <-
        pass


# Triton: "unsupported AST node type: Lambda".
@bad_kernel("lambda functions are not supported in kernels", caret_at="lambda")
def lambda_expression(x_ptr):
    double = lambda v: v * 2  # <-  # noqa: E731


# Triton: "unsupported AST node type: ClassDef".
@bad_kernel("classes cannot be defined inside kernels")
def class_definition(x_ptr):
    class Point:  # <-
        pass


# Triton: "unsupported AST node type: Yield".
@bad_kernel("`yield` is not supported in kernels")
def yield_expression(x_ptr):
    yield 1  # <-


# Triton: visit_Subscript_Store asserts the target is a tl.tuple (an AssertionError).
@bad_kernel("item assignment is not supported", caret_at="x[0]")
def item_assignment(x_ptr):
    x = tl.arange(0, 16)
    x[0] = 1  # <-


# Triton: supports `while` (scf.while), but not its `else` ("Not implemented").
@bad_kernel("`while ... else` is not supported in kernels")
def while_else(x_ptr, n):
    while n > 0:  # <-
        n -= 1
    else:
        pass


# Triton: AssertionError "Don't know what to do with else after for".
@bad_kernel("`for ... else` is not supported in kernels")
def for_else(x_ptr, n):
    for i in range(n):  # <-
        pass
    else:
        pass


# Triton: "unsupported AST node type: Delete".
@bad_kernel("`del` is not supported in kernels")
def del_statement(x_ptr):
    x = 1
    del x  # <-


# Triton: "unsupported AST node type: Import".
@bad_kernel("imports are not allowed inside kernels")
def import_statement(x_ptr):
    import math  # <-  # noqa: F401


# Triton: "unsupported AST node type: ImportFrom".
@bad_kernel("imports are not allowed inside kernels")
def import_from_statement(x_ptr):
    from math import sqrt  # <-  # noqa: F401


# Triton: "nested function definition is not supported."
@bad_kernel("functions cannot be defined inside kernels")
def nested_function(x_ptr):
    def inner():  # <-
        return
    tl.store(x_ptr, 1.0)


# Triton: "unsupported AST node type: Raise".
@bad_kernel("`raise` is not supported in kernels")
def raise_statement(x_ptr):
    raise ValueError("no")  # <-


# Triton: "unsupported AST node type: Global".
@bad_kernel("`global` is not supported in kernels")
def global_statement(x_ptr):
    global GLOBAL_LIST  # <-


# Triton: "unsupported AST node type: Set".
@bad_kernel("sets are not supported in kernels", caret_at="{1, 2}")
def set_literal(x_ptr):
    s = {1, 2}  # <-


# Triton: "unsupported AST node type: Dict".
@bad_kernel("dicts are not supported in kernels", caret_at="{1: 2}")
def dict_literal(x_ptr):
    d = {1: 2}  # <-


# A list comprehension over a runtime range cannot be unrolled when compiling.
@bad_kernel("a list comprehension in a kernel iterates over a tuple, list or range known when compiling",
            caret_at="range(n)")
def list_comprehension(x_ptr, n):
    values = [i * 2 for i in range(n)]  # <-


# Triton: "unsupported AST node type: GeneratorExp".
@bad_kernel("generator expressions are not supported in kernels", caret_at="(i for")
def generator_expression(x_ptr):
    total = sum(i for i in range(4))  # <-


# Triton: "unsupported AST node type: NamedExpr".
@bad_kernel("the walrus operator `:=` is not supported in kernels", caret_at="y :=")
def walrus(x_ptr):
    if (y := 3) > 2:  # <-
        pass


# Triton: "AST binary operator 'MatMult' is not (currently) implemented."
@bad_kernel("`@` (matrix multiplication, tl.dot) is not supported yet", caret_at="a @ a")
def matmul_operator(x_ptr):
    a = tl.zeros((16, 16), tl.float32)
    b = a @ a  # <-


# ============================================================================= names and calls

GLOBAL_LIST = [1, 2, 3]


def plain_helper(x):
    return x


# Triton: NameError "undefined_name is not defined".
@bad_kernel("name 'undefined_name' is not defined", caret_at="undefined_name")
def undefined_name_use(x_ptr):
    tl.store(x_ptr, undefined_name)  # <-  # noqa: F821


# Triton: calls the function in Python on its tensors, which fails somewhere inside it (or not at all).
@bad_kernel("'plain_helper' is a plain Python function and cannot be called from a kernel", caret_at="plain_helper")
def plain_python_call(x_ptr):
    y = plain_helper(1)  # <-


# Triton: math.sqrt(tensor) fails inside Python ("must be real number, not tensor").
@bad_kernel("'math.sqrt' is a function of math, which cannot run in a kernel; use tl.sqrt", caret_at="math.sqrt")
def module_function_call(x_ptr):
    y = math.sqrt(tl.load(x_ptr))  # <-


# Triton: np.exp(tensor) fails inside NumPy.
@bad_kernel("'np.exp' is a function of numpy, which cannot run in a kernel; use tl.exp", caret_at="np.exp")
def numpy_function_call(x_ptr):
    y = np.exp(tl.load(x_ptr))  # <-


@bad_kernel("'np.linalg.norm' is a function of numpy, which cannot run in a kernel; a kernel calls only tl "
            "functions, @tilec.jit functions and a few Python builtins", caret_at="np.linalg.norm")
def numpy_function_without_a_counterpart(x_ptr):
    y = np.linalg.norm(tl.load(x_ptr))  # <-


@bad_kernel("'np.float32' is a function of numpy, which cannot run in a kernel; convert with x.to(tl.float32)",
            caret_at="np.float32")
def numpy_type_as_a_cast(x_ptr):
    y = np.float32(tl.load(x_ptr))  # <-


class Point:
    pass


# Triton: calls the class in Python; the object then fails where it is used.
@bad_kernel("'Point' is a class, and a kernel cannot make Python objects", caret_at="Point()")
def class_instantiated(x_ptr):
    p = Point()  # <-


# Triton: TypeError "load() got an unexpected keyword argument 'msk'".
@bad_kernel("tl.load() got an unexpected keyword argument 'msk'; did you mean 'mask'?", caret_at="tl.load")
def misspelled_keyword_of_a_builtin(x_ptr):
    y = tl.load(x_ptr + tl.arange(0, 16), msk=None)  # <-


# torch's spelling of the axis.
@bad_kernel("tl.sum() got an unexpected keyword argument 'dim'; did you mean 'axis'?", caret_at="tl.sum")
def torch_keyword_of_a_builtin(x_ptr):
    y = tl.sum(tl.arange(0, 16), dim=0)  # <-


@bad_kernel("x.sum() got an unexpected keyword argument 'dim'; did you mean 'axis'?", caret_at="x.sum")
def torch_keyword_of_a_tensor_method(x_ptr):
    x = tl.arange(0, 16)
    y = x.sum(dim=0)  # <-


@bad_kernel("tl.store() got an unexpected keyword argument 'foo'; its parameters: pointer, value, mask, "
            "boundary_check, cache_modifier, eviction_policy", caret_at="tl.store")
def unknown_keyword_of_a_builtin(x_ptr):
    tl.store(x_ptr, 1.0, foo=1)  # <-


@bad_kernel("tl.where() missing 1 required positional argument: 'y'", caret_at="tl.where")
def missing_argument_of_a_builtin(x_ptr):
    y = tl.where(tl.arange(0, 16) > 3, 1.0)  # <-


@bad_kernel("tl.range() got an unexpected keyword argument 'stages'; did you mean 'num_stages'?", caret_at="tl.range")
def misspelled_keyword_of_tl_range(x_ptr, n):
    for i in tl.range(0, n, stages=2):  # <-
        pass


# Triton: NameError "open is not defined" (only a few Python builtins are in its namespace).
@bad_kernel("the Python builtin 'open' cannot be used in a kernel", caret_at="open")
def forbidden_python_builtin(x_ptr):
    f = open("data.bin")  # <-


# Triton: NameError "Cannot access global variable GLOBAL_LIST from within @jit'ed function ...".
@bad_kernel("global 'GLOBAL_LIST' of type list cannot be used in a kernel: a kernel reads globals once, when it "
            "is compiled, so they must be constants; make it a tuple", caret_at="GLOBAL_LIST")
def mutable_global(x_ptr):
    y = GLOBAL_LIST[0]  # <-


# ============================================================================= lists
# A list literal is a constant tuple in a kernel, as in Triton (`tl.zeros([M, N], ...)`
# works); what a list cannot do there is said in terms of lists.

# Triton: to_tensor fails on its tl.tuple ("... cannot be converted to a tensor" style).
@bad_kernel("a list of 2 values cannot be used as a tensor: a list in a kernel is a constant tuple (for shapes and "
            "unrolled loops); build a block with tl.arange, tl.full or tl.where", caret_at="tl.store")
def list_stored_as_a_block(x_ptr):
    tl.store(x_ptr + tl.arange(0, 2), [1.0, 2.0])  # <-


@bad_kernel("a list of 2 values cannot be used as a tensor", caret_at="x + [1.0, 2.0]")
def list_added_to_a_block(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 2))
    y = x + [1.0, 2.0]  # <-


# Triton: AttributeError "'tuple' object has no attribute 'append'".
@bad_kernel("a list in a kernel is a constant tuple (as in Triton), so it has no 'append'; make a new list instead, "
            "e.g. `values = values + [x]` in a tl.static_range loop", caret_at="values.append")
def list_append(x_ptr):
    values = []
    values.append(tl.load(x_ptr))  # <-


# Triton: visit_Subscript_Store asserts the target is a tl.tuple (an AssertionError).
@bad_kernel("item assignment is not supported: a list in a kernel is constant; make a new one instead, e.g. "
            "`t = t[:i] + [x] + t[i + 1:]`", caret_at="sizes[0]")
def list_item_assignment(x_ptr):
    sizes = [16, 32]
    sizes[0] = 64  # <-


@bad_kernel("item assignment is not supported: a tuple in a kernel is constant; make a new one instead, e.g. "
            "`t = t[:i] + (x,) + t[i + 1:]`", caret_at="sizes[0]")
def tuple_item_assignment(x_ptr):
    sizes = (16, 32)
    sizes[0] = 64  # <-


# A tuple literal is not the result of tl.max(..., return_indices=True): no hint about it.
@bad_kernel("a tuple of 2 values cannot be used as one value here; unpack it first (`a, b = ...`)",
            caret_at="tl.store")
def tuple_stored_as_a_value(x_ptr):
    tl.store(x_ptr, (1.0, 2.0))  # <-


# Triton: AttributeError "module 'triton.language' has no attribute 'foo'".
@bad_kernel("'tilec.language' has no attribute 'foo'", caret_at="tl.foo")
def unknown_language_function(x_ptr):
    y = tl.foo(1)  # <-


# Triton: AttributeError "'tensor' object has no attribute 'foo'".
@bad_kernel("'tensor' has no attribute 'foo'")
def unknown_tensor_method(x_ptr):
    y = tl.load(x_ptr).foo()  # <-


# Triton: runs the string's conversion to the pointer's element type and fails in Python.
@bad_kernel("the string 'gelu' is a compile-time constant, not a number or a tensor",
            constexprs={"ACTIVATION": "gelu"}, caret_at="tl.store")
def string_stored(x_ptr, ACTIVATION: tl.constexpr):
    tl.store(x_ptr, ACTIVATION)  # <-


# Triton: dtypes are not callable ("'dtype' object is not callable").
@bad_kernel("use `x.to(tl.float32)`")
def dtype_called_like_a_cast(x_ptr):
    y = tl.float32(tl.load(x_ptr))  # <-


# ============================================================================= constexprs


# Where a kernel parameter missing its tl.constexpr annotation is used as a constant,
# the error names it and shows the declaration to write.

# Triton: "arange's arguments must be of type tl.constexpr" (the parameter is not named).
@bad_kernel("arange's start and end must be constexpr integers, and its end is only known when the kernel runs; "
            "'BLOCK' is a parameter of arange_with_runtime_bound without tl.constexpr: declare it "
            "`BLOCK: tl.constexpr`", caret_at="tl.arange")
def arange_with_runtime_bound(x_ptr, BLOCK):
    offs = tl.arange(0, BLOCK)  # <-


# Triton: wraps the tensor in a constexpr without complaint and fails where it is used;
# so does tilec (a run-time value may be annotated so and only computed with: FlagGems).
@bad_kernel("arange's start and end must be constexpr integers, and its end is only known when the kernel runs; "
            "'n' is a parameter of constexpr_annotation_of_runtime_value without tl.constexpr: declare it "
            "`n: tl.constexpr`", caret_at="tl.arange")
def constexpr_annotation_of_runtime_value(x_ptr, n):
    block: tl.constexpr = n
    offs = tl.arange(0, block)  # <-


# Triton: "Shape element 0 must have type `constexpr[int]`".
@bad_kernel("shape dimensions must be constexpr integers, got a value known only at run time; 'n' is a parameter "
            "of zeros_with_runtime_shape without tl.constexpr: declare it `n: tl.constexpr`")
def zeros_with_runtime_shape(x_ptr, n):
    x = tl.zeros((n,), tl.float32)  # <-


# Triton: "Shape element 1 must have type `constexpr[int]`".
@bad_kernel("shape dimensions must be constexpr integers, got a value known only at run time; 'N' is a parameter "
            "of reshape_with_runtime_shape without tl.constexpr: declare it `N: tl.constexpr`")
def reshape_with_runtime_shape(x_ptr, N):
    x = tl.reshape(tl.arange(0, 16), [4, N])  # <-


# Triton: AssertionError "... used as tl.static_range end value is not a constexpr".
@bad_kernel("tl.static_range bounds must be constexpr integers, and this one is only known when the kernel runs; "
            "'n' is a parameter of static_range_with_runtime_bound without tl.constexpr: declare it "
            "`n: tl.constexpr`", caret_at="tl.static_range")
def static_range_with_runtime_bound(x_ptr, n):
    for i in tl.static_range(n):  # <-
        pass


# Triton: "reduce axis must be a constexpr" style failures (the parameter is not named).
@bad_kernel("the reduction axis must be a constexpr int; this one is only known when the kernel runs; 'AXIS' is "
            "a parameter of reduction_axis_parameter without tl.constexpr: declare it `AXIS: tl.constexpr`")
def reduction_axis_parameter(x_ptr, AXIS):
    y = tl.sum(tl.arange(0, 16), axis=AXIS)  # <-


# An alias still names the parameter it holds.
@bad_kernel("'BLOCK' is a parameter of aliased_parameter without tl.constexpr: declare it `BLOCK: tl.constexpr`",
            caret_at="tl.arange")
def aliased_parameter(x_ptr, BLOCK):
    size = BLOCK
    offs = tl.arange(0, size)  # <-


# A value computed from a parameter is not the parameter: the general advice.
@bad_kernel("arange's start and end must be constexpr integers, and its end is only known when the kernel runs; "
            "mark it tl.constexpr", caret_at="tl.arange")
def value_computed_from_a_parameter(x_ptr, BLOCK):
    offs = tl.arange(0, BLOCK * 2)  # <-


# Triton: "static_assert requires a constexpr condition" style failure.
@bad_kernel("static_assert needs a compile-time (constexpr) condition; use tl.device_assert to check a value known "
            "only at run time", caret_at="tl.static_assert")
def static_assert_on_a_runtime_value(x_ptr, BLOCK):
    tl.static_assert(BLOCK >= 16)  # <-


# Triton: indexing a tuple with a tensor fails inside its tuple class.
@bad_kernel("a tuple can only be indexed by a compile-time constant; 'i' is a parameter of tuple_index_parameter "
            "without tl.constexpr: declare it `i: tl.constexpr`")
def tuple_index_parameter(x_ptr, i):
    y = (1.0, 2.0)[i]  # <-


# Triton: CompileTimeAssertionFailure with the message.
@bad_kernel("static_assert failed: BLOCK must be at least 128", constexprs={"BLOCK": 64})
def failing_static_assert(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 128, "BLOCK must be at least 128")  # <-


# Triton: the same, a device_assert (a constant-false one).
@bad_kernel("assertion failed: BLOCK too small", constexprs={"BLOCK": 16})
def failing_constexpr_assert(x_ptr, BLOCK: tl.constexpr):
    assert BLOCK > 1000, "BLOCK too small"  # <-


# Triton: "program_id axis must be 0, 1, or 2 but got 3".
@bad_kernel("program_id axis must be 0, 1, or 2 but got 3", caret_at="tl.program_id")
def program_id_axis_3(x_ptr):
    pid = tl.program_id(3)  # <-


# Triton: a pybind TypeError when the tensor reaches create_get_program_id.
@bad_kernel("the program_id axis must be a constexpr int; this one is only known when the kernel runs")
def runtime_program_id_axis(x_ptr):
    pid = tl.program_id(tl.program_id(0))  # <-


# Triton: int() is run at compile time on the tensor and fails.
@bad_kernel("int() needs a compile-time value; convert tensors with .to(...)", caret_at="int(")
def int_of_tensor(x_ptr):
    y = int(tl.load(x_ptr))  # <-


# ============================================================================= shapes


# Triton: "arange's range must be a power of 2".
@bad_kernel("arange(0, 100) has 100 elements; the number of elements must be a power of 2")
def arange_not_power_of_2(x_ptr):
    offs = tl.arange(0, 100)  # <-


# Triton: "Shape element 0 must be a power of 2".
@bad_kernel("shape [3, 4]: every dimension must be a power of 2, and 3 is not", caret_at="tl.zeros")
def zeros_not_power_of_2(x_ptr):
    x = tl.zeros((3, 4), tl.float32)  # <-


# Triton: "numel (2097152) exceeds triton maximum tensor numel (1048576)".
@bad_kernel("a tensor may have at most 1048576")
def tensor_too_large(x_ptr):
    x = tl.zeros((2048, 1024), tl.float32)  # <-


# Triton: "arange's end argument must be greater than the start argument".
@bad_kernel("arange(16, 0): end must be greater than start")
def arange_backwards(x_ptr):
    offs = tl.arange(16, 0)  # <-


# Triton: "Cannot make_shape_compatible: incompatible dimensions at index 0: 128 and 64".
@bad_kernel("shapes [128] and [64] are incompatible: dimension 128 vs 64", caret_at="tl.arange(0, 128) +")
def add_mismatched_shapes(x_ptr):
    y = tl.arange(0, 128) + tl.arange(0, 64)  # <-


# Triton: "Value argument cannot be block type if pointer argument is not a block".
@bad_kernel("cannot store a block of shape [16] through a scalar pointer")
def store_block_through_scalar_pointer(x_ptr):
    tl.store(x_ptr, tl.zeros((16,), tl.float32))  # <-


# Triton: incompatible dimensions 16 and 32 (broadcasting the mask).
@bad_kernel("shapes [32] and [16] are incompatible")
def store_mask_of_other_shape(x_ptr):
    tl.store(x_ptr + tl.arange(0, 16), 1.0, mask=tl.arange(0, 32) < 3)  # <-


# Triton: "unsupported tensor index: constexpr[3]".
@bad_kernel("unsupported tensor index 3: only `:` and `None` are allowed")
def index_tensor_by_value(x_ptr):
    y = tl.arange(0, 16)[3]  # <-


# Triton: expand_dims' "invalid axis" error (tilec's sentence is the same, about the rank).
@bad_kernel("out of range for a tensor of rank 1")
def too_many_indices(x_ptr):
    y = tl.arange(0, 16)[:, :, None]  # <-


# Triton: AttributeError "'tensor' object has no attribute 'values'".
@bad_kernel("cannot unpack a tensor into 2 names")
def unpack_a_tensor(x_ptr):
    a, b = tl.arange(0, 16)  # <-


# Triton: assigns the first two values and silently drops the third.
@bad_kernel("cannot unpack 3 values into 2 names")
def unpack_wrong_count(x_ptr):
    a, b = (1, 2, 3)  # <-


# ============================================================================= dtypes


# Triton: IncompatibleTypeErrorImpl "invalid operands of type fp32 and fp32".
@bad_kernel("bitwise operator `&` needs integer or boolean operands, got fp32", caret_at="tl.load(x_ptr) &")
def bitwise_and_on_floats(x_ptr):
    y = tl.load(x_ptr) & tl.load(x_ptr)  # <-


# Triton: TypeError "unexpected type fp32".
@bad_kernel("`//` needs integer operands, got fp32")
def floor_division_on_floats(x_ptr):
    y = tl.load(x_ptr) // 2.0  # <-


# Triton: ValueError "Mask must have boolean scalar type".
@bad_kernel("load's mask must be boolean (int1), got fp32")
def load_with_float_mask(x_ptr):
    offs = tl.arange(0, 16)
    y = tl.load(x_ptr + offs, mask=offs.to(tl.float32))  # <-


# Triton: "`other` cannot be provided without `mask`".
@bad_kernel("load's `other` needs a `mask`")
def load_other_without_mask(x_ptr):
    y = tl.load(x_ptr, other=0.0)  # <-


# Triton: "Unsupported ptr type <int32> in `tl.load`".
@bad_kernel("load expects a pointer or a tensor of pointers, got int32")
def load_of_non_pointer(x_ptr, n):
    y = tl.load(n)  # <-


# Triton: IncompatibleTypeErrorImpl "invalid operands of type pointer<fp32> and fp32".
@bad_kernel("pointer offsets must be integers, got fp32")
def pointer_plus_float(x_ptr):
    y = tl.load(x_ptr + 1.5)  # <-


# Triton: IncompatibleTypeErrorImpl "invalid operands of type pointer<fp32> and int32".
@bad_kernel("unsupported operand type *fp32 on the left of this operator")
def pointer_times_int(x_ptr):
    y = x_ptr * 2  # <-


# Triton: "Expected dtype ['fp32', 'fp64'] but got int32".
@bad_kernel("exp needs a floating-point operand, got int32")
def exp_of_integers(x_ptr):
    y = tl.exp(tl.arange(0, 16))  # <-


# Triton: "Cannot bitcast data-type of size 32 to data-type of size 16".
@bad_kernel("cannot bitcast fp32 to fp16: they have different bit widths")
def bitcast_to_other_width(x_ptr):
    y = tl.load(x_ptr).to(tl.float16, bitcast=True)  # <-


# Triton 3.x: the constant takes the tensor's type, int8, without a range check (300 wraps to 44).
@bad_kernel("constant 300 is out of range for int8")
def constant_out_of_range(x_ptr):
    y = tl.arange(0, 16).to(tl.int8) + 300  # <-


# Triton: an AttributeError inside its cast, on the string.
@bad_kernel("`to` expects a tl dtype, got 'float32'")
def cast_to_a_string(x_ptr):
    y = tl.load(x_ptr).to("float32")  # <-


# Triton: tensors have no __pow__ ("unsupported operand type(s) for **").
@bad_kernel("`**` is not supported on tensors")
def power_operator(x_ptr):
    y = tl.load(x_ptr) ** 2  # <-


# The message is the language's, not Python's TypeError ("unsupported operand type(s) for ** ...").
@bad_kernel("`**` is not supported on tensors; use tl.exp/tl.log or repeated multiplication", caret_at="2 **")
def power_of_a_constant_to_a_tensor(x_ptr):
    y = 2 ** tl.load(x_ptr)  # <-


# ============================================================================= axes and control flow


# Triton: "invalid axis 2. Expected 0 <= axis < 1".
@bad_kernel("reduction axis 2 is out of range for a tensor of rank 1", caret_at="tl.sum")
def sum_along_missing_axis(x_ptr):
    total = tl.sum(tl.arange(0, 16), axis=2)  # <-


# Triton: "Mismatched type for a between then block (fp32[16]) and else block (int32[16])".
@bad_kernel("'a' is fp32[16] in the `if` branch but int32[16] in the `else` branch")
def branches_disagree_on_type(x_ptr):
    if tl.program_id(0) == 0:  # <-
        a = tl.zeros((16,), tl.float32)
    else:
        a = tl.zeros((16,), tl.int32)
    tl.store(x_ptr + tl.arange(0, 16), a)


# Triton: "Loop-carried variable acc has initial type int32[16] but is re-assigned to fp32[16] in loop!"
@bad_kernel("loop-carried variable 'acc' is int32[16] before the loop but fp32[16] at the end of its body")
def loop_carried_type_change(x_ptr, n):
    acc = tl.zeros((16,), tl.int32)
    for i in range(n):  # <-
        acc = acc + 1.5
    tl.store(x_ptr + tl.arange(0, 16), acc)


# Triton: NameError "a is not defined" (only names assigned in both branches survive).
@bad_kernel("name 'a' is not defined here: it is assigned in only one branch of an `if` above", caret_at="a)")
def name_from_one_branch(x_ptr):
    if tl.program_id(0) == 0:
        a = 1.0
    tl.store(x_ptr, a)  # <-


# Triton: NameError (names first defined in a loop body do not leave the loop).
@bad_kernel("name 'y' is not defined here: it is first assigned inside a loop body above", caret_at="y)")
def name_from_loop_body(x_ptr, n):
    for i in range(n):
        y = 1.0
    tl.store(x_ptr, y)  # <-


# Triton: scf.if needs a scalar condition (an MLIR verification error on an i1 tensor).
@bad_kernel("an `if` condition must be a scalar; for tensors use tl.where", caret_at="tl.arange")
def if_on_a_block(x_ptr):
    if tl.arange(0, 16) > 3:  # <-
        pass


@bad_kernel("a `while` condition must be a scalar, not a block; reduce the block to one value first (e.g. "
            "`tl.max(x, axis=0) > 0`)", caret_at="x > 0")
def while_on_a_block(x_ptr):
    x = tl.arange(0, 16)
    while x > 0:  # <-
        x = x - 1


# Triton: Python's TypeError while folding the constants.
@bad_kernel("`+` cannot combine the constants None and 1", constexprs={"z": None}, caret_at="z + 1")
def none_in_arithmetic(x_ptr, z):
    y = z + 1  # <-


# Triton: Python's IndexError.
@bad_kernel("index 5 is out of range for a tuple of 2 values", caret_at="5]")
def tuple_index_out_of_range(x_ptr):
    y = (1.0, 2.0)[5]  # <-


@bad_kernel("`is` needs compile-time operands, not tensors; only `x is None` and `x is not None` may test a tensor",
            caret_at="x_ptr is y_ptr")
def identity_of_two_tensors(x_ptr, y_ptr):
    if x_ptr is y_ptr:  # <-
        pass


@bad_kernel("len() needs a block or a tuple, and this is a scalar (int32)", caret_at="len(")
def len_of_a_scalar(x_ptr, n):
    m = len(n)  # <-


# Triton: "For loop bounds and step must all be ints, are (int32, fp32, int32)".
@bad_kernel("range end must be an integer scalar, got fp32", caret_at="range")
def range_of_a_float(x_ptr):
    for i in range(1.5):  # <-
        pass


# Triton: a zero step is not checked (scf.for then never ends).
@bad_kernel("range() step must not be zero")
def range_with_zero_step(x_ptr, n):
    for i in range(0, n, 0):  # <-
        pass


# Triton: "Only `range` and `static_range` iterators are currently supported".
@bad_kernel("a kernel can loop over range(...), tl.range(...), tl.static_range(...) or a constant tuple")
def loop_over_a_tensor(x_ptr):
    for v in tl.arange(0, 16):  # <-
        pass


# Triton: a kernel is a void function there too; returning a value fails.
@bad_kernel("a kernel cannot return a value; store results through a pointer")
def kernel_returns_a_value(x_ptr):
    return tl.load(x_ptr)  # <-


# Triton: the same refusal (returns inside loops).
@bad_kernel("`return` inside a loop is not supported; leave the loop with `break` and return after it")
def return_inside_loop(x_ptr, n):
    for i in range(n):
        if i == 3:
            return  # <-
        tl.store(x_ptr + i, 1.0)


@pytest.mark.parametrize("kernel, fragment, signature, constexprs, caret_at", CASES)
def test_bad_kernel_reports_its_line(kernel, fragment, signature, constexprs, caret_at):
    err = compile_error(kernel, signature, constexprs)
    assert_clear_error(err, kernel, fragment, caret_at)


def test_there_are_at_least_40_kinds_of_bad_kernels():
    assert len(CASES) >= 40


# ============================================================================= calls between @jit functions


@tilec.jit
def scale(x, FACTOR: tl.constexpr):
    return x * FACTOR


@tilec.jit
def masked_sum(x):
    y = x + 1
    return tl.sum(y & 1.5, axis=0)  # <-


@tilec.jit
def normalise(x):
    return masked_sum(x) / 2  # <-


@tilec.jit
def calls_a_bad_callee(out_ptr):
    total = normalise(tl.arange(0, 16))  # <-
    tl.store(out_ptr, total)


def test_error_in_a_callee_shows_the_callee_line_and_every_call_site():
    # Triton: the same structure, one CompilationError per call site, chained ("The above
    # exception was the direct cause of ..."), innermost last.
    err = compile_error(calls_a_bad_callee)
    text = str(err)
    assert_points_at(text, calls_a_bad_callee, role="called from", caret_at="normalise(")
    assert_points_at(text, normalise, role="called from", caret_at="masked_sum(")
    assert_points_at(text, masked_sum, role="at", caret_at="y & 1.5")
    # Outermost call site first, the failing line last, then the sentence.
    order = [text.index(f"in {fn.__name__}:") for fn in (calls_a_bad_callee, normalise, masked_sum)]
    assert order == sorted(order)
    assert text.splitlines()[-1] == ("bitwise operator `&` needs integer or boolean operands, got fp32 "
                                     "(invalid operands of type fp32 and fp32)")
    assert (err.location.lineno, err.location.function) == (marked_line(masked_sum)[0], "masked_sum")
    assert [site.function for site in err.call_stack] == ["calls_a_bad_callee", "normalise"]
    assert "Traceback" not in text and TILEC_DIR not in text


@tilec.jit
def too_many_arguments(out_ptr):
    y = scale(1.0, 2, 3)  # <-


@tilec.jit
def missing_argument(out_ptr):
    y = scale(1.0)  # <-


@tilec.jit
def unknown_keyword(out_ptr):
    y = scale(1.0, FACTOR=2, bias=1)  # <-


@tilec.jit
def misspelled_keyword(out_ptr):
    y = scale(1.0, factor=2)  # <-


@tilec.jit
def argument_given_twice(out_ptr):
    y = scale(1.0, 2, x=3)  # <-


@tilec.jit
def recursive(out_ptr):
    recursive(out_ptr)  # <-


@tilec.jit
def load_block(ptr, BLOCK):
    return tl.load(ptr + tl.arange(0, BLOCK))  # <-


@tilec.jit
def callee_parameter_without_constexpr(out_ptr, n):
    y = load_block(out_ptr, n)  # <-


@pytest.mark.parametrize("kernel, fragment, caret_at", [
    # Triton: TypeError from inspect.getcallargs ("scale() takes 2 positional arguments but 3 were given").
    (too_many_arguments, "scale() takes 2 arguments but 3 were given (its parameters: x, FACTOR)", "scale("),
    (missing_argument, "scale() is missing argument 'FACTOR'", "scale("),
    (unknown_keyword, "scale() got an unexpected keyword argument 'bias'; its parameters: x, FACTOR", "scale("),
    (misspelled_keyword, "scale() got an unexpected keyword argument 'factor'; did you mean 'FACTOR'?", "scale("),
    (argument_given_twice, "scale() got multiple values for argument 'x'", "scale("),
    # Triton: emits a recursive tt.call, which its inliner cannot remove later.
    (recursive, "recursion is not supported", "recursive("),
], ids=lambda v: getattr(v, "__name__", None))
def test_bad_call_to_a_jit_function(kernel, fragment, caret_at):
    err = compile_error(kernel)
    assert_clear_error(err, kernel, fragment, caret_at)


def test_a_callee_parameter_without_constexpr_is_named_in_the_callee():
    # Triton: "arange's arguments must be of type tl.constexpr", at the callee's line.
    err = compile_error(callee_parameter_without_constexpr)
    assert_points_at(str(err), callee_parameter_without_constexpr, role="called from", caret_at="load_block(")
    assert_points_at(str(err), load_block, role="at", caret_at="tl.arange")
    assert err.message.endswith("'BLOCK' is a parameter of load_block without tl.constexpr: declare it "
                                "`BLOCK: tl.constexpr`")


# ============================================================================= where the kernel is defined


def test_kernel_defined_inside_a_test_function():
    def outer():
        @tilec.jit
        def nested_kernel(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            y = tl.load(x_ptr + offs) + tl.arange(0, 2 * BLOCK)  # <-
        return nested_kernel

    kernel = outer()
    err = compile_error(kernel, constexprs={"BLOCK": 32})
    assert_clear_error(err, kernel, "shapes [32] and [64] are incompatible", caret_at="tl.load(")


@tilec.jit
def error_on_a_continuation_line(x_ptr):
    y = tl.load(x_ptr,
                mask=tl.arange(0, 100) < 3)  # <-


def test_error_on_the_second_line_of_a_statement_points_at_that_line():
    err = compile_error(error_on_a_continuation_line)
    assert_clear_error(err, error_on_a_continuation_line, "the number of elements must be a power of 2",
                       caret_at="tl.arange")


# ============================================================================= tilec.compile misuse


@tilec.jit
def two_params(x_ptr, n):
    tl.store(x_ptr, n)


def test_compile_names_an_unknown_parameter():
    with pytest.raises(ValueError, match=r"two_params has no parameter\(s\) \['m'\]"):
        tilec.compile(two_params, signature={"x_ptr": "*fp32", "n": "i32", "m": "i32"})


def test_compile_names_a_missing_parameter():
    with pytest.raises(ValueError, match="parameter 'n' of two_params is in neither signature nor constexprs"):
        tilec.compile(two_params, signature={"x_ptr": "*fp32"})


def test_compile_names_the_parameter_with_a_bad_type():
    with pytest.raises(ValueError, match="'n'") as info:
        tilec.compile(two_params, signature={"x_ptr": "*fp32", "n": "f32"})
    assert "f32" in str(info.value)


def test_compile_names_the_parameter_with_a_bad_divisibility():
    with pytest.raises(ValueError, match="'x_ptr'"):
        tilec.compile(two_params, signature={"x_ptr": "*fp32:abc", "n": "i32"})


def test_compile_rejects_a_plain_function():
    with pytest.raises(TypeError, match="expects a @tilec.jit function"):
        tilec.compile(plain_helper, signature={"x": "i32"})


@pytest.mark.parametrize("options, fragment", [
    ({"num_warps": 3}, "num_warps must be a power of 2 between 1 and 32, got 3"),
    ({"target": "hopper"}, "target must look like 'sm_90', got 'hopper'"),
])
def test_compile_rejects_bad_options(options, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        tilec.compile(two_params, signature={"x_ptr": "*fp32", "n": "i32"}, **options)
