"""device_print / print, device_assert / assert, the debug-mode overflow checks,
debug_barrier, assume and the hints (multiple_of, max_contiguous, max_constancy), on
both backends. Printed lines are the same on both (the GPU's come from printf)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.interpreter import DeviceAssertionError
from tilec_testing import device_array, to_numpy


def _sync(backend):
    if backend == "gpu":
        import torch
        torch.cuda.synchronize()


def _printed(capfd, backend) -> list[str]:
    _sync(backend)
    return sorted(line for line in capfd.readouterr().out.splitlines() if line.startswith("pid"))


# ----------------------------------------------------------------------------- printing


@tilec.jit
def print_kernel(x_ptr, i_ptr, M: tl.constexpr, N: tl.constexpr, HEX: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    i = tl.load(i_ptr + tl.arange(0, N))
    if HEX:
        tl.device_print("bits", x, hex=True)
    else:
        tl.device_print("x", x)
        print("i and 2i:", i, i * 2)
        print(tl.program_id(0) + 40)
        tl.device_print("done: 100%")


def _expected_lines(x, i, pid, hex):
    head = f"pid ({pid}, 0, 0)"
    lines = []
    m, n = x.shape
    if hex:
        for r in range(m):
            for c in range(n):
                lines.append(f"{head} idx ({r:>{len(str(m - 1))}}, {c:>{len(str(n - 1))}}) bits: "
                             f"0x{int(x.view(np.uint32)[r, c]):08x}")
        return sorted(lines)
    for r in range(m):
        for c in range(n):
            lines.append(f"{head} idx ({r:>{len(str(m - 1))}}, {c:>{len(str(n - 1))}}) x: {float(x[r, c]):.9g}")
    for operand, values in enumerate((i, i * 2)):
        for c in range(n):
            lines.append(f"{head} idx ({c:>{len(str(n - 1))}}) i and 2i: (operand {operand}) {int(values[c])}")
    lines.append(f"{head} idx (): {pid + 40}")
    lines.append(f"{head} done: 100%")
    return sorted(lines)


@pytest.mark.parametrize("shape", [(2, 16), (16, 16), (4, 128)])
@pytest.mark.parametrize("hex", [False, True])
def test_device_print_lines(backend, capfd, shape, hex):
    """Every element once (replicated layouts included), with its index, on both backends."""
    rng = np.random.default_rng(7)
    m, n = shape
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-12, 12, shape)).astype(np.float32)
    x[0, 0] = -0.0
    i = rng.integers(-2**30, 2**30, n).astype(np.int32)
    capfd.readouterr()
    print_kernel[(1,)](device_array(x, backend), device_array(i, backend), M=m, N=n, HEX=hex)
    assert _printed(capfd, backend) == _expected_lines(x, i, 0, hex)


@tilec.jit
def print_types_kernel(a_ptr, b_ptr, c_ptr, d_ptr, e_ptr, f_ptr):
    offs = tl.arange(0, 4)
    tl.device_print("u8", tl.load(a_ptr + offs))
    tl.device_print("i64", tl.load(b_ptr + offs))
    tl.device_print("u64", tl.load(c_ptr + offs))
    tl.device_print("f64", tl.load(d_ptr + offs))
    tl.device_print("f16", tl.load(e_ptr + offs))
    tl.device_print("bool", tl.load(f_ptr + offs) > 0)
    tl.device_print("i16 hex", tl.load(a_ptr + offs).to(tl.int16) - 3, hex=True)


def test_device_print_types(backend, capfd):
    a = np.array([0, 1, 200, 255], np.uint8)
    b = np.array([-2**63, -1, 2**40, 2**63 - 1], np.int64)
    c = np.array([0, 2**64 - 1, 2**63, 12345], np.uint64)
    d = np.array([np.pi, -1e-300, np.inf, np.nan], np.float64)
    e = np.array([0.1, -65504, 6e-8, np.inf], np.float16)
    f = np.array([1, -1, 0, 3], np.int32)
    capfd.readouterr()
    print_types_kernel[(1,)](*(device_array(v, backend) for v in (a, b, c, d, e, f)))
    head = "pid (0, 0, 0) idx "
    want = []
    for k in range(4):
        want += [f"{head}({k}) u8: {a[k]}", f"{head}({k}) i64: {b[k]}", f"{head}({k}) u64: {c[k]}",
                 f"{head}({k}) f64: {float(d[k]):.17g}", f"{head}({k}) f16: {float(e[k]):.9g}",
                 f"{head}({k}) bool: {int(f[k] > 0)}",
                 f"{head}({k}) i16 hex: 0x{(int(a[k]) - 3) & 0xFFFF:04x}"]
    assert _printed(capfd, backend) == sorted(want)


@tilec.jit
def print_keyword_kernel(x_ptr):
    print("x", tl.load(x_ptr), sep="")


@tilec.jit
def print_two_strings_kernel(x_ptr):
    print("x", tl.load(x_ptr), "y")


def test_print_misuse_is_a_located_error(backend):
    x = device_array(np.ones(1, np.float32), backend)
    with pytest.raises(tilec.CompilationError, match=r"(?s)print\(\"x\", tl.load\(x_ptr\), sep=\"\"\).*"
                                                     r"no keyword arguments"):
        print_keyword_kernel[(1,)](x)
    with pytest.raises(tilec.CompilationError, match="one string, first"):
        print_two_strings_kernel[(1,)](x)


# ----------------------------------------------------------------------------- asserts


@tilec.jit
def assert_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.device_assert(x < 100, "x too big", mask=mask)
    assert x > -100, "x too small"
    tl.store(y_ptr + offs, x * 2, mask=mask)


def test_device_assert_passes_and_is_off_without_debug(backend):
    rng = np.random.default_rng(3)
    x = rng.uniform(-99, 99, 300).astype(np.float32)
    for debug in (False, True):
        y = device_array(np.full(300, np.nan, np.float32), backend)
        assert_kernel[(3,)](device_array(x, backend), y, 300, BLOCK=128, debug=debug)
        np.testing.assert_array_equal(to_numpy(y), x * 2)
    x[17] = 500  # off without debug: no error, the value goes through
    y = device_array(np.full(300, np.nan, np.float32), backend)
    assert_kernel[(3,)](device_array(x, backend), y, 300, BLOCK=128)
    np.testing.assert_array_equal(to_numpy(y), x * 2)


def test_interpreter_device_assert_names_program_and_element(monkeypatch):
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    x = np.random.default_rng(3).uniform(-99, 99, 300).astype(np.float32)
    x[200] = 500
    x[210] = -500
    with pytest.raises(DeviceAssertionError, match=r"kernel `assert_kernel` at .*test_debug_hints.py:\d+, "
                                                   r"program id \(1, 0, 0\) \(element 72, .*x too big"):
        assert_kernel[(3,)](x, np.zeros(300, np.float32), 300, BLOCK=128, debug=True)
    x[200] = 0
    with pytest.raises(DeviceAssertionError, match=r"program id \(1, 0, 0\) \(element 82, .*x too small"):
        assert_kernel[(3,)](x, np.zeros(300, np.float32), 300, BLOCK=128, debug=True)


_GPU_ASSERT_SCRIPT = textwrap.dedent("""
    import numpy as np, torch, sys
    sys.path[:0] = [{test_dir!r}, {tests_dir!r}]
    from test_debug_hints import assert_kernel
    x = torch.rand(300, device="cuda") * 50
    x[200] = 500
    y = torch.zeros(300, device="cuda")
    assert_kernel[(3,)](x, y, 300, BLOCK=128, debug=True)
    torch.cuda.synchronize()
    print("NO ASSERT")
""")


@pytest.mark.gpu
def test_gpu_device_assert_stops_the_kernel_and_says_where():
    """In a subprocess: a device assert leaves the CUDA context unusable."""
    here = os.path.dirname(os.path.abspath(__file__))
    script = _GPU_ASSERT_SCRIPT.format(test_dir=here, tests_dir=os.path.dirname(here))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert "NO ASSERT" not in out
    assert done.returncode != 0
    assert "device assertion failed in kernel `assert_kernel`" in out, out
    assert "pid (1, 0, 0) idx ( 72): x too big" in out, out
    assert "x too big" in out and "device-side assert" in out, out


# ----------------------------------------------------------------------------- overflow checks


@tilec.jit
def overflow_kernel(a_ptr, b_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    if OP == "add":
        c = a + b
    elif OP == "sub":
        c = a - b
    else:
        c = a * b
    tl.store(out_ptr + offs, c)


def _wraps(a, b, op, dtype):
    exact = {"add": int(a) + int(b), "sub": int(a) - int(b), "mul": int(a) * int(b)}[op]
    info = np.iinfo(dtype)
    return not info.min <= exact <= info.max


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_debug_overflow_checks(op, dtype, monkeypatch):
    """Signed add/sub/mul of every width: no complaint without a wrap, a located error
    with one; the checks run only in debug mode."""
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    edges = [info.min, info.max, -1, 0, 1, info.min + 1, info.max - 1]
    pairs = [(x, y) for x in edges for y in edges]
    for _ in range(64):
        pairs.append(tuple(int(v) for v in rng.integers(info.min, info.max, 2, endpoint=True)))
    safe = [(x, y) for x, y in pairs if not _wraps(x, y, op, dtype)]
    wrapping = [(x, y) for x, y in pairs if _wraps(x, y, op, dtype)]
    assert safe and wrapping
    block = 128
    a = np.array([p[0] for p in safe][:block] * block, dtype)[:block]
    b = np.array([p[1] for p in safe][:block] * block, dtype)[:block]
    out = np.zeros(block, dtype)
    overflow_kernel[(1,)](a, b, out, OP=op, BLOCK=block, debug=True)
    with np.errstate(over="ignore"):
        want = {"add": a + b, "sub": a - b, "mul": a * b}[op]
    np.testing.assert_array_equal(out, want)
    for x, y in wrapping[:6]:
        a[5], b[5] = x, y
        with pytest.raises(DeviceAssertionError, match=rf"element 5,.*{np.dtype(dtype).name} overflow in {op}"):
            overflow_kernel[(1,)](a, b, out, OP=op, BLOCK=block, debug=True)
        overflow_kernel[(1,)](a, b, out, OP=op, BLOCK=block)  # wraps silently without debug


def test_unsigned_arithmetic_wraps_even_in_debug(monkeypatch):
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    a = np.full(128, 2**32 - 1, np.uint32)
    b = np.arange(128, dtype=np.uint32)
    out = np.zeros(128, np.uint32)
    overflow_kernel[(1,)](a, b, out, OP="add", BLOCK=128, debug=True)
    np.testing.assert_array_equal(out, b - 1)


# ----------------------------------------------------------------------------- hints, barrier, assume


@tilec.jit
def hinted_copy(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr, HINT: tl.constexpr):
    pid = tl.program_id(0)
    start = pid * stride
    if HINT:
        start = tl.multiple_of(start, 4)
    offs = start + tl.arange(0, BLOCK)
    if HINT:
        offs = tl.max_contiguous(offs, BLOCK)
    tl.assume(stride > 0)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.debug_barrier()
    tl.store(y_ptr + offs, x + 1, mask=offs < n)


def _vector_width(ptx: str) -> int:
    return 4 if "ld.global.v4" in ptx else 2 if "ld.global.v2" in ptx else 1


def test_multiple_of_enables_vector_loads():
    """`stride` is not known to be a multiple of anything; the hint says it is of 4."""
    sig = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "stride": "i32", "n": "i32:16"}
    plain = tilec.compile(hinted_copy, signature=sig, constexprs={"BLOCK": 512, "HINT": False})
    hinted = tilec.compile(hinted_copy, signature=sig, constexprs={"BLOCK": 512, "HINT": True})
    assert _vector_width(plain.asm["ptx"]) == 1
    assert _vector_width(hinted.asm["ptx"]) == 4
    assert "tile.divisibility = array<i32: 4>" in hinted.asm["ttir"]
    assert "bar.sync" in hinted.asm["ptx"]


def test_hinted_kernel_runs(backend):
    x = np.random.default_rng(2).standard_normal(4096).astype(np.float32)
    y = device_array(np.full(4096, np.nan, np.float32), backend)
    hinted_copy[(8,)](device_array(x, backend), y, 512, 4096, BLOCK=512, HINT=True)
    np.testing.assert_array_equal(to_numpy(y), x + 1)


@tilec.jit
def arg_hint_kernel(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    stride = tl.multiple_of(stride, 8)
    offs = tl.program_id(0) * stride + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 3)


def test_multiple_of_on_a_kernel_argument():
    kernel = tilec.compile(arg_hint_kernel, signature={"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "stride": "i32"},
                           constexprs={"BLOCK": 256})
    assert "%arg2: i32 {tile.divisibility = 8 : i32}" in kernel.asm["ttir"]
    assert _vector_width(kernel.asm["ptx"]) == 2


@tilec.jit
def bad_hint_kernel(x_ptr, WHICH: tl.constexpr):
    offs = tl.arange(0, 16)
    if WHICH == 0:
        offs = tl.multiple_of(offs, [4, 4])
    elif WHICH == 1:
        offs = tl.max_contiguous(offs, 0)
    else:
        tl.multiple_of(tl.load(x_ptr + offs), 4)


@pytest.mark.parametrize("which, message", [(0, r"multiple_of needs 1 positive int"),
                                            (1, r"max_contiguous needs 1 positive int"),
                                            (2, r"applies to integer or pointer values, got fp32")])
def test_bad_hints_are_located_errors(backend, which, message):
    x = device_array(np.ones(16, np.float32), backend)
    with pytest.raises(tilec.CompilationError, match=message):
        bad_hint_kernel[(1,)](x, WHICH=which)
