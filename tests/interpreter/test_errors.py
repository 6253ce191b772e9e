"""Bad kernels: out-of-bounds and misaligned accesses, and language errors, reported at the
kernel's source line with the program id."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import CompilationError, LaunchError
from tilec.interpreter import OutOfBoundsAccess
from tilec.language.core import TilecSemanticError


@tilec.jit
def unmasked_copy(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    values = tl.load(src_ptr + offsets)
    tl.store(dst_ptr + offsets, values + 1)


def test_out_of_bounds_load_names_kernel_line_program_and_argument(rng):
    src = rng.standard_normal(100).astype(np.float32)
    dst = np.full(128, np.nan, dtype=np.float32)
    with pytest.raises(OutOfBoundsAccess) as info:
        unmasked_copy[(4,)](src, dst, BLOCK=32)
    err = info.value
    text = str(err)
    assert "unmasked_copy" in text
    assert "values = tl.load(src_ptr + offsets)" in text
    assert "program id (3, 0, 0)" in text
    assert "'src_ptr'" in text and "element offset 100" in text
    assert f"{__file__}:" in text
    assert isinstance(err, IndexError)
    assert (err.program_id, err.argument, err.element_offset, err.access) == ((3, 0, 0), "src_ptr", 100, "load")
    # Programs 0..2 ran before the fault; program 3 stored nothing.
    np.testing.assert_array_equal(dst[:96], src[:96] + 1)
    assert np.isnan(dst[96:]).all()


def test_out_of_bounds_store(rng):
    src = rng.standard_normal(64).astype(np.float32)
    dst = np.full(40, np.nan, dtype=np.float32)
    with pytest.raises(OutOfBoundsAccess) as info:
        unmasked_copy[(2,)](src, dst, BLOCK=32)
    text = str(info.value)
    assert "out-of-bounds store" in text and "tl.store(dst_ptr + offsets, values + 1)" in text
    assert "program id (1, 0, 0)" in text and "'dst_ptr'" in text and "element offset 40" in text
    assert np.isnan(dst[32:]).all()  # the faulting store wrote none of its lanes


@tilec.jit
def masked_copy(src_ptr, dst_ptr, n, shift, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = (offsets < n) & (offsets >= shift)
    values = tl.load(src_ptr + offsets - shift, mask=mask, other=-1.0)
    tl.store(dst_ptr + offsets, values, mask=offsets < n)


def test_masked_off_lanes_are_never_touched(rng):
    n = 70
    src = rng.standard_normal(n).astype(np.float32)
    dst = np.full(n, np.nan, dtype=np.float32)
    # Lanes below `shift` and at or past `n` would read outside `src`; they are masked.
    masked_copy[(3,)](src, dst, n, 5, BLOCK=32)
    np.testing.assert_array_equal(dst[:5], -1.0)
    np.testing.assert_array_equal(dst[5:], src[:n - 5])


@tilec.jit
def shifted_copy(src_ptr, dst_ptr, shift, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets - shift))


@pytest.mark.parametrize("shift, element, where", [(5, -5, "before its start"), (-3, 16, "beyond its end")])
def test_either_side_of_a_buffer(rng, shift, element, where):
    src = rng.standard_normal(16).astype(np.float32)
    dst = np.full(16, np.nan, dtype=np.float32)
    with pytest.raises(OutOfBoundsAccess) as info:
        shifted_copy[(1,)](src, dst, shift, BLOCK=16)
    assert info.value.element_offset == element
    assert where in str(info.value) and f"{abs(shift)} of 16 active lanes are invalid" in str(info.value)
    assert np.isnan(dst).all()


def test_views_may_reach_their_whole_buffer_but_no_further(rng):
    base = rng.standard_normal(64).astype(np.float32)
    dst = np.full(32, np.nan, dtype=np.float32)
    view = base[8:16]
    # The GPU would happily read the parent array around a view: so does the interpreter.
    unmasked_copy[(1,)](view, dst, BLOCK=32)
    np.testing.assert_array_equal(dst, base[8:40] + 1)
    with pytest.raises(OutOfBoundsAccess) as info:
        unmasked_copy[(1,)](base[40:48], dst, BLOCK=32)
    assert "element offset 24" in str(info.value) and "[-40, 24)" in str(info.value)


@tilec.jit
def far_pointer(src_ptr, dst_ptr):
    tl.store(dst_ptr, tl.load(src_ptr + 3_000_000_000_000))


def test_address_outside_every_argument(rng):
    src = rng.standard_normal(8).astype(np.float32)
    with pytest.raises(OutOfBoundsAccess, match="outside the memory of every array argument"):
        far_pointer[(1,)](src, src)


def test_misaligned_pointer(rng):
    raw = rng.integers(1, 255, 64).astype(np.uint8)
    misaligned = raw[1:33].view(np.float32)  # a float32 view starting at byte 1
    dst = np.full(32, np.nan, dtype=np.float32)
    with pytest.raises(OutOfBoundsAccess, match="not aligned to the 4-byte size of float32"):
        unmasked_copy[(1,)](misaligned, dst, BLOCK=4)


def test_store_into_read_only_array(rng):
    src = rng.standard_normal(8).astype(np.float32)
    frozen = np.zeros(8, dtype=np.float32)
    frozen.flags.writeable = False
    with pytest.raises(OutOfBoundsAccess, match="read-only"):
        unmasked_copy[(1,)](src, frozen, BLOCK=8)
    assert (frozen == 0).all()


@tilec.jit
def helper_load(ptr, offsets):
    return tl.load(ptr + offsets)


@tilec.jit
def calls_helper(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK) * 2
    tl.store(dst_ptr + tl.arange(0, BLOCK), helper_load(src_ptr, offsets))


def test_fault_inside_called_jit_function(rng):
    src = rng.standard_normal(10).astype(np.float32)
    dst = np.full(8, np.nan, dtype=np.float32)
    with pytest.raises(OutOfBoundsAccess) as info:
        calls_helper[(1,)](src, dst, BLOCK=8)
    text = str(info.value)
    assert "kernel `calls_helper` (in @jit function `helper_load`)" in text
    assert "return tl.load(ptr + offsets)" in text
    assert "called from" in text and "helper_load(src_ptr, offsets)" in text
    assert "3 of 8 active lanes are invalid; the first is lane 5" in text and "'src_ptr'" in text and "element offset 10" in text


@tilec.jit
def bad_arange(out_ptr, n):
    if tl.program_id(0) == 1:
        values = tl.arange(0, 3)
        tl.store(out_ptr + values, n)


def test_the_frontend_check_reports_errors_in_code_no_program_reaches():
    # The interpreter runs the compiler's frontend before the first program: the bad
    # arange sits behind `if pid == 1`, and the grid has only program 0.
    out = np.zeros(4, dtype=np.int32)
    with pytest.raises(CompilationError) as info:
        bad_arange[(1,)](out, 5)
    text = str(info.value)
    assert "values = tl.arange(0, 3)" in text and "in bad_arange" in text and "^" in text
    assert "the number of elements must be a power of 2" in text
    assert info.value.location.lineno == bad_arange.first_line + 3


@pytest.fixture
def no_frontend_check(monkeypatch):
    """Only the interpreter's own checks, as they run while a program executes (they
    remain for what the frontend cannot see before running)."""
    from tilec.interpreter import launcher
    monkeypatch.setattr(launcher, "_check_like_the_compiler", lambda *args: None)


def test_semantic_error_is_located_at_the_kernel_line(no_frontend_check):
    out = np.zeros(4, dtype=np.int32)
    with pytest.raises(TilecSemanticError) as info:
        bad_arange[(2,)](out, 5)
    err = info.value
    assert isinstance(err, CompilationError)  # what the compiled path raises, too
    text = str(err)
    assert "values = tl.arange(0, 3)" in text and "in bad_arange" in text
    assert "the number of elements must be a power of 2" in text and "program id (1, 0, 0)" in text
    assert err.location.lineno == bad_arange.first_line + 3


@tilec.jit
def block_condition(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if x > 0:
        tl.store(x_ptr, 0.0)


def test_block_as_if_condition_is_refused_while_interpreting(rng, no_frontend_check):
    """The rule itself (python_rules.condition), not only the frontend check, refuses it."""
    x = rng.standard_normal(4).astype(np.float32)
    with pytest.raises(TilecSemanticError, match="condition must be a scalar; for tensors use tl.where"):
        block_condition[(1,)](x, BLOCK=4)


def test_block_as_if_condition_is_refused_by_the_frontend_check(rng):
    x = rng.standard_normal(4).astype(np.float32)
    with pytest.raises(CompilationError, match="if x > 0:"):
        block_condition[(1,)](x, BLOCK=4)


@tilec.jit
def uses_bfloat16(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr).to(tl.bfloat16).to(tl.float32))


def test_bfloat16_without_ml_dtypes_is_a_clear_error(rng, monkeypatch):
    from tilec.interpreter import numpy_common
    x = np.array([1.0 + 2.0 ** -8 + 2.0 ** -12], dtype=np.float32)
    uses_bfloat16[(1,)](x)  # supported (through ml_dtypes): rounds to nearest even
    assert x[0] == 1.0 + 2.0 ** -7
    monkeypatch.delitem(numpy_common._NP_DTYPES, "bf16")
    with pytest.raises(TilecSemanticError, match="tl.bfloat16 values needs the `ml_dtypes` package"):
        uses_bfloat16[(1,)](rng.standard_normal(1).astype(np.float32))


def test_bad_arguments():
    with pytest.raises(LaunchError, match="interpreter expects a NumPy array"):
        uses_bfloat16[(1,)]([1.0, 2.0])
    with pytest.raises(LaunchError, match="missing argument 'x_ptr'"):
        uses_bfloat16[(1,)]()
    with pytest.raises(LaunchError, match="grid must have 1 to 3 dimensions"):
        uses_bfloat16[(1, 1, 1, 1)](np.zeros(1, np.float32))
