"""Unit tests of type promotion in tilec.language.semantic (pure Python, no IR, no GPU).

The expected tables below were written by hand from the rules (Triton's, as specified for
tilec), not generated from the implementation:

- floats: fp64 > fp32 > fp16 > bf16; fp16 with bf16 -> fp16 (as in Triton); bf16 stays
  bf16 only with bf16; fp16 and bf16 division / modulo are done in fp32; an integer with
  a float takes the float (bf16 with an integer -> fp32, as bf16 needs a bf16 partner).
- integers: C's usual arithmetic conversions: same signedness -> the wider; mixed
  signedness -> the unsigned one if it is at least as wide, else the signed one. int1 is
  an unsigned 1-bit integer. Division / modulo between different signedness raises.
- a Python scalar whose kind (bool < integer < float) is lower than or equal to the
  tensor's kind takes the tensor's type (fp16/bf16 division -> fp32); otherwise the
  scalar's own type (python_scalar_type) promotes with the tensor's as above.
"""
from __future__ import annotations

import itertools

import pytest

from tilec.language import core as tl
from tilec.language.core import TilecSemanticError
from tilec.language.semantic import computation_type, integer_promote, python_scalar_type

# ----------------------------------------------------------------------------- tables

NAMES = ["i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"]
DTYPES = {
    "i1": tl.int1, "i8": tl.int8, "i16": tl.int16, "i32": tl.int32, "i64": tl.int64,
    "u8": tl.uint8, "u16": tl.uint16, "u32": tl.uint32, "u64": tl.uint64,
    "f16": tl.float16, "bf16": tl.bfloat16, "f32": tl.float32, "f64": tl.float64,
}
ERR = "ERR"

# Rows: lhs; columns: rhs, in NAMES order.
ARITH_TABLE = """
       i1   i8   i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64
i1     i1   i8   i16  i32  i64  u8   u16  u32  u64  f16  f32  f32  f64
i8     i8   i8   i16  i32  i64  u8   u16  u32  u64  f16  f32  f32  f64
i16    i16  i16  i16  i32  i64  i16  u16  u32  u64  f16  f32  f32  f64
i32    i32  i32  i32  i32  i64  i32  i32  u32  u64  f16  f32  f32  f64
i64    i64  i64  i64  i64  i64  i64  i64  i64  u64  f16  f32  f32  f64
u8     u8   u8   i16  i32  i64  u8   u16  u32  u64  f16  f32  f32  f64
u16    u16  u16  u16  i32  i64  u16  u16  u32  u64  f16  f32  f32  f64
u32    u32  u32  u32  u32  i64  u32  u32  u32  u64  f16  f32  f32  f64
u64    u64  u64  u64  u64  u64  u64  u64  u64  u64  f16  f32  f32  f64
f16    f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f64
bf16   f32  f32  f32  f32  f32  f32  f32  f32  f32  f16  bf16 f32  f64
f32    f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64
f64    f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64
"""

DIV_MOD_TABLE = """
       i1   i8   i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64
i1     i1   ERR  ERR  ERR  ERR  u8   u16  u32  u64  f32  f32  f32  f64
i8     ERR  i8   i16  i32  i64  ERR  ERR  ERR  ERR  f32  f32  f32  f64
i16    ERR  i16  i16  i32  i64  ERR  ERR  ERR  ERR  f32  f32  f32  f64
i32    ERR  i32  i32  i32  i64  ERR  ERR  ERR  ERR  f32  f32  f32  f64
i64    ERR  i64  i64  i64  i64  ERR  ERR  ERR  ERR  f32  f32  f32  f64
u8     u8   ERR  ERR  ERR  ERR  u8   u16  u32  u64  f32  f32  f32  f64
u16    u16  ERR  ERR  ERR  ERR  u16  u16  u32  u64  f32  f32  f32  f64
u32    u32  ERR  ERR  ERR  ERR  u32  u32  u32  u64  f32  f32  f32  f64
u64    u64  ERR  ERR  ERR  ERR  u64  u64  u64  u64  f32  f32  f32  f64
f16    f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64
bf16   f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64
f32    f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64
f64    f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64
"""


def parse_table(text: str) -> dict[tuple[str, str], str]:
    lines = [line.split() for line in text.strip().splitlines()]
    header = lines[0]
    assert header == NAMES
    table = {}
    for row in lines[1:]:
        assert len(row) == len(NAMES) + 1
        for col, cell in zip(header, row[1:]):
            assert cell == ERR or cell in DTYPES
            table[(row[0], col)] = cell
    assert [row[0] for row in lines[1:]] == NAMES
    return table


TABLES = {False: parse_table(ARITH_TABLE), True: parse_table(DIV_MOD_TABLE)}


def expect(result: str, fn, *args):
    if result == ERR:
        with pytest.raises(TilecSemanticError):
            fn(*args)
    else:
        assert fn(*args) == DTYPES[result]


# ----------------------------------------------------------------------------- table sanity


@pytest.mark.parametrize("div_or_mod", [False, True])
def test_tables_are_symmetric(div_or_mod):
    table = TABLES[div_or_mod]
    for a, b in itertools.product(NAMES, repeat=2):
        assert table[(a, b)] == table[(b, a)], (a, b)


# ----------------------------------------------------------------------------- tensor op tensor


@pytest.mark.parametrize("div_or_mod", [False, True], ids=["arith", "div_mod"])
@pytest.mark.parametrize("lhs", NAMES)
@pytest.mark.parametrize("rhs", NAMES)
def test_tensor_tensor_table(lhs, rhs, div_or_mod):
    expect(TABLES[div_or_mod][(lhs, rhs)], computation_type,
           DTYPES[lhs], False, DTYPES[rhs], False, div_or_mod)


@pytest.mark.parametrize("div_or_mod", [False, True], ids=["arith", "div_mod"])
@pytest.mark.parametrize("lhs", NAMES)
@pytest.mark.parametrize("rhs", NAMES)
def test_two_python_scalars_follow_the_tensor_rules(lhs, rhs, div_or_mod):
    # When both operands are Python scalars, neither side "takes the other's type".
    expect(TABLES[div_or_mod][(lhs, rhs)], computation_type,
           DTYPES[lhs], True, DTYPES[rhs], True, div_or_mod)


def test_signedness_error_names_both_types():
    with pytest.raises(TilecSemanticError, match="signedness") as info:
        computation_type(tl.int32, False, tl.uint32, False, True)
    assert "int32" in str(info.value) and "uint32" in str(info.value)


@pytest.mark.parametrize("a,b,expected", [
    (tl.float8e4nv, tl.float8e4nv, tl.float8e4nv),
    (tl.float8e5, tl.float8e5, tl.float8e5),
    (tl.float8e4nv, tl.float8e5, tl.float16),
    (tl.float8e4nv, tl.float16, tl.float16),
    (tl.float8e5, tl.bfloat16, tl.float32),
    (tl.float8e4nv, tl.float32, tl.float32),
    (tl.float8e5, tl.float64, tl.float64),
])
def test_fp8_pairs(a, b, expected):
    assert computation_type(a, False, b, False, False) == expected
    assert computation_type(b, False, a, False, False) == expected


# ----------------------------------------------------------------------------- integer_promote

INT_NAMES = [n for n in NAMES if n[0] in "iu"]


@pytest.mark.parametrize("a", INT_NAMES)
@pytest.mark.parametrize("b", INT_NAMES)
def test_integer_promote(a, b):
    assert integer_promote(DTYPES[a], DTYPES[b]) == DTYPES[TABLES[False][(a, b)]]


@pytest.mark.parametrize("a,b,expected", [
    ("i8", "u8", "u8"), ("i16", "u8", "i16"), ("i8", "u16", "u16"), ("i32", "u32", "u32"),
    ("i64", "u32", "i64"), ("u64", "i64", "u64"), ("i1", "i8", "i8"), ("i1", "u8", "u8"),
    ("i1", "i1", "i1"), ("i8", "i64", "i64"), ("u16", "u8", "u16"),
])
def test_integer_promote_spot_checks(a, b, expected):
    # C's usual arithmetic conversions, spelled out case by case.
    assert integer_promote(DTYPES[a], DTYPES[b]) == DTYPES[expected]
    assert integer_promote(DTYPES[b], DTYPES[a]) == DTYPES[expected]


# ----------------------------------------------------------------------------- Python scalars

# The scalar-kind order of the rule, as in Triton's dtype.kind(): bool < integer < float.
# So `uint8_tensor + 1` is uint8 and `uint32_tensor % 2` is uint32.
KIND = {"i1": 0, "u8": 1, "u16": 1, "u32": 1, "u64": 1, "i8": 1, "i16": 1, "i32": 1, "i64": 1,
        "f16": 2, "bf16": 2, "f32": 2, "f64": 2}

# (value, the name of its own type); a list, not a dict: False == 0 == -0.0 as dict keys.
PY_SCALARS = [
    (True, "i1"), (False, "i1"), (7, "i32"), (-3, "i32"), (2 ** 40, "i64"), (-(2 ** 40), "i64"),
    (2 ** 63, "u64"), (1.5, "f32"), (-0.0, "f32"), (0.0, "f32"),
]
# One scalar of each kind (bool, int32, int64, uint64, float).
SCALAR_VALUES = [(True, "i1"), (7, "i32"), (2 ** 40, "i64"), (2 ** 63, "u64"), (1.5, "f32")]


def scalar_expected(scalar_name: str, tensor_name: str, div_or_mod: bool) -> str:
    if KIND[scalar_name] <= KIND[tensor_name]:
        if div_or_mod and tensor_name in ("f16", "bf16"):
            return "f32"
        return tensor_name
    return TABLES[div_or_mod][(scalar_name, tensor_name)]


@pytest.mark.parametrize("value,name", PY_SCALARS, ids=repr)
def test_python_scalar_type(value, name):
    assert python_scalar_type(value) == DTYPES[name]


@pytest.mark.parametrize("value,name", [
    (0, "i32"), (2 ** 31 - 1, "i32"), (-(2 ** 31), "i32"),
    (2 ** 31, "u32"), (2 ** 32 - 1, "u32"), (2 ** 32, "i64"),
    (-(2 ** 31) - 1, "i64"), (2 ** 63 - 1, "i64"), (-(2 ** 63), "i64"),
    (2 ** 63, "u64"), (2 ** 64 - 1, "u64"),
])
def test_python_int_boundaries(value, name):
    assert python_scalar_type(value) == DTYPES[name]


@pytest.mark.parametrize("value,name", [
    (1.5, "f32"), (0.0, "f32"), (-0.0, "f32"), (float("inf"), "f32"), (float("nan"), "f32"),
    (3.0e38, "f32"), (1.2e-38, "f32"),            # inside fp32's normal range
    (1e39, "f64"), (-1e300, "f64"), (1e-40, "f64"),  # outside it: Triton makes them fp64
])
def test_python_float_type(value, name):
    assert python_scalar_type(value) == DTYPES[name]


@pytest.mark.parametrize("value", [2 ** 64, -(2 ** 63) - 1, 10 ** 30, -(10 ** 30)])
def test_python_int_too_large(value):
    with pytest.raises(TilecSemanticError):
        python_scalar_type(value)


@pytest.mark.parametrize("value", ["1", None, 1j, [1], b"x"], ids=repr)
def test_non_numeric_python_values(value):
    with pytest.raises(TilecSemanticError):
        python_scalar_type(value)


def test_numpy_scalars_follow_their_value():
    np = pytest.importorskip("numpy")
    assert python_scalar_type(np.int8(3)) == tl.int32
    assert python_scalar_type(np.int64(2 ** 40)) == tl.int64
    assert python_scalar_type(np.uint64(2 ** 63)) == tl.uint64
    assert python_scalar_type(np.float64(0.5)) == tl.float32


def test_kind_order():
    kinds = {n: DTYPES[n].kind() for n in NAMES}
    assert kinds["i1"] < kinds["u8"] == kinds["i8"] < kinds["f16"]
    for group in (["u8", "u16", "u32", "u64"], ["i8", "i16", "i32", "i64"], ["f16", "bf16", "f32", "f64"]):
        assert len({kinds[n] for n in group}) == 1


@pytest.mark.parametrize("div_or_mod", [False, True], ids=["arith", "div_mod"])
@pytest.mark.parametrize("tensor_name", NAMES)
@pytest.mark.parametrize("value,scalar_name", SCALAR_VALUES, ids=repr)
def test_python_scalar_with_tensor(value, scalar_name, tensor_name, div_or_mod):
    assert python_scalar_type(value) == DTYPES[scalar_name]
    result = scalar_expected(scalar_name, tensor_name, div_or_mod)
    tensor_ty = DTYPES[tensor_name]
    scalar_ty = DTYPES[scalar_name]
    # Scalar on the left, then on the right.
    expect(result, computation_type, scalar_ty, True, tensor_ty, False, div_or_mod)
    expect(result, computation_type, tensor_ty, False, scalar_ty, True, div_or_mod)


@pytest.mark.parametrize("tensor,value,div_or_mod,expected", [
    ("i8", 1, False, "i8"),        # int scalar with an int tensor keeps the tensor's width
    ("i8", 2 ** 40, False, "i8"),
    ("i16", 1, True, "i16"),
    ("i8", True, False, "i8"),
    ("i8", 1.0, False, "f32"),     # float scalar with an int tensor -> fp32
    ("i64", 1.0, False, "f32"),
    ("u8", 1.0, True, "f32"),
    ("f16", 1.0, False, "f16"),    # float scalar with a half tensor stays half ...
    ("f16", 1.0, True, "f32"),     # ... except for division / modulo
    ("f16", 2, True, "f32"),
    ("bf16", 2, False, "bf16"),
    ("bf16", 0.5, True, "f32"),
    ("f64", 0.5, False, "f64"),
    ("f32", 2 ** 63, True, "f32"),
    ("i1", True, False, "i1"),
    ("i1", True, True, "i1"),
    ("i1", 1, False, "i32"),       # int scalar outranks bool: C rules with int32
    ("i1", 1, True, ERR),          # int32 vs unsigned int1
    ("i1", 2 ** 63, False, "u64"),
    ("i1", 2 ** 63, True, "u64"),
    ("i1", 1.0, False, "f32"),
    ("u8", True, False, "u8"),
    ("u8", 2 ** 63, False, "u8"),  # uint scalar with uint tensor: tensor's type
    ("i8", 2 ** 63, True, "i8"),   # uint scalar (lower kind) with int tensor: tensor's type
    ("u8", 1, False, "u8"),        # an int scalar is of the same kind as a uint tensor
    ("u32", 1, False, "u32"),
    ("u64", 2 ** 40, False, "u64"),
    ("u32", 1, True, "u32"),       # ... so unsigned division by a literal works
])
def test_python_scalar_spot_checks(tensor, value, div_or_mod, expected):
    s = python_scalar_type(value)
    t = DTYPES[tensor]
    expect(expected, computation_type, s, True, t, False, div_or_mod)
    expect(expected, computation_type, t, False, s, True, div_or_mod)
