"""More bad kernels and bad launches: each must fail with a located, one-sentence error.

These complement tests/frontend/test_errors.py (compile path) and
tests/interpreter/test_errors.py with mistakes a Triton user plausibly makes. Every
kernel marks its offending line with `# <-`; the test checks that the error names this
file and that line, quotes the line, puts a caret line under it, that the sentence
matches a regex of its key words, and that nothing of tilec's own files leaks into it.

A case is checked on the compile path (`tilec.compile(..., target="sm_90")`, no GPU
needed) and in the interpreter (`kernel[(1,)](...)` with NumPy arrays), with the same
sentence. Launch mistakes must raise `tilec.LaunchError`
naming the argument, in the interpreter and on the GPU launch path (whose argument
checks all run before a GPU is needed).

Parameters are "*fp32" when named `*_ptr`, "i32" otherwise, unless a case says.
"""
import inspect
import os

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec import CompilationError, LaunchError
from tilec.config import config
from tilec_testing import assert_located


def printed_cause(error: BaseException):
    """The cause Python prints above an error (its own field, not a property)."""
    return BaseException.__dict__["__cause__"].__get__(error)


TILEC_DIR = os.path.dirname(tilec.__file__)
COMPILE_CASES = []
INTERP_CASES = []
NUMPY = {"*fp32": np.float32, "*i32": np.int32, "*i1": np.bool_}


@pytest.fixture(autouse=True)
def _isolated_config(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "interpret", False)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))


def bad(sentence: str, *, signature: dict | None = None, constexprs: dict | None = None,
        caret_at: str | None = None):
    """Registers a kernel that must fail with `sentence` (a regex), both when compiled and
    when launched in the interpreter (which runs the compiler's frontend first)."""
    def register(fn):
        kernel = tilec.jit(fn)
        args = (kernel, signature or {}, constexprs or {}, caret_at)
        COMPILE_CASES.append(pytest.param(*args, sentence, id=fn.__name__))
        INTERP_CASES.append(pytest.param(*args, sentence, id=fn.__name__))
        return kernel
    return register


def parameters(kernel, signature: dict, constexprs: dict) -> dict:
    result = {}
    for name, param in inspect.signature(kernel.fn).parameters.items():
        if name in constexprs or param.annotation is tl.constexpr:
            continue
        result[name] = signature.get(name, "*fp32" if name.endswith("_ptr") else "i32")
    return result


    assert printed_cause(err) is None and (err.__context__ is None or err.__suppress_context__)


# ============================================================================= shapes and creation


# Triton: "arange's arguments must be of type tl.constexpr".
@bad(r"arange's start and end must be constexpr integers \(got int and float\)", caret_at="tl.arange")
def arange_float_bound(x_ptr):
    offs = tl.arange(0, 16.0)  # <-


# Triton: TypeError "arange() takes from 2 to 3 positional arguments but 4 were given" (no step).
@bad(r"arange\(\) takes 2 positional arguments but 3 were given")
def arange_with_step(x_ptr):
    offs = tl.arange(0, 16, 2)  # <-


# Triton: TypeError, missing 'dtype'.
@bad(r"zeros\(\) missing 1 required positional argument: 'dtype'")
def zeros_missing_dtype(x_ptr):
    z = tl.zeros((16,))  # <-


# Triton: "Shape element 0 must be a power of 2".
@bad(r"shape \[0, 16\]: every dimension must be a power of 2, and 0 is not")
def zeros_zero_dim(x_ptr):
    z = tl.zeros((0, 16), tl.float32)  # <-


@bad(r"shape \[-16\]: every dimension must be a power of 2, and -16 is not")
def zeros_negative_dim(x_ptr):
    z = tl.zeros((-16,), tl.float32)  # <-


# Triton: "reshape() cannot change total number of elements in tensor".
@bad(r"cannot reshape a tensor of shape \[16\] \(16 elements\) to \[8, 4\] \(32 elements\)", caret_at="tl.reshape")
def reshape_wrong_numel(x_ptr):
    x = tl.arange(0, 16)
    y = tl.reshape(x, (8, 4))  # <-


# Triton: fails in the builder (a tensor where a scalar constant is expected).
@bad(r"full's value must be a scalar")
def full_with_block_value(x_ptr):
    y = tl.full((16,), tl.arange(0, 16), tl.int32)  # <-


# Triton: "invalid axis 3. Expected -2 <= axis < 2".
@bad(r"expand_dims axis 3 is out of range for a tensor of rank 1 \(invalid axis 3. Expected -2 <= axis < 2\)")
def expand_dims_bad_axis(x_ptr):
    y = tl.expand_dims(tl.arange(0, 16), 3)  # <-


# A negative axis is named as written, not as counted from the front (-3 once said -1).
@bad(r"expand_dims axis -3 is out of range for a tensor of rank 1 \(invalid axis -3. Expected -2 <= axis < 2\)")
def expand_dims_bad_negative_axis(x_ptr):
    y = tl.expand_dims(tl.arange(0, 16), -3)  # <-


# Triton: "Cannot broadcast, the expanded size of the tensor (32) must match the existing size (16)".
@bad(r"cannot broadcast shape \[16\] to \[32\]: dimension of size 16 is neither 1 nor 32")
def broadcast_to_incompatible(x_ptr):
    y = tl.broadcast_to(tl.arange(0, 16), (32,))  # <-


@bad(r"cannot broadcast shape \[1, 16\] to \[16, -1\]")
def broadcast_to_negative(x_ptr):
    y = tl.broadcast_to(tl.arange(0, 16), (16, -1))  # <-


# Triton 3.9: refused by tl.cat itself (identical shapes required), not by the shape of the result.
@bad(r"cat needs two tensors of one shape, got \[16\] and \[32\]")
def cat_mismatched(x_ptr):
    y = tl.cat(tl.arange(0, 16), tl.arange(0, 32), can_reorder=True)  # <-


# Triton: Python's IndexError, located.
@bad(r"^index 2 is out of range for a tuple of 1 value$")
def shape_index_out_of_range(x_ptr):
    x = tl.arange(0, 16)
    n = x.shape[2]  # <-


# Triton: "unsupported tensor index: <slice>".
@bad(r"unsupported tensor index slice\(1, 3, None\): only `:` and `None` are allowed")
def slice_a_block(x_ptr):
    x = tl.arange(0, 16)
    y = x[1:3]  # <-


# C habit: x_ptr[0] instead of tl.load(x_ptr).
@bad(r"unsupported tensor index 0: only `:` and `None` are allowed")
def subscript_a_pointer(x_ptr):
    y = x_ptr[0]  # <-


# Triton: "split: last dimension must be 2".
@bad(r"split needs a last dimension of size 2, got shape \[4, 4\]", caret_at="tl.split")
def split_last_dim_not_2(x_ptr):
    x = tl.reshape(tl.arange(0, 16), (4, 4))
    a, b = tl.split(x)  # <-


@bad(r"shapes \[16\] and \[32\] are incompatible")
def join_mismatched(x_ptr):
    y = tl.join(tl.arange(0, 16), tl.arange(0, 32))  # <-


@bad(r"join needs two tensors of one type, got int32 and fp32")
def join_mismatched_dtypes(x_ptr):
    y = tl.join(tl.arange(0, 16), tl.zeros((16,), tl.float32))  # <-


@bad(r"shapes \[16\] and \[32\] are incompatible")
def interleave_mismatched(x_ptr):
    y = tl.interleave(tl.arange(0, 16), tl.arange(0, 32))  # <-


# Triton: "permute dims must be a permutation of 0, 1, ..., n-1".
@bad(r"permutation \[0, 0\] is not a reordering of the dimensions 0\.\.1")
def permute_bad_order(x_ptr):
    x = tl.reshape(tl.arange(0, 16), (4, 4))
    y = tl.permute(x, (0, 0))  # <-


@bad(r"permutation \[1, 0, 2\] is not a reordering of the dimensions 0\.\.1")
def permute_wrong_length(x_ptr):
    x = tl.reshape(tl.arange(0, 16), (4, 4))
    y = tl.permute(x, (1, 0, 2))  # <-


@bad(r"trans without dims swaps the last two dimensions; this tensor has shape \[16\]")
def trans_of_1d(x_ptr):
    y = tl.trans(tl.arange(0, 16))  # <-


# ============================================================================= dot


# Triton: "First input shape (...) and second input shape (...) are not compatible for matmul".
@bad(r"dot shapes do not match: \[16, 32\] @ \[16, 16\]", caret_at="tl.dot")
def dot_mismatched_k(x_ptr):
    a = tl.zeros((16, 32), tl.float16)
    b = tl.zeros((16, 16), tl.float16)
    c = tl.dot(a, b)  # <-


@bad(r"dot needs two tensors of one rank, 2 or more \(\[M, K\] @ \[K, N\], or batches of them\), got shapes "
     r"\[16\] and \[16\]")
def dot_1d(x_ptr):
    a = tl.zeros((16,), tl.float16)
    c = tl.dot(a, a)  # <-


@bad(r"dot needs two tensors of one rank, 2 or more \(\[M, K\] @ \[K, N\], or batches of them\), got shapes "
     r"\[2, 16, 16\] and \[16, 16\]")
def dot_3d_with_2d(x_ptr):
    a = tl.zeros((2, 16, 16), tl.float16)
    b = tl.zeros((16, 16), tl.float16)
    c = tl.dot(a, b)  # <-


# Triton: "Both operands must be same dtype. Got int8 and fp16".
@bad(r"dot operands must have one type, got int8 and fp16")
def dot_int8_fp16(x_ptr):
    a = tl.zeros((16, 16), tl.int8)
    b = tl.zeros((16, 16), tl.float16)
    c = tl.dot(a, b)  # <-


@bad(r"dot accumulator has shape \[32, 32\]; expected \[16, 16\]")
def dot_acc_wrong_shape(x_ptr):
    a = tl.zeros((16, 16), tl.float16)
    acc = tl.zeros((32, 32), tl.float32)
    c = tl.dot(a, a, acc)  # <-


@bad(r"a dot of fp16 values accumulates in fp16 or fp32, not int32")
def dot_int_acc_for_fp16(x_ptr):
    a = tl.zeros((16, 16), tl.float16)
    acc = tl.zeros((16, 16), tl.int32)
    c = tl.dot(a, a, acc)  # <-


@bad(r"input_precision must be one of 'tf32', 'tf32x3', 'ieee', 'bf16x3', 'bf16x6', got 'bogus'")
def dot_bad_input_precision(x_ptr):
    a = tl.zeros((16, 16), tl.float32)
    c = tl.dot(a, a, input_precision="bogus")  # <-


@bad(r"a dot of fp16 values accumulates in fp16 or fp32, not int8")
def dot_out_dtype_int8_for_fp(x_ptr):
    a = tl.zeros((16, 16), tl.float16)
    c = tl.dot(a, a, out_dtype=tl.int8)  # <-


# ============================================================================= load and store


@bad(r"store expects a pointer or a tensor of pointers, got int32", caret_at="tl.store")
def store_to_non_pointer(x_ptr, n):
    tl.store(n, 1.0)  # <-


# Triton: "Mask must have boolean scalar type".
@bad(r"store's mask must be boolean \(int1\), got fp32")
def store_float_mask(x_ptr):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, 1.0, mask=offs.to(tl.float32))  # <-


@bad(r"cannot broadcast shape \[32\] to \[16\]")
def load_other_wrong_shape(x_ptr):
    offs = tl.arange(0, 16)
    y = tl.load(x_ptr + offs, mask=offs < 4, other=tl.zeros((32,), tl.float32))  # <-


@bad(r"load\(\) got an unexpected keyword argument 'maks'")
def load_misspelled_keyword(x_ptr):
    offs = tl.arange(0, 16)
    y = tl.load(x_ptr + offs, maks=offs < 4)  # <-


@bad(r"store\(\) missing 1 required positional argument: 'value'")
def store_missing_value(x_ptr):
    tl.store(x_ptr)  # <-


@bad(r"cannot convert \*fp32 to fp32; pointers convert only to and from 64-bit integers")
def store_pointer_value(x_ptr):
    tl.store(x_ptr, x_ptr)  # <-


# Triton: "Cache modifier .xyz not supported".
@bad(r"load's cache_modifier '\.xyz' is not one of")
def load_bad_cache_modifier(x_ptr):
    y = tl.load(x_ptr, cache_modifier=".xyz")  # <-


@bad(r"unknown eviction_policy 'sometimes'; expected one of")
def load_bad_eviction_policy(x_ptr):
    y = tl.load(x_ptr, eviction_policy="sometimes")  # <-


@bad(r"store's cache_modifier 'fast' is not one of")
def store_bad_cache_modifier(x_ptr):
    tl.store(x_ptr, 1.0, cache_modifier="fast")  # <-


# Triton: "`padding_option` argument is not supported for loading a tensor of pointers".
@bad(r"boundary_check and padding_option apply to block pointers")
def load_padding_on_plain_pointer(x_ptr):
    y = tl.load(x_ptr, padding_option="zero")  # <-


@bad(r"boundary_check and padding_option apply to block pointers")
def load_boundary_check_on_plain_pointer(x_ptr):
    y = tl.load(x_ptr + tl.arange(0, 16), boundary_check=(0,))  # <-


# ============================================================================= block pointers


# Triton: "Padding option `nan` is not supported for integer block pointers".
@bad(r'padding_option "nan" needs floating-point elements, but this block pointer has int32 elements',
     signature={"x_ptr": "*i32"})
def block_ptr_nan_padding_int(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (16,), (0,))
    y = tl.load(bp, boundary_check=(0,), padding_option="nan")  # <-


@bad(r"padding_option 'ones' is not supported")
def block_ptr_bad_padding(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (16,), (0,))
    y = tl.load(bp, boundary_check=(0,), padding_option="ones")  # <-


# Triton: AssertionError "Expected shape/strides/offsets/block_shape to have the same length".
@bad(r"make_block_ptr's shape, strides, offsets, block_shape and order must have the same length.*got 2, 2, 1, 2 and 2")
def block_ptr_rank_mismatch(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64, 64), (64, 1), (0,), (16, 16), (1, 0))  # <-


@bad(r"make_block_ptr's order \[0, 0\] must be a permutation of \[0, 1\]")
def block_ptr_bad_order(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64, 64), (64, 1), (0, 0), (16, 16), (0, 0))  # <-


@bad(r"make_block_ptr's block_shape \[12\]: every dimension must be a power of 2")
def block_ptr_block_shape_not_pow2(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (12,), (0,))  # <-


@bad(r"make_block_ptr expects a scalar pointer as its base .*got int32")
def block_ptr_base_not_pointer(x_ptr, n):
    bp = tl.make_block_ptr(n, (64,), (1,), (0,), (16,), (0,))  # <-


@bad(r"boundary_check dimension 1 is out of range for a block of rank 1")
def block_ptr_boundary_check_out_of_range(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (16,), (0,))
    y = tl.load(bp, boundary_check=(1,))  # <-


# Triton: "`mask` and `other` arguments cannot be specified for loading block pointers".
@bad(r"`mask` and `other` cannot be used when loading through a block pointer")
def block_ptr_load_with_mask(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (16,), (0,))
    y = tl.load(bp, mask=tl.arange(0, 16) < 4)  # <-


@bad(r"tl\.advance got 1 offsets for a block pointer of rank 2", caret_at="tl.advance")
def block_ptr_advance_wrong_rank(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64, 64), (64, 1), (0, 0), (16, 16), (1, 0))
    bp = tl.advance(bp, (16,))  # <-


@bad(r"the stored value has shape \[32, 32\] but the block has shape \[16, 16\]")
def block_ptr_store_wrong_shape(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64, 64), (64, 1), (0, 0), (16, 16), (1, 0))
    tl.store(bp, tl.zeros((32, 32), tl.float32))  # <-


# ============================================================================= operators and dtypes


@bad(r"`~` needs an integer or boolean operand, got fp32")
def invert_float(x_ptr):
    y = ~tl.load(x_ptr)  # <-


@bad(r"bitwise operator `<<` needs integer or boolean operands, got fp32")
def shift_by_float(x_ptr):
    y = tl.arange(0, 16) << 1.5  # <-


@bad(r"bitwise operator `>>` needs integer or boolean operands, got fp32")
def shift_a_float(x_ptr):
    y = tl.load(x_ptr) >> 1  # <-


@bad(r"bitwise operator `\^` needs integer or boolean operands, got fp32")
def xor_floats(x_ptr):
    y = tl.load(x_ptr) ^ 1  # <-


@bad(r"cannot negate a pointer \(\*fp32\)")
def negate_pointer(x_ptr):
    y = -x_ptr  # <-


@bad(r"expects a tl dtype, got <class 'int'>")
def cast_to_python_int(x_ptr):
    y = tl.cast(tl.load(x_ptr), int)  # <-


# Triton: AssertionError inside its cast.
@bad(r"cannot convert fp32 to \*fp32; pointers convert only to and from 64-bit integers")
def cast_float_to_pointer(x_ptr):
    y = tl.load(x_ptr).to(tl.pointer_type(tl.float32))  # <-


@bad(r"fp_downcast_rounding='rtz' applies to float32 -> float16/bfloat16/float8e5 and float64 -> float32, "
     r"not int32 -> fp16")
def downcast_rounding_on_int(x_ptr):
    y = tl.arange(0, 16).to(tl.float16, fp_downcast_rounding="rtz")  # <-


@bad(r"fp_downcast_rounding must be 'rtne' or 'rtz', got 'nearest'")
def downcast_rounding_bogus(x_ptr):
    y = tl.load(x_ptr).to(tl.float16, fp_downcast_rounding="nearest")  # <-


# The three operands of where must broadcast together.
@bad(r"shapes \[32\] and \[64\] are incompatible", caret_at="tl.where")
def where_three_shapes(x_ptr):
    c = tl.arange(0, 16) < 4
    y = tl.where(c, tl.zeros((32,), tl.float32), tl.zeros((64,), tl.float32))  # <-


@bad(r"cannot combine \*fp32 with 1\.0: pointers go only with pointers of the same type")
def where_pointer_and_float(x_ptr):
    y = tl.where(tl.program_id(0) == 0, x_ptr, 1.0)  # <-


@bad(r"where\(\) missing 2 required positional arguments: 'x' and 'y'")
def where_one_argument(x_ptr):
    y = tl.where(tl.arange(0, 16) < 4)  # <-


@bad(r"umulhi needs 32- or 64-bit integer operands, got fp32")
def umulhi_floats(x_ptr):
    y = tl.umulhi(tl.load(x_ptr), tl.load(x_ptr))  # <-


@bad(r"fdiv needs floating-point operands, got int32")
def fdiv_ints(x_ptr):
    y = tl.fdiv(tl.arange(0, 16), tl.arange(1, 17))  # <-


# ============================================================================= reductions and scans


# Triton: "invalid axis -2. Expected -1 <= axis < 1".
@bad(r"reduction axis -2 is out of range for a tensor of rank 1", caret_at="tl.sum")
def sum_negative_axis_out_of_range(x_ptr):
    y = tl.sum(tl.arange(0, 16), axis=-2)  # <-


@bad(r"the reduction axis must be a constexpr int; this one is only known when the kernel runs")
def sum_runtime_axis(x_ptr, n):
    y = tl.sum(tl.arange(0, 16), axis=n)  # <-


@bad(r"expects a tl dtype, got 'float32'")
def sum_dtype_string(x_ptr):
    y = tl.sum(tl.arange(0, 16), axis=0, dtype="float32")  # <-


@bad(r"scan axis 1 is out of range for a tensor of rank 1")
def cumsum_axis_out_of_range(x_ptr):
    y = tl.cumsum(tl.arange(0, 16), axis=1)  # <-


@bad(r"argmax\(\) missing 1 required positional argument: 'axis'")
def argmax_missing_axis(x_ptr):
    y = tl.argmax(tl.arange(0, 16))  # <-


@bad(r"histogram needs integer values, got fp32")
def histogram_of_floats(x_ptr):
    y = tl.histogram(tl.load(x_ptr + tl.arange(0, 16)), 8)  # <-


@bad(r"gather needs an integer index, got fp32")
def gather_float_index(x_ptr):
    src = tl.arange(0, 16)
    y = tl.gather(src, src.to(tl.float32), axis=0)  # <-


# ============================================================================= atomics


@bad(r"atomic_add does not support fp8e4nv")
def atomic_add_fp8(x_ptr):
    p = x_ptr.to(tl.pointer_type(tl.float8e4nv))
    y = tl.atomic_add(p, 1.0)  # <-


@bad(r"atomic_add needs 32- or 64-bit integers or floats, got int1", signature={"x_ptr": "*i1"})
def atomic_add_bool(x_ptr):
    y = tl.atomic_add(x_ptr, True)  # <-


# Triton: builds an atomic_cas whose val type differs from the pointee (an MLIR verifier error).
@bad(r"the float constant 1\.5 cannot become int32 without losing its value", signature={"x_ptr": "*i32"})
def atomic_cas_mismatched(x_ptr):
    y = tl.atomic_cas(x_ptr, 0, 1.5)  # <-


@bad(r"atomic sem must be one of .*got 'fast'")
def atomic_bad_sem(x_ptr):
    y = tl.atomic_add(x_ptr, 1.0, sem="fast")  # <-


@bad(r"atomic scope must be one of .*got 'planet'")
def atomic_bad_scope(x_ptr):
    y = tl.atomic_add(x_ptr, 1.0, scope="planet")  # <-


# ============================================================================= asserts and prints


@bad(r"static_assert needs a compile-time \(constexpr\) condition", caret_at="tl.static_assert")
def static_assert_runtime_cond(x_ptr):
    tl.static_assert(tl.load(x_ptr) > 0, "must be positive")  # <-


@bad(r"device_print needs a string prefix first, got 42")
def device_print_non_string_prefix(x_ptr):
    tl.device_print(42, tl.load(x_ptr))  # <-


# ============================================================================= control flow and constexprs


@bad(r"range step must be an integer scalar, got fp32")
def range_float_step(x_ptr, n):
    for i in range(0, n, 0.5):  # <-
        pass


@bad(r"tl\.static_range bounds must be constexpr integers")
def static_range_float(x_ptr):
    for i in tl.static_range(0, 4.0):  # <-
        pass


@bad(r"a `while` condition must be a scalar")
def while_on_block(x_ptr):
    x = tl.arange(0, 16)
    while x > 0:  # <-
        x = x - 1


@bad(r"loop-carried variable 'acc' is fp32\[16\] before the loop but fp32\[32\] at the end of its body")
def while_carried_shape_change(x_ptr, n):
    acc = tl.zeros((16,), tl.float32)
    while n > 0:  # <-
        acc = tl.zeros((32,), tl.float32)
        n -= 1


@bad(r"program_id axis must be 0, 1, or 2 but got -1")
def program_id_negative(x_ptr):
    pid = tl.program_id(-1)  # <-


@bad(r"num_programs axis must be 0, 1, or 2 but got 3")
def num_programs_axis_3(x_ptr):
    n = tl.num_programs(3)  # <-


@bad(r"ZeroDivisionError: integer division or modulo by zero", constexprs={"BLOCK": 16})
def constexpr_div_by_zero(x_ptr, BLOCK: tl.constexpr):
    HALF: tl.constexpr = BLOCK // 0  # <-


@bad(r"multiple_of needs 1 positive int\(s\)")
def multiple_of_runtime(x_ptr, n):
    y = tl.multiple_of(n, n)  # <-


# ============================================================================= calls


@bad(r"name 'undefined_helper' is not defined", caret_at="undefined_helper")
def call_undefined_helper(x_ptr):
    y = undefined_helper(tl.load(x_ptr))  # <-  # noqa: F821


@tilec.jit
def scale(x, FACTOR: tl.constexpr):
    return x * FACTOR


@bad(r"scale\(\) got multiple values for argument 'FACTOR'", caret_at="scale(")
def jit_call_duplicate_argument(x_ptr):
    y = scale(1.0, 2, FACTOR=3)  # <-


@tilec.jit
def returns_nothing(x):
    x = x + 1


@bad(r"None cannot be used as a value here")
def use_value_of_void_helper(x_ptr):
    y = returns_nothing(1.0)
    tl.store(x_ptr, y)  # <-


# ============================================================================= the tests


@pytest.mark.parametrize("kernel, signature, constexprs, caret_at, sentence", COMPILE_CASES)
def test_compile_reports_the_line(kernel, signature, constexprs, caret_at, sentence):
    with pytest.raises(CompilationError) as info:
        tilec.compile(kernel, signature=parameters(kernel, signature, constexprs), constexprs=constexprs,
                      target="sm_90")
    assert_located(info.value, kernel, sentence, caret_at)


@pytest.mark.parametrize("kernel, signature, constexprs, caret_at, sentence", INTERP_CASES)
def test_interpreter_reports_the_line(kernel, signature, constexprs, caret_at, sentence, monkeypatch):
    monkeypatch.setattr(config, "interpret", True)
    args = [np.zeros(64, NUMPY[ty]) if ty.startswith("*") else 5
            for ty in parameters(kernel, signature, constexprs).values()]
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](*args, **constexprs)
    assert_located(info.value, kernel, sentence, caret_at)


def test_there_are_many_new_bad_kernels():
    assert len(COMPILE_CASES) >= 50 and len(INTERP_CASES) == len(COMPILE_CASES)


# ============================================================================= fixed after the first review


@bad(r"zeros expects a tl dtype such as tl\.float32, got the string 'float32'")
def zeros_dtype_string(x_ptr):
    z = tl.zeros((16,), "float32")  # <-


@bad(r"full expects a tl dtype such as tl\.float32, got the string 'int32'")
def full_dtype_string(x_ptr):
    y = tl.full((16,), 0, "int32")  # <-


@bad(r"full: the value 1\.5 is not an integer, so it cannot fill a int32 block")
def full_float_value_int_dtype(x_ptr):
    tl.store(x_ptr + tl.arange(0, 16), tl.full((16,), 1.5, tl.int32))  # <-


@bad(r"the reduction axis must be a single int, got \(0, 1\)")
def sum_tuple_axis(x_ptr):
    x = tl.reshape(tl.arange(0, 16), (4, 4))
    y = tl.sum(x, axis=(0, 1))  # <-


@bad(r"a tuple of 2 values cannot be used as one value here; unpack it first \(`a, b = \.\.\.`\)$")
def store_max_with_indices_tuple(x_ptr):
    y = tl.max(tl.load(x_ptr + tl.arange(0, 16)), axis=0, return_indices=True)
    tl.store(x_ptr, y)  # <-


@bad(r"an f-string can only format compile-time constants", caret_at="x:.3f")
def static_print_tensor_fstring(x_ptr):
    x = tl.load(x_ptr)
    tl.static_print(f"x = {x:.3f}")  # <-


@bad(r"an f-string can only format compile-time constants", caret_at="x}")
def print_fstring(x_ptr):
    x = tl.load(x_ptr)
    print(f"x = {x}")  # <-


@tilec.jit
def simple_kernel(x_ptr):
    tl.store(x_ptr, 1.0)


@bad(r"a kernel cannot launch another kernel \(simple_kernel\[grid\]\(\.\.\.\)\); call the @jit function "
     r"directly")
def launch_kernel_inside_kernel(x_ptr):
    simple_kernel[(1,)](x_ptr)  # <-


@bad(r"cannot reduce a tensor of pointers \(\*fp32\[16\]\); load the values first")
def sum_of_pointers(x_ptr):
    y = tl.sum(x_ptr + tl.arange(0, 16), axis=0)  # <-


@bad(r"sort: dim must be None or a dimension of x", caret_at="tl.sort")
def sort_dim_out_of_range(x_ptr):
    y = tl.sort(tl.arange(0, 16), dim=1)  # <-


@bad(r"the seed must be an integer", caret_at="tl.rand")
def rand_float_seed(x_ptr):
    y = tl.rand(1.5, tl.arange(0, 16))  # <-


@tilec.jit
def pair_combine(a, b):
    return a + b, a * b


@bad(r"pair_combine returned 2 values for 1 input; a combine function returns one value per input")
def scan_combine_returns_two(x_ptr):
    y = tl.associative_scan(tl.arange(0, 16), 0, pair_combine)  # <-
    tl.store(x_ptr + tl.arange(0, 16), y)


@bad(r"load's mask is a block of shape \[16\] but the pointer is a scalar")
def load_block_mask_scalar_pointer(x_ptr):
    y = tl.load(x_ptr, mask=tl.arange(0, 16) < 4)  # <-


@bad(r"load: cache_modifier '\.cg' and eviction_policy 'evict_last' cannot be combined")
def cache_modifier_with_eviction_policy(x_ptr):
    y = tl.load(x_ptr + tl.arange(0, 16), cache_modifier=".cg", eviction_policy="evict_last")  # <-


@bad(r"a volatile load takes no cache_modifier or eviction_policy")
def volatile_with_cache_modifier(x_ptr):
    y = tl.load(x_ptr + tl.arange(0, 16), cache_modifier=".cv", volatile=True)  # <-


# ============================================================================= launches


@tilec.jit
def launched(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)  # <-


X = np.zeros(64, np.float32)

BAD_LAUNCHES = {
    "too_many_arguments": (lambda: launched[(1,)](X, 4, 16, 7), r"launched\(\) takes 3 arguments but 4 were given"),
    "unknown_keyword": (lambda: launched[(1,)](X, 4, BLOCK=16, block=3),
                        r"launched\(\) got an unexpected keyword argument 'block'"),
    "misspelled_launch_option": (lambda: launched[(1,)](X, 4, BLOCK=16, num_warp=4),
                                 r"unexpected keyword argument 'num_warp'"),
    "argument_given_twice": (lambda: launched[(1,)](X, 4, 16, n=3), r"got multiple values for argument 'n'"),
    "missing_constexpr": (lambda: launched[(1,)](X, 4), r"launched\(\) is missing argument 'BLOCK'"),
    "negative_grid": (lambda: launched[(-1,)](X, 4, BLOCK=16), r"grid dimensions must not be negative, got \(-1,\)"),
    "grid_as_a_string": (lambda: launched["1"](X, 4, BLOCK=16),
                         r"the grid must be a tuple of 1 to 3 integers, or a callable returning one; got '1'"),
    "grid_none": (lambda: launched[None](X, 4, BLOCK=16), r"the grid must be a tuple of 1 to 3 integers.*got None"),
    "empty_grid": (lambda: launched[()](X, 4, BLOCK=16), r"the grid must have 1 to 3 dimensions, got 0"),
    "grid_callable_returns_a_string": (lambda: launched[lambda meta: "x"](X, 4, BLOCK=16),
                                       r"the grid must be a tuple of 1 to 3 integers.*got 'x'"),
    "list_for_a_scalar": (lambda: launched[(1,)](X, [4], BLOCK=16), r"argument 'n' of launched\(\) is a list"),
    "dict_for_a_scalar": (lambda: launched[(1,)](X, {"a": 1}, BLOCK=16), r"argument 'n' of launched\(\) is a dict"),
    # Triton: a type goes to tl.constexpr parameters (OUT_DTYPE: tl.constexpr).
    "dtype_for_a_scalar": (lambda: launched[(1,)](None, tl.float16, BLOCK=16),
                           r"argument 'n' of launched\(\) is the type tl.float16, which only a tl.constexpr "
                           r"parameter can take: declare it `n: tl.constexpr`"),
    # Only the GPU launch path (its argument checks run before any GPU is needed):
    "gpu_list_for_a_pointer": (lambda: launched[(1,)]([1.0, 2.0], 4, BLOCK=16),
                               r"argument 'x_ptr' of launched\(\) is a list \[1\.0, 2\.0\]; expected a GPU tensor"),
    "gpu_host_array": (lambda: launched[(1,)](X, 4, BLOCK=16),
                       r"argument 'x_ptr' of launched\(\) is a host array .*a GPU launch needs device memory"),
    "gpu_num_warps_as_a_string": (lambda: launched[(1,)](X, 4, BLOCK=16, num_warps="4"),
                                  r"launch option num_warps must be a non-negative int, got '4'"),
    "gpu_negative_num_stages": (lambda: launched[(1,)](X, 4, BLOCK=16, num_stages=-1),
                                r"launch option num_stages must be a non-negative int, got -1"),
    "float_grid": (lambda: launched[(2.5,)](X, 4, BLOCK=16),
                   r"the grid must be a tuple of 1 to 3 integers, or a callable returning one; got \(2\.5,\)"),
    "num_warps_not_a_power_of_2": (lambda: launched[(1,)](X, 4, BLOCK=16, num_warps=3),
                                   r"launched\(\): launch option num_warps must be a power of 2 between 1 and 32, "
                                   r"got 3"),
    "num_warps_too_large": (lambda: launched[(1,)](X, 4, BLOCK=16, num_warps=64),
                            r"num_warps must be a power of 2 between 1 and 32, got 64"),
    "complex_array": (lambda: launched[(1,)](np.zeros(64, np.complex64), 4, BLOCK=16),
                      r"argument 'x_ptr' of launched\(\) is a ndarray of complex64, an element type tilec does not "
                      r"support"),
    "int_beyond_64_bits": (lambda: launched[(1,)](X, 2 ** 70, BLOCK=16),
                           r"argument 'n' of launched\(\): integer 1180591620717411303424 does not fit in 64 bits"),
    "launch_array_for_a_constexpr": (lambda: launched[(1,)](X, 4, BLOCK=np.zeros(4)),
                                     r"tl.constexpr argument 'BLOCK' of launched\(\) must be a hashable"),
    "warmup_array_for_a_constexpr": (lambda: launched.warmup("*fp32", "i32", BLOCK=np.zeros(4), grid=(1,)),
                                     r"tl.constexpr argument 'BLOCK' of launched\(\) must be a hashable compile-time value .*got ndarray"),
}
# Which paths each launch is checked on.
BOTH = ["too_many_arguments", "unknown_keyword", "misspelled_launch_option", "argument_given_twice",
        "dtype_for_a_scalar"]
INTERP_ONLY = ["negative_grid", "grid_as_a_string", "grid_none", "empty_grid", "grid_callable_returns_a_string",
               "list_for_a_scalar", "dict_for_a_scalar", "float_grid", "num_warps_not_a_power_of_2",
               "num_warps_too_large", "complex_array", "int_beyond_64_bits", "launch_array_for_a_constexpr"]
GPU_ONLY = ["missing_constexpr", "gpu_list_for_a_pointer", "gpu_host_array", "gpu_num_warps_as_a_string",
            "gpu_negative_num_stages", "warmup_array_for_a_constexpr", "complex_array"]
LAUNCHES = ([pytest.param(name, True, id=f"{name}-interpreter") for name in BOTH + INTERP_ONLY]
            + [pytest.param(name, False, id=f"{name}-gpu") for name in BOTH + GPU_ONLY])


@pytest.mark.parametrize("name, interpret", LAUNCHES)
def test_bad_launch_names_the_problem(name, interpret, monkeypatch):
    monkeypatch.setattr(config, "interpret", interpret)
    launch, sentence = BAD_LAUNCHES[name]
    with pytest.raises(LaunchError, match=sentence) as info:
        launch()
    assert "\n" not in str(info.value) and TILEC_DIR not in str(info.value)


def test_float_for_a_pointer_fails_at_the_load_in_the_interpreter(monkeypatch):
    # Triton: the same (the scalar becomes an fp32 argument; tl.load of it fails).
    monkeypatch.setattr(config, "interpret", True)
    with pytest.raises(CompilationError) as info:
        launched[(1,)](1.5, 4, BLOCK=16)
    assert_located(info.value, launched, r"load expects a pointer or a tensor of pointers, got fp32",
                   caret_at="tl.load")


@tilec.jit
def fill_one(x_ptr):
    tl.store(x_ptr, 1.0)


def test_launch_option_target_must_be_a_target(monkeypatch):
    monkeypatch.setattr(config, "interpret", True)
    with pytest.raises(LaunchError, match=r"fill_one\(\): launch option target must look like 'sm_90', got 'sm90'"):
        fill_one[(1,)](X, target="sm90")


def test_launch_option_target_must_be_the_gpus(monkeypatch):
    # A launch runs on its GPU, so it compiles for that GPU's target; another one is refused
    # (it used to be ignored). The GPU here is simulated: an sm_90 device 0.
    from tilec.runtime import driver
    monkeypatch.setattr(driver, "device_of", lambda values, specs, name: 0)
    monkeypatch.setattr(driver, "target_of", lambda device: "sm_90")
    with pytest.raises(LaunchError, match=r"fill_one\(\): launch option target='sm_80', but a launch compiles for "
                                          r"the GPU it runs on \(sm_90\); compile for another target with "
                                          r"kernel.warmup\(\.\.\., target=\.\.\.\) or tilec.compile"):
        fill_one[(1,)](None, target="sm_80")


def test_launch_option_target_may_name_the_gpus(monkeypatch):
    # sm_90a is the GPU's own sm_90: accepted (the launch then fails later, compiling a
    # kernel that stores to None).
    from tilec.runtime import driver
    monkeypatch.setattr(driver, "device_of", lambda values, specs, name: 0)
    monkeypatch.setattr(driver, "target_of", lambda device: "sm_90")
    with pytest.raises(CompilationError, match="store expects a pointer"):
        fill_one[(1,)](None, target="sm_90a")
