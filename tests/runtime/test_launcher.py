"""The C++ launcher (`tilec._launcher`): argument packing and validation, without a GPU;
`LoadedKernel.launch` with the driver and launcher replaced by fakes; and, on a GPU, a
hand-written PTX kernel that stores its parameters, so what the launcher packs is what
the kernel receives."""
from __future__ import annotations

import bisect
import shutil
import math
import struct
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tilec import LaunchError
from tilec import _launcher
from tilec.backend import toolkit
from tilec.runtime import driver, kernel as kernel_module
from tilec.runtime.kernel import LoadedKernel, type_code

# Launcher code -> the struct format of the same C type
STRUCT_FORMATS = {"b": "b", "B": "B", "h": "h", "H": "H", "i": "i", "I": "I", "l": "q", "L": "Q",
                  "f": "f", "d": "d", "e": "e", "P": "Q"}


class FakeTensor:
    """Looks like a torch tensor to the launcher."""

    def __init__(self, address: int, is_cuda: bool = True):
        self.address, self.is_cuda = address, is_cuda

    def data_ptr(self) -> int:
        return self.address


class FakeCupyArray:
    def __init__(self, address: int):
        self.__cuda_array_interface__ = {"data": (address, False), "shape": (4,), "typestr": "<f4", "version": 3}


# ------------------------------------------------------------------------- driver

def test_available_is_a_bool():
    assert isinstance(_launcher.available(), bool)
    assert _launcher.available() == _launcher.available()


# ------------------------------------------------------------------------- layout

@pytest.mark.parametrize("code, value", [
    ("b", -128), ("b", 127), ("b", True), ("B", 255), ("h", -32768), ("H", 65535),
    ("i", -2**31), ("i", 2**31 - 1), ("I", 2**32 - 1), ("l", -2**63), ("l", 2**63 - 1),
    ("L", 2**64 - 1), ("f", 1.25), ("f", 3), ("d", -2.5e300), ("e", 0.333), ("P", 0xDEADBEEF000),
])
def test_pack_one(code, value):
    assert _launcher.pack(code, [value]) == struct.pack("@" + STRUCT_FORMATS[code], value)


def test_pack_aligns_each_argument_to_its_size():
    codes = "bPhiBdHeflIL"
    args = [-3, 4096, -7, 123456, 200, 0.1, 65000, 1.5, -2.25, -(2**40), 7, 2**63]
    expected = struct.pack("@" + "".join(STRUCT_FORMATS[c] for c in codes), *args)
    assert _launcher.pack(codes, args) == expected
    assert _launcher.pack(codes, tuple(args)) == expected
    assert _launcher.pack("", []) == b""


def test_pack_bf16_is_the_rounded_bit_pattern():
    assert _launcher.pack("E", [1.0]) == struct.pack("<H", 0x3F80)
    assert _launcher.pack("bE", [1, -2.0]) == struct.pack("<bxH", 1, 0xC000)


def test_pack_tensor_maps_by_value():
    """Code M: a TMA tensor map's 128 bytes at 64-byte alignment, from bytes, from an
    object's map_bytes() (runtime/tma.py's TensorMap), or zeros for None."""
    class Map:
        def map_bytes(self) -> bytes:
            return bytes(range(128, 256))
    first = bytes(range(128))
    assert _launcher.pack("iM", [7, first]) == struct.pack("@i", 7) + bytes(60) + first
    assert _launcher.pack("MbM", [Map(), -1, None]) == bytes(range(128, 256)) + struct.pack("@b", -1) + bytes(63 + 128)
    assert type_code("tensormap") == "M"
    with pytest.raises(TypeError, match="argument 0: expected a TMA tensor map"):
        _launcher.pack("M", [5])
    with pytest.raises(ValueError, match="argument 1: a TMA tensor map is 128 bytes"):
        _launcher.pack("iM", [0, b"short"])


def test_integer_like_objects():
    assert _launcher.pack("iLb", [np.int64(-5), np.uint64(2**64 - 1), np.int8(-1)]) == \
        struct.pack("@iQb", -5, 2**64 - 1, -1)
    assert _launcher.pack("fd", [np.float32(0.5), np.float16(2.0)]) == struct.pack("@fd", 0.5, 2.0)


# ------------------------------------------------------------------------- pointers

def test_pointer_arguments():
    packed = _launcher.pack("PPPP", [0x1000, None, FakeTensor(0x2000), FakeCupyArray(0x3000)])
    assert struct.unpack("@4Q", packed) == (0x1000, 0, 0x2000, 0x3000)


def test_host_tensor_is_refused():
    with pytest.raises(ValueError, match=r"argument 1 is a host \(CPU\) tensor"):
        _launcher.pack("PP", [None, FakeTensor(0x1000, is_cuda=False)])
    with pytest.raises(ValueError, match=r"argument 'x' is a host \(CPU\) tensor"):
        _launcher.pack("P", [np.zeros(4)], names=("x",))


@pytest.mark.parametrize("value, error", [("abc", TypeError), (1.5, TypeError), (-1, OverflowError),
                                          (2**64, OverflowError), (True, TypeError)])
def test_bad_pointers(value, error):
    with pytest.raises(error, match="argument 0"):
        _launcher.pack("P", [value])


def test_data_ptr_must_return_an_int():
    class Odd:
        def data_ptr(self):
            return "0x1000"

    with pytest.raises(TypeError, match=r"argument 'x': data_ptr\(\) is a str, not an int address"):
        _launcher.pack("P", [Odd()], names=("x",))


def test_exceptions_in_data_ptr_propagate():
    class Broken:
        def data_ptr(self):
            raise KeyError("inside data_ptr")

    with pytest.raises(KeyError, match="inside data_ptr"):
        _launcher.pack("P", [Broken()])


# ------------------------------------------------------------------------- integer checks

@pytest.mark.parametrize("code, low, high, name", [
    ("b", -2**7, 2**7 - 1, "int8"), ("B", 0, 2**8 - 1, "uint8"), ("h", -2**15, 2**15 - 1, "int16"),
    ("H", 0, 2**16 - 1, "uint16"), ("i", -2**31, 2**31 - 1, "int32"), ("I", 0, 2**32 - 1, "uint32"),
    ("l", -2**63, 2**63 - 1, "int64"), ("L", 0, 2**64 - 1, "uint64"),
])
def test_integer_ranges(code, low, high, name):
    _launcher.pack(code, [low])
    _launcher.pack(code, [high])
    for value in (low - 1, high + 1):
        with pytest.raises(OverflowError, match=f"^argument 0: {value} does not fit in {name}$"):
            _launcher.pack(code, [value])
    for value in (2**200, -2**200):  # long numbers are cut short in the message
        with pytest.raises(OverflowError, match=rf"^argument 0: -?\d+\.\.\. does not fit in {name}$"):
            _launcher.pack(code, [value])


def test_errors_name_the_argument():
    with pytest.raises(OverflowError, match="^argument 3: 5000000000 does not fit in int32$"):
        _launcher.pack("PPPi", [0, 0, 0, 5000000000])
    with pytest.raises(OverflowError, match="^argument 'n': 5000000000 does not fit in int32$"):
        _launcher.pack("Pi", [0, 5000000000], names=("x_ptr", "n"))
    with pytest.raises(TypeError, match="^argument 'n': expected an int for int32, got float$"):
        _launcher.pack("Pi", [0, 1.0], names=("x_ptr", "n"))
    with pytest.raises(TypeError, match="^argument 1: expected a float for fp32, got str$"):
        _launcher.pack("if", [0, "x"])


def test_code_and_argument_mismatch():
    with pytest.raises(ValueError, match="2 arguments for 1 type codes"):
        _launcher.pack("i", [1, 2])
    with pytest.raises(ValueError, match="unknown type code 'z'"):
        _launcher.pack("z", [1])
    with pytest.raises(TypeError):
        _launcher.pack("i", 5)


# ------------------------------------------------------------------------- floats

def test_fp32_and_fp64_specials():
    for value in (math.inf, -math.inf, 0.0, -0.0, 3.4028234663852886e38, 1e-46):
        assert _launcher.pack("f", [value]) == struct.pack("f", value)
    assert math.isnan(struct.unpack("f", _launcher.pack("f", [math.nan]))[0])
    assert _launcher.pack("d", [2**1000]) == struct.pack("d", 2.0**1000)
    with pytest.raises(OverflowError, match="argument 0: 1e\\+300 does not fit in fp32"):
        _launcher.pack("f", [1e300])
    with pytest.raises(OverflowError, match="argument 0: .* does not fit in fp64"):
        _launcher.pack("d", [10**400])


def _all_finite(exponent_bits: int, mantissa_bits: int) -> tuple[list[float], list[int]]:
    """Every finite non-negative value of a 16-bit float format, ascending, with its bits."""
    values, bits = [], []
    for pattern in range(0, ((1 << exponent_bits) - 1) << mantissa_bits):
        exponent, mantissa = pattern >> mantissa_bits, pattern & ((1 << mantissa_bits) - 1)
        bias = (1 << (exponent_bits - 1)) - 1
        if exponent == 0:
            value = math.ldexp(mantissa, 1 - bias - mantissa_bits)
        else:
            value = math.ldexp(mantissa + (1 << mantissa_bits), exponent - bias - mantissa_bits)
        values.append(value)
        bits.append(pattern)
    return values, bits


def _reference_round(value: float, table: tuple[list[float], list[int]], exponent_bits: int,
                     mantissa_bits: int) -> int | None:
    """Nearest, ties to even, by search in the table of all values; None when it overflows."""
    values, bits = table
    sign = 0x8000 if math.copysign(1.0, value) < 0 else 0
    magnitude = abs(value)
    largest = values[-1]
    # Past the largest finite value, the next "value" is 2**(emax+1): halfway rounds up (to inf).
    step = math.ldexp(1.0, (1 << (exponent_bits - 1)) - mantissa_bits)
    if magnitude >= largest + step / 2:
        return None
    i = bisect.bisect_left(values, magnitude)
    if i < len(values) and values[i] == magnitude:
        return sign | bits[i]
    if i == len(values):
        return sign | bits[-1]
    low, high = i - 1, i
    below, above = magnitude - values[low], values[high] - magnitude
    if below < above or (below == above and bits[low] % 2 == 0):
        return sign | bits[low]
    return sign | bits[high]


def _interesting_doubles(rng: np.random.Generator, table: list[float]) -> list[float]:
    """Random magnitudes over the whole range, plus exact halfway points and their neighbours."""
    values = list(rng.standard_normal(2000) * np.exp2(rng.integers(-30, 30, 2000)))
    picks = rng.integers(0, len(table) - 1, 2000)
    for i in picks:
        middle = (table[i] + table[i + 1]) / 2
        values += [middle, math.nextafter(middle, math.inf), math.nextafter(middle, -math.inf), table[i]]
    values += [-x for x in values[:500]] + [0.0, -0.0, table[1] / 2, table[1] / 3, 1e-300]
    return [float(v) for v in values]


def test_fp16_rounding_matches_numpy_and_reference(rng):
    table = _all_finite(5, 10)
    for value in _interesting_doubles(rng, table[0]) + [65504.0, 65519.99]:
        expected = _reference_round(value, table, 5, 10)
        if expected is None:
            with pytest.raises(OverflowError, match="does not fit in fp16"):
                _launcher.pack("e", [value])
            continue
        packed = _launcher.pack("e", [value])
        assert packed == struct.pack("<H", expected), value
        assert packed == np.float16(value).tobytes(), value


def test_fp16_overflow_and_specials():
    for value in (65520.0, 1e6, -1e300):
        with pytest.raises(OverflowError, match="does not fit in fp16"):
            _launcher.pack("e", [value])
    assert _launcher.pack("e", [math.inf]) == struct.pack("<H", 0x7C00)
    assert _launcher.pack("e", [-math.inf]) == struct.pack("<H", 0xFC00)
    nan_bits = struct.unpack("<H", _launcher.pack("e", [math.nan]))[0]
    assert nan_bits & 0x7C00 == 0x7C00 and nan_bits & 0x3FF


def test_bf16_rounding_matches_reference(rng):
    table = _all_finite(8, 7)
    doubles = _interesting_doubles(rng, table[0])
    for value in doubles + [3.3895313892515355e38]:
        expected = _reference_round(value, table, 8, 7)
        assert expected is not None
        assert _launcher.pack("E", [value]) == struct.pack("<H", expected), value
    # fp32 inputs against the usual bit trick on their fp32 pattern
    floats = np.array(doubles, dtype=np.float32)
    floats = floats[np.isfinite(floats)]
    f32_bits = floats.view(np.uint32).astype(np.uint64)
    trick = ((f32_bits + 0x7FFF + ((f32_bits >> 16) & 1)) >> 16).astype(np.uint16)
    packed = np.frombuffer(_launcher.pack("E" * len(floats), [float(x) for x in floats]), dtype=np.uint16)
    assert np.array_equal(packed, trick)


def test_bf16_overflow_and_specials():
    with pytest.raises(OverflowError, match="argument 'scale': .* does not fit in bf16"):
        _launcher.pack("E", [3.4e38], names=["scale"])
    assert _launcher.pack("E", [-math.inf]) == struct.pack("<H", 0xFF80)
    nan_bits = struct.unpack("<H", _launcher.pack("E", [math.nan]))[0]
    assert nan_bits & 0x7F80 == 0x7F80 and nan_bits & 0x7F


# ------------------------------------------------------------------------- launch validation

@pytest.mark.parametrize("grid", [(0, 1, 1), (1, 0, 1), (1, 1, -1), (2**32, 1, 1)])
def test_launch_rejects_bad_grids(grid):
    with pytest.raises(ValueError, match="grid dimensions"):
        _launcher.launch(1, *grid, 128, 0, 0, "i", [1])


def test_launch_rejects_null_function_and_bad_arguments():
    with pytest.raises(ValueError, match="function handle is null"):
        _launcher.launch(0, 1, 1, 1, 128, 0, 0, "", [])
    with pytest.raises(OverflowError, match="argument 'n'"):
        _launcher.launch(1, 1, 1, 1, 128, 0, 0, "Pi", [0, 2**40], ("x", "n"))


@pytest.mark.skipif(_launcher.available(), reason="a CUDA driver is present")
def test_launch_without_driver_raises_runtime_error():
    with pytest.raises(RuntimeError, match="cannot launch"):
        _launcher.launch(1, 1, 1, 1, 128, 0, 0, "i", [1])


# ------------------------------------------------------------------------- LoadedKernel, faked

def test_type_codes():
    assert [type_code(t) for t in ("*fp32", "*i8", "i1", "i8", "u8", "i16", "u16", "i32", "u32", "i64",
                                   "u64", "fp16", "bf16", "fp32", "fp64")] == list("PPbbBhHiIlLeEfd")
    with pytest.raises(ValueError, match="fp8e5"):
        type_code("fp8e5")


def _fake_compiled(params, param_indices, num_warps=4, shared=0, name="add_kernel"):
    metadata = SimpleNamespace(num_warps=num_warps, shared=shared, params=params, param_indices=param_indices)
    return SimpleNamespace(name=name, asm={"cubin": b"cubin"}, metadata=metadata)


@pytest.fixture
def fake_gpu(monkeypatch):
    """Replaces the driver and the launcher's Launcher; returns the list of launches made,
    each (function, grid, block, shared bytes, stream, codes, parameter values, names, context)."""
    launches = []

    def load_cubin(cubin, kernel_name, shared_bytes, device):
        return driver.LoadedFunction(function=0x1234, module=0x5678, context=0x9ABC, n_regs=32, n_spills=0,
                                     max_threads=1024, static_shared=0)

    class RecordingLauncher:
        def __init__(self, function, block_x, shared_bytes, codes, names, context, param_indices):
            self.real = _launcher.Launcher(function, block_x, shared_bytes, codes, names, context, param_indices)
            self.fields = (function, block_x, shared_bytes, codes, names, context)
            self.param_indices = param_indices

        def __call__(self, grid_x, grid_y, grid_z, stream, values):
            if 0 in (grid_x, grid_y, grid_z):
                return self.real(grid_x, grid_y, grid_z, stream, values)  # launches nothing, needs no driver
            self.real.pack(values)  # the real argument checks
            function, block, shared, codes, names, context = self.fields
            launches.append((function, (grid_x, grid_y, grid_z), block, shared, stream, codes,
                             tuple(values[i] for i in self.param_indices), names, context))

    monkeypatch.setattr(driver, "load_cubin", load_cubin)
    monkeypatch.setattr(driver, "current_stream", lambda device: 0x77)
    monkeypatch.setattr(kernel_module, "_launcher", SimpleNamespace(Launcher=RecordingLauncher))
    return launches


def test_loaded_kernel_launch(fake_gpu):
    kernel = LoadedKernel(_fake_compiled([("x_ptr", "*fp32"), ("n", "i32")], [0, 2], num_warps=8, shared=1024),
                          device=0)
    assert (kernel.codes, kernel.block, kernel.param_names) == ("Pi", 256, ("x_ptr", "n"))
    x = FakeTensor(0x1000)
    kernel.launch((4, 1, 1), [x, 1, 1000, 128])
    kernel.launch((4, 2, 1), [x, 1, 1000, 128], stream=5)
    kernel.launch((0, 1, 1), [x, 1, 1000, 128])  # empty grid: nothing to run
    assert fake_gpu == [
        (0x1234, (4, 1, 1), 256, 1024, 0x77, "Pi", (x, 1000), ("x_ptr", "n"), 0x9ABC),
        (0x1234, (4, 2, 1), 256, 1024, 5, "Pi", (x, 1000), ("x_ptr", "n"), 0x9ABC),
    ]


def test_loaded_kernel_with_one_and_no_params(fake_gpu):
    LoadedKernel(_fake_compiled([("n", "i64")], [1]), 0).launch((1, 1, 1), ["unused", 7])
    LoadedKernel(_fake_compiled([], []), 0).launch((1, 1, 1), ["unused"])
    assert [call[5:7] for call in fake_gpu] == [("l", (7,)), ("", ())]


def test_loaded_kernel_errors_name_kernel_and_parameter(fake_gpu):
    kernel = LoadedKernel(_fake_compiled([("x_ptr", "*fp32"), ("n", "i32")], [0, 1]), 0)
    with pytest.raises(LaunchError, match=r"^add_kernel\(\): argument 'n': 5000000000 does not fit in int32$"):
        kernel.launch((1, 1, 1), [None, 5000000000])
    with pytest.raises(LaunchError, match=r"add_kernel\(\): argument 'x_ptr' is a host \(CPU\) tensor"):
        kernel.launch((1, 1, 1), [FakeTensor(8, is_cuda=False), 1])
    with pytest.raises(LaunchError, match=r"add_kernel\(\): got 1 arguments; the kernel reads argument 1"):
        kernel.launch((1, 1, 1), [None])


# ------------------------------------------------------------------------- Launcher, without a GPU

def make_launcher(codes="PiP", indices=(0, 2, 4), names=("x", "n", "out"), block=128, shared=0):
    return _launcher.Launcher(0x1234, block, shared, codes, names, 0x9ABC, list(indices))


def test_launcher_selects_and_packs_the_kernel_parameters():
    launcher = make_launcher()
    assert (launcher.function, launcher.block_x, launcher.shared_bytes, launcher.codes, launcher.names,
            launcher.context) == (0x1234, 128, 0, "PiP", ("x", "n", "out"), 0x9ABC)
    args = (FakeTensor(0x1000), "BLOCK", 7, None, FakeCupyArray(0x2000), 99)
    assert launcher.pack(args) == _launcher.pack("PiP", [args[0], 7, args[4]])
    assert launcher.pack(list(args)) == launcher.pack(args)
    assert make_launcher("", (), ()).pack(()) == b""
    # Pointers given as addresses (what the generated launcher passes for torch tensors).
    assert launcher.pack((0x1000, 0, 7, 0, 0x2000)) == launcher.pack(args)


def test_launcher_empty_grid_launches_nothing_and_reads_nothing():
    launcher = make_launcher()
    assert launcher(0, 1, 1, 0, ()) is None
    assert launcher(5, 0, 1, None, ("not", "checked")) is None


def test_launcher_refuses_bad_calls():
    launcher = make_launcher()
    good = (0x1000, None, 7, None, 0x2000)
    with pytest.raises(TypeError, match=r"^argument 'n': expected an int for int32, got float$"):
        launcher.pack((0x1000, None, 7.5, None, 0x2000))
    with pytest.raises(ValueError, match="got 3 arguments; the kernel reads argument 4"):
        launcher.pack(good[:3])
    with pytest.raises(TypeError, match="args must be a tuple or list"):
        launcher.pack(5)
    with pytest.raises(ValueError, match="grid dimensions must be positive 32-bit integers"):
        launcher(-1, 1, 1, 0, good)
    with pytest.raises(ValueError, match="grid dimensions must be positive 32-bit integers"):
        launcher(2**32, 1, 1, 0, good)
    with pytest.raises(TypeError, match="grid dimensions must be ints, got str"):
        launcher("1", 1, 1, 0, good)
    with pytest.raises(TypeError, match="the stream is a str"):
        launcher(1, 1, 1, "stream", good)
    with pytest.raises(TypeError, match="positionally"):
        launcher(1, 1, 1, 0)
    with pytest.raises(TypeError, match="positionally"):
        launcher(1, 1, 1, 0, good, stream=0)


def test_launcher_construction_checks():
    with pytest.raises(ValueError, match="function handle is null"):
        _launcher.Launcher(0, 128, 0, "P", ("x",), 0, [0])
    with pytest.raises(ValueError, match="got 2 arguments for 1 type codes"):
        _launcher.Launcher(1, 128, 0, "P", ("x",), 0, [0, 1])
    with pytest.raises(ValueError, match="one str per parameter"):
        _launcher.Launcher(1, 128, 0, "P", ("x", "y"), 0, [0])
    with pytest.raises(ValueError, match="unknown type code 'z'"):
        _launcher.Launcher(1, 128, 0, "z", ("x",), 0, [0])
    with pytest.raises(ValueError, match="must not be negative"):
        _launcher.Launcher(1, 128, 0, "P", ("x",), 0, [-1])
    with pytest.raises(ValueError, match="block size must be positive"):
        _launcher.Launcher(1, 0, 0, "P", ("x",), 0, [0])
    assert "codes='P'" in repr(_launcher.Launcher(1, 32, 0, "P", ("x",), 0, [0]))


@pytest.mark.skipif(_launcher.available(), reason="a CUDA driver is present")
def test_launcher_without_driver_raises_runtime_error():
    with pytest.raises(RuntimeError, match="cannot launch"):
        make_launcher()(1, 1, 1, 0, (0x1000, None, 7, None, 0x2000))


# ------------------------------------------------------------------------- on a GPU

PARAMS_PTX = """
.version 8.0
.target sm_80
.address_size 64

// Stores each parameter at its own 8-byte slot of `out`.
.visible .entry write_params(
    .param .u64 out,
    .param .u8 p_b, .param .u8 p_B, .param .u16 p_h, .param .u16 p_H,
    .param .u32 p_i, .param .u32 p_I, .param .u64 p_l, .param .u64 p_L,
    .param .b16 p_e, .param .b16 p_E, .param .f32 p_f, .param .f64 p_d, .param .u64 p_P)
{
    .reg .b16 %h;
    .reg .b32 %r;
    .reg .b64 %out, %d;
    ld.param.u64 %out, [out];
    cvta.to.global.u64 %out, %out;
    ld.param.u8 %h, [p_b];   st.global.u8 [%out+0], %h;
    ld.param.u8 %h, [p_B];   st.global.u8 [%out+8], %h;
    ld.param.u16 %h, [p_h];  st.global.u16 [%out+16], %h;
    ld.param.u16 %h, [p_H];  st.global.u16 [%out+24], %h;
    ld.param.u32 %r, [p_i];  st.global.u32 [%out+32], %r;
    ld.param.u32 %r, [p_I];  st.global.u32 [%out+40], %r;
    ld.param.u64 %d, [p_l];  st.global.u64 [%out+48], %d;
    ld.param.u64 %d, [p_L];  st.global.u64 [%out+56], %d;
    ld.param.b16 %h, [p_e];  st.global.b16 [%out+64], %h;
    ld.param.b16 %h, [p_E];  st.global.b16 [%out+72], %h;
    ld.param.b32 %r, [p_f];  st.global.b32 [%out+80], %r;
    ld.param.b64 %d, [p_d];  st.global.b64 [%out+88], %d;
    ld.param.u64 %d, [p_P];  st.global.u64 [%out+96], %d;
    ret;
}
"""

PARAM_CODES = "PbBhHiIlLeEfdP"
PARAM_VALUES = [None, -5, 250, -30000, 60000, -2**31, 2**32 - 1, -2**63, 2**64 - 1, 1.5, 3.140625, 2.5, -1e300,
                0xDEADBEEF0]


def _assemble(ptx: str, tmp_path: Path) -> bytes:
    try:
        ptxas = toolkit.ptxas_path()
    except toolkit.ToolNotFoundError as exc:
        pytest.skip(str(exc))
    import torch
    major, minor = torch.cuda.get_device_capability()
    (tmp_path / "k.ptx").write_text(ptx)
    subprocess.run([ptxas, f"-arch=sm_{major}{minor}", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                   check=True)
    return (tmp_path / "k.cubin").read_bytes()


@pytest.mark.gpu
def test_kernel_receives_what_was_packed(tmp_path):
    import torch
    params = [(f"p{i}", ty) for i, ty in enumerate(
        ["*u8", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "fp16", "bf16", "fp32", "fp64", "*u8"])]
    compiled = _fake_compiled(params, list(range(len(params))), num_warps=1, name="write_params")
    compiled.asm["cubin"] = _assemble(PARAMS_PTX, tmp_path)
    kernel = LoadedKernel(compiled, torch.cuda.current_device())
    assert kernel.codes == PARAM_CODES
    out = torch.full((13 * 8,), 0xAB, dtype=torch.uint8, device="cuda")
    kernel.launch((2, 1, 1), [out] + PARAM_VALUES[1:])
    torch.cuda.synchronize()
    assert kernel.launcher.pack([out] + PARAM_VALUES[1:]) == _launcher.pack(PARAM_CODES, [out] + PARAM_VALUES[1:])
    stored = out.cpu().numpy().tobytes()
    for slot, (code, value) in enumerate(zip(PARAM_CODES[1:], PARAM_VALUES[1:])):
        expected = _launcher.pack(code, [value])
        assert stored[slot * 8: slot * 8 + len(expected)] == expected, (code, value)


# ------------------------------------------------------------------------- GridCall

def test_grid_call_passes_the_grid_and_reports_what_does_not_bind():
    def launcher(grid, a, b=2, *, option=None):
        if a == "fails inside":
            raise TypeError("raised by the launcher itself")
        return grid, a, b, option

    reports = []

    def on_bad_call(args, kwargs, error):
        reports.append((args, kwargs, str(error)))
        raise LaunchError(f"bad call: {error}")

    call = _launcher.GridCall(launcher, (4, 2), on_bad_call)
    assert (call.function, call.grid) == (launcher, (4, 2))
    assert call(1) == ((4, 2), 1, 2, None)
    assert call(1, 3, option=5) == ((4, 2), 1, 3, 5)
    assert call(a=9) == ((4, 2), 9, 2, None)
    many = list(range(30))  # more arguments than fit on the stack
    with pytest.raises(LaunchError, match="positional arguments"):
        call(*many)
    with pytest.raises(LaunchError, match="missing 1 required positional argument: 'a'"):
        call()
    with pytest.raises(LaunchError, match="multiple values for argument 'a'"):
        call(1, a=2)
    with pytest.raises(LaunchError, match="unexpected keyword argument 'c'"):
        call(1, c=3)
    assert reports[-1][:2] == ((1,), {"c": 3})
    with pytest.raises(TypeError, match="raised by the launcher itself"):  # not a binding error: unchanged
        call("fails inside")
    assert len(reports) == 4
    with pytest.raises(TypeError, match="must be callable"):
        _launcher.GridCall(launcher, (1,), None)


# ------------------------------------------------------------------------- a stand-in libcuda

FAKE_LIBCUDA = r"""
/* libcuda.so.1 for tests: records what cuLaunchKernel receives; every call succeeds. */
#include <string.h>
unsigned long long current_context = 0x9ABC, pushed = 0, launches = 0;
unsigned long long last_function, last_stream, last_grid[3], last_block[3], last_shared;
unsigned long long n_params = 0, params[16];
unsigned long long wide_mask = 0;  /* parameters passed by value in 128 bytes (tensor maps) */
unsigned char wide[16][128];
int cuInit(unsigned int flags) { return 0; }
int cuGetErrorName(int e, const char** s) { *s = "FAKE_ERROR"; return 0; }
int cuGetErrorString(int e, const char** s) { *s = "a fake error"; return 0; }
int cuCtxGetCurrent(void** ctx) { *ctx = (void*)current_context; return 0; }
int cuCtxPushCurrent_v2(void* ctx) { pushed++; return 0; }
int cuCtxPopCurrent_v2(void** ctx) { return 0; }
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void* stream, void** kernel_params, void** extra) {
    launches++;
    last_function = (unsigned long long)f; last_stream = (unsigned long long)stream; last_shared = shared;
    last_grid[0] = gx; last_grid[1] = gy; last_grid[2] = gz;
    last_block[0] = bx; last_block[1] = by; last_block[2] = bz;
    for (unsigned long long i = 0; i < n_params && i < 16; ++i) {
        if (wide_mask >> i & 1) memcpy(wide[i], kernel_params[i], 128);
        else memcpy(&params[i], kernel_params[i], 8);
    }
    return 0;
}
"""

_THROUGH_THE_DRIVER = r"""
import ctypes, json, sys
sys.path.insert(0, {tests!r})
from tilec import _launcher
assert _launcher.available()
fake = ctypes.CDLL("libcuda.so.1")
value = lambda name: ctypes.c_ulonglong.in_dll(fake, name).value
array = lambda name, n: list((ctypes.c_ulonglong * n).in_dll(fake, name))
ctypes.c_ulonglong.in_dll(fake, "n_params").value = 4
from tilec.runtime import driver
from tilec.runtime.jit import JITFunction
from tilec.config import config
config.cache_dir = {cache!r}
driver.load_cubin = lambda cubin, name, shared, device: driver.LoadedFunction(
    function=0x1234, module=0x5678, context=0x9ABC, n_regs=32, n_spills=0, max_threads=1024, static_shared=0)
driver.device_of = lambda values, specs, name: 0
driver.target_of = lambda device: "sm_90"
from test_launch_path import FakeTensor, scale_kernel
fn = JITFunction(scale_kernel)
x, out = FakeTensor(1 << 20), FakeTensor(2 << 20)
seen = []
for grid, stream in [((3,), None), ((3,), None), ((2, 5), 77)]:  # a miss, then two hits
    fn[grid](x, out, 1000, 2.5, stream=stream)
    seen.append([value("launches"), value("last_function"), array("last_grid", 3), array("last_block", 3),
                 value("last_stream"), array("params", 4), value("pushed")])
ctypes.c_ulonglong.in_dll(fake, "current_context").value = 0  # no context current: pushed for the launch
fn[(1,)](x, out, 1000, 2.5)
seen.append(value("pushed"))
print(json.dumps(seen))
"""


_MAPS_THROUGH_THE_DRIVER = r"""
import ctypes, json, sys
sys.path.insert(0, {tests!r})
from tilec import _launcher
assert _launcher.available()
fake = ctypes.CDLL("libcuda.so.1")
from tilec.runtime import driver, tma
from tilec.runtime.jit import JITFunction
from tilec.config import config
from tilec.tools.tensor_descriptor import TensorDescriptor
config.cache_dir = {cache!r}
driver.load_cubin = lambda cubin, name, shared, device: driver.LoadedFunction(
    function=0x1234, module=0x5678, context=0x9ABC, n_regs=32, n_spills=0, max_threads=1024, static_shared=0)
driver.device_of = lambda values, specs, name: 0
driver.target_of = lambda device: "sm_90"
tma._device_of = lambda base: 0
# A map's stand-in bytes: its address and block, recognisable in what the driver is given.
tma._encode = lambda address, size, shape, strides, block, padding: (
    address.to_bytes(8, "little") + bytes(block) + bytes(118 - len(block)) + b"EN")
from test_launch_path import FakeTensor, FakeDtype, copy_kernel
fn = JITFunction(copy_kernel)
f32 = FakeDtype("torch.float32", 4)
x, out = FakeTensor(1 << 20, f32), FakeTensor(2 << 20, f32)
descs = TensorDescriptor(x, [64, 64], [64, 1], [32, 32]), TensorDescriptor(out, [64, 128], [128, 1], [32, 32])
compiled = fn.warmup(*descs, BM=32, BN=32, grid=(1,), target="sm_90")
params = compiled.metadata.params
ctypes.c_ulonglong.in_dll(fake, "n_params").value = len(params)
ctypes.c_ulonglong.in_dll(fake, "wide_mask").value = sum(1 << i for i, (_, ty) in enumerate(params) if ty == "tensormap")
seen = []
for _ in range(2):  # the first launch, then the generated launcher's
    fn[(1,)](*descs, BM=32, BN=32)
    wide = (ctypes.c_ubyte * (16 * 128)).in_dll(fake, "wide")
    seen.append({{name: bytes(wide[128 * i:128 * (i + 1)]).hex() if ty == "tensormap"
                  else (ctypes.c_ulonglong * 16).in_dll(fake, "params")[i] for i, (name, ty) in enumerate(params)}})
print(json.dumps(seen))
"""


def _through_a_stand_in_driver(tmp_path: Path, template: str):
    """Runs `template` (a script printing JSON last) in a process whose libcuda is the
    stand-in FAKE_LIBCUDA built here; returns what it printed. Skips without a C compiler
    or ptxas."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    try:
        toolkit.ptxas_path()
    except toolkit.ToolkitError:
        pytest.skip("needs ptxas")
    if compiler is None:
        pytest.skip("needs a C compiler")
    (tmp_path / "fake_cuda.c").write_text(FAKE_LIBCUDA)
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(tmp_path / "libcuda.so.1"),
                    str(tmp_path / "fake_cuda.c")], check=True)
    script = tmp_path / "through_the_driver.py"
    script.write_text(template.format(tests=str(Path(__file__).parent), cache=str(tmp_path / "cache")))
    import os
    import sys
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return __import__("json").loads(out.stdout.strip().splitlines()[-1])


def test_tensor_maps_reach_the_driver_by_value(tmp_path):
    """A kernel with two host descriptors, compiled for sm_90 and launched through a
    stand-in libcuda: each tensor-map parameter is handed to cuLaunchKernel as the map's
    128 bytes (code M), the other parameters as before, on the first launch and on the
    generated launcher's."""
    first, second = _through_a_stand_in_driver(tmp_path, _MAPS_THROUGH_THE_DRIVER)
    # (8-byte slots: an int32 parameter's upper bytes are whatever the slot held)
    assert {k: v for k, v in first.items() if "shape" not in k and "strides" not in k} == \
        {k: v for k, v in second.items() if "shape" not in k and "strides" not in k}
    assert all(first[k] & 0xFFFFFFFF == second[k] & 0xFFFFFFFF == 64 for k in ("in_desc.shape.0", "in_desc.strides.0"))
    expected = {"in_desc.tensormap": (1 << 20).to_bytes(8, "little") + bytes([32, 32]) + bytes(116) + b"EN",
                "out_desc.tensormap": (2 << 20).to_bytes(8, "little") + bytes([32, 32]) + bytes(116) + b"EN"}
    assert {name: bytes.fromhex(value) for name, value in first.items() if name in expected} == expected
    assert first["in_desc.base"] == 1 << 20 and first["out_desc.base"] == 2 << 20


def test_launches_reach_the_driver_with_their_parameters(tmp_path):
    """The whole launch path, GridCall, the generated launcher and Launcher included,
    down to cuLaunchKernel of a stand-in libcuda that records what it is given."""
    seen = _through_a_stand_in_driver(tmp_path, _THROUGH_THE_DRIVER)
    factor = struct.unpack("<I", struct.pack("<f", 2.5))[0]
    for launch, (count, grid, stream) in zip(seen, [(1, [3, 1, 1], 0), (2, [3, 1, 1], 0), (3, [2, 5, 1], 77)]):
        assert launch[:5] == [count, 0x1234, grid, [128, 1, 1], stream]
        x, out, n, scale = launch[5]  # 8-byte slots: n an int32, the factor an fp32, in their low bytes
        assert (x, out, n & 0xFFFFFFFF, scale & 0xFFFFFFFF) == (1 << 20, 2 << 20, 1000, factor)
        assert launch[6] == 0  # the kernel's context was current: nothing pushed
    assert seen[3] == 1
